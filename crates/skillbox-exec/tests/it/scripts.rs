//! `run` (use_skill) behaviour: resolution, interpreters, arguments, output, exit codes, audit.

use skillbox_exec::{ErrorType, RunOptions};

use super::support::{Fixture, runtime};

#[test]
fn runs_python_node_and_bash_scripts_with_literal_arguments() {
    let fixture = Fixture::new();
    fixture.skill("multi");
    fixture.file(
        "multi/scripts/show.py",
        "import json, sys\nprint(json.dumps(sys.argv[1:]))\n",
    );
    fixture.file(
        "multi/scripts/show.mjs",
        "console.log(JSON.stringify(process.argv.slice(2)))\n",
    );
    fixture.file("multi/show.sh", "#!/bin/bash\nprintf '%s\\n' \"$@\"\n");
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    let args: Vec<String> = [
        "; rm -rf /",
        "$(id)",
        "--help",
        "a b",
        "`whoami`",
        "-",
        "--",
    ]
    .map(String::from)
    .to_vec();
    let runtime = runtime();
    for script in ["show.py", "scripts/show.mjs"] {
        let result =
            runtime.block_on(executor.run(&catalog, "multi", script, &args, RunOptions::default()));
        assert!(result.success, "{script}: {result:?}");
        let printed: Vec<String> = serde_json::from_str(result.stdout.trim()).unwrap();
        assert_eq!(printed, args, "{script}");
    }
    let result =
        runtime.block_on(executor.run(&catalog, "multi", "show.sh", &args, RunOptions::default()));
    assert_eq!(result.stdout.lines().collect::<Vec<_>>(), args);
}

