//! `skillbox eval` through the real binary: scripted models for exact behaviour (a model that
//! names the skill, a neighbour, a tool, nothing; one that errors or never answers), the
//! response cache, task evals with a baseline and every kind of check, description tuning;
//! and the real local model end to end.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skillbox_testkit::local_model::LocalModel;
use skillbox_testkit::model_server::{Reply, ScriptedModelServer};

use super::agent::{calls, says};
use super::support::{agent_command, make_world_readable, write_tree};

/// A root with the skill under test (`word-count`: a tools.json tool whose handler also writes
/// `count.txt`, and a grading script) and a neighbour (`greeting`).
fn eval_tree(triggers: &Value, tasks: Option<&Value>) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let triggers = triggers.to_string();
    let tasks = tasks.map(Value::to_string);
    let mut files: Vec<(&str, &str)> = vec![
        (
            "word-count/SKILL.md",
            "---\nname: word-count\ndescription: Counts the words of a text. Use when asked how many words a text has.\n---\nCall the count_words tool with the text.\n",
        ),
        (
            "word-count/tools.json",
            r#"[{"name":"count_words","description":"Count the words in a text.","script":"scripts/count.py","parameters":{"text":{"type":"string","description":"The text"}}}]"#,
        ),
        (
            "word-count/scripts/count.py",
            "import json, sys\nargs = json.load(sys.stdin)\nwords = len(str(args.get('text', '')).split())\nopen('count.txt', 'w').write(str(words))\nprint(json.dumps({'words': words}))\n",
        ),
        (
            "word-count/evals/check.py",
            "import sys\nanswer = open('.skillbox-answer.txt').read()\nsys.exit(0 if '3' in answer else 1)\n",
        ),
        ("word-count/evals/files/input.txt", "one two three\n"),
        ("word-count/evals/triggers.json", &triggers),
        (
            "greeting/SKILL.md",
            "---\nname: greeting\ndescription: Writes a personal greeting. Use when asked to greet someone.\n---\nGreet warmly.\n",
        ),
    ];
    if let Some(tasks) = &tasks {
        files.push(("word-count/evals/evals.json", tasks));
    }
    write_tree(root.path(), &files);
    make_world_readable(root.path());
    root
}

/// `skillbox eval` of `word-count` in `root` against `base_url`, the cache in `cache`, the
/// report in `output`.
fn eval(
    root: &Path,
    base_url: &str,
    cache: &Path,
    output: &Path,
    extra: &[&str],
) -> std::process::Output {
    eval_skill(
        root,
        &root.join("word-count"),
        base_url,
        cache,
        output,
        extra,
    )
}

/// `skillbox eval` of the skill folder `skill` (a root of its own) over the root `root`.
pub(super) fn eval_skill(
    root: &Path,
    skill: &Path,
    base_url: &str,
    cache: &Path,
    output: &Path,
    extra: &[&str],
) -> std::process::Output {
    agent_command(root)
        .env("SKILLBOX_CACHE_DIR", cache)
        .arg("eval")
        .arg(skill)
        .args(["--base-url", base_url, "--jobs", "1", "--output"])
        .arg(output)
        .args(extra)
        .output()
        .unwrap()
}

pub(super) fn read_report(output: &Path) -> Value {
    serde_json::from_str(&fs_err::read_to_string(output.join("report.json")).unwrap()).unwrap()
}

