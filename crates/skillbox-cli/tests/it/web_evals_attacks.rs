//! The eval pages of `skillbox serve` against hostile data on disk and hostile clients, through
//! the real binary over raw HTTP. A report and its transcripts are written from model output
//! and skill files, so every field is treated as an attacker's: markup and links in every
//! string, ids that are not ids, files that are FIFOs, links, sparse giants or swapped
//! meanwhile, and reports and transcripts built so that a small file becomes a huge page.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::serve::start_server_command;
use super::support::{
    HttpAnswer as Answer, KilledOnDrop, memory_kib, parse_http_answer as parse_answer, repo_root,
    request_head, skill_md, write_tree,
};

/// A `skillbox serve` process over a skill root with one skill (`hello`), its data folder
/// `data`.
struct Serve {
    child: KilledOnDrop,
    /// `127.0.0.1:PORT`.
    address: String,
    data: tempfile::TempDir,
    _root: tempfile::TempDir,
}

impl Serve {
    /// `skillbox serve` with `extra` arguments over a fresh data folder prepared by `prepare`.
    fn start(extra: &[&str], prepare: impl FnOnce(&Path)) -> Self {
        let root = tempfile::tempdir().unwrap();
        write_tree(
            root.path(),
            &[("hello/SKILL.md", &skill_md("hello", "Says hello."))],
        );
        let data = tempfile::tempdir().unwrap();
        prepare(&data.path().join("evals"));
        let mut command = Command::new(assert_cmd::cargo::cargo_bin("skillbox"));
        command
            .current_dir(repo_root())
            .arg("serve")
            .arg(root.path())
            .args([
                "--listen",
                "127.0.0.1:0",
                "--sandbox",
                "off",
                "--no-watch",
                "--data-dir",
            ])
            .arg(data.path())
            .args(extra)
            .env("SKILLBOX_CONFIG", "/dev/null")
            .env_remove("SKILLBOX_ALLOWED_HOSTS");
        let (child, url) = start_server_command(command);
        let address = url
            .trim_start_matches("http://")
            .trim_end_matches("/rpc")
            .to_owned();
        Serve {
            child: KilledOnDrop(child),
            address,
            data,
            _root: root,
        }
    }

    fn evals(&self) -> PathBuf {
        self.data.path().join("evals")
    }

    /// `method target` with `headers` (a `Host` of the server's unless given), read whole.
    fn send(&self, method: &str, target: &str, headers: &[(&str, &str)]) -> Answer {
        let mut stream = TcpStream::connect(&self.address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(120)))
            .unwrap();
        let head = request_head(&self.address, method, target, headers, 0);
        stream.write_all(head.as_bytes()).unwrap();
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes);
        parse_answer(&bytes).unwrap_or_else(|| {
            panic!(
                "{method} {}: no answer ({} bytes)",
                &target[..target.len().min(200)],
                bytes.len()
            )
        })
    }

    fn get(&self, target: &str) -> Answer {
        self.send("GET", target, &[])
    }

    /// The server's peak resident memory so far, in KiB.
    fn peak_kib(&self) -> u64 {
        memory_kib(self.child.0.id()).0
    }
}

/// A transcript id (32 hex digits) from a number.
fn transcript_id(number: u32) -> String {
    format!("{number:032x}")
}

/// A trigger repeat as `report.json` holds it.
fn trigger_run(triggered: Option<&str>, transcript: Option<&str>) -> Value {
    json!({
        "triggered": triggered, "calls": [], "error": null, "rounds": 1, "duration_ms": 5,
        "transcript": transcript,
    })
}

/// A graded task run as `report.json` holds it.
fn task_run(eval: &str, configuration: &str, graded_by: &str, transcript: Option<&str>) -> Value {
    json!({
        "eval_id": 1, "eval_name": eval, "configuration": configuration, "run_number": 1,
        "result": {"pass_rate": 1.0, "passed": 1, "failed": 0, "total": 1, "time_seconds": 1.0,
                   "tokens": 1, "tool_calls": 0, "errors": 0},
        "expectations": [{"text": "it works", "passed": true, "evidence": "it did",
                          "graded_by": graded_by}],
        "run": {"answer": "done", "end": "answered", "error": null, "calls": [],
                "usage": {"input_tokens": 1, "output_tokens": 1}, "rounds": 1,
                "duration_ms": 5, "transcript": transcript, "outputs": "/tmp/outputs"},
    })
}

