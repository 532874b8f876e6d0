//! Trust through the real binary: a project's `.claude/skills` is listed but runs no code
//! until `skillbox trust`; `pin` notices edits, `follow` does not; explicit roots need no
//! trust; `untrust` restores the refusal; a corrupt trust file is a clear error.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use super::serve::start_server_command;
use super::serve_runs::Server;
use super::support::{json_stdout, make_world_readable, skillbox, write_tree};

/// A project folder (the working directory) with one skill under `.claude/skills`, a private
/// home and a private config folder.
struct Project {
    temp: tempfile::TempDir,
}

const SKILL: &[(&str, &str)] = &[
    (
        "greeter/SKILL.md",
        "---\nname: greeter\ndescription: Greets people.\n---\nRun scripts/x.py.\n",
    ),
    ("greeter/scripts/x.py", "print('hello from x')\n"),
    (
        "greeter/tools.json",
        r#"[{"name": "greet", "description": "Greets", "script": "scripts/greet.py",
             "parameters": {"who": {"type": "string", "description": "Who"}}}]"#,
    ),
    (
        "greeter/scripts/greet.py",
        "def handler(args):\n    return {'greeting': 'hi ' + args['who']}\n",
    ),
    (
        "calc.add/skill.toml",
        "name = \"calc.add\"\nversion = \"1.0.0\"\ndescription = \"Adds.\"\nkind = \"action\"\n\n[runtime]\nlanguage = \"python\"\nentrypoint = \"main.py\"\nexport = \"run\"\n",
    ),
    (
        "calc.add/SKILL.md",
        "---\nname: calc.add\ndescription: Adds.\n---\nAdds.\n",
    ),
    (
        "calc.add/main.py",
        "def run(args):\n    return {'sum': args['a'] + args['b']}\n",
    ),
];

impl Project {
    fn new() -> Project {
        let temp = tempfile::Builder::new()
            .prefix("skillbox-trust")
            .tempdir()
            .unwrap();
        let project = Project { temp };
        write_tree(&project.skills(), SKILL);
        std::fs::create_dir_all(project.temp.path().join("home")).unwrap();
        make_world_readable(project.temp.path());
        project
    }

    fn directory(&self) -> PathBuf {
        fs_err::canonicalize(self.temp.path())
            .unwrap()
            .join("project")
    }

    fn skills(&self) -> PathBuf {
        self.directory().join(".claude/skills")
    }

    fn trust_file(&self) -> PathBuf {
        self.temp.path().join("config/trust.json")
    }

    /// `skillbox` run in the project, with this project's home and config folders.
    fn skillbox(&self) -> assert_cmd::Command {
        let mut command = skillbox();
        command
            .current_dir(self.directory())
            .envs(self.environment());
        for name in UNSET_VARIABLES {
            command.env_remove(name);
        }
        command
    }

