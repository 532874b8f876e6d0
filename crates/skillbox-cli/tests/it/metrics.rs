//! `GET /metrics` of a real `skillbox serve`: real calls move the scraped numbers, the text is
//! read by the Prometheus project's own OpenMetrics parser (`prometheus_client` in the test
//! venv), the token guards it, and junk method names cannot grow it.

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::serve::start_server_with;
use super::support::{make_world_readable, peer_python, write_tree};

const TOKEN: &str = "metrics-test-token";

/// Parses OpenMetrics text from stdin strictly and prints its families' types and its samples
/// as JSON.
const PARSER: &str = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
families, samples = {}, []
for family in text_string_to_metric_families(sys.stdin.read()):
    families[family.name] = family.type
    for sample in family.samples:
        samples.append({"name": sample.name, "labels": sample.labels, "value": sample.value})
print(json.dumps({"families": families, "samples": samples}))
"#;

/// A running server (killed when dropped), its base URL and its skills folder.
struct Server {
    child: Child,
    base: String,
    skills: tempfile::TempDir,
    _data: tempfile::TempDir,
    client: reqwest::Client,
}

/// Send a request and wait for its answer: status, `Content-Type` and body read to the end.
fn send(request: reqwest::RequestBuilder) -> (u16, String, String) {
    skillbox_testkit::runtime().block_on(async {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let kind = response
            .headers()
            .get("content-type")
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default();
        (status, kind, response.text().await.unwrap())
    })
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(extra: &[&str]) -> Self {
        let skills = tempfile::Builder::new()
            .prefix("skillbox-metrics")
            .tempdir()
            .unwrap();
        write_tree(
            skills.path(),
            &[
                (
                    "acme.metrics.echo/skill.toml",
                    "name = \"acme.metrics.echo\"\nversion = \"1.0.0\"\ndescription = \"Echoes, or fails when asked.\"\nkind = \"action\"\n\n[runtime]\nlanguage = \"python\"\nentrypoint = \"code/main.py\"\nexport = \"main\"\n",
                ),
                (
                    "acme.metrics.echo/SKILL.md",
                    "---\nname: acme.metrics.echo\ndescription: Echoes, or fails when asked.\n---\nEchoes.\n",
                ),
                (
                    "acme.metrics.echo/code/main.py",
                    "def main(args):\n    if args.get('fail'):\n        raise ValueError('asked to fail')\n    return {'echo': args.get('text')}\n",
                ),
                (
                    "first-notes/SKILL.md",
                    "---\nname: first-notes\ndescription: Notes.\n---\nNotes.\n",
                ),
            ],
        );
        make_world_readable(skills.path());
        let data = tempfile::tempdir().unwrap();
        let (child, url) = start_server_with(data.path(), &[skills.path().to_path_buf()], extra);
        Server {
            child,
            base: url.trim_end_matches("/rpc").to_owned(),
            skills,
            _data: data,
            client: skillbox_testkit::http_client_builder()
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
        }
    }

    fn post(&self, path: &str, body: &Value) -> reqwest::RequestBuilder {
        self.client
            .post(format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
            .json(body)
    }

    /// The whole JSON-RPC answer to one call.
    fn call(&self, method: &str, params: Value) -> Value {
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        serde_json::from_str(&send(self.post("/rpc", &request)).2).unwrap()
    }

    fn result(&self, method: &str, params: Value) -> Value {
        let answer = self.call(method, params);
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{method} failed: {answer}"))
    }

    fn scrape_request(&self, token: Option<&str>) -> reqwest::RequestBuilder {
        let request = self.client.get(format!("{}/metrics", self.base));
        match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// Scrape and parse.
    fn scrape(&self) -> Scrape {
        let (status, kind, text) = send(self.scrape_request(Some(TOKEN)));
        assert_eq!(status, 200, "{text}");
        assert_eq!(
            kind,
            "application/openmetrics-text; version=1.0.0; charset=utf-8"
        );
        Scrape::parse(&text)
    }
}

/// The samples of one scrape, as the reference parser read them.
struct Scrape {
    text: String,
    /// Each family's type, by name.
    families: Value,
    samples: Vec<Value>,
}

impl Scrape {
    fn parse(text: &str) -> Self {
        let mut parser = Command::new(peer_python())
            .args(["-c", PARSER])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut parser.stdin.take().unwrap(), text.as_bytes()).unwrap();
        let output = parser.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "the OpenMetrics parser refused the scrape: {}\n{text}",
            String::from_utf8_lossy(&output.stderr)
        );
        let mut parsed: Value = serde_json::from_slice(&output.stdout).unwrap();
        Scrape {
            text: text.to_owned(),
            families: parsed["families"].take(),
            samples: serde_json::from_value(parsed["samples"].take()).unwrap(),
        }
    }

    /// The sum of the samples called `name` whose labels include `labels`.
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.samples
            .iter()
            .filter(|sample| sample["name"] == name)
            .filter(|sample| {
                labels
                    .iter()
                    .all(|(key, value)| sample["labels"][*key] == *value)
            })
            .map(|sample| sample["value"].as_f64().unwrap())
            .sum()
    }

    /// The family's type, as the parser read it from `# TYPE`.
    fn family_type(&self, family: &str) -> &str {
        self.families[family]
            .as_str()
            .unwrap_or_else(|| panic!("no family `{family}` in:\n{}", self.text))
    }

    /// Every value the label `key` takes.
    fn label_values(&self, key: &str) -> BTreeSet<String> {
        self.samples
            .iter()
            .filter_map(|sample| sample["labels"][key].as_str().map(str::to_owned))
            .collect()
    }
}

