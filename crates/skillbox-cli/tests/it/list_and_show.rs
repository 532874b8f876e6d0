//! `skillbox list` and `skillbox show` output.

use super::support::{json_stdout, skillbox, write_tree};

#[test]
fn list_examples_human() {
    let output = skillbox()
        .args(["list", "examples/skills"])
        .output()
        .unwrap();
    assert!(output.status.success());
    insta::assert_snapshot!(String::from_utf8(output.stdout).unwrap());
}

#[test]
fn list_examples_json() {
    let output = skillbox()
        .args(["list", "--json", "examples/skills"])
        .output()
        .unwrap();
    assert!(output.status.success());
    insta::assert_json_snapshot!(json_stdout(&output));
}

#[test]
fn show_tool_skill_human() {
    let output = skillbox()
        .args(["--root", "examples/skills", "show", "text-tools"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    // The body is long; the head shows metadata, tools and resources.
    let head: String = stdout.split("\n---\n").next().unwrap().to_owned();
    insta::assert_snapshot!(head);
}

#[test]
fn show_json_has_resources_with_groups_and_digests_and_files() {
    let output = skillbox()
        .args([
            "--root",
            "examples/skills",
            "show",
            "--json",
            "api-design-review",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let view = json_stdout(&output);
    let resources = view["resources"].as_array().unwrap();
    assert!(resources.iter().all(|r| {
        r["sha256"]
            .as_str()
            .is_some_and(|digest| digest.len() == 64)
    }));
    let skill_md = resources.iter().find(|r| r["path"] == "SKILL.md").unwrap();
    assert_eq!(skill_md["group"], "other");
    assert_eq!(view["files"].as_array().unwrap().len(), 4);
    assert!(view["frontmatter"]["toolsets"].is_array());
}

#[test]
fn show_json_keeps_metadata_as_written_and_names_each_key_once() {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[
            (
                "meta-tools/SKILL.md",
                "---\nname: meta-tools\ndescription: Counts words.\nversion: 1.10\nmetadata:\n  version: 1.10\n  build: 007\n  count: 42\n  nested: [2.50, 3]\n---\n# Meta\n\nUse the tool.\n",
            ),
            ("meta-tools/scripts/count.py", "print(1)\n"),
            (
                "meta-tools/tools.json",
                r#"[{"name": "count_words", "description": "Count words.", "script": "scripts/count.py", "parameters": {"text": {"type": "string", "description": "The text."}}}]"#,
            ),
        ],
    );
    let output = skillbox()
        .arg("--root")
        .arg(root.path())
        .args(["show", "--json", "meta-tools"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout)
        .unwrap()
        .replace(&root.path().display().to_string(), "[ROOT]");
    // Pretty JSON: the object's own keys are the lines indented by exactly two spaces.
    let mut keys: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("  \""))
        .filter_map(|rest| rest.split('"').next())
        .collect();
    let count = keys.len();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), count, "a key is printed twice:\n{text}");
    let view: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(view["frontmatter"]["metadata"]["version"], "1.10");
    assert_eq!(view["frontmatter"]["metadata"]["build"], "007");
    assert_eq!(view["tools"][0]["name"], "count_words");
    insta::assert_snapshot!(text);
}

#[test]
fn show_unknown_skill_suggests_the_closest_name() {
    let output = skillbox()
        .args(["--root", "examples/skills", "show", "comit-message"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("no skill named `comit-message`")
            && stderr.contains("did you mean `commit-message`?"),
        "{stderr}"
    );
}

#[test]
fn person_only_skills_are_flagged() {
    let output = skillbox()
        .args([
            "list",
            "--json",
            "examples/skills",
            "--include",
            "release-checklist",
        ])
        .output()
        .unwrap();
    let listing = json_stdout(&output);
    assert_eq!(listing[0]["model_invocable"], false);
    assert_eq!(listing[0]["user_invocable"], true);
}

#[test]
fn broken_pipe_is_not_an_error() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let corpus = super::support::SkillCorpus::write();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("skillbox"))
        .current_dir(super::support::repo_root())
        .arg("validate")
        .arg(corpus.root())
        .arg("examples/skills")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(matches!(status.code(), Some(0 | 1)), "{status:?} {stderr}");
}

