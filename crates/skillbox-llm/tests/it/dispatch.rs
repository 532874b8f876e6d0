//! `handle_tool_call`: every tool, the aliases models use, and every error a model can cause.

use serde_json::{Value, json};
use skillbox_llm::{ProviderOptions, SkillsProvider, ToolOutcome};

use super::support::{examples_provider, portable, runtime};

fn call(provider: &SkillsProvider, tool: &str, arguments: Value) -> ToolOutcome {
    runtime().block_on(provider.handle_tool_call(tool, &arguments))
}

#[test]
fn load_skill_substitutes_arguments_and_lists_resources() {
    let provider = examples_provider(ProviderOptions::default());
    let outcome = call(
        &provider,
        "load_skill",
        json!({"skill": "commit-message", "arguments": "fix the login bug"}),
    );
    assert!(!outcome.is_error);
    let text = outcome.text();
    assert!(text.contains("fix the login bug"), "{text}");
    assert!(!text.contains("$ARGUMENTS"));
    assert!(!text.starts_with("---"), "frontmatter must not be included");
    insta::assert_snapshot!(portable(&text));
}

#[test]
fn load_skill_lists_files_scripts_and_tools() {
    let provider = examples_provider(ProviderOptions::default());
    let text = call(
        &provider,
        "load_skill",
        json!({"skill": "api-design-review"}),
    )
    .text();
    assert!(
        text.contains("Files you can read with read_skill_file:\n- guidelines/rest-naming.md: "),
        "{text}"
    );
    let text = call(&provider, "load_skill", json!({"skill": "csv-insights"})).text();
    assert!(
        text.contains(
            "Scripts you can run with use_skill:\n- scripts/head.sh\n- scripts/summarize.py"
        ),
        "{text}"
    );
    let text = call(&provider, "load_skill", json!({"skill": "text-tools"})).text();
    assert!(
        text.contains("Tools this skill provides (call them directly):\n- count_words:"),
        "{text}"
    );
}

#[test]
fn aliases_for_the_skill_parameter_and_string_arguments() {
    let provider = examples_provider(ProviderOptions::default());
    for arguments in [
        json!({"skill_name": "csv-insights"}),
        json!({"skillName": "csv-insights"}),
        json!({"name": "csv-insights"}),
        Value::String("{\"skill\": \"csv-insights\"}".into()),
    ] {
        let outcome = call(&provider, "load_skill", arguments.clone());
        assert!(!outcome.is_error, "{arguments}: {outcome:?}");
    }
}

#[test]
fn list_skills_through_load_skill_hides_person_only_skills() {
    let provider = examples_provider(ProviderOptions::default());
    let outcome = call(&provider, "load_skill", json!({"list_skills": true}));
    let names: Vec<&str> = outcome.content["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"csv-insights") && !names.contains(&"release-checklist"),
        "{names:?}"
    );
    let refused = call(
        &provider,
        "load_skill",
        json!({"skill": "release-checklist"}),
    );
    assert!(refused.is_error);
    assert!(refused.text().contains("only be invoked by a person"));
}

#[test]
fn use_skill_and_tools_json_tools_run_through_the_executor() {
    let provider = examples_provider(ProviderOptions::default());
    let sample = super::support::repo_root().join("examples/skills/csv-insights/assets/sample.csv");
    let outcome = call(
        &provider,
        "use_skill",
        json!({"skill": "csv-insights", "script": "head.sh", "args": [sample.display().to_string(), "1"]}),
    );
    assert!(!outcome.is_error, "{outcome:?}");
    assert_eq!(
        outcome.content["stdout"].as_str().unwrap().lines().count(),
        2
    );
    let outcome = call(&provider, "count_words", json!({"text": "one two"}));
    assert_eq!(outcome.content["words"], 2, "{outcome:?}");
    let outcome = call(&provider, "slugify", json!({}));
    assert!(
        outcome.is_error && outcome.text().contains("missing required parameter `text`"),
        "{outcome:?}"
    );
}

