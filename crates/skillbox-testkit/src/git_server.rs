//! Git hosting for the tests of installing skills from repositories: real repositories built
//! with the `git` CLI ([`GitRepo`]), served over smart HTTP by git's own `http-backend` run as
//! a CGI program ([`GitHttpServer`], optionally behind a token), and over the git protocol by
//! `git daemon` ([`GitDaemon`]). Servers listen on 127.0.0.1 with port 0 and kill the git
//! processes they started when dropped.
//!
//! Every git process here runs with an empty `HOME`, no system config and no inherited `GIT_*`
//! variables ([`isolate_git`]): the machine's git settings, or a git hook running the tests
//! (which sets `GIT_DIR` and `GIT_INDEX_FILE`), cannot change what the tests see.

use std::collections::HashSet;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use hyper::body::Incoming;

pub use crate::local_http::ReceivedRequest;
use crate::local_http::{LocalHttpServer, ResponseBody, read_body, text_response};

/// The author and committer of the test repositories' commits.
const AUTHOR_NAME: &str = "Skillbox Test";
/// Their e-mail address (a reserved domain).
const AUTHOR_EMAIL: &str = "test@skillbox.invalid";
/// Where Debian puts `git-http-backend` when `git --exec-path` has none.
const FALLBACK_HTTP_BACKEND: &str = "/usr/lib/git-core/git-http-backend";
/// How long one `git http-backend` run may take before it is killed (answered 504).
const HTTP_BACKEND_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest request body passed to `git http-backend`.
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;
/// How long one `git daemon` connection may last before its processes are killed.
const DAEMON_CONNECTION_TIMEOUT: Duration = Duration::from_secs(120);
/// `git daemon --timeout`: seconds a connection may stay idle.
const DAEMON_IDLE_TIMEOUT_SECONDS: u32 = 60;

/// Make `command` (a `git` command, or a program that runs git) independent of the machine and
/// of the process running the tests: no inherited `GIT_*` variables, no system config, `home`
/// as `HOME` (so no global config or credential helper), no prompts for credentials, and a
/// fixed author and committer. Returns `command` for chaining.
pub fn isolate_git<'a>(command: &'a mut Command, home: &Path) -> &'a mut Command {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            command.env_remove(name);
        }
    }
    command
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SSH_ASKPASS")
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", AUTHOR_NAME)
        .env("GIT_AUTHOR_EMAIL", AUTHOR_EMAIL)
        .env("GIT_COMMITTER_NAME", AUTHOR_NAME)
        .env("GIT_COMMITTER_EMAIL", AUTHOR_EMAIL)
}

/// A `git` command isolated by [`isolate_git`] with `home` as `HOME`.
#[must_use]
pub fn git_command(home: &Path) -> Command {
    let mut command = Command::new("git");
    isolate_git(&mut command, home);
    command
}