/// A report of `skills` with `model` and `judge`.
fn report(id: &str, model: &str, judge: &str, skills: Vec<Value>) -> Value {
    json!({
        "id": id, "started": "2025-06-01T09:30:00Z",
        "model": {"format": "chat", "model": model, "endpoint": "http://127.0.0.1:1/v1",
                  "judge": judge},
        "repeat": 1, "skills": skills, "duration_ms": 1000,
        "cache": {"hits": 0, "misses": 1, "model_ms": 5},
    })
}

/// A skill with tasks only.
fn tasks_skill(name: &str, runs: Vec<Value>) -> Value {
    json!({"name": name, "path": "/skills/x", "triggers": null, "description": null,
           "tasks": {"runs": runs, "summary": {}, "delta": null}})
}

/// Write `report` as run `id`'s `report.json` under `evals`; the run folder.
fn write_run(evals: &Path, id: &str, report: &[u8]) -> PathBuf {
    let folder = evals.join(id);
    fs_err::create_dir_all(&folder).unwrap();
    fs_err::write(folder.join("report.json"), report).unwrap();
    folder
}

/// Write the transcript lines `lines` as `id` in run folder `run`.
fn write_transcript(run: &Path, id: &str, lines: &[u8]) {
    let folder = run.join("transcripts");
    fs_err::create_dir_all(&folder).unwrap();
    fs_err::write(folder.join(format!("{id}.jsonl")), lines).unwrap();
}

/// A transcript's header line.
fn header_line(id: &str) -> String {
    json!({"type": "header", "id": id, "created_unix_ms": 1, "format": "chat",
           "model": "m", "base_url": "http://127.0.0.1:1/v1"})
    .to_string()
}

/// Model text built to run as script, leave an attribute, or be followed as a link.
const HOSTILE: &str = "javascript:alert(3) \"'><svg onload=alert(2)><script>window.pwned=1</script><img src=x onerror=alert(1)>";
/// What a page holds when model text got in as markup.
const ACTIVE_MARKS: [&str; 4] = ["<svg onload", "\"'><svg", "<script>window", "<img src=x"];
/// What a page holds when model text is shown as text.
const ESCAPED_MARK: &str = "&#60;svg onload=alert(2)&#62;";
/// The transcript the hostile report names with a real id.
const REAL_TRANSCRIPT: &str = "0123456789abcdef0123456789abcdef";
/// Transcript ids a report may hold that are not ids: none may become a link.
const FORGED_TRANSCRIPTS: [&str; 5] = [
    "javascript:alert(1)",
    "../../../../etc/passwd",
    "0123456789ABCDEF0123456789ABCDEF",
    "0123456789abcdef0123456789abcdef\"><svg onload=alert(2)>",
    "//evil.example/0123456789abcdef0123456789abcdef",
];
/// The run the hostile report is.
const HOSTILE_RUN: &str = "run._-1";