/// How much a sample grew between two scrapes.
fn grew(before: &Scrape, after: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    after.value(name, labels) - before.value(name, labels)
}

/// The labels of `/rpc` calls of `method` that ended with `outcome`.
fn rpc_calls(method: &'static str, outcome: &'static str) -> [(&'static str, &'static str); 3] {
    [("door", "rpc"), ("method", method), ("outcome", outcome)]
}

#[test]
fn the_scrape_follows_real_calls_and_parses_as_openmetrics() {
    let server = Server::start(&["--token", TOKEN]);
    let before = server.scrape();
    // The two skills written and the built-in guide.
    assert_eq!(before.value("skillbox_catalog_skills", &[]), 3.0);
    assert_eq!(before.value("skillbox_runs_running", &[]), 0.0);

    for _ in 0..3 {
        server.result("list_skills", json!({}));
    }
    let unknown = server.call("no_such_method", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let failing = server.call("describe_skill", json!({"name": "no-such-skill"}));
    assert_eq!(failing["error"]["code"], -32602, "{failing}");
    let content = "metrics count these bytes";
    let blob = server.result(
        "create_blob",
        json!({"content": content, "kind": "text/plain"}),
    );
    let read = server.result("read_blob", json!({"blob_id": blob["blob_id"]}));
    assert_eq!(read["preview"], content);
    let completed = server.result(
        "execute_skill",
        json!({"name": "acme.metrics.echo", "args": {"text": "hi"}}),
    );
    assert_eq!(completed["status"], "completed", "{completed}");
    let failed = server.result(
        "execute_skill",
        json!({"name": "acme.metrics.echo", "args": {"fail": true}}),
    );
    assert_eq!(failed["status"], "failed", "{failed}");

    let after = server.scrape();
    for (family, kind) in [
        ("skillbox_http_requests", "counter"),
        ("skillbox_http_request_duration_seconds", "histogram"),
        ("skillbox_rpc_calls", "counter"),
        ("skillbox_rpc_call_duration_seconds", "histogram"),
        ("skillbox_run_duration_seconds", "histogram"),
        ("skillbox_blob_written_bytes", "counter"),
        ("skillbox_catalog_skills", "gauge"),
        ("skillbox_runs_running", "gauge"),
        ("skillbox_runs_queued", "gauge"),
        ("skillbox_skill_servers", "gauge"),
        ("skillbox_runs_rejected", "counter"),
        ("skillbox_catalog_reloads", "counter"),
    ] {
        assert_eq!(after.family_type(family), kind, "{family}");
    }
    let calls = "skillbox_rpc_calls_total";
    for (method, outcome, count) in [
        ("list_skills", "ok", 3.0),
        ("other", "method_not_found", 1.0),
        ("describe_skill", "invalid_params", 1.0),
        ("create_blob", "ok", 1.0),
        ("read_blob", "ok", 1.0),
        ("execute_skill", "ok", 2.0),
    ] {
        assert_eq!(
            grew(&before, &after, calls, &rpc_calls(method, outcome)),
            count,
            "{method} {outcome}:\n{}",
            after.text
        );
    }
    assert_eq!(
        grew(
            &before,
            &after,
            "skillbox_rpc_call_duration_seconds_count",
            &[("door", "rpc"), ("method", "list_skills")]
        ),
        3.0
    );
    // Every call was under the longest bucket; each was one POST answered with 200.
    assert_eq!(
        grew(
            &before,
            &after,
            "skillbox_rpc_call_duration_seconds_bucket",
            &[("door", "rpc"), ("method", "list_skills"), ("le", "300.0")]
        ),
        3.0
    );
    assert_eq!(
        grew(
            &before,
            &after,
            "skillbox_http_requests_total",
            &[("door", "rpc"), ("status", "200")]
        ),
        9.0
    );
    assert!(
        grew(&before, &after, "skillbox_blob_written_bytes_total", &[]) >= content.len() as f64
    );
    assert!(grew(&before, &after, "skillbox_blob_read_bytes_total", &[]) >= content.len() as f64);
    for outcome in ["completed", "failed"] {
        assert_eq!(
            grew(
                &before,
                &after,
                "skillbox_run_duration_seconds_count",
                &[("outcome", outcome)]
            ),
            1.0,
            "{outcome}"
        );
    }

    // A skill folder added under a watched root is picked up by a reload.
    write_tree(
        server.skills.path(),
        &[(
            "added-later/SKILL.md",
            "---\nname: added-later\ndescription: Added while serving.\n---\nLater.\n",
        )],
    );
    make_world_readable(server.skills.path());
    let deadline = Instant::now() + Duration::from_secs(20);
    let reloaded = loop {
        let scrape = server.scrape();
        if scrape.value("skillbox_catalog_skills", &[]) == 4.0 || Instant::now() > deadline {
            break scrape;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(reloaded.value("skillbox_catalog_skills", &[]), 4.0);
    assert!(
        grew(
            &after,
            &reloaded,
            "skillbox_catalog_reloads_total",
            &[("outcome", "succeeded")]
        ) >= 1.0
    );
    // Scrapes are requests too, counted under their own door.
    assert!(
        reloaded.value(
            "skillbox_http_requests_total",
            &[("door", "metrics"), ("status", "200")]
        ) >= 2.0
    );
}

#[test]
fn the_scrape_needs_the_token_and_passes_the_origin_check() {
    let server = Server::start(&["--token", TOKEN]);
    for token in [None, Some("wrong-token")] {
        let (status, _, body) = send(server.scrape_request(token));
        assert_eq!(status, 401, "{token:?}");
        assert!(!body.contains("skillbox_"), "{body}");
    }
    let (status, _, body) = send(
        server
            .scrape_request(Some(TOKEN))
            .header("Origin", "http://evil.example"),
    );
    assert_eq!(status, 403, "{body}");
    assert!(!body.contains("skillbox_"), "{body}");
    // The refusals were counted, and are seen by whoever has the token.
    let scrape = server.scrape();
    assert_eq!(
        scrape.value(
            "skillbox_http_requests_total",
            &[("door", "metrics"), ("status", "401")]
        ),
        2.0
    );
    assert_eq!(
        scrape.value(
            "skillbox_http_requests_total",
            &[("door", "metrics"), ("status", "403")]
        ),
        1.0
    );
    // The wrong token (not the missing one: nothing was guessed) is counted as a failed
    // authentication, by door and outcome, and so is one at each other door.
    assert_eq!(
        scrape.family_type("skillbox_failed_authentications"),
        "counter"
    );
    let failed = |door: &str, outcome: &str| {
        scrape.value(
            "skillbox_failed_authentications_total",
            &[("door", door), ("outcome", outcome)],
        )
    };
    assert_eq!(failed("metrics", "wrong"), 1.0, "{}", scrape.text);
    assert_eq!(failed("metrics", "throttled"), 0.0, "{}", scrape.text);
    let (status, _, _) = send(
        server
            .client
            .post(format!("{}/rpc", server.base))
            .bearer_auth("wrong-token")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "list_skills"})),
    );
    assert_eq!(status, 401);
    let (status, _, _) = send(
        server
            .client
            .post(format!("{}/login", server.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("token=wrong-token&next=/"),
    );
    assert_eq!(status, 401);
    let scrape = server.scrape();
    assert_eq!(
        scrape.value(
            "skillbox_failed_authentications_total",
            &[("door", "rpc"), ("outcome", "wrong")]
        ),
        1.0,
        "{}",
        scrape.text
    );
    assert_eq!(
        scrape.value(
            "skillbox_failed_authentications_total",
            &[("door", "web"), ("outcome", "wrong")]
        ),
        1.0,
        "{}",
        scrape.text
    );
}

#[test]
fn mcp_calls_are_counted_by_method() {
    let server = Server::start(&["--token", TOKEN]);
    let before = server.scrape();
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "metrics-test", "version": "1"}}
    });
    // The call is counted once its answer has been read to the end.
    let (status, _, answer) = send(
        server
            .post("/mcp", &initialize)
            .header("Accept", "application/json, text/event-stream"),
    );
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("serverInfo"), "{answer}");
    // A tool call without a session is refused by the door, and counted with its tool's name.
    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "load_skill", "arguments": {"name": "first-notes"}}
    });
    let (status, _, answer) = send(
        server
            .post("/mcp", &call)
            .header("Accept", "application/json, text/event-stream"),
    );
    assert!((400..500).contains(&status), "{status} {answer}");
    let after = server.scrape();
    let mcp = |method: &'static str, outcome: &'static str| {
        grew(
            &before,
            &after,
            "skillbox_rpc_calls_total",
            &[("door", "mcp"), ("method", method), ("outcome", outcome)],
        )
    };
    assert_eq!(mcp("initialize", "ok"), 1.0, "{}", after.text);
    assert_eq!(
        mcp("tools/call:load_skill", "http_client_error"),
        1.0,
        "{}",
        after.text
    );
}

