//! The server through a real HTTP client on 127.0.0.1 (port 0): every JSON-RPC rule, the
//! catalog and blob methods, auth; `hostile` holds what hostile clients try.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod hostile;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot};
use skillbox_exec::{Executor, ExecutorConfig, SandboxMode, SandboxPolicy};
use skillbox_server::{AppState, DataDir};
use skillbox_tools::{ProviderOptions, SkillsProvider};

struct Server {
    url: String,
    client: reqwest::Client,
    _data: tempfile::TempDir,
    runtime: tokio::runtime::Runtime,
}

/// The catalog of the bundled examples.
fn examples() -> SkillCatalog {
    catalog_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/skills"))
}

fn catalog_of(root: &Path) -> SkillCatalog {
    SkillCatalog::load(&CatalogOptions {
        roots: vec![SkillRoot::explicit(root.to_path_buf())],
        ..CatalogOptions::default()
    })
    .unwrap()
}

impl Server {
    fn start(token: Option<&str>) -> Self {
        Self::start_with(examples(), token, |state| state)
    }

    /// A server over `catalog`, its state adjusted by `configure`.
    fn start_with(
        catalog: SkillCatalog,
        token: Option<&str>,
        configure: impl FnOnce(AppState) -> AppState,
    ) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let data = tempfile::tempdir().unwrap();
        let state = configure(state(catalog, data.path(), token));
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        runtime.spawn(skillbox_server::serve_on(
            listener,
            state,
            std::future::pending(),
        ));
        Server {
            url,
            client: skillbox_testkit::http_client(),
            _data: data,
            runtime,
        }
    }

    fn post(&self, body: &str) -> (u16, Option<Value>) {
        self.post_with(body, None)
    }

    fn post_with(&self, body: &str, token: Option<&str>) -> (u16, Option<Value>) {
        self.runtime.block_on(async {
            let mut request = self
                .client
                .post(format!("{}/rpc", self.url))
                .header("content-type", "application/json")
                .body(body.to_owned());
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let text = response.text().await.unwrap();
            (
                status,
                if text.is_empty() {
                    None
                } else {
                    Some(serde_json::from_str(&text).unwrap())
                },
            )
        })
    }

    fn call(&self, method: &str, params: Value) -> Value {
        let (status, body) = self.post(
            &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string(),
        );
        assert_eq!(status, 200);
        body.unwrap()
    }
}

fn error_code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {response}"))
}