/// A report with `HOSTILE` in every string, figures at their limits, and transcript ids that
/// are not ids beside one that is.
fn hostile_report() -> Value {
    let text = |label: &str| format!("{label} {HOSTILE}");
    let stat = json!({"mean": 1e308, "stddev": -1e308, "min": -1e308, "max": 1e308});
    let mut repeats: Vec<Value> = FORGED_TRANSCRIPTS
        .iter()
        .map(|id| trigger_run(Some(&text("skill")), Some(id)))
        .collect();
    repeats.push(trigger_run(None, Some(REAL_TRANSCRIPT)));
    repeats[0]["error"] = json!(text("error"));
    repeats[0]["calls"] = json!([text("call")]);
    let triggers = json!({
        "queries": [{"query": text("query"), "should_trigger": true, "runs": repeats,
                     "trigger_rate": 1e308, "misfire": true}],
        "precision": stat, "recall": stat, "accuracy": stat,
        "confusion": {"true_positive": u32::MAX, "false_positive": u32::MAX,
                      "true_negative": u32::MAX, "false_negative": u32::MAX},
        "errors": u32::MAX,
    });
    let task = |transcript: &str| {
        let mut run = task_run(
            &text("eval"),
            &text("configuration"),
            &format!("judge:{}", text("judge")),
            Some(transcript),
        );
        run["eval_id"] = json!({"id": text("eval id")});
        run["result"] = json!({"pass_rate": -1e308, "passed": u32::MAX, "failed": u32::MAX,
            "total": u32::MAX, "time_seconds": 1e308, "tokens": u64::MAX,
            "tool_calls": u32::MAX, "errors": u32::MAX});
        run["expectations"][0]["text"] = json!(text("expectation"));
        run["expectations"][0]["evidence"] = json!(text("evidence"));
        run["run"]["answer"] = json!(text("answer"));
        run["run"]["error"] = json!(text("run error"));
        run["run"]["outputs"] = json!(text("outputs"));
        run["run"]["calls"] = json!([{"name": text("tool"), "skill": text("skill"),
            "loads_skill": true, "is_error": true, "result": text("result")}]);
        run
    };
    let mut runs: Vec<Value> = FORGED_TRANSCRIPTS.iter().map(|id| task(id)).collect();
    runs.push(task(REAL_TRANSCRIPT));
    let mut with_skill = task(REAL_TRANSCRIPT);
    with_skill["configuration"] = json!("with_skill");
    runs.push(with_skill.clone());
    runs.push(with_skill);
    let skill = json!({
        "name": text("skill"), "path": text("/path"),
        "triggers": triggers,
        "tasks": {"runs": runs,
                  "summary": {text("summary"): {"pass_rate": stat, "time_seconds": stat,
                                                "tokens": stat},
                              "with_skill": {"pass_rate": stat, "time_seconds": stat,
                                             "tokens": stat}},
                  "delta": {text("delta"): text("value")}},
        "description": {"original": text("original"), "train_queries": [text("train")],
            "holdout_queries": [text("holdout")], "original_holdout_accuracy": 1e308,
            "candidates": [{"description": text("best"), "holdout_accuracy": -1e308,
                            "holdout_recall": 1e308, "rejected": text("rejected")}],
            "best": text("best"), "written": true,
            "diff": format!("--- {HOSTILE}\n+++ {HOSTILE}\n@@ {HOSTILE}\n-{HOSTILE}\n+{HOSTILE}\n {HOSTILE}\n")},
    });
    let mut report = report(&text("id"), &text("model"), &text("judge"), vec![skill]);
    report["started"] = json!(text("started"));
    report["model"]["format"] = json!(text("format"));
    report["model"]["endpoint"] = json!(format!("javascript:alert(4)//{HOSTILE}"));
    report["repeat"] = json!(u32::MAX);
    report["duration_ms"] = json!(u64::MAX);
    report["cache"] = json!({"hits": u64::MAX, "misses": u64::MAX, "model_ms": u64::MAX});
    report
}

/// A transcript with `HOSTILE` in every field the page shows, a time past year 9999, a second
/// header and a line that is not JSON.
fn hostile_transcript() -> String {
    let mut header: Value = serde_json::from_str(&header_line(REAL_TRANSCRIPT)).unwrap();
    header["created_unix_ms"] = json!(u64::MAX);
    header["model"] = json!(format!("model {HOSTILE}"));
    header["base_url"] = json!(format!("javascript:alert(5)//{HOSTILE}"));
    let lines = [
        header.clone(),
        json!({"type": "message", "message": {"role": "user", "content": HOSTILE}}),
        json!({"type": "message", "message": {"role": "assistant", "content": HOSTILE,
            "tool_calls": [{"id": HOSTILE, "name": HOSTILE, "arguments": HOSTILE},
                           {"id": "c2", "name": "t", "arguments": json!({"a": HOSTILE}).to_string()}]}}),
        json!({"type": "message", "message": {"role": "tool", "results": [
            {"call_id": HOSTILE, "name": HOSTILE, "content": HOSTILE, "is_error": true},
            {"call_id": "unknown", "name": HOSTILE, "content": HOSTILE, "is_error": false}]}}),
        json!({"type": "turn", "end": "failed", "rounds": u32::MAX,
               "usage": {"input_tokens": u64::MAX, "output_tokens": u64::MAX}}),
        header,
    ];
    let mut text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    text.push_str(HOSTILE);
    text.push('\n');
    text
}