    /// The variables that give a command this project's home and config folders.
    fn environment(&self) -> [(&'static str, PathBuf); 2] {
        [
            ("HOME", self.temp.path().join("home")),
            ("SKILLBOX_CONFIG_DIR", self.temp.path().join("config")),
        ]
    }

    /// Run and return (exit code, stdout, stderr) with the project path written `[PROJECT]`.
    fn output(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let output = self.skillbox().args(args).output().unwrap();
        let project = self.directory().display().to_string();
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(&project, "[PROJECT]");
        (
            output.status.code(),
            text(&output.stdout),
            text(&output.stderr),
        )
    }

    fn edit_script(&self, text: &str) {
        std::fs::write(self.skills().join("greeter/scripts/x.py"), text).unwrap();
    }
}

/// Variables of the test's own environment that would change where trust is kept or how code
/// runs.
const UNSET_VARIABLES: &[&str] = &["XDG_CONFIG_HOME", "SKILLBOX_SANDBOX", "SKILLBOX_AUDIT_LOG"];

const RUN: &[&str] = &["run", "greeter", "x.py"];
const CALL: &[&str] = &["call", "greet", "--args", r#"{"who": "bob"}"#];

#[test]
fn project_skills_run_only_once_trusted_and_pin_notices_edits() {
    let project = Project::new();

    // Never trusted: listed, shown, but every way to run code is refused with the hint.
    let (code, stdout, stderr) = project.output(RUN);
    assert_eq!((code, stdout.as_str()), (Some(1), ""));
    insta::assert_snapshot!("refused_run", stderr);
    let (code, stdout, _) = project.output(CALL);
    assert_eq!(code, Some(1));
    let refusal: Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        refusal["error"]
            .as_str()
            .unwrap()
            .contains("never trusted, so its code does not run; the user can review the folder and allow it with `skillbox trust [PROJECT]/.claude/skills`"),
        "{refusal}"
    );
    let (_, stdout, _) = project.output(&[
        "call",
        "use_skill",
        "--args",
        r#"{"skill": "greeter", "script": "x.py"}"#,
    ]);
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["errorType"], "Untrusted", "{result}");
    let (code, stdout, stderr) = project.output(&["list"]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("untrusted_list", stdout);
    assert!(stderr.contains("`skillbox trust`"), "{stderr}");
    let listed = json_stdout(
        &project
            .skillbox()
            .args(["list", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(listed[0]["trust"], "untrusted", "{listed}");
    let (_, stdout, _) = project.output(&["show", "greeter"]);
    assert!(
        stdout.contains("trust          untrusted; `skillbox trust [PROJECT]/.claude/skills` lets its code run\n"),
        "{stdout}"
    );

    // Trusted (no ROOT: the project's skill folders).
    let (code, stdout, stderr) = project.output(&["trust"]);
    assert_eq!(code, Some(0), "{stderr}");
    insta::assert_snapshot!("trusted", stdout);
    let (code, stdout, stderr) = project.output(RUN);
    assert_eq!(
        (code, stdout.as_str()),
        (Some(0), "hello from x\n"),
        "{stderr}"
    );
    let (code, stdout, _) = project.output(CALL);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).unwrap(),
        json!({"greeting": "hi bob"})
    );
    let (_, stdout, _) = project.output(&["trust", "--list"]);
    insta::assert_snapshot!("trust_list", stdout);
    let entries = json_stdout(
        &project
            .skillbox()
            .args(["trust", "--list", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(entries.as_array().unwrap().len(), 1, "{entries}");
    assert_eq!(entries[0]["root"], project.skills().display().to_string());
    assert_eq!(entries[0]["policy"], "pin");
    assert!(entries[0]["trustedAtMs"].as_u64().unwrap() > 0);
    let digests = entries[0]["skills"].as_object().unwrap();
    assert_eq!(
        digests.keys().collect::<Vec<_>>(),
        vec!["calc.add", "greeter"]
    );
    assert!(digests["greeter"].as_str().unwrap().starts_with("sha256:"));

    // Pinned: an edited script is refused again, and so is the skill's handler.
    project.edit_script("print('edited')\n");
    let (code, _, stderr) = project.output(RUN);
    assert_eq!(code, Some(1));
    insta::assert_snapshot!("refused_changed", stderr);
    let (code, stdout, _) = project.output(CALL);
    assert_eq!(code, Some(1));
    assert!(stdout.contains("changed since trusted"), "{stdout}");
    let (_, stdout, _) = project.output(&["list"]);
    assert!(stdout.contains("  changed  "), "{stdout}");

    // Follow: trusting again with `follow` keeps trusting whatever the folder holds.
    let (code, stdout, _) = project.output(&["trust", "--trust-policy", "follow"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("follow"), "{stdout}");
    project.edit_script("print('edited again')\n");
    let (code, stdout, _) = project.output(RUN);
    assert_eq!((code, stdout.as_str()), (Some(0), "edited again\n"));

    // Untrusted: refused again; untrusting twice is an error naming the folder.
    let (code, stdout, _) = project.output(&["untrust", ".claude/skills"]);
    assert_eq!(
        (code, stdout.as_str()),
        (Some(0), "untrusted [PROJECT]/.claude/skills\n")
    );
    let (code, _, stderr) = project.output(RUN);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("never trusted"), "{stderr}");
    let (code, _, stderr) = project.output(&["untrust", ".claude/skills"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "error: `.claude/skills` is not a trusted root; `skillbox trust --list` shows the trusted roots\n"
    );
    let (_, stdout, _) = project.output(&["trust", "--list"]);
    assert_eq!(
        stdout,
        "no trusted folders; `skillbox trust` trusts the project's skill folders\n"
    );
}

#[test]
fn roots_the_user_names_run_without_trust() {
    let project = Project::new();
    let (code, stdout, stderr) =
        project.output(&["--root", ".claude/skills", "run", "greeter", "x.py"]);
    assert_eq!(
        (code, stdout.as_str()),
        (Some(0), "hello from x\n"),
        "{stderr}"
    );
    let output = project
        .skillbox()
        .env("SKILLBOX_ROOTS", project.skills())
        .args(RUN)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    // Nothing was recorded for them.
    assert!(!project.trust_file().exists());
}

#[test]
fn a_corrupt_trust_file_is_named_and_never_reset() {
    let project = Project::new();
    std::fs::create_dir_all(project.trust_file().parent().unwrap()).unwrap();
    std::fs::write(project.trust_file(), "{\"version\": 1, \"roots\": {\n").unwrap();
    let file = project.trust_file().display().to_string();
    for args in [&["trust", "--list"][..], &["trust"], &["untrust", "x"]] {
        let output = project.skillbox().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with(&format!(
                "error: trust file `{file}` is not valid: EOF while parsing"
            )),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains("delete it and trust the roots again"),
            "{stderr}"
        );
    }
    let (code, _, stderr) = project.output(RUN);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("cannot check that skill `greeter` in `[PROJECT]/.claude/skills` is trusted, so its code does not run: trust file"),
        "{stderr}"
    );
    assert_eq!(
        fs_err::read_to_string(project.trust_file()).unwrap(),
        "{\"version\": 1, \"roots\": {\n"
    );
}

#[test]
fn trusting_needs_a_folder_with_skills() {
    let project = Project::new();
    let (code, _, stderr) = project.output(&["trust", "no/such/folder"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "error: `no/such/folder` does not exist; name a folder of skills\n"
    );
    std::fs::create_dir_all(project.directory().join("empty")).unwrap();
    let (code, _, stderr) = project.output(&["trust", "empty"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "error: no skills found under `[PROJECT]/empty`, so there is nothing to trust\n"
    );
    let output = project
        .skillbox()
        .current_dir(project.directory().join("empty"))
        .arg("trust")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no project skill folder with skills under")
            && stderr.contains("`.claude/skills/`"),
        "{stderr}"
    );
    assert!(!project.trust_file().exists());
}

#[test]
fn the_server_refuses_runs_from_an_untrusted_project_folder() {
    let project = Project::new();
    let data = tempfile::tempdir().unwrap();
    let start = || {
        let mut command = Command::new(assert_cmd::cargo::cargo_bin("skillbox"));
        command
            .current_dir(project.directory())
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data.path())
            .envs(project.environment());
        for name in UNSET_VARIABLES {
            command.env_remove(name);
        }
        start_server_command(command)
    };
    let server = Server::new(start());
    let execute = || {
        server.result(
            "execute_skill",
            json!({"name": "calc.add", "args": {"a": 2, "b": 3}}),
        )
    };
    let refused = execute();
    assert_eq!(refused["status"], "failed", "{refused}");
    assert_eq!(refused["error"]["type"], "Untrusted", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`skillbox trust "),
        "{refused}"
    );
    // The trust file is read at each run: trusting takes effect without a restart.
    let (code, _, stderr) = project.output(&["trust"]);
    assert_eq!(code, Some(0), "{stderr}");
    let ran = execute();
    assert_eq!(ran["output"], json!({"sum": 5}), "{ran}");
}
