//! Where downloads may go. An origin is a URL's scheme, host and port. What an install downloads
//! stays on the origin the person named: a discovery index's artifacts on the index's origin, and
//! every redirect (of an index, an artifact, an archive) on the origin it started from, unless the
//! person allowed another host (`--allow-host HOST[:PORT]`, [`AllowedHosts`]). A published index
//! or a server otherwise decides nothing about which machines this one talks to.

use std::fmt;
use std::str::FromStr;

/// A URL's scheme, host and port (the scheme's default port when the URL names none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl Origin {
    /// The origin of `url`.
    #[must_use]
    pub fn of(url: &url::Url) -> Origin {
        Origin {
            scheme: url.scheme().to_owned(),
            host: url.host_str().unwrap_or_default().to_ascii_lowercase(),
            port: url.port_or_known_default(),
        }
    }

    /// Whether `url` is on this origin.
    #[must_use]
    pub fn holds(&self, url: &url::Url) -> bool {
        *self == Origin::of(url)
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        match (self.port, default_port(&self.scheme)) {
            (Some(port), Some(default)) if port == default => Ok(()),
            (Some(port), _) => write!(f, ":{port}"),
            (None, _) => Ok(()),
        }
    }
}

/// The port a scheme uses when a URL names none.
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "https" => Some(443),
        "http" => Some(80),
        _ => None,
    }
}

/// One host the person allowed downloads from: a host, and a port or (without one) the
/// scheme's default port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHost {
    host: String,
    port: Option<u16>,
}

impl AllowedHost {
    /// Whether `url` is on this host and port.
    fn allows(&self, url: &url::Url) -> bool {
        let Some(host) = url.host_str() else {
            return false;
        };
        let port = url.port_or_known_default();
        host.eq_ignore_ascii_case(&self.host)
            && match self.port {
                Some(allowed) => port == Some(allowed),
                None => port.is_some() && port == default_port(url.scheme()),
            }
    }
}

impl fmt::Display for AllowedHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.host)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

/// Why a `--allow-host` value is not a host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{given}` is not HOST or HOST:PORT ({reason}); e.g. `cdn.example.com` or `127.0.0.1:8080`"
)]
pub struct AllowedHostError {
    given: String,
    reason: &'static str,
}

impl FromStr for AllowedHost {
    type Err = AllowedHostError;

    fn from_str(given: &str) -> Result<Self, Self::Err> {
        let refuse = |reason| AllowedHostError {
            given: given.to_owned(),
            reason,
        };
        if given.contains("://") {
            return Err(refuse("give the host alone, without a scheme"));
        }
        if given.contains(['/', '?', '#', '@']) || given.chars().any(char::is_whitespace) {
            return Err(refuse("give the host alone, without a path or user"));
        }
        let (host, port) = match given.strip_prefix('[') {
            Some(rest) => {
                let (address, after) = rest
                    .split_once(']')
                    .ok_or_else(|| refuse("an IPv6 address needs its closing `]`"))?;
                let port = match after {
                    "" => None,
                    _ => Some(
                        after
                            .strip_prefix(':')
                            .ok_or_else(|| refuse("only `:PORT` may follow the host"))?,
                    ),
                };
                (format!("[{address}]"), port)
            }
            None => match given.split_once(':') {
                Some((_, rest)) if rest.contains(':') => {
                    return Err(refuse("write an IPv6 address in brackets, `[::1]:8080`"));
                }
                Some((host, port)) => (host.to_owned(), Some(port)),
                None => (given.to_owned(), None),
            },
        };
        let port = port
            .map(|port| {
                port.parse::<u16>()
                    .ok()
                    .filter(|port| *port != 0)
                    .ok_or_else(|| refuse("the port is not a number from 1 to 65535"))
            })
            .transpose()?;
        if host.is_empty() || host == "[]" {
            return Err(refuse("there is no host"));
        }
        // In the form URLs have: lower case, international names as punycode.
        let host = url::Host::parse(&host)
            .map_err(|_| refuse("it does not parse as a host name or address"))?
            .to_string();
        Ok(AllowedHost { host, port })
    }
}

