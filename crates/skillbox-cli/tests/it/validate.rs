//! `skillbox validate`: verdicts, exit codes, diagnostics output.

use super::support::{json_stdout, skill_md, skillbox, write_tree};

#[test]
fn bundled_examples_are_valid() {
    let output = skillbox()
        .args(["validate", "examples/skills"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.ends_with("8 skill(s) checked: 8 valid, 0 invalid; 0 error(s), 0 warning(s)\n"),
        "{stdout}"
    );
}

#[test]
fn diagnostics_human_output() {
    let output = skillbox()
        .args(["validate", "tests/fixtures/diagnostics"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!(String::from_utf8(output.stdout).unwrap());
}

#[test]
fn diagnostics_json_output() {
    let output = skillbox()
        .args(["validate", "--json", "tests/fixtures/diagnostics"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    insta::assert_json_snapshot!(json_stdout(&output));
}

#[test]
fn colon_in_description_gets_a_quoting_hint_with_position() {
    let output = skillbox()
        .args([
            "validate",
            "--json",
            "tests/fixtures/diagnostics/colon-description/SKILL.md",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let report = json_stdout(&output);
    let diagnostic = &report["skills"][0]["diagnostics"][0];
    assert_eq!(diagnostic["code"], "yaml-invalid");
    assert_eq!(diagnostic["severity"], "error");
    assert_eq!(diagnostic["line"], 3);
    assert_eq!(
        diagnostic["hint"],
        "the value of `description` contains `: `, which YAML reads as a new mapping; quote the whole value: description: \"Use when: the user asks for a summary\""
    );
}

#[test]
fn spec_only_mode_rejects_extension_fields_that_lenient_mode_accepts() {
    let lenient = skillbox()
        .args(["validate", "examples/skills/release-checklist"])
        .output()
        .unwrap();
    assert_eq!(lenient.status.code(), Some(0));
    let strict = skillbox()
        .args([
            "validate",
            "--spec-only",
            "--json",
            "examples/skills/release-checklist",
        ])
        .output()
        .unwrap();
    assert_eq!(strict.status.code(), Some(1));
    let report = json_stdout(&strict);
    let diagnostic = &report["skills"][0]["diagnostics"][0];
    assert_eq!(diagnostic["code"], "field-unknown");
    let message = diagnostic["message"].as_str().unwrap();
    assert!(
        message.contains("`disable-model-invocation`") && message.contains("`argument-hint`"),
        "{message}"
    );
}

#[test]
fn missing_path_is_a_usage_error() {
    let output = skillbox()
        .args(["validate", "no/such/place"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("`no/such/place` does not exist"),
        "{stderr}"
    );
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let output = skillbox().args(["validate", "--bogus"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--bogus"));
}

#[test]
fn folder_without_skills_is_invalid_and_says_so() {
    let temp = tempfile::tempdir().unwrap();
    let output = skillbox()
        .args(["validate", "--json"])
        .arg(temp.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let report = json_stdout(&output);
    assert_eq!(report["checked"], 0);
    assert!(
        report["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("no skills found under")
    );
}

#[test]
fn without_paths_validates_the_default_roots() {
    let temp = tempfile::tempdir().unwrap();
    write_tree(
        temp.path(),
        &[(
            ".claude/skills/good/SKILL.md",
            &skill_md("good", "Good skill."),
        )],
    );
    write_tree(
        temp.path(),
        &[("skills/Bad/SKILL.md", &skill_md("Bad", "Bad name."))],
    );
    let output = skillbox()
        .current_dir(temp.path())
        .env("HOME", temp.path().join("home"))
        .args(["validate", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let report = json_stdout(&output);
    assert_eq!(report["checked"], 2);
    assert_eq!(report["invalid"], 1);
}

#[test]
fn a_skill_md_with_a_10_mb_body_validates_without_reading_the_body() {
    let temp = tempfile::tempdir().unwrap();
    let mut text = skill_md("huge", "A skill with an enormous body.");
    text.push_str(&"All work and no play makes a long body.\n".repeat(260_000));
    write_tree(temp.path(), &[("huge/SKILL.md", &text)]);
    assert!(text.len() > 10_000_000);
    let output = skillbox()
        .args(["validate"])
        .arg(temp.path().join("huge"))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    // `show` reads the body, capped at the body limit, and says it was cut.
    let output = skillbox()
        .args(["show", "--json", "huge", "--root"])
        .arg(temp.path())
        .output()
        .unwrap();
    let view = json_stdout(&output);
    assert_eq!(view["body_truncated"], true);
    assert!(view["body"].as_str().unwrap().len() <= 1024 * 1024);
}

#[test]
fn fifos_named_like_skill_files_are_reported_without_blocking() {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[(
            "tools-pipe/SKILL.md",
            &skill_md("tools-pipe", "Has a piped tools.json."),
        )],
    );
    std::fs::create_dir_all(root.path().join("piped")).unwrap();
    skillbox_testkit::make_fifo(&root.path().join("piped/SKILL.md"));
    skillbox_testkit::make_fifo(&root.path().join("tools-pipe/tools.json"));
    let output = skillbox()
        .args(["validate", "--json"])
        .arg(root.path())
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report = json_stdout(&output);
    let messages: Vec<(String, String)> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|skill| skill["diagnostics"].as_array().unwrap())
        .map(|d| {
            (
                d["file"].as_str().unwrap_or_default().to_owned(),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for file in ["piped/SKILL.md", "tools-pipe/tools.json"] {
        assert!(
            messages.iter().any(|(path, message)| path.ends_with(file)
                && message.contains("is a FIFO (named pipe), not a regular file")),
            "{file}: {messages:#?}"
        );
    }
}

#[test]
fn the_reserved_guide_name_is_refused_by_validate_and_list() {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[
            (
                "guide/skill.toml",
                "name = \"skills.protocol.guide\"\nversion = \"9.0.0\"\ndescription = \"Mine.\"\nkind = \"instruction\"\n",
            ),
            ("guide/SKILL.md", &skill_md("guide", "Mine.")),
            ("fine/SKILL.md", &skill_md("fine", "A fine skill.")),
        ],
    );
    let output = skillbox()
        .args(["validate", "--json"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report = json_stdout(&output);
    let refused = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|skill| skill["path"].as_str().unwrap().ends_with("guide"))
        .unwrap();
    assert_eq!(refused["valid"], false);
    let diagnostic = &refused["diagnostics"][0];
    assert_eq!(diagnostic["code"], "name-reserved", "{refused}");
    assert!(
        diagnostic["file"]
            .as_str()
            .unwrap()
            .ends_with("guide/skill.toml"),
        "{diagnostic}"
    );
    assert_eq!(
        diagnostic["message"],
        "skill name `skills.protocol.guide` is reserved for the runtime's built-in skill; this skill is not loaded"
    );

    let output = skillbox()
        .args(["list", "--json"])
        .arg(root.path())
        .output()
        .unwrap();
    assert!(output.status.success());
    let listing = json_stdout(&output);
    let listed: Vec<&str> = listing
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, vec!["fine"]);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("error[name-reserved]") && stderr.contains("is reserved"),
        "{stderr}"
    );
}

#[test]
fn tool_name_clashes_are_warned_about_as_the_provider_decides_them() {
    let earlier = tempfile::tempdir().unwrap();
    let later = tempfile::tempdir().unwrap();
    let tool = |name: &str| {
        format!(
            r#"[{{"name": "{name}", "description": "A tool.", "script": "scripts/run.py", "parameters": {{}}}}]"#
        )
    };
    write_tree(
        earlier.path(),
        &[
            ("alpha/SKILL.md", &skill_md("alpha", "Alpha.")),
            ("alpha/tools.json", &tool("shared")),
            ("alpha/scripts/run.py", "print('{}')\n"),
        ],
    );
    write_tree(
        later.path(),
        &[
            ("beta/SKILL.md", &skill_md("beta", "Beta.")),
            ("beta/tools.json", &tool("shared")),
            ("beta/scripts/run.py", "print('{}')\n"),
            (
                "grabby/SKILL.md",
                &skill_md("grabby", "Grabs a built-in name."),
            ),
            ("grabby/tools.json", &tool("list_skills")),
            ("grabby/scripts/run.py", "print('{}')\n"),
        ],
    );
    let output = skillbox()
        .arg("validate")
        .arg("--json")
        .arg(earlier.path())
        .arg(later.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "warnings only");
    let report = json_stdout(&output);
    let diagnostics_of = |name: &str| {
        report["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|skill| skill["name"] == name)
            .unwrap()["diagnostics"]
            .as_array()
            .unwrap()
            .clone()
    };
    assert_eq!(diagnostics_of("beta"), Vec::<serde_json::Value>::new());
    let alpha = diagnostics_of("alpha");
    assert_eq!(alpha.len(), 1, "{alpha:?}");
    assert_eq!(alpha[0]["code"], "tool-name-taken");
    assert_eq!(alpha[0]["line"], 1);
    let message = alpha[0]["message"].as_str().unwrap();
    assert!(
        message.contains("`alpha`") && message.contains("`beta`") && message.contains("later root"),
        "{message}"
    );
    assert!(
        alpha[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("alpha/tools.json")
    );
    let grabby = diagnostics_of("grabby");
    assert_eq!(grabby.len(), 1, "{grabby:?}");
    assert_eq!(grabby[0]["code"], "tool-name-reserved");
    assert_eq!(report["warnings"], 2);
}

/// `--strict` checks more than plain `validate`, never less: every check of skillbox's formats
/// still applies (a broken `tools.json` is an error), and warnings count as errors.
#[test]
fn strict_counts_warnings_as_errors_and_keeps_every_check() {
    let root = tempfile::tempdir().unwrap();
    super::support::write_tree(
        root.path(),
        &[
            (
                "warned/SKILL.md",
                "---\nname: warned\ndescription: Says hello when asked.\nfavourite-colour: blue\n---\nBody.\n",
            ),
            (
                "broken-tools/SKILL.md",
                "---\nname: broken-tools\ndescription: Has tools.\n---\nBody.\n",
            ),
            (
                "broken-tools/tools.json",
                "[{\"name\": \"Bad Name\", \"description\": \"x\"}]",
            ),
        ],
    );
    let validate = |extra: &[&str], skill: &str| {
        skillbox()
            .arg("validate")
            .args(extra)
            .arg("--json")
            .arg(root.path().join(skill))
            .output()
            .unwrap()
    };
    // A warning alone passes plain validation and fails --strict, naming the field.
    assert_eq!(validate(&[], "warned").status.code(), Some(0));
    let strict = validate(&["--strict"], "warned");
    assert_eq!(strict.status.code(), Some(1), "{strict:?}");
    let report = json_stdout(&strict);
    assert_eq!(report["valid"], false);
    assert_eq!(report["skills"][0]["valid"], false);
    assert!(
        report["skills"][0]["diagnostics"]
            .to_string()
            .contains("favourite-colour"),
        "{report}"
    );
    // The tools.json checks hold under --strict ...
    let strict = validate(&["--strict"], "broken-tools");
    assert_eq!(strict.status.code(), Some(1));
    assert!(json_stdout(&strict).to_string().contains("tools.json"));
    // ... and --spec-only, which checks what skills-ref checks, does not look at tools.json.
    assert_eq!(
        validate(&["--spec-only"], "broken-tools").status.code(),
        Some(0)
    );
}
