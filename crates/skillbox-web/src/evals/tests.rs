//! The eval pages, tested as a browser sees them: each page of a run written to a data folder.

use std::path::PathBuf;

use axum::body::Body;
use axum::http::{Request, header};
use pretty_assertions::assert_eq;
use skillbox_agent::{ToolCall, ToolResult, TranscriptStore, Usage, WireFormat};
use skillbox_eval::report::{
    CandidateDescription, ModelInfo, RunResult, TaskReport, TaskRunReport, TriggerReport,
};
use skillbox_eval::task::TaskRun;
use skillbox_eval::trigger::TriggerRun;
use skillbox_eval::{CacheUse, TriggerQuery};
use tower::ServiceExt;

use std::sync::Arc;

use skillbox_agent::{Message, TurnEnd};
use skillbox_eval::EvalReport;
use skillbox_eval::report::{DescriptionReport, SkillEvalReport, WITH_SKILL, WITHOUT_SKILL};

use super::format::*;
use super::list_page::*;
use super::run_page::*;
use super::*;
use crate::eval_files::EvalsFolder;
use crate::eval_files::{EVALS_FOLDER, REPORT_FILE, TRANSCRIPTS_FOLDER};

/// Model-written text a page must show as text.
const HOSTILE: &str = "<script>window.pwned=1</script><img src=x onerror=alert(1)>";

/// The web app over an empty catalog with its data folder at `data`.
fn app(data: &std::path::Path, token: Option<&str>) -> axum::Router {
    use skillbox_exec::{Executor, ExecutorConfig, SandboxMode, SandboxPolicy};
    let executor = Executor::new(ExecutorConfig {
        helper: None,
        policy: SandboxPolicy {
            mode: SandboxMode::Off,
            ..SandboxPolicy::default()
        },
        workspace_root: data.join("runs"),
        ..ExecutorConfig::default()
    })
    .unwrap();
    let data_dir =
        skillbox_services::DataDir::open(data, std::time::Duration::from_secs(3600)).unwrap();
    let services = Arc::new(skillbox_services::Services::new(
        &data_dir,
        skillbox_services::RunLimits::default(),
    ));
    let provider = skillbox_tools::SkillsProvider::new(
        Arc::new(skillbox_core::SkillCatalog::default()),
        Arc::new(executor),
        skillbox_tools::ProviderOptions::default(),
    )
    .with_services(Arc::clone(&services));
    crate::WebApp::new(
        skillbox_tools::LiveProvider::new(provider),
        services,
        Arc::new(skillbox_tools::DoorPolicy::default()),
        crate::WebConfig {
            token: token.map(str::to_owned),
            chat: crate::ChatSetup {
                models: Vec::new(),
                options: skillbox_agent::AgentOptions::new("none"),
                approval: skillbox_tools::ApprovalMode::Deny,
                transcripts: None,
                unavailable: None,
            },
            token_guard: None,
        },
    )
    .unwrap()
    .router()
}

/// `GET path` with `headers`: the status, the `Location`, the body.
async fn get_with(
    router: &axum::Router,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String, String) {
    let mut request = Request::get(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = router
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let location = response
        .headers()
        .get(header::LOCATION)
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, location, String::from_utf8(body.to_vec()).unwrap())
}

async fn get(router: &axum::Router, path: &str) -> (u16, String) {
    let (status, _, body) = get_with(router, path, &[]).await;
    (status, body)
}

fn trigger_run(triggered: Option<&str>, transcript: Option<&str>) -> TriggerRun {
    TriggerRun {
        triggered: triggered.map(str::to_owned),
        calls: Vec::new(),
        error: None,
        rounds: 1,
        duration_ms: 10,
        transcript: transcript.map(str::to_owned),
    }
}