#[test]
fn read_skill_file_is_contained_and_capped() {
    let provider = examples_provider(ProviderOptions {
        max_file_bytes: 100,
        ..ProviderOptions::default()
    });
    let outcome = call(
        &provider,
        "read_skill_file",
        json!({"skill": "api-design-review", "path": "guidelines/rest-naming.md"}),
    );
    let content = outcome.content["content"].as_str().unwrap();
    assert!(content.ends_with("[file cut at 100 bytes]"), "{content}");
    for path in [
        "../commit-message/SKILL.md",
        "/etc/passwd",
        "guidelines/../../csv-insights/SKILL.md",
    ] {
        let outcome = call(
            &provider,
            "read_skill_file",
            json!({"skill": "api-design-review", "path": path}),
        );
        assert!(outcome.is_error, "{path}: {outcome:?}");
        assert!(
            outcome.text().contains("leaves the skill folder"),
            "{path}: {}",
            outcome.text()
        );
    }
}

#[test]
fn errors_a_model_can_act_on() {
    let provider = examples_provider(ProviderOptions::default());
    let cases = [
        (
            "no_such_tool",
            json!({}),
            "unknown tool `no_such_tool`; the tools are: load_skill, use_skill, read_skill_file, count_words, slugify",
        ),
        (
            "load_skill",
            Value::String("{not json".into()),
            "are not valid JSON",
        ),
        ("load_skill", json!([1, 2]), "must be a JSON object"),
        (
            "load_skill",
            json!({"skill": "comit-message"}),
            "did you mean `commit-message`?",
        ),
        (
            "use_skill",
            json!({"skill": "csv-insights"}),
            "needs the parameter `script`",
        ),
        (
            "use_skill",
            json!({"script": "x.py"}),
            "needs the parameter `skill`",
        ),
        (
            "use_skill",
            json!({"skill": "csv-insights", "script": "head.sh", "args": [{"a": 1}]}),
            "`args[0]` must be a string",
        ),
        (
            "read_skill_file",
            json!({"skill": "csv-insights"}),
            "needs the parameter `path`",
        ),
        (
            "list_skills",
            json!({"cursor": "forged"}),
            "not a cursor this server issued",
        ),
        (
            "describe_skill",
            json!({"name": "csv-insights", "detail": "everything"}),
            "parameter `detail`",
        ),
    ];
    for (tool, arguments, expected) in cases {
        let outcome = call(&provider, tool, arguments.clone());
        assert!(outcome.is_error, "{tool} {arguments}: {outcome:?}");
        assert!(
            outcome.text().contains(expected),
            "{tool} {arguments}: {}",
            outcome.text()
        );
    }
}

#[test]
fn protocol_catalog_tools() {
    let provider = examples_provider(ProviderOptions::default());
    let first = call(
        &provider,
        "list_skills",
        json!({"limit": 3, "detail": "summary"}),
    );
    let page: Vec<&str> = first.content["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        page,
        vec!["api-design-review", "commit-message", "csv-insights"]
    );
    let cursor = first.content["next_cursor"].as_str().unwrap().to_owned();
    let second = call(
        &provider,
        "list_skills",
        json!({"limit": 10, "cursor": cursor}),
    );
    let rest: Vec<&str> = second.content["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(rest, vec!["release-checklist", "text-tools", "text.stats"]);
    assert_eq!(second.content["next_cursor"], Value::Null);
    let text_stats = second.content["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "text.stats")
        .unwrap()
        .clone();
    assert_eq!(text_stats["version"], "0.10.0");
    let described = call(
        &provider,
        "describe_skill",
        json!({"name": "text.stats", "version": "0.9.0", "detail": "manifest"}),
    );
    assert_eq!(described.content["skill"]["manifest"]["version"], "0.9.0");
    assert_eq!(
        described.content["skill"]["manifest"]["runtime"]["export"],
        "main"
    );
    let guide = call(&provider, "load_skills_protocol_guide", json!({}));
    assert!(
        guide.content["content"]
            .as_str()
            .unwrap()
            .starts_with("# Skills Protocol Overview")
    );
}
