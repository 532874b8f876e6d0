//! Skills Protocol runs (`run_python`): the minimal root, imports of mounted skills, blobs, the
//! `runtime` module, output files, exceptions and limits, through the real helper and Python.

use std::time::Duration;

use serde_json::{Value, json};
use skillbox_exec::executor::python_run::{InputBlob, PythonRunOutcome};

use super::support::{
    Fixture, code_run, export_run, full_sandbox_or_skip, marker, processes_with, runtime,
};

const TOML: &str = "name = \"demo.calc.add\"\nversion = \"1.2.0\"\ndescription = \"Adds.\"\nkind = \"action\"\n\n[runtime]\nlanguage = \"python\"\nentrypoint = \"code/main.py\"\nexport = \"run\"\n";

/// A skill.toml action skill whose entrypoint uses a relative import and a plain one.
fn calc_fixture() -> Fixture {
    let fixture = Fixture::new();
    fixture.file("demo.calc.add/skill.toml", TOML);
    fixture.file(
        "demo.calc.add/SKILL.md",
        "---\nname: demo.calc.add\ndescription: Adds.\n---\nAdds numbers.\n",
    );
    fixture.file(
        "demo.calc.add/code/main.py",
        "from .helpers import total\nimport helpers as plain\n\ndef run(args):\n    print('adding', args)\n    return {'sum': total(args['numbers']), 'same': plain.total is not None}\n",
    );
    fixture.file(
        "demo.calc.add/code/helpers.py",
        "def total(numbers):\n    return sum(numbers)\n",
    );
    fixture
}

fn output(outcome: &PythonRunOutcome) -> &Value {
    match &outcome.result {
        Ok(value) => value,
        Err(failure) => panic!("run failed: {failure:?}\nlogs:\n{}", outcome.logs_preview),
    }
}

#[test]
fn an_export_function_runs_with_relative_and_plain_imports() {
    let fixture = calc_fixture();
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    let skill = catalog.get("demo.calc.add").unwrap();
    let outcome =
        runtime().block_on(executor.run_python(export_run(skill, json!({"numbers": [1, 2, 39]}))));
    assert_eq!(output(&outcome), &json!({"sum": 42, "same": true}));
    assert!(outcome.logs_preview.contains("adding"), "{outcome:?}");
}

#[test]
fn the_minimal_root_holds_only_what_the_run_needs() {
    if !full_sandbox_or_skip("the_minimal_root_holds_only_what_the_run_needs") {
        return;
    }
    let fixture = calc_fixture();
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    let skill = catalog.get("demo.calc.add").unwrap();
    let blob = fixture.file("blobdata", "hello blob");
    let code = r#"
import os, socket
def main(args):
    report = {"root": sorted(os.listdir("/")), "uid": os.getuid(), "cwd": os.getcwd(),
              "skills": os.listdir("/skills"), "blobs": sorted(os.listdir("/blobs")),
              "etc_has_passwd": os.path.exists("/etc/passwd"),
              "pids": sorted(p for p in os.listdir("/proc") if p.isdigit())}
    for path in ["/x", "/skills/demo.calc.add/new", "/usr/new", "/blobs/new",
                 "/skillbox/python-lib/runtime.py", "/etc/hosts"]:
        try:
            open(path, "w").close(); report[path] = "written"
        except OSError as error:
            report[path] = type(error).__name__
    with open("/workspace/out/result.txt", "w") as out:
        out.write("done")
    with open("/tmp/scratch", "w") as scratch:
        scratch.write("ok")
    import multiprocessing
    lock = multiprocessing.Lock()  # a POSIX semaphore in /dev/shm
    with lock:
        report["shm"] = sorted(os.listdir("/dev"))
    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1); report["net"] = "connected"
    except OSError as error:
        report["net"] = type(error).__name__
    return report
