//! `GET /metrics`: what the server is doing, in the OpenMetrics text format Prometheus scrapes
//! (encoded by `prometheus-client`, never formatted by hand).
//!
//! Recorded here: every HTTP request by door and status, and every JSON-RPC call of `/rpc` and
//! `/mcp` by method and outcome, each with a latency histogram, and the tokens refused (by the
//! throttle of `auth_throttle.rs`). Read when scraped: the catalog's
//! size and reloads, and the run queue. Registered from `skillbox-services`: blob bytes, refused
//! runs and run durations.
//!
//! Label values come from fixed lists only (doors, the methods this server knows, outcome
//! classes, the status codes the server sends): a method a client makes up is counted as
//! `other`, so no client can grow the number of series, and a scrape stays a few hundred lines.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use serde::Deserialize;
use skillbox_tools::{DoorPolicy, LiveProvider, registry};

use crate::answers::Holding;
use crate::auth_throttle::FailedAuthCounter;
use crate::protocol;

/// The media type of the answer: OpenMetrics text, which Prometheus asks for first.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Upper bounds of the latency buckets, in seconds: from an answer out of the catalog in memory
/// (tens of microseconds) to the longest a request may take (300 s).
pub const LATENCY_BUCKETS_SECONDS: [f64; 20] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

/// Largest `/mcp` body read to learn its method: the most the MCP door accepts. Larger bodies
/// (refused by the door anyway) and bodies of unknown length are passed on unread and counted
/// as method `unread`.
const MAX_PEEKED_MCP_BODY_BYTES: usize = skillbox_mcp::MAX_HTTP_REQUEST_BYTES;

/// The MCP methods a client sends (requests and notifications); other names are `other`.
const MCP_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
];

/// Which front door a request came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RequestDoor {
    Rpc,
    Mcp,
    Web,
    Metrics,
    Health,
}

impl RequestDoor {
    /// The door a request to `path` came through.
    pub(crate) fn of_path(path: &str) -> Self {
        match path {
            "/rpc" => RequestDoor::Rpc,
            "/mcp" => RequestDoor::Mcp,
            "/metrics" => RequestDoor::Metrics,
            "/healthz" => RequestDoor::Health,
            _ => RequestDoor::Web,
        }
    }

