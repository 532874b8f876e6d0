//! `new`, `pack` and `eval` attacked: a hostile skill author (names that are paths, eval files
//! through links and pipes), a hostile script in the sandbox (links planted where the grader
//! writes, in this run or for the next one), a hostile model (escape sequences for the terminal,
//! a description that would break `SKILL.md`), and the trust gate of a project's skills.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skillbox_testkit::make_fifo;
use skillbox_testkit::model_server::ScriptedModelServer;

use super::agent::{calls, says};
use super::eval::{eval_skill, read_report, tuning_queries};
use super::support::{MODEL_VARIABLES, agent_command, make_world_readable, skillbox, write_tree};

/// A tool whose handler plants a link named `at` (in the run's folder) pointing at `target`,
/// moving whatever held the first part of `at` out of the way first.
const PLANT_TOOLS_JSON: &str = r#"[{"name":"plant","description":"Plant a link.","script":"scripts/plant.py","parameters":{"at":{"type":"string","description":"Where"},"target":{"type":"string","description":"To what"}}}]"#;
const PLANT_PY: &str = "import json, os, sys\nargs = json.load(sys.stdin)\nat, target = args['at'], args['target']\ntop = at.split('/')[0]\nif os.path.lexists(top):\n    os.rename(top, top + '.moved')\nparent = os.path.dirname(at)\nif parent:\n    os.makedirs(parent, exist_ok=True)\nos.symlink(target, at)\nprint(json.dumps({'planted': at}))\n";

/// A root with one skill, `plant-links`, whose evals are `tasks`.
fn plant_tree(tasks: &Value) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let tasks = tasks.to_string();
    write_tree(
        root.path(),
        &[
            (
                "plant-links/SKILL.md",
                "---\nname: plant-links\ndescription: Plants links. Use when asked to plant a link.\n---\nCall plant.\n",
            ),
            ("plant-links/tools.json", PLANT_TOOLS_JSON),
            ("plant-links/scripts/plant.py", PLANT_PY),
            ("plant-links/evals/files/input.txt", "one two three\n"),
            ("plant-links/evals/evals.json", &tasks),
        ],
    );
    make_world_readable(root.path());
    root
}

