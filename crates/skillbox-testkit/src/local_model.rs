//! A real model for end-to-end tests: `llama-server` with Qwen2.5-Coder-1.5B-Instruct, as
//! `scripts/setup-local-llm.sh` provisions them (once per machine, outside the checkout). One
//! server per test binary, started on first use on 127.0.0.1 and stopped when the binary
//! exits; tests take turns on it ([`LocalModel::lock`]), since it has one slot on two cores.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// How long the server may take to answer `/health` (a loaded machine pages the model in slowly).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(180);
/// How often a starting server's health is asked.
const HEALTH_POLL: Duration = Duration::from_millis(250);
/// Context tokens of the server's one slot.
const CONTEXT_TOKENS: &str = "8192";

/// The running local model.
#[derive(Debug)]
pub struct LocalModel {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    turn: Mutex<()>,
    _server: Mutex<Child>,
    proxy: OnceLock<Option<Proxy>>,
}

/// A LiteLLM proxy serving the Responses API (`/v1/responses`) and Anthropic Messages
/// (`/v1/messages`) in front of the local model, which speaks Chat Completions only
/// (`scripts/setup-llm-proxy.sh`, `scripts/llm-proxy-config.yaml`). The model is `local`.
#[derive(Debug)]
pub struct Proxy {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    /// The key clients send (`Authorization: Bearer` or `x-api-key`).
    pub key: String,
    _process: Mutex<Child>,
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
            missing("the local model", "scripts/setup-local-llm.sh");
        }
        model
    }

    /// The proxy in front of the model, installed and started on first use; `None` as for
    /// [`LocalModel::shared`].
    pub fn proxy(&self) -> Option<&Proxy> {
        let proxy = self
            .proxy
            .get_or_init(|| start_proxy(&self.base_url))
            .as_ref();
        if proxy.is_none() {
            missing("the LiteLLM proxy", "scripts/setup-llm-proxy.sh");
        }
        proxy
    }

    /// Hold the model for one test.
    pub fn lock(&self) -> MutexGuard<'_, ()> {
        self.turn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `what` could not be set up by `script`: fails the test when `SKILLBOX_REQUIRE_LOCAL_MODEL` is
/// set (CI), else says on stderr that the test is skipped.
fn missing(what: &str, script: &str) {
    assert!(
        std::env::var_os("SKILLBOX_REQUIRE_LOCAL_MODEL").is_none(),
        "SKILLBOX_REQUIRE_LOCAL_MODEL is set but {what} could not be set up: run {script} to see why"
    );
    eprintln!("skipped: {what} is missing ({script} failed or SKILLBOX_SKIP_LOCAL_MODEL is set)");
}

/// [`crate::set_up_keys`], unless `SKILLBOX_SKIP_LOCAL_MODEL` is set.
fn set_up(script: &str, argument: Option<&str>, keys: [&str; 2]) -> Option<[PathBuf; 2]> {
    if std::env::var_os("SKILLBOX_SKIP_LOCAL_MODEL").is_some() {
        return None;
    }
    crate::set_up_keys(script, argument, keys)
}

/// Start `program` with `arguments` (and `environment`) under a wrapper that kills it when
/// this test binary exits (its stdin, a pipe held here, closes), logging to `log`. Not
/// `PR_SET_PDEATHSIG`: that fires when the thread that started it ends, and the first test to
/// use the server starts it on its own thread.
fn start_guarded(
    program: &std::path::Path,
    arguments: &[&std::ffi::OsStr],
    environment: &[(&str, &str)],
    log: &std::path::Path,
) -> Child {
    let script = r#"program="$1"; shift; "$program" "$@" >"$LOG" 2>&1 & pid=$!; cat >/dev/null; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null"#;
    Command::new("bash")
        .args(["-c", script, "guarded"])
        .arg(program)
        .args(arguments)
        .envs(environment.iter().copied())
        .env("LOG", log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("bash runs")
}

/// [`serve_on_free_port`] for a server of the OpenAI API: its `/v1` base URL and its process.
fn serve(
    program: &std::path::Path,
    arguments: &[&std::ffi::OsStr],
    environment: &[(&str, &str)],
    what: &str,
    health_path: &str,
) -> (String, Child) {
    let (port, child) = serve_on_free_port(program, arguments, environment, what, health_path);
    (format!("http://127.0.0.1:{port}/v1"), child)
}

/// Start `program` (as [`start_guarded`]) with `--host 127.0.0.1 --port PORT` on a free port,
/// and wait until `GET health_path` answers 200, or fail with its log: the port and the process.
pub(crate) fn serve_on_free_port(
    program: &std::path::Path,
    arguments: &[&std::ffi::OsStr],
    environment: &[(&str, &str)],
    what: &str,
    health_path: &str,
) -> (u16, Child) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let port_text = port.to_string();
    let listen: [&std::ffi::OsStr; 4] = [
        "--host".as_ref(),
        "127.0.0.1".as_ref(),
        "--port".as_ref(),
        port_text.as_ref(),
    ];
    let log = std::env::temp_dir().join(format!(
        "skillbox-{}-{}.log",
        program.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let child = start_guarded(program, &[arguments, &listen].concat(), environment, &log);
    let started = crate::wait_until(STARTUP_TIMEOUT, HEALTH_POLL, || {
        crate::answers_ok(port, health_path)
    });
    assert!(
        started,
        "{what} did not answer {health_path} within {STARTUP_TIMEOUT:?}; its log: {}",
        fs_err::read_to_string(&log).unwrap_or_default()
    );
    (port, child)
}

fn start_proxy(model_base_url: &str) -> Option<Proxy> {
    let [litellm, config] = set_up(
        "scripts/setup-llm-proxy.sh",
        None,
        ["LITELLM", "LITELLM_CONFIG"],
    )?;
    let key = format!("sk-{}", std::process::id());
    let (base_url, child) = serve(
        &litellm,
        &["--config".as_ref(), config.as_os_str()],
        &[
            ("SKILLBOX_LLM_BASE_URL", model_base_url),
            ("LITELLM_MASTER_KEY", &key),
            ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
        ],
        "the LiteLLM proxy",
        "/health/liveliness",
    );
    Some(Proxy {
        base_url,
        key,
        _process: Mutex::new(child),
    })
}

fn start() -> Option<LocalModel> {
    let [server, model] = set_up(
        "scripts/setup-local-llm.sh",
        Some("1.5b"),
        ["LLAMA_SERVER", "MODEL"],
    )?;
    let (base_url, child) = serve(
        &server,
        &[
            "-m".as_ref(),
            model.as_os_str(),
            "--jinja".as_ref(),
            "-c".as_ref(),
            CONTEXT_TOKENS.as_ref(),
            "-t".as_ref(),
            "2".as_ref(),
            "-np".as_ref(),
            "1".as_ref(),
        ],
        &[],
        "llama-server",
        "/health",
    );
    Some(LocalModel {
        base_url,
        turn: Mutex::new(()),
        _server: Mutex::new(child),
        proxy: OnceLock::new(),
    })
}
