//! The eval pages of `skillbox serve` against the real binary: a run `skillbox eval` wrote
//! into the data folder is listed and shown, its transcripts one click away; names that are
//! paths, a run folder linked out of the evals folder and a damaged report are refused over
//! raw HTTP (no client tidying the path first); the token and `Host` rules hold as on every
//! page; and in headless Chromium the run page shows its confusion table.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use skillbox_agent::{Message, ToolCall, ToolResult, TranscriptStore, TurnEnd, Usage, WireFormat};
use skillbox_eval::grade::GradedExpectation;
use skillbox_eval::report::{
    CandidateDescription, DescriptionReport, EvalReport, ModelInfo, RunResult, SkillEvalReport,
    TaskReport, TaskRunReport, TriggerReport, WITH_SKILL, WITHOUT_SKILL,
};
use skillbox_eval::task::TaskRun;
use skillbox_eval::trigger::TriggerRun;
use skillbox_eval::{CacheUse, TriggerQuery};
use skillbox_testkit::browser::Browser;
use skillbox_testkit::model_server::ScriptedModelServer;

use super::agent::{calls, says};
use super::support::{agent_command, make_world_readable, request_head, write_tree};
use super::web::WebServer;

/// Model-written text the pages must show as text.
const HOSTILE: &str = "<script>window.pwned=1</script><img src=x onerror=window.pwned=2>";
/// The model named in reports outside the evals folder: never shown.
const OUTSIDE_MODEL: &str = "outside-secret-model";

/// A skill root with one skill to evaluate (`greeter`), its trigger queries and a task.
fn greeter_tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let triggers = json!([
        {"query": "Greet Ada", "should_trigger": true},
        {"query": "What is 2+2?", "should_trigger": false},
    ])
    .to_string();
    let tasks = json!({"skill_name": "greeter", "evals": [{
        "id": 1,
        "prompt": "Greet Ada",
        "expected_output": "Hello, Ada!",
        "expectations": [{"contains": "Hello, Ada", "text": "it greets Ada by name"}],
    }]})
    .to_string();
    write_tree(
        root.path(),
        &[
            (
                "greeter/SKILL.md",
                "---\nname: greeter\ndescription: Greets people by name. Use when asked to greet someone.\n---\nSay hello with the person's name.\n",
            ),
            ("greeter/evals/triggers.json", &triggers),
            ("greeter/evals/evals.json", &tasks),
        ],
    );
    make_world_readable(root.path());
    root
}

