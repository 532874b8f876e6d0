//! [`HttpModelClient`]: a [`ModelClient`] over HTTP for any [`WireFormat`]. It streams the
//! answer (server-sent events, or a whole JSON body from servers that ignore `stream`),
//! retries transient failures with exponential backoff honouring `Retry-After`, and turns every
//! failure into one [`ModelError`] a person can act on.

use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};

use crate::client::ModelClient;
use crate::model::{ModelError, ModelEvent, ModelRequest, ModelResponse};
use crate::wire::{WireFormat, excerpt};

/// How long connecting may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a response may send nothing before the client gives up. Generous: a small local
/// model on two cores reads a long prompt for a minute or more before its first token.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// Bytes of one response read at most (a stream or a body); more is a malformed response.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;
/// Bytes of one line of an event stream at most (a chunk of a response is one line: tool
/// arguments of a few MiB fit).
pub const MAX_EVENT_LINE_BYTES: usize = 4 * 1024 * 1024;
/// Bytes of an error body read for its message.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;
/// The `anthropic-version` header the Messages API requires.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// When and how often a failed request is sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The wait after the first failure; it doubles after each (with jitter).
    pub initial_delay: Duration,
    /// The longest wait between attempts, `Retry-After` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `failed + 1`: the server's `Retry-After` when it gave one, else
    /// exponential backoff with up to 25% jitter; never more than `max_delay`.
    #[must_use]
    pub fn delay(&self, failed: u32, retry_after: Option<Duration>) -> Duration {
        let delay = retry_after.unwrap_or_else(|| {
            let exponential = self
                .initial_delay
                .saturating_mul(2_u32.saturating_pow(failed.saturating_sub(1)));
            let jitter = exponential.mul_f64(fastrand::f64() * 0.25);
            exponential.saturating_add(jitter)
        });
        delay.min(self.max_delay)
    }
}

/// The host of `base_url` as the client will connect to it (lowercase, IPv6 without
/// brackets), or `None` when it is not a URL. Callers choosing which key to send use this, not
/// their own parsing: `https://evil.example\@api.openai.com/v1` connects to `evil.example`.
#[must_use]
pub fn url_host(base_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(base_url.trim()).ok()?;
    let host = url.host_str()?;
    Some(
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase(),
    )
}

/// `url` as it may be shown or saved: without a user name or password in it (a base URL may
/// carry credentials; messages, events and transcripts must not).
#[must_use]
pub fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url.trim()) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

/// An API key and where it came from (named in errors, never printed).
#[derive(Clone)]
pub struct ApiKey {
    /// The key.
    pub value: String,
    /// Where it came from, for messages (`OPENROUTER_API_KEY`).
    pub source: String,
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKey")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// A model client over HTTP.
#[derive(Debug, Clone)]
pub struct HttpModelClient {
    format: WireFormat,
    url: String,
    /// `url` without credentials, for messages.
    shown: String,
    /// Whether the server is on this machine (a loopback address or `localhost`): a refused
    /// connection there means it is not running, not that it is busy.
    loopback: bool,
    key: Option<ApiKey>,
    headers: HeaderMap,
    http: reqwest::Client,
    retry: RetryPolicy,
    idle_timeout: Duration,
}

/// Why an [`HttpModelClient`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The base URL is not an http(s) URL.
    #[error("base URL `{url}` is not an http:// or https:// URL")]
    BadBaseUrl {
        /// The URL given.
        url: String,
    },
    /// The key holds characters a header cannot carry.
    #[error("the API key from {source_name} holds characters an HTTP header cannot carry")]
    BadKey {
        /// Where the key came from.
        source_name: String,
    },
    /// The HTTP client could not be built (TLS roots).
    #[error("cannot set up the HTTP client: {0}")]
    Http(String),
}

