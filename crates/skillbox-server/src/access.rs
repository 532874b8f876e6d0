//! Who may talk to the server from a browser: the DNS-rebinding and cross-site defences.
//!
//! A web page cannot read a loopback server's answers, but it can make the browser send
//! requests to it. Two tricks matter:
//! - DNS rebinding: a page on `attacker.example` points that name at 127.0.0.1 and its own
//!   scripts then reach the server "same-origin". The browser still sends
//!   `Host: attacker.example`, so the server answers only requests addressed to a loopback name
//!   or to a name the operator allowed.
//! - Cross-site requests: a page on another origin posts to `http://127.0.0.1:7878/rpc`. The
//!   browser names that page in `Origin`, so requests whose `Origin` host is not allowed are
//!   refused. Requiring `Content-Type: application/json` also means no page can send a request
//!   without a CORS preflight, which this server never grants.
//!
//! Both checks are layers over the whole router, so every endpoint (`/rpc`, `/healthz`, and
//! any added later) gets the same rules.

use std::net::Ipv6Addr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The names every server answers to: the loopback names (any port).
pub const LOOPBACK_HOST_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Which `Host` and `Origin` headers the server accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessPolicy {
    /// Host names allowed besides the loopback ones, lower case, without port.
    allowed_hosts: Vec<String>,
    /// Whether `Host` is checked. A browser page that rebinds a name cannot present a bearer
    /// token, so with a token and no explicit list any `Host` is accepted.
    check_host: bool,
}

impl AccessPolicy {
    /// The policy for a server with or without a token and with these extra host names
    /// (already checked with [`allowed_host_name`]).
    ///
    /// `Host` is checked when there is no token, or when names were given; `Origin` is always
    /// checked.
    #[must_use]
    pub fn new(allowed_hosts: Vec<String>, token_set: bool) -> Self {
        AccessPolicy {
            check_host: !token_set || !allowed_hosts.is_empty(),
            allowed_hosts,
        }
    }

    /// Whether requests addressed to `host` (a `Host` header value: a name or an IP literal,
    /// with or without a port) are answered.
    #[must_use]
    pub fn allows_host(&self, host: &str) -> bool {
        let Some(name) = host_part(host) else {
            return false;
        };
        is_loopback_name(name)
            || self
                .allowed_hosts
                .iter()
                .any(|allowed| same_host(allowed, name))
    }

    /// Whether a page at `origin` (an `Origin` header value) may send requests.
    #[must_use]
    pub fn allows_origin(&self, origin: &str) -> bool {
        let Some((_scheme, rest)) = origin.split_once("://") else {
            // `null` (sandboxed frames, files) and anything malformed.
            return false;
        };
        !rest.contains('/') && self.allows_host(rest)
    }

    /// Why a request with these headers is refused, if it is.
    fn refusal(&self, headers: &HeaderMap) -> Option<String> {
        let header_text = |name| {
            headers
                .get(name)
                .map(|value: &axum::http::HeaderValue| String::from_utf8_lossy(value.as_bytes()))
        };
        if let Some(origin) = header_text(header::ORIGIN)
            && !self.allows_origin(&origin)
        {
            let hint = origin_host(&origin).map_or_else(
                || "pages without an origin of their own (sandboxed frames, local files) can never send requests".to_owned(),
                |name| allow_hint(&name, &format!("if a page served from `{name}` should reach this server")),
            );
            return Some(format!(
                "requests from the web page at origin `{origin}` are refused: this server only answers pages served from {}; {hint}",
                self.allowed_names()
            ));
        }
        if let Some(host) = header_text(header::HOST)
            && self.check_host
            && !self.allows_host(&host)
        {
            let hint = host_name(&host).map_or_else(
                || "send a valid `Host` header".to_owned(),
                |name| allow_hint(&name, &format!("to reach it under the name `{name}`")),
            );
            return Some(format!(
                "requests addressed to host `{host}` are refused: this server answers only requests addressed to {} (a defence against DNS rebinding); {hint}",
                self.allowed_names()
            ));
        }
        None
    }

    fn allowed_names(&self) -> String {
        let mut names: Vec<&str> = LOOPBACK_HOST_NAMES.to_vec();
        names.extend(self.allowed_hosts.iter().map(String::as_str));
        names.join(", ")
    }
}

/// How to allow a name: `purpose`, then the flag.
fn allow_hint(name: &str, purpose: &str) -> String {
    format!("{purpose}, start it with --allowed-host {name} (or SKILLBOX_ALLOWED_HOSTS)")
}

/// Check and normalize one `--allowed-host` value: a host name or IP address, no scheme, port
/// or path. Returns it in lower case, IPv6 addresses in brackets.
///
/// # Errors
/// A message naming the value and what is expected.
pub fn allowed_host_name(value: &str) -> Result<String, String> {
    let value = value.trim();
    let expected = "expected a host name such as `skills.internal` or an IP address, without scheme, port or path";
    if value.is_empty() {
        return Err(format!("an empty host name is not allowed; {expected}"));
    }
    if let Ok(address) = value
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<Ipv6Addr>()
    {
        return Ok(format!("[{address}]"));
    }
    let valid = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if !valid {
        return Err(format!("`{value}` is not a host name; {expected}"));
    }
    Ok(value.trim_end_matches('.').to_ascii_lowercase())
}

