//! The facade through the real executor and the real sandbox helper (`skillbox-sandbox`,
//! found beside the test binary as a program finds it beside itself; `cargo test --workspace`
//! builds it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use skillbox::{
    Approval, ApprovalDecision, ApprovalRequest, OpenError, Options, Provider, ToolFormat,
};

/// A skill root the sandbox users can read, with one skill `probe` holding `scripts`.
fn skill_root(scripts: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let mut files = vec![(
        "probe/SKILL.md",
        "---\nname: probe\ndescription: Probes the sandbox it runs in.\n---\n# Probe\n\nRun `scripts/uid.py`.\n",
    )];
    files.extend_from_slice(scripts);
    skillbox_testkit::write_tree(root.path(), &files);
    for entry in walk(root.path()) {
        let mode = if entry.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&entry, std::os::unix::fs::PermissionsExt::from_mode(mode))
            .unwrap();
    }
    root
}

fn walk(folder: &Path) -> Vec<std::path::PathBuf> {
    let mut found = vec![folder.to_path_buf()];
    for entry in fs_err::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// The provider over `root`, sandboxed with every layer the host has.
fn open(root: &Path, options: impl FnOnce(Options) -> Options) -> Provider {
    match Provider::open(options(Options::new([root]))) {
        Ok(provider) => provider,
        Err(error) => panic!(
            "the provider did not open ({error}); the sandbox helper is built by `cargo build -p skillbox-exec --bin skillbox-sandbox` (`cargo test --workspace` builds it)"
        ),
    }
}

fn use_skill(provider: &Provider, script: &str, args: Value) -> Value {
    provider
        .call_blocking(
            "use_skill",
            &json!({"skill": "probe", "script": script, "args": args}),
        )
        .content
        .into_value()
}

#[test]
fn a_script_runs_in_the_sandbox_and_answers_the_seeds_result() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        outside.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let target = outside.path().join("written.txt");
    let root = skill_root(&[(
        "probe/scripts/uid.py",
        "import os, socket, sys\n\
         print('uid', os.getuid())\n\
         try:\n    open(sys.argv[1], 'w').write('x'); print('wrote')\n\
         except OSError as error: print('no write', type(error).__name__)\n\
         try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2); print('network')\n\
         except OSError as error: print('no network', type(error).__name__)\n",
    )]);
    let provider = open(root.path(), |options| options);
    let answer = use_skill(&provider, "scripts/uid.py", json!([target]));
    assert_eq!(answer["success"], true, "{answer}");
    assert_eq!(answer["exitCode"], 0);
    let stdout = answer["stdout"].as_str().unwrap();
    assert!(
        !stdout.contains("uid 0\n"),
        "the script ran as root: {stdout}"
    );
    assert!(stdout.contains("no write"), "{stdout}");
    assert!(stdout.contains("no network"), "{stdout}");
    assert!(!target.exists(), "the script wrote outside its run");
}