#[test]
fn junk_method_names_cannot_grow_the_scrape() {
    let server = Server::start(&["--token", TOKEN]);
    // Warm every series the junk could touch, then measure.
    let junk_batch = |round: usize| -> Value {
        (0..100)
            .map(|index| {
                json!({"jsonrpc": "2.0", "id": index, "method": format!("junk-{round}-{index}"), "params": {}})
            })
            .collect()
    };
    assert_eq!(send(server.post("/rpc", &junk_batch(0))).0, 200);
    let junk_mcp =
        |index: usize| json!({"jsonrpc": "2.0", "id": index, "method": format!("junk/{index}")});
    let tool_mcp = |index: usize| json!({"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": {"name": format!("junk-tool-{index}")}});
    for body in [junk_mcp(0), tool_mcp(0)] {
        send(server.post("/mcp", &body));
    }
    // The first scrape is counted only after it has been answered: the second shows it.
    server.scrape();
    let before = server.scrape();
    for round in 1..=10 {
        assert_eq!(send(server.post("/rpc", &junk_batch(round))).0, 200);
    }
    for index in 1..=100 {
        send(server.post("/mcp", &junk_mcp(index)));
        send(server.post("/mcp", &tool_mcp(index)));
    }
    let after = server.scrape();
    assert_eq!(
        grew(
            &before,
            &after,
            "skillbox_rpc_calls_total",
            &rpc_calls("other", "method_not_found")
        ),
        1000.0
    );
    assert_eq!(
        grew(
            &before,
            &after,
            "skillbox_rpc_calls_total",
            &[("door", "mcp"), ("method", "tools/call:other")]
        ),
        100.0
    );
    assert_eq!(
        after.samples.len(),
        before.samples.len(),
        "1200 junk names added series: {} samples before, {} after",
        before.samples.len(),
        after.samples.len()
    );
    let methods = after.label_values("method");
    assert!(
        methods.iter().all(|method| !method.contains("junk")),
        "{methods:?}"
    );
}

/// Keep the helper honest: a name the parser does not know is an error, not a zero.
#[test]
fn the_parser_refuses_text_that_is_not_openmetrics() {
    let refused = std::panic::catch_unwind(|| Scrape::parse("skillbox_x{ 1\n"));
    assert!(refused.is_err());
}
