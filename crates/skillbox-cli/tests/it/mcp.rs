//! `skillbox mcp` (stdio) and `/mcp` of `skillbox serve` (streamable HTTP) through the official
//! Python MCP SDK as the client (`tests/peers/mcp_client.py`), and bad input written straight to
//! the server's stdin.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use skillbox_testkit::repo_root;

use super::support::{make_world_readable, peer_python};

/// A PNG's first bytes: not UTF-8, so it is served as a blob.
const LOGO: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0xff, 0xfe,
];

/// The editable root the client works on: `alpha` (named arguments, a reference, a binary
/// asset, a script that prints to stdout, metadata whose text must pass through verbatim),
/// `hidden` (only a person may invoke it) and `quiet` (no person may).
pub fn write_mcp_root(root: &Path) {
    let write = |path: &str, bytes: &[u8]| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    write(
        "alpha/SKILL.md",
        b"---\nname: alpha\ndescription: Explains a topic.\narguments: [topic, depth]\nmetadata:\n  owner: tests\n  revision: 1.10\n---\n# Alpha\n\nTopic: $topic\nDepth: $depth\n",
    );
    write("alpha/references/guide.md", b"# Guide\n");
    write("alpha/assets/logo.png", LOGO);
    // UTF-8, but JSON would spell each of its bytes in six: served as base64.
    write("alpha/assets/control.txt", &[0, 1, 2, 3, b'o', b'k']);
    // Over the 1 MiB a read may return without taking from the answer budget.
    write("alpha/assets/big.bin", &vec![0xfe; 2 * 1024 * 1024 + 3]);
    write(
        "alpha/scripts/noisy.py",
        b"print('printed to stdout')\nimport sys\nprint('and to stderr', file=sys.stderr)\n",
    );
    write(
        "alpha/scripts/slow.py",
        b"import time\ntime.sleep(2)\nprint('slept')\n",
    );
    write(
        "slow-prompt/SKILL.md",
        b"---\nname: slow-prompt\ndescription: Its body runs a slow command when commands run.\n---\nResult: !`python3 -c \"import time; time.sleep(2); print('slept')\"`\n",
    );
    write(
        "hidden/SKILL.md",
        b"---\nname: hidden\ndescription: Only a person starts this.\ndisable-model-invocation: true\n---\nHidden body.\n",
    );
    write(
        "quiet/SKILL.md",
        b"---\nname: quiet\ndescription: Only the model starts this.\nuser-invocable: false\n---\nQuiet body.\n",
    );
    make_world_readable(root);
}

fn run_client(arguments: &[&str]) -> Value {
    let output = Command::new(peer_python())
        .arg(repo_root().join("tests/peers/mcp_client.py"))
        .args(arguments)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["failures"], json!([]), "{report:#}");
    assert!(report["checks"].as_array().unwrap().len() >= 40, "{report}");
    report
}

#[test]
fn the_python_sdk_uses_every_feature_over_stdio() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("skills");
    write_mcp_root(&root);
    let examples = repo_root().join("examples/skills");
    run_client(&[
        "stdio",
        root.to_str().unwrap(),
        "--",
        env!("CARGO_BIN_EXE_skillbox"),
        "mcp",
        examples.to_str().unwrap(),
        root.to_str().unwrap(),
    ]);
}

/// The tools whose answers are objects of a fixed shape list an output schema, and the official
/// SDK, which validates every successful call's structured content against it, accepts what
/// they answer (`tests/peers/mcp_output_schemas.py`); failures match it too.
#[test]
fn the_python_sdk_validates_structured_content_against_the_output_schemas() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("skills");
    write_mcp_root(&root);
    let examples = repo_root().join("examples/skills");
    let output = Command::new(peer_python())
        .arg(repo_root().join("tests/peers/mcp_output_schemas.py"))
        .args([
            env!("CARGO_BIN_EXE_skillbox"),
            examples.to_str().unwrap(),
            root.to_str().unwrap(),
            temp.path().join("data").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["failures"], json!([]), "{report:#}");
    assert!(report["checks"].as_array().unwrap().len() >= 25, "{report}");
}