fn text(output: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn trigger_evals_count_only_the_skill_the_model_named_and_a_rerun_asks_nothing() {
    let triggers = json!([
        {"query": "How many words are in: a b c", "should_trigger": true},
        {"query": "Count the words of: x y", "should_trigger": true},
        {"query": "Greet Ada", "should_trigger": false},
        {"query": "What is 2+2?", "should_trigger": false},
        {"query": "how many words: hello", "should_trigger": true},
        {"query": "word count of 'a'", "should_trigger": true},
    ]);
    let tree = eval_tree(&triggers, None);
    let server = ScriptedModelServer::start(vec![
        calls("load_skill", r#"{"skill":"word-count"}"#),
        // One of its tools: a trigger too (the handler is denied: no code runs).
        calls("count_words", r#"{"text":"x y"}"#),
        // A neighbour on a should-not query: no false positive of this skill.
        calls("load_skill", r#"{"skill":"greeting"}"#),
        says("4"),
        // The wrong skill, called by its name as small models do.
        calls("greeting", "{}"),
        // A model that never calls a tool.
        says("1"),
    ]);
    let work = tempfile::tempdir().unwrap();
    let (cache, output) = (work.path().join("cache"), work.path().join("report"));
    let run = eval(tree.path(), &server.base_url, &cache, &output, &[]);
    let (stdout, stderr) = text(&run);
    assert_eq!(run.status.code(), Some(0), "{stdout}\n{stderr}");
    // One request per query: a named skill ends the turn without another request.
    assert_eq!(server.requests().len(), 6);
    // What the model saw is what `ask` offers: the skills section and the skill tools.
    let first: Value = serde_json::from_str(&server.requests()[0].body).unwrap();
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("word-count") && system.contains("greeting"),
        "{system}"
    );
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        offered.contains(&"load_skill") && offered.contains(&"count_words"),
        "{offered:?}"
    );

    let report = read_report(&output);
    let triggers = &report["skills"][0]["triggers"];
    assert_eq!(
        triggers["confusion"],
        json!({"true_positive": 2, "false_positive": 0, "true_negative": 2, "false_negative": 2})
    );
    assert_eq!(triggers["recall"]["mean"], 0.5);
    assert_eq!(triggers["precision"]["mean"], 1.0);
    let named: Vec<&Value> = triggers["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|query| &query["runs"][0]["triggered"])
        .collect();
    assert_eq!(
        named,
        [
            &json!("word-count"),
            &json!("word-count"),
            &json!("greeting"),
            &Value::Null,
            &json!("greeting"),
            &Value::Null
        ]
    );
    // What a person reads, with the run's own paths, port and time as placeholders.
    let shown = stdout
        .replace(&server.base_url, "http://127.0.0.1:PORT/v1")
        .replace(&output.display().to_string(), "OUTPUT");
    let shown = regex::Regex::new(r"· [0-9.]+ s\n")
        .unwrap()
        .replace(&shown, "· TIME s\n");
    insta::assert_snapshot!("eval_trigger_summary", shown);
    assert!(stdout.contains("recall 0.50"), "{stdout}");
    assert!(
        stdout.contains(
            "misfire: should trigger \"how many words: hello\" (triggered 0%; named: greeting)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("named: none"), "{stdout}");
    // Transcripts of the runs are kept and named in the report.
    let transcript = triggers["queries"][0]["runs"][0]["transcript"]
        .as_str()
        .unwrap();
    assert!(
        output
            .join("transcripts")
            .join(format!("{transcript}.jsonl"))
            .is_file()
    );

    // The same inputs again: every answer from the cache (the server has no replies left, so
    // any request would fail), the same figures, and a threshold for CI.
    let again = work.path().join("again");
    let junit = work.path().join("junit.xml");
    let rerun = eval(
        tree.path(),
        &server.base_url,
        &cache,
        &again,
        &["--min-recall", "0.8", "--junit", junit.to_str().unwrap()],
    );
    let (stdout, stderr) = text(&rerun);
    assert_eq!(rerun.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("`word-count`: trigger recall 0.50 is below --min-recall 0.8"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), 6);
    let cached = read_report(&again);
    assert_eq!(cached["cache"]["hits"], 6);
    assert_eq!(cached["cache"]["misses"], 0);
    assert_eq!(
        cached["skills"][0]["triggers"]["confusion"],
        report["skills"][0]["triggers"]["confusion"]
    );
    let xml = fs_err::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("tests=\"6\"") && xml.contains("failures=\"2\""),
        "{xml}"
    );

    // --no-cache asks again.
    let fresh = eval(
        tree.path(),
        &server.base_url,
        &cache,
        &work.path().join("fresh"),
        &["--no-cache"],
    );
    assert!(server.requests().len() > 6, "{}", text(&fresh).1);
}

#[test]
fn a_model_that_fails_or_never_answers_is_reported_and_the_eval_goes_on() {
    let triggers = json!([
        {"query": "How many words are in: a b c", "should_trigger": true},
        {"query": "Count the words of: x y", "should_trigger": true},
        {"query": "What is 2+2?", "should_trigger": false},
    ]);
    let tree = eval_tree(&triggers, None);
    let server = ScriptedModelServer::start(vec![
        Reply::error(400, r#"{"error":{"message":"model not found"}}"#),
        Reply::Silent,
        says("4"),
    ]);
    let work = tempfile::tempdir().unwrap();
    let output = work.path().join("report");
    let started = std::time::Instant::now();
    let run = eval(
        tree.path(),
        &server.base_url,
        &work.path().join("cache"),
        &output,
        &["--run-timeout", "2"],
    );
    let (stdout, stderr) = text(&run);
    assert_eq!(run.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    let report = read_report(&output);
    let queries = &report["skills"][0]["triggers"]["queries"];
    let error = |index: usize| {
        queries[index]["runs"][0]["error"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    assert!(
        error(0).contains("HTTP 400") && error(0).contains("model not found"),
        "{}",
        error(0)
    );
    assert!(error(1).contains("no decision within 2 s"), "{}", error(1));
    assert_eq!(report["skills"][0]["triggers"]["errors"], 2);
    assert!(stdout.contains("2 runs failed"), "{stdout}");
    // Failures are never cached: the next run asks again.
    assert_eq!(report["cache"]["misses"], 3);
}

#[test]
fn task_evals_grade_with_and_without_the_skill_and_write_benchmark_json() {
    let triggers = json!([{"query": "How many words are in: a b c", "should_trigger": true}]);
    let tasks = json!({"skill_name": "word-count", "evals": [{
        "id": 1,
        "prompt": "How many words are in evals/files/input.txt?",
        "expected_output": "3",
        "files": ["evals/files/input.txt"],
        "expectations": [
            {"contains": "3 words"},
            {"tool_called": "count_words"},
            "The answer is polite",
            {"command": ["python3", "{skill}/evals/check.py"], "text": "the grading script passes"},
            {"output_file": "count.txt"},
        ],
    }]});
    let tree = eval_tree(&triggers, Some(&tasks));
    let server = ScriptedModelServer::start(vec![
        calls("count_words", r#"{"text":"one two three"}"#),
        says("There are 3 words."),
        says(r#"{"passed": true, "evidence": "it thanks the user"}"#),
        says("I cannot count files."),
        says(r#"Verdict: {"passed": false, "evidence": "no count given"}"#),
    ]);
    let work = tempfile::tempdir().unwrap();
    let output = work.path().join("report");
    let run = eval(
        tree.path(),
        &server.base_url,
        &work.path().join("cache"),
        &output,
        &["--tasks-only", "--baseline", "--min-pass-rate", "0.9"],
    );
    let (stdout, stderr) = text(&run);
    assert_eq!(run.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(server.requests().len(), 5);
    // Without the skill, its tool is not offered.
    let baseline: Value = serde_json::from_str(&server.requests()[3].body).unwrap();
    assert!(!baseline.to_string().contains("count_words"), "{baseline}");

    let report = read_report(&output);
    let runs = report["skills"][0]["tasks"]["runs"].as_array().unwrap();
    let graded = |index: usize| -> Vec<(bool, String)> {
        runs[index]["expectations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|graded| {
                (
                    graded["passed"].as_bool().unwrap(),
                    graded["graded_by"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(runs[0]["configuration"], "with_skill");
    assert_eq!(
        graded(0),
        [
            (true, "check".to_owned()),
            (true, "check".to_owned()),
            (true, "judge:default".to_owned()),
            (true, "check".to_owned()),
            (true, "check".to_owned()),
        ],
        "{}",
        runs[0]["expectations"]
    );
    assert_eq!(runs[1]["configuration"], "without_skill");
    assert!(
        graded(1).iter().all(|(passed, _)| !passed),
        "{}",
        runs[1]["expectations"]
    );
    // The input file was in the run's folder, and what the handler wrote stayed there.
    let outputs = PathBuf::from(runs[0]["run"]["outputs"].as_str().unwrap());
    assert_eq!(
        fs_err::read_to_string(outputs.join("evals/files/input.txt")).unwrap(),
        "one two three\n"
    );
    assert_eq!(
        fs_err::read_to_string(outputs.join("count.txt")).unwrap(),
        "3"
    );
    assert!(!outputs.join(".skillbox-answer.txt").exists());

    // skill-creator's benchmark.json, the field names its viewer reads.
    let benchmark: Value = serde_json::from_str(
        &fs_err::read_to_string(output.join("word-count/benchmark.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(benchmark["metadata"]["skill_name"], "word-count");
    assert_eq!(benchmark["runs"][0]["configuration"], "with_skill");
    assert_eq!(benchmark["runs"][0]["result"]["pass_rate"], 1.0);
    assert_eq!(
        benchmark["run_summary"]["without_skill"]["pass_rate"]["mean"],
        0.0
    );
    assert_eq!(benchmark["run_summary"]["delta"]["pass_rate"], "+1.00");
    assert!(
        stdout.contains("pass rate with the skill 1.00   without 0.00   delta +1.00"),
        "{stdout}"
    );
    assert!(stdout.contains("gradings by the judge model"), "{stdout}");
}

/// Four queries that should trigger `word-count` and four that should not: enough for
/// description tuning to hold two of each out.
pub(super) fn tuning_queries() -> Value {
    json!([
        {"query": "How many words are in: a b c", "should_trigger": true},
        {"query": "Count the words of: x y", "should_trigger": true},
        {"query": "word count of 'a b'", "should_trigger": true},
        {"query": "how many words: hello there", "should_trigger": true},
        {"query": "What is 2+2?", "should_trigger": false},
        {"query": "Greet Ada", "should_trigger": false},
        {"query": "Capital of France?", "should_trigger": false},
        {"query": "Say hi", "should_trigger": false},
    ])
}

#[test]
fn description_tuning_keeps_a_rewrite_only_when_it_wins_on_held_out_queries() {
    let tree = eval_tree(&tuning_queries(), None);
    let skill_md = tree.path().join("word-count/SKILL.md");
    let before = fs_err::read_to_string(&skill_md).unwrap();
    let mut replies: Vec<Reply> = (0..8).map(|_| says("no tools needed")).collect();
    // The proposal, then its held-out runs: two should-trigger queries (held out first), then
    // two should-not.
    replies.push(says("<description>Counts words exactly. Use when asked how many words a text has.</description>"));
    replies.push(calls("load_skill", r#"{"skill":"word-count"}"#));
    replies.push(calls("load_skill", r#"{"skill":"word-count"}"#));
    replies.push(says("4"));
    replies.push(says("hi"));
    let server = ScriptedModelServer::start(replies);
    let work = tempfile::tempdir().unwrap();
    let cache = work.path().join("cache");
    let output = work.path().join("report");
    let run = eval(
        tree.path(),
        &server.base_url,
        &cache,
        &output,
        &["--improve-description", "--candidates", "1"],
    );
    let (stdout, stderr) = text(&run);
    assert_eq!(run.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(server.requests().len(), 13);
    let description = &read_report(&output)["skills"][0]["description"];
    assert_eq!(description["holdout_queries"].as_array().unwrap().len(), 4);
    assert_eq!(description["train_queries"].as_array().unwrap().len(), 4);
    // The proposer never saw a held-out query.
    let proposal = &server.requests()[8].body;
    for held_out in description["holdout_queries"].as_array().unwrap() {
        let held_out = held_out.as_str().unwrap();
        assert!(
            !proposal.contains(held_out),
            "{held_out} was shown to the proposer"
        );
    }
    assert_eq!(description["original_holdout_accuracy"], 0.5);
    assert_eq!(description["candidates"][0]["holdout_accuracy"], 1.0);
    assert_eq!(
        description["best"],
        "Counts words exactly. Use when asked how many words a text has."
    );
    assert!(stdout.contains("held-out accuracy 0.50 → 1.00"), "{stdout}");
    assert!(stdout.contains("+Counts words exactly."), "{stdout}");
    // Not written without --write.
    assert_eq!(fs_err::read_to_string(&skill_md).unwrap(), before);

    // With --write (every answer from the cache now), the description is replaced in place.
    let written = eval(
        tree.path(),
        &server.base_url,
        &cache,
        &work.path().join("written"),
        &["--improve-description", "--candidates", "1", "--write"],
    );
    assert_eq!(written.status.code(), Some(0), "{}", text(&written).1);
    assert_eq!(server.requests().len(), 13);
    let after = fs_err::read_to_string(&skill_md).unwrap();
    assert!(
        after.contains(
            "description: \"Counts words exactly. Use when asked how many words a text has.\"\n"
        ),
        "{after}"
    );
    assert!(
        after.ends_with("Call the count_words tool with the text.\n"),
        "{after}"
    );
    let validated = agent_command(tree.path())
        .args(["validate"])
        .arg(tree.path().join("word-count"))
        .output()
        .unwrap();
    assert_eq!(validated.status.code(), Some(0), "{}", text(&validated).0);
}

#[test]
fn bad_eval_files_and_arguments_are_named() {
    let tree = eval_tree(&json!([{"query": "q", "should_trigger": "yes"}]), None);
    let work = tempfile::tempdir().unwrap();
    let run = eval(
        tree.path(),
        "http://127.0.0.1:9/v1",
        &work.path().join("c"),
        &work.path().join("o"),
        &[],
    );
    let (_, stderr) = text(&run);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("evals/triggers.json") && stderr.contains("[0].should_trigger"),
        "{stderr}"
    );

    let good = eval_tree(&json!([{"query": "q", "should_trigger": true}]), None);
    for (extra, wanted) in [
        (vec!["--repeat", "0"], "--repeat: give at least 1"),
        (
            vec!["--min-recall", "1.5"],
            "--min-recall: 1.5 is not between 0 and 1",
        ),
        (
            vec!["--improve-description"],
            "description tuning needs at least 2 queries that should trigger",
        ),
        (vec!["--approve", "ask"], "an eval runs unattended"),
    ] {
        let run = eval(
            good.path(),
            "http://127.0.0.1:9/v1",
            &work.path().join("c"),
            &work.path().join("o"),
            &extra,
        );
        let (_, stderr) = text(&run);
        assert_eq!(run.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(wanted), "{extra:?}: {stderr}");
    }
    // A bare word that is a folder here and a skill under the roots: which one is meant (and
    // whether its code is trusted) is not guessed.
    let ambiguous = agent_command(good.path())
        .current_dir(good.path())
        .env("SKILLBOX_CACHE_DIR", work.path().join("c"))
        .args(["eval", "word-count", "--base-url", "http://127.0.0.1:9/v1"])
        .output()
        .unwrap();
    let (_, stderr) = text(&ambiguous);
    assert_eq!(ambiguous.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "`word-count` is both a folder here and a skill under the roots; write `./word-count`"
        ),
        "{stderr}"
    );
    // A model that cannot be reached at all: the report is written, and the exit says so.
    let output = work.path().join("unreachable");
    let run = eval(
        good.path(),
        "http://127.0.0.1:9/v1",
        &work.path().join("c"),
        &output,
        &[],
    );
    let (_, stderr) = text(&run);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("every run failed") && stderr.contains("nothing listens there"),
        "{stderr}"
    );
    assert!(output.join("report.json").is_file());
    let missing = agent_command(good.path())
        .env("SKILLBOX_CACHE_DIR", work.path().join("c"))
        .args([
            "eval",
            "no-such-skill",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ])
        .output()
        .unwrap();
    let (_, stderr) = text(&missing);
    assert_eq!(missing.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`no-such-skill` is neither a folder nor a skill under the roots"),
        "{stderr}"
    );
}

/// A catalog for the real model: a skill holding facts no model knows (in its instructions, or
/// from a tool when `with_tool`: the 1.5B model answers from a tool's result reliably, from
/// loaded instructions not always), with neighbours.
fn zephyr_tree(
    name: &str,
    description: &str,
    triggers: &Value,
    with_tool: bool,
) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let skill_md = if with_tool {
        format!(
            "---\nname: {name}\ndescription: {description}\n---\nCall the zephyr_release tool and answer with what it returns.\n"
        )
    } else {
        format!(
            "---\nname: {name}\ndescription: {description}\n---\n# Project Zephyr releases\n\nProject Zephyr's next release is version 4.2, codename PELICAN-7, shipping on 12 March 2027.\nThe release after it is 4.3, codename HERON-2.\n\nWhen asked about a Zephyr release, answer with these facts.\n"
        )
    };
    let tasks = json!({"skill_name": name, "evals": [{
        "id": "codename",
        "prompt": "What is the codename of the next Project Zephyr release?",
        "expectations": [{"contains": "PELICAN-7", "ignore_case": true}],
    }]})
    .to_string();
    let triggers = triggers.to_string();
    if with_tool {
        write_tree(
            root.path(),
            &[
                (
                    &format!("{name}/tools.json"),
                    r#"[{"name":"zephyr_release","description":"The version, codename and ship date of the next Project Zephyr release.","script":"scripts/release.py","parameters":{}}]"#,
                ),
                (
                    &format!("{name}/scripts/release.py"),
                    "import json\nprint(json.dumps({'version': '4.2', 'codename': 'PELICAN-7', 'ships': '2027-03-12'}))\n",
                ),
            ],
        );
    }
    write_tree(
        root.path(),
        &[
            (&format!("{name}/SKILL.md"), &skill_md),
            (&format!("{name}/evals/triggers.json"), &triggers),
            (&format!("{name}/evals/evals.json"), &tasks),
            (
                "greeting/SKILL.md",
                "---\nname: greeting\ndescription: Writes a personal greeting for someone. Use when asked to greet a person.\n---\nWrite a warm greeting.\n",
            ),
            (
                "haiku/SKILL.md",
                "---\nname: haiku\ndescription: Writes a haiku about a topic. Use when asked for a haiku.\n---\nWrite one haiku.\n",
            ),
            (
                "word-count/SKILL.md",
                "---\nname: word-count\ndescription: Counts the words of a text. Use when asked how many words a text has.\n---\nCount the words.\n",
            ),
        ],
    );
    make_world_readable(root.path());
    root
}

/// `skillbox eval` of `name` in `root` on the local model, deterministic and bounded.
fn eval_locally(
    model: &LocalModel,
    root: &Path,
    name: &str,
    output: &Path,
    extra: &[&str],
) -> std::process::Output {
    agent_command(root)
        .env("SKILLBOX_CACHE_DIR", output.join("cache"))
        .args(["eval"])
        .arg(root.join(name))
        .args([
            "--base-url",
            &model.base_url,
            "--temperature",
            "0",
            "--max-output-tokens",
            "256",
        ])
        .args(["--jobs", "1", "--output"])
        .arg(output.join("report"))
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_local_model_triggers_the_skill_above_chance_and_its_task_passes_only_with_it() {
    let Some(model) = LocalModel::shared() else {
        return;
    };
    let _turn = model.lock();
    let triggers = json!([
        {"query": "What is the codename of the next Project Zephyr release?", "should_trigger": true},
        {"query": "When does Zephyr 4.2 ship?", "should_trigger": true},
        {"query": "What comes after Zephyr 4.2, and what is it called?", "should_trigger": true},
        {"query": "Write a haiku about autumn leaves", "should_trigger": false},
        {"query": "What is the capital of France?", "should_trigger": false},
        {"query": "Greet my friend Ada Lovelace warmly", "should_trigger": false},
    ]);
    let tree = zephyr_tree(
        "zephyr-release",
        "Knows the versions, codenames and ship dates of Project Zephyr releases. Use when asked about a Zephyr release.",
        &triggers,
        true,
    );
    let work = tempfile::tempdir().unwrap();
    let run = eval_locally(
        model,
        tree.path(),
        "zephyr-release",
        work.path(),
        &["--baseline"],
    );
    let (stdout, stderr) = text(&run);
    assert_eq!(run.status.code(), Some(0), "{stdout}\n{stderr}");
    let report = read_report(&work.path().join("report"));
    let skill = &report["skills"][0];
    // Chance scores an accuracy of 0.5 here (never triggering, always triggering, a coin) and
    // a recall of 0, 1 or 0.5: the model must beat all three.
    let accuracy = skill["triggers"]["accuracy"]["mean"].as_f64().unwrap();
    let recall = skill["triggers"]["recall"]["mean"].as_f64().unwrap();
    assert!(accuracy > 0.5 && recall > 0.5, "{stdout}");
    let summary = &skill["tasks"]["summary"];
    assert_eq!(summary["with_skill"]["pass_rate"]["mean"], 1.0, "{stdout}");
    assert_eq!(
        summary["without_skill"]["pass_rate"]["mean"], 0.0,
        "{stdout}"
    );
}

#[test]
fn a_local_model_improves_a_vague_description_on_held_out_queries() {
    let Some(model) = LocalModel::shared() else {
        return;
    };
    let _turn = model.lock();
    let triggers = json!([
        {"query": "What is the codename of the next Project Zephyr release?", "should_trigger": true},
        {"query": "When does Zephyr 4.2 ship?", "should_trigger": true},
        {"query": "Which version number will the next Zephyr release have?", "should_trigger": true},
        {"query": "What comes after Zephyr 4.2, and what is it called?", "should_trigger": true},
        {"query": "Write a haiku about autumn leaves", "should_trigger": false},
        {"query": "What is the capital of France?", "should_trigger": false},
        {"query": "Translate 'good morning' into Spanish", "should_trigger": false},
        {"query": "How many words are in: the cat sat on the mat", "should_trigger": false},
    ]);
    // A name and a description that say nothing: the model cannot tell when to use it.
    let tree = zephyr_tree("team-notes", "Notes.", &triggers, false);
    let work = tempfile::tempdir().unwrap();
    let run = eval_locally(
        model,
        tree.path(),
        "team-notes",
        work.path(),
        &["--improve-description", "--candidates", "2"],
    );
    let (stdout, stderr) = text(&run);
    assert_eq!(run.status.code(), Some(0), "{stdout}\n{stderr}");
    let description = &read_report(&work.path().join("report"))["skills"][0]["description"];
    let before = description["original_holdout_accuracy"].as_f64().unwrap();
    let best = description["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|candidate| candidate["holdout_accuracy"].as_f64())
        .fold(0.0, f64::max);
    assert!(best > before, "{stdout}");
    assert!(description["best"].is_string(), "{stdout}");
}
