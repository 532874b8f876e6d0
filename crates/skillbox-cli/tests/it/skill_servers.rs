//! What a skill declares it needs (issue 27's declarations): MCP servers in the frontmatter
//! (`mcp-servers`), in a `.mcp.json` beside `SKILL.md` and in Codex's `agents/openai.yaml`, and
//! other skills (`requires`), as
//! `validate`, `show` and `list` report them through the real binary.

use serde_json::Value;

use super::support::{json_stdout, skillbox, write_tree};

fn tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[
            (
                "weather/SKILL.md",
                "---\nname: weather\ndescription: Weather forecasts. Use when asked about the weather.\nmcp-servers:\n  forecast:\n    command: python3\n    args: [server.py]\n    env: [WEATHER_KEY]\nrequires: [units]\n---\nCall forecast__get.\n",
            ),
            (
                "weather/.mcp.json",
                r#"{"mcpServers": {"alerts": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}"#,
            ),
            ("weather/server.py", "print('server')\n"),
            (
                "weather/agents/openai.yaml",
                "interface:\n  display_name: Weather\ndependencies:\n  tools:\n    - type: mcp\n      value: github\n      transport: streamable_http\n      url: https://api.githubcopilot.com/mcp/\n",
            ),
            (
                "units/SKILL.md",
                "---\nname: units\ndescription: Converts units. Use when asked to convert units.\n---\nConvert.\n",
            ),
            (
                "broken/SKILL.md",
                "---\nname: broken\ndescription: Broken declarations. Use never.\nmcp-servers:\n  evil:\n    command: ../../bin/sh\nrequires: [nowhere, loop-a]\n---\nBody.\n",
            ),
            (
                "loop-a/SKILL.md",
                "---\nname: loop-a\ndescription: First of a cycle. Use never.\nrequires: [loop-b]\n---\nBody.\n",
            ),
            (
                "loop-b/SKILL.md",
                "---\nname: loop-b\ndescription: Second of a cycle. Use never.\nrequires: [loop-a]\n---\nBody.\n",
            ),
        ],
    );
    root
}

fn diagnostics_of(report: &Value, skill: &str) -> Vec<(String, String, Option<u64>)> {
    report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["name"] == skill)
        .unwrap_or_else(|| panic!("no {skill} in {report}"))["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|diagnostic| {
            (
                diagnostic["code"].as_str().unwrap().to_owned(),
                diagnostic["message"].as_str().unwrap().to_owned(),
                diagnostic["line"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn declared_servers_and_required_skills_are_read_checked_and_reported() {
    let root = tree();
    let validated = skillbox()
        .args(["validate", "--json"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(validated.status.code(), Some(1));
    let report = json_stdout(&validated);
    assert_eq!(diagnostics_of(&report, "weather"), Vec::new());
    let broken = diagnostics_of(&report, "broken");
    assert!(
        broken
            .iter()
            .any(|(code, message, line)| code == "server-declaration-invalid"
                && message.contains("`command` leaves the skill's folder")
                && *line == Some(6)),
        "{broken:?}"
    );
    assert!(
        broken
            .iter()
            .any(|(code, message, _)| code == "requires-invalid"
                && message.contains("`nowhere`, which is not among the skills found")),
        "{broken:?}"
    );
    let cycle = diagnostics_of(&report, "loop-a");
    assert_eq!(cycle.len(), 1, "{cycle:?}");
    assert!(
        cycle[0].1.contains("`loop-a` → `loop-b` → `loop-a`"),
        "{cycle:?}"
    );
    assert_eq!(diagnostics_of(&report, "loop-b"), Vec::new());

    let listed = skillbox()
        .args(["list", "--json"])
        .arg(root.path())
        .output()
        .unwrap();
    let listed = json_stdout(&listed);
    let weather = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|skill| skill["name"] == "weather")
        .unwrap()
        .clone();
    assert_eq!(
        weather["mcp_servers"],
        serde_json::json!(["forecast", "alerts", "github"])
    );
    assert_eq!(weather["requires"], serde_json::json!(["units"]));

    let shown = skillbox()
        .args(["show", "weather", "--json"])
        .arg(root.path())
        .output()
        .unwrap();
    let shown = json_stdout(&shown);
    assert_eq!(
        shown["mcp_servers"],
        serde_json::json!([
            {"name": "forecast", "transport": "stdio", "command": "python3", "args": ["server.py"], "env": ["WEATHER_KEY"], "declared_in": "SKILL.md"},
            {"name": "alerts", "transport": "streamable_http", "url": "http://127.0.0.1:9/mcp", "declared_in": ".mcp.json"},
            {"name": "github", "transport": "streamable_http", "url": "https://api.githubcopilot.com/mcp/", "declared_in": "agents/openai.yaml"},
        ])
    );
    let human = skillbox()
        .args(["show", "weather"])
        .arg(root.path())
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(human.contains("requires       units"), "{human}");
    assert!(
        human.contains("mcp server     forecast: python3 server.py (env WEATHER_KEY) [SKILL.md]"),
        "{human}"
    );
    assert!(
        human.contains("mcp server     alerts: http://127.0.0.1:9/mcp [.mcp.json]"),
        "{human}"
    );
}
