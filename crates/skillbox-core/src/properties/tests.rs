//! The frontmatter interpreted: the name rules, lengths, known and unknown fields, kinds and
//! wrong types, and the verbatim fields built either way.

use std::sync::Arc;

use super::*;
use crate::diagnostic::{Diagnostic, Severity};
use crate::frontmatter::parse_head;

fn run(source: &str, directory: &str, mode: ValidationMode) -> (SkillProperties, Vec<Diagnostic>) {
    let parsed = parse_head(source.as_bytes(), false, 100_000).unwrap();
    interpret(
        &parsed.fields,
        PropertiesContext {
            directory_name: Some(directory),
            has_skill_manifest: false,
            mode,
        },
    )
}

fn codes(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
    diagnostics.iter().map(|d| d.code.as_str()).collect()
}

#[test]
fn raw_fields_rebuilt_from_the_yaml_equal_those_built_from_the_fields() {
    let source = "---\nname: pdf\ndescription: Fill forms.\nversion: 1.10\nmetadata:\n  build: 007\n  nested: [1.50, x]\nhooks: {a: [1, 2]}\nflag: true\n# a comment\nempty:\n---\nbody\n";
    let parsed = parse_head(source.as_bytes(), false, 100_000).unwrap();
    let context = PropertiesContext {
        directory_name: Some("pdf"),
        has_skill_manifest: false,
        mode: ValidationMode::Lenient,
    };
    let (eager, _) = interpret(&parsed.fields, context);
    let (lazy, _) = interpret_parsed(&parsed.fields, Arc::clone(&parsed.yaml), context);
    assert_eq!(lazy.raw(), eager.raw());
    assert_eq!(
        serde_json::Value::Object(eager.raw().clone().into_iter().collect()),
        serde_json::json!({
            "name": "pdf",
            "description": "Fill forms.",
            "version": "1.10",
            "metadata": {"build": "007", "nested": ["1.50", "x"]},
            "hooks": {"a": [1, 2]},
            "flag": true,
            "empty": null,
        })
    );
}

#[test]
fn valid_skill_has_no_diagnostics() {
    let (properties, diagnostics) = run(
        "---\nname: pdf-tools\ndescription: Fill PDFs.\nmetadata:\n  version: 1.0\n  author: me\n---\n",
        "pdf-tools",
        ValidationMode::Strict,
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(properties.metadata["version"], serde_json::json!("1.0"));
}

#[test]
fn name_rules() {
    let cases = [
        (
            "Bad-Name",
            vec!["name-not-lowercase", "name-directory-mismatch"],
        ),
        ("-bad", vec!["name-hyphen-edge", "name-directory-mismatch"]),
        (
            "a--b",
            vec!["name-consecutive-hyphens", "name-directory-mismatch"],
        ),
        (
            "a_b",
            vec!["name-invalid-characters", "name-directory-mismatch"],
        ),
        ("other", vec!["name-directory-mismatch"]),
    ];
    for (name, expected) in cases {
        let problems = name_problems(name, Some("dir"));
        assert_eq!(codes(&problems), expected, "{name}");
    }
    let long = "a".repeat(65);
    assert_eq!(
        codes(&name_problems(&long, Some(&long))),
        vec!["name-too-long"]
    );
    assert!(name_problems("技能", Some("技能")).is_empty());
    assert!(name_problems("навык", Some("навык")).is_empty());
    assert_eq!(
        codes(&name_problems("НАВЫК", Some("НАВЫК"))),
        vec!["name-not-lowercase"]
    );
    // NFKC: a decomposed `é` in the folder name matches a composed one in the field.
    assert!(name_problems("caf\u{e9}", Some("cafe\u{301}")).is_empty());
}

#[test]
fn lengths_are_counted_in_characters() {
    let description = "é".repeat(1024);
    let source = format!("---\nname: x\ndescription: {description}\n---\n");
    let (_, diagnostics) = run(&source, "x", ValidationMode::Strict);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let source = format!("---\nname: x\ndescription: {description}é\n---\n");
    let (_, diagnostics) = run(&source, "x", ValidationMode::Strict);
    assert_eq!(codes(&diagnostics), vec!["description-too-long"]);
}

#[test]
fn extension_fields_warn_only_when_unknown_and_fail_strict() {
    let source = "---\nname: x\ndescription: d\ndisable-model-invocation: true\nfavourite-colour: blue\n---\n";
    let (properties, diagnostics) = run(source, "x", ValidationMode::Lenient);
    assert!(properties.disable_model_invocation);
    assert_eq!(codes(&diagnostics), vec!["field-unknown"]);
    assert_eq!(diagnostics[0].severity, Severity::Warning);
    assert_eq!(
        (diagnostics[0].line, diagnostics[0].column),
        (Some(5), Some(1))
    );
    let (_, diagnostics) = run(source, "x", ValidationMode::Strict);
    assert_eq!(codes(&diagnostics), vec!["field-unknown"]);
    assert_eq!(diagnostics[0].severity, Severity::Error);
}

#[test]
fn allowed_tools_string_or_list() {
    let (properties, _) = run(
        "---\nname: x\ndescription: d\nallowed-tools: Bash(git add:*) Read, Grep\n---\n",
        "x",
        ValidationMode::Lenient,
    );
    assert_eq!(
        properties.allowed_tools,
        vec!["Bash(git add:*)", "Read", "Grep"]
    );
    let (properties, _) = run(
        "---\nname: x\ndescription: d\nallowed-tools: [Read, Grep]\n---\n",
        "x",
        ValidationMode::Lenient,
    );
    assert_eq!(properties.allowed_tools, vec!["Read", "Grep"]);
}

#[test]
fn files_and_secrets() {
    let (properties, diagnostics) = run(
        "---\nname: x\ndescription: d\nfiles:\n  - path: a.md\n    description: A\n  - path: b.md\nrequired_environment_variables:\n  - API_TOKEN\n  - name: OTHER_KEY\n    prompt: key?\n---\n",
        "x",
        ValidationMode::Lenient,
    );
    assert_eq!(properties.files.len(), 2);
    assert_eq!(codes(&diagnostics), vec!["files-entry-invalid"]);
    assert_eq!(properties.declared_secrets, vec!["API_TOKEN", "OTHER_KEY"]);
}

#[test]
fn missing_fields() {
    let (_, diagnostics) = run("---\nlicense: MIT\n---\n", "x", ValidationMode::Lenient);
    assert_eq!(codes(&diagnostics), vec!["field-missing", "field-missing"]);
    let (_, diagnostics) = run(
        "---\nname: ''\ndescription: d\n---\n",
        "x",
        ValidationMode::Lenient,
    );
    assert_eq!(codes(&diagnostics), vec!["field-empty"]);
}

#[test]
fn wrong_types_are_named() {
    let (_, diagnostics) = run(
        "---\nname: x\ndescription: [a, b]\nuser-invocable: maybe\n---\n",
        "x",
        ValidationMode::Lenient,
    );
    assert_eq!(codes(&diagnostics), vec!["field-type", "field-type"]);
    assert_eq!(diagnostics[0].field.as_deref(), Some("description"));
    assert_eq!(diagnostics[1].field.as_deref(), Some("user-invocable"));
}