    /// The door's name as a label value.
    pub(crate) fn label(self) -> &'static str {
        match self {
            RequestDoor::Rpc => "rpc",
            RequestDoor::Mcp => "mcp",
            RequestDoor::Web => "web",
            RequestDoor::Metrics => "metrics",
            RequestDoor::Health => "healthz",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct HttpLabels {
    door: &'static str,
    status: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DoorLabels {
    door: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct CallLabels {
    door: &'static str,
    method: Cow<'static, str>,
    outcome: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct CallMethodLabels {
    door: &'static str,
    method: Cow<'static, str>,
}

type Histograms<Labels> = Family<Labels, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS_SECONDS)
}

/// The server's metrics and the registry a scrape encodes.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    http_requests: Family<HttpLabels, Counter>,
    http_duration: Histograms<DoorLabels>,
    calls: Family<CallLabels, Counter>,
    call_duration: Histograms<CallMethodLabels>,
}

impl Metrics {
    /// Metrics over this live provider and the run queue of this door policy (read when
    /// scraped), with the counter of wrong tokens the server's throttle counts in.
    pub(crate) fn new(
        live: Arc<LiveProvider>,
        policy: Arc<DoorPolicy>,
        failed_authentications: FailedAuthCounter,
    ) -> Self {
        let http_requests = Family::<HttpLabels, Counter>::default();
        let http_duration: Histograms<DoorLabels> = Family::new_with_constructor(latency_histogram);
        let calls = Family::<CallLabels, Counter>::default();
        let call_duration: Histograms<CallMethodLabels> =
            Family::new_with_constructor(latency_histogram);
        let mut registry = Registry::default();
        registry.register(
            "skillbox_http_requests",
            "HTTP requests answered, by door (rpc, mcp, web, metrics, healthz) and status code",
            http_requests.clone(),
        );
        registry.register_with_unit(
            "skillbox_http_request_duration",
            "Time from a request's arrival to its answer's headers, by door",
            Unit::Seconds,
            http_duration.clone(),
        );
        registry.register(
            "skillbox_rpc_calls",
            "JSON-RPC calls, by door (rpc, mcp), method (names this server does not know are `other`) and outcome (ok, or the error's class; for mcp the HTTP answer's)",
            calls.clone(),
        );
        registry.register_with_unit(
            "skillbox_rpc_call_duration",
            "Time a JSON-RPC call took, by door and method (for mcp, until its answer had been sent)",
            Unit::Seconds,
            call_duration.clone(),
        );
        registry.register(
            "skillbox_failed_authentications",
            "Tokens refused, by door (rpc, mcp, web, metrics, healthz) and outcome: `wrong` (compared and wrong), `throttled` (not compared: the client's address presented too many wrong ones lately, answered 429)",
            failed_authentications,
        );
        skillbox_services::metrics::register(&mut registry);
        registry.register_collector(Box::new(Gauges { live, policy }));
        Metrics {
            registry,
            http_requests,
            http_duration,
            calls,
            call_duration,
        }
    }

    fn record_http(&self, door: RequestDoor, status: StatusCode, took: Duration) {
        let door = door.label();
        self.http_requests
            .get_or_create(&HttpLabels {
                door,
                status: status.as_u16(),
            })
            .inc();
        self.http_duration
            .get_or_create(&DoorLabels { door })
            .observe(took.as_secs_f64());
    }

    fn record_call(
        &self,
        door: RequestDoor,
        method: Cow<'static, str>,
        outcome: &'static str,
        took: Duration,
    ) {
        let door = door.label();
        self.call_duration
            .get_or_create(&CallMethodLabels {
                door,
                method: method.clone(),
            })
            .observe(took.as_secs_f64());
        self.calls
            .get_or_create(&CallLabels {
                door,
                method,
                outcome,
            })
            .inc();
    }

    /// Count one `/rpc` call (a request of a batch, or the body's only one) that started at
    /// `started`: `method` is what the client asked for (folded to a known name or `other`;
    /// `None` when the request could not be read), `error` the JSON-RPC error code it got.
    pub(crate) fn record_rpc_call(
        &self,
        method: Option<&str>,
        error: Option<i64>,
        started: Instant,
    ) {
        let method = match method {
            None => "invalid",
            Some(method) => registry::known_name(method).unwrap_or("other"),
        };
        let outcome = error.map_or("ok", error_class);
        self.record_call(
            RequestDoor::Rpc,
            Cow::Borrowed(method),
            outcome,
            started.elapsed(),
        );
    }

    /// The registry in the OpenMetrics text format.
    fn encode(&self) -> String {
        let mut text = String::new();
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            // Writing into a `String` cannot fail; a collector that did is logged.
            tracing::error!(%error, "the metrics could not be encoded");
        }
        text
    }
}

/// `name` as it is written in `names`, if it is there (a `'static` label value).
fn known(names: &[&'static str], name: &str) -> Option<&'static str> {
    names.iter().copied().find(|known| *known == name)
}

/// A JSON-RPC error code's class, as the `outcome` label.
fn error_class(code: i64) -> &'static str {
    match code {
        protocol::PARSE_ERROR => "parse_error",
        protocol::INVALID_REQUEST => "invalid_request",
        protocol::METHOD_NOT_FOUND => "method_not_found",
        protocol::INVALID_PARAMS => "invalid_params",
        protocol::INTERNAL_ERROR => "internal_error",
        protocol::SERVER_BUSY => "busy",
        protocol::TIMED_OUT => "timed_out",
        _ => "other_error",
    }
}

/// The gauges and counts read from the state when scraped.
#[derive(Debug)]
struct Gauges {
    live: Arc<LiveProvider>,
    policy: Arc<DoorPolicy>,
}

impl prometheus_client::collector::Collector for Gauges {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let provider = self.live.current();
        let skills = provider.catalog().latest_visible_to_model().count();
        let runs = self.policy.runs();
        let limits = runs.limits();
        for (name, help, value) in [
            (
                "skillbox_catalog_skills",
                "Skills clients can see (the latest version of each; hidden ones left out), as /healthz reports.",
                skills,
            ),
            (
                "skillbox_runs_running",
                "Tool calls that run code (scripts, handlers, execute_skill, run_code) executing now, from every door.",
                runs.running(),
            ),
            (
                "skillbox_runs_queued",
                "Tool calls that run code waiting for a turn now.",
                runs.queued(),
            ),
            (
                "skillbox_runs_max_running",
                "Runs that may execute at once (--max-runs).",
                limits.max_concurrent,
            ),
            (
                "skillbox_runs_max_queued",
                "Runs that may wait for a turn; past this, callers are refused (busy, retry).",
                limits.max_queued,
            ),
            (
                "skillbox_skill_servers",
                "MCP servers of loaded skills that some conversation or MCP session holds now (running, or stopped while idle).",
                self.policy.servers().held_servers(),
            ),
        ] {
            let gauge = ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX));
            gauge.encode(encoder.encode_descriptor(name, help, None, MetricType::Gauge)?)?;
        }
        let reloads = self.live.reloads();
        let mut family = encoder.encode_descriptor(
            "skillbox_catalog_reloads",
            "Reloads of the skill roots after their files changed, by outcome (a failed reload keeps the skills loaded before).",
            None,
            MetricType::Counter,
        )?;
        for (outcome, count) in [("succeeded", reloads.succeeded), ("failed", reloads.failed)] {
            ConstCounter::new(count).encode(family.encode_family(&[("outcome", outcome)])?)?;
        }
        Ok(())
    }
}

