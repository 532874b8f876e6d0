//! `call_tool`: schema validation, JavaScript and Python handlers, stubs, errors, warm workers.

use std::time::Duration;

use serde_json::json;
use skillbox_exec::{ErrorType, Executor, RunOptions, WorkerPoolConfig};

use super::support::{Fixture, runtime};

const TOOLS: &str = r#"[
  {"name": "count_words", "description": "Count words", "script": "scripts/count.mjs",
   "parameters": {"text": {"type": "string", "description": "Text"}}},
  {"name": "shout", "description": "Upper-case", "script": "scripts/shout.py",
   "parameters": {"text": {"type": "string", "description": "Text"},
                  "mode": {"type": "string", "description": "Mode", "enum": ["loud", "quiet"], "optional": true}}},
  {"name": "legacy", "description": "Script-style Python", "script": "scripts/legacy.py",
   "parameters": {"n": {"type": "number", "description": "A number"}}},
  {"name": "shell_tool", "description": "Shell handler", "script": "scripts/shell.sh",
   "parameters": {"name": {"type": "string", "description": "Name"}}},
  {"name": "explode", "description": "Throws", "script": "scripts/explode.mjs"},
  {"name": "crash", "description": "Exits the worker", "script": "scripts/crash.py"},
  {"name": "hang", "description": "Never answers", "script": "scripts/hang.py"},
  {"name": "counter", "description": "Counts calls in its worker", "script": "scripts/counter.py"},
  {"name": "instructions_only", "description": "No handler"}
]"#;

fn fixture() -> Fixture {
    let fixture = Fixture::new();
    fixture.skill("tooling");
    fixture.file("tooling/tools.json", TOOLS);
    fixture.file(
        "tooling/scripts/count.mjs",
        "export default async function handler(args) {\n  console.log('noise that must not corrupt the answer');\n  return { count: args.text.split(/\\s+/).filter(Boolean).length, workDir: args.__workDir };\n}\n",
    );
    fixture.file("tooling/scripts/shout.py", "def handler(args):\n    print('noise')\n    text = args['text'].upper()\n    return {'text': text + ('!' if args.get('mode') == 'loud' else '')}\n");
    fixture.file("tooling/scripts/legacy.py", "import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({'double': args['n'] * 2}))\n");
    fixture.file(
        "tooling/scripts/shell.sh",
        "#!/bin/bash\nread -r line\necho \"{\\\"got\\\": $line}\"\n",
    );
    fixture.file(
        "tooling/scripts/explode.mjs",
        "export default async function () { throw new Error('kaboom'); }\n",
    );
    fixture.file(
        "tooling/scripts/crash.py",
        "import os\ndef handler(args):\n    os._exit(9)\n",
    );
    fixture.file(
        "tooling/scripts/hang.py",
        "import time\ndef handler(args):\n    time.sleep(60)\n",
    );
    fixture.file("tooling/scripts/counter.py", "import os\ncalls = 0\ndef handler(args):\n    global calls\n    calls += 1\n    return {'calls': calls, 'pid': os.getpid()}\n");
    fixture
}

fn call(
    executor: &Executor,
    fixture_catalog: &skillbox_core::SkillCatalog,
    tool: &str,
    args: serde_json::Value,
) -> skillbox_exec::ToolCallResult {
    let skill = fixture_catalog.get("tooling").unwrap();
    let definition = skill.tools.iter().find(|t| t.name == tool).unwrap();
    runtime().block_on(executor.call_tool(
        skill,
        definition,
        args,
        RunOptions {
            timeout: Some(Duration::from_secs(5)),
            live_output: None,
        },
    ))
}

fn both_modes(check: impl Fn(&Executor, &skillbox_core::SkillCatalog)) {
    let fixture = fixture();
    let catalog = fixture.catalog();
    for warm in [true, false] {
        let mut config = fixture.config();
        config.workers = WorkerPoolConfig {
            enabled: warm,
            ..WorkerPoolConfig::default()
        };
        let executor = Executor::new(config).unwrap();
        check(&executor, &catalog);
    }
}

#[test]
fn javascript_and_python_handlers_answer_in_both_modes() {
    both_modes(|executor, catalog| {
        let result = call(
            executor,
            catalog,
            "count_words",
            json!({"text": "one two  three"}),
        );
        assert_eq!(result.value["count"], 3, "{result:?}");
        assert!(result.value["workDir"].as_str().unwrap().starts_with('/'));
        let result = call(
            executor,
            catalog,
            "shout",
            json!({"text": "hi", "mode": "loud"}),
        );
        assert_eq!(result.value, json!({"text": "HI!"}));
        let result = call(executor, catalog, "legacy", json!({"n": 21}));
        assert_eq!(result.value, json!({"double": 42}), "{result:?}");
    });
}