/// A `GET target` sent as it is written (no client resolving `..` or decoding `%2e` first):
/// the status and the body.
fn raw_get(server: &WebServer, target: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let address = server.base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let head = request_head(address, "GET", target, headers, 0);
    stream.write_all(head.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|status| status.parse().ok())
        .unwrap_or_else(|| panic!("GET {target}: no HTTP answer: {text}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// The ids of the transcripts `page` links for run `run`, in page order.
fn transcript_links(page: &str, run: &str) -> Vec<String> {
    let prefix = format!("/evals/{run}/transcripts/");
    page.match_indices(&prefix)
        .map(|(at, _)| page[at + prefix.len()..][..32].to_owned())
        .collect()
}

#[test]
fn a_run_skillbox_eval_wrote_is_listed_and_shown_with_its_transcripts() {
    let tree = greeter_tree();
    let data = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let model = ScriptedModelServer::start(vec![
        // Trigger evals: the skill is loaded for the greeting, nothing for the sum.
        calls("load_skill", r#"{"skill":"greeter"}"#),
        says("4"),
        // The task with the skill, then without it.
        says("Hello, Ada!"),
        says("Hi."),
    ]);
    let run = agent_command(tree.path())
        .env("SKILLBOX_CACHE_DIR", cache.path())
        .arg("eval")
        .arg(tree.path().join("greeter"))
        .args(["--base-url", &model.base_url, "--jobs", "1", "--baseline"])
        .arg("--data-dir")
        .arg(data.path())
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    // With no --output the run went under the data folder's evals/, as serve reads it.
    let runs: Vec<String> = fs_err::read_dir(data.path().join("evals"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let [id] = runs.as_slice() else {
        panic!("one run folder: {runs:?}");
    };

    let server = WebServer::start(tree.path(), data.path(), &[], &[]);
    let list = server.get("/evals");
    assert_eq!(list.status, 200, "{}", list.text);
    assert!(
        list.text
            .contains(&format!("<a href=\"/evals/{id}\">{id}</a>")),
        "{}",
        list.text
    );
    assert!(list.text.contains("<td>greeter</td>"), "{}", list.text);

    let page = server.get(&format!("/evals/{id}"));
    assert_eq!(page.status, 200, "{}", page.text);
    for shown in [
        "<table class=\"confusion\"",
        "title=\"true positives\">TP 1</td>",
        "title=\"true negatives\">TN 1</td>",
        "<dt>Recall</dt><dd>100% ± 0%",
        "<rect class=\"with\" width=\"100\"",
        "<rect class=\"without\" width=\"0\"",
        "100% (1 of 1 expectations, 1 run)",
        "it greets Ada by name",
        "check (no model)",
        "Hello, Ada!",
    ] {
        assert!(page.text.contains(shown), "{shown}: {}", page.text);
    }
    let transcripts = transcript_links(&page.text, id);
    assert!(
        transcripts.len() >= 3,
        "each trigger repeat and task run links its transcript: {transcripts:?}"
    );
    let first = server.get(&format!("/evals/{id}/transcripts/{}", transcripts[0]));
    assert_eq!(first.status, 200, "{}", first.text);
    assert!(
        first
            .text
            .contains("<div class=\"bubble user\">Greet Ada</div>"),
        "{}",
        first.text
    );
    assert!(
        first.text.contains("<code>load_skill</code>"),
        "{}",
        first.text
    );
    assert!(
        first
            .text
            .contains("greeter: trigger query “Greet Ada” (should trigger), repeat 1"),
        "{}",
        first.text
    );
}

/// A trigger repeat that named `skill` (or nothing), its transcript `transcript`.
fn trigger_run(skill: Option<&str>, transcript: Option<&str>) -> TriggerRun {
    TriggerRun {
        triggered: skill.map(str::to_owned),
        calls: skill
            .map(|_| vec!["load_skill".to_owned()])
            .unwrap_or_default(),
        error: None,
        rounds: 1,
        duration_ms: 800,
        transcript: transcript.map(str::to_owned),
    }
}

/// A graded task run of eval `eval` in `configuration`.
fn task_run(
    eval: &str,
    configuration: &str,
    answer: &str,
    expectations: &[(&str, bool, &str, &str)],
    transcript: Option<&str>,
) -> TaskRunReport {
    let passed = u32::try_from(
        expectations
            .iter()
            .filter(|(_, passed, ..)| *passed)
            .count(),
    )
    .unwrap();
    let total = u32::try_from(expectations.len()).unwrap();
    TaskRunReport {
        eval_id: json!(eval),
        eval_name: eval.to_owned(),
        configuration: configuration.to_owned(),
        run_number: 1,
        result: RunResult {
            pass_rate: f64::from(passed) / f64::from(total),
            passed,
            failed: total - passed,
            total,
            time_seconds: 2.4,
            tokens: 1830,
            tool_calls: 2,
            errors: 0,
        },
        expectations: expectations
            .iter()
            .map(|(text, passed, evidence, graded_by)| GradedExpectation {
                text: (*text).to_owned(),
                passed: *passed,
                evidence: (*evidence).to_owned(),
                graded_by: (*graded_by).to_owned(),
            })
            .collect(),
        run: TaskRun {
            answer: answer.to_owned(),
            end: TurnEnd::Answered,
            error: None,
            calls: Vec::new(),
            usage: Usage::default(),
            rounds: 2,
            duration_ms: 2400,
            transcript: transcript.map(str::to_owned),
            outputs: PathBuf::from("/tmp/skillbox-eval/outputs"),
        },
    }
}

/// A report of the `pdf` skill with every section filled (model text hostile in places);
/// `transcript` is the id its first trigger repeat and first task run name.
fn pdf_report(id: &str, model: &str, transcript: &str) -> EvalReport {
    let query = |text: &str, should_trigger: bool| TriggerQuery {
        query: text.to_owned(),
        should_trigger,
    };
    let triggers = TriggerReport::new(
        "pdf",
        vec![
            (
                query("Fill in the form in invoice.pdf", true),
                vec![
                    trigger_run(Some("pdf"), Some(transcript)),
                    trigger_run(Some("pdf"), None),
                    trigger_run(Some("pdf"), None),
                ],
            ),
            (
                query("Merge these two PDFs into one", true),
                vec![
                    trigger_run(Some("pdf"), None),
                    trigger_run(None, None),
                    trigger_run(Some("pdf"), None),
                ],
            ),
            (
                query(
                    &format!("Extract the tables from report.pdf {HOSTILE}"),
                    true,
                ),
                vec![
                    trigger_run(Some("xlsx"), None),
                    trigger_run(None, None),
                    trigger_run(Some("xlsx"), None),
                ],
            ),
            (
                query("Resize this PNG to 200 pixels wide", false),
                vec![
                    trigger_run(Some("image"), None),
                    trigger_run(None, None),
                    trigger_run(Some("image"), None),
                ],
            ),
            (
                query("What does PDF stand for?", false),
                vec![
                    trigger_run(Some("pdf"), None),
                    trigger_run(None, None),
                    trigger_run(None, None),
                ],
            ),
        ],
    );
    let tasks = TaskReport::new(vec![
        task_run(
            "fill-invoice",
            WITH_SKILL,
            "I filled the form: invoice-filled.pdf has the name and the total.",
            &[
                (
                    "output file invoice-filled.pdf",
                    true,
                    "the file is there (18 KiB)",
                    "check",
                ),
                (
                    "the total field is 1,250.00",
                    true,
                    "the form's field `total` reads 1,250.00",
                    "check",
                ),
                (
                    "The answer says which fields were filled",
                    true,
                    "it names the name and total fields",
                    "judge:judge-model",
                ),
            ],
            Some(transcript),
        ),
        task_run(
            "fill-invoice",
            WITHOUT_SKILL,
            &format!("I cannot edit PDF forms. {HOSTILE}"),
            &[
                (
                    "output file invoice-filled.pdf",
                    false,
                    "no such file in the outputs folder",
                    "check",
                ),
                (
                    "the total field is 1,250.00",
                    false,
                    "no file to read",
                    "check",
                ),
                (
                    "The answer says which fields were filled",
                    false,
                    &format!("it declined {HOSTILE}"),
                    "judge:judge-model",
                ),
            ],
            None,
        ),
        task_run(
            "merge",
            WITH_SKILL,
            "Merged into merged.pdf (12 pages).",
            &[("output file merged.pdf", true, "the file is there", "check")],
            None,
        ),
        task_run(
            "merge",
            WITHOUT_SKILL,
            "Merged into merged.pdf.",
            &[("output file merged.pdf", true, "the file is there", "check")],
            None,
        ),
    ]);
    let best = "Fill, merge, split and extract text or tables from PDF files. Use when the person names a .pdf file or asks about PDF forms.".to_owned();
    EvalReport {
        id: id.to_owned(),
        started: "2025-06-01T09:30:00.123Z".to_owned(),
        model: ModelInfo {
            format: "chat".to_owned(),
            model: model.to_owned(),
            endpoint: "http://127.0.0.1:8080/v1".to_owned(),
            judge: "judge-model".to_owned(),
        },
        repeat: 3,
        skills: vec![SkillEvalReport {
            name: "pdf".to_owned(),
            path: PathBuf::from("/home/author/skills/pdf"),
            triggers: Some(triggers),
            tasks: Some(tasks),
            description: Some(DescriptionReport {
                original: "Works with PDFs.".to_owned(),
                train_queries: vec!["a".to_owned(), "b".to_owned(), "c".to_owned()],
                holdout_queries: vec!["d".to_owned(), "e".to_owned()],
                original_holdout_accuracy: Some(0.5),
                candidates: vec![
                    CandidateDescription {
                        description: best.clone(),
                        holdout_accuracy: Some(1.0),
                        holdout_recall: Some(1.0),
                        rejected: None,
                    },
                    CandidateDescription {
                        description: format!("PDF helper {HOSTILE}"),
                        holdout_accuracy: Some(0.5),
                        holdout_recall: Some(0.5),
                        rejected: None,
                    },
                ],
                best: Some(best.clone()),
                written: false,
                diff: Some(format!(
                    "--- pdf/SKILL.md\n+++ pdf/SKILL.md (proposed)\n@@ -1,3 +1,3 @@\n ---\n name: pdf\n-description: Works with PDFs.\n+description: {best}\n"
                )),
            }),
        }],
        duration_ms: 94_000,
        cache: CacheUse {
            hits: 12,
            misses: 9,
            model_ms: 61_000,
        },
    }
}

/// Write `report` as `<evals>/<id>/report.json`, with one transcript `transcript` beside it
/// (a trigger turn that loaded the skill); returns the run folder.
fn write_run(evals: &Path, id: &str, report: &EvalReport) -> PathBuf {
    let folder = evals.join(id);
    fs_err::create_dir_all(&folder).unwrap();
    fs_err::write(
        folder.join("report.json"),
        serde_json::to_vec_pretty(report).unwrap(),
    )
    .unwrap();
    folder
}

/// A transcript in `run`'s `transcripts/`: the query, a `load_skill` call and its result.
fn write_transcript(run: &Path) -> String {
    let store = TranscriptStore::new(run.join("transcripts"));
    let mut transcript = store
        .create(
            WireFormat::Chat,
            "model-under-test",
            "http://127.0.0.1:8080/v1",
        )
        .unwrap();
    transcript
        .append(&Message::user("Fill in the form in invoice.pdf"))
        .unwrap();
    transcript
        .append(&Message::Assistant {
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: "call_1".to_owned(),
                name: "load_skill".to_owned(),
                arguments: r#"{"skill":"pdf"}"#.to_owned(),
                item_id: None,
            }],
            replay: None,
        })
        .unwrap();
    transcript
        .append(&Message::Tool {
            results: vec![ToolResult {
                call_id: "call_1".to_owned(),
                name: "load_skill".to_owned(),
                content: format!("# PDF\n\nUse scripts/fill_form.py. {HOSTILE}"),
                is_error: false,
            }],
        })
        .unwrap();
    transcript
        .record_turn(TurnEnd::Cancelled, 1, Usage::default())
        .unwrap();
    transcript.header().id.clone()
}

/// A data folder with a good run (`20250601-093000-abc123`, with a transcript), a damaged
/// one (`damaged`), and a run folder that is a link to a folder outside (`linked`).
struct EvalData {
    data: tempfile::TempDir,
    _outside: tempfile::TempDir,
    tree: tempfile::TempDir,
    transcript: String,
}

const GOOD: &str = "20250601-093000-abc123";

impl EvalData {
    fn new() -> Self {
        let data = tempfile::tempdir().unwrap();
        let evals = data.path().join("evals");
        // The transcript first: the report names it.
        fs_err::create_dir_all(evals.join(GOOD)).unwrap();
        let transcript = write_transcript(&evals.join(GOOD));
        write_run(
            &evals,
            GOOD,
            &pdf_report(GOOD, "model-under-test", &transcript),
        );
        let damaged = evals.join("damaged");
        fs_err::create_dir_all(&damaged).unwrap();
        fs_err::write(
            damaged.join("report.json"),
            "{\"id\": \"damaged\", \"started\": ",
        )
        .unwrap();
        let outside = tempfile::tempdir().unwrap();
        let elsewhere = write_run(
            outside.path(),
            "elsewhere",
            &pdf_report("elsewhere", OUTSIDE_MODEL, &transcript),
        );
        fs_err::create_dir_all(elsewhere.join("transcripts")).unwrap();
        fs_err::copy(
            evals
                .join(GOOD)
                .join("transcripts")
                .join(format!("{transcript}.jsonl")),
            elsewhere
                .join("transcripts")
                .join(format!("{transcript}.jsonl")),
        )
        .unwrap();
        std::os::unix::fs::symlink(&elsewhere, evals.join("linked")).unwrap();
        let tree = tempfile::tempdir().unwrap();
        EvalData {
            data,
            _outside: outside,
            tree,
            transcript,
        }
    }

    fn serve(&self, extra: &[&str]) -> WebServer {
        WebServer::start(self.tree.path(), self.data.path(), extra, &[])
    }
}

#[test]
fn paths_links_out_of_the_evals_folder_and_damaged_reports_are_refused() {
    let fixture = EvalData::new();
    let server = fixture.serve(&[]);
    let transcript = &fixture.transcript;

    let (status, list) = raw_get(&server, "/evals", &[]);
    assert_eq!(status, 200, "{list}");
    assert!(!list.contains(OUTSIDE_MODEL), "{list}");
    assert!(
        list.contains("`linked` is a symbolic link"),
        "the linked folder is listed as refused: {list}"
    );
    assert!(
        list.contains("`damaged/report.json` is not an eval report"),
        "the damaged report is listed as unreadable, with the reason: {list}"
    );
    assert!(list.contains(&format!("href=\"/evals/{GOOD}\"")), "{list}");

    let good_transcript = format!("/evals/{GOOD}/transcripts/{transcript}");
    let (status, page) = raw_get(&server, &good_transcript, &[]);
    assert_eq!(status, 200, "{page}");
    let linked_transcript = format!("/evals/linked/transcripts/{transcript}");
    for (target, expected) in [
        ("/evals/..", 404),
        ("/evals/%2e%2e", 404),
        ("/evals/%2E%2E", 404),
        ("/evals/..%2F..%2Fetc%2Fpasswd", 404),
        ("/evals/%2e%2e%2f%2e%2e%2fetc", 404),
        ("/evals/%2e%2e/%2e%2e/etc/passwd", 404),
        ("/evals/../../etc/passwd", 404),
        ("/evals/.hidden", 404),
        ("/evals/no-such-run", 404),
        (&format!("/evals/{GOOD}%2F..%2Flinked"), 404),
        (
            &format!("/evals/{GOOD}/transcripts/..%2F..%2Flinked%2Freport.json"),
            404,
        ),
        (&format!("/evals/{GOOD}/transcripts/%2e%2e"), 404),
        (
            &format!("/evals/{GOOD}/transcripts/{transcript}.jsonl"),
            404,
        ),
        (
            &format!("/evals/{GOOD}/transcripts/{}", transcript.to_uppercase()),
            404,
        ),
        ("/evals/linked", 422),
        (&linked_transcript, 422),
        ("/evals/damaged", 422),
    ] {
        let (status, body) = raw_get(&server, target, &[]);
        assert_eq!(status, expected, "{target}: {body}");
        assert!(!body.contains(OUTSIDE_MODEL), "{target}: {body}");
        assert!(!body.contains("root:"), "{target}: {body}");
    }
    let (_, damaged) = raw_get(&server, "/evals/damaged", &[]);
    assert!(
        damaged.contains("the eval run `damaged` cannot be shown")
            && damaged.contains("is not an eval report"),
        "{damaged}"
    );
}

#[test]
fn the_eval_pages_keep_the_token_and_host_rules_of_every_page() {
    let fixture = EvalData::new();
    let server = fixture.serve(&["--token", "eval-token"]);
    let transcript = format!("/evals/{GOOD}/transcripts/{}", fixture.transcript);
    for target in ["/evals", &format!("/evals/{GOOD}"), &transcript] {
        let page = server.get(target);
        assert_eq!(page.status, 303, "{target}");
        assert!(
            page.header("location").starts_with("/login?next="),
            "{target}: {}",
            page.header("location")
        );
        let (status, body) = raw_get(&server, target, &[("Authorization", "Bearer wrong")]);
        assert_eq!(status, 303, "{target}: {body}");
        let (status, body) = raw_get(&server, target, &[("Authorization", "Bearer eval-token")]);
        assert_eq!(status, 200, "{target}: {body}");
        assert!(body.contains("model-under-test"), "{target}");
    }
    // Without a token the server answers loopback names only: a page on another name that
    // resolves here (DNS rebinding) reaches no eval.
    let open = fixture.serve(&[]);
    let port = open.base.rsplit(':').next().unwrap().to_owned();
    for host in [format!("evil.example:{port}"), "0.0.0.0".to_owned()] {
        for target in ["/evals", &format!("/evals/{GOOD}"), &transcript] {
            let (status, body) = raw_get(&open, target, &[("Host", &host)]);
            assert!(
                matches!(status, 400 | 403),
                "{target} for Host {host}: {status} {body}"
            );
            assert!(!body.contains("model-under-test"), "{target}: {body}");
        }
    }
    let (status, _) = raw_get(&open, "/evals", &[]);
    assert_eq!(status, 200);
}

#[test]
fn in_a_browser_the_run_page_shows_its_confusion_table() {
    let Some(browser) = Browser::shared() else {
        return;
    };
    let fixture = EvalData::new();
    let server = fixture.serve(&[]);
    let page = browser.new_page();
    page.goto(&format!("{}/evals", server.base));
    page.wait_for(&format!("a[href=\"/evals/{GOOD}\"]")).click();
    let table = page.wait_for("table.confusion");
    let text = table.text();
    for shown in ["Should trigger", "TP 5", "FN 4", "FP 1", "TN 5"] {
        assert!(text.contains(shown), "{shown}: {text}");
    }
    assert_eq!(
        page.execute(
            "const box = document.querySelector('table.confusion').getBoundingClientRect(); return box.width > 0 && box.height > 0",
            [],
        ),
        json!(true),
        "the confusion table is laid out"
    );
    assert_eq!(
        page.execute("return window.pwned === undefined", []),
        json!(true),
        "model text ran as script"
    );
    page.screenshot("evals");
    page.execute(
        "document.querySelector('table.pass-rates').scrollIntoView()",
        [],
    );
    page.screenshot("evals-tasks");
    let errors = page.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    page.find(&format!(
        "a[href=\"/evals/{GOOD}/transcripts/{}\"]",
        fixture.transcript
    ))
    .click();
    page.wait_for_text(".bubble.user", "Fill in the form in invoice.pdf");
    page.wait_for_text("details.card", "load_skill");
    page.screenshot("evals-transcript");
    assert_eq!(
        page.execute("return window.pwned === undefined", []),
        json!(true)
    );
}