"#;
    let mut run = code_run(code);
    run.mount_skills = vec![skill];
    run.input_blobs = vec![InputBlob {
        blob_id: "blob:0123456789abcdef0123456789abcdef".to_owned(),
        path: blob,
    }];
    let outcome = runtime().block_on(executor.run_python(run));
    let report = output(&outcome).clone();
    let root: Vec<&str> = report["root"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    let system = ["bin", "sbin", "lib", "lib32", "lib64"];
    let run = [
        "blobs",
        "dev",
        "etc",
        "proc",
        "skillbox",
        "skills",
        "tmp",
        "usr",
        "workspace",
    ];
    for name in &root {
        assert!(
            system.contains(name) || run.contains(name),
            "`/{name}` in {report}"
        );
    }
    for name in run {
        assert!(root.contains(&name), "no `/{name}` in {report}");
    }
    assert_ne!(report["uid"], json!(0));
    assert_eq!(report["cwd"], json!("/workspace"));
    assert_eq!(report["skills"], json!(["demo.calc.add"]));
    assert_eq!(report["blobs"], json!(["0123456789abcdef0123456789abcdef"]));
    assert_eq!(report["etc_has_passwd"], json!(false));
    assert_eq!(report["pids"].as_array().unwrap().len(), 1, "{report}");
    for path in [
        "/x",
        "/skills/demo.calc.add/new",
        "/usr/new",
        "/blobs/new",
        "/skillbox/python-lib/runtime.py",
        "/etc/hosts",
    ] {
        assert_ne!(report[path], json!("written"), "{path}: {report}");
    }
    assert_ne!(report["net"], json!("connected"));
    assert_eq!(
        report["shm"],
        json!([
            "fd", "full", "null", "random", "shm", "stderr", "stdin", "stdout", "urandom", "zero"
        ])
    );
    assert_eq!(outcome.output_files.len(), 1);
    assert_eq!(outcome.output_files[0].name, "result.txt");
    let mut opened =
        skillbox_exec::executor::python_run::open_output_file(&outcome.output_files[0]).unwrap();
    let mut bytes = String::new();
    std::io::Read::read_to_string(&mut opened, &mut bytes).unwrap();
    assert_eq!(bytes, "done");
}

#[test]
fn mounted_skills_import_as_skills_modules_and_blobs_read_through_runtime() {
    let fixture = calc_fixture();
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    let skill = catalog.get("demo.calc.add").unwrap();
    let blob = fixture.file("numbers.json", "[4, 5, 6]");
    let code = r#"
import json, runtime
from skills.demo.calc.add import run
async def main(args):
    numbers = runtime.blobs.read_json(args["blob"])
    runtime.write_output("nested/copy.json", json.dumps(numbers))
    try:
        runtime.blobs.read_text("blob:ffffffffffffffffffffffffffffffff")
    except runtime.BlobNotFound as error:
        missing = str(error)
    return {"sum": run({"numbers": numbers})["sum"], "ids": runtime.blobs.ids(), "missing": missing}
"#;
    let mut run = code_run(code);
    run.args = json!({"blob": "blob:00000000000000000000000000000001"});
    run.mount_skills = vec![skill];
    run.input_blobs = vec![InputBlob {
        blob_id: "blob:00000000000000000000000000000001".to_owned(),
        path: blob,
    }];
    let outcome = runtime().block_on(executor.run_python(run));
    let value = output(&outcome);
    assert_eq!(value["sum"], json!(15));
    assert_eq!(
        value["ids"],
        json!(["blob:00000000000000000000000000000001"])
    );
    assert!(
        value["missing"].as_str().unwrap().contains("input_blobs"),
        "{value}"
    );
    assert_eq!(outcome.output_files.len(), 1);
    assert_eq!(outcome.output_files[0].name, "nested/copy.json");
}

#[test]
fn exceptions_report_their_class_and_the_traceback_reaches_the_logs() {
    let fixture = Fixture::new();
    let executor = fixture.executor();
    let cases = [
        (
            "class QuotaExceeded(Exception):\n    pass\ndef main(args):\n    print('before')\n    raise QuotaExceeded('limit 10 reached')\n",
            "QuotaExceeded",
            "limit 10 reached",
        ),
        (
            "def main(args):\n    return {'x': 1\n",
            "SyntaxError",
            "line 2",
        ),
        (
            "def other(args):\n    return 1\n",
            "EntrypointNotFound",
            "`main`",
        ),
        ("def main(args):\n    return {1, 2}\n", "TypeError", "JSON"),
        (
            "import sys\ndef main(args):\n    sys.exit(3)\n",
            "SystemExit",
            "3",
        ),
        (
            "import os\ndef main(args):\n    os._exit(7)\n",
            "ExecutionFailed",
            "status 7",
        ),
    ];
    for (code, error_type, message) in cases {
        let outcome = runtime().block_on(executor.run_python(code_run(code)));
        let failure = outcome.result.as_ref().expect_err(code);
        assert_eq!(failure.error_type, error_type, "{code}: {failure:?}");
        assert!(failure.message.contains(message), "{code}: {failure:?}");
    }
    let outcome = runtime().block_on(executor.run_python(code_run(cases[0].0)));
    assert!(outcome.logs_preview.starts_with("before\n"), "{outcome:?}");
    assert!(outcome.logs_preview.contains("Traceback"), "{outcome:?}");
    assert!(
        outcome.logs_preview.contains("<run_code>\", line 5"),
        "{outcome:?}"
    );
}