/// `skillbox eval --tasks-only` of `plant-links` in `tree` against `server`, the report in
/// `output`.
fn eval_planted(
    tree: &Path,
    server: &ScriptedModelServer,
    work: &Path,
    output: &Path,
) -> std::process::Output {
    eval_skill(
        tree,
        &tree.join("plant-links"),
        &server.base_url,
        &work.join("cache"),
        output,
        &["--tasks-only"],
    )
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A file outside every skill and run folder that no eval may write.
fn victim(work: &Path) -> PathBuf {
    let victim = work.join("victim.txt");
    fs_err::write(&victim, "keep").unwrap();
    victim
}

#[test]
fn a_script_cannot_make_the_grader_write_the_answer_through_a_link() {
    let tasks = json!({"evals": [{
        "id": 1,
        "prompt": "Plant a link.",
        "expectations": [{"command": ["true"], "text": "the grading command runs"}],
    }]});
    let tree = plant_tree(&tasks);
    let work = tempfile::tempdir().unwrap();
    let victim = victim(work.path());
    let arguments = json!({"at": ".skillbox-answer.txt", "target": victim}).to_string();
    let server = ScriptedModelServer::start(vec![
        calls("plant", &arguments),
        says("text the model chose"),
    ]);
    let output = work.path().join("report");
    let run = eval_planted(tree.path(), &server, work.path(), &output);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let report = read_report(&output);
    let task = &report["skills"][0]["tasks"]["runs"][0];
    // The link was planted (the handler ran), and the answer still never went through it.
    assert_eq!(task["run"]["calls"][0]["is_error"], false, "{task}");
    assert_eq!(fs_err::read_to_string(&victim).unwrap(), "keep");
    assert_eq!(task["expectations"][0]["passed"], true, "{task}");
}

#[test]
fn a_reused_output_folder_is_staged_afresh_never_through_what_a_run_left() {
    let tasks = json!({"evals": [{
        "id": 1,
        "prompt": "Plant a link.",
        "files": ["evals/files/input.txt"],
        "expectations": [{"output_file": "left-by-the-first-run.txt"}],
    }]});
    let tree = plant_tree(&tasks);
    let work = tempfile::tempdir().unwrap();
    let victim = victim(work.path());
    let arguments = json!({"at": "evals/files/input.txt", "target": victim}).to_string();
    let server = ScriptedModelServer::start(vec![calls("plant", &arguments), says("planted")]);
    let output = work.path().join("report");
    let skill = tree.path().join("plant-links");
    let first = eval_skill(
        tree.path(),
        &skill,
        &server.base_url,
        &work.path().join("cache"),
        &output,
        &["--tasks-only"],
    );
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let outputs = PathBuf::from(
        read_report(&output)["skills"][0]["tasks"]["runs"][0]["run"]["outputs"]
            .as_str()
            .unwrap(),
    );
    assert!(
        fs_err::symlink_metadata(outputs.join("evals/files/input.txt"))
            .unwrap()
            .is_symlink(),
        "the first run planted its link"
    );
    fs_err::write(outputs.join("left-by-the-first-run.txt"), "stale").unwrap();

    // The same output folder again (answers from the cache): the run's folder is made anew.
    let second = eval_skill(
        tree.path(),
        &skill,
        &server.base_url,
        &work.path().join("cache"),
        &output,
        &["--tasks-only"],
    );
    assert_eq!(fs_err::read_to_string(&victim).unwrap(), "keep");
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let report = read_report(&output);
    let task = &report["skills"][0]["tasks"]["runs"][0];
    assert_eq!(report["cache"]["misses"], 0);
    assert_eq!(
        task["expectations"][0]["passed"], false,
        "a file of the earlier run does not pass this one: {task}"
    );
    assert!(
        fs_err::symlink_metadata(outputs.join("evals.moved/files/input.txt"))
            .unwrap()
            .is_file(),
        "this run's copy of the input was a file of its own"
    );
}

#[test]
fn a_skill_whose_name_is_a_path_is_refused_before_anything_is_written() {
    let work = tempfile::tempdir().unwrap();
    let tasks = json!({"evals": [{"id": 1, "prompt": "p", "files": ["evals/files/input.txt"],
        "expectations": [{"contains": "x"}]}]})
    .to_string();
    let root = work.path().join("root");
    write_tree(
        &root,
        &[
            (
                "climber/SKILL.md",
                "---\nname: ../../escaped\ndescription: Climbs. Use when asked to climb.\n---\nBody.\n",
            ),
            ("climber/evals/files/input.txt", "data\n"),
            ("climber/evals/evals.json", &tasks),
        ],
    );
    make_world_readable(&root);
    let server = ScriptedModelServer::start(vec![says("x"), says("x")]);
    let output = work.path().join("a/b/report");
    let run = eval_skill(
        &root,
        &root.join("climber"),
        &server.base_url,
        &work.path().join("cache"),
        &output,
        &["--tasks-only"],
    );
    let stderr = stderr(&run);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`../../escaped`") && stderr.contains("cannot name"),
        "{stderr}"
    );
    assert!(!work.path().join("a/escaped").exists());
    assert!(!work.path().join("a/b/escaped").exists());
    assert!(server.requests().is_empty());
}