/// Send raw lines to `skillbox mcp` and read its answers: stdout carries protocol messages only.
fn exchange(lines: &[&str]) -> Vec<Value> {
    exchange_with(&[], lines)
}

/// [`exchange`] with more arguments for `skillbox mcp`.
fn exchange_with(extra: &[&str], lines: &[&str]) -> Vec<Value> {
    let temp = tempfile::tempdir().unwrap();
    write_mcp_root(temp.path());
    exchange_in(temp.path(), extra, lines)
}

/// [`exchange_with`] serving the skills under `root`.
pub fn exchange_in(root: &Path, extra: &[&str], lines: &[&str]) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillbox"))
        .args(["mcp", "--no-watch", root.to_str().unwrap()])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let mut answers = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        answers.push(
            serde_json::from_str::<Value>(&line)
                .unwrap_or_else(|_| panic!("stdout holds a line that is not JSON: {line}")),
        );
    }
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "`skillbox mcp` exit status {status} when stdin closed"
    );
    // Requests are answered concurrently, so answers may arrive out of order: put them in the
    // order of their ids (which the tests give in the order they send), notifications last.
    answers.sort_by_key(|answer| answer["id"].as_u64().unwrap_or(u64::MAX));
    answers
}

pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

#[test]
fn bad_input_gets_clear_errors_and_the_session_goes_on() {
    let answers = exchange(&[
        INITIALIZE,
        INITIALIZED,
        r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"skill://alpha/../../etc/passwd"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":7}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"alpha","arguments":{"nope":"x"}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"resources/subscribe","params":{"uri":"skill://hidden/SKILL.md"}}"#,
        r#"{"jsonrpc":"2.0","id":10,"method":"resources/subscribe","params":{"uri":"skill://alpha/SKILL.md"}}"#,
    ]);
    let by_id = |id: i64| {
        answers
            .iter()
            .find(|answer| answer["id"] == json!(id))
            .unwrap_or_else(|| panic!("no answer to request {id}: {answers:#?}"))
    };
    assert_eq!(by_id(2)["error"]["code"], -32601, "{answers:#?}");
    let unknown_tool = &by_id(3)["error"];
    assert_eq!(unknown_tool["code"], -32602);
    assert!(
        unknown_tool["message"]
            .as_str()
            .unwrap()
            .contains("load_skill")
    );
    assert!(
        by_id(4)["error"]["message"]
            .as_str()
            .unwrap()
            .contains(".."),
        "{answers:#?}"
    );
    assert_eq!(by_id(5)["result"]["isError"], true, "{answers:#?}");
    assert_eq!(by_id(6)["error"]["code"], -32602);
    assert!(by_id(7)["result"]["tools"].as_array().unwrap().len() >= 3);
    // Subscriptions are kept per session: only files this server serves.
    assert_eq!(by_id(8)["error"]["code"], -32602, "{answers:#?}");
    assert!(by_id(10)["result"].is_object(), "{answers:#?}");
}