/// Run `command` (a git command), failing the test with its output when it fails; its stdout,
/// trimmed.
fn run_git(mut command: Command, what: &str) -> String {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run git (needed for {what}): {error}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// A git repository with a working tree in a temporary folder (removed when dropped), on the
/// branch `main`, configured to be served: any commit can be fetched by its id, partial clones
/// (`--filter`) are allowed, and pushes over HTTP are refused.
#[derive(Debug)]
pub struct GitRepo {
    work_tree: PathBuf,
    home: PathBuf,
    _folder: tempfile::TempDir,
}

impl Default for GitRepo {
    fn default() -> Self {
        Self::new()
    }
}

impl GitRepo {
    /// An empty repository (no commits yet) on the branch `main`.
    #[must_use]
    pub fn new() -> Self {
        let folder = tempfile::Builder::new()
            .prefix("skillbox-git-repo-")
            .tempdir()
            .expect("a temporary folder");
        let home = folder.path().join("home");
        let work_tree = folder.path().join("repo");
        fs_err::create_dir_all(&home).expect("a home folder for git");
        let mut init = git_command(&home);
        init.args(["init", "--quiet", "--initial-branch=main"])
            .arg(&work_tree);
        run_git(init, "git init");
        let repo = GitRepo {
            work_tree,
            home,
            _folder: folder,
        };
        for (key, value) in [
            ("uploadpack.allowFilter", "true"),
            ("uploadpack.allowAnySHA1InWant", "true"),
            ("uploadpack.allowReachableSHA1InWant", "true"),
            ("uploadpack.allowTipSHA1InWant", "true"),
            ("http.receivepack", "false"),
        ] {
            repo.git(&["config", key, value]);
        }
        repo
    }

    /// The working tree.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.work_tree
    }

    /// The repository itself (`.git` in the working tree), what the servers serve.
    #[must_use]
    pub fn git_dir(&self) -> PathBuf {
        self.work_tree.join(".git")
    }

    /// Run `git arguments…` in the working tree (isolated as [`isolate_git`] says), failing the
    /// test when it fails; its stdout, trimmed.
    pub fn git(&self, arguments: &[&str]) -> String {
        let mut command = git_command(&self.home);
        command.current_dir(&self.work_tree).args(arguments);
        run_git(command, &format!("git {}", arguments.join(" ")))
    }

    /// Write `files` (path relative to the working tree, text), creating folders on the way.
    /// Nothing is committed until [`GitRepo::commit`].
    pub fn write(&self, files: &[(&str, &str)]) {
        crate::write_tree(&self.work_tree, files);
    }

    /// Write one executable file (mode 755, which git records as `100755`).
    pub fn write_executable(&self, path: &str, text: &str) {
        use std::os::unix::fs::PermissionsExt as _;
        self.write(&[(path, text)]);
        let path = self.work_tree.join(path);
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|error| panic!("cannot make {} executable: {error}", path.display()));
    }

    /// Make `path` a symbolic link to `target` (as written: relative, absolute or dangling).
    pub fn symlink(&self, path: &str, target: &str) {
        let link = self.work_tree.join(path);
        if let Some(parent) = link.parent() {
            fs_err::create_dir_all(parent).expect("the folder of a symbolic link");
        }
        std::os::unix::fs::symlink(target, &link)
            .unwrap_or_else(|error| panic!("cannot link {} to {target}: {error}", link.display()));
    }

    /// Remove a file, link or folder (with its contents) from the working tree.
    pub fn remove(&self, path: &str) {
        let path = self.work_tree.join(path);
        let metadata = fs_err::symlink_metadata(&path).expect("the path to remove exists");
        if metadata.is_dir() {
            fs_err::remove_dir_all(&path).expect("the folder can be removed");
        } else {
            fs_err::remove_file(&path).expect("the file can be removed");
        }
    }

    /// Commit everything in the working tree (additions, changes, removals; an empty commit
    /// when nothing changed) on the current branch; the new commit's full 40-hex id.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "--all"]);
        self.git(&["commit", "--quiet", "--allow-empty", "--message", message]);
        self.rev_parse("HEAD")
    }

    /// Tag the current commit (a lightweight tag, as `git tag name`).
    pub fn tag(&self, name: &str) {
        self.git(&["tag", name]);
    }

    /// Tag the current commit with an annotated tag (a tag object, as releases usually are).
    pub fn annotated_tag(&self, name: &str, message: &str) {
        self.git(&["tag", "--annotate", "--message", message, name]);
    }

    /// Create the branch `name` at the current commit and switch to it: later commits go there.
    pub fn branch(&self, name: &str) {
        self.git(&["switch", "--quiet", "--create", name]);
    }

    /// Switch to the existing branch `name` (the working tree follows).
    pub fn checkout(&self, name: &str) {
        self.git(&["switch", "--quiet", name]);
    }

    /// The full commit id `revision` (a branch, tag, `HEAD~1`) names.
    #[must_use]
    pub fn rev_parse(&self, revision: &str) -> String {
        self.git(&["rev-parse", "--verify", &format!("{revision}^{{commit}}")])
    }
}

/// The folder a server serves repositories from (`owner/name.git` links to the repositories),
/// removed when dropped: owned by the server, not by its tasks, which may outlive it a little.
#[derive(Debug)]
struct ServedRepositories {
    paths: RepositoryPaths,
    _folder: tempfile::TempDir,
}