#[test]
fn what_skills_wrote_cannot_drive_the_terminal_or_forge_lines() {
    let root = tempfile::tempdir().unwrap();
    // A folder whose name holds a newline and a fake report line, and a frontmatter whose
    // name, description and version carry terminal escapes (OSC retitles the terminal, CSI
    // clears the screen) and a bidi override.
    let folder = "evil\nok      forged (trusted 1.0.0)";
    write_tree(
        root.path(),
        &[(
            &format!("{folder}/SKILL.md"),
            "---\nname: \"evil\\e]0;pwned\\a\"\ndescription: \"Looks fine\\e[2J\\u202egnp.exe\"\nversion: \"1.0\\e[31m\"\n---\nBody with \\e[5m blink.\n",
        )],
    );
    // The body above is YAML-escaped only in the frontmatter; put a raw escape in the body too.
    let skill_md = root.path().join(folder).join("SKILL.md");
    let text = fs_err::read_to_string(&skill_md)
        .unwrap()
        .replace("\\e[5m", "\u{1b}[5m");
    fs_err::write(&skill_md, text).unwrap();
    let human = |args: &[&str]| {
        let output = skillbox().args(args).arg(root.path()).output().unwrap();
        let mut all = output.stdout.clone();
        all.extend_from_slice(&output.stderr);
        String::from_utf8(all).unwrap()
    };
    let listed = human(&["list"]);
    let validated = human(&["validate"]);
    for (command, text) in [("list", &listed), ("validate", &validated)] {
        assert!(
            !text.contains('\u{1b}'),
            "{command} printed an escape: {text:?}"
        );
        assert!(
            !text.contains('\u{7}'),
            "{command} printed a bell: {text:?}"
        );
        assert!(
            !text.contains('\u{202e}'),
            "{command} printed a bidi override: {text:?}"
        );
        assert!(
            !text.lines().any(|line| line.starts_with("ok      forged")),
            "{command} printed a forged line: {text}"
        );
    }
    assert!(listed.contains("\\u{1b}]0;pwned"), "{listed}");
    // `show` by the skill's exact (hostile) name.
    let output = skillbox()
        .args(["--root"])
        .arg(root.path())
        .args(["show", "evil\u{1b}]0;pwned\u{7}"])
        .output()
        .unwrap();
    let shown = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{shown}");
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(shown.contains("Body with \\u{1b}[5m blink."), "{shown}");
    // JSON keeps the exact text.
    let output = skillbox()
        .args(["list", "--json"])
        .arg(root.path())
        .output()
        .unwrap();
    let listed = json_stdout(&output);
    assert_eq!(listed[0]["name"], "evil\u{1b}]0;pwned\u{7}");
    assert!(listed[0]["path"].as_str().unwrap().contains(folder));
}

/// Roots are given the same way to every command: after the command's own arguments (or with
/// `--root`/`-r` anywhere), and both spellings answer alike. The working directory holds no
/// skills, so a command that ignored the root would find nothing.
#[test]
fn every_command_takes_roots_after_its_arguments_as_with_root() {
    let examples = super::support::repo_root().join("examples/skills");
    let elsewhere = tempfile::tempdir().unwrap();
    let examples = examples.to_str().unwrap();
    let commands: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["list", "--json"], vec![]),
        (vec!["validate", "--json"], vec![]),
        (vec!["show", "text-tools", "--json"], vec![]),
        (vec!["prompt", "--format", "xml"], vec![]),
        (vec!["tools", "--format", "anthropic"], vec![]),
        (
            vec!["call", "load_skill", "--args", r#"{"name":"text-tools"}"#],
            vec![],
        ),
        (
            vec!["run", "--sandbox", "off", "csv-insights", "summarize.py"],
            vec!["--", "--help"],
        ),
    ];
    for (arguments, after) in commands {
        let run = |roots: &[&str], flag: bool| {
            let mut command = assert_cmd::Command::cargo_bin("skillbox").unwrap();
            command
                .current_dir(elsewhere.path())
                .env_remove("SKILLBOX_ROOTS")
                .env("HOME", elsewhere.path());
            if flag {
                command.args(["-r", roots[0]]).args(&arguments);
            } else {
                command.args(&arguments).args(roots);
            }
            command.args(&after).output().unwrap()
        };
        let positional = run(&[examples], false);
        let flagged = run(&[examples], true);
        assert!(
            positional.status.success(),
            "{arguments:?}: {}",
            String::from_utf8_lossy(&positional.stderr)
        );
        assert_eq!(
            positional.status.code(),
            flagged.status.code(),
            "{arguments:?}"
        );
        assert_eq!(positional.stdout, flagged.stdout, "{arguments:?}");
        assert!(!positional.stdout.is_empty(), "{arguments:?}");
    }
}
