//! Hostile catalogs (issue 15): which copy of a name is in effect across roots, names that are
//! invalid or look like another skill's, and `tools.json` schemas providers would reject. Each
//! runs the real binary.

use std::path::Path;

use super::support::{json_stdout, skill_md, skillbox, write_tree};

/// A SKILL.md for `name` with a frontmatter `version`.
fn versioned_skill_md(name: &str, version: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\nversion: {version}\n---\nBody.\n")
}

/// `skillbox show NAME --json` over `roots`, with an optional `--version`.
fn show(roots: &[&Path], name: &str, version: Option<&str>) -> serde_json::Value {
    let mut command = skillbox();
    command.args(["show", "--json", name]);
    for root in roots {
        command.arg("--root").arg(root);
    }
    if let Some(version) = version {
        command.args(["--version", version]);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    json_stdout(&output)
}

/// `skillbox validate --json` over `roots`: the report.
fn validate(roots: &[&Path]) -> serde_json::Value {
    let mut command = skillbox();
    command.args(["validate", "--json"]);
    for root in roots {
        command.arg("--root").arg(root);
    }
    json_stdout(&command.output().unwrap())
}

/// Every diagnostic of the report's skill whose path ends with `folder`.
fn diagnostics_of(report: &serde_json::Value, folder: &str) -> Vec<serde_json::Value> {
    report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|skill| skill["path"].as_str().unwrap().ends_with(folder))
        .flat_map(|skill| skill["diagnostics"].as_array().unwrap().clone())
        .collect()
}

/// The diagnostics with this code among `diagnostics`.
fn with_code<'a>(diagnostics: &'a [serde_json::Value], code: &str) -> Vec<&'a serde_json::Value> {
    diagnostics
        .iter()
        .filter(|diagnostic| diagnostic["code"] == code)
        .collect()
}

/// The text of `skillbox validate` (human output) with the temporary folder replaced.
fn validate_text(roots: &[&Path], temporary: &Path) -> String {
    let mut command = skillbox();
    command.arg("validate");
    for root in roots {
        command.arg("--root").arg(root);
    }
    let output = command.output().unwrap();
    String::from_utf8(output.stdout)
        .unwrap()
        .replace(&temporary.display().to_string(), "[TMP]")
}

#[test]
fn a_later_root_wins_for_a_name_whatever_the_versions_and_says_so() {
    let temp = tempfile::tempdir().unwrap();
    let (early, late) = (temp.path().join("early"), temp.path().join("late"));
    write_tree(
        &early,
        &[(
            "report/SKILL.md",
            &versioned_skill_md("report", "0.0.1", "The early root's."),
        )],
    );
    write_tree(
        &late,
        &[("report/SKILL.md", &skill_md("report", "The late root's."))],
    );
    let roots = [early.as_path(), late.as_path()];
    assert_eq!(
        show(&roots, "report", None)["description"],
        "The late root's."
    );
    // The overridden version is still there when asked for by version.
    let asked = show(&roots, "report", Some("0.0.1"));
    assert_eq!(asked["description"], "The early root's.");

    let report = validate(&roots);
    for folder in ["early/report", "late/report"] {
        let diagnostics = diagnostics_of(&report, folder);
        let shadowing = with_code(&diagnostics, "skill-shadowed");
        assert_eq!(shadowing.len(), 1, "{folder}: {diagnostics:#?}");
        let message = shadowing[0]["message"].as_str().unwrap();
        assert!(
            message.contains("a later root wins for a name, whatever the versions")
                && message.contains("used only when version `0.0.1` is asked for"),
            "{message}"
        );
    }
    insta::assert_snapshot!(validate_text(&roots, temp.path()));
}

