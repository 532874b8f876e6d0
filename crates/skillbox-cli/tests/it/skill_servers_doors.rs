//! Skill servers started by every way a skill is loaded in the agent loop besides a model's
//! `load_skill` (issue 27): a person's `/name` invocation, and a conversation resumed from its
//! transcript, whose loaded skills' servers start again before its next turn.

use serde_json::Value;
use skillbox_testkit::model_server::ScriptedModelServer;

use super::agent::{calls, says};
use super::skill_servers_running::{assert_gone, marker, offered};
use super::support::{AgentEvents, agent_command, make_world_readable, write_tree};

/// A plain-Python MCP server (JSON lines on stdio) with one tool, `echo`.
const ECHO_SERVER: &str = r#"import json, sys
for line in sys.stdin:
    request = json.loads(line)
    method, request_id = request.get("method"), request.get("id")
    if request_id is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "echo", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "description": "Say it back.", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "echo: " + str(request["params"].get("arguments", {}).get("text"))}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()
"#;

fn echo_root(marker: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[
            (
                "parrot/SKILL.md",
                &format!(
                    "---\nname: parrot\ndescription: Repeats things. Use when asked to repeat.\nmcp-servers:\n  echo:\n    command: python3\n    args: [server.py, {marker}]\n---\nCall `echo__echo` with the text.\n"
                ),
            ),
            ("parrot/server.py", ECHO_SERVER),
        ],
    );
    make_world_readable(root.path());
    root
}

#[test]
fn a_person_invoking_a_skill_starts_its_servers() {
    let marker = marker();
    let root = echo_root(&marker);
    let server = ScriptedModelServer::start(vec![
        calls("echo__echo", r#"{"text":"hi"}"#),
        says("It said hi."),
    ]);
    let output = agent_command(root.path())
        .args([
            "ask",
            "--json",
            "--no-transcript",
            "--base-url",
            &server.base_url,
        ])
        .arg("/parrot hi")
        .output()
        .unwrap();
    let asked = AgentEvents::of(output);
    assert_eq!(asked.end(), "answered", "{:?}", asked.events);
    assert!(offered(&server, 0).contains(&"echo__echo".to_owned()));
    let first: Value = serde_json::from_str(&server.requests()[0].body).unwrap();
    let invoked = first["messages"].to_string();
    assert!(
        invoked.contains("`echo` (skill `parrot`) is running; its tools: `echo__echo`"),
        "{invoked}"
    );
    assert_eq!(asked.results(), vec![("echo: hi".to_owned(), false)]);
    assert_gone(&marker);
}

#[test]
fn a_resumed_conversation_starts_its_loaded_skills_servers_again() {
    let marker = marker();
    let root = echo_root(&marker);
    let data = tempfile::tempdir().unwrap();
    let server = ScriptedModelServer::start(vec![
        calls("load_skill", r#"{"skill":"parrot"}"#),
        says("Loaded."),
        calls("echo__echo", r#"{"text":"again"}"#),
        says("It said again."),
    ]);
    let run = |extra: &[&str]| {
        let output = agent_command(root.path())
            .args([
                "ask",
                "--json",
                "--base-url",
                &server.base_url,
                "--data-dir",
            ])
            .arg(data.path())
            .args(extra)
            .output()
            .unwrap();
        AgentEvents::of(output)
    };
    let first = run(&["Load the parrot"]);
    assert_eq!(first.end(), "answered", "{:?}", first.events);
    let id = first.events[0]["conversation"].as_str().unwrap().to_owned();
    assert_gone(&marker);
    let second = run(&["--resume", &id, "Repeat again"]);
    assert_eq!(second.end(), "answered", "{:?}", second.events);
    assert!(offered(&server, 2).contains(&"echo__echo".to_owned()));
    assert_eq!(second.results(), vec![("echo: again".to_owned(), false)]);
    assert_gone(&marker);
}