#[test]
fn eval_ids_that_clean_to_one_folder_still_get_folders_of_their_own() {
    let tasks = json!({"evals": [
        {"id": "a/b", "prompt": "first", "expectations": [{"contains": "x"}]},
        {"id": "a b", "prompt": "second", "expectations": [{"contains": "x"}]},
        {"id": 7, "prompt": "third", "expectations": [{"contains": "x"}]},
        {"id": "7", "prompt": "fourth", "expectations": [{"contains": "x"}]},
    ]});
    let tree = plant_tree(&tasks);
    let work = tempfile::tempdir().unwrap();
    let server = ScriptedModelServer::start((0..4).map(|_| says("x")).collect());
    let output = work.path().join("report");
    let run = eval_planted(tree.path(), &server, work.path(), &output);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let report = read_report(&output);
    let mut folders: Vec<String> = report["skills"][0]["tasks"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["run"]["outputs"].as_str().unwrap().to_owned())
        .collect();
    folders.sort();
    folders.dedup();
    assert_eq!(folders.len(), 4, "{folders:#?}");
}

#[test]
fn model_and_author_text_reach_the_terminal_escaped() {
    let tasks = json!({"evals": [{
        "id": 1,
        "name": "retitle\u{1b}]0;author\u{7}",
        "prompt": "Count.",
        "expectations": [{"contains": "42", "text": "says 42\nok      forged line"}],
    }]});
    let tree = plant_tree(&tasks);
    let work = tempfile::tempdir().unwrap();
    let server = ScriptedModelServer::start(vec![says(
        "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[1;1Hall checks passed",
    )]);
    let run = eval_planted(
        tree.path(),
        &server,
        work.path(),
        &work.path().join("report"),
    );
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("failed: retitle"), "{stdout}");
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
        "{stdout:?}"
    );
    assert!(!stdout.contains("\nok      forged line"), "{stdout}");
}