#[test]
fn build_metadata_has_no_precedence_and_root_order_breaks_the_tie() {
    let temp = tempfile::tempdir().unwrap();
    let (early, late) = (temp.path().join("early"), temp.path().join("late"));
    write_tree(
        &early,
        &[(
            "stamp/SKILL.md",
            &versioned_skill_md("stamp", "1.0.0+zzz", "Early, with build metadata."),
        )],
    );
    write_tree(
        &late,
        &[(
            "stamp/SKILL.md",
            &versioned_skill_md("stamp", "1.0.0", "Late, without."),
        )],
    );
    let roots = [early.as_path(), late.as_path()];
    // `1.0.0+zzz` is not newer than `1.0.0`: one version, and the later root's copy is used,
    // also when the version is asked for with or without the build metadata.
    assert_eq!(show(&roots, "stamp", None)["description"], "Late, without.");
    for asked in ["1.0.0", "1.0.0+zzz"] {
        assert_eq!(
            show(&roots, "stamp", Some(asked))["description"],
            "Late, without.",
            "{asked}"
        );
    }
    let report = validate(&roots);
    let diagnostics = diagnostics_of(&report, "late/stamp");
    let shadowing = with_code(&diagnostics, "skill-shadowed");
    assert_eq!(shadowing.len(), 1, "{diagnostics:#?}");
    assert!(
        shadowing[0]["message"]
            .as_str()
            .unwrap()
            .contains("build metadata does not count"),
        "{shadowing:#?}"
    );

    // In one root, the first in path order is used and the other reported.
    let same = temp.path().join("same");
    write_tree(
        &same,
        &[
            (
                "a-stamp/SKILL.md",
                &versioned_skill_md("stamp", "2.0.0", "First in path order."),
            ),
            (
                "b-stamp/SKILL.md",
                &versioned_skill_md("stamp", "2.0.0+later.build", "Second."),
            ),
        ],
    );
    assert_eq!(
        show(&[same.as_path()], "stamp", None)["description"],
        "First in path order."
    );
    let report = validate(&[same.as_path()]);
    let diagnostics = diagnostics_of(&report, "b-stamp");
    assert_eq!(
        with_code(&diagnostics, "skill-shadowed").len(),
        1,
        "{diagnostics:#?}"
    );
}

