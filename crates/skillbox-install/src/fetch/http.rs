//! Downloads over HTTP(S): bounded in size, held to the origin they started on (a redirect to
//! another origin is refused unless the person allowed that host, [`super::origin`]), with a
//! token from the environment sent only to the origin it is for and only once that origin asks
//! for it, and progress reported as bytes arrive.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::origin::{AllowedHosts, Origin, allow_host_value};
use crate::error::InstallError;
use crate::progress::Progress;

/// How long one download may take in all.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(600);
/// Most redirects one download follows.
const MAX_REDIRECTS: usize = 10;

/// The environment variable holding a token for `url`'s origin: `SKILLBOX_TOKEN_`, the host
/// upper-cased with each `.` as `_` and each `-` as `__`, and `_PORT` when the URL's port is not
/// its scheme's default (`SKILLBOX_TOKEN_GITHUB_COM`, `SKILLBOX_TOKEN_MY__GIT_EXAMPLE_COM`,
/// `SKILLBOX_TOKEN_127_0_0_1_8080`); an IPv6 address is `_IPV6` and its eight groups in hex
/// (`SKILLBOX_TOKEN__IPV6_0_0_0_0_0_0_0_1`). Two origins never share a name, so a token
/// never reaches a host that merely spells like its own (`git-example.com` for
/// `git.example.com`). `None` for a URL without a host, or a host name that is not a plain DNS
/// name (a `_`, an empty label, a label starting or ending with `-`): such a host gets no token.
#[must_use]
pub fn token_variable(url: &url::Url) -> Option<String> {
    let mut name = String::from("SKILLBOX_TOKEN_");
    match url.host()? {
        url::Host::Domain(domain) => {
            let plain_label = |label: &str| {
                !label.is_empty()
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            };
            if !domain.split('.').all(plain_label) {
                return None;
            }
            for c in domain.chars() {
                match c {
                    '.' => name.push('_'),
                    '-' => name.push_str("__"),
                    c => name.push(c.to_ascii_uppercase()),
                }
            }
        }
        url::Host::Ipv4(address) => {
            name.push_str(&address.to_string().replace('.', "_"));
        }
        url::Host::Ipv6(address) => {
            // A domain's part never starts with `_`: this spelling is an address's alone.
            name.push_str("_IPV6");
            for group in address.segments() {
                name.push_str(&format!("_{group:X}"));
            }
        }
    }
    // `url` keeps a port only when it is not the scheme's default.
    if let Some(port) = url.port() {
        name.push_str(&format!("_{port}"));
    }
    Some(name)
}