impl HttpModelClient {
    /// A client for `format` at `base_url` (`https://openrouter.ai/api/v1`), the endpoint's
    /// path appended (`/responses`, `/chat/completions`, `/messages`).
    ///
    /// # Errors
    /// [`ClientError`] for a URL that is not http(s) or a key that cannot be a header.
    pub fn new(
        format: WireFormat,
        base_url: &str,
        key: Option<ApiKey>,
    ) -> Result<Self, ClientError> {
        let base = base_url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://"))
            || reqwest::Url::parse(base).is_err()
        {
            return Err(ClientError::BadBaseUrl {
                url: base_url.to_owned(),
            });
        }
        let mut headers = HeaderMap::new();
        if let Some(key) = &key {
            let bad_key = || ClientError::BadKey {
                source_name: key.source.clone(),
            };
            match format {
                WireFormat::Anthropic => {
                    let mut value = HeaderValue::from_str(&key.value).map_err(|_| bad_key())?;
                    value.set_sensitive(true);
                    headers.insert("x-api-key", value);
                }
                WireFormat::Responses | WireFormat::Chat => {
                    let mut value = HeaderValue::from_str(&format!("Bearer {}", key.value))
                        .map_err(|_| bad_key())?;
                    value.set_sensitive(true);
                    headers.insert(reqwest::header::AUTHORIZATION, value);
                }
            }
        }
        if format == WireFormat::Anthropic {
            headers.insert(
                "anthropic-version",
                HeaderValue::from_static(ANTHROPIC_VERSION),
            );
        }
        // OpenRouter shows these in its dashboard; other servers ignore them.
        headers.insert("x-title", HeaderValue::from_static("skillbox"));
        skillbox_tools::install_crypto_provider();
        let mut builder = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            // A redirect would carry the key (`x-api-key` is not a header reqwest strips) to
            // wherever the server points; model APIs do not redirect, so none is followed.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("skillbox/", env!("CARGO_PKG_VERSION")));
        if base.starts_with("http://") {
            // A plain-HTTP server (a local model) never gets a TLS connection from this client
            // (no redirect is followed), so the system's certificate store is not read: that
            // was about 5% of a one-shot `ask`.
            builder = builder.tls_certs_only(std::iter::empty());
        }
        let http = builder
            .build()
            .map_err(|error| ClientError::Http(error.to_string()))?;
        Ok(HttpModelClient {
            format,
            url: format!("{base}/{}", format.endpoint()),
            shown: shown_url(&format!("{base}/{}", format.endpoint())),
            loopback: is_loopback(base),
            key,
            headers,
            http,
            retry: RetryPolicy::default(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        })
    }

    /// Use this retry policy.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Give up on a response that sends nothing for this long.
    #[must_use]
    pub fn with_idle_timeout(mut self, idle_timeout: Duration) -> Self {
        self.idle_timeout = idle_timeout;
        self
    }

    /// The endpoint's full URL.
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    fn unreachable(&self, error: reqwest::Error) -> ModelError {
        if self.loopback && error.is_connect() && is_refused(&error) {
            return ModelError::NotListening {
                url: self.shown.clone(),
            };
        }
        // The URL is named once, shown without credentials; reqwest's own text would repeat it.
        let error = error.without_url();
        let mut detail = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            detail = format!("{detail}: {cause}");
            source = cause.source();
        }
        ModelError::Unreachable {
            url: self.shown.clone(),
            detail,
        }
    }

    fn stalled(&self) -> ModelError {
        ModelError::Stalled {
            url: self.shown.clone(),
            seconds: self.idle_timeout.as_secs(),
        }
    }

