//! Downloads over HTTP(S): bounded in size, with a token from the environment sent only to the
//! host it is for, and progress reported as bytes arrive.

use std::io::Read;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::error::InstallError;
use crate::progress::Progress;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one download may take in all.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(600);

/// The environment variable holding a token for `host`: `SKILLBOX_TOKEN_` and the host with
/// every character that is not a letter or digit as `_`, upper-cased
/// (`SKILLBOX_TOKEN_GITHUB_COM`, `SKILLBOX_TOKEN_127_0_0_1`).
#[must_use]
pub fn token_variable(host: &str) -> String {
    let mut name = String::from("SKILLBOX_TOKEN_");
    for c in host.chars() {
        name.push(if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        });
    }
    name
}

/// The token for a URL's host, when the environment has one and the URL may carry it (HTTPS,
/// or plain HTTP to a loopback address). `GITHUB_TOKEN` and `GH_TOKEN` count for `github.com`
/// and its download hosts.
#[must_use]
pub fn token_for(url: &url::Url) -> Option<String> {
    let host = url.host_str()?;
    let loopback = matches!(host, "127.0.0.1" | "localhost" | "[::1]" | "::1");
    if url.scheme() != "https" && !(url.scheme() == "http" && loopback) {
        return None;
    }
    let from = |name: &str| std::env::var(name).ok().filter(|token| !token.is_empty());
    if let Some(token) = from(&token_variable(host)) {
        return Some(token);
    }
    let github = matches!(
        host,
        "github.com" | "api.github.com" | "codeload.github.com" | "raw.githubusercontent.com"
    );
    github
        .then(|| from("GITHUB_TOKEN").or_else(|| from("GH_TOKEN")))
        .flatten()
}

/// A blocking HTTP client for installs.
#[derive(Clone)]
pub(crate) struct Http {
    client: reqwest::blocking::Client,
}

impl Http {
    /// A client with rustls (ring) and bounded timeouts.
    pub(crate) fn new() -> Result<Http, InstallError> {
        skillbox_services::tls::install_crypto_provider();
        let client = reqwest::blocking::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(DOWNLOAD_TIMEOUT)
            .user_agent(concat!("skillbox/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| InstallError::fetch("the HTTP client", error))?;
        Ok(Http { client })
    }

    /// The body at `url`, at most `limit` bytes; `Ok(None)` for a 404.
    pub(crate) fn get(
        &self,
        url: &str,
        limit: u64,
        progress: &Progress,
    ) -> Result<Option<Vec<u8>>, InstallError> {
        let parsed = url::Url::parse(url).map_err(|error| InstallError::fetch(url, error))?;
        let mut request = self.client.get(parsed.clone());
        if let Some(token) = token_for(&parsed) {
            request = request.bearer_auth(token);
        }
        let mut response = request
            .send()
            .map_err(|error| InstallError::fetch(url, without_url(error)))?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            let hint = if matches!(status.as_u16(), 401 | 403) {
                format!(
                    "; if it needs a token, set `{}`",
                    token_variable(parsed.host_str().unwrap_or_default())
                )
            } else {
                String::new()
            };
            return Err(InstallError::fetch(
                url,
                format!("the server answered {status}{hint}"),
            ));
        }
        if let Some(length) = response.content_length()
            && length > limit
        {
            return Err(InstallError::refused(
                url,
                format!("it is {length} bytes; the limit is {limit}"),
            ));
        }
        let task = progress.start(&format!("download {url}"), response.content_length());
        let mut body = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            let read = response
                .read(&mut chunk)
                .map_err(|error| InstallError::fetch(url, error))?;
            if read == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..read]);
            task.advance(read as u64);
            if body.len() as u64 > limit {
                return Err(InstallError::refused(
                    url,
                    format!("it is larger than the limit of {limit} bytes"),
                ));
            }
        }
        task.finish();
        Ok(Some(body))
    }

    /// The body at `url`, which must exist.
    pub(crate) fn get_existing(
        &self,
        url: &str,
        limit: u64,
        progress: &Progress,
    ) -> Result<Vec<u8>, InstallError> {
        self.get(url, limit, progress)?
            .ok_or_else(|| InstallError::fetch(url, "the server answered 404 Not Found"))
    }
}

/// A reqwest error's text without the URL it repeats (the caller names the source).
fn without_url(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `sha256:<hex>` of bytes.
#[must_use]
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_go_only_to_their_host_over_https() {
        assert_eq!(
            token_variable("git.example.com"),
            "SKILLBOX_TOKEN_GIT_EXAMPLE_COM"
        );
        let http = url::Url::parse("http://example.com/x").unwrap();
        assert_eq!(token_for(&http), None);
    }
}
