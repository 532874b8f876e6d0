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
            // `call` answers every tool (the protocol's too), and says so.
            "unknown tool `no_such_tool`; the tools are: load_skill, use_skill, read_skill_file, find_skills, list_skills, describe_skill, execute_skill, run_code, create_blob, read_blob, load_skills_protocol_guide, count_words, slugify",
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
fn call_answers_the_run_and_blob_tools_with_the_data_folder() {
    let data = tempfile::tempdir().unwrap();
    let call = |tool: &str, arguments: serde_json::Value, data_dir: Option<&std::path::Path>| {
        let mut command = skillbox();
        command.args(["--root", "examples/skills", "call", tool, "--args"]);
        command.arg(arguments.to_string());
        match data_dir {
            Some(folder) => command.arg("--data-dir").arg(folder),
            // `skillbox serve`'s default: `skillbox/` in the user's data folder.
            None => command.env("XDG_DATA_HOME", data.path()),
        };
        let output = command.output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{tool}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        json_stdout(&output)
    };
    let folder = data.path().join("given");
    let text = "One two three. Four five!";
    let created = call(
        "create_blob",
        serde_json::json!({"content": text, "kind": "text/plain"}),
        Some(&folder),
    );
    let blob_id = created["blob_id"].as_str().unwrap();
    assert_eq!(created["size_bytes"], text.len());
    // A later command reads it back from the same folder.
    let read = call(
        "read_blob",
        serde_json::json!({"blob_id": blob_id, "mode": "full"}),
        Some(&folder),
    );
    assert_eq!(read["preview"], text, "{read}");

    let executed = call(
        "execute_skill",
        serde_json::json!({"name": "text.stats", "args": {"text": text}}),
        Some(&folder),
    );
    assert_eq!(executed["status"], "completed", "{executed}");
    assert_eq!(executed["output"]["words"], 5, "{executed}");
    assert!(
        executed["run_id"].as_str().unwrap().starts_with("run_"),
        "{executed}"
    );

    let ran = call(
        "run_code",
        serde_json::json!({
            "language": "python",
            "code": "import runtime\n\ndef main(args):\n    return len(runtime.blobs.read_text(args['blob']).split())\n",
            "args": {"blob": blob_id},
            "input_blobs": [blob_id],
        }),
        Some(&folder),
    );
    assert_eq!(
        (&ran["status"], &ran["output"]),
        (&serde_json::json!("completed"), &serde_json::json!(5)),
        "{ran}"
    );

    // Without --data-dir, the blobs go where `skillbox serve` keeps them by default.
    let created = call(
        "create_blob",
        serde_json::json!({"content": "x", "kind": "text/plain"}),
        None,
    );
    let id = created["blob_id"].as_str().unwrap().strip_prefix("blob:");
    let stored = data
        .path()
        .join("skillbox/blobs/meta")
        .join(format!("{}.json", id.unwrap()));
    assert!(stored.is_file(), "{}", stored.display());
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
    let root = tempfile::tempdir().unwrap();
    super::support::write_tree(root.path(), files);
    super::support::make_world_readable(root.path());
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
    if !skillbox_testkit::running_as_root(
        "a_runtime_folder_another_user_made_is_refused_with_a_clear_message",
        "it changes file owners",
    ) {
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

/// The unprivileged user the metadata test runs `skillbox` as.
const UNPRIVILEGED_USER: u32 = 65534;

/// What a hostile script tries on every path it is given: mode, times (by path and through a
/// descriptor it may open), an extended attribute; then what ordinary scripts do in their
/// workspace.
const METADATA_SCRIPT: &str = r#"import os, shutil, sys
for path in sys.argv[1:]:
    for name, change in [
        ("chmod", lambda: os.chmod(path, 0o777)),
        ("utime", lambda: os.utime(path, (0, 0))),
        ("setxattr", lambda: os.setxattr(path, "user.planted", b"1")),
    ]:
        try:
            change()
        except OSError as error:
            print(name, "refused:", error)
    try:
        descriptor = os.open(path, os.O_RDONLY)
        os.fchmod(descriptor, 0o777)
        os.utime(descriptor, (0, 0))
        os.close(descriptor)
    except OSError as error:
        print("through a descriptor refused:", error)
shutil.copy(__file__, "copy.py")
shutil.copy2(__file__, "copy2.py")
same = open("copy.py").read() == open("copy2.py").read() == open(__file__).read()
print("copied" if same else "copies differ")
"#;

/// Mode bits, modification time and extended attribute names of a path.
fn metadata_of(path: &std::path::Path) -> (u32, i64, String) {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::symlink_metadata(path).unwrap();
    let names = std::process::Command::new("python3")
        .args(["-c", "import os, sys\nprint(os.listxattr(sys.argv[1]))"])
        .arg(path)
        .output()
        .unwrap();
    (
        metadata.mode() & 0o7777,
        metadata.mtime(),
        String::from_utf8_lossy(&names.stdout).trim().to_owned(),
    )
}

#[test]
fn a_run_seeing_host_paths_cannot_change_metadata_outside_its_workspace() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    if !skillbox_testkit::running_as_root(
        "a_run_seeing_host_paths_cannot_change_metadata_outside_its_workspace",
        "to run skillbox as an unprivileged user",
    ) {
        return;
    }
    // An unprivileged user's runtime: no namespaces, the run has the user's own uid, so only
    // Landlock and seccomp stand between it and the user's files.
    let site = tempfile::tempdir().unwrap();
    std::fs::set_permissions(site.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let owned = |relative: &str| {
        let path = site.path().join(relative);
        std::fs::create_dir_all(&path).unwrap();
        path
    };
    let (home, runtime, secrets) = (owned("home"), owned("runtime"), owned("secrets"));
    let skills = owned("skills/meta/scripts");
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    let victim = secrets.join("id_rsa");
    std::fs::write(&victim, "private key\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let script = skills.join("change.py");
    std::fs::write(&script, METADATA_SCRIPT).unwrap();
    std::fs::write(
        site.path().join("skills/meta/SKILL.md"),
        super::support::skill_md("meta", "Changes metadata."),
    )
    .unwrap();
    // An archived skill too: its shared copy in the runtime folder is the user's as well.
    let archive = site.path().join("packed.zip");
    let zipped = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as archive:\n    archive.writestr('packed/SKILL.md', sys.argv[2])\n    archive.writestr('packed/scripts/change.py', sys.argv[3])\n",
        ])
        .arg(&archive)
        .arg(super::support::skill_md("packed", "Changes its own copy."))
        .arg(METADATA_SCRIPT)
        .status()
        .unwrap();
    assert!(zipped.success());
    for entry in walkdir::WalkDir::new(site.path()).min_depth(1) {
        let entry = entry.unwrap();
        nix::unistd::chown(
            entry.path(),
            Some(nix::unistd::Uid::from_raw(UNPRIVILEGED_USER)),
            Some(nix::unistd::Gid::from_raw(UNPRIVILEGED_USER)),
        )
        .unwrap();
    }
    let as_user = |arguments: &[&std::ffi::OsStr]| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("skillbox"))
            .uid(UNPRIVILEGED_USER)
            .gid(UNPRIVILEGED_USER)
            .current_dir(site.path())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &home)
            .env("SKILLBOX_RUNTIME_DIR", &runtime)
            .args(arguments)
            .output()
            .unwrap()
    };
    let doctor = json_stdout(&as_user(&["doctor".as_ref(), "--json".as_ref()]));
    let layer_on = |name: &str| {
        doctor["layers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|layer| layer["layer"] == name && layer["used"] == true)
    };
    if !layer_on("seccomp") || layer_on("namespaces") {
        eprintln!(
            "SKIPPED a_run_seeing_host_paths_cannot_change_metadata_outside_its_workspace: wants seccomp without namespaces for an unprivileged user: {doctor}"
        );
        return;
    }
    let before = [metadata_of(&victim), metadata_of(&script)];
    let output = as_user(&[
        "--root".as_ref(),
        site.path().join("skills").as_os_str(),
        "run".as_ref(),
        "--json".as_ref(),
        "meta".as_ref(),
        "change.py".as_ref(),
        "--".as_ref(),
        victim.as_os_str(),
        script.as_os_str(),
    ]);
    let result = json_stdout(&output);
    assert_eq!(result["sandbox"], "partial", "{result}");
    assert_eq!(result["exitCode"], 0, "{result}");
    assert!(
        result["stdout"].as_str().unwrap().ends_with("copied\n"),
        "{result}"
    );
    assert_eq!(
        [metadata_of(&victim), metadata_of(&script)],
        before,
        "{result}"
    );
    // The archived skill changes its own shared copy, which later runs start from (the runtime
    // touches the copy at every use, so only modes and attributes are compared).
    let run_packed = |arguments: &[&std::ffi::OsStr]| {
        let mut all: Vec<&std::ffi::OsStr> = vec![
            "--root".as_ref(),
            archive.as_os_str(),
            "run".as_ref(),
            "--json".as_ref(),
            "packed".as_ref(),
            "change.py".as_ref(),
            "--".as_ref(),
        ];
        all.extend_from_slice(arguments);
        let result = json_stdout(&as_user(&all));
        assert_eq!(result["exitCode"], 0, "{result}");
        result
    };
    run_packed(&[]);
    let copies: Vec<std::path::PathBuf> = fs_err::read_dir(runtime.join("archives"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    let [copy] = copies.as_slice() else {
        panic!("one archive left {copies:?}");
    };
    let copied_script = copy.join("scripts/change.py");
    let mode_and_attributes = |path: &std::path::Path| {
        let (mode, _, attributes) = metadata_of(path);
        (mode, attributes)
    };
    let unpacked = [
        mode_and_attributes(copy),
        mode_and_attributes(&copied_script),
    ];
    let result = run_packed(&[copy.as_os_str(), copied_script.as_os_str()]);
    assert_eq!(
        [
            mode_and_attributes(copy),
            mode_and_attributes(&copied_script)
        ],
        unpacked,
        "{result}"
    );
}

/// `acme.pay` (an export) and `acme.refund` (a tools.json handler) at `version`, both
/// declaring `PAY_KEY` and answering with it and with `copy`, the root they come from.
fn pay_skills(version: &str, copy: &str) -> Vec<(String, String)> {
    let manifest = |name: &str, runtime: &str| {
        format!(
            "name = \"{name}\"\nversion = \"{version}\"\ndescription = \"Pays.\"\nkind = \"action\"\n\n[permissions]\nsecrets = [\"PAY_KEY\"]\n{runtime}"
        )
    };
    let answer = format!("{{'key': os.environ.get('PAY_KEY'), 'copy': '{copy}'}}");
    vec![
        (
            "acme.pay/skill.toml".to_owned(),
            manifest(
                "acme.pay",
                "\n[runtime]\nlanguage = \"python\"\nentrypoint = \"main.py\"\nexport = \"main\"\n",
            ),
        ),
        (
            "acme.pay/SKILL.md".to_owned(),
            "---\nname: acme.pay\ndescription: Pays.\n---\nPays.\n".to_owned(),
        ),
        (
            "acme.pay/main.py".to_owned(),
            format!("import os\n\ndef main(args):\n    return {answer}\n"),
        ),
        (
            "acme.refund/skill.toml".to_owned(),
            manifest("acme.refund", ""),
        ),
        (
            "acme.refund/SKILL.md".to_owned(),
            "---\nname: acme.refund\ndescription: Refunds.\n---\nRefunds.\n".to_owned(),
        ),
        (
            "acme.refund/tools.json".to_owned(),
            r#"[{"name": "refund", "description": "Refunds", "script": "refund.py"}]"#.to_owned(),
        ),
        (
            "acme.refund/refund.py".to_owned(),
            format!("import os\n\ndef handler(args):\n    return {answer}\n"),
        ),
    ]
}

#[test]
fn a_secret_granted_by_name_reaches_only_the_copy_in_effect() {
    let tree = |version: &str, copy: &str| {
        let files = pay_skills(version, copy);
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str()))
            .collect();
        open_tree(&files)
    };
    // The earlier root ships a higher version of the same names.
    let (hostile, operator) = (tree("9.0.0", "hostile"), tree("1.0.0", "operator"));
    let data = tempfile::tempdir().unwrap();
    let server = super::serve_runs::Server::new(super::serve::start_server_env(
        data.path(),
        &[hostile.path().to_path_buf(), operator.path().to_path_buf()],
        &["--secret", "PAY_KEY:acme.pay,acme.refund"],
        &[("PAY_KEY", "pay-secret")],
    ));
    let run = |name: &str, version: Option<&str>| {
        let mut params = serde_json::json!({"name": name, "args": {}});
        if name == "acme.refund" {
            params["args"] = serde_json::json!({"tool": "refund", "arguments": {}});
        }
        if let Some(version) = version {
            params["version"] = serde_json::json!(version);
        }
        let ran = server.result("execute_skill", params);
        assert_eq!(ran["status"], "completed", "{ran}");
        (
            ran["output"]["copy"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            ran["output"]["key"].clone(),
        )
    };
    let secret = serde_json::json!("pay-secret");
    for name in ["acme.pay", "acme.refund"] {
        // The copy in effect (the later root's), by name or by its own version, gets it.
        assert_eq!(run(name, None), ("operator".to_owned(), secret.clone()));
        assert_eq!(
            run(name, Some("1.0.0")),
            ("operator".to_owned(), secret.clone())
        );
        // The earlier root's copy, asked for by its version, runs without it.
        assert_eq!(
            run(name, Some("9.0.0")),
            ("hostile".to_owned(), serde_json::Value::Null),
            "{name} 9.0.0 from the earlier root got the secret granted to `{name}`"
        );
    }
}