/// The host of a `Host` value as written: port and trailing dot removed, an IPv6 address with
/// its brackets; `None` when it is malformed.
fn host_part(host: &str) -> Option<&str> {
    let host = host.trim();
    let digits = |port: &str| port.bytes().all(|byte| byte.is_ascii_digit());
    if host.starts_with('[') {
        let end = host.find(']')?;
        let after = &host[end + 1..];
        let address = &host[..=end];
        let well_formed = ipv6_of(address).is_some()
            && (after.is_empty() || after.strip_prefix(':').is_some_and(digits));
        return well_formed.then_some(address);
    }
    let name = match host.rsplit_once(':') {
        Some((name, port)) if digits(port) => name,
        Some(_) => return None,
        None => host,
    };
    let name = name.trim_end_matches('.');
    (!name.is_empty()).then_some(name)
}

/// The host name of a `Host` value, normalized for messages: lower case, IPv6 in brackets.
fn host_name(host: &str) -> Option<String> {
    let part = host_part(host)?;
    Some(match ipv6_of(part) {
        Some(address) => format!("[{address}]"),
        None => part.to_ascii_lowercase(),
    })
}

fn ipv6_of(name: &str) -> Option<Ipv6Addr> {
    name.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

fn same_host(allowed: &str, name: &str) -> bool {
    allowed.eq_ignore_ascii_case(name)
        || ipv6_of(allowed).is_some_and(|address| ipv6_of(name) == Some(address))
}

fn origin_host(origin: &str) -> Option<String> {
    host_name(origin.split_once("://")?.1)
}

fn is_loopback_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|address| address.is_loopback())
        || ipv6_of(name).is_some_and(|address| address.is_loopback())
}

/// Layer: refuse requests addressed to a host, or sent by a page, the policy does not allow
/// (403, with a JSON body saying how to allow it).
pub async fn check_access(
    State(policy): State<Arc<AccessPolicy>>,
    request: Request,
    next: Next,
) -> Response {
    match policy.refusal(request.headers()) {
        None => next.run(request).await,
        Some(message) => {
            tracing::warn!(%message, "request refused");
            (
                StatusCode::FORBIDDEN,
                axum::Json(json!({ "error": message })),
            )
                .into_response()
        }
    }
}

/// The 415 answer for a request whose body is not declared as `application/json`
/// (parameters such as `charset` allowed), or `None` when it is. Endpoints that take JSON
/// check this before reading the body: no browser page can send `application/json` to
/// another origin without a preflight, so pages cannot send "simple" form or text requests.
#[must_use]
pub fn json_body_refusal(headers: &HeaderMap) -> Option<Response> {
    let content_type = headers.get(header::CONTENT_TYPE);
    let is_json = content_type.is_some_and(|value| {
        let media_type = value.as_bytes().split(|byte| *byte == b';').next();
        media_type.is_some_and(|media_type| {
            media_type
                .trim_ascii()
                .eq_ignore_ascii_case(b"application/json")
        })
    });
    if is_json {
        return None;
    }
    let found = content_type.map_or_else(
        || "none".to_owned(),
        |value| format!("`{}`", String::from_utf8_lossy(value.as_bytes())),
    );
    Some(
        (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            axum::Json(json!({
                "error": format!(
                    "the body must be JSON sent with `Content-Type: application/json` (found: {found}); for example curl -H 'Content-Type: application/json' -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"list_skills\"}}'"
                )
            })),
        )
            .into_response(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_on_any_port_and_listed_names_are_allowed() {
        let policy = AccessPolicy::new(vec!["skills.internal".to_owned()], false);
        for host in [
            "localhost",
            "localhost:7878",
            "LOCALHOST.:80",
            "127.0.0.1:9",
            "127.0.0.2",
            "[::1]:7878",
            "[::1]",
            "skills.internal:443",
            "Skills.Internal",
        ] {
            assert!(policy.allows_host(host), "{host}");
        }
        for host in [
            "attacker.example",
            "localhost.attacker.example",
            "127.0.0.1.nip.io",
            "0.0.0.0:7878",
            "192.168.1.4",
            "[::2]:7878",
            "localhost:x",
            "",
            "[::1]x",
        ] {
            assert!(!policy.allows_host(host), "{host}");
        }
        assert!(policy.allows_origin("http://localhost:3000"));
        assert!(policy.allows_origin("https://skills.internal"));
        for origin in [
            "null",
            "http://attacker.example",
            "http://localhost.attacker.example:7878",
            "file://",
            "http://localhost/path",
        ] {
            assert!(!policy.allows_origin(origin), "{origin}");
        }
    }

    #[test]
    fn host_names_given_by_the_operator_are_checked_and_normalized() {
        assert_eq!(
            allowed_host_name("Skills.Internal."),
            Ok("skills.internal".to_owned())
        );
        assert_eq!(allowed_host_name("::1"), Ok("[::1]".to_owned()));
        assert_eq!(allowed_host_name("[fe80::1]"), Ok("[fe80::1]".to_owned()));
        for bad in ["", "http://x", "x:80", "a/b", "a b"] {
            assert!(allowed_host_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn with_a_token_the_host_is_not_checked_unless_names_are_given() {
        let headers = |host: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::HOST, host.parse().unwrap());
            headers
        };
        let token_only = AccessPolicy::new(Vec::new(), true);
        assert_eq!(token_only.refusal(&headers("10.0.0.5:7878")), None);
        let listed = AccessPolicy::new(vec!["skills.internal".to_owned()], true);
        assert!(listed.refusal(&headers("10.0.0.5:7878")).is_some());
        let open = AccessPolicy::new(Vec::new(), false);
        let refusal = open.refusal(&headers("attacker.example:7878")).unwrap();
        assert!(
            refusal.contains("--allowed-host attacker.example"),
            "{refusal}"
        );
    }
}
