//! [`GitHttpServer`]: git's smart HTTP, answered by git's own `http-backend` run as a CGI
//! program for each request, optionally only for clients sending a token.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use hyper::body::Incoming;

use super::git_repo::GitRepo;
use super::process_groups::ProcessGroups;
use super::served_repositories::{RepositoryPaths, ServedRepositories};
use crate::local_http::{LocalHttpServer, ReceivedRequest, ResponseBody, read_body, text_response};

/// Where Debian puts `git-http-backend` when `git --exec-path` has none.
const FALLBACK_HTTP_BACKEND: &str = "/usr/lib/git-core/git-http-backend";
/// How long one `git http-backend` run may take before it is killed (answered 504).
const HTTP_BACKEND_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest request body passed to `git http-backend`.
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// `git-http-backend` of the `git` on `PATH` (`git --exec-path`), else Debian's.
fn http_backend_program() -> PathBuf {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            let exec_path = Command::new("git")
                .arg("--exec-path")
                .stdin(Stdio::null())
                .output()
                .ok()
                .filter(|output| output.status.success())
                .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned());
            exec_path
                .map(|folder| Path::new(&folder).join("git-http-backend"))
                .filter(|program| program.is_file())
                .or_else(|| Some(PathBuf::from(FALLBACK_HTTP_BACKEND)).filter(|p| p.is_file()))
                .unwrap_or_else(|| {
                    panic!(
                        "no git-http-backend: neither in `git --exec-path` nor at \
                         {FALLBACK_HTTP_BACKEND} (install git)"
                    )
                })
        })
        .clone()
}

/// What the HTTP handler needs.
#[derive(Debug)]
struct HttpBackend {
    paths: RepositoryPaths,
    required_token: Mutex<Option<String>>,
    processes: Arc<ProcessGroups>,
}

/// A git smart-HTTP server (git's own `git http-backend`, run as CGI for each request) serving
/// [`GitRepo`]s as `http://127.0.0.1:PORT/owner/name.git`, as a forge does: protocol v0 and
/// v2, gzip request bodies, partial and shallow clones. Optionally only for clients sending a
/// token ([`GitHttpServer::with_required_token`]). Every request is recorded.
#[derive(Debug)]
pub struct GitHttpServer {
    server: LocalHttpServer,
    backend: Arc<HttpBackend>,
    repositories: ServedRepositories,
}

impl GitHttpServer {
    /// A server with no repositories yet.
    #[must_use]
    pub fn start() -> Self {
        let repositories = ServedRepositories::new();
        let backend = Arc::new(HttpBackend {
            paths: repositories.paths.clone(),
            required_token: Mutex::new(None),
            processes: Arc::new(ProcessGroups::default()),
        });
        let handler_backend = Arc::clone(&backend);
        let server = LocalHttpServer::start(Arc::new(move |request| {
            let backend = Arc::clone(&handler_backend);
            Box::pin(async move { answer_git_request(request, &backend).await })
                as Pin<Box<dyn std::future::Future<Output = _> + Send>>
        }));
        GitHttpServer {
            server,
            backend,
            repositories,
        }
    }

    /// Answer only requests carrying `token`, as `Authorization: Bearer TOKEN` or basic
    /// authentication with `token` as the password (any user name, as forges take
    /// `x-access-token:TOKEN`); others get `401` with `WWW-Authenticate: Basic realm="git"`.
    #[must_use]
    pub fn with_required_token(self, token: &str) -> Self {
        *self
            .backend
            .required_token
            .lock()
            .expect("the required token") = Some(token.to_owned());
        self
    }

    /// Serve `repo` as `name.git` (`name` like `owner/name`); later commits to `repo` are
    /// served too. `repo` must outlive its use through the server.
    pub fn add_repo(&self, name: &str, repo: &GitRepo) {
        self.repositories.add(name, repo);
    }

    /// `http://127.0.0.1:PORT/NAME.git`, the clone URL of a repository added as `name`.
    /// (`http-backend` also finds it without the `.git`, as forges do.)
    #[must_use]
    pub fn url(&self, name: &str) -> String {
        format!("{}/{name}.git", self.server.base_url())
    }

    /// `http://127.0.0.1:PORT`.
    #[must_use]
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// The requests answered so far (method, path, query, headers, status), in order.
    #[must_use]
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        self.server.requests()
    }
}

impl Drop for GitHttpServer {
    fn drop(&mut self) {
        self.server.stop();
        self.backend.processes.stop();
    }
}