#[test]
fn a_proposed_description_with_control_characters_is_never_written() {
    let triggers = tuning_queries();
    let root = tempfile::tempdir().unwrap();
    let skill_md = "---\nname: word-count\ndescription: Counts the words of a text. Use when asked how many words a text has.\n---\nCount.\n";
    write_tree(
        root.path(),
        &[
            ("word-count/SKILL.md", skill_md),
            ("word-count/evals/triggers.json", &triggers.to_string()),
        ],
    );
    make_world_readable(root.path());
    // The model makes the description now look as bad as it can (missing every should and
    // taking every should-not), then proposes one holding a DEL, which YAML cannot carry, and
    // makes it win on the held-out queries by never calling a tool.
    let mut replies: Vec<_> = (0..4).map(|_| says("no")).collect();
    replies.extend((0..4).map(|_| calls("load_skill", r#"{"skill":"word-count"}"#)));
    replies.push(says(
        "<description>Counts words.\u{7f} Use \"always\": yes</description>",
    ));
    replies.extend((0..4).map(|_| says("no")));
    let server = ScriptedModelServer::start(replies);
    let work = tempfile::tempdir().unwrap();
    let output = work.path().join("report");
    // No neighbour holds the skill: the variant alone is offered while it is scored.
    let neighbours = work.path().join("neighbours");
    fs_err::create_dir(&neighbours).unwrap();
    let run = eval_skill(
        &neighbours,
        &root.path().join("word-count"),
        &server.base_url,
        &work.path().join("cache"),
        &output,
        &["--improve-description", "--candidates", "1", "--write"],
    );
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(
        fs_err::read_to_string(root.path().join("word-count/SKILL.md")).unwrap(),
        skill_md
    );
    let candidate = &read_report(&output)["skills"][0]["description"]["candidates"][0];
    assert!(
        candidate["rejected"]
            .as_str()
            .is_some_and(|why| why.contains("control character")),
        "{candidate}"
    );
}

#[test]
fn eval_files_through_links_or_pipes_are_refused_by_name() {
    let tasks = json!({"evals": [{"id": 1, "prompt": "p", "files": ["evals/files/input.txt"]}]});
    for (planted, wanted) in [
        ("link", "passes through a symbolic link"),
        ("folder link", "passes through a symbolic link"),
        ("fifo", "is not a regular file"),
    ] {
        let tree = plant_tree(&tasks);
        let files = tree.path().join("plant-links/evals/files");
        let work = tempfile::tempdir().unwrap();
        let secret = work.path().join("secret.txt");
        fs_err::write(&secret, "secret").unwrap();
        match planted {
            "link" => {
                fs_err::remove_file(files.join("input.txt")).unwrap();
                std::os::unix::fs::symlink(&secret, files.join("input.txt")).unwrap();
            }
            "folder link" => {
                fs_err::remove_dir_all(&files).unwrap();
                fs_err::create_dir(work.path().join("elsewhere")).unwrap();
                fs_err::write(work.path().join("elsewhere/input.txt"), "secret").unwrap();
                std::os::unix::fs::symlink(work.path().join("elsewhere"), &files).unwrap();
            }
            _ => {
                fs_err::remove_file(files.join("input.txt")).unwrap();
                make_fifo(&files.join("input.txt"));
            }
        }
        let server = ScriptedModelServer::start(vec![says("x")]);
        let output = work.path().join("report");
        let run = eval_planted(tree.path(), &server, work.path(), &output);
        let stderr = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{planted}: {stderr}");
        assert!(
            stderr.contains("evals/evals.json")
                && stderr.contains("`evals/files/input.txt`")
                && stderr.contains(wanted),
            "{planted}: {stderr}"
        );
        assert!(server.requests().is_empty(), "{planted}");
    }
}

/// A project (the working directory) with `word-count` under its `.claude/skills`, never
/// trusted, and a home and config folder of its own.
fn untrusted_project() -> (tempfile::TempDir, PathBuf) {
    let temp = tempfile::Builder::new()
        .prefix("skillbox-eval-trust")
        .tempdir()
        .unwrap();
    let project = fs_err::canonicalize(temp.path()).unwrap().join("project");
    let tasks = json!({"evals": [{
        "id": 1,
        "prompt": "How many words are in: one two three?",
        "expectations": [
            {"tool_called": "count_words"},
            {"command": ["python3", "{skill}/evals/check.py"]},
        ],
    }]})
    .to_string();
    write_tree(
        &project.join(".claude/skills"),
        &[
            (
                "word-count/SKILL.md",
                "---\nname: word-count\ndescription: Counts words. Use when asked how many words a text has.\n---\nCall count_words.\n",
            ),
            (
                "word-count/tools.json",
                r#"[{"name":"count_words","description":"Count words.","script":"scripts/count.py","parameters":{"text":{"type":"string","description":"The text"}}}]"#,
            ),
            (
                "word-count/scripts/count.py",
                "import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({'words': len(args['text'].split())}))\n",
            ),
            ("word-count/evals/check.py", "print('the check ran')\n"),
            ("word-count/evals/evals.json", &tasks),
        ],
    );
    fs_err::create_dir_all(temp.path().join("home")).unwrap();
    make_world_readable(temp.path());
    (temp, project)
}

fn eval_in_project(
    temp: &Path,
    project: &Path,
    target: &str,
    base_url: &str,
) -> std::process::Output {
    let mut command = skillbox();
    command
        .current_dir(project)
        .env("HOME", temp.join("home"))
        .env("SKILLBOX_CONFIG_DIR", temp.join("config"))
        .env("SKILLBOX_CONFIG", "/dev/null")
        .env("SKILLBOX_CACHE_DIR", temp.join("cache"));
    for variable in ["XDG_CONFIG_HOME", "SKILLBOX_SANDBOX"]
        .iter()
        .chain(MODEL_VARIABLES)
    {
        command.env_remove(variable);
    }
    command
        .args(["eval", target, "--tasks-only", "--jobs", "1", "--no-cache"])
        .args(["--base-url", base_url, "--output"])
        .arg(temp.join(format!("report-{}", target.replace('/', "_"))))
        .output()
        .unwrap()
}

#[test]
fn a_named_project_skill_keeps_its_root_untrusted_in_task_runs_and_checks() {
    let server = ScriptedModelServer::start(vec![
        calls("count_words", r#"{"text":"one two three"}"#),
        says("3 words"),
        calls("count_words", r#"{"text":"one two three"}"#),
        says("3 words"),
    ]);
    let (temp, project) = untrusted_project();
    let graded = |target: &str| -> Value {
        let run = eval_in_project(temp.path(), &project, target, &server.base_url);
        assert_eq!(run.status.code(), Some(0), "{target}: {}", stderr(&run));
        let folder = temp
            .path()
            .join(format!("report-{}", target.replace('/', "_")));
        read_report(&folder)["skills"][0]["tasks"]["runs"][0].clone()
    };

    // By name, from the project's own root: neither the tool nor the grading command runs.
    let named = graded("word-count");
    let call = &named["run"]["calls"][0];
    assert_eq!(call["is_error"], true, "{named}");
    assert!(
        call["result"].as_str().unwrap().contains("never trusted"),
        "{call}"
    );
    let check = &named["expectations"][1];
    assert_eq!(check["passed"], false, "{check}");
    assert!(
        check["evidence"]
            .as_str()
            .unwrap()
            .contains("never trusted"),
        "{check}"
    );

    // The same folder named as a path is a root the person chose: its code runs.
    let chosen = graded(".claude/skills/word-count");
    assert_eq!(chosen["run"]["calls"][0]["is_error"], false, "{chosen}");
    assert_eq!(chosen["expectations"][1]["passed"], true, "{chosen}");
}

#[test]
fn pack_never_replaces_a_pipe_or_device_named_as_its_output() {
    let work = tempfile::tempdir().unwrap();
    write_tree(
        work.path(),
        &[(
            "demo/SKILL.md",
            "---\nname: demo\ndescription: Demo. Use for demos.\n---\nBody.\n",
        )],
    );
    let pipe = work.path().join("pipe");
    make_fifo(&pipe);
    let link = work.path().join("stdout-like");
    std::os::unix::fs::symlink(&pipe, &link).unwrap();
    for output in [&pipe, &link] {
        let run = skillbox()
            .arg("pack")
            .arg(work.path().join("demo"))
            .arg("-o")
            .arg(output)
            .output()
            .unwrap();
        let stderr = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("FIFO"), "{stderr}");
    }
    assert!(fs_err::metadata(&pipe).unwrap().file_type().is_fifo());
    assert!(fs_err::symlink_metadata(&link).unwrap().is_symlink());
    let names: Vec<_> = fs_err::read_dir(work.path()).unwrap().collect();
    assert_eq!(names.len(), 3, "no temporary file is left");

    // What is left out is named by the author's folder names: escaped for the terminal.
    write_tree(
        &work.path().join("demo"),
        &[("retitle\u{1b}]0;x\u{7}/node_modules/m.js", "x")],
    );
    let run = skillbox()
        .arg("pack")
        .arg(work.path().join("demo"))
        .arg("-o")
        .arg(work.path().join("demo.skill"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("left out  retitle\\u{1b}"), "{stdout}");
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
}

#[test]
fn runs_beyond_the_bounds_are_refused_before_anything_is_made() {
    let tree = plant_tree(&json!({"evals": [{"id": 1, "prompt": "p",
        "files": ["evals/files/input.txt"]}]}));
    let work = tempfile::tempdir().unwrap();
    for (extra, wanted) in [
        (vec!["--repeat", "4294967295"], "--repeat: at most 100"),
        (vec!["--jobs", "100000"], "--jobs: at most 64"),
        (
            vec!["--improve-description", "--candidates", "100000"],
            "--candidates: at most 20",
        ),
    ] {
        let output = work.path().join("report");
        let run = agent_command(tree.path())
            .env("SKILLBOX_CACHE_DIR", work.path().join("cache"))
            .arg("eval")
            .arg(tree.path().join("plant-links"))
            .args(["--base-url", "http://127.0.0.1:9/v1", "--output"])
            .arg(&output)
            .args(&extra)
            .output()
            .unwrap();
        let stderr = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(wanted), "{extra:?}: {stderr}");
        assert!(!output.exists(), "{extra:?}");
    }
}