#[test]
fn a_subscription_names_a_uri_of_at_most_4_kib() {
    // A listed file whose URI spelled with every byte percent-encoded is over 4 KiB: each
    // spelling of it would be kept apart, so only the short ones are taken.
    let temp = tempfile::tempdir().unwrap();
    write_mcp_root(temp.path());
    let folders: Vec<String> = (0..7).map(|_| "d".repeat(200)).collect();
    let path = format!("{}/f.md", folders.join("/"));
    let file = temp.path().join("alpha").join(&path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "# Deep\n").unwrap();
    make_world_readable(temp.path());
    let encoded: String = path
        .split('/')
        .map(|part| part.bytes().map(|byte| format!("%{byte:02X}")).collect())
        .collect::<Vec<String>>()
        .join("/");
    let long = format!("skill://alpha/{encoded}");
    assert!(long.len() > 4096, "{}", long.len());
    let subscribe = |id: i64, uri: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe", "params": {"uri": uri}})
            .to_string()
    };
    let answers = exchange_in(
        temp.path(),
        &[],
        &[
            INITIALIZE,
            INITIALIZED,
            &subscribe(2, &format!("skill://alpha/{path}")),
            &subscribe(3, &long),
        ],
    );
    let by_id = |id: i64| {
        answers
            .iter()
            .find(|answer| answer["id"] == json!(id))
            .unwrap_or_else(|| panic!("no answer to request {id}: {answers:#?}"))
    };
    assert!(by_id(2)["result"].is_object(), "{answers:#?}");
    let refused = &by_id(3)["error"];
    assert_eq!(refused["code"], -32602, "{answers:#?}");
    assert!(
        refused["message"].as_str().unwrap().contains("4096 bytes"),
        "{answers:#?}"
    );
}

#[test]
fn a_line_that_is_not_json_is_refused_without_ending_the_session() {
    let answers = exchange(&[
        INITIALIZE,
        INITIALIZED,
        "this is not json",
        r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#,
    ]);
    assert!(
        answers.iter().any(|answer| answer["id"] == json!(9)),
        "{answers:#?}"
    );
}

#[test]
fn the_python_sdk_uses_every_feature_over_streamable_http() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("skills");
    write_mcp_root(&root);
    let data = tempfile::tempdir().unwrap();
    let (mut server, url) = super::serve::start_server_with(
        data.path(),
        &[repo_root().join("examples/skills"), root.clone()],
        &[],
    );
    let mcp_url = url.replace("/rpc", "/mcp");
    let report =
        std::panic::catch_unwind(|| run_client(&["http", root.to_str().unwrap(), &mcp_url]));
    server.kill().unwrap();
    server.wait().unwrap();
    report.unwrap();
}

#[test]
fn mcp_over_http_refuses_foreign_origins_and_hosts_and_needs_the_token() {
    let data = tempfile::tempdir().unwrap();
    let (mut server, url) = super::serve::start_server_with(
        data.path(),
        &[repo_root().join("examples/skills")],
        &["--token", "sesame"],
    );
    let mcp_url = url.replace("/rpc", "/mcp");
    let initialize: Value = serde_json::from_str(INITIALIZE).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let status = |headers: &[(&str, &str)]| {
        runtime.block_on(async {
            let mut request = skillbox_testkit::http_client()
                .post(&mcp_url)
                .header("Accept", "application/json, text/event-stream")
                .json(&initialize);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            request.send().await.unwrap().status().as_u16()
        })
    };
    let with_token = ("Authorization", "Bearer sesame");
    let foreign_origin = status(&[with_token, ("Origin", "http://evil.example")]);
    let no_token = status(&[]);
    let wrong_token = status(&[("Authorization", "Bearer nope")]);
    let accepted = status(&[with_token]);
    // MCP requests are small: a large body is refused before it is parsed.
    let large_body = runtime.block_on(async {
        skillbox_testkit::http_client()
            .post(&mcp_url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer sesame")
            .body(format!("[{}0]", "0,".repeat(1024 * 1024)))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    });
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(foreign_origin, 403);
    assert_eq!(no_token, 401);
    assert_eq!(wrong_token, 401);
    assert_eq!(accepted, 200);
    assert_eq!(large_body, 413);
}

#[test]
fn mcp_over_http_without_a_token_answers_loopback_names_only() {
    let data = tempfile::tempdir().unwrap();
    let (mut server, url) =
        super::serve::start_server_with(data.path(), &[repo_root().join("examples/skills")], &[]);
    let mcp_url = url.replace("/rpc", "/mcp");
    let initialize: Value = serde_json::from_str(INITIALIZE).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let status = |host: &str| {
        runtime.block_on(async {
            skillbox_testkit::http_client()
                .post(&mcp_url)
                .header("Accept", "application/json, text/event-stream")
                .header("Host", host)
                .json(&initialize)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        })
    };
    let rebound = status("attacker.example:80");
    let loopback = status("localhost");
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(rebound, 403);
    assert_eq!(loopback, 200);
}

#[test]
fn the_protocol_profile_runs_code_and_keeps_blobs() {
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().join("data");
    let answers = exchange_with(
        &[
            "--profile",
            "protocol",
            "--data-dir",
            data_dir.to_str().unwrap(),
        ],
        &[
            INITIALIZE,
            INITIALIZED,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_blob","arguments":{"content":"hello blob","kind":"text/plain"}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"def main(args):\n    return 6 * 7"}}}"#,
        ],
    );
    let by_id = |id: i64| {
        answers
            .iter()
            .find(|answer| answer["id"] == json!(id))
            .unwrap_or_else(|| panic!("no answer to request {id}: {answers:#?}"))
    };
    let names: Vec<&str> = by_id(2)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 8, "{names:?}");
    assert!(names.contains(&"execute_skill") && names.contains(&"run_code"));
    let blob = &by_id(3)["result"];
    assert_eq!(blob["isError"], false, "{blob:#}");
    assert!(
        blob["structuredContent"]["blob_id"]
            .as_str()
            .unwrap()
            .starts_with("blob:")
    );
    let run = &by_id(4)["result"];
    assert_eq!(run["isError"], false, "{run:#}");
    assert_eq!(run["structuredContent"]["status"], "completed", "{run:#}");
    assert!(
        run["content"][0]["text"].as_str().unwrap().contains("42"),
        "{run:#}"
    );
}