/// The hosts the person allowed downloads from besides a source's own origin
/// (`--allow-host`); none by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedHosts {
    hosts: Vec<AllowedHost>,
}

impl AllowedHosts {
    /// These hosts.
    #[must_use]
    pub fn new(hosts: Vec<AllowedHost>) -> Self {
        AllowedHosts { hosts }
    }

    /// Whether the person allowed `url`'s host and port.
    #[must_use]
    pub fn allows(&self, url: &url::Url) -> bool {
        self.hosts.iter().any(|host| host.allows(url))
    }

    /// Whether a download that started on `origin` may go to `url`: the same origin, or a host
    /// the person allowed.
    #[must_use]
    pub fn may_reach(&self, origin: &Origin, url: &url::Url) -> bool {
        origin.holds(url) || self.allows(url)
    }
}

/// What `--allow-host` value lets `url` be reached, for messages: the host, with its port when
/// it is not the scheme's default.
#[must_use]
pub fn allow_host_value(url: &url::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match (url.port(), default_port(url.scheme())) {
        (Some(port), default) if Some(port) != default => format!("{host}:{port}"),
        _ => host.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn url(text: &str) -> url::Url {
        url::Url::parse(text).unwrap()
    }

    #[test]
    fn an_origin_is_scheme_host_and_port() {
        let origin = Origin::of(&url("https://Skills.Example.com/.well-known/agent-skills/"));
        assert!(origin.holds(&url("https://skills.example.com:443/a.zip")));
        assert!(!origin.holds(&url("http://skills.example.com/a.zip")));
        assert!(!origin.holds(&url("https://skills.example.com:8443/a.zip")));
        assert!(!origin.holds(&url("https://cdn.example.com/a.zip")));
        assert!(!origin.holds(&url("https://skills.example.com.evil.test/a.zip")));
        assert_eq!(origin.to_string(), "https://skills.example.com");
        assert_eq!(
            Origin::of(&url("http://127.0.0.1:8080/x")).to_string(),
            "http://127.0.0.1:8080"
        );
    }

    #[test]
    fn an_allowed_host_is_its_port_or_the_default_one() {
        let allowed = |values: &[&str]| {
            AllowedHosts::new(values.iter().map(|value| value.parse().unwrap()).collect())
        };
        let cdn = allowed(&["CDN.example.com"]);
        assert!(cdn.allows(&url("https://cdn.example.com/a.zip")));
        assert!(cdn.allows(&url("http://cdn.example.com/a.zip")));
        assert!(!cdn.allows(&url("https://cdn.example.com:8443/a.zip")));
        assert!(!cdn.allows(&url("https://other.example.com/a.zip")));
        let port = allowed(&["127.0.0.1:8080", "[::1]:9000", "h.test:443"]);
        assert!(port.allows(&url("http://127.0.0.1:8080/a")));
        assert!(!port.allows(&url("http://127.0.0.1:8081/a")));
        assert!(!port.allows(&url("http://127.0.0.1/a")));
        assert!(port.allows(&url("http://[::1]:9000/a")));
        assert!(port.allows(&url("https://h.test/a")));
        assert!(!port.allows(&url("http://h.test/a")));
        assert!(AllowedHosts::default().may_reach(
            &Origin::of(&url("https://a.test/index.json")),
            &url("https://a.test/x.zip")
        ));
    }

    #[test]
    fn an_allowed_host_that_is_not_one_is_refused_with_the_form_to_use() {
        for bad in [
            "https://cdn.example.com",
            "cdn.example.com/path",
            "user@cdn.example.com",
            "cdn.example.com:port",
            "cdn.example.com:99999",
            "",
            ":80",
        ] {
            let error = bad.parse::<AllowedHost>().unwrap_err().to_string();
            assert!(error.contains("HOST:PORT"), "{bad}: {error}");
        }
        assert_eq!(
            allow_host_value(&url("http://127.0.0.1:8080/x")),
            "127.0.0.1:8080"
        );
        assert_eq!(
            allow_host_value(&url("https://cdn.example.com/x")),
            "cdn.example.com"
        );
    }
}