#[test]
fn error_types_for_missing_skill_script_and_failures() {
    let fixture = Fixture::new();
    fixture.skill("demo");
    fixture.file(
        "demo/scripts/fail.py",
        "import sys\nprint('partial')\nsys.exit(3)\n",
    );
    let data = fixture.file("demo/data.txt", "not a script");
    std::fs::set_permissions(&data, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    let runtime = runtime();
    let run = |skill: &str, script: &str| {
        runtime.block_on(executor.run(&catalog, skill, script, &[], RunOptions::default()))
    };
    assert_eq!(
        run("nope", "x.py").error_type,
        Some(ErrorType::SkillNotFound)
    );
    assert_eq!(
        run("demo", "missing.py").error_type,
        Some(ErrorType::ScriptNotFound)
    );
    let failed = run("demo", "fail.py");
    assert_eq!(
        (failed.error_type, failed.exit_code, failed.stdout.as_str()),
        (Some(ErrorType::ExecutionFailed), Some(3), "partial\n")
    );
    assert_eq!(
        run("demo", "data.txt").error_type,
        Some(ErrorType::ScriptNotAllowed)
    );
    let nul = runtime.block_on(executor.run(
        &catalog,
        "demo",
        "fail.py",
        &["a\0b".to_owned()],
        RunOptions::default(),
    ));
    assert_eq!(nul.error_type, Some(ErrorType::InvalidArgs));
}

#[test]
fn timeout_is_per_call_overridable_and_reported() {
    let fixture = Fixture::new();
    fixture.skill("slow");
    fixture.file("slow/scripts/spin.py", "while True:\n    pass\n");
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    let started = std::time::Instant::now();
    let result = runtime().block_on(executor.run(
        &catalog,
        "slow",
        "spin.py",
        &[],
        RunOptions {
            timeout: Some(std::time::Duration::from_millis(800)),
            live_output: None,
        },
    ));
    assert_eq!(result.error_type, Some(ErrorType::ExecutionTimeout));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(result.error.unwrap().contains("800 ms"));
}

#[test]
fn environment_is_minimal_and_only_declared_provided_secrets_pass() {
    let fixture = Fixture::new();
    fixture.file(
        "env-skill/SKILL.md",
        "---\nname: env-skill\ndescription: Env.\nrequired_environment_variables:\n  - API_TOKEN\n  - MISSING_TOKEN\n---\n",
    );
    fixture.file(
        "env-skill/scripts/env.py",
        "import json, os\nprint(json.dumps(dict(os.environ)))\n",
    );
    let catalog = fixture.catalog();
    let mut config = fixture.config();
    config
        .secrets
        .insert("API_TOKEN".into(), "declared-value".into());
    config
        .secrets
        .insert("OTHER_TOKEN".into(), "undeclared-value".into());
    let executor = skillbox_exec::Executor::new(config).unwrap();
    let result = runtime().block_on(executor.run(
        &catalog,
        "env-skill",
        "env.py",
        &[],
        RunOptions::default(),
    ));
    let environment: std::collections::BTreeMap<String, String> =
        serde_json::from_str(result.stdout.trim()).unwrap();
    assert_eq!(
        environment.get("API_TOKEN").map(String::as_str),
        Some("declared-value")
    );
    assert!(!environment.contains_key("OTHER_TOKEN") && !environment.contains_key("MISSING_TOKEN"));
    for key in environment.keys() {
        assert!(
            [
                "PATH",
                "LANG",
                "HOME",
                "TMPDIR",
                "API_TOKEN",
                "SKILLBOX_SKILL_DIR",
                "SKILLBOX_WORKSPACE",
                "PYTHONDONTWRITEBYTECODE",
                "PYTHONUNBUFFERED",
                "PYTHONIOENCODING",
                "NODE_NO_WARNINGS",
                "LC_CTYPE"
            ]
            .contains(&key.as_str()),
            "unexpected variable {key}"
        );
    }
}

#[test]
fn audit_log_has_one_line_per_execution_and_no_secrets_or_arguments() {
    let fixture = Fixture::new();
    fixture.file("audited/SKILL.md", "---\nname: audited\ndescription: A.\nrequired_environment_variables: [SECRET_VALUE]\n---\n");
    fixture.file(
        "audited/scripts/echo.py",
        "import os, sys\nprint(os.environ.get('SECRET_VALUE'), sys.argv[1])\n",
    );
    let catalog = fixture.catalog();
    let mut config = fixture.config();
    let audit = fixture.workspaces.path().join("audit.jsonl");
    config.audit_log = Some(audit.clone());
    config
        .secrets
        .insert("SECRET_VALUE".into(), "hunter2-secret".into());
    let executor = skillbox_exec::Executor::new(config).unwrap();
    let runtime = runtime();
    let result = runtime.block_on(executor.run(
        &catalog,
        "audited",
        "echo.py",
        &["argument-value".into()],
        RunOptions::default(),
    ));
    assert_eq!(result.stdout, "hunter2-secret argument-value\n");
    runtime.block_on(executor.run(
        &catalog,
        "audited",
        "missing.py",
        &[],
        RunOptions::default(),
    ));
    let log = fs_err::read_to_string(&audit).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["outcome"], "success");
    assert_eq!(lines[0]["argumentCount"], 1);
    assert_eq!(lines[0]["sandboxLevel"], "full");
    assert_eq!(lines[1]["outcome"], "ScriptNotFound");
    assert!(
        !log.contains("hunter2") && !log.contains("argument-value"),
        "{log}"
    );
}

#[test]
fn inline_commands_run_in_the_same_sandbox() {
    let fixture = Fixture::new();
    fixture.skill("context");
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    let skill = catalog.get("context").unwrap();
    let result = runtime().block_on(executor.run_command(
        skill,
        "id -u; test -r \"$SKILLBOX_SKILL_DIR/SKILL.md\" && echo readable",
        RunOptions::default(),
    ));
    assert!(result.success, "{result:?}");
    let lines: Vec<&str> = result.stdout.lines().collect();
    if nix::unistd::geteuid().is_root() {
        assert_ne!(lines[0], "0", "inline commands must not run as root");
    }
    assert_eq!(lines[1], "readable");
    let failed = runtime().block_on(executor.run_command(skill, "exit 4", RunOptions::default()));
    assert_eq!((failed.success, failed.exit_code), (false, Some(4)));
}