#[test]
fn other_handlers_get_json_on_stdin() {
    let fixture = fixture();
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    let result = call(&executor, &catalog, "shell_tool", json!({"name": "x"}));
    assert_eq!(result.value["got"]["name"], "x", "{result:?}");
    assert!(result.value["got"]["__workDir"].is_string());
}

#[test]
fn arguments_are_validated_before_anything_runs_naming_the_parameter() {
    let fixture = fixture();
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    let cases = [
        (json!({}), "missing required parameter `text`"),
        (json!({"text": 5}), "parameter `text`"),
        (json!({"text": "a", "mode": "whisper"}), "parameter `mode`"),
        (
            json!({"text": "a", "extra": 1}),
            "unknown parameter `extra`",
        ),
        (json!(["not", "an", "object"]), "must be a JSON object"),
    ];
    for (args, expected) in cases {
        let result = call(&executor, &catalog, "shout", args.clone());
        assert_eq!(result.error_type, Some(ErrorType::InvalidArgs), "{args}");
        let message = result.value["error"].as_str().unwrap();
        assert!(message.contains(expected), "{args}: {message}");
    }
}

#[test]
fn thrown_errors_become_error_objects_and_stubs_point_to_load_skill() {
    both_modes(|executor, catalog| {
        let result = call(executor, catalog, "explode", json!({}));
        assert_eq!(result.value, json!({"error": "kaboom"}));
        assert_eq!(result.error_type, Some(ErrorType::ExecutionFailed));
    });
    let fixture = fixture();
    let catalog = fixture.catalog();
    let result = call(
        &fixture.executor(),
        &catalog,
        "instructions_only",
        json!({}),
    );
    assert!(
        result.value["message"]
            .as_str()
            .unwrap()
            .contains("load_skill"),
        "{result:?}"
    );
    assert_eq!(result.error_type, None);
}

#[test]
fn warm_workers_are_reused_and_replaced_after_a_crash_or_timeout() {
    let fixture = fixture();
    let catalog = fixture.catalog();
    let mut config = fixture.config();
    config.workers = WorkerPoolConfig {
        enabled: true,
        max_workers: 2,
        max_calls_per_worker: 3,
        ..WorkerPoolConfig::default()
    };
    let executor = Executor::new(config).unwrap();
    let first = call(&executor, &catalog, "counter", json!({}));
    let second = call(&executor, &catalog, "counter", json!({}));
    assert_eq!(
        (first.value["calls"].clone(), second.value["calls"].clone()),
        (json!(1), json!(2)),
        "{first:?} {second:?}"
    );
    assert!(second.warm);
    let crash = call(&executor, &catalog, "crash", json!({}));
    assert_eq!(
        crash.error_type,
        Some(ErrorType::ExecutionFailed),
        "{crash:?}"
    );
    // The crashed worker is gone; the next call starts a fresh one.
    let after_crash = call(&executor, &catalog, "counter", json!({}));
    assert_eq!(after_crash.value["calls"], 1, "{after_crash:?}");
    let hang = call(&executor, &catalog, "hang", json!({}));
    assert_eq!(
        hang.error_type,
        Some(ErrorType::ExecutionTimeout),
        "{hang:?}"
    );
    let after_hang = call(&executor, &catalog, "counter", json!({}));
    assert_eq!(after_hang.value["calls"], 1, "{after_hang:?}");
    // Recycled after three calls.
    call(&executor, &catalog, "counter", json!({}));
    call(&executor, &catalog, "counter", json!({}));
    let recycled = call(&executor, &catalog, "counter", json!({}));
    assert_eq!(recycled.value["calls"], 1, "{recycled:?}");
}

