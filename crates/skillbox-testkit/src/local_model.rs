//! A real model for end-to-end tests: `llama-server` with Qwen2.5-Coder-1.5B-Instruct, as
//! `scripts/setup-local-llm.sh` provisions them (once per machine, outside the checkout). One
//! server per test binary, started on first use on 127.0.0.1 and stopped when the binary
//! exits; tests take turns on it ([`LocalModel::lock`]), since it has one slot on two cores.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How long the server may take to answer `/health` (a loaded machine pages the model in slowly).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(180);
/// Context tokens of the server's one slot.
const CONTEXT_TOKENS: &str = "8192";

/// The running local model.
#[derive(Debug)]
pub struct LocalModel {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    turn: Mutex<()>,
    _server: Mutex<Child>,
}

impl LocalModel {
    /// The shared server, started on first use, after provisioning the engine and the model
    /// when they are missing (`scripts/setup-local-llm.sh`: a no-op once done). `None`, with a
    /// note on stderr, when provisioning fails (no network) or `SKILLBOX_SKIP_LOCAL_MODEL` is
    /// set, unless `SKILLBOX_REQUIRE_LOCAL_MODEL` is set (CI), which fails the test instead.
    #[must_use]
    pub fn shared() -> Option<&'static LocalModel> {
        static MODEL: OnceLock<Option<LocalModel>> = OnceLock::new();
        let model = MODEL.get_or_init(start).as_ref();
        if model.is_none() {
            assert!(
                std::env::var_os("SKILLBOX_REQUIRE_LOCAL_MODEL").is_none(),
                "SKILLBOX_REQUIRE_LOCAL_MODEL is set but the local model could not be provisioned: run scripts/setup-local-llm.sh to see why"
            );
            eprintln!(
                "skipped: no local model (scripts/setup-local-llm.sh failed or SKILLBOX_SKIP_LOCAL_MODEL is set)"
            );
        }
        model
    }

    /// Hold the model for one test.
    pub fn lock(&self) -> MutexGuard<'_, ()> {
        self.turn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn provisioned() -> Option<(PathBuf, PathBuf)> {
    if std::env::var_os("SKILLBOX_SKIP_LOCAL_MODEL").is_some() {
        return None;
    }
    let output = Command::new("bash")
        .arg(crate::repo_root().join("scripts/setup-local-llm.sh"))
        .arg("1.5b")
        .stderr(Stdio::inherit())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let value = |key: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(key))
            .map(PathBuf::from)
    };
    Some((value("LLAMA_SERVER=")?, value("MODEL=")?))
}

fn start() -> Option<LocalModel> {
    let (server, model) = provisioned()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    // The server dies with this test binary: the wrapper kills it when its stdin (a pipe held
    // by this process) closes.
    let script = r#"server="$1"; shift; "$server" "$@" >"$LOG" 2>&1 & pid=$!; cat >/dev/null; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null"#;
    let log = std::env::temp_dir().join(format!("skillbox-llama-{}.log", std::process::id()));
    let child = Command::new("bash")
        .args(["-c", script, "local-model"])
        .arg(&server)
        .arg("-m")
        .arg(&model)
        .args(["--jinja", "-c", CONTEXT_TOKENS, "-t", "2", "-np", "1"])
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .env("LOG", &log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("bash runs");
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        if health(port) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "llama-server did not answer /health within {STARTUP_TIMEOUT:?}; its log: {}",
            fs_err::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    Some(LocalModel {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        turn: Mutex::new(()),
        _server: Mutex::new(child),
    })
}

fn health(port: u16) -> bool {
    use std::io::Write;
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}