/// Layer over every route: count each request and time it until its answer's headers.
pub(crate) async fn count_requests(
    State(metrics): State<Arc<Metrics>>,
    request: Request,
    next: Next,
) -> Response {
    let door = RequestDoor::of_path(request.uri().path());
    let started = Instant::now();
    let response = next.run(request).await;
    metrics.record_http(door, response.status(), started.elapsed());
    response
}

/// Route layer of `/mcp`: read a POST's body (at most what the door accepts) to learn its
/// JSON-RPC method, and count the call once its answer has been sent (rmcp answers as an event
/// stream, so the call ends when the stream does). Requests that are not POSTs (listen
/// streams, ends of sessions) are not calls and are counted as HTTP requests only.
pub(crate) async fn count_mcp_calls(
    State(metrics): State<Arc<Metrics>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|length| length.to_str().ok()?.parse::<usize>().ok())
        .filter(|length| *length <= MAX_PEEKED_MCP_BODY_BYTES)
        .filter(|_| !parts.headers.contains_key(header::TRANSFER_ENCODING));
    let (method, body) = match declared {
        None => (Cow::Borrowed("unread"), body),
        Some(length) => match axum::body::to_bytes(body, length).await {
            Ok(bytes) => (mcp_method(&bytes), Body::from(bytes)),
            Err(error) => {
                return (
                    StatusCode::BAD_REQUEST,
                    format!("the request body could not be read: {error}"),
                )
                    .into_response();
            }
        },
    };
    let response = next.run(Request::from_parts(parts, body)).await;
    let outcome = if response.status().is_success() {
        "ok"
    } else if response.status().is_client_error() {
        "http_client_error"
    } else {
        "http_server_error"
    };
    let timer = CallTimer {
        metrics,
        method: Some(method),
        outcome,
        started,
    };
    response.map(|body| Body::new(Holding { body, _held: timer }))
}

/// Counts an `/mcp` call when dropped: with the answer's body, once it has been sent.
struct CallTimer {
    metrics: Arc<Metrics>,
    method: Option<Cow<'static, str>>,
    outcome: &'static str,
    started: Instant,
}

impl Drop for CallTimer {
    fn drop(&mut self) {
        if let Some(method) = self.method.take() {
            self.metrics.record_call(
                RequestDoor::Mcp,
                method,
                self.outcome,
                self.started.elapsed(),
            );
        }
    }
}

/// The members of an MCP message that name what it asks for (the rest is skipped unread).
#[derive(Deserialize)]
struct McpMessage<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<McpParams<'a>>,
}

#[derive(Deserialize)]
struct McpParams<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
}

/// The label of an MCP body: its method if known (`tools/call:NAME` for the built-in tools,
/// `tools/call:other` for the rest), `response` for a client's answer to the server, `batch`
/// for an array, `other` for anything else.
fn mcp_method(body: &Bytes) -> Cow<'static, str> {
    if body.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'[') {
        return Cow::Borrowed("batch");
    }
    let Ok(message) = serde_json::from_slice::<McpMessage<'_>>(body) else {
        return Cow::Borrowed("other");
    };
    let Some(method) = message.method else {
        return Cow::Borrowed("response");
    };
    match known(MCP_METHODS, &method) {
        Some("tools/call") => {
            let tool = message
                .params
                .and_then(|params| params.name)
                .and_then(|name| registry::known_name(&name))
                .unwrap_or("other");
            Cow::Owned(format!("tools/call:{tool}"))
        }
        Some(method) => Cow::Borrowed(method),
        None => Cow::Borrowed("other"),
    }
}

/// The answer to `GET /metrics`: the registry, encoded now.
pub(crate) fn scrape(metrics: &Metrics) -> Response {
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], metrics.encode()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_bodies_are_labelled_from_fixed_lists() {
        let label = |body: &str| mcp_method(&Bytes::from(body.to_owned())).into_owned();
        assert_eq!(
            label(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            "tools/list"
        );
        assert_eq!(
            label(
                r#"{"params":{"name":"list_skills","arguments":{}},"jsonrpc":"2.0","id":1,"method":"tools/call"}"#
            ),
            "tools/call:list_skills"
        );
        assert_eq!(
            label(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"acme.pdf.fill"}}"#
            ),
            "tools/call:other"
        );
        assert_eq!(
            label(r#"{"jsonrpc":"2.0","id":1,"method":"x/made-up-1"}"#),
            "other"
        );
        assert_eq!(label(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#), "response");
        assert_eq!(
            label(r#" [{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            "batch"
        );
        assert_eq!(label("not json"), "other");
        // Escapes are read as what they spell.
        assert_eq!(label(r#"{"method":"pin\u0067"}"#), "ping");
    }
}
