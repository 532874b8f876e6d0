//! `skillbox run`, `call` and `doctor` through the real binary (which is its own sandbox helper).

use super::support::{json_stdout, repo_root, skillbox};

fn sample_csv() -> String {
    repo_root()
        .join("examples/skills/csv-insights/assets/sample.csv")
        .display()
        .to_string()
}

#[test]
fn run_streams_output_and_exits_with_the_script_status() {
    let output = skillbox()
        .args([
            "--root",
            "examples/skills",
            "run",
            "csv-insights",
            "head.sh",
            "--",
        ])
        .args([sample_csv().as_str(), "2"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    assert!(stdout.starts_with("order_id,"));
    let output = skillbox()
        .args([
            "--root",
            "examples/skills",
            "run",
            "csv-insights",
            "summarize.py",
            "--",
            "/no/such.csv",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("file not found"));
}

#[test]
fn run_json_prints_the_result_object() {
    let output = skillbox()
        .args([
            "--root",
            "examples/skills",
            "run",
            "--json",
            "csv-insights",
            "summarize.py",
            "--",
        ])
        .args([sample_csv().as_str(), "--compact"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let result = json_stdout(&output);
    assert_eq!(result["success"], true);
    assert_eq!(result["exitCode"], 0);
    let summary: serde_json::Value =
        serde_json::from_str(result["stdout"].as_str().unwrap()).unwrap();
    assert_eq!(summary["rows"], 15);
    for (skill, script, error_type) in [
        ("nope", "x.py", "SkillNotFound"),
        (
            "csv-insights",
            "../commit-message/SKILL.md",
            "ScriptNotAllowed",
        ),
        ("csv-insights", "missing.py", "ScriptNotFound"),
    ] {
        let output = skillbox()
            .args(["--root", "examples/skills", "run", "--json", skill, script])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(
            json_stdout(&output)["errorType"],
            error_type,
            "{skill} {script}"
        );
    }
}

#[test]
fn call_prints_what_the_model_receives() {
    let output = skillbox()
        .args([
            "--root",
            "examples/skills",
            "call",
            "slugify",
            "--args",
            r#"{"text": "Hello, World!"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(json_stdout(&output)["slug"], "hello-world");
    let output = skillbox()
        .args([
            "--root",
            "examples/skills",
            "call",
            "count_words",
            "--args",
            r#"{"text": "one two three"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(json_stdout(&output)["words"], 3);
}

#[test]
fn call_errors_name_the_problem() {
    let cases: [(&[&str], i32, &str); 3] = [
        (
            &["call", "slugify", "--args", "{}"],
            1,
            "missing required parameter `text`",
        ),
        (
            &["call", "slugify", "--args", "not json"],
            2,
            "`--args` is not valid JSON",
        ),
        (
            &["call", "no_such_tool"],
            1,
            "unknown tool `no_such_tool`; the tools are: load_skill, use_skill, read_skill_file, count_words, slugify",
        ),
    ];
    for (args, code, expected) in cases {
        let output = skillbox()
            .args(["--root", "examples/skills"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(code), "{args:?}");
        let error = json_stdout(&output)["error"].as_str().unwrap().to_owned();
        assert!(error.contains(expected), "{args:?}: {error}");
    }
}

#[test]
fn doctor_reports_every_layer() {
    let output = skillbox().args(["doctor", "--json"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let report = json_stdout(&output);
    let layers: Vec<&str> = report["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|layer| layer["layer"].as_str().unwrap())
        .collect();
    assert_eq!(
        layers,
        vec![
            "namespaces",
            "uid-drop",
            "landlock",
            "seccomp",
            "cgroups",
            "rlimits"
        ]
    );
    if report["level"] != "full" {
        eprintln!("NOTE doctor_reports_every_layer: this host runs a weaker sandbox: {report}");
    }
    let output = skillbox()
        .args(["doctor", "--sandbox", "off"])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("sandbox level: none (mode off)"), "{text}");
}

#[test]
fn required_sandbox_mode_refuses_when_a_layer_is_missing_or_runs_fully() {
    let output = skillbox()
        .args([
            "--root",
            "examples/skills",
            "--sandbox",
            "required",
            "run",
            "--json",
            "csv-insights",
            "head.sh",
            "--",
        ])
        .args([sample_csv().as_str(), "1"])
        .output()
        .unwrap();
    let doctor = json_stdout(&skillbox().args(["doctor", "--json"]).output().unwrap());
    if doctor["level"] == "full" {
        assert_eq!(json_stdout(&output)["sandbox"], "full");
    } else {
        assert_eq!(output.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&output.stderr).contains("requires every layer"));
    }
}

#[test]
fn call_answers_the_built_in_tools_too() {
    let output = skillbox()
        .args([
            "--root",
            "examples/skills",
            "call",
            "load_skill",
            "--args",
            r#"{"skill": "commit-message", "arguments": "tidy the README"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("tidy the README") && text.contains("Skill directory: "),
        "{text}"
    );
}

#[test]
fn prompt_and_tools_commands() {
    let output = skillbox()
        .args(["--root", "examples/skills", "prompt", "--format", "xml"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with("<available_skills>\n<skill>\n<name>\napi-design-review\n</name>"),
        "{text}"
    );
    let output = skillbox()
        .args(["--root", "examples/skills", "prompt", "--max-chars", "300"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8(output.stdout)
            .unwrap()
            .trim_end()
            .chars()
            .count()
            <= 300
    );
    let output = skillbox()
        .args([
            "--root",
            "examples/skills",
            "tools",
            "--format",
            "anthropic",
            "--profile",
            "protocol",
        ])
        .output()
        .unwrap();
    let tools = json_stdout(&output);
    assert_eq!(tools.as_array().unwrap().len(), 8);
    assert_eq!(tools[0]["name"], "list_skills");
    assert!(tools[0]["input_schema"].is_object());
    let output = skillbox()
        .args(["tools", "--format", "cobol"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

/// A world-readable temporary skill tree (the sandbox user reads it when the tests run as root).
fn open_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    super::support::write_tree(root.path(), files);
    for entry in walkdir::WalkDir::new(root.path()) {
        let entry = entry.unwrap();
        let mode = if entry.file_type().is_dir() {
            0o755
        } else {
            0o644
        };
        std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(mode)).unwrap();
    }
    root
}

#[test]
fn secrets_can_be_granted_to_named_skills_only() {
    let declares = |name: &str| {
        format!(
            "---\nname: {name}\ndescription: Uses a token.\nrequired_environment_variables: [SERVICE_TOKEN]\n---\nBody.\n"
        )
    };
    let script = "import os\nprint(os.environ.get('SERVICE_TOKEN', 'none'))\n";
    let (granted, other) = (declares("granted"), declares("other"));
    let tree = open_tree(&[
        ("granted/SKILL.md", &granted),
        ("granted/scripts/token.py", script),
        ("other/SKILL.md", &other),
        ("other/scripts/token.py", script),
    ]);
    let run = |skill: &str, grant: &str| {
        let output = skillbox()
            .env("SERVICE_TOKEN", "cli-bound-secret")
            .arg("--root")
            .arg(tree.path())
            .args(["--secret", grant, "run", skill, "token.py"])
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(
        run("granted", "SERVICE_TOKEN:granted"),
        "cli-bound-secret\n"
    );
    assert_eq!(run("other", "SERVICE_TOKEN:granted"), "none\n");
    assert_eq!(run("other", "SERVICE_TOKEN"), "cli-bound-secret\n");
    let output = skillbox()
        .arg("--root")
        .arg(tree.path())
        .args(["--secret", "SERVICE_TOKEN:", "run", "granted", "token.py"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("names no skill after `:`"), "{stderr}");
}

#[test]
fn a_runtime_folder_another_user_made_is_refused_with_a_clear_message() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!(
            "SKIPPED a_runtime_folder_another_user_made_is_refused_with_a_clear_message: needs root"
        );
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let planted = base.path().join("planted");
    std::fs::create_dir(&planted).unwrap();
    std::os::unix::fs::chown(&planted, Some(4242), Some(4242)).unwrap();
    let output = skillbox()
        .env("SKILLBOX_RUNTIME_DIR", &planted)
        .args([
            "--root",
            "examples/skills",
            "run",
            "csv-insights",
            "head.sh",
            "--",
        ])
        .arg(sample_csv())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("belongs to uid 4242"), "{stderr}");
    assert!(stderr.contains("SKILLBOX_RUNTIME_DIR"), "{stderr}");
    assert_eq!(fs_err::read_dir(&planted).unwrap().count(), 0);
}