    /// Read a body up to `cap` bytes (more is an error), each piece within the idle timeout.
    async fn read_body(
        &self,
        response: reqwest::Response,
        cap: usize,
    ) -> Result<String, ModelError> {
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = tokio::time::timeout(self.idle_timeout, chunks.next())
            .await
            .map_err(|_| self.stalled())?
        {
            let chunk = chunk.map_err(|error| ModelError::Truncated {
                detail: format!("the connection failed while reading the body: {error}"),
            })?;
            if body.len() + chunk.len() > cap {
                return Err(ModelError::Malformed {
                    detail: format!("the body is longer than {cap} bytes"),
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// One attempt: the error, and the server's `Retry-After` when it sent one.
    async fn attempt(
        &self,
        body: &serde_json::Value,
        delivered: &mut bool,
        events: &mut (dyn FnMut(ModelEvent) + Send),
    ) -> Result<ModelResponse, (ModelError, Option<Duration>)> {
        // No total timeout: a slow model may stream for longer than any fixed bound. Waiting
        // for the answer's head, for a body's next bytes and for a stream's next event each
        // have the idle timeout.
        let request = self
            .http
            .post(&self.url)
            .headers(self.headers.clone())
            .json(body)
            .send();
        let response = tokio::time::timeout(self.idle_timeout, request)
            .await
            .map_err(|_| (self.stalled(), None))?
            .map_err(|error| (self.unreachable(error), None))?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry_after(response.headers());
            let text = self
                .read_body(response, MAX_ERROR_BODY_BYTES)
                .await
                .unwrap_or_default();
            let message = error_message(&text);
            let error = if matches!(status.as_u16(), 401 | 403) {
                ModelError::Unauthorized {
                    url: self.shown.clone(),
                    status: status.as_u16(),
                    message,
                    key_hint: self.key.as_ref().map_or_else(
                        || "that the server needs no key, or set one".to_owned(),
                        |key| key.source.clone(),
                    ),
                }
            } else {
                ModelError::Status {
                    url: self.shown.clone(),
                    status: status.as_u16(),
                    message,
                }
            };
            return Err((error, retry_after));
        }
        let is_stream = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        if !is_stream {
            let text = self
                .read_body(response, MAX_RESPONSE_BYTES)
                .await
                .map_err(|error| (error, None))?;
            let value: serde_json::Value = serde_json::from_str(&text).map_err(|error| {
                (
                    ModelError::Malformed {
                        detail: format!("the body is not JSON ({error}): {}", excerpt(&text)),
                    },
                    None,
                )
            })?;
            let parsed = self
                .format
                .parse_response(&value)
                .map_err(|error| (error, None))?;
            if !parsed.content.is_empty() {
                *delivered = true;
                events(ModelEvent::TextDelta(parsed.content.clone()));
            }
            return Ok(parsed);
        }
        let mut received = 0_usize;
        let mut line = 0_usize;
        let bytes = response.bytes_stream().map(move |chunk| {
            let chunk = chunk?;
            received += chunk.len();
            // The event parser rescans a line for every chunk until it ends: a line without end
            // would cost time growing with its square, so lines have a bound of their own.
            line = match memchr::memrchr(b'\n', &chunk) {
                Some(end) => chunk.len() - end - 1,
                None => line + chunk.len(),
            };
            if received > MAX_RESPONSE_BYTES {
                return Err(StreamFailure::TooLarge);
            }
            if line > MAX_EVENT_LINE_BYTES {
                return Err(StreamFailure::LineTooLong);
            }
            Ok::<_, StreamFailure>(chunk)
        });
        let mut stream = bytes.eventsource();
        let mut decoder = self.format.stream_decoder();
        loop {
            let next = tokio::time::timeout(self.idle_timeout, stream.next())
                .await
                .map_err(|_| (self.stalled(), None))?;
            let Some(event) = next else { break };
            let event = event.map_err(|error| {
                let error = match error {
                    eventsource_stream::EventStreamError::Transport(
                        StreamFailure::LineTooLong,
                    ) => ModelError::Malformed {
                        detail: format!(
                            "a line of the event stream is longer than {MAX_EVENT_LINE_BYTES} bytes"
                        ),
                    },
                    eventsource_stream::EventStreamError::Transport(StreamFailure::TooLarge) => {
                        ModelError::Malformed {
                            detail: format!("the stream is longer than {MAX_RESPONSE_BYTES} bytes"),
                        }
                    }
                    eventsource_stream::EventStreamError::Transport(StreamFailure::Http(error)) => {
                        ModelError::Truncated {
                            detail: format!("the connection failed: {error}"),
                        }
                    }
                    other => ModelError::Malformed {
                        detail: format!("the event stream is not valid: {other}"),
                    },
                };
                (error, None)
            })?;
            let name = if event.event == "message" {
                ""
            } else {
                event.event.as_str()
            };
            let finished = decoder
                .event(name, &event.data, &mut |text| {
                    *delivered = true;
                    events(ModelEvent::TextDelta(text.to_owned()));
                })
                .map_err(|error| (error, None))?;
            if finished {
                break;
            }
        }
        decoder.finish().map_err(|error| (error, None))
    }
}

/// What can go wrong while reading a stream's bytes.
#[derive(Debug, thiserror::Error)]
enum StreamFailure {
    #[error("{0}")]
    Http(#[from] reqwest::Error),
    #[error("the response is too large")]
    TooLarge,
    #[error("a line of the stream is too long")]
    LineTooLong,
}

#[async_trait::async_trait]
impl ModelClient for HttpModelClient {
    fn format(&self) -> WireFormat {
        self.format
    }

    async fn respond(
        &self,
        request: &ModelRequest<'_>,
        events: &mut (dyn FnMut(ModelEvent) + Send),
    ) -> Result<ModelResponse, ModelError> {
        let body = self.format.request_body(request);
        let mut attempt = 1;
        loop {
            let mut delivered = false;
            match self.attempt(&body, &mut delivered, events).await {
                Ok(response) => return Ok(response),
                Err((error, retry_after)) => {
                    // Text already shown cannot be taken back, so a stream that fails midway
                    // is not sent again.
                    if delivered || !error.is_transient() || attempt >= self.retry.max_attempts {
                        return Err(error);
                    }
                    let delay = self.retry.delay(attempt, retry_after);
                    tracing::info!(attempt, ?delay, "model request failed, retrying: {error}");
                    events(ModelEvent::Retry {
                        attempt,
                        reason: error.to_string(),
                        delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    });
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
            }
        }
    }
}

/// Whether `base_url` names this machine: a loopback address, `localhost` or a name under it.
fn is_loopback(base_url: &str) -> bool {
    let Some(host) = url_host(base_url) else {
        return false;
    };
    match host.parse::<std::net::IpAddr>() {
        Ok(address) => address.is_loopback(),
        Err(_) => {
            let name = host.trim_end_matches('.');
            name == "localhost" || name.ends_with(".localhost")
        }
    }
}

/// Whether a failed connection was refused (nothing listens at the port).
fn is_refused(error: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return true;
        }
        source = cause.source();
    }
    false
}

/// `Retry-After` as seconds or an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        if !(seconds.is_finite() && seconds >= 0.0) {
            return None;
        }
        // More seconds than a Duration holds (`1e30`) is as good as never; the policy caps it.
        return Some(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(
        date.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// The message of an error body: `error.message` (OpenAI, OpenRouter, Anthropic), `message`,
/// `error` as text, or the start of the body.
fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|value| {
        value["error"]["message"]
            .as_str()
            .or_else(|| value["message"].as_str())
            .or_else(|| value["error"].as_str())
            .or_else(|| value["detail"].as_str())
            .map(str::to_owned)
    });
    match message {
        Some(message) => message,
        None if body.trim().is_empty() => "(no body)".to_owned(),
        None => excerpt(body.trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        let later = std::time::SystemTime::now() + Duration::from_secs(30);
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_str(&httpdate::fmt_http_date(later)).expect("header"),
        );
        let delay = retry_after(&headers).expect("a date");
        assert!(delay > Duration::from_secs(25) && delay <= Duration::from_secs(30));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, HeaderValue::from_static("-5"));
        assert_eq!(retry_after(&headers), None);
        // Beyond what a Duration holds: no panic, the longest wait (the policy caps it).
        for huge in ["1e30", "99999999999999999999"] {
            headers.insert(RETRY_AFTER, HeaderValue::from_static(huge));
            assert_eq!(retry_after(&headers), Some(Duration::MAX), "{huge}");
        }
    }

    #[test]
    fn the_host_is_the_one_connected_to() {
        assert_eq!(
            url_host("https://OpenRouter.ai/api/v1").as_deref(),
            Some("openrouter.ai")
        );
        assert_eq!(
            url_host("http://user:pw@127.0.0.1:8080/v1").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(url_host("http://[::1]:8080/v1").as_deref(), Some("::1"));
        // A backslash ends the authority (WHATWG): the request goes to evil.example.
        assert_eq!(
            url_host("http://evil.example\\@api.openai.com/v1").as_deref(),
            Some("evil.example")
        );
        assert_eq!(url_host("not a url"), None);
    }

    #[test]
    fn loopback_hosts_are_this_machine() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://127.3.4.5/v1",
            "http://[::1]:8080/v1",
            "http://localhost:11434/v1",
            "http://LOCALHOST./v1",
            "http://model.localhost/v1",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://10.0.0.2:8080/v1",
            "http://localhost.example/v1",
            "not a url",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
    }

    #[tokio::test]
    async fn a_refused_connection_to_this_machine_is_not_retried() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = closed.local_addr().expect("address").port();
        drop(closed);
        let client = HttpModelClient::new(
            WireFormat::Chat,
            &format!("http://127.0.0.1:{port}/v1"),
            None,
        )
        .expect("client");
        let request = ModelRequest {
            model: "m",
            system: "",
            messages: &[crate::conversation::Message::user("hi")],
            tools: &[],
            max_output_tokens: 64,
            temperature: None,
        };
        let mut retries = 0;
        let error = client
            .respond(&request, &mut |event| {
                if matches!(event, ModelEvent::Retry { .. }) {
                    retries += 1;
                }
            })
            .await
            .expect_err("nothing listens");
        assert_eq!(retries, 0);
        assert_eq!(
            error.to_string(),
            format!(
                "cannot reach the model server at http://127.0.0.1:{port}/v1/chat/completions: nothing listens there (connection refused); start the server, or check --base-url"
            )
        );
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let policy = RetryPolicy {
            max_attempts: 10,
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
        };
        let first = policy.delay(1, None);
        assert!(first >= Duration::from_millis(100) && first <= Duration::from_millis(125));
        let third = policy.delay(3, None);
        assert!(third >= Duration::from_millis(400) && third <= Duration::from_millis(500));
        assert_eq!(policy.delay(9, None), Duration::from_secs(1));
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(90))),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn error_messages_come_from_the_body() {
        assert_eq!(
            error_message(r#"{"error":{"message":"Rate limit exceeded","code":429}}"#),
            "Rate limit exceeded"
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(error_message(""), "(no body)");
        assert_eq!(
            error_message("<html>bad gateway</html>"),
            "<html>bad gateway</html>"
        );
    }

    #[tokio::test]
    async fn a_stream_that_keeps_sending_is_read_past_the_idle_timeout() {
        use skillbox_testkit::model_server::{Reply, ScriptedModelServer};

        let gap = Duration::from_millis(250);
        let words = ["one ", "two ", "three ", "four ", "five ", "six"];
        let mut events: Vec<String> = words
            .iter()
            .map(|word| {
                format!(r#"data: {{"choices":[{{"index":0,"delta":{{"content":"{word}"}}}}]}}"#)
            })
            .collect();
        events.push(r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#.into());
        events.push("data: [DONE]".into());
        // Each event comes well within the idle timeout; the whole stream takes twice as long.
        let server = ScriptedModelServer::start(vec![Reply::PacedEvents(events, gap)]);
        let client = HttpModelClient::new(WireFormat::Chat, &server.base_url, None)
            .expect("client")
            .with_idle_timeout(Duration::from_secs(1))
            .with_retry(RetryPolicy {
                max_attempts: 1,
                ..RetryPolicy::default()
            });
        let request = ModelRequest {
            model: "m",
            system: "",
            messages: &[crate::conversation::Message::user("count")],
            tools: &[],
            max_output_tokens: 64,
            temperature: None,
        };
        let response = client
            .respond(&request, &mut |_| {})
            .await
            .expect("a stream that never pauses for the idle timeout is read to its end");
        assert_eq!(response.content, words.concat());
    }
}
