//! `skillbox mcp` seen through the MCP Inspector's CLI, the reference MCP client from npm
//! (pinned in scripts/test-node, installed into target/test-node by scripts/setup-test-node.sh on
//! first use): it spawns `skillbox mcp examples/skills` over stdio, initializes, and lists the
//! tools, prompts and resources, which must hold the example skills.

use std::process::Command;

use serde_json::Value;
use skillbox_testkit::{peer_inspector, repo_root};

/// How long one Inspector run (node start, server spawn, one request) may take before it is
/// killed: far above the second or two it takes, for a loaded machine.
const INSPECTOR_TIMEOUT_SECONDS: u32 = 120;

/// Run the Inspector's CLI against `skillbox mcp examples/skills` with `method` and `extra`
/// arguments, and return its JSON answer.
fn inspect(method: &str, extra: &[&str]) -> Value {
    let launcher = peer_inspector();
    let home = tempfile::tempdir().unwrap();
    let output = Command::new("timeout")
        .args([
            "--kill-after=5",
            &INSPECTOR_TIMEOUT_SECONDS.to_string(),
            "node",
        ])
        .arg(&launcher)
        .arg("--cli")
        .arg(env!("CARGO_BIN_EXE_skillbox"))
        .arg("mcp")
        .arg(repo_root().join("examples/skills"))
        .args(["--method", method])
        .args(extra)
        .current_dir(repo_root())
        // No user-level skills, and the Inspector's catalog file stays in the temporary folder.
        .env("HOME", home.path())
        .env("MCP_CATALOG_PATH", home.path().join("mcp.json"))
        .env_remove("SKILLBOX_ROOTS")
        .env_remove("SKILLBOX_LOG")
        .output()
        .expect("timeout and node run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Inspector's {method} failed ({}):\n{stderr}",
        output.status
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "the Inspector's {method} answer is not JSON ({error}):\n{}\nstderr:\n{stderr}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// The entries of `list` (an array field of `answer`) as (key field, entry) pairs.
fn entries<'a>(answer: &'a Value, list: &str, key: &str) -> Vec<(&'a str, &'a Value)> {
    answer[list]
        .as_array()
        .unwrap_or_else(|| panic!("no `{list}` array in {answer:#}"))
        .iter()
        .map(|entry| {
            let name = entry[key]
                .as_str()
                .unwrap_or_else(|| panic!("an entry of `{list}` without `{key}`: {entry:#}"));
            (name, entry)
        })
        .collect()
}

fn find<'a>(found: &[(&str, &'a Value)], name: &str) -> &'a Value {
    found
        .iter()
        .find(|(each, _)| *each == name)
        .map(|(_, entry)| *entry)
        .unwrap_or_else(|| {
            let names: Vec<&str> = found.iter().map(|(each, _)| *each).collect();
            panic!("`{name}` is not among {names:?}")
        })
}

/// Fail unless the entry's `description` mentions `word` (in any case).
fn assert_description_mentions(entry: &Value, word: &str) {
    assert!(
        entry["description"]
            .as_str()
            .is_some_and(|text| text.to_lowercase().contains(word)),
        "the description does not mention `{word}`: {entry:#}"
    );
}

#[test]
fn inspector_lists_the_built_in_and_the_skill_tools() {
    let answer = inspect("tools/list", &[]);
    let tools = entries(&answer, "tools", "name");
    for built_in in ["load_skill", "use_skill", "read_skill_file"] {
        let tool = find(&tools, built_in);
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool:#}");
    }
    let count_words = find(&tools, "count_words");
    assert_description_mentions(count_words, "words");
    assert!(
        count_words["inputSchema"]["properties"]["text"].is_object(),
        "count_words takes `text`: {count_words:#}"
    );
    find(&tools, "slugify");
}

#[test]
fn inspector_lists_a_prompt_per_skill() {
    let answer = inspect("prompts/list", &[]);
    let prompts = entries(&answer, "prompts", "name");
    assert_description_mentions(find(&prompts, "commit-message"), "commit");
    find(&prompts, "csv-insights");
}

#[test]
fn inspector_lists_the_skill_files_as_resources() {
    let answer = inspect("resources/list", &[]);
    let resources = entries(&answer, "resources", "uri");
    find(&resources, "skill://commit-message/SKILL.md");
    find(&resources, "skill://text-tools/tools.json");
}

#[test]
fn inspector_reads_a_skill_md_resource_as_the_file() {
    let uri = "skill://commit-message/SKILL.md";
    let answer = inspect("resources/read", &["--uri", uri]);
    let contents = answer["contents"]
        .as_array()
        .unwrap_or_else(|| panic!("no `contents` in {answer:#}"));
    assert_eq!(contents.len(), 1, "{answer:#}");
    assert_eq!(contents[0]["uri"], uri);
    let expected =
        fs_err::read_to_string(repo_root().join("examples/skills/commit-message/SKILL.md"))
            .unwrap();
    assert_eq!(contents[0]["text"].as_str(), Some(expected.as_str()));
}
