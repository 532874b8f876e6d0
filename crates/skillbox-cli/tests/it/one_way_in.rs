//! One way in, through the real binary: every door of a server shares one run queue (at most
//! `--max-runs` calls run code at once, whichever door they came through, the rest queued or
//! turned away as busy), and every door gives the same answer to a skill hidden from models,
//! to bad arguments and to a tool that does not exist (see `docs/design/one-way-in.md`).

use std::time::Duration;

use serde_json::{Value, json};
use skillbox_testkit::model_server::{Reply, ScriptedModelServer};

use super::mcp::{INITIALIZE, INITIALIZED, answer_in, exchange_in};
use super::support::{
    AgentEvents, agent_command, json_stdout, make_world_readable, skillbox, write_tree,
};
use super::web::WebServer;

/// Seconds one run sleeps: long enough that every call of a burst arrives while the first runs.
const NAP_SECONDS: f64 = 2.0;

/// A skill whose script naps and prints when it started and ended; a skill hidden from models;
/// a visible skill with a file.
fn tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[
            (
                "sleeper/SKILL.md",
                "---\nname: sleeper\ndescription: Naps, then says when.\n---\nRun scripts/nap.py.\n",
            ),
            (
                "sleeper/scripts/nap.py",
                &format!(
                    "import time\nstart = time.time()\ntime.sleep({NAP_SECONDS})\nprint(f'interval {{start}} {{time.time()}}')\n"
                ),
            ),
            (
                "secret/SKILL.md",
                "---\nname: secret\ndescription: Only a person may start this.\ndisable-model-invocation: true\n---\nSecret steps.\n",
            ),
            (
                "visible/SKILL.md",
                "---\nname: visible\ndescription: A skill anyone may read.\n---\nRead references/notes.md.\n",
            ),
            ("visible/references/notes.md", "Notes.\n"),
        ],
    );
    make_world_readable(root.path());
    root
}

/// A streamed Chat Completions answer holding these tool calls at once.
fn calls_at_once(calls: &[(&str, Value)]) -> Reply {
    let deltas: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(index, (name, arguments))| {
            json!({"index": index, "id": format!("call_{index}"), "type": "function",
                   "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    let call = json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":deltas}}]});
    let finish = json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5}});
    Reply::data_events(&[&call.to_string(), &finish.to_string()])
}

fn says(text: &str) -> Reply {
    let chunk = json!({"choices":[{"index":0,"delta":{"content":text}}]});
    let finish = json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5}});
    Reply::data_events(&[&chunk.to_string(), &finish.to_string()])
}

/// How one call of the burst ended.
#[derive(Debug, Clone, PartialEq)]
enum Ran {
    /// It ran, from `start` to `end` (seconds since the epoch, as the script saw them).
    Interval {
        door: &'static str,
        start: f64,
        end: f64,
    },
    /// The run queue turned it away.
    Busy { door: &'static str },
}

/// The interval a nap printed, found anywhere in `text`.
fn interval_in(door: &'static str, text: &str) -> Option<Ran> {
    let at = text.find("interval ")?;
    let mut words = text[at + 9..].split(|c: char| c.is_whitespace() || c == '"' || c == '\\');
    let start = words.next()?.parse().ok()?;
    let end = words.next()?.parse().ok()?;
    Some(Ran::Interval { door, start, end })
}

/// An MCP session over streamable HTTP.
struct McpSession {
    url: String,
    id: String,
}

async fn mcp_post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &str,
) -> (reqwest::header::HeaderMap, String) {
    let mut request = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_owned());
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.unwrap();
    let headers = response.headers().clone();
    (headers, response.text().await.unwrap())
}

impl McpSession {
    async fn open(client: &reqwest::Client, url: String) -> Self {
        let (headers, _) = mcp_post(client, &url, None, INITIALIZE).await;
        let id = headers["mcp-session-id"].to_str().unwrap().to_owned();
        mcp_post(client, &url, Some(&id), INITIALIZED).await;
        McpSession { url, id }
    }

    async fn call_tool(&self, client: &reqwest::Client, name: &str, arguments: Value) -> Value {
        // Ids must differ within a session: a request reusing one is never answered.
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(10);
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                             "params": {"name": name, "arguments": arguments}});
        let (_, text) = mcp_post(client, &self.url, Some(&self.id), &request.to_string()).await;
        answer_in(&text)
    }
}

