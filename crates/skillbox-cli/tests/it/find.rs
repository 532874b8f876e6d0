//! Searching the skills through every door: `skillbox find`, `find_skills` on `/rpc` (our
//! extension method), and the `find_skills` tool over MCP.

use serde_json::json;

use super::mcp::{INITIALIZE, INITIALIZED, exchange_in};
use super::serve::start_server_with;
use super::serve_runs::Server;
use super::support::{
    assert_exit, json_stdout, make_world_readable, skillbox, write_reports, write_tree,
};

/// A GIF maker, a skill hidden from models, one whose description holds a terminal escape,
/// and a dozen distractors.
fn search_tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[
            (
                "gif-maker/SKILL.md",
                "---\nname: gif-maker\ndescription: Make animated GIFs for Slack reactions.\n---\nBody.\n",
            ),
            (
                "release-gif/SKILL.md",
                "---\nname: release-gif\ndescription: Publish animated GIF release notes.\ndisable-model-invocation: true\n---\nBody.\n",
            ),
            (
                "ansi-notes/SKILL.md",
                "---\nname: ansi-notes\ndescription: \"Meeting notes \\e[31mred\\e[0m and minutes.\"\n---\nBody.\n",
            ),
            (
                "csv-merge/SKILL.md",
                "---\nname: csv-merge\ndescription: Merge CSV exports into one spreadsheet.\n---\nBody.\n",
            ),
        ],
    );
    write_reports(root.path(), 12);
    make_world_readable(root.path());
    root
}

#[test]
fn skillbox_find_ranks_the_corpus_and_prints_text_or_json() {
    let corpus = skillbox_testkit::SkillCorpus::write();
    let output = skillbox()
        .args(["find", "--root"])
        .arg(corpus.root())
        .args(["make", "an", "animated", "GIF", "for", "Slack"])
        .output()
        .unwrap();
    assert_exit(&output, 0);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with(" 1. slack-gif-maker  "), "{text}");
    assert!(text.contains("`skillbox show NAME` shows one"), "{text}");

    let output = skillbox()
        .args(["find", "--json", "--limit", "2", "--root"])
        .arg(corpus.root())
        .arg("test my web app in a browser with playwright")
        .output()
        .unwrap();
    assert_exit(&output, 0);
    let found = json_stdout(&output);
    assert_eq!(found["skills"][0]["name"], "web-app-checks", "{found:#}");
    assert_eq!(found["skills"].as_array().unwrap().len(), 2);
    assert!(found["skills"][0]["score"].as_f64().unwrap() > 0.0);
    assert_eq!(found["skills"][0]["visible_to_model"], true);
    assert!(
        found["skills"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("web-app-checks/SKILL.md")
    );
}

#[test]
fn skillbox_find_exits_1_without_hits_and_2_for_a_bad_query() {
    let tree = search_tree();
    let find = |arguments: &[&str]| {
        skillbox()
            .arg("find")
            .arg("--root")
            .arg(tree.path())
            .args(arguments)
            .output()
            .unwrap()
    };
    let none = find(&["zeppelin"]);
    assert_exit(&none, 1);
    assert!(String::from_utf8_lossy(&none.stdout).contains("No skill matches `zeppelin`"));
    for (arguments, says) in [
        (&["the of"][..], "no words to search for"),
        (&["   "][..], "the query is empty"),
        (&["--limit", "0", "gif"][..], "--limit must be from 1 to 50"),
        (
            &["--limit", "51", "gif"][..],
            "--limit must be from 1 to 50",
        ),
    ] {
        let output = find(arguments);
        assert_exit(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{arguments:?}: {stderr}");
    }
    let huge = "word ".repeat(20_480);
    let output = find(&[&huge]);
    assert_exit(&output, 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains("QUERY: the query is 102400 bytes"));
}

#[test]
fn skillbox_find_keeps_hidden_skills_out_unless_asked_and_shows_escapes_as_text() {
    let tree = search_tree();
    let find = |arguments: &[&str]| {
        let output = skillbox()
            .arg("find")
            .arg("--root")
            .arg(tree.path())
            .args(arguments)
            .output()
            .unwrap();
        assert_exit(&output, 0);
        String::from_utf8(output.stdout).unwrap()
    };
    let text = find(&["release", "notes", "gif"]);
    assert!(!text.contains("release-gif"), "{text}");
    let text = find(&["--all", "release", "notes", "gif"]);
    assert!(
        text.contains("release-gif") && text.contains("(hidden from models)"),
        "{text}"
    );
    let text = find(&["meeting", "minutes"]);
    assert!(text.contains("ansi-notes"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "a raw escape reached the terminal: {text:?}"
    );
}

#[test]
fn find_skills_on_rpc_is_an_extension_method_with_the_tools_answers() {
    let tree = search_tree();
    let data = tempfile::tempdir().unwrap();
    let server = Server::new(start_server_with(
        data.path(),
        &[tree.path().to_path_buf()],
        &["--sandbox", "off", "--no-watch"],
    ));
    let found = server.result("find_skills", json!({"query": "animated gif", "limit": 5}));
    assert_eq!(found["skills"][0]["name"], "gif-maker", "{found:#}");
    assert!(!found.to_string().contains("release-gif"), "{found:#}");
    for (params, says) in [
        (json!({}), "missing required parameter `query`"),
        (json!({"query": 3}), "parameter `query` must be a string"),
        (json!({"query": ""}), "the query is empty"),
        (json!({"query": "gif", "limit": 0}), "parameter `limit`"),
    ] {
        let error = server.error("find_skills", params.clone());
        assert!(
            error["message"].as_str().unwrap_or_default().contains(says),
            "{params}: {error}"
        );
        assert_eq!(error["code"], -32602, "{params}: {error}");
    }
}

#[test]
fn find_skills_over_mcp_is_listed_when_the_prompt_leaves_skills_out() {
    let tree = search_tree();
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let find = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"find_skills","arguments":{"query":"merge spreadsheets"}}}"#;
    let answers = exchange_in(
        tree.path(),
        &["--max-prompt-chars", "700"],
        &[INITIALIZE, INITIALIZED, list, find],
    );
    let tools = answers[1]["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{answers:#?}"));
    let listed = tools
        .iter()
        .find(|tool| tool["name"] == "find_skills")
        .unwrap_or_else(|| panic!("find_skills is not listed: {tools:?}"));
    assert_eq!(listed["annotations"]["readOnlyHint"], true);
    let result = &answers[2]["result"];
    assert_eq!(result["isError"], false, "{result:#}");
    assert!(result.to_string().contains("csv-merge"), "{result:#}");
    let instructions = answers[0]["result"]["instructions"]
        .as_str()
        .unwrap_or_default();
    assert!(instructions.contains("find_skills"), "{instructions}");

    // Every skill fits in the default budget: not listed.
    let answers = exchange_in(tree.path(), &[], &[INITIALIZE, INITIALIZED, list]);
    assert!(
        !answers[1]["result"]["tools"]
            .to_string()
            .contains("find_skills")
    );
}
