//! Shared test helpers: the real binary, temporary skill trees, and the Python peer venv.

use std::path::Path;

pub use skillbox_testkit::{SkillCorpus, peer_python, repo_root, write_tree};

/// A command running the real `skillbox` binary from the repository root, with the
/// environment cleared of anything that would change which roots it reads.
pub fn skillbox() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::cargo_bin("skillbox").unwrap();
    command
        .current_dir(repo_root())
        .env_remove("SKILLBOX_ROOTS")
        .env_remove("SKILLBOX_LOG")
        .env("COLUMNS", "100");
    command
}

/// A minimal valid SKILL.md for `name`.
pub fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nInstructions.\n")
}

/// Parse stdout as JSON.
pub fn json_stdout(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}):\n{}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// Open a tree to every user (folders 0755, files 0644): the sandbox user reads skills when the
/// tests run as root.
pub fn make_world_readable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let metadata = std::fs::metadata(path).unwrap();
    let mode = if metadata.is_dir() { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    if metadata.is_dir() {
        for entry in fs_err::read_dir(path).unwrap() {
            make_world_readable(&entry.unwrap().path());
        }
    }
}

/// A private (0700) runtime folder `runtime` under `folder`, for `SKILLBOX_RUNTIME_DIR`.
pub fn private_runtime_folder(folder: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let runtime = folder.join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    runtime
}

/// The peak and current resident memory of a process, in KiB, from /proc (0 when unknown).
pub fn memory_kib(pid: u32) -> (u64, u64) {
    let status = fs_err::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// The variables that pick a model or hold a key: tests that talk to a model remove them, so
/// only their flags choose it.
pub const MODEL_VARIABLES: &[&str] = &[
    "OPENROUTER_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "SKILLBOX_API_KEY",
    "SKILLBOX_PROVIDER",
    "SKILLBOX_MODEL",
    "SKILLBOX_BASE_URL",
];

/// `skillbox` over the skills at `root`, for `ask` and `chat`: no config file, and none of the
/// variables that pick a model or hold a key, so only the test's flags choose the model.
pub fn agent_command(root: &Path) -> assert_cmd::Command {
    let mut command = skillbox();
    command.env("SKILLBOX_CONFIG", "/dev/null");
    for variable in MODEL_VARIABLES {
        command.env_remove(variable);
    }
    command.arg("--root").arg(root);
    command
}

/// What `skillbox ask --json` did: its output, and the events it printed, one JSON per line.
pub struct AgentEvents {
    pub output: std::process::Output,
    pub events: Vec<serde_json::Value>,
}

impl AgentEvents {
    /// Parse the events of `output`; a line that is not JSON fails the test.
    pub fn of(output: std::process::Output) -> Self {
        let events = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
            .collect();
        AgentEvents { output, events }
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// The events of type `kind`.
    pub fn of_type(&self, kind: &str) -> Vec<&serde_json::Value> {
        self.events
            .iter()
            .filter(|event| event["type"] == kind)
            .collect()
    }

    /// The names of the tools called, in order.
    pub fn tools_called(&self) -> Vec<String> {
        self.of_type("tool_call_started")
            .iter()
            .map(|event| event["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Each tool call's result and whether it was an error, in order.
    pub fn results(&self) -> Vec<(String, bool)> {
        self.of_type("tool_call_finished")
            .iter()
            .map(|event| {
                (
                    event["result"].as_str().unwrap().to_owned(),
                    event["is_error"].as_bool().unwrap(),
                )
            })
            .collect()
    }

    /// The finished calls of the tool `name`.
    pub fn finished(&self, name: &str) -> Vec<&serde_json::Value> {
        self.of_type("tool_call_finished")
            .into_iter()
            .filter(|event| event["name"] == name)
            .collect()
    }

    /// How the turn ended (`answered`, `max_rounds`, ...); the last event must be `final`.
    pub fn end(&self) -> String {
        let last = self
            .events
            .last()
            .unwrap_or_else(|| panic!("no events; stderr: {}", self.stderr()));
        assert_eq!(last["type"], "final", "{last}");
        last["end"].as_str().unwrap().to_owned()
    }
}

/// Fails the test unless the command exited with `code`, showing its stderr.
#[track_caller]
pub fn assert_exit(output: &std::process::Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Write `count` look-alike skills `report-N` under `root` (weekly status reports): enough of
/// them that a small prompt budget leaves some out.
pub fn write_reports(root: &Path, count: usize) {
    let files: Vec<(String, String)> = (0..count)
        .map(|n| {
            (
                format!("report-{n}/SKILL.md"),
                format!(
                    "---\nname: report-{n}\ndescription: Write weekly status report number {n} for the team.\n---\nBody.\n"
                ),
            )
        })
        .collect();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    write_tree(root, &borrowed);
}

/// An HTTP answer as the wire carried it.
#[derive(Debug)]
pub struct HttpAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpAnswer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
            .collect()
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The page's CSRF token (`data-csrf` on its body).
    pub fn csrf(&self) -> String {
        let text = self.text();
        let start = text
            .find("data-csrf=\"")
            .expect("the page carries a CSRF token")
            + 11;
        text[start..][..text[start..].find('"').unwrap()].to_owned()
    }
}

/// The answer in `bytes` as a server sent it (a chunked body joined), or `None` when they hold
/// no HTTP answer.
pub fn parse_http_answer(bytes: &[u8]) -> Option<HttpAnswer> {
    let split = bytes.windows(4).position(|window| window == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&bytes[..split]);
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    let mut body = bytes[split + 4..].to_vec();
    let chunked = headers.iter().any(|(name, value)| {
        name.eq_ignore_ascii_case("transfer-encoding") && value.contains("chunked")
    });
    if chunked {
        body = dechunk(&body);
    }
    Some(HttpAnswer {
        status,
        headers,
        body,
    })
}

fn dechunk(mut bytes: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    while let Some(end) = bytes.windows(2).position(|window| window == b"\r\n") {
        let size_text = String::from_utf8_lossy(&bytes[..end]);
        let Ok(size) = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16)
        else {
            break;
        };
        if size == 0 {
            break;
        }
        let start = end + 2;
        let stop = (start + size).min(bytes.len());
        body.extend_from_slice(&bytes[start..stop]);
        bytes = &bytes[(stop + 2).min(bytes.len())..];
    }
    body
}

/// A child process (a server the test started) killed and reaped when the test is done with it.
#[derive(Debug)]
pub struct KilledOnDrop(pub std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The head of a raw HTTP/1.1 request `method target` to the server at `address` with
/// `headers` (a `Host` of `address` unless one is given), a `Content-Length` of `body` bytes
/// when there is a body or the method is POST, and `Connection: close`.
pub fn request_head(
    address: &str,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: usize,
) -> String {
    let mut head = format!("{method} {target} HTTP/1.1\r\n");
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        head.push_str(&format!("Host: {address}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if body > 0 || method == "POST" {
        head.push_str(&format!("Content-Length: {body}\r\n"));
    }
    head.push_str("Connection: close\r\n\r\n");
    head
}