/// The values of the `href`, `src` and `action` attributes of the elements of `html` (each
/// attribute read whole, so text inside another attribute's value is not taken for one).
fn link_targets(html: &str) -> Vec<String> {
    let element = regex::Regex::new(r"<[A-Za-z][^<>]*>").unwrap();
    let attribute =
        regex::Regex::new(r#"\s([A-Za-z:-]+)\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+)"#).unwrap();
    let mut targets = Vec::new();
    for tag in element.find_iter(html) {
        for capture in attribute.captures_iter(tag.as_str()) {
            if ["href", "src", "action", "formaction", "xlink:href"]
                .contains(&capture[1].to_ascii_lowercase().as_str())
            {
                targets.push(capture[2].trim_matches(['"', '\'']).to_owned());
            }
        }
    }
    targets
}

/// The security headers an answer carries, by name.
fn security_headers(answer: &Answer) -> Vec<(&'static str, Option<String>)> {
    [
        "content-security-policy",
        "x-frame-options",
        "x-content-type-options",
        "referrer-policy",
        "cache-control",
    ]
    .into_iter()
    .map(|name| (name, answer.header(name).map(str::to_owned)))
    .collect()
}

#[test]
fn model_text_in_every_field_reaches_the_pages_as_text_and_builds_no_link() {
    let server = Serve::start(&[], |evals| {
        let run = write_run(
            evals,
            HOSTILE_RUN,
            serde_json::to_vec_pretty(&hostile_report())
                .unwrap()
                .as_slice(),
        );
        write_transcript(&run, REAL_TRANSCRIPT, hostile_transcript().as_bytes());
    });
    let skills = server.get("/skills");
    let transcript = format!("/evals/{HOSTILE_RUN}/transcripts/{REAL_TRANSCRIPT}");
    for target in ["/evals", &format!("/evals/{HOSTILE_RUN}"), &transcript] {
        let page = server.get(target);
        assert_eq!(page.status, 200, "{target}: {}", page.text());
        for mark in ACTIVE_MARKS {
            assert!(!page.text().contains(mark), "{target} holds {mark}");
        }
        assert!(
            page.text().contains(ESCAPED_MARK),
            "{target}: {}",
            page.text()
        );
        for link in link_targets(&page.text()) {
            assert!(
                link.starts_with('/') && !link.starts_with("//"),
                "{target} links {link}"
            );
            if let Some(id) = link.split("/transcripts/").nth(1) {
                assert_eq!(id, REAL_TRANSCRIPT, "{target} links {link}");
            }
        }
        assert_eq!(
            security_headers(&page),
            security_headers(&skills),
            "{target}: the headers of every page"
        );
    }
    let run = server.get(&format!("/evals/{HOSTILE_RUN}"));
    assert!(
        run.text().contains(&format!(
            "<a href=\"/evals/{HOSTILE_RUN}/transcripts/{REAL_TRANSCRIPT}\">#6</a>"
        )),
        "the real id is linked: {}",
        run.text()
    );
    for forged in FORGED_TRANSCRIPTS {
        assert!(
            !run.text().contains(&format!("/transcripts/{forged}")),
            "{forged}"
        );
    }
    let transcript = server.get(&transcript);
    assert!(
        transcript
            .text()
            .contains("Line 7 is not a transcript line"),
        "{}",
        transcript.text()
    );
    // Refusals carry the same headers.
    for target in [
        "/evals/missing",
        &format!("/evals/{HOSTILE_RUN}/transcripts/{}", transcript_id(2)),
    ] {
        let refused = server.get(target);
        assert_eq!(refused.status, 404, "{target}");
        assert_eq!(
            security_headers(&refused),
            security_headers(&skills),
            "{target}"
        );
    }
}

#[test]
fn names_in_every_encoding_name_nothing_and_only_get_reads() {
    let transcript = transcript_id(7);
    let server = Serve::start(&["--token", "eval-token"], |evals| {
        let run = write_run(
            evals,
            "good",
            report("good", "model-under-test", "j", vec![])
                .to_string()
                .as_bytes(),
        );
        write_transcript(&run, &transcript, header_line(&transcript).as_bytes());
        // What a path that escaped the evals folder would reach.
        write_run(
            &evals.join(".."),
            "escaped",
            report("escaped", "outside-model", "j", vec![])
                .to_string()
                .as_bytes(),
        );
    });
    let bearer = ("Authorization", "Bearer eval-token");
    let page = format!("/evals/good/transcripts/{transcript}");
    let long = format!("/evals/{}", "a".repeat(129));
    let huge = format!("/evals/{}", "a".repeat(60_000));
    for target in [
        "/evals/%252e%252e%252fescaped",
        "/evals/%2e%2e%2fescaped",
        "/evals/..%5cescaped",
        "/evals/%c0%ae%c0%ae%c0%afescaped",
        "/evals/%e2%80%a5%2fescaped",
        "/evals/%ef%bc%8e%ef%bc%8e%ef%bc%8fescaped",
        "/evals/.",
        "/evals/%2e",
        "/evals/good%00",
        "/evals/%ff",
        "/evals//good",
        "/evals/good/",
        "/evals/good/report.json",
        &format!("{page}%00"),
        &format!("{page}.jsonl"),
        "/evals/good/transcripts/%2e%2e%2f%2e%2e%2fescaped%2freport",
        &long,
        &huge,
    ] {
        let answer = server.send("GET", target, &[bearer]);
        assert!(
            matches!(answer.status, 400 | 404),
            "{}: {}",
            &target[..target.len().min(100)],
            answer.status
        );
        assert!(!answer.text().contains("-model"), "{target}");
        assert_eq!(answer.header("x-frame-options"), Some("DENY"), "{target}");
    }
    for target in ["/evals", "/evals/good", &page] {
        let head = server.send("HEAD", target, &[bearer]);
        assert_eq!(
            (head.status, head.text().as_str()),
            (200, ""),
            "HEAD {target}"
        );
        for method in ["POST", "PUT", "DELETE", "OPTIONS", "TRACE"] {
            let answer = server.send(method, target, &[bearer]);
            assert!(
                matches!(answer.status, 403 | 405),
                "{method} {target}: {}",
                answer.status
            );
            assert!(!answer.text().contains("model-under-test"));
        }
        for headers in [
            vec![],
            vec![("Authorization", "Bearer wrong")],
            vec![("Cookie", "skillbox_session=forged")],
            vec![bearer, ("Origin", "http://evil.example")],
            vec![bearer, ("Origin", "null")],
        ] {
            for method in ["GET", "HEAD"] {
                let answer = server.send(method, target, &headers);
                assert!(
                    matches!(answer.status, 303 | 401 | 403),
                    "{method} {target} {headers:?}: {}",
                    answer.status
                );
                assert!(!answer.text().contains("model-under-test"));
                assert_eq!(answer.header("access-control-allow-origin"), None);
            }
        }
    }
}

#[test]
fn a_run_folder_swapped_for_a_link_meanwhile_is_never_followed() {
    let transcript = transcript_id(3);
    let server = Serve::start(&[], |evals| {
        fs_err::create_dir_all(evals).unwrap();
    });
    let evals = server.evals();
    let stash = server.data.path().join("stash");
    let outside = tempfile::tempdir().unwrap();
    for (folder, model) in [
        (&stash, "inside-model"),
        (&outside.path().to_path_buf(), "outside-model"),
    ] {
        let run = write_run(
            folder,
            "swap",
            report("swap", model, "j", vec![]).to_string().as_bytes(),
        );
        write_transcript(
            &run,
            &transcript,
            format!("{}\n", header_line(&transcript))
                .replace("\"m\"", &format!("\"{model}\""))
                .as_bytes(),
        );
    }
    std::os::unix::fs::symlink(outside.path().join("swap"), stash.join("link")).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let stop = std::sync::Arc::clone(&stop);
        let (evals, stash) = (evals.clone(), stash.clone());
        std::thread::spawn(move || {
            let mut swaps = 0_u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for stashed in ["swap", "link"] {
                    fs_err::rename(stash.join(stashed), evals.join("swap")).unwrap();
                    std::thread::yield_now();
                    fs_err::rename(evals.join("swap"), stash.join(stashed)).unwrap();
                }
                swaps += 1;
            }
            swaps
        })
    };
    let mut seen = std::collections::BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(4);
    while Instant::now() < deadline {
        for target in [
            "/evals",
            "/evals/swap",
            &format!("/evals/swap/transcripts/{transcript}"),
        ] {
            let answer = server.get(target);
            assert!(
                !answer.text().contains("outside-model"),
                "{target} read through the link"
            );
            *seen
                .entry((
                    target.len(),
                    answer.status,
                    answer.text().contains("inside-model"),
                ))
                .or_insert(0) += 1;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    eprintln!("{swaps} swaps; (target, status, inside shown): {seen:?}");
    assert!(
        seen.keys()
            .any(|(_, status, inside)| *status == 200 && *inside),
        "the real folder was read at times"
    );
    assert!(
        seen.keys().any(|(_, status, _)| *status == 422),
        "the link was met at times"
    );
}

#[test]
fn reports_that_are_fifos_giants_or_bottomless_cost_nothing() {
    let id = transcript_id(9);
    let server = Serve::start(&[], |evals| {
        let fifo = evals.join("fifo").join("transcripts");
        fs_err::create_dir_all(&fifo).unwrap();
        let sparse = evals.join("sparse").join("transcripts");
        fs_err::create_dir_all(&sparse).unwrap();
        for path in [
            evals.join("fifo/report.json"),
            fifo.join(format!("{id}.jsonl")),
        ] {
            assert!(
                Command::new("mkfifo")
                    .arg(&path)
                    .status()
                    .unwrap()
                    .success()
            );
        }
        for path in [
            evals.join("sparse/report.json"),
            sparse.join(format!("{id}.jsonl")),
        ] {
            fs_err::File::create(&path)
                .unwrap()
                .set_len(10 << 30)
                .unwrap();
        }
        // An eval id nested a million deep.
        let mut run = task_run("e", "with_skill", "check", None);
        run["eval_id"] = json!("EVAL_ID");
        let deep = format!("{}{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
        let text = report("deep", "m", "j", vec![tasks_skill("s", vec![run])])
            .to_string()
            .replace("\"EVAL_ID\"", &deep);
        write_run(evals, "deep", text.as_bytes());
        // Ten thousand and more runs (the list looks at 10,000 entries and shows 200).
        for index in 0..10_050 {
            fs_err::create_dir_all(evals.join(format!("many-{index:05}"))).unwrap();
        }
    });
    let before = server.peak_kib();
    let started = Instant::now();
    for (target, status, shown) in [
        (
            "/evals/fifo",
            422,
            "`fifo/report.json` is not a regular file",
        ),
        (
            &format!("/evals/fifo/transcripts/{id}"),
            422,
            "is not a regular file",
        ),
        (
            "/evals/sparse",
            422,
            "holds 10737418240 bytes, more than the 16777216",
        ),
        (
            &format!("/evals/sparse/transcripts/{id}"),
            200,
            "This transcript holds 10737418240 bytes; only its first 8388608 are shown.",
        ),
        ("/evals/deep", 422, "recursion limit exceeded"),
        (
            "/evals",
            200,
            "The evals folder holds more entries than this page looks at (10000)",
        ),
    ] {
        let answer = server.get(target);
        assert_eq!(answer.status, status, "{target}: {}", answer.text());
        assert!(answer.text().contains(shown), "{target}: {}", answer.text());
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(
        server.peak_kib() < before + 100 * 1024,
        "{} KiB",
        server.peak_kib() - before
    );
}

/// `GET target` from `count` clients of the server at `address` at once: each one's status
/// (0 when none came).
fn at_once(address: &str, target: &str, count: usize) -> Vec<u16> {
    let clients: Vec<_> = (0..count)
        .map(|_| {
            let (address, target) = (address.to_owned(), target.to_owned());
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(&address).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(180)))
                    .unwrap();
                let head = format!(
                    "GET {target} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
                );
                stream.write_all(head.as_bytes()).unwrap();
                let mut bytes = Vec::new();
                let _ = stream.read_to_end(&mut bytes);
                parse_answer(&bytes).map_or(0, |answer| answer.status)
            })
        })
        .collect();
    clients
        .into_iter()
        .map(|client| client.join().unwrap())
        .collect()
}