/// Three slow calls at once (`tools` or `prompts`, see `tests/peers/mcp_busy.py`) against a
/// server that runs one at a time and queues none: (calls that ran, calls refused as busy).
fn busy_calls(kind: &str, extra: &[&str]) -> (usize, usize) {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("skills");
    write_mcp_root(&root);
    let data = tempfile::tempdir().unwrap();
    let mut arguments = vec!["--max-runs", "1", "--max-queued-runs", "0"];
    arguments.extend_from_slice(extra);
    let (mut server, url) = super::serve::start_server_with(data.path(), &[root], &arguments);
    let output = Command::new(peer_python())
        .arg(repo_root().join("tests/peers/mcp_busy.py"))
        .arg(url.replace("/rpc", "/mcp"))
        .arg(kind)
        .output()
        .unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let results = report["results"].as_array().unwrap();
    let count = |is_error: bool, text: &str| {
        results
            .iter()
            .filter(|result| {
                result["is_error"] == is_error && result["text"].as_str().unwrap().contains(text)
            })
            .count()
    };
    (count(false, "slept"), count(true, "busy"))
}

#[test]
fn mcp_tool_calls_that_run_code_queue_with_the_run_limits() {
    assert_eq!(busy_calls("tools", &[]), (1, 2));
}

#[test]
fn mcp_prompts_whose_commands_run_queue_with_the_run_limits() {
    assert_eq!(busy_calls("prompts", &["--preprocess-commands"]), (1, 2));
}

/// One stateless 2026-07-28 request to `/mcp` (no session), its answer's `result`.
fn stateless_request(mcp_url: &str, method: &str, name: &str, params: Value) -> Value {
    let answer = stateless_answer(mcp_url, method, name, params);
    assert!(answer["error"].is_null(), "{answer:#}");
    answer["result"].clone()
}