#[test]
fn an_abandoned_call_retires_its_worker() {
    let fixture = fixture();
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    let skill = catalog.get("tooling").unwrap();
    let hang = skill.tools.iter().find(|t| t.name == "hang").unwrap();
    let runtime = runtime();
    // The caller gives up (a client disconnecting drops the call's future the same way).
    let abandoned = runtime.block_on(async {
        tokio::time::timeout(
            Duration::from_millis(1500),
            executor.call_tool(skill, hang, json!({}), RunOptions::default()),
        )
        .await
    });
    assert!(
        abandoned.is_err(),
        "the call should still have been running"
    );
    assert_eq!(
        executor.live_workers(),
        0,
        "the abandoned worker is still counted"
    );
    std::thread::sleep(Duration::from_millis(300));
    let leftovers: Vec<String> = fs_err::read_dir(fixture.workspaces.path().join("runs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("worker-") || name.starts_with("run-"))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new(), "folders left behind");
    let marker = fixture.root.path().display().to_string();
    assert_eq!(
        super::support::processes_with(&marker),
        Vec::<u32>::new(),
        "the abandoned worker's processes are still running"
    );
    // The pool still serves.
    let result = call(&executor, &catalog, "shout", json!({"text": "again"}));
    assert_eq!(result.value, json!({"text": "AGAIN"}), "{result:?}");
    assert_eq!(executor.live_workers(), 1);
}

#[test]
fn a_slow_schema_check_does_not_hold_the_async_threads() {
    let fixture = Fixture::new();
    fixture.skill("patterned");
    fixture.file(
        "patterned/tools.json",
        r#"[{"name": "check", "description": "Backtracks", "script": "scripts/ok.py",
             "parameters": {"items": {"type": "array", "description": "Items",
                 "items": {"type": "string", "pattern": "^(a|aa)+(?=b)"}}}},
            {"name": "quick", "description": "Quick", "script": "scripts/ok.py"}]"#,
    );
    fixture.file(
        "patterned/scripts/ok.py",
        "def handler(args):\n    return 'ok'\n",
    );
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    let skill = catalog.get("patterned").unwrap();
    let check = skill.tools.iter().find(|t| t.name == "check").unwrap();
    let quick = skill.tools.iter().find(|t| t.name == "quick").unwrap();
    let items: Vec<String> = (0..5_000).map(|_| format!("{}c", "a".repeat(28))).collect();
    // One async thread. While the schema check runs, a heartbeat task on the same thread must
    // keep beating: if the check ran on the async thread, the call would finish inside its
    // first poll and the heartbeat would never run. The check takes a few milliseconds on the
    // blocking pool, so on a loaded machine it can finish before the first poll returns: a few
    // tries, one of which must see a beat (inline checking never lets one through).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut tries = Vec::new();
    let slow = loop {
        let done = std::sync::atomic::AtomicBool::new(false);
        let beats = std::sync::atomic::AtomicUsize::new(0);
        let (slow, ()) = runtime.block_on(async {
            let slow = async {
                let result = executor
                    .call_tool(
                        skill,
                        check,
                        json!({ "items": items }),
                        RunOptions::default(),
                    )
                    .await;
                done.store(true, std::sync::atomic::Ordering::SeqCst);
                result
            };
            let heartbeat = async {
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    tokio::task::yield_now().await;
                    beats.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            };
            tokio::join!(slow, heartbeat)
        });
        tries.push(beats.load(std::sync::atomic::Ordering::SeqCst));
        if tries.last() != Some(&0) || tries.len() == 8 {
            break slow;
        }
    };
    assert_ne!(
        tries.last(),
        Some(&0),
        "the schema check held the async thread in every try: {tries:?}"
    );
    assert_eq!(slow.error_type, Some(ErrorType::InvalidArgs), "{slow:?}");
    let quick_result =
        runtime.block_on(executor.call_tool(skill, quick, json!({}), RunOptions::default()));
    assert_eq!(quick_result.value, json!("ok"), "{quick_result:?}");
    let message = slow.value["error"].as_str().unwrap();
    assert!(message.contains("items"), "{message}");
}

/// Two calls that each need a new worker while the pool is full, at once: each must make room
/// (evicting an idle worker), so the pool never holds more than `max_workers`. Counting a new
/// worker in only once it had started let the second call see the room the first had just made
/// and start a worker beyond the cap.
#[test]
fn concurrent_new_workers_stay_within_the_pool_cap() {
    const MAX_WORKERS: usize = 2;
    const ROUNDS: usize = 4;
    let fixture = Fixture::new();
    let names: Vec<String> = (0..2 * ROUNDS + 2)
        .map(|index| format!("pooled{index}"))
        .collect();
    for name in &names {
        fixture.skill(name);
        fixture.file(
            &format!("{name}/tools.json"),
            r#"[{"name": "ping", "description": "Answers", "script": "scripts/ping.py"}]"#,
        );
        fixture.file(
            &format!("{name}/scripts/ping.py"),
            "def handler(args):\n    return 'pong'\n",
        );
    }
    let catalog = std::sync::Arc::new(fixture.catalog());
    let mut config = fixture.config();
    config.workers = WorkerPoolConfig {
        enabled: true,
        max_workers: MAX_WORKERS,
        max_calls_per_worker: 100,
        ..WorkerPoolConfig::default()
    };
    let executor = std::sync::Arc::new(Executor::new(config).unwrap());
    let call_on = |name: &str| {
        let (executor, catalog, name) = (
            std::sync::Arc::clone(&executor),
            std::sync::Arc::clone(&catalog),
            name.to_owned(),
        );
        runtime().spawn(async move {
            let skill = catalog.get(&name).unwrap();
            executor
                .call_tool(skill, &skill.tools[0], json!({}), RunOptions::default())
                .await
        })
    };
    // Fill the pool.
    for name in &names[..MAX_WORKERS] {
        let result = runtime().block_on(call_on(name)).unwrap();
        assert_eq!(result.value, json!("pong"), "{result:?}");
    }
    for pair in names[MAX_WORKERS..].chunks(2) {
        let calls: Vec<_> = pair.iter().map(|name| call_on(name)).collect();
        for call in calls {
            let result = runtime().block_on(call).unwrap();
            assert_eq!(result.value, json!("pong"), "{result:?}");
        }
        assert!(
            executor.live_workers() <= MAX_WORKERS,
            "{} workers alive after calls on {pair:?}; the cap is {MAX_WORKERS}",
            executor.live_workers()
        );
    }
}