/// The token for a URL's origin, when the environment has one and the URL may carry it (HTTPS,
/// or plain HTTP to a loopback address). `GITHUB_TOKEN` and `GH_TOKEN` count for `github.com`
/// and its download hosts over HTTPS on the default port.
#[must_use]
pub fn token_for(url: &url::Url) -> Option<String> {
    let host = url.host_str()?;
    let loopback = matches!(host, "127.0.0.1" | "localhost" | "[::1]" | "::1");
    if url.scheme() != "https" && !(url.scheme() == "http" && loopback) {
        return None;
    }
    let from = |name: &str| std::env::var(name).ok().filter(|token| !token.is_empty());
    if let Some(token) = token_variable(url).and_then(|name| from(&name)) {
        return Some(token);
    }
    let github = url.scheme() == "https"
        && url.port().is_none()
        && matches!(
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
    allowed: Arc<AllowedHosts>,
}

impl Http {
    /// A client with rustls (ring) that waits at most `connect_timeout` to connect and
    /// follows a redirect only to the origin the download started on or to a host in
    /// `allowed`.
    pub(crate) fn new(
        allowed: AllowedHosts,
        connect_timeout: Duration,
    ) -> Result<Http, InstallError> {
        skillbox_services::tls::install_crypto_provider();
        let allowed = Arc::new(allowed);
        let policy_allowed = Arc::clone(&allowed);
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            let Some(first) = attempt.previous().first() else {
                return attempt.stop();
            };
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if policy_allowed.may_reach(&Origin::of(first), attempt.url()) {
                attempt.follow()
            } else {
                // The 3xx answer itself comes back, and `get` says where it led.
                attempt.stop()
            }
        });
        let client = reqwest::blocking::Client::builder()
            .connect_timeout(connect_timeout)
            .timeout(DOWNLOAD_TIMEOUT)
            .redirect(redirects)
            .user_agent(concat!("skillbox/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| InstallError::fetch("the HTTP client", error))?;
        Ok(Http { client, allowed })
    }

    /// The hosts the person allowed besides a source's own origin.
    pub(crate) fn allowed(&self) -> &AllowedHosts {
        &self.allowed
    }

    /// The body at `url`, at most `limit` bytes; `Ok(None)` for a 404.
    pub(crate) fn get(
        &self,
        url: &str,
        limit: u64,
        progress: &Progress,
    ) -> Result<Option<Vec<u8>>, InstallError> {
        let parsed = url::Url::parse(url).map_err(|error| InstallError::fetch(url, error))?;
        let send = |target: &url::Url, token: Option<&str>| {
            let mut request = self.client.get(target.clone());
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            request
                .send()
                .map_err(|error| InstallError::fetch(url, without_url(error)))
        };
        let mut response = send(&parsed, None)?;
        // A token goes only where it was asked for: a 401 with a challenge, from the origin
        // the token is for (the URL that answered, on the request's origin or an allowed one).
        if response.status() == reqwest::StatusCode::UNAUTHORIZED
            && response
                .headers()
                .contains_key(reqwest::header::WWW_AUTHENTICATE)
        {
            let challenged = response.url().clone();
            if let Some(token) = token_for(&challenged) {
                response = send(&challenged, Some(&token))?;
            }
        }
        let status = response.status();
        if status.is_redirection() {
            return Err(self.redirect_refusal(url, &parsed, &response));
        }
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            let hint = match (status.as_u16(), token_variable(response.url())) {
                (401 | 403, Some(variable)) => {
                    format!("; if it needs a token, set `{variable}`")
                }
                _ => String::new(),
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

    /// The refusal of a redirect the policy did not follow: where it led, and how to allow it.
    fn redirect_refusal(
        &self,
        url: &str,
        requested: &url::Url,
        response: &reqwest::blocking::Response,
    ) -> InstallError {
        let target = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|location| location.to_str().ok())
            .and_then(|location| response.url().join(location).ok());
        let Some(target) = target else {
            return InstallError::fetch(
                url,
                format!(
                    "the server answered {} without a usable `Location`",
                    response.status()
                ),
            );
        };
        InstallError::refused(
            url,
            format!(
                "it redirects to another origin, `{}`; a download follows redirects only within `{}`, where it started (to allow that host, pass `--allow-host {}`)",
                Origin::of(&target),
                Origin::of(requested),
                allow_host_value(&target)
            ),
        )
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
    fn a_token_variable_names_the_host_and_a_port_that_is_not_the_default() {
        let variable = |text: &str| token_variable(&url::Url::parse(text).unwrap());
        assert_eq!(
            variable("https://git.example.com/x").as_deref(),
            Some("SKILLBOX_TOKEN_GIT_EXAMPLE_COM")
        );
        assert_eq!(
            variable("https://git.example.com:443/x").as_deref(),
            Some("SKILLBOX_TOKEN_GIT_EXAMPLE_COM")
        );
        assert_eq!(
            variable("https://git.example.com:8443/x").as_deref(),
            Some("SKILLBOX_TOKEN_GIT_EXAMPLE_COM_8443")
        );
        assert_eq!(
            variable("http://127.0.0.1:8080/x").as_deref(),
            Some("SKILLBOX_TOKEN_127_0_0_1_8080")
        );
        let http = url::Url::parse("http://example.com/x").unwrap();
        assert_eq!(token_for(&http), None);
    }

    /// Hosts that spell alike never share a variable: a cloned manifest naming
    /// `git-example.com` does not get the token meant for `git.example.com`.
    #[test]
    fn hosts_that_spell_alike_have_their_own_token_variables() {
        let variable = |text: &str| token_variable(&url::Url::parse(text).unwrap());
        let names: Vec<Option<String>> = [
            "https://git.example.com/x",
            "https://git-example.com/x",
            "https://git--example.com/x",
            "https://git.example.com:8443/x",
            "https://127.0.0.1/x",
            "https://[::1]/x",
            "https://ipv6.a.b/x",
        ]
        .iter()
        .map(|text| variable(text))
        .collect();
        for (index, name) in names.iter().enumerate() {
            assert!(name.is_some(), "{index}");
            assert!(!names[index + 1..].contains(name), "{name:?} is shared");
        }
        assert_eq!(names[1].as_deref(), Some("SKILLBOX_TOKEN_GIT__EXAMPLE_COM"));
        assert_eq!(
            names[5].as_deref(),
            Some("SKILLBOX_TOKEN__IPV6_0_0_0_0_0_0_0_1")
        );
        // Names that are not plain DNS names get no token at all.
        for text in [
            "https://git_example.com/x",
            "https://-git.example.com/x",
            "https://git-.example.com/x",
        ] {
            assert_eq!(variable(text), None, "{text}");
        }
    }
}