#[test]
fn one_run_queue_holds_for_every_door_of_a_server() {
    let tree = tree();
    let data = tempfile::tempdir().unwrap();
    let nap = json!({"skill": "sleeper", "script": "nap.py"});
    let model = ScriptedModelServer::start(vec![
        // Distinct arguments: the agent refuses a third identical call on its own.
        calls_at_once(&[
            (
                "use_skill",
                json!({"skill": "sleeper", "script": "nap.py", "args": ["1"]}),
            ),
            (
                "use_skill",
                json!({"skill": "sleeper", "script": "nap.py", "args": ["2"]}),
            ),
            (
                "use_skill",
                json!({"skill": "sleeper", "script": "nap.py", "args": ["3"]}),
            ),
        ]),
        says("done"),
    ]);
    let server = WebServer::start(
        tree.path(),
        data.path(),
        &[
            "--max-runs",
            "1",
            "--max-queued-runs",
            "1",
            "--base-url",
            model.base_url.as_str(),
            "--model",
            "scripted",
        ],
        &[],
    );
    let page = server.get("/chat");
    let csrf = page.csrf();
    let conversation = server.post("/api/chat", &csrf, &json!({})).json()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let client = skillbox_testkit::http_client_builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let runtime = skillbox_testkit::runtime();
    let session = runtime.block_on(McpSession::open(&client, format!("{}/mcp", server.base)));
    let run_code = json!({"jsonrpc": "2.0", "id": 1, "method": "run_code", "params": {
        "language": "python",
        "code": format!("import time\ndef main(args):\n    start = time.time()\n    time.sleep({NAP_SECONDS})\n    return f'interval {{start}} {{time.time()}}'\n")}});

    // Three calls through each of /rpc, the playground and /mcp, and a chat turn whose model
    // makes three calls at once: twelve calls that run code, all at the same moment.
    let mut tasks = Vec::new();
    for _ in 0..3 {
        let (rpc_client, url, body) = (
            client.clone(),
            format!("{}/rpc", server.base),
            run_code.clone(),
        );
        tasks.push(runtime.spawn(async move {
            let answer: Value = rpc_client
                .post(url)
                .json(&body)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if answer["error"]["code"] == -32000 {
                return vec![Ran::Busy { door: "rpc" }];
            }
            vec![
                interval_in("rpc", &answer["result"]["output"].to_string())
                    .unwrap_or_else(|| panic!("rpc: {answer}")),
            ]
        }));
        let (web_client, url, web_csrf, web_nap) = (
            client.clone(),
            format!("{}/api/call", server.base),
            csrf.clone(),
            nap.clone(),
        );
        tasks.push(runtime.spawn(async move {
            let response = web_client
                .post(url)
                .header("content-type", "application/json")
                .header("x-skillbox-csrf", web_csrf)
                .body(json!({"tool": "use_skill", "arguments": web_nap}).to_string())
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            let text = response.text().await.unwrap();
            if status == 503 {
                assert!(text.contains("busy"), "playground: {text}");
                return vec![Ran::Busy { door: "playground" }];
            }
            vec![
                interval_in("playground", &text)
                    .unwrap_or_else(|| panic!("playground {status}: {text}")),
            ]
        }));
        let (mcp_client, mcp_session, mcp_nap) = (
            client.clone(),
            McpSession {
                url: session.url.clone(),
                id: session.id.clone(),
            },
            nap.clone(),
        );
        tasks.push(runtime.spawn(async move {
            let answer = mcp_session
                .call_tool(&mcp_client, "use_skill", mcp_nap)
                .await;
            let text = answer["result"].to_string();
            if answer["result"]["isError"] == true && text.contains("busy") {
                return vec![Ran::Busy { door: "mcp" }];
            }
            vec![interval_in("mcp", &text).unwrap_or_else(|| panic!("mcp: {answer}"))]
        }));
    }
    let started = server.post(
        &format!("/api/chat/{conversation}/turns"),
        &csrf,
        &json!({"text": "Nap three times."}),
    );
    assert_eq!(started.status, 200, "{}", started.text);
    let mut outcomes: Vec<Ran> = tasks
        .into_iter()
        .flat_map(|task| runtime.block_on(task).unwrap())
        .collect();
    for event in server.events_until(&conversation, "final") {
        if event["type"] != "tool_call_finished" {
            continue;
        }
        let result = event["result"].as_str().unwrap();
        outcomes.push(match interval_in("chat", result) {
            Some(ran) => ran,
            None if result.contains("busy") => Ran::Busy { door: "chat" },
            None => panic!("chat: {result}"),
        });
    }

    assert_eq!(outcomes.len(), 12, "{outcomes:?}");
    let mut intervals: Vec<(f64, f64)> = outcomes
        .iter()
        .filter_map(|ran| match ran {
            Ran::Interval { start, end, .. } => Some((*start, *end)),
            Ran::Busy { .. } => None,
        })
        .collect();
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert!(!intervals.is_empty(), "{outcomes:?}");
    // --max-runs 1: no two runs overlap, whichever door they came through.
    for pair in intervals.windows(2) {
        assert!(
            pair[0].1 <= pair[1].0,
            "two runs overlapped: {pair:?} in {outcomes:?}"
        );
    }
    // One running and one waiting: the rest of the burst was turned away, at every door.
    for door in ["rpc", "playground", "mcp", "chat"] {
        assert!(
            outcomes.contains(&Ran::Busy { door }),
            "{door} queued past the limit: {outcomes:?}"
        );
    }
    assert!(intervals.len() <= 3, "{outcomes:?}");
}

