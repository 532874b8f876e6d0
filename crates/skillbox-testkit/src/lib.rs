//! Helpers every skillbox test suite needs: where the repository is, a corpus of varied skills
//! written for the tests ([`SkillCorpus`]), the Python venv holding the reference
//! implementations, one tokio runtime per test binary, skill trees written from text, and local
//! servers (git over HTTP and the git protocol, static files) to install skills from.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod browser;
pub mod git_server;
mod local_http;
pub mod local_model;
pub mod model_server;
pub mod s3_server;
pub mod skill_corpus;
pub mod static_server;

pub use git_server::{GitDaemon, GitHttpServer, GitRepo};
pub use skill_corpus::SkillCorpus;
pub use static_server::StaticServer;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The repository root.
#[must_use]
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

/// The Python interpreter of the test venv (skills-ref, mcp, requests), created on first use by
/// `scripts/setup-test-venv.sh`. Fails the test with the script's message when it cannot be
/// created: the peers are part of the test suite, not optional.
#[must_use]
pub fn peer_python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| set_up_peer("scripts/setup-test-venv.sh", "the test venv"))
        .clone()
}

/// The MCP Inspector's launcher script (`@modelcontextprotocol/inspector`, run with `node`),
/// installed on first use by `scripts/setup-test-node.sh`; fails the test as
/// [`peer_python`] does.
#[must_use]
pub fn peer_inspector() -> PathBuf {
    static LAUNCHER: OnceLock<PathBuf> = OnceLock::new();
    LAUNCHER
        .get_or_init(|| set_up_peer("scripts/setup-test-node.sh", "the MCP Inspector"))
        .clone()
}

/// Run a set-up script of the repository that prints the path of what it set up.
fn set_up_peer(script: &str, what: &str) -> PathBuf {
    let output = Command::new("bash")
        .arg(repo_root().join(script))
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "setting up {what} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(
        String::from_utf8(output.stdout)
            .expect("a UTF-8 path")
            .trim(),
    )
}

/// Run a set-up script of the repository printing `KEY=path` lines (its progress and errors
/// go to the test's stderr); the values of `keys`, or `None` when the script fails or leaves
/// one out.
pub(crate) fn set_up_keys<const N: usize>(
    script: &str,
    argument: Option<&str>,
    keys: [&str; N],
) -> Option<[PathBuf; N]> {
    let output = Command::new("bash")
        .arg(repo_root().join(script))
        .args(argument)
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let mut values = keys.map(|_| PathBuf::new());
    for (value, key) in values.iter_mut().zip(keys) {
        *value = text
            .lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
            .map(PathBuf::from)?;
    }
    Some(values)
}

/// The start of a successful HTTP/1.1 answer.
const STATUS_OK: &[u8; 12] = b"HTTP/1.1 200";

/// Whether `GET path` on 127.0.0.1:`port` answers 200 (a server's health check).
pub(crate) fn answers_ok(port: u16, path: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(2)));
    if stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .is_err()
    {
        return false;
    }
    // Only the status line's start is read: some servers (chromedriver) keep the connection
    // open after answering, and reading to the end would wait out the read timeout.
    let mut status = [0_u8; STATUS_OK.len()];
    stream.read_exact(&mut status).is_ok() && status == *STATUS_OK
}

/// One multi-threaded runtime for the whole test binary: warm workers' pipes and servers belong
/// to the runtime that started them.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// Whether the tests run as root; when not, says on stderr that `test` is skipped and why
/// (`needs` says what root is needed for).
pub fn running_as_root(test: &str, needs: &str) -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    eprintln!("SKIPPED {test}: needs root ({needs})");
    false
}

/// Write `files` (path relative to `root`, text) under `root`, creating the folders on the way.
pub fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (relative, text) in files {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().expect("a file has a parent folder")).unwrap_or_else(
            |error| panic!("cannot create the folder of {}: {error}", path.display()),
        );
        std::fs::write(&path, text)
            .unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
    }
}

/// Make a FIFO (named pipe) at `path` with the system's `mkfifo`, for tests of readers that must
/// refuse special files instead of blocking on them.
pub fn make_fifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {} failed", path.display());
}

/// Run `work` on its own thread and return its result, failing the test when it takes longer
/// than `limit`: a reader that blocks on a FIFO then fails its test instead of hanging the suite.
/// The stuck thread is left behind; the test process ends with the suite.
pub fn finishes_within<T: Send + 'static>(
    limit: std::time::Duration,
    what: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    receiver
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}; it blocks"))
}

/// Check `ready` every `interval` until it holds (`true`) or `limit` has passed (`false`).
pub fn wait_until(
    limit: std::time::Duration,
    interval: std::time::Duration,
    mut ready: impl FnMut() -> bool,
) -> bool {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if ready() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(interval);
    }
}

/// A builder for the HTTP clients tests talk to servers with, with the process's TLS crypto
/// provider installed first (reqwest is built without one of its own; see
/// `skillbox_services::tls`, repeated here rather than called: the core and exec tests use this
/// crate, and depending on skillbox-services would build them a second core).
pub fn http_client_builder() -> reqwest::ClientBuilder {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::builder()
}

/// An HTTP client for tests (see [`http_client_builder`]).
#[must_use]
pub fn http_client() -> reqwest::Client {
    http_client_builder().build().expect("an HTTP client")
}