#[test]
fn a_transcript_built_to_expand_costs_a_page_not_gigabytes() {
    let nested = transcript_id(1);
    let bad_lines = transcript_id(2);
    let server = Serve::start(&[], |evals| {
        let run = write_run(
            evals,
            "run",
            report("run", "m", "j", vec![]).to_string().as_bytes(),
        );
        // Tool calls' arguments (model output) nested as deep as JSON is read, holding 30
        // thousand and a million values: pretty-printed, each on a line of its own indented
        // 240 columns.
        let nested_values = |count: usize| {
            let mut arguments = "[".repeat(120);
            arguments.push_str(&"0,".repeat(count));
            arguments.push('0');
            arguments.push_str(&"]".repeat(120));
            arguments
        };
        let call = json!({"type": "message", "message": {"role": "assistant",
            "tool_calls": [{"id": "c1", "name": "t", "arguments": nested_values(30_000)},
                           {"id": "c2", "name": "t", "arguments": nested_values(1_000_000)}]}});
        write_transcript(
            &run,
            &nested,
            format!("{}\n{call}\n", header_line(&nested)).as_bytes(),
        );
        // Four million two-byte lines that are not transcript lines.
        write_transcript(&run, &bad_lines, "x\n".repeat(4 * 1024 * 1024).as_bytes());
    });
    let before = server.peak_kib();
    // Each shown up to its first 64 Ki characters.
    let rest_of_the_long_one = format!("(cut here: {} more characters)", 2_000_241 - 65_536);
    for (id, shown) in [
        (
            &nested,
            [
                "[\n  [\n    [\n",
                "(cut here: the arguments are 60241 bytes as the model wrote them)",
                &rest_of_the_long_one,
            ],
        ),
        (
            &bad_lines,
            [
                "Line 1 is not a transcript line",
                "Line 20 is not a transcript line",
                "4194284 more lines are not transcript lines",
            ],
        ),
    ] {
        let started = Instant::now();
        let page = server.get(&format!("/evals/run/transcripts/{id}"));
        eprintln!(
            "transcript {id}: {} ({} bytes) in {:?}; server peak {} KiB, {before} KiB before",
            page.status,
            page.body.len(),
            started.elapsed(),
            server.peak_kib()
        );
        let start = &String::from_utf8_lossy(&page.body[..page.body.len().min(2000)]);
        assert_eq!(page.status, 200, "{start}");
        for shown in shown {
            assert!(page.text().contains(shown), "{shown}: {start}");
        }
        assert!(
            page.body.len() < 4 * 1024 * 1024,
            "{} bytes",
            page.body.len()
        );
    }
    assert!(
        server.peak_kib() < before + 200 * 1024,
        "two transcripts of 2 and 8 MiB took {} KiB",
        server.peak_kib() - before
    );
}