/// The message of an error answer, however the door wraps it.
fn error_text(value: &Value) -> String {
    for pointer in [
        "/error/message",
        "/error",
        "/content/error",
        "/structuredContent/error",
    ] {
        if let Some(text) = value.pointer(pointer).and_then(Value::as_str) {
            return text.to_owned();
        }
    }
    if let Some(text) = value.as_str() {
        return match serde_json::from_str::<Value>(text) {
            Ok(parsed) => error_text(&parsed),
            Err(_) => text.to_owned(),
        };
    }
    panic!("no error message in {value}")
}

/// A model that reads the hidden skill's file, reads with bad arguments and calls a tool that
/// does not exist, all in one response, then answers.
fn reading_model(hidden: &Value, bad: &Value) -> ScriptedModelServer {
    ScriptedModelServer::start(vec![
        calls_at_once(&[
            ("read_skill_file", hidden.clone()),
            ("read_skill_file", bad.clone()),
            ("no_such_tool", json!({})),
        ]),
        says("done"),
    ])
}

#[test]
fn every_door_answers_the_same_to_a_hidden_skill_bad_arguments_and_an_unknown_tool() {
    let tree = tree();
    let data = tempfile::tempdir().unwrap();
    let hidden = json!({"skill": "secret", "path": "SKILL.md"});
    let bad = json!({"skill": "visible", "path": 5});
    let hidden_says = "no skill named `secret`";
    let bad_says = "parameter `path` must be a string, not integer `5`";
    let unknown_says = "unknown tool `no_such_tool`; the tools are: ";
    let model = reading_model(&hidden, &bad);
    let mut answers: Vec<(&str, &str, String)> = Vec::new();

    // The server's doors: /rpc (the protocol's spelling: `name`), /mcp, the playground, the chat.
    {
        let server = WebServer::start(
            tree.path(),
            data.path(),
            &["--base-url", model.base_url.as_str(), "--model", "scripted"],
            &[],
        );
        let rpc = |params: Value, method: &str| -> Value {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
            skillbox_testkit::runtime().block_on(async {
                skillbox_testkit::http_client()
                    .post(format!("{}/rpc", server.base))
                    .json(&body)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap()
            })
        };
        let answer = rpc(
            json!({"name": "secret", "path": "SKILL.md"}),
            "read_skill_file",
        );
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        answers.push(("rpc", "hidden", error_text(&answer)));
        let answer = rpc(json!({"name": "visible", "path": 5}), "read_skill_file");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        answers.push(("rpc", "bad", error_text(&answer)));
        let answer = rpc(json!({}), "no_such_tool");
        assert_eq!(answer["error"]["code"], -32601, "{answer}");

        let client = skillbox_testkit::http_client();
        let runtime = skillbox_testkit::runtime();
        let session = runtime.block_on(McpSession::open(&client, format!("{}/mcp", server.base)));
        for (case, arguments) in [("hidden", &hidden), ("bad", &bad)] {
            let answer =
                runtime.block_on(session.call_tool(&client, "read_skill_file", arguments.clone()));
            assert_eq!(answer["result"]["isError"], true, "{answer}");
            answers.push(("mcp", case, error_text(&answer["result"])));
        }
        let answer = runtime.block_on(session.call_tool(&client, "no_such_tool", json!({})));
        answers.push(("mcp", "unknown", error_text(&answer)));

        let csrf = server.get("/playground").csrf();
        for (case, tool, arguments) in [
            ("hidden", "read_skill_file", &hidden),
            ("bad", "read_skill_file", &bad),
            ("unknown", "no_such_tool", &json!({})),
        ] {
            let page = server.post(
                "/api/call",
                &csrf,
                &json!({"tool": tool, "arguments": arguments}),
            );
            answers.push(("playground", case, error_text(&page.json())));
        }

        let conversation = server.post("/api/chat", &csrf, &json!({})).json()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        server.post(
            &format!("/api/chat/{conversation}/turns"),
            &csrf,
            &json!({"text": "Read them."}),
        );
        let finished: Vec<Value> = server
            .events_until(&conversation, "final")
            .into_iter()
            .filter(|event| event["type"] == "tool_call_finished")
            .collect();
        for (case, event) in ["hidden", "bad", "unknown"].into_iter().zip(&finished) {
            answers.push(("chat", case, error_text(&event["result"])));
        }
    }

    // `skillbox mcp` on stdio.
    let lines: Vec<String> = [
        ("read_skill_file", &hidden),
        ("read_skill_file", &bad),
        ("no_such_tool", &json!({})),
    ]
    .iter()
    .enumerate()
    .map(|(index, (tool, arguments))| {
        json!({"jsonrpc": "2.0", "id": index + 2, "method": "tools/call",
               "params": {"name": tool, "arguments": arguments}})
        .to_string()
    })
    .collect();
    let mut sent = vec![INITIALIZE, INITIALIZED];
    sent.extend(lines.iter().map(String::as_str));
    let stdio = exchange_in(tree.path(), &["--sandbox", "off"], &sent);
    for (case, answer) in ["hidden", "bad", "unknown"].into_iter().zip(&stdio[1..]) {
        let shown = if answer.get("error").is_some() {
            error_text(answer)
        } else {
            error_text(&answer["result"])
        };
        answers.push(("mcp stdio", case, shown));
    }

    // `skillbox call`.
    for (case, tool, arguments) in [
        ("hidden", "read_skill_file", &hidden),
        ("bad", "read_skill_file", &bad),
        ("unknown", "no_such_tool", &json!({})),
    ] {
        let output = skillbox()
            .args(["--root"])
            .arg(tree.path())
            .args(["call", tool, "--args", &arguments.to_string()])
            .output()
            .unwrap();
        answers.push(("call", case, error_text(&json_stdout(&output))));
    }

    // `skillbox ask`: the agent loop.
    let asking = reading_model(&hidden, &bad);
    let transcripts = tempfile::tempdir().unwrap();
    let asked = AgentEvents::of(
        agent_command(tree.path())
            .args([
                "ask",
                "--json",
                "--base-url",
                &asking.base_url,
                "--data-dir",
            ])
            .arg(transcripts.path())
            .arg("Read them.")
            .output()
            .unwrap(),
    );
    for (case, (text, is_error)) in ["hidden", "bad", "unknown"]
        .into_iter()
        .zip(asked.results())
    {
        assert!(is_error, "{case}: {text}");
        answers.push(("ask", case, error_text(&Value::String(text))));
    }

    for (door, case, text) in &answers {
        let says = match *case {
            "hidden" => hidden_says,
            "bad" => bad_says,
            _ => unknown_says,
        };
        assert!(text.starts_with(says), "{door} {case}: {text}");
    }
    // The same text at every door, word for word (an unknown tool lists the door's own tools).
    for case in ["hidden", "bad"] {
        let texts: std::collections::BTreeSet<&str> = answers
            .iter()
            .filter(|(_, each, _)| *each == case)
            .map(|(_, _, text)| text.as_str())
            .collect();
        assert_eq!(texts.len(), 1, "{case}: {answers:#?}");
    }
    let doors: std::collections::BTreeSet<&str> =
        answers.iter().map(|(door, _, _)| *door).collect();
    assert_eq!(doors.len(), 7, "{doors:?}");
}