#[test]
fn ids_are_echoed_exactly_and_notifications_get_no_reply() {
    let server = Server::start(None);
    for id in [json!(7), json!("abc-1"), json!(null), json!(1.5), json!(-3)] {
        let (_, body) = server.post(
            &json!({"jsonrpc": "2.0", "id": id, "method": "load_skills_protocol_guide"})
                .to_string(),
        );
        let body = body.unwrap();
        assert_eq!(body["id"], id);
        assert_eq!(body["jsonrpc"], "2.0");
        assert!(
            body["result"]["content"]
                .as_str()
                .unwrap()
                .starts_with("# Skills Protocol Overview")
        );
    }
    let (status, body) = server.post(r#"{"jsonrpc": "2.0", "method": "list_skills"}"#);
    assert_eq!((status, body), (204, None));
    let (status, body) = server.post(r#"{"jsonrpc": "2.0", "method": "no_such_method"}"#);
    assert_eq!(
        (status, body),
        (204, None),
        "notifications get no reply, even for errors"
    );
}

#[test]
fn batches_answer_requests_only_in_order() {
    let server = Server::start(None);
    let (_, body) = server.post(
        r#"[{"jsonrpc": "2.0", "id": "a", "method": "list_skills", "params": {"limit": 1}},
            {"jsonrpc": "2.0", "method": "list_skills"},
            42,
            {"jsonrpc": "2.0", "id": "b", "method": "nope"}]"#,
    );
    let responses = body.unwrap();
    let responses = responses.as_array().unwrap();
    assert_eq!(responses.len(), 3);
    assert_eq!(responses[0]["id"], "a");
    assert_eq!(
        responses[0]["result"]["skills"].as_array().unwrap().len(),
        1
    );
    assert_eq!(
        (error_code(&responses[1]), &responses[1]["id"]),
        (-32600, &Value::Null)
    );
    assert_eq!(
        (error_code(&responses[2]), &responses[2]["id"]),
        (-32601, &json!("b"))
    );
    let (status, body) = server.post(r#"[{"jsonrpc": "2.0", "method": "list_skills"}, {"jsonrpc": "2.0", "method": "list_skills"}]"#);
    assert_eq!((status, body), (204, None));
}

#[test]
fn protocol_level_errors() {
    let server = Server::start(None);
    let cases = [
        ("{not json", -32700),
        ("[]", -32600),
        (
            r#"{"jsonrpc": "1.0", "id": 1, "method": "list_skills"}"#,
            -32600,
        ),
        (r#"{"id": 1, "method": "list_skills"}"#, -32600),
        (r#"{"jsonrpc": "2.0", "id": 1}"#, -32600),
        (
            r#"{"jsonrpc": "2.0", "id": {"x": 1}, "method": "list_skills"}"#,
            -32600,
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 1, "method": "unknown"}"#,
            -32601,
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 1, "method": "list_skills", "params": [1]}"#,
            -32602,
        ),
    ];
    for (body, code) in cases {
        let (status, response) = server.post(body);
        assert_eq!(status, 200, "{body}");
        let response = response.unwrap();
        assert_eq!(error_code(&response), code, "{body}: {response}");
        if code == -32700 {
            assert_eq!(response["id"], Value::Null);
        }
    }
}

#[test]
fn invalid_params_are_minus_32602_with_a_message_naming_the_problem() {
    let server = Server::start(None);
    let cases = [
        (
            "describe_skill",
            json!({}),
            "missing required parameter `name`",
        ),
        (
            "describe_skill",
            json!({"name": "no-such-skill"}),
            "no skill named `no-such-skill`",
        ),
        (
            "describe_skill",
            json!({"name": "text.stats", "version": "9.9.9"}),
            "no skill named `text.stats`",
        ),
        ("list_skills", json!({"cursor": "forged"}), "cursor"),
        (
            "list_skills",
            json!({"detail": "everything"}),
            "parameter `detail`",
        ),
        (
            "read_skill_file",
            json!({"name": "csv-insights", "path": "../commit-message/SKILL.md"}),
            "leaves the skill folder",
        ),
        (
            "read_skill_file",
            json!({"name": "csv-insights"}),
            "missing required parameter `path`",
        ),
        (
            "read_blob",
            json!({"blob_id": "blob:00000000000000000000000000000000"}),
            "no blob",
        ),
        (
            "create_blob",
            json!({"content": "x"}),
            "missing required parameter `kind`",
        ),
        (
            "create_blob",
            json!({"content": "%%", "kind": "application/octet-stream", "encoding": "base64"}),
            "base64",
        ),
    ];
    for (method, params, expected) in cases {
        let response = server.call(method, params.clone());
        assert_eq!(
            error_code(&response),
            -32602,
            "{method} {params}: {response}"
        );
        assert!(
            response["error"]["message"]
                .as_str()
                .unwrap()
                .contains(expected),
            "{method} {params}: {response}"
        );
    }
}

#[test]
fn skills_hidden_from_models_are_hidden_from_protocol_clients_alike() {
    // `release-checklist` sets `disable-model-invocation: true`.
    let server = Server::start(None);
    let listed = server.call("list_skills", json!({"limit": 100}));
    let names: Vec<&str> = listed["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"csv-insights") && !names.contains(&"release-checklist"),
        "{names:?}"
    );
    let requests = [
        ("describe_skill", json!({"name": "NAME", "detail": "full"})),
        (
            "read_skill_file",
            json!({"name": "NAME", "path": "SKILL.md"}),
        ),
        ("execute_skill", json!({"name": "NAME"})),
        (
            "run_code",
            json!({"language": "python", "code": "def main(args):\n    return 1\n", "mount_skills": ["NAME"]}),
        ),
    ];
    for (method, params) in requests {
        let answer = |name: &str| {
            let params: Value =
                serde_json::from_str(&params.to_string().replace("NAME", name)).unwrap();
            let response = server.call(method, params);
            assert_eq!(error_code(&response), -32602, "{method} {name}: {response}");
            response["error"]["message"]
                .as_str()
                .unwrap()
                .replace(name, "NAME")
        };
        let hidden = answer("release-checklist");
        assert_eq!(hidden, answer("nothing-here-at-all"), "{method}");
        assert!(
            hidden.starts_with("no skill named `NAME`"),
            "{method}: {hidden}"
        );
    }
}

#[test]
fn catalog_methods_versions_and_pagination() {
    let server = Server::start(None);
    let first = server.call("list_skills", json!({"limit": 4, "detail": "summary"}));
    let names: Vec<&str> = first["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "api-design-review",
            "commit-message",
            "csv-insights",
            "text-tools"
        ],
        "`release-checklist` is hidden from protocol clients (disable-model-invocation)"
    );
    let cursor = first["result"]["next_cursor"].as_str().unwrap();
    let rest = server.call("list_skills", json!({"cursor": cursor}));
    let names: Vec<&str> = rest["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["text.stats", "unit-converter"]);
    let latest = server.call("describe_skill", json!({"name": "text.stats"}));
    assert_eq!(latest["result"]["skill"]["manifest"]["version"], "0.10.0");
    let older = server.call(
        "describe_skill",
        json!({"name": "text.stats", "version": "0.9.0", "detail": "full"}),
    );
    assert_eq!(older["result"]["skill"]["manifest"]["version"], "0.9.0");
    assert!(
        older["result"]["skill"]["skill_md"]
            .as_str()
            .unwrap()
            .contains("Text Statistics")
    );
    let file = server.call(
        "read_skill_file",
        json!({"name": "text.stats", "path": "skill.toml"}),
    );
    assert!(
        file["result"]["content"]
            .as_str()
            .unwrap()
            .contains("name = \"text.stats\"")
    );
    let namespaced = server.call("list_skills", json!({"namespace": "text"}));
    assert_eq!(namespaced["result"]["skills"].as_array().unwrap().len(), 1);
}

#[test]
fn blobs_round_trip_with_head_tail_full_and_binary() {
    let server = Server::start(None);
    let content = "line one\nline two\nline three\n";
    let created = server.call(
        "create_blob",
        json!({"content": content, "kind": "text/plain"}),
    );
    let blob_id = created["result"]["blob_id"].as_str().unwrap().to_owned();
    assert!(blob_id.starts_with("blob:"));
    assert_eq!(created["result"]["size_bytes"], content.len());
    let head = server.call("read_blob", json!({"blob_id": blob_id, "max_bytes": 8}));
    assert_eq!(head["result"]["preview"], "line one");
    assert_eq!(head["result"]["truncated"], true);
    let tail = server.call(
        "read_blob",
        json!({"blob_id": blob_id, "mode": "sample_tail", "max_bytes": 11}),
    );
    assert_eq!(tail["result"]["preview"], "line three\n");
    let full = server.call("read_blob", json!({"blob_id": blob_id, "mode": "full"}));
    assert_eq!(full["result"]["preview"], content);
    let binary = server.call(
        "create_blob",
        json!({"content": "AAECAwT/", "kind": "application/octet-stream", "encoding": "base64"}),
    );
    let binary_id = binary["result"]["blob_id"].as_str().unwrap();
    let read = server.call("read_blob", json!({"blob_id": binary_id, "mode": "full"}));
    assert_eq!(
        (
            read["result"]["encoding"].as_str(),
            read["result"]["preview"].as_str()
        ),
        (Some("base64"), Some("AAECAwT/"))
    );
}

#[test]
fn a_token_is_required_when_set() {
    let server = Server::start(Some("s3cret"));
    let body = r#"{"jsonrpc": "2.0", "id": 1, "method": "list_skills"}"#;
    assert_eq!(server.post_with(body, None).0, 401);
    assert_eq!(server.post_with(body, Some("wrong")).0, 401);
    let (status, response) = server.post_with(body, Some("s3cret"));
    assert_eq!(status, 200);
    assert!(response.unwrap()["result"]["skills"].is_array());
    // The scheme's case does not matter; the token's does.
    let with_header = |value: &str| {
        server.runtime.block_on(async {
            server
                .client
                .post(format!("{}/rpc", server.url))
                .header("content-type", "application/json")
                .header("authorization", value)
                .body(body)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        })
    };
    assert_eq!(with_header("bearer s3cret"), 200);
    assert_eq!(with_header("BEARER s3cret"), 200);
    assert_eq!(with_header("Bearer S3CRET"), 401);
    assert_eq!(with_header("Basic s3cret"), 401);
    let health = server.runtime.block_on(async {
        server
            .client
            .get(format!("{}/healthz", server.url))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    });
    assert_eq!(health, 401);
}

#[test]
fn health_and_the_listening_rule() {
    let server = Server::start(None);
    let health: Value = server.runtime.block_on(async {
        server
            .client
            .get(format!("{}/healthz", server.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    assert_eq!(health["status"], "ok");
    assert_eq!(health["skills"], 6, "the skills a client may see");
    assert!(skillbox_server::check_listen("0.0.0.0:7878".parse().unwrap(), None).is_err());
    assert!(skillbox_server::check_listen("0.0.0.0:7878".parse().unwrap(), Some("t")).is_ok());
    assert!(skillbox_server::check_listen("127.0.0.1:7878".parse().unwrap(), None).is_ok());
    assert!(skillbox_server::check_listen("[::1]:7878".parse().unwrap(), None).is_ok());
}

#[test]
fn a_half_sent_request_cannot_hold_shutdown_past_the_grace_period() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let state = state(SkillCatalog::default(), data.path(), None);
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = runtime.spawn(skillbox_server::serve_with_grace(
        listener,
        state,
        async move {
            let _ = stopped.await;
        },
        std::time::Duration::from_millis(500),
    ));
    // A slow client: the request line and one header, then nothing.
    let mut slow = std::net::TcpStream::connect(address).unwrap();
    std::io::Write::write_all(&mut slow, b"POST /rpc HTTP/1.1\r\nHost: x\r\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let started = std::time::Instant::now();
    stop.send(()).unwrap();
    let outcome = runtime
        .block_on(async { tokio::time::timeout(std::time::Duration::from_secs(10), server).await });
    assert!(outcome.is_ok(), "shutdown hung behind a half-sent request");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    drop(slow);
}

/// Server state over a catalog, with the sandbox off (these tests run no code) and blobs and
/// run folders under `data`.
fn state(catalog: SkillCatalog, data: &Path, token: Option<&str>) -> AppState {
    let executor = Executor::new(ExecutorConfig {
        helper: None,
        policy: SandboxPolicy {
            mode: SandboxMode::Off,
            ..SandboxPolicy::default()
        },
        workspace_root: data.join("runs"),
        ..ExecutorConfig::default()
    })
    .unwrap();
    AppState::new(
        Arc::new(SkillsProvider::new(
            Arc::new(catalog),
            Arc::new(executor),
            ProviderOptions::default(),
        )),
        &DataDir::open(data, skillbox_server::blobs::DEFAULT_BLOB_TTL).unwrap(),
        token.map(str::to_owned),
    )
}