#[test]
fn the_timeout_and_the_output_cap_apply() {
    let root = skill_root(&[
        (
            "probe/scripts/slow.py",
            "import time\nprint('started', flush=True)\ntime.sleep(30)\n",
        ),
        ("probe/scripts/loud.py", "print('y' * 100000)\n"),
    ]);
    let provider = open(root.path(), |options| {
        options
            .timeout(Duration::from_millis(1500))
            .max_output_bytes(1000)
    });
    let started = Instant::now();
    let slow = use_skill(&provider, "scripts/slow.py", json!([]));
    assert_eq!(
        (&slow["success"], &slow["errorType"]),
        (&json!(false), &json!("ExecutionTimeout")),
        "{slow}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let loud = use_skill(&provider, "scripts/loud.py", json!([]));
    let stdout = loud["stdout"].as_str().unwrap();
    assert!(stdout.ends_with("[output truncated]"), "{stdout}");
    assert!(stdout.len() < 1100, "{} bytes kept", stdout.len());
}

#[test]
fn failures_come_back_as_the_seeds_kinds() {
    let root = skill_root(&[
        ("probe/scripts/uid.py", "import sys\nsys.exit(3)\n"),
        ("secret.py", "print('outside the skill')\n"),
    ]);
    let provider = open(root.path(), |options| options);
    let kind = |arguments: Value| {
        let answer = provider
            .call_blocking("use_skill", &arguments)
            .content
            .into_value();
        // Every failure is seed 002's whole result, whether anything ran or not.
        assert_eq!(answer["success"], json!(false), "{answer}");
        assert!(
            answer["stdout"].is_string()
                && answer["stderr"].is_string()
                && answer.get("exitCode").is_some(),
            "{answer}"
        );
        answer["errorType"].as_str().unwrap_or_default().to_owned()
    };
    assert_eq!(
        [
            kind(json!({"skill": "nope", "script": "x.py"})),
            kind(json!({"skill": "probe", "script": "scripts/none.py"})),
            kind(json!({"skill": "probe", "script": "../secret.py"})),
            kind(json!({"skill": "probe", "script": "/etc/passwd"})),
            kind(json!({"skill": "probe", "script": "scripts/uid.py", "args": {"not": "a list"}})),
            kind(json!({"skill": "probe", "script": "scripts/uid.py"})),
        ],
        [
            "SkillNotFound",
            "ScriptNotFound",
            "ScriptNotAllowed",
            "ScriptNotAllowed",
            "InvalidArgs",
            "ExecutionFailed",
        ]
    );
    let unknown = provider.call_blocking("no_such_tool", &json!({}));
    assert!(unknown.is_error() && unknown.text().contains("no_such_tool"));
}

/// Denies every call and counts the requests.
struct Refuser(std::sync::Mutex<Vec<ApprovalRequest>>);

#[async_trait::async_trait]
impl Approval for Refuser {
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalDecision {
        self.0.lock().unwrap().push(request.clone());
        ApprovalDecision::Deny {
            reason: "not today".to_owned(),
        }
    }
}

#[test]
fn a_denied_call_does_not_run() {
    let root = skill_root(&[("probe/scripts/uid.py", "print('ran')\n")]);
    let refuser = Arc::new(Refuser(std::sync::Mutex::default()));
    let provider = open(root.path(), |options| options.approval(refuser.clone()));
    let answer = use_skill(&provider, "scripts/uid.py", json!(["a"]));
    assert_eq!(answer["errorType"], "ScriptNotAllowed", "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("not today"));
    let asked = refuser.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (asked[0].tool.as_str(), asked[0].skill.as_deref()),
        ("use_skill", Some("probe"))
    );
    assert_eq!(asked[0].arguments["args"], json!(["a"]));
    // Loading instructions runs nothing, so nobody is asked.
    assert!(
        !provider
            .call_blocking("load_skill", &json!({"skill": "probe"}))
            .is_error()
    );
    assert_eq!(refuser.0.lock().unwrap().len(), 1);
}

#[test]
fn blocking_calls_from_several_threads_run_at_once() {
    let root = skill_root(&[(
        "probe/scripts/uid.py",
        "import time\ntime.sleep(1.5)\nprint('done')\n",
    )]);
    let provider = open(root.path(), |options| options.max_runs(3));
    // Warm up: the first run probes the host.
    use_skill(&provider, "scripts/uid.py", json!([]));
    let started = Instant::now();
    let answers: Vec<Value> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..3)
            .map(|_| scope.spawn(|| use_skill(&provider, "scripts/uid.py", json!([]))))
            .collect();
        calls.into_iter().map(|call| call.join().unwrap()).collect()
    });
    let elapsed = started.elapsed();
    assert!(
        answers.iter().all(|answer| answer["success"] == true),
        "{answers:?}"
    );
    assert!(
        elapsed < Duration::from_millis(4000),
        "three 1.5 s runs took {elapsed:?}: they ran one after another"
    );
}

#[test]
fn a_blocking_call_on_an_async_thread_says_to_await() {
    let root = skill_root(&[]);
    let provider = open(root.path(), |options| options);
    let answer = skillbox_testkit::runtime()
        .block_on(async { provider.call_blocking("load_skill", &json!({"skill": "probe"})) });
    assert!(answer.is_error());
    assert!(
        answer.text().contains("await the async call"),
        "{}",
        answer.text()
    );
    let awaited = skillbox_testkit::runtime()
        .block_on(provider.call("load_skill", &json!({"skill": "probe"})));
    assert!(awaited.text().contains("# Probe"), "{}", awaited.text());
}

#[test]
fn tools_come_in_every_format_and_names_are_the_skills() {
    let root = skill_root(&[]);
    let provider = open(root.path(), |options| options);
    assert_eq!(provider.skill_names(), ["probe"]);
    let names = |tools: &Value, pointer: &str| -> Vec<String> {
        tools
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool.pointer(pointer).unwrap().as_str().unwrap().to_owned())
            .collect()
    };
    let responses = provider.tools(ToolFormat::Responses);
    assert_eq!(
        names(&responses, "/name"),
        ["load_skill", "use_skill", "read_skill_file"]
    );
    assert_eq!(
        names(&provider.tools(ToolFormat::OpenAi), "/function/name"),
        names(&responses, "/name")
    );
    assert_eq!(
        names(&provider.tools(ToolFormat::Anthropic), "/name"),
        names(&responses, "/name")
    );
    assert!(provider.system_prompt().contains("### probe"));
}

#[test]
fn opening_fails_with_a_message_naming_what_is_wrong() {
    let missing = Path::new("/nonexistent/skills-folder");
    let error = Provider::open(Options::new([missing])).unwrap_err();
    assert!(
        error.to_string().contains("/nonexistent/skills-folder"),
        "{error}"
    );
    assert!(matches!(
        Provider::open(Options::new(Vec::<&Path>::new())),
        Err(OpenError::NoRoots)
    ));
    let root = skill_root(&[]);
    let error =
        Provider::open(Options::new([root.path()]).sandbox_helper("/nonexistent/skillbox-sandbox"))
            .unwrap_err();
    assert!(
        error.to_string().contains("/nonexistent/skillbox-sandbox"),
        "{error}"
    );
    // Runs write in the working folder, so it may not hold a skill root.
    let error =
        Provider::open(Options::new([root.path()]).working_directory(root.path())).unwrap_err();
    assert!(
        error.to_string().contains("overlaps the skill root"),
        "{error}"
    );
}
