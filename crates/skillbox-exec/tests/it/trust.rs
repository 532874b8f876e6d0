//! The trust gate: a skill from a project folder the user has not trusted runs no code on any
//! path (script, preprocessing command, tools.json handler, export, mounted skill), and each
//! refusal is typed `Untrusted`, says what to run, and is audited.

use serde_json::json;
use skillbox_core::trust::TrustStore;
use skillbox_core::{CatalogOptions, RootOrigin, SkillCatalog, SkillRoot, TrustGate};
use skillbox_exec::executor::python_run::PythonRun;
use skillbox_exec::{ErrorType, Executor, RunOptions};

use super::support::{Fixture, code_run, export_run, runtime};

const TOML: &str = "name = \"demo.export\"\nversion = \"1.0.0\"\ndescription = \"Exports.\"\nkind = \"action\"\n\n[runtime]\nlanguage = \"python\"\nentrypoint = \"code/main.py\"\nexport = \"run\"\n";

fn project_fixture() -> Fixture {
    let fixture = Fixture::new();
    fixture.skill("gated");
    fixture.file("gated/scripts/hello.py", "print('hello from gated')\n");
    fixture.file(
        "gated/tools.json",
        r#"[{"name": "greet", "description": "Greets", "script": "scripts/greet.py"}]"#,
    );
    fixture.file(
        "gated/scripts/greet.py",
        "def handler(args):\n    return {'greeting': 'hi'}\n",
    );
    fixture.file("demo.export/skill.toml", TOML);
    fixture.file(
        "demo.export/SKILL.md",
        "---\nname: demo.export\ndescription: Exports.\n---\nBody.\n",
    );
    fixture.file(
        "demo.export/code/main.py",
        "def run(args):\n    return {'ran': True}\n",
    );
    fixture
}

/// The fixture's root as a project-level default root, with its catalog and gate.
fn gated(fixture: &Fixture) -> (SkillCatalog, Executor, std::path::PathBuf) {
    let roots = vec![SkillRoot {
        path: fixture.root.path().to_path_buf(),
        origin: RootOrigin::Project,
    }];
    let catalog = SkillCatalog::load(&CatalogOptions {
        roots: roots.clone(),
        ..CatalogOptions::default()
    })
    .unwrap();
    let store_path = fixture.workspaces.path().join("config/trust.json");
    let mut config = fixture.config();
    config.trust = TrustGate::for_roots(&roots, Some(store_path.clone()));
    config.audit_log = Some(fixture.workspaces.path().join("audit.jsonl"));
    (catalog, Executor::new(config).unwrap(), store_path)
}

/// Every way code runs, each reporting its error type and message (or `None` on success).
fn every_path(catalog: &SkillCatalog, executor: &Executor) -> Vec<(&'static str, Option<String>)> {
    let runtime = runtime();
    let gated = catalog.get("gated").unwrap();
    let export = catalog.get("demo.export").unwrap();
    let tool = &gated.tools[0];
    let script =
        runtime.block_on(executor.run(catalog, "gated", "hello.py", &[], RunOptions::default()));
    let command = runtime.block_on(executor.run_command(gated, "echo hi", RunOptions::default()));
    let handler =
        runtime.block_on(executor.call_tool(gated, tool, json!({}), RunOptions::default()));
    let python = |run| {
        runtime
            .block_on(executor.run_python(run))
            .result
            .err()
            .map(|failure| format!("{}: {}", failure.error_type, failure.message))
    };
    let describe = |error_type: Option<ErrorType>, message: Option<String>| {
        error_type.map(|error_type| format!("{error_type}: {}", message.unwrap_or_default()))
    };
    vec![
        ("script", describe(script.error_type, script.error)),
        ("command", describe(command.error_type, command.error)),
        (
            "handler",
            describe(
                handler.error_type,
                handler.value["error"].as_str().map(str::to_owned),
            ),
        ),
        ("export", python(export_run(export, json!({})))),
        (
            "mounted",
            python(PythonRun {
                mount_skills: vec![gated],
                ..code_run("def main(args):\n    return 1\n")
            }),
        ),
    ]
}

#[test]
fn untrusted_project_skills_run_no_code_until_trusted() {
    let fixture = project_fixture();
    let (catalog, executor, store_path) = gated(&fixture);
    let root = fs_err::canonicalize(fixture.root.path()).unwrap();
    for (path, error) in every_path(&catalog, &executor) {
        let error = error.unwrap_or_else(|| panic!("{path} ran from an untrusted folder"));
        assert!(error.starts_with("Untrusted: skill `"), "{path}: {error}");
        assert!(error.contains("never trusted"), "{path}: {error}");
        assert!(
            error.contains(&format!("`skillbox trust {}`", root.display())),
            "{path}: {error}"
        );
    }
    let audit = fs_err::read_to_string(fixture.workspaces.path().join("audit.jsonl")).unwrap();
    let outcomes: Vec<String> = audit
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["outcome"].to_string())
        .collect();
    assert_eq!(outcomes, vec!["\"Untrusted\""; 5], "{audit}");

    let mut store = TrustStore::load(&store_path).unwrap();
    store.trust_root(fixture.root.path(), None).unwrap();
    store.save().unwrap();
    for (path, error) in every_path(&catalog, &executor) {
        assert_eq!(error, None, "{path}");
    }

    // Pinned: a changed handler is refused again, on this path and on the others of the skill.
    fixture.file(
        "gated/scripts/greet.py",
        "def handler(args):\n    return {'greeting': 'changed'}\n",
    );
    let refused: Vec<_> = every_path(&catalog, &executor)
        .into_iter()
        .filter_map(|(path, error)| error.map(|error| (path, error)))
        .collect();
    assert_eq!(
        refused.iter().map(|(path, _)| *path).collect::<Vec<_>>(),
        vec!["script", "command", "handler", "mounted"]
    );
    assert!(
        refused[0].1.contains("changed since trusted"),
        "{refused:?}"
    );
}

#[test]
fn the_default_gate_trusts_everything() {
    let fixture = project_fixture();
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    for (path, error) in every_path(&catalog, &executor) {
        assert_eq!(error, None, "{path}");
    }
}