#[test]
fn invisible_characters_in_names_are_named_and_look_alike_names_are_warned_about() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("skills");
    // Folders are named plainly so that paths in the output stay readable; each name differs
    // from its folder's, which is an error of its own.
    write_tree(
        &root,
        &[
            ("pdf/SKILL.md", &skill_md("pdf", "Fill PDF forms.")),
            (
                "zero-width/SKILL.md",
                &skill_md("pdf\u{200B}", "Looks like pdf."),
            ),
            (
                "bidi/SKILL.md",
                &skill_md("pdf\u{202E}fdp", "Reads backwards."),
            ),
            ("cyrillic/SKILL.md", &skill_md("\u{0440}df", "Cyrillic er.")),
        ],
    );
    let report = validate(&[root.as_path()]);
    let invalid = |folder: &str| {
        let diagnostics = diagnostics_of(&report, folder);
        let found = with_code(&diagnostics, "name-invalid-characters");
        assert_eq!(found.len(), 1, "{folder}: {diagnostics:#?}");
        assert_eq!(found[0]["severity"], "error");
        found[0]["message"].as_str().unwrap().to_owned()
    };
    assert_eq!(
        invalid("zero-width"),
        "skill name `pdf\\u{200b}` contains U+200B (a zero-width character); only letters, digits and hyphens are allowed"
    );
    assert_eq!(
        invalid("bidi"),
        "skill name `pdf\\u{202e}fdp` contains U+202E (a bidirectional-text override or isolate); only letters, digits and hyphens are allowed"
    );

    // `рdf` is a valid name, but looks like `pdf`: both are told about the other.
    let confusable = |folder: &str| {
        let diagnostics = diagnostics_of(&report, folder);
        with_code(&diagnostics, "name-confusable")
            .iter()
            .map(|diagnostic| diagnostic["message"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let on_cyrillic = confusable("skills/cyrillic");
    assert_eq!(on_cyrillic.len(), 1, "{on_cyrillic:#?}");
    assert!(
        on_cyrillic[0].contains("looks like `pdf`")
            && on_cyrillic[0].contains("U+0440 `\u{0440}`, a Cyrillic letter"),
        "{on_cyrillic:#?}"
    );
    let on_real = confusable("skills/pdf");
    assert_eq!(on_real.len(), 1, "{on_real:#?}");
    assert!(
        on_real[0].contains("`\u{0440}df`") && on_real[0].contains("`pdf\\u{200b}`"),
        "{on_real:#?}"
    );
    // The diagnostics as a person reads them (the lines naming each skill show the names as
    // written, so only the diagnostics are kept).
    let diagnostics: Vec<String> = validate_text(&[root.as_path()], temp.path())
        .lines()
        .filter(|line| line.starts_with(' '))
        .map(str::to_owned)
        .collect();
    insta::assert_snapshot!(diagnostics.join("\n"));
}

/// A `tools.json` with one problem per tool, of each kind providers reject.
fn hostile_tools_json() -> String {
    let long_name = "t".repeat(65);
    let mut tools = vec![
        serde_json::json!({"name": "fine", "description": "A fine tool.",
            "parameters": {"n": {"type": "integer", "description": "N", "minimum": 1}}}),
        serde_json::json!({"name": "bad_minimum", "description": "x",
            "parameters": {"n": {"type": "integer", "description": "N", "minimum": "abc"}}}),
        serde_json::json!({"name": "bad_items", "description": "x",
            "parameters": {"list": {"type": "array", "description": "L", "items": 5}}}),
        serde_json::json!({"name": "empty_parameter", "description": "x",
            "parameters": {"": {"type": "string", "description": "E"}}}),
        serde_json::json!({"name": "spaced_parameter", "description": "x",
            "parameters": {"file path": {"type": "string", "description": "P"}}}),
        serde_json::json!({"name": "bidi_parameter", "description": "x",
            "parameters": {"ok\u{202E}kO": {"type": "string", "description": "B"}}}),
        serde_json::json!({"name": long_name, "description": "x"}),
        serde_json::json!({"name": "nested", "description": "x",
            "parameters": {"o": {"type": "object", "description": "O",
                "properties": {"a b": {"type": ["string", "null"]}}}}}),
    ];
    for index in 0..10_000 {
        tools.push(serde_json::json!({"name": format!("many_{index}"), "description": "x"}));
    }
    serde_json::to_string_pretty(&tools).unwrap()
}

#[test]
fn tool_schemas_providers_reject_fail_validate_with_positions() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("skills");
    write_tree(
        &root,
        &[
            ("hostile/SKILL.md", &skill_md("hostile", "Hostile tools.")),
            ("hostile/tools.json", &hostile_tools_json()),
        ],
    );
    let report = validate(&[root.as_path()]);
    assert_eq!(report["valid"], false, "{report:#}");
    let diagnostics = diagnostics_of(&report, "hostile");
    let errors: Vec<(&str, u64, &str)> = diagnostics
        .iter()
        .filter(|diagnostic| diagnostic["severity"] == "error")
        .map(|diagnostic| {
            assert!(
                diagnostic["file"]
                    .as_str()
                    .unwrap()
                    .ends_with("hostile/tools.json"),
                "{diagnostic}"
            );
            (
                diagnostic["field"].as_str().unwrap_or_default(),
                diagnostic["line"].as_u64().unwrap(),
                diagnostic["message"].as_str().unwrap(),
            )
        })
        .collect();
    let field_line = |field: &str| {
        errors
            .iter()
            .find(|(found, _, _)| *found == field)
            .map(|(_, line, message)| (*line, *message))
            .unwrap_or_else(|| panic!("no error for `{field}` in {errors:#?}"))
    };
    // Each problem points at its own line of the pretty-printed file.
    let text = hostile_tools_json();
    let line_of =
        |needle: &str| text.lines().position(|line| line.contains(needle)).unwrap() as u64 + 1;
    assert_eq!(
        field_line("tools[1].parameters.n.minimum").0,
        line_of("\"minimum\": \"abc\"")
    );
    assert_eq!(
        field_line("tools[2].parameters.list.items").0,
        line_of("\"items\": 5")
    );
    assert_eq!(field_line("tools[3].parameters.").0, line_of("\"\": {"));
    assert_eq!(
        field_line("tools[4].parameters.file path").0,
        line_of("\"file path\"")
    );
    let (line, message) = field_line("tools[5].parameters.ok\u{202E}kO");
    assert_eq!(line, line_of("\"ok\u{202E}kO\""));
    assert!(
        message
            .contains("`ok\\u{202e}kO` contains U+202E (a bidirectional-text override or isolate)"),
        "{message}"
    );
    let (line, message) = field_line("tools[6].name");
    assert_eq!(line, line_of(&"t".repeat(65)));
    assert!(
        message.contains("is 65 characters; providers accept at most 64"),
        "{message}"
    );
    assert_eq!(
        field_line("tools[7].parameters.o.properties.a b").0,
        line_of("\"a b\"")
    );
    assert!(
        field_line("tools[7].parameters.o.properties.a b.type")
            .1
            .contains("single string")
    );
    let (line, message) = field_line("tools[128]");
    assert_eq!(line, line_of("\"many_120\"") - 1);
    assert!(
        message.contains("declares 10008 tools; only the first 128 are loaded"),
        "{message}"
    );

    // Only the sound tools reach a model, and no more than the cap.
    let output = skillbox()
        .args(["tools", "--format", "openai", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let names: Vec<String> = json_stdout(&output)
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.iter().any(|name| name.ends_with("fine")), "{names:?}");
    for refused in [
        "bad_minimum",
        "bad_items",
        "empty_parameter",
        "spaced_parameter",
        "bidi_parameter",
        "nested",
    ] {
        assert!(
            !names.iter().any(|name| name.ends_with(refused)),
            "{refused} in {names:?}"
        );
    }
    let many = names.iter().filter(|name| name.contains("many_")).count();
    assert_eq!(many, 120, "{names:?}");
}

/// A `tools.json` just under the size cap whose one tool has a problem in each of 40,000
/// parameters: each problem is reported, but only the first ones are located in the text (each
/// location scans it), so loading the catalog stays linear instead of taking minutes.
#[test]
fn a_problem_in_every_parameter_does_not_stall_the_catalog() {
    let temporary = tempfile::tempdir().unwrap();
    let root = temporary.path();
    let parameters: Vec<String> = (0..40_000).map(|index| format!("\"p{index}\":1")).collect();
    let tools = format!(
        "[{{\"name\":\"wide\",\"description\":\"d\",\"parameters\":{{{}}}}}]",
        parameters.join(",")
    );
    write_tree(
        root,
        &[
            (
                "wide/SKILL.md",
                &skill_md("wide", "Many broken parameters."),
            ),
            ("wide/tools.json", &tools),
        ],
    );
    // Generous: the catalog loads in about a second; before, this took minutes.
    let output = skillbox()
        .args(["validate", "--json", "--root"])
        .arg(root)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let report = json_stdout(&output);
    let diagnostics = diagnostics_of(&report, "wide");
    let invalid = with_code(&diagnostics, "tool-invalid");
    assert!(invalid.len() > 40_000, "{}", invalid.len());
    // The first problems point at their parameter, the later ones at their tool.
    let column_of = |diagnostic: &serde_json::Value| diagnostic["column"].as_u64();
    assert!(column_of(invalid[0]) > Some(40), "{}", invalid[0]);
    assert_eq!(column_of(invalid[30_000]), Some(2), "{}", invalid[30_000]);
}

/// Two published skills with one name and no version under one root (as Anthropic's and
/// OpenAI's `skill-creator`): one is in effect for models, each copy's warning says which is
/// in effect and why, `list` counts the warnings, and the other copy is reached by its path in
/// the root wherever a skill name goes.
#[test]
fn a_shadowed_copy_in_one_root_is_reached_by_its_path_and_each_copy_says_which_is_used() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("skills");
    write_tree(
        &root,
        &[
            (
                "anthropic/skill-creator/SKILL.md",
                "---\nname: skill-creator\ndescription: Anthropic's. Use to create skills.\n---\nAnthropic body.\n",
            ),
            (
                "openai/skill-creator/SKILL.md",
                "---\nname: skill-creator\ndescription: OpenAI's. Use to create skills.\n---\nOpenAI body.\n",
            ),
        ],
    );
    // The name finds the first in path order; the path finds either copy.
    assert_eq!(
        show(&[root.as_path()], "skill-creator", None)["description"],
        "Anthropic's. Use to create skills."
    );
    assert_eq!(
        show(&[root.as_path()], "openai/skill-creator", None)["description"],
        "OpenAI's. Use to create skills."
    );
    assert_eq!(
        show(&[root.as_path()], "anthropic/skill-creator", None)["description"],
        "Anthropic's. Use to create skills."
    );
    // A model's tools take the path too.
    let loaded = skillbox()
        .args([
            "call",
            "load_skill",
            "--args",
            r#"{"name": "openai/skill-creator"}"#,
        ])
        .arg(&root)
        .output()
        .unwrap();
    assert!(loaded.status.success(), "{loaded:?}");
    assert!(String::from_utf8_lossy(&loaded.stdout).contains("OpenAI body."));
    // Each copy says which copy it is and which one models see.
    let report = validate(&[root.as_path()]);
    let on_used = diagnostics_of(&report, "anthropic/skill-creator");
    let on_shadowed = diagnostics_of(&report, "openai/skill-creator");
    let (on_used, on_shadowed) = (
        with_code(&on_used, "skill-shadowed")[0]["message"]
            .as_str()
            .unwrap()
            .to_owned(),
        with_code(&on_shadowed, "skill-shadowed")[0]["message"]
            .as_str()
            .unwrap()
            .to_owned(),
    );
    assert_ne!(on_used, on_shadowed);
    assert!(
        on_used.contains("`anthropic/skill-creator` is in effect"),
        "{on_used}"
    );
    assert!(
        on_shadowed.contains("`openai/skill-creator` is shadowed"),
        "{on_shadowed}"
    );
    assert!(
        on_shadowed.contains("skillbox show openai/skill-creator"),
        "{on_shadowed}"
    );
    // `list` shows the copy in effect and counts both warnings.
    let listed = skillbox().arg("list").arg(&root).output().unwrap();
    let stderr = String::from_utf8_lossy(&listed.stderr);
    assert!(stderr.contains("2 warning(s)"), "{stderr}");
    // Paths that leave the root find nothing.
    let escape = skillbox()
        .args(["show", "../skills/openai/skill-creator"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(escape.status.code(), Some(2));
}