#[test]
fn a_timeout_stops_the_run_and_everything_it_started() {
    let fixture = Fixture::new();
    let executor = fixture.executor();
    let marker = marker();
    let code = format!(
        "import subprocess, time\ndef main(args):\n    subprocess.Popen(['sleep', '{}'])\n    time.sleep(60)\n",
        marker.replace('.', "")
    );
    let mut run = code_run(&code);
    run.timeout = Duration::from_millis(1_500);
    let started = std::time::Instant::now();
    let outcome = runtime().block_on(executor.run_python(run));
    assert!(started.elapsed() < Duration::from_secs(10));
    let failure = outcome.result.unwrap_err();
    assert_eq!(failure.error_type, "Timeout", "{failure:?}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(processes_with(&marker.replace('.', "")).is_empty());
}

#[test]
fn a_huge_return_value_is_refused_with_a_pointer_to_out() {
    let fixture = Fixture::new();
    let executor = fixture.executor();
    let outcome = runtime().block_on(executor.run_python(code_run(
        "def main(args):\n    return 'x' * (5 * 1024 * 1024)\n",
    )));
    let failure = outcome.result.unwrap_err();
    assert_eq!(failure.error_type, "OutputTooLarge");
    assert!(failure.message.contains("/workspace/out/"));
}

#[test]
fn links_left_in_out_are_skipped_not_followed() {
    let fixture = Fixture::new();
    let executor = fixture.executor();
    let code = "import os\ndef main(args):\n    os.symlink('/etc/hostname', '/workspace/out/link')\n    open('/workspace/out/real.txt', 'w').write('r')\n    return None\n";
    let outcome = runtime().block_on(executor.run_python(code_run(code)));
    assert_eq!(output(&outcome), &Value::Null);
    let names: Vec<&str> = outcome
        .output_files
        .iter()
        .map(|file| file.name.as_str())
        .collect();
    assert_eq!(names, ["real.txt"]);
    assert_eq!(outcome.skipped_outputs.len(), 1);
    assert!(outcome.skipped_outputs[0].contains("out/link"));
}

#[test]
fn without_namespaces_the_same_code_gets_host_paths() {
    let fixture = calc_fixture();
    let catalog = fixture.catalog();
    let mut config = fixture.config();
    config.policy.mode = skillbox_exec::SandboxMode::Off;
    let executor = skillbox_exec::Executor::new(config).unwrap();
    let skill = catalog.get("demo.calc.add").unwrap();
    let blob = fixture.file("text", "plain words");
    let code = "import runtime, os\nfrom skills.demo.calc.add import run\ndef main(args):\n    runtime.write_output('o.txt', 'x')\n    return [run({'numbers': [2, 3]})['sum'], runtime.blobs.read_text(args['b']), os.getcwd() == runtime.WORKSPACE]\n";
    let mut run = code_run(code);
    run.args = json!({"b": "blob:00000000000000000000000000000002"});
    run.mount_skills = vec![skill];
    run.input_blobs = vec![InputBlob {
        blob_id: "blob:00000000000000000000000000000002".to_owned(),
        path: blob,
    }];
    let outcome = runtime().block_on(executor.run_python(run));
    assert_eq!(output(&outcome), &json!([5, "plain words", true]));
    assert_eq!(outcome.output_files.len(), 1);
}

#[test]
fn a_skill_under_a_private_folder_still_runs_in_the_minimal_root() {
    if !full_sandbox_or_skip("a_skill_under_a_private_folder_still_runs_in_the_minimal_root") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let fixture = calc_fixture();
    let catalog = fixture.catalog();
    let executor = fixture.executor();
    // Like a clone under /root: the parent is closed to others, the skill folder is not.
    std::fs::set_permissions(fixture.root.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let skill = catalog.get("demo.calc.add").unwrap();
    let outcome =
        runtime().block_on(executor.run_python(export_run(skill, json!({"numbers": [1, 1]}))));
    assert_eq!(output(&outcome)["sum"], 2);
}