#[test]
fn a_report_built_to_expand_costs_a_page_not_gigabytes() {
    let server = Serve::start(&[], |evals| {
        // The judge's name (a flag, or a hostile file) once; 400 skills with judged tasks.
        let judge = "<".repeat(256 * 1024);
        let skills: Vec<Value> = (0..400)
            .map(|index| {
                tasks_skill(
                    &format!("s{index}"),
                    vec![task_run("e", "with_skill", "judge:j", None)],
                )
            })
            .collect();
        write_run(
            evals,
            "judge",
            report("judge", "m", &judge, skills).to_string().as_bytes(),
        );
        // Each task run its own eval and its own configuration.
        let runs: Vec<Value> = (0..12_000)
            .map(|index| task_run(&format!("e{index}"), &format!("c{index}"), "check", None))
            .collect();
        write_run(
            evals,
            "square",
            report("square", "m", "j", vec![tasks_skill("s", runs)])
                .to_string()
                .as_bytes(),
        );
        // Four runs of 150 thousand skills in 3 MiB each: a row of the list per skill, each
        // row naming its run (up to 128 bytes).
        let skill = r#"{"name":"","path":""}"#;
        let skills = format!("[{}]", vec![skill; 150_000].join(","));
        let text = report("many", "m", "j", vec![json!("SKILLS")])
            .to_string()
            .replace(r#"["SKILLS"]"#, &skills);
        for index in 0..4 {
            write_run(
                evals,
                &format!("{index}{}", "r".repeat(127)),
                text.as_bytes(),
            );
        }
    });
    let before = server.peak_kib();
    for (target, shown) in [
        ("/evals/judge", "judged by the judge model named above"),
        ("/evals/square", "e11999"),
        (
            "/evals",
            "149980 more skills: the run's page shows them all",
        ),
    ] {
        let started = Instant::now();
        let page = server.get(target);
        eprintln!(
            "{target}: {} ({} bytes) in {:?}; server peak {} KiB, {before} KiB before",
            page.status,
            page.body.len(),
            started.elapsed(),
            server.peak_kib()
        );
        assert_eq!(
            page.status,
            200,
            "{target}: {}",
            &String::from_utf8_lossy(&page.body[..page.body.len().min(2000)])
        );
        assert!(
            page.body.len() < 32 * 1024 * 1024,
            "{target}: {} bytes",
            page.body.len()
        );
        assert!(page.text().contains(shown), "{target}: {shown}");
    }
    assert!(
        server.peak_kib() < before + 400 * 1024,
        "{} KiB",
        server.peak_kib() - before
    );
}

#[test]
fn many_views_of_a_large_report_at_once_hold_a_bounded_amount() {
    let server = Serve::start(&[], |evals| {
        // 14 MiB of small values (an eval's id is any JSON): 32 bytes each once read.
        let mut run = task_run("e", "with_skill", "check", None);
        run["eval_id"] = json!("EVAL_ID");
        let mut eval_id = String::from("[");
        eval_id.push_str(&"0,".repeat(7 * 1024 * 1024));
        eval_id.push_str("0]");
        let text = report("wide", "m", "j", vec![tasks_skill("s", vec![run])])
            .to_string()
            .replace("\"EVAL_ID\"", &eval_id);
        write_run(evals, "wide", text.as_bytes());
    });
    let before = server.peak_kib();
    let started = Instant::now();
    let views = {
        let address = server.address.clone();
        std::thread::spawn(move || at_once(&address, "/evals/wide", 40))
    };
    // Meanwhile a page that reads a skill's files on the blocking pool (every door's) answers.
    std::thread::sleep(Duration::from_millis(500));
    let asked = Instant::now();
    let skill = server.get("/skills/hello");
    let answered = asked.elapsed();
    let statuses = views.join().unwrap();
    let peak = server.peak_kib();
    eprintln!(
        "40 views of a 14 MiB report: {statuses:?} in {:?}; the skill page meanwhile in {answered:?}; server peak {peak} KiB, {before} KiB before",
        started.elapsed()
    );
    assert_eq!(skill.status, 200);
    assert!(answered < Duration::from_secs(3), "{answered:?}");
    assert!(
        statuses.iter().all(|status| matches!(status, 200 | 503)),
        "{statuses:?}"
    );
    assert!(statuses.contains(&200), "{statuses:?}");
    assert!(
        peak < before + 2048 * 1024,
        "40 views held {} KiB",
        peak - before
    );
}