/// The JSON-RPC body of a stateless 2026-07-28 request: the protocol version, client info and
/// capabilities travel in the params' `_meta`.
pub(super) fn stateless_body(method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

/// One stateless 2026-07-28 request to `/mcp` (no session), its whole JSON-RPC answer.
fn stateless_answer(mcp_url: &str, method: &str, name: &str, params: Value) -> Value {
    let body = stateless_body(method, params);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let text = runtime.block_on(async {
        skillbox_testkit::http_client()
            .post(mcp_url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", method)
            .header("Mcp-Name", name)
            .json(&body)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    });
    answer_in(&text)
}

/// The JSON-RPC answer in an MCP HTTP response's body: the body itself, or the last `data:`
/// line of its event stream.
pub(super) fn answer_in(text: &str) -> Value {
    let answer = if text.trim_start().starts_with('{') {
        text.to_owned()
    } else {
        text.lines()
            .rev()
            .find_map(|line| line.strip_prefix("data:"))
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    serde_json::from_str(&answer)
        .unwrap_or_else(|error| panic!("not a JSON-RPC answer ({error}): {text:.300}"))
}

/// A 2025-06-18 session of `/mcp` over raw HTTP: its id once `initialize`d.
struct HttpSession {
    url: String,
    id: String,
    client: reqwest::Client,
    runtime: &'static tokio::runtime::Runtime,
}

impl HttpSession {
    fn open(url: &str) -> Self {
        let client = skillbox_testkit::http_client();
        let runtime = skillbox_testkit::runtime();
        let id = runtime.block_on(async {
            let response = client
                .post(url)
                .header("Accept", "application/json, text/event-stream")
                .header("Content-Type", "application/json")
                .body(INITIALIZE)
                .send()
                .await
                .unwrap();
            let id = response.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_owned();
            let _ = response.text().await;
            id
        });
        let session = HttpSession {
            url: url.to_owned(),
            id,
            client,
            runtime,
        };
        let (status, _) = session.post(INITIALIZED);
        assert_eq!(status, 202);
        session
    }

    /// POST one message in the session: the status and the body.
    fn post(&self, message: &str) -> (u16, String) {
        self.send(reqwest::Method::POST, message)
    }

    fn send(&self, method: reqwest::Method, message: &str) -> (u16, String) {
        self.runtime.block_on(async {
            let response = self
                .client
                .request(method, &self.url)
                .header("Accept", "application/json, text/event-stream")
                .header("Content-Type", "application/json")
                .header("Mcp-Session-Id", &self.id)
                .header("MCP-Protocol-Version", "2025-06-18")
                .body(message.to_owned())
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            (status, response.text().await.unwrap())
        })
    }
}

/// `skills/get` without its `uri`: what each answer must say.
const SKILLS_GET_WITHOUT_URI: [&str; 3] = [
    r#"{"jsonrpc":"2.0","id":2,"method":"skills/get"}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"skills/get","params":{"url":"skill://alpha/SKILL.md"}}"#,
];

fn assert_names_the_missing_uri(answer: &Value) {
    assert_eq!(answer["error"]["code"], -32602, "{answer:#}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("skills/get") && message.contains("`uri`"),
        "{answer:#}"
    );
}

#[test]
fn skills_get_without_a_uri_is_invalid_params_naming_it_over_stdio_and_http() {
    let mut lines = vec![INITIALIZE, INITIALIZED];
    lines.extend(SKILLS_GET_WITHOUT_URI);
    lines.push(r#"{"jsonrpc":"2.0","id":5,"method":"no/such/method","params":{}}"#);
    let answers = exchange(&lines);
    let by_id = |id: i64| {
        answers
            .iter()
            .find(|answer| answer["id"] == json!(id))
            .unwrap_or_else(|| panic!("no answer to request {id}: {answers:#?}"))
    };
    for id in 2..=4 {
        assert_names_the_missing_uri(by_id(id));
    }
    // A method nobody knows is still "method not found".
    assert_eq!(by_id(5)["error"]["code"], -32601, "{answers:#?}");

    let temp = tempfile::tempdir().unwrap();
    write_mcp_root(temp.path());
    let data = tempfile::tempdir().unwrap();
    let (mut server, url) =
        super::serve::start_server_with(data.path(), &[temp.path().to_path_buf()], &[]);
    let mcp_url = url.replace("/rpc", "/mcp");
    let answers = std::panic::catch_unwind(|| {
        let session = HttpSession::open(&mcp_url);
        let mut answers: Vec<Value> = SKILLS_GET_WITHOUT_URI
            .iter()
            .map(|message| answer_in(&session.post(message).1))
            .collect();
        // The same without a session, in 2026-07-28's stateless way.
        answers.push(stateless_answer(
            &mcp_url,
            "skills/get",
            "",
            json!({"url": "skill://alpha/SKILL.md"}),
        ));
        answers
    });
    server.kill().unwrap();
    server.wait().unwrap();
    for answer in answers.unwrap() {
        assert_names_the_missing_uri(&answer);
    }
}

#[test]
fn cacheable_results_of_2026_07_28_carry_a_ttl_and_older_revisions_none() {
    let temp = tempfile::tempdir().unwrap();
    write_mcp_root(temp.path());
    let data = tempfile::tempdir().unwrap();
    let (mut server, url) =
        super::serve::start_server_with(data.path(), &[temp.path().to_path_buf()], &[]);
    let mcp_url = url.replace("/rpc", "/mcp");
    let outcome = std::panic::catch_unwind(|| {
        let mut hinted = Vec::new();
        for (method, name, params) in [
            ("server/discover", "", json!({})),
            ("tools/list", "", json!({})),
            ("prompts/list", "", json!({})),
            ("resources/list", "", json!({})),
            ("resources/templates/list", "", json!({})),
            ("skills/list", "", json!({})),
            ("skills/get", "", json!({"uri": "skill://alpha/SKILL.md"})),
            (
                "resources/read",
                "skill://alpha/SKILL.md",
                json!({"uri": "skill://alpha/SKILL.md"}),
            ),
            (
                "resources/directory/read",
                "",
                json!({"uri": "skill://alpha/references"}),
            ),
        ] {
            let result = stateless_request(&mcp_url, method, name, params);
            hinted.push((
                method,
                result["ttlMs"].clone(),
                result["cacheScope"].clone(),
            ));
        }
        let session = HttpSession::open(&mcp_url);
        let legacy = answer_in(
            &session
                .post(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#)
                .1,
        );
        (hinted, legacy)
    });
    server.kill().unwrap();
    server.wait().unwrap();
    let (hinted, legacy) = outcome.unwrap();
    for (method, ttl, scope) in hinted {
        assert_eq!((ttl, scope), (json!(60_000), json!("private")), "{method}");
    }
    assert!(legacy["result"]["tools"].is_array(), "{legacy:#}");
    assert!(legacy["result"].get("ttlMs").is_none(), "{legacy:#}");
}

/// Opens a session with the official Python SDK, lists the tools and leaves, which ends the
/// session with a `DELETE`; the SDK logs (at WARNING) an answer other than 200 or 204.
const SDK_SESSION_END: &str = r#"
import asyncio, json, logging, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
async def main():
    async with streamable_http_client(sys.argv[1]) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            tools = await session.list_tools()
    print(json.dumps({"tools": len(tools.tools)}))
asyncio.run(main())
"#;

#[test]
fn ending_an_http_session_answers_204_and_the_python_sdk_takes_it() {
    let temp = tempfile::tempdir().unwrap();
    write_mcp_root(temp.path());
    let data = tempfile::tempdir().unwrap();
    let (mut server, url) =
        super::serve::start_server_with(data.path(), &[temp.path().to_path_buf()], &[]);
    let mcp_url = url.replace("/rpc", "/mcp");
    let outcome = std::panic::catch_unwind(|| {
        let session = HttpSession::open(&mcp_url);
        let ended = session.send(reqwest::Method::DELETE, "");
        let after = session.post(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#);
        let sdk = Command::new(peer_python())
            .args(["-c", SDK_SESSION_END, &mcp_url])
            .output()
            .unwrap();
        (ended, after.0, sdk)
    });
    server.kill().unwrap();
    server.wait().unwrap();
    let (ended, status_after, sdk) = outcome.unwrap();
    assert_eq!(ended, (204, String::new()));
    // The session is gone.
    assert_eq!(status_after, 404);
    let stderr = String::from_utf8_lossy(&sdk.stderr);
    assert!(sdk.status.success(), "{stderr}");
    let report: Value = serde_json::from_slice(&sdk.stdout).unwrap();
    assert!(report["tools"].as_u64().unwrap() >= 3, "{report}");
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
}

#[test]
fn a_resource_over_the_free_read_allowance_is_served_over_http() {
    use base64::Engine;
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("skills");
    write_mcp_root(&root);
    let data = tempfile::tempdir().unwrap();
    let (mut server, url) =
        super::serve::start_server_with(data.path(), std::slice::from_ref(&root), &[]);
    let uri = "skill://alpha/assets/big.bin";
    let result = std::panic::catch_unwind(|| {
        stateless_request(
            &url.replace("/rpc", "/mcp"),
            "resources/read",
            uri,
            json!({"uri": uri}),
        )
    });
    server.kill().unwrap();
    server.wait().unwrap();
    let result = result.unwrap();
    let blob = result["contents"][0]["blob"].as_str().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .unwrap();
    assert_eq!(
        bytes,
        fs_err::read(root.join("alpha/assets/big.bin")).unwrap()
    );
}

/// Two published skills of one name under one root: MCP offers the copy in effect by its name
/// and the other by its path in the root, both in `skills/list`, and reads each by its URI.
#[test]
fn a_shadowed_copy_of_a_name_is_listed_and_read_by_its_path() {
    let temp = tempfile::tempdir().unwrap();
    super::support::write_tree(
        temp.path(),
        &[
            (
                "anthropic/skill-creator/SKILL.md",
                "---\nname: skill-creator\ndescription: Anthropic's. Use to create skills.\n---\nAnthropic body.\n",
            ),
            (
                "openai/skill-creator/SKILL.md",
                "---\nname: skill-creator\ndescription: OpenAI's. Use to create skills.\n---\nOpenAI body.\n",
            ),
        ],
    );
    super::support::make_world_readable(temp.path());
    let data = tempfile::tempdir().unwrap();
    let (mut server, url) =
        super::serve::start_server_with(data.path(), &[temp.path().to_path_buf()], &[]);
    let mcp_url = url.replace("/rpc", "/mcp");
    let outcome = std::panic::catch_unwind(|| {
        let listed = stateless_request(&mcp_url, "skills/list", "", json!({}));
        let read =
            |uri: &str| stateless_request(&mcp_url, "resources/read", uri, json!({"uri": uri}));
        let got = stateless_request(
            &mcp_url,
            "skills/get",
            "",
            json!({"uri": "skill://openai/skill-creator/SKILL.md"}),
        );
        (
            listed,
            read("skill://skill-creator/SKILL.md"),
            read("skill://openai/skill-creator/SKILL.md"),
            got,
        )
    });
    server.kill().unwrap();
    server.wait().unwrap();
    let (listed, in_effect, other, got) = outcome.unwrap();
    let uris: Vec<&str> = listed["skills"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed:#}"))
        .iter()
        .map(|entry| entry["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://openai/skill-creator/SKILL.md",
            "skill://skill-creator/SKILL.md"
        ],
        "{listed:#}"
    );
    assert!(
        in_effect.to_string().contains("Anthropic body."),
        "{in_effect:#}"
    );
    assert!(other.to_string().contains("OpenAI body."), "{other:#}");
    assert!(got.to_string().contains("OpenAI's."), "{got:#}");
}