/// Whether `headers` carry `token` as a bearer token or a basic-authentication password.
pub(super) fn carries_token(headers: &http::HeaderMap, token: &str) -> bool {
    let Some(value) = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
    else {
        return false;
    };
    let Some((scheme, credentials)) = value.trim().split_once(' ') else {
        return false;
    };
    let credentials = credentials.trim();
    if scheme.eq_ignore_ascii_case("bearer") {
        return credentials == token;
    }
    if scheme.eq_ignore_ascii_case("basic") {
        return base64::engine::general_purpose::STANDARD
            .decode(credentials)
            .ok()
            .and_then(|decoded| String::from_utf8(decoded).ok())
            .and_then(|pair| pair.split_once(':').map(|(_, password)| password == token))
            .unwrap_or(false);
    }
    false
}

async fn answer_git_request(
    request: http::Request<Incoming>,
    backend: &HttpBackend,
) -> http::Response<ResponseBody> {
    let required_token = backend
        .required_token
        .lock()
        .expect("the required token")
        .clone();
    if let Some(token) = required_token
        && !carries_token(request.headers(), &token)
    {
        let mut response = text_response(401, "authentication required\n");
        response.headers_mut().insert(
            http::header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static("Basic realm=\"git\""),
        );
        return response;
    }
    let (parts, body) = request.into_parts();
    let Some(body) = read_body(body, MAX_REQUEST_BYTES).await else {
        return text_response(413, "the request body is too long or broke off\n");
    };
    let mut command = tokio::process::Command::new(http_backend_program());
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &backend.paths.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_PROJECT_ROOT", &backend.paths.root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GATEWAY_INTERFACE", "CGI/1.1")
        .env("SERVER_PROTOCOL", "HTTP/1.1")
        .env("SERVER_SOFTWARE", "skillbox-testkit")
        .env("REQUEST_METHOD", parts.method.as_str())
        .env("SCRIPT_NAME", "")
        .env("PATH_INFO", parts.uri.path())
        .env("QUERY_STRING", parts.uri.query().unwrap_or(""))
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("CONTENT_LENGTH", body.len().to_string());
    for (name, value) in &parts.headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        match name.as_str() {
            "content-type" => {
                command.env("CONTENT_TYPE", value);
            }
            "content-length" | "authorization" => {}
            other => {
                command.env(
                    format!("HTTP_{}", other.to_ascii_uppercase().replace('-', "_")),
                    &value,
                );
                if other == "git-protocol" {
                    command.env("GIT_PROTOCOL", value);
                }
            }
        }
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (mut child, guard) = match backend.processes.spawn(command) {
        Ok(started) => started,
        Err(error) => {
            return text_response(500, &format!("cannot run git http-backend: {error}\n"));
        }
    };
    let stdin = child.stdin.take();
    let feed = async move {
        use tokio::io::AsyncWriteExt as _;
        if let Some(mut stdin) = stdin {
            // http-backend may answer without reading everything (an error): ignore EPIPE.
            let _ = stdin.write_all(&body).await;
        }
    };
    let run = async { tokio::join!(feed, child.wait_with_output()).1 };
    let output = match tokio::time::timeout(HTTP_BACKEND_TIMEOUT, run).await {
        Ok(Ok(output)) => output,
        Ok(Err(error)) => {
            return text_response(500, &format!("git http-backend failed: {error}\n"));
        }
        Err(_) => {
            return text_response(
                504,
                &format!("git http-backend took longer than {HTTP_BACKEND_TIMEOUT:?}\n"),
            );
        }
    };
    guard.finished();
    if !output.stderr.is_empty() {
        eprintln!(
            "git http-backend ({} {}): {}",
            parts.method,
            parts.uri,
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    cgi_response(&output.stdout).unwrap_or_else(|| {
        text_response(
            500,
            &format!(
                "git http-backend answered no CGI headers ({}): {}\n",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ),
        )
    })
}

/// The HTTP response a CGI program wrote: headers (a `Status:` header giving the status, 200
/// without), an empty line, the body. `None` when there is no empty line or a header is bad.
pub(super) fn cgi_response(output: &[u8]) -> Option<http::Response<ResponseBody>> {
    let crlf = output.windows(4).position(|window| window == b"\r\n\r\n");
    let lf = output.windows(2).position(|window| window == b"\n\n");
    let (head_end, body_start) = match (crlf, lf) {
        (Some(crlf), Some(lf)) if lf < crlf => (lf, lf + 2),
        (Some(crlf), _) => (crlf, crlf + 4),
        (None, Some(lf)) => (lf, lf + 2),
        (None, None) => return None,
    };
    let head = std::str::from_utf8(&output[..head_end]).ok()?;
    let mut response = http::Response::new(ResponseBody::full(output[body_start..].to_vec()));
    for line in head.lines() {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            let code = value.split_whitespace().next()?.parse().ok()?;
            *response.status_mut() = http::StatusCode::from_u16(code).ok()?;
        } else {
            response.headers_mut().append(
                http::HeaderName::from_bytes(name.trim().as_bytes()).ok()?,
                http::HeaderValue::from_str(value).ok()?,
            );
        }
    }
    Some(response)
}