/// A handler that starts a child in a session of its own (so a process-group kill misses it)
/// and returns at once; the child writes `<workspace>/<marker>` after a second, then sleeps.
const DETACHING_HANDLER: &str = "import subprocess\ndef handler(args):\n    marker = args['marker']\n    subprocess.Popen(['/bin/sh', '-c', 'sleep 1; echo escaped > /workspace/' + marker + '; sleep 60', marker], start_new_session=True)\n    return {'started': marker}\n";

#[test]
fn nothing_a_warm_call_started_outlives_its_answer() {
    if !super::support::full_sandbox_or_skip("nothing_a_warm_call_started_outlives_its_answer") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let fixture = Fixture::new();
    fixture.skill("detacher");
    fixture.file(
        "detacher/tools.json",
        r#"[{"name": "detach", "description": "Starts a detached child",
             "script": "scripts/detach.py",
             "parameters": {"marker": {"type": "string", "description": "Marker"}}}]"#,
    );
    fixture.file("detacher/scripts/detach.py", DETACHING_HANDLER);
    // The workspace is a host folder, so the test sees what the child would write.
    let workdir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(workdir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut config = fixture.config();
    config.working_directory = Some(workdir.path().to_path_buf());
    let executor = Executor::new(config).unwrap();
    let catalog = fixture.catalog();
    let skill = catalog.get("detacher").unwrap();
    let tool = &skill.tools[0];
    let markers: Vec<String> = (0..2).map(|_| super::support::marker()).collect();
    for marker in &markers {
        let result = runtime().block_on(executor.call_tool(
            skill,
            tool,
            json!({"marker": marker}),
            RunOptions::default(),
        ));
        assert_eq!(result.value, json!({"started": marker}), "{result:?}");
        assert!(result.warm, "{result:?}");
        assert_eq!(
            super::support::processes_with(marker),
            Vec::<u32>::new(),
            "a process the call started is still running after its answer"
        );
    }
    std::thread::sleep(Duration::from_millis(1500));
    for marker in &markers {
        assert!(
            !workdir.path().join(marker).exists(),
            "the call's detached child went on and wrote its marker"
        );
    }
}

#[test]
fn idle_workers_retire_after_the_idle_timeout() {
    let fixture = fixture();
    let catalog = fixture.catalog();
    let mut config = fixture.config();
    config.workers = WorkerPoolConfig {
        idle_timeout: Duration::from_millis(300),
        ..WorkerPoolConfig::default()
    };
    let executor = Executor::new(config).unwrap();
    let first = call(&executor, &catalog, "counter", json!({}));
    assert!(first.warm, "{first:?}");
    let worker = first.value["pid"].clone();
    // Used within the timeout: the same worker answers.
    let again = call(&executor, &catalog, "counter", json!({}));
    assert_eq!(
        (again.value["calls"].clone(), again.value["pid"].clone()),
        (json!(2), worker),
        "{again:?}"
    );
    assert_eq!(executor.live_workers(), 1);
    // Left idle: it retires on its own, with no call to notice.
    runtime().block_on(async { tokio::time::sleep(Duration::from_millis(1200)).await });
    assert_eq!(
        executor.live_workers(),
        0,
        "the idle worker was not retired"
    );
    let marker = fixture.root.path().display().to_string();
    assert_eq!(
        super::support::processes_with(&marker),
        Vec::<u32>::new(),
        "the retired worker's processes are still running"
    );
    let fresh = call(&executor, &catalog, "counter", json!({}));
    assert_eq!(fresh.value["calls"], 1, "{fresh:?}");
}
