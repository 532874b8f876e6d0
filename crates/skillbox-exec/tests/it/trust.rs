//! The trust gate: a skill from a project folder the user has not trusted runs no code on any
//! path (script, preprocessing command, tools.json handler, export, mounted skill), and each
//! refusal is typed `Untrusted`, says what to run, and is audited.

use serde_json::json;
use skillbox_core::{CatalogOptions, RootOrigin, SkillCatalog, SkillRoot};
use skillbox_exec::executor::python_run::PythonRun;
use skillbox_exec::{ErrorType, Executor, RunOptions};
use skillbox_trust::TrustGate;
use skillbox_trust::TrustStore;

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
    gated_with(fixture, |_| {})
}

/// [`gated`], the executor's configuration changed by `configure` first.
fn gated_with(
    fixture: &Fixture,
    configure: impl FnOnce(&mut skillbox_exec::ExecutorConfig),
) -> (SkillCatalog, Executor, std::path::PathBuf) {
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
    configure(&mut config);
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

/// Trusted and untrusted versions of one script and one handler, for the race below.
const TRUSTED_SCRIPT: &str = "print('trusted')\n";
const UNTRUSTED_SCRIPT: &str = "print('UNTRUSTED')\n";
const TRUSTED_HANDLER: &str = "def handler(args):\n    return {'ran': 'trusted'}\n";
const UNTRUSTED_HANDLER: &str = "def handler(args):\n    return {'ran': 'UNTRUSTED'}\n";
/// Runs (of each kind) made while a writer swaps the files.
const RACED_RUNS: usize = 40;

/// A writer swapping `path` between two versions (each written beside the skill, then renamed
/// over it, so every version is whole), every 2 ms, until `stop` is set, and leaves the second
/// in place; returns how many swaps it made.
fn swap_until(
    path: std::path::PathBuf,
    staging: std::path::PathBuf,
    versions: [&'static str; 2],
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    use std::os::unix::fs::PermissionsExt;
    let put = move |text: &str| {
        std::fs::write(&staging, text).unwrap();
        std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::rename(&staging, &path).unwrap();
    };
    std::thread::spawn(move || {
        let mut swaps = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            put(versions[swaps % 2]);
            swaps += 1;
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        put(versions[1]);
        swaps
    })
}

/// What one raced run did.
#[derive(Debug, PartialEq, Eq)]
enum Raced {
    /// Ran the trusted version.
    Trusted,
    /// Refused as changed since trusted.
    Refused,
    /// Ran anything else (the untrusted version): what it answered.
    Other(String),
}

/// `RACED_RUNS` runs of `run` while a writer swaps `file` of the skill between its trusted
/// version and `untrusted`; checks that none ran anything but the trusted version, and that
/// the race was real.
fn race(
    fixture: &Fixture,
    file: &str,
    [untrusted, trusted]: [&'static str; 2],
    mut run: impl FnMut() -> Raced,
) {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = swap_until(
        fixture.root.path().join("pinned").join(file),
        fixture.root.path().join("staging/version"),
        [untrusted, trusted],
        std::sync::Arc::clone(&stop),
    );
    // Spread over time, so that runs meet the writer at every point of its cycle (a refusal
    // takes a millisecond, a run tens).
    let outcomes: Vec<Raced> = (0..RACED_RUNS)
        .map(|index| {
            std::thread::sleep(std::time::Duration::from_millis(1 + index as u64 % 4));
            run()
        })
        .collect();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = writer.join().unwrap();
    let count = |wanted: fn(&Raced) -> bool| outcomes.iter().filter(|raced| wanted(raced)).count();
    let (ran, refused) = (
        count(|raced| *raced == Raced::Trusted),
        count(|raced| *raced == Raced::Refused),
    );
    let unverified: Vec<&Raced> = outcomes
        .iter()
        .filter(|raced| matches!(raced, Raced::Other(_)))
        .collect();
    assert!(
        unverified.is_empty(),
        "{file}: {} of {RACED_RUNS} runs ran something that was not verified ({swaps} swaps; {ran} trusted runs, {refused} refused): {unverified:#?}",
        unverified.len(),
    );
    // Not vacuous: the writer was swapping, and runs both went ahead and were refused.
    assert!(swaps > 20, "{file}: {swaps} swaps");
    assert!(
        ran > 0 && refused > 0,
        "{file}: {ran} ran, {refused} refused"
    );
    eprintln!("{file}: {swaps} swaps; {ran} trusted runs, {refused} refused");
}

#[test]
fn a_pinned_skill_runs_only_the_files_that_were_verified_while_a_writer_swaps_them() {
    let fixture = Fixture::new();
    fixture.skill("pinned");
    fixture.file("pinned/scripts/run.py", TRUSTED_SCRIPT);
    fixture.file(
        "pinned/tools.json",
        r#"[{"name": "probe", "description": "Probes", "script": "scripts/probe.py"}]"#,
    );
    fixture.file("pinned/scripts/probe.py", TRUSTED_HANDLER);
    // Versions are staged outside the skill folder (a new file in it would change its digest).
    std::fs::create_dir_all(fixture.root.path().join("staging")).unwrap();
    // Each handler call on a worker of its own: every call loads the handler afresh.
    let (catalog, executor, store_path) = gated_with(&fixture, |config| {
        config.workers.max_calls_per_worker = 1;
    });
    let mut store = TrustStore::load(&store_path).unwrap();
    store.trust_root(fixture.root.path(), None).unwrap();
    store.save().unwrap();
    let skill = catalog.get("pinned").unwrap();
    let tool = &skill.tools[0];
    let runtime = runtime();
    let quick = || RunOptions {
        timeout: Some(std::time::Duration::from_secs(10)),
        live_output: None,
    };
    // Trusted and unchanged: it runs.
    let first = runtime.block_on(executor.run(&catalog, "pinned", "run.py", &[], quick()));
    assert_eq!(first.stdout, "trusted\n", "{first:?}");

    race(
        &fixture,
        "scripts/run.py",
        [UNTRUSTED_SCRIPT, TRUSTED_SCRIPT],
        || {
            let script = runtime.block_on(executor.run(&catalog, "pinned", "run.py", &[], quick()));
            match (script.error_type, script.stdout.as_str()) {
                (None, "trusted\n") => Raced::Trusted,
                (Some(ErrorType::Untrusted), _) => Raced::Refused,
                _ => Raced::Other(format!("{script:?}")),
            }
        },
    );
    race(
        &fixture,
        "scripts/probe.py",
        [UNTRUSTED_HANDLER, TRUSTED_HANDLER],
        || {
            let handler = runtime.block_on(executor.call_tool(skill, tool, json!({}), quick()));
            match (handler.error_type, &handler.value) {
                (None, value) if *value == json!({"ran": "trusted"}) => Raced::Trusted,
                (Some(ErrorType::Untrusted), _) => Raced::Refused,
                _ => Raced::Other(format!("{handler:?}")),
            }
        },
    );
}