/// Where a server's tasks find the served repositories, and the `HOME` of its git processes.
#[derive(Debug, Clone)]
struct RepositoryPaths {
    root: PathBuf,
    home: PathBuf,
}

impl ServedRepositories {
    fn new() -> Self {
        let folder = tempfile::Builder::new()
            .prefix("skillbox-git-server-")
            .tempdir()
            .expect("a temporary folder");
        let root = folder.path().join("repositories");
        let home = folder.path().join("home");
        fs_err::create_dir_all(&root).expect("the served folder");
        fs_err::create_dir_all(&home).expect("a home folder for git");
        ServedRepositories {
            paths: RepositoryPaths { root, home },
            _folder: folder,
        }
    }

    /// Serve `repo` as `name.git` (a link, so later commits are served too); a repository
    /// served under `name` before is replaced.
    fn add(&self, name: &str, repo: &GitRepo) {
        assert!(
            !name.is_empty()
                && !name.starts_with('/')
                && !name.ends_with(".git")
                && name
                    .split('/')
                    .all(|part| !part.is_empty() && part != "." && part != ".."),
            "a served repository is named like `owner/name` (no `.git`), not `{name}`"
        );
        let link = self.paths.root.join(format!("{name}.git"));
        if let Some(parent) = link.parent() {
            fs_err::create_dir_all(parent).expect("the owner's folder");
        }
        if fs_err::symlink_metadata(&link).is_ok() {
            fs_err::remove_file(&link).expect("the old link can be removed");
        }
        std::os::unix::fs::symlink(repo.git_dir(), &link)
            .unwrap_or_else(|error| panic!("cannot link {}: {error}", link.display()));
    }
}

/// The process groups of the git processes a server started (each child leads its own group,
/// so killing the group kills what it started too: `upload-pack` under `http-backend`).
#[derive(Debug, Default)]
struct ProcessGroups {
    state: Mutex<ProcessGroupsState>,
}

#[derive(Debug, Default)]
struct ProcessGroupsState {
    stopped: bool,
    running: HashSet<u32>,
}

impl ProcessGroups {
    /// Start `command` in a process group of its own, killed when the returned guard is dropped
    /// before [`ProcessGroupGuard::finished`] or when the server stops.
    fn spawn(
        self: &Arc<Self>,
        mut command: tokio::process::Command,
    ) -> std::io::Result<(tokio::process::Child, ProcessGroupGuard)> {
        let child = command.process_group(0).kill_on_drop(true).spawn()?;
        // The command holds the parent's copies of the child's standard streams (a socket, for
        // the daemon): drop them now, so the peer sees the end when the child ends.
        drop(command);
        let pid = child.id().unwrap_or_default();
        let mut state = self.state.lock().expect("the process groups");
        if state.stopped {
            kill_group(pid);
        } else {
            state.running.insert(pid);
        }
        Ok((
            child,
            ProcessGroupGuard {
                groups: Arc::clone(self),
                pid,
            },
        ))
    }

    /// Kill every running group, and any started from now on.
    fn stop(&self) {
        let mut state = self.state.lock().expect("the process groups");
        state.stopped = true;
        for pid in state.running.drain() {
            kill_group(pid);
        }
    }
}

/// A started git process: its group is killed when this is dropped unless it finished.
#[derive(Debug)]
struct ProcessGroupGuard {
    groups: Arc<ProcessGroups>,
    pid: u32,
}

impl ProcessGroupGuard {
    /// The process ended and was waited for: nothing to kill.
    fn finished(self) {
        self.groups
            .state
            .lock()
            .expect("the process groups")
            .running
            .remove(&self.pid);
    }
}

impl Drop for ProcessGroupGuard {
    fn drop(&mut self) {
        let mut state = self.groups.state.lock().expect("the process groups");
        if state.running.remove(&self.pid) {
            kill_group(self.pid);
        }
    }
}