fn task_run(
    eval_name: &str,
    configuration: &str,
    expectations: Vec<(bool, &str)>,
    transcript: Option<&str>,
) -> TaskRunReport {
    let passed = u32::try_from(expectations.iter().filter(|(passed, _)| *passed).count()).unwrap();
    let total = u32::try_from(expectations.len()).unwrap();
    TaskRunReport {
        eval_id: serde_json::json!(1),
        eval_name: eval_name.to_owned(),
        configuration: configuration.to_owned(),
        run_number: 1,
        result: RunResult {
            pass_rate: f64::from(passed) / f64::from(total),
            passed,
            failed: total - passed,
            total,
            time_seconds: 1.5,
            tokens: 120,
            tool_calls: 1,
            errors: 0,
        },
        expectations: expectations
            .into_iter()
            .map(
                |(passed, graded_by)| skillbox_eval::grade::GradedExpectation {
                    text: format!("expectation graded by {graded_by} {HOSTILE}"),
                    passed,
                    evidence: format!("evidence {HOSTILE}"),
                    graded_by: graded_by.to_owned(),
                },
            )
            .collect(),
        run: TaskRun {
            answer: format!("The answer {HOSTILE}"),
            end: TurnEnd::Answered,
            error: None,
            calls: Vec::new(),
            usage: Usage::default(),
            rounds: 1,
            duration_ms: 1500,
            transcript: transcript.map(str::to_owned),
            outputs: PathBuf::from("/tmp/outputs"),
        },
    }
}

/// A report of one skill (`pdf`) with triggers, tasks with a baseline and a tuning, model
/// text hostile throughout; `transcript` is the id its first query's first repeat names.
fn report(id: &str, started: &str, transcript: &str) -> EvalReport {
    let query = |text: &str, should_trigger: bool| TriggerQuery {
        query: text.to_owned(),
        should_trigger,
    };
    let triggers = TriggerReport::new(
        "pdf",
        vec![
            (
                query("fill this pdf form", true),
                vec![
                    trigger_run(Some("pdf"), Some(transcript)),
                    trigger_run(Some("pdf"), None),
                ],
            ),
            (
                query(&format!("merge two pdfs {HOSTILE}"), true),
                vec![trigger_run(None, None), trigger_run(Some("image"), None)],
            ),
            (
                query("resize an image", false),
                vec![
                    trigger_run(Some("pdf"), None),
                    trigger_run(Some("image"), None),
                ],
            ),
        ],
    );
    let tasks = TaskReport::new(vec![
        task_run(
            "fill-form",
            WITH_SKILL,
            vec![(true, "check"), (true, "judge:judge-model")],
            Some("00000000000000000000000000000001"),
        ),
        task_run(
            "fill-form",
            WITHOUT_SKILL,
            vec![(false, "check"), (true, "judge:judge-model")],
            None,
        ),
    ]);
    EvalReport {
        id: id.to_owned(),
        started: started.to_owned(),
        model: ModelInfo {
            format: "chat".to_owned(),
            model: "model-under-test".to_owned(),
            endpoint: "http://127.0.0.1:1/v1".to_owned(),
            judge: "judge-model".to_owned(),
        },
        repeat: 2,
        skills: vec![SkillEvalReport {
            name: "pdf".to_owned(),
            path: PathBuf::from("/skills/pdf"),
            triggers: Some(triggers),
            tasks: Some(tasks),
            description: Some(DescriptionReport {
                original: "Works with PDFs.".to_owned(),
                train_queries: vec!["a".to_owned(), "b".to_owned()],
                holdout_queries: vec!["c".to_owned()],
                original_holdout_accuracy: Some(0.5),
                candidates: vec![CandidateDescription {
                    description: format!("Fills and merges PDF files. {HOSTILE}"),
                    holdout_accuracy: Some(1.0),
                    holdout_recall: Some(1.0),
                    rejected: None,
                }],
                best: Some(format!("Fills and merges PDF files. {HOSTILE}")),
                written: false,
                diff: Some(format!(
                    "--- SKILL.md\n+++ SKILL.md\n@@ -1 +1 @@\n-description: Works with PDFs.\n+description: Fills and merges PDF files. {HOSTILE}\n"
                )),
            }),
        }],
        duration_ms: 65_000,
        cache: CacheUse {
            hits: 3,
            misses: 4,
            model_ms: 100,
        },
    }
}