fn kill_group(pid: u32) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

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
fn carries_token(headers: &http::HeaderMap, token: &str) -> bool {
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
fn cgi_response(output: &[u8]) -> Option<http::Response<ResponseBody>> {
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

/// A `git daemon` serving [`GitRepo`]s as `git://127.0.0.1:PORT/owner/name.git`. `git daemon`
/// cannot say which port it took, so this listens itself and starts `git daemon --inetd` for
/// each connection, with the connection as its standard input and output.
#[derive(Debug)]
pub struct GitDaemon {
    port: u16,
    repositories: ServedRepositories,
    processes: Arc<ProcessGroups>,
    accept_loop: tokio::task::AbortHandle,
}

impl GitDaemon {
    /// A daemon with no repositories yet.
    #[must_use]
    pub fn start() -> Self {
        let (listener, port) = crate::local_http::bind_loopback();
        let repositories = ServedRepositories::new();
        let processes = Arc::new(ProcessGroups::default());
        let paths = repositories.paths.clone();
        let started = Arc::clone(&processes);
        let accept_loop = crate::local_http::spawn_accept_loop(listener, move |stream| {
            serve_daemon_connection(stream, paths.clone(), Arc::clone(&started))
        });
        GitDaemon {
            port,
            repositories,
            processes,
            accept_loop,
        }
    }

    /// Serve `repo` as `name.git` (`name` like `owner/name`); later commits to `repo` are
    /// served too. `repo` must outlive its use through the daemon.
    pub fn add_repo(&self, name: &str, repo: &GitRepo) {
        self.repositories.add(name, repo);
    }

    /// `git://127.0.0.1:PORT/NAME.git`, the clone URL of a repository added as `name`.
    #[must_use]
    pub fn url(&self, name: &str) -> String {
        format!("{}/{name}.git", self.base_url())
    }

    /// `git://127.0.0.1:PORT`.
    #[must_use]
    pub fn base_url(&self) -> String {
        format!("git://127.0.0.1:{}", self.port)
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        self.accept_loop.abort();
        self.processes.stop();
    }
}

async fn serve_daemon_connection(
    stream: tokio::net::TcpStream,
    paths: RepositoryPaths,
    processes: Arc<ProcessGroups>,
) {
    // The daemon reads and writes the socket itself, blocking.
    let Ok(socket) = stream.into_std() else {
        return;
    };
    if socket.set_nonblocking(false).is_err() {
        return;
    }
    let input = OwnedFd::from(socket);
    let Ok(output) = input.try_clone() else {
        return;
    };
    let mut command = git_command(&paths.home);
    command
        .args([
            "daemon",
            "--inetd",
            "--export-all",
            "--enable=upload-pack",
            "--informative-errors",
            "--log-destination=stderr",
        ])
        .arg(format!("--timeout={DAEMON_IDLE_TIMEOUT_SECONDS}"))
        .arg(format!("--base-path={}", paths.root.display()))
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::from(input))
        .stdout(Stdio::from(output))
        .stderr(Stdio::piped());
    let Ok((child, guard)) = processes.spawn(command.into()) else {
        return;
    };
    if let Ok(Ok(output)) =
        tokio::time::timeout(DAEMON_CONNECTION_TIMEOUT, child.wait_with_output()).await
    {
        guard.finished();
        if !output.stderr.is_empty() {
            eprintln!(
                "git daemon: {}",
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder to clone into and a home for the cloning git.
    struct Client {
        folder: tempfile::TempDir,
    }

    impl Client {
        fn new() -> Self {
            let folder = tempfile::tempdir().unwrap();
            fs_err::create_dir_all(folder.path().join("home")).unwrap();
            Client { folder }
        }

        fn git(&self) -> Command {
            let mut command = git_command(&self.folder.path().join("home"));
            command.current_dir(self.folder.path()).stdin(Stdio::null());
            command
        }

        /// `git clone [options] url checkout`: whether it worked, and its stderr.
        fn clone(&self, options: &[&str], url: &str) -> (bool, String) {
            let output = self
                .git()
                .arg("clone")
                .args(options)
                .args([url, "checkout"])
                .output()
                .unwrap();
            (
                output.status.success(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        }

        fn checkout(&self) -> PathBuf {
            self.folder.path().join("checkout")
        }

        fn read(&self, path: &str) -> String {
            fs_err::read_to_string(self.checkout().join(path)).unwrap()
        }

        fn in_checkout(&self, arguments: &[&str]) -> String {
            let mut command = self.git();
            command.current_dir(self.checkout()).args(arguments);
            run_git(command, &format!("git {}", arguments.join(" ")))
        }
    }

    fn skill_repo() -> GitRepo {
        let repo = GitRepo::new();
        repo.write(&[
            (
                "skills/greet/SKILL.md",
                "---\nname: greet\n---\nSay hello.\n",
            ),
            ("README.md", "# skills\n"),
        ]);
        repo.write_executable("skills/greet/scripts/run.sh", "#!/bin/sh\necho hi\n");
        repo.symlink("skills/greet/link.md", "../../README.md");
        repo
    }

    #[test]
    fn a_repository_records_commits_tags_and_branches() {
        let repo = skill_repo();
        let first = repo.commit("first");
        assert_eq!(first.len(), 40);
        assert!(first.bytes().all(|byte| byte.is_ascii_hexdigit()));
        repo.tag("v1.0.0");
        repo.annotated_tag("v1.0.1", "release");
        repo.branch("dev");
        repo.remove("README.md");
        let second = repo.commit("second");
        assert_ne!(first, second);
        assert_eq!(repo.rev_parse("v1.0.0"), first);
        assert_eq!(repo.rev_parse("v1.0.1"), first);
        assert_eq!(repo.rev_parse("dev"), second);
        assert_eq!(repo.rev_parse("main"), first);
        assert_eq!(
            repo.git(&["ls-tree", "-r", "--format=%(objectmode) %(path)", "HEAD"]),
            "100644 skills/greet/SKILL.md\n120000 skills/greet/link.md\n\
             100755 skills/greet/scripts/run.sh"
        );
        repo.checkout("main");
        assert!(repo.path().join("README.md").is_file());
    }

    #[test]
    fn git_clones_over_http_fetches_a_commit_and_a_partial_clone() {
        let repo = skill_repo();
        let first = repo.commit("first");
        repo.tag("v1");
        repo.write(&[("skills/greet/SKILL.md", "---\nname: greet\n---\nHello!\n")]);
        let second = repo.commit("second");
        let server = GitHttpServer::start();
        server.add_repo("acme/skills", &repo);
        let url = server.url("acme/skills");
        assert_eq!(url, format!("{}/acme/skills.git", server.base_url()));

        let client = Client::new();
        let (cloned, stderr) = client.clone(&["--filter=blob:none"], &url);
        assert!(cloned, "{stderr}");
        assert_eq!(
            client.read("skills/greet/SKILL.md"),
            "---\nname: greet\n---\nHello!\n"
        );
        assert_eq!(client.in_checkout(&["rev-parse", "HEAD"]), second);
        assert_eq!(client.in_checkout(&["rev-parse", "v1^{commit}"]), first);

        // A commit no ref points at any more is still fetched by its id.
        repo.git(&["reset", "--quiet", "--hard", &first]);
        let empty = Client::new();
        empty
            .git()
            .args(["init", "--quiet", "checkout"])
            .output()
            .unwrap();
        empty.in_checkout(&["fetch", "--quiet", "--depth=1", &url, &second]);
        assert_eq!(empty.in_checkout(&["rev-parse", "FETCH_HEAD"]), second);

        let requests = server.requests();
        assert!(
            requests
                .iter()
                .any(|request| request.path == "/acme/skills.git/info/refs"
                    && request.query.as_deref() == Some("service=git-upload-pack")
                    && request.header("git-protocol") == Some("version=2")
                    && request.status == 200),
            "{requests:#?}"
        );
        assert!(
            requests
                .iter()
                .any(|request| request.method == "POST" && request.status == 200),
            "{requests:#?}"
        );
        assert!(
            requests
                .iter()
                .all(|request| request.authorization().is_none())
        );
    }

    #[test]
    fn the_git_protocol_header_selects_protocol_v2() {
        let repo = skill_repo();
        repo.commit("first");
        let server = GitHttpServer::start();
        server.add_repo("acme/skills", &repo);
        let advertisement = |protocol: Option<&str>| {
            crate::runtime().block_on(async {
                let mut request = crate::http_client().get(format!(
                    "{}/info/refs?service=git-upload-pack",
                    server.url("acme/skills")
                ));
                if let Some(protocol) = protocol {
                    request = request.header("Git-Protocol", protocol);
                }
                let response = request.send().await.unwrap();
                assert_eq!(response.status(), 200);
                assert_eq!(
                    response.headers()["content-type"],
                    "application/x-git-upload-pack-advertisement"
                );
                response.text().await.unwrap()
            })
        };
        assert!(advertisement(Some("version=2")).contains("version 2\n"));
        let version_0 = advertisement(None);
        assert!(!version_0.contains("version 2\n"));
        assert!(version_0.contains("refs/heads/main"), "{version_0}");
    }

    #[test]
    fn a_url_without_git_and_a_missing_repository() {
        let repo = skill_repo();
        repo.commit("first");
        let server = GitHttpServer::start();
        server.add_repo("acme/skills", &repo);
        let client = Client::new();
        let (cloned, stderr) = client.clone(&[], &format!("{}/acme/skills", server.base_url()));
        assert!(cloned, "{stderr}");
        assert!(client.checkout().join("README.md").is_file());

        let (cloned, stderr) = Client::new().clone(&[], &server.url("acme/missing"));
        assert!(!cloned);
        assert!(stderr.contains("not found"), "{stderr}");
    }

    #[test]
    fn gzip_request_bodies_reach_http_backend() {
        let repo = GitRepo::new();
        // Enough refs that the fetch request passes 1 KiB, which git sends gzipped.
        for number in 0..40 {
            repo.write(&[("count.txt", &number.to_string())]);
            repo.commit(&format!("commit {number}"));
            repo.tag(&format!("release-{number:03}"));
        }
        let server = GitHttpServer::start();
        server.add_repo("acme/many", &repo);
        let client = Client::new();
        let (cloned, stderr) = client.clone(&[], &server.url("acme/many"));
        assert!(cloned, "{stderr}");
        assert_eq!(client.read("count.txt"), "39");
        let requests = server.requests();
        assert!(
            requests.iter().any(|request| request.method == "POST"
                && request.header("content-encoding") == Some("gzip")
                && request.status == 200),
            "{requests:#?}"
        );
    }

    #[test]
    fn a_token_is_required_when_set() {
        let repo = skill_repo();
        repo.commit("first");
        let server = GitHttpServer::start().with_required_token("secret");
        server.add_repo("acme/private", &repo);
        let url = server.url("acme/private");

        let (cloned, stderr) = Client::new().clone(&[], &url);
        assert!(!cloned);
        assert!(
            stderr.contains("Authentication failed") || stderr.contains("could not read Username"),
            "{stderr}"
        );
        let refused = server.requests();
        assert_eq!(refused[0].status, 401);
        assert_eq!(refused[0].authorization(), None);

        let (cloned, stderr) = Client::new().clone(
            &["--config", "http.extraHeader=Authorization: Bearer wrong"],
            &url,
        );
        assert!(!cloned, "{stderr}");

        let bearer = Client::new();
        let (cloned, stderr) = bearer.clone(
            &["--config", "http.extraHeader=Authorization: Bearer secret"],
            &url,
        );
        assert!(cloned, "{stderr}");
        assert!(bearer.checkout().join("README.md").is_file());

        let port = server.base_url().rsplit(':').next().unwrap().to_owned();
        let (cloned, stderr) = Client::new().clone(
            &[],
            &format!("http://x-access-token:secret@127.0.0.1:{port}/acme/private.git"),
        );
        assert!(cloned, "{stderr}");

        let requests = server.requests();
        assert!(requests.iter().any(
            |request| request.status == 200 && request.authorization() == Some("Bearer secret")
        ));
        let basic = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode("x-access-token:secret")
        );
        assert!(requests.iter().any(
            |request| request.status == 200 && request.authorization() == Some(basic.as_str())
        ));
        assert!(requests.iter().all(|request| request.status == 200
            || (request.status == 401
                && request.authorization() != Some("Bearer secret")
                && request.authorization() != Some(basic.as_str()))));
    }

    #[test]
    fn pushes_over_http_are_refused() {
        let repo = skill_repo();
        repo.commit("first");
        let server = GitHttpServer::start();
        server.add_repo("acme/skills", &repo);
        let client = Client::new();
        let (cloned, stderr) = client.clone(&[], &server.url("acme/skills"));
        assert!(cloned, "{stderr}");
        let output = client
            .git()
            .current_dir(client.checkout())
            .args(["push", "origin", "HEAD:refs/heads/pushed"])
            .output()
            .unwrap();
        assert!(!output.status.success());
        assert!(repo.git(&["branch", "--list", "pushed"]).is_empty());
    }

    #[test]
    fn git_clones_from_the_daemon() {
        let repo = skill_repo();
        let commit = repo.commit("first");
        let daemon = GitDaemon::start();
        daemon.add_repo("acme/skills", &repo);
        let url = daemon.url("acme/skills");
        assert!(url.starts_with("git://127.0.0.1:") && url.ends_with("/acme/skills.git"));
        let client = Client::new();
        let (cloned, stderr) = client.clone(&[], &url);
        assert!(cloned, "{stderr}");
        assert_eq!(client.in_checkout(&["rev-parse", "HEAD"]), commit);
        assert_eq!(client.read("skills/greet/link.md"), "# skills\n");

        let (cloned, _) = Client::new().clone(&[], &daemon.url("acme/missing"));
        assert!(!cloned);
    }

    #[test]
    fn dropped_servers_refuse_connections() {
        let server = GitHttpServer::start();
        let daemon = GitDaemon::start();
        let addresses = [server.base_url(), daemon.base_url()].map(|url| {
            url.rsplit_once("//")
                .map(|(_, address)| address.to_owned())
                .unwrap()
        });
        drop(server);
        drop(daemon);
        for address in addresses {
            assert!(
                crate::wait_until(Duration::from_secs(5), Duration::from_millis(20), || {
                    std::net::TcpStream::connect(&address).is_err()
                }),
                "{address} still accepts connections"
            );
        }
    }

    #[test]
    fn dropping_the_daemon_ends_its_git_processes() {
        let daemon = GitDaemon::start();
        let address = daemon.base_url().replace("git://", "");
        // A client that connects and says nothing keeps its `git daemon --inetd` waiting.
        let _idle = std::net::TcpStream::connect(address).unwrap();
        let running = || {
            daemon
                .processes
                .state
                .lock()
                .unwrap()
                .running
                .iter()
                .copied()
                .collect::<Vec<_>>()
        };
        assert!(crate::wait_until(
            Duration::from_secs(10),
            Duration::from_millis(20),
            || !running().is_empty()
        ));
        let pid = running()[0];
        drop(daemon);
        // Gone, and reaped (no zombie left).
        assert!(
            crate::wait_until(Duration::from_secs(10), Duration::from_millis(20), || {
                !Path::new(&format!("/proc/{pid}")).exists()
            }),
            "git daemon {pid} outlived the dropped daemon: {:?}",
            fs_err::read_to_string(format!("/proc/{pid}/stat"))
        );
    }

    #[test]
    fn cgi_headers_and_status_are_read() {
        let response =
            cgi_response(b"Status: 404 Not Found\r\nContent-Type: text/plain\r\n\r\nnope").unwrap();
        assert_eq!(response.status(), 404);
        assert_eq!(response.headers()["content-type"], "text/plain");
        let response = cgi_response(b"Content-Type: text/plain\n\nbody\r\n\r\n").unwrap();
        assert_eq!(response.status(), 200);
        assert!(cgi_response(b"no end of headers").is_none());
    }

    #[test]
    fn tokens_are_found_in_bearer_and_basic_credentials() {
        let mut headers = http::HeaderMap::new();
        assert!(!carries_token(&headers, "secret"));
        for (value, carries) in [
            ("Bearer secret", true),
            ("bearer secret", true),
            ("Bearer other", false),
            ("Basic eDpzZWNyZXQ=", true),  // x:secret
            ("Basic c2VjcmV0Ong=", false), // secret:x
            ("Token secret", false),
        ] {
            headers.insert(
                http::header::AUTHORIZATION,
                http::HeaderValue::from_static(value),
            );
            assert_eq!(carries_token(&headers, "secret"), carries, "{value}");
        }
    }
}