const TRANSCRIPT: &str = "0123456789abcdef0123456789abcdef";

/// Write `report` as run `id`'s `report.json` under `data`.
fn write_report(data: &std::path::Path, id: &str, report: &EvalReport) -> PathBuf {
    let folder = data.join(EVALS_FOLDER).join(id);
    fs_err::create_dir_all(&folder).unwrap();
    fs_err::write(
        folder.join(REPORT_FILE),
        serde_json::to_vec(report).unwrap(),
    )
    .unwrap();
    folder
}

/// Set a folder's modification time `seconds` after the epoch.
fn set_modified(folder: &std::path::Path, seconds: u64) {
    let (file, _) = fs_err::File::open(folder).unwrap().into_parts();
    file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds))
        .unwrap();
}

/// The part of `page` from `start` to the first `end` after it.
fn fragment<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let from = page
        .find(start)
        .unwrap_or_else(|| panic!("no {start}: {page}"));
    let to = page[from..].find(end).unwrap_or_else(|| panic!("no {end}")) + from + end.len();
    &page[from..to]
}

#[tokio::test]
async fn the_list_shows_runs_newest_first_and_unreadable_ones_with_the_reason() {
    let data = tempfile::tempdir().unwrap();
    let router = app(data.path(), None);
    let (status, page) = get(&router, "/evals").await;
    assert_eq!(status, 200);
    assert!(page.contains("No eval runs yet"), "{page}");
    assert!(
        page.contains(r#"<a href="/evals" aria-current="page">Evals</a>"#),
        "{page}"
    );

    let older = write_report(
        data.path(),
        "20250101-100000-aaaaaa",
        &report(
            "20250101-100000-aaaaaa",
            "2025-01-01T10:00:00.5Z",
            TRANSCRIPT,
        ),
    );
    set_modified(&older, 1_000);
    let newer = write_report(
        data.path(),
        "20250102-100000-bbbbbb",
        &report("20250102-100000-bbbbbb", "2025-01-02T10:00:00Z", TRANSCRIPT),
    );
    set_modified(&newer, 2_000);
    let broken = data.path().join(EVALS_FOLDER).join("broken");
    fs_err::create_dir_all(&broken).unwrap();
    fs_err::write(broken.join(REPORT_FILE), "{\"id\": 1").unwrap();
    set_modified(&broken, 1_500);
    let outside = tempfile::tempdir().unwrap();
    write_report(outside.path(), "x", &report("x", "", TRANSCRIPT));
    std::os::unix::fs::symlink(
        outside.path().join(EVALS_FOLDER).join("x"),
        data.path().join(EVALS_FOLDER).join("linked"),
    )
    .unwrap();
    // Not run folders: a file, and a name no run has.
    fs_err::write(data.path().join(EVALS_FOLDER).join("notes.txt"), "x").unwrap();
    fs_err::create_dir_all(data.path().join(EVALS_FOLDER).join(".hidden")).unwrap();

    let (status, page) = get(&router, "/evals").await;
    assert_eq!(status, 200);
    let order: Vec<&str> = page
        .match_indices("data-run=\"")
        .map(|(at, _)| {
            let rest = &page[at + 10..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    assert_eq!(
        order.first().copied(),
        Some("linked"),
        "the link is the newest entry"
    );
    assert_eq!(
        &order[1..],
        ["20250102-100000-bbbbbb", "broken", "20250101-100000-aaaaaa"]
    );
    assert!(!page.contains("notes.txt") && !page.contains(".hidden"));
    let newest = fragment(&page, "data-run=\"20250102-100000-bbbbbb\"", "</tr>");
    for shown in [
        "href=\"/evals/20250102-100000-bbbbbb\"",
        "2025-01-02 10:00:00 UTC",
        "model-under-test",
        "<td>pdf</td>",
        // Repeat 1: 1 of 2 triggers right, 1 of 2 should-queries, 1 of 3 decided right;
        // repeat 2: 1 of 1, 1 of 2, 2 of 3.
        "<td class=\"number\">75%</td><td class=\"number\">50%</td><td class=\"number\">50%</td>",
        // Pass rate with 100%, without 50%.
        "<td class=\"number\">100%</td><td class=\"number\">50%</td>",
    ] {
        assert!(newest.contains(shown), "{shown}: {newest}");
    }
    let broken_row = fragment(&page, "data-run=\"broken\"", "</tr>");
    assert!(
        broken_row.contains("unreadable")
            && broken_row.contains("`broken/report.json` is not an eval report"),
        "{broken_row}"
    );
    let linked_row = fragment(&page, "data-run=\"linked\"", "</tr>");
    assert!(
        linked_row.contains("is a symbolic link") && !linked_row.contains("href="),
        "{linked_row}"
    );
}

#[tokio::test]
async fn a_run_page_shows_triggers_tasks_and_tuning_with_model_text_escaped() {
    let data = tempfile::tempdir().unwrap();
    let id = "20250102-100000-bbbbbb";
    write_report(
        data.path(),
        id,
        &report(id, "2025-01-02T10:00:00Z", TRANSCRIPT),
    );
    let router = app(data.path(), None);
    let (status, page) = get(&router, &format!("/evals/{id}")).await;
    assert_eq!(status, 200, "{page}");
    assert!(!page.contains("<script>window") && !page.contains("<img src=x"));
    assert!(page.contains("&#60;script&#62;window.pwned=1"), "{page}");

    let confusion = fragment(&page, "<table class=\"confusion\"", "</dl>");
    insta::assert_snapshot!("confusion_table", confusion);

    let misfire = fragment(&page, "<tr class=\"misfire\">", "</tr>");
    assert!(
        misfire.contains("merge two pdfs") && misfire.contains("0% of 2"),
        "{misfire}"
    );
    assert!(misfire.contains("none, image"), "{misfire}");
    assert!(
        page.contains(&format!(
            "<a href=\"/evals/{id}/transcripts/{TRANSCRIPT}\">#1</a>"
        )),
        "the first repeat's transcript is one click away"
    );

    let chart = fragment(&page, "<table class=\"pass-rates\">", "</table>");
    assert!(
        chart.contains("<rect class=\"with\" width=\"100\"")
            && chart.contains("<rect class=\"without\" width=\"50\""),
        "{chart}"
    );
    assert!(
        chart.contains("100% (2 of 2 expectations, 1 run)")
            && chart.contains("50% (1 of 2 expectations, 1 run)"),
        "the values are there as text too: {chart}"
    );
    assert!(page.contains("pass rate <strong>+0.50</strong>"), "{page}");
    assert!(
        page.contains("<span class=\"flag judged\">judged by model judge-model</span>"),
        "{page}"
    );
    assert!(page.contains("check (no model)"), "{page}");
    assert!(
        page.contains(&format!(
            "<a href=\"/evals/{id}/transcripts/00000000000000000000000000000001\">transcript</a>"
        )),
        "{page}"
    );
    let diff = fragment(&page, "<pre class=\"diff\">", "</pre>");
    assert!(
        diff.contains("<span class=\"remove\">-description: Works with PDFs.</span>")
            && diff.contains(
                "<span class=\"add\">+description: Fills and merges PDF files. &#60;script&#62;"
            ),
        "{diff}"
    );
    assert!(page.contains("not written: <code>--write</code>"), "{page}");
}

#[tokio::test]
async fn a_transcript_shows_messages_and_each_call_with_its_result() {
    let data = tempfile::tempdir().unwrap();
    let id = "run-1";
    let folder = write_report(data.path(), id, &report(id, "", TRANSCRIPT));
    let store = TranscriptStore::new(folder.join(TRANSCRIPTS_FOLDER));
    let mut transcript = store
        .create(
            WireFormat::Chat,
            "model-under-test",
            "http://127.0.0.1:1/v1",
        )
        .unwrap();
    transcript
        .append(&Message::user(format!("fill this pdf form {HOSTILE}")))
        .unwrap();
    transcript
        .append(&Message::Assistant {
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: "call_1".to_owned(),
                name: "load_skill".to_owned(),
                arguments: "{\"skill\":\"pdf\"}".to_owned(),
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
                content: format!("# PDF skill {HOSTILE}"),
                is_error: false,
            }],
        })
        .unwrap();
    transcript.append(&Message::assistant("Done.")).unwrap();
    transcript
        .record_turn(TurnEnd::Answered, 2, Usage::default())
        .unwrap();
    let transcript_id = transcript.header().id.clone();
    drop(transcript);
    // The report names it, so the page says what it was.
    write_report(data.path(), id, &report(id, "", &transcript_id));

    let router = app(data.path(), None);
    let (status, page) = get(&router, &format!("/evals/{id}/transcripts/{transcript_id}")).await;
    assert_eq!(status, 200, "{page}");
    assert!(!page.contains("<script>window") && !page.contains("<img src=x"));
    assert!(
        page.contains("pdf: trigger query “fill this pdf form” (should trigger), repeat 1"),
        "{page}"
    );
    assert!(
        page.contains("<div class=\"bubble user\">fill this pdf form &#60;script&#62;"),
        "{page}"
    );
    let card = fragment(&page, "<details class=\"card\"", "</details>");
    assert!(card.contains("<code>load_skill</code>"), "{card}");
    assert!(card.contains("&#34;skill&#34;: &#34;pdf&#34;"), "{card}");
    assert!(
        card.contains("<pre class=\"result\"># PDF skill &#60;script&#62;"),
        "{card}"
    );
    assert!(page.contains("<div class=\"bubble assistant\">Done.</div>"));
    assert!(page.contains("Turn answered · 2 rounds"), "{page}");
    assert!(page.contains(&format!("<a href=\"/evals/{id}\">{id}</a>")));
}

#[tokio::test]
async fn names_that_are_not_names_and_unreadable_runs_are_refused() {
    let data = tempfile::tempdir().unwrap();
    write_report(data.path(), "good", &report("good", "", TRANSCRIPT));
    let broken = data.path().join(EVALS_FOLDER).join("broken");
    fs_err::create_dir_all(&broken).unwrap();
    fs_err::write(broken.join(REPORT_FILE), "[]").unwrap();
    let outside = tempfile::tempdir().unwrap();
    write_report(outside.path(), "x", &report("x", "", TRANSCRIPT));
    std::os::unix::fs::symlink(
        outside.path().join(EVALS_FOLDER).join("x"),
        data.path().join(EVALS_FOLDER).join("linked"),
    )
    .unwrap();
    // A transcript that is a link to a file outside.
    fs_err::create_dir_all(
        data.path()
            .join(EVALS_FOLDER)
            .join("good")
            .join(TRANSCRIPTS_FOLDER),
    )
    .unwrap();
    fs_err::write(outside.path().join("secret.jsonl"), "{}").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.jsonl"),
        data.path()
            .join(EVALS_FOLDER)
            .join("good")
            .join(TRANSCRIPTS_FOLDER)
            .join(format!("{TRANSCRIPT}.jsonl")),
    )
    .unwrap();
    let router = app(data.path(), None);
    for (path, expected) in [
        ("/evals/good", 200),
        ("/evals/missing", 404),
        ("/evals/..", 404),
        ("/evals/%2e%2e", 404),
        ("/evals/%2E%2E%2Fetc", 404),
        ("/evals/.hidden", 404),
        ("/evals/a%2Fb", 404),
        ("/evals/good%00", 404),
        ("/evals/../etc/passwd", 404),
        ("/evals/good/transcripts/..%2F..%2Freport", 404),
        ("/evals/good/transcripts/0123", 404),
        (
            "/evals/good/transcripts/00000000000000000000000000000002",
            404,
        ),
        ("/evals/broken", 422),
        ("/evals/linked", 422),
        (&format!("/evals/linked/transcripts/{TRANSCRIPT}"), 422),
        (&format!("/evals/good/transcripts/{TRANSCRIPT}"), 422),
    ] {
        let (status, page) = get(&router, path).await;
        assert_eq!(status, expected, "{path}: {page}");
        if expected != 200 {
            assert!(!page.contains("model-under-test"), "{path}: {page}");
        }
    }
    let (_, page) = get(&router, "/evals/broken").await;
    assert!(
        page.contains("`broken/report.json` is not an eval report"),
        "{page}"
    );
    let (_, page) = get(&router, "/evals/linked").await;
    assert!(page.contains("`linked` is a symbolic link"), "{page}");
}

#[tokio::test]
async fn with_a_token_the_eval_pages_need_a_session_like_every_page() {
    let data = tempfile::tempdir().unwrap();
    write_report(data.path(), "good", &report("good", "", TRANSCRIPT));
    let router = app(data.path(), Some("secret"));
    for path in [
        "/evals",
        "/evals/good",
        &format!("/evals/good/transcripts/{TRANSCRIPT}"),
    ] {
        let (status, location, body) = get_with(&router, path, &[]).await;
        assert_eq!(status, 303, "{path}");
        assert!(location.starts_with("/login?next="), "{location}");
        assert!(!body.contains("model-under-test"));
        let (status, _, _) = get_with(&router, path, &[("authorization", "Bearer wrong")]).await;
        assert_eq!(status, 303, "{path}");
    }
    let (status, _, body) = get_with(
        &router,
        "/evals/good",
        &[("authorization", "Bearer secret")],
    )
    .await;
    assert_eq!(status, 200);
    assert!(body.contains("model-under-test"));
}

#[test]
fn the_list_counts_reports_it_could_not_read_against_its_budget() {
    let data = tempfile::tempdir().unwrap();
    let evals = data.path().join(EVALS_FOLDER);
    // Six damaged reports of 12 MiB: each read whole before the damage shows.
    let mut damaged = vec![b' '; 12 * 1024 * 1024];
    damaged.push(b'x');
    for index in 0..6 {
        let folder = evals.join(format!("damaged-{index}"));
        fs_err::create_dir_all(&folder).unwrap();
        fs_err::write(folder.join(REPORT_FILE), &damaged).unwrap();
    }
    let (rows, _, _, problem) = list_rows(&EvalsFolder::new(evals));
    assert_eq!(problem, None);
    let badges: Vec<&str> = rows.iter().map(|row| row.badge).collect();
    assert_eq!(
        badges
            .iter()
            .filter(|badge| **badge == "unreadable")
            .count(),
        5,
        "64 MiB read in all: {badges:?}"
    );
    assert_eq!(
        badges
            .iter()
            .filter(|badge| **badge == "not summarised")
            .count(),
        1,
        "{badges:?}"
    );
}

#[test]
fn figures_are_shown_plainly() {
    assert_eq!(
        shown_time("2025-01-02T10:11:12.123456Z"),
        "2025-01-02 10:11:12 UTC"
    );
    assert_eq!(shown_time("yesterday"), "yesterday");
    assert_eq!(shown_duration(65_000), "1 min 05 s");
    assert_eq!(shown_duration(1_250), "1.2 s");
    assert_eq!(bar_width(0.666), 67);
    assert_eq!(bar_width(f64::NAN), 0);
    assert_eq!(bar_width(7.0), 100);
    assert_eq!(
        grader_label("judge:qwen"),
        ("judged by model qwen".to_owned(), true)
    );
    let long = "é".repeat(MAX_SHOWN_TEXT_CHARS + 5);
    assert!(shown_text(&long).ends_with("(cut here: 5 more characters)"));
}
