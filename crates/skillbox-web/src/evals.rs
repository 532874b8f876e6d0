//! The eval pages: the runs `skillbox eval` wrote under the data folder's `evals/` (newest
//! first, with each skill's headline figures), one run in full (per skill: triggers as a
//! confusion table and each query's outcome, task pass rates with and without the skill as a
//! chart, each task run's graded expectations, the description tuning), and each run's
//! transcript.
//!
//! Everything in a report was written by a model or for one (queries, answers, evidence,
//! proposed descriptions): it is data, escaped by the templates like skill content. Files
//! are read by [`crate::eval_files`], which never follows a link and bounds every read.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use askama::Template;
use axum::Extension;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use skillbox_agent::{Message, TurnEnd};
use skillbox_eval::EvalReport;
use skillbox_eval::report::{
    DescriptionReport, SkillReport, Stat, TaskReport, TaskRunReport, TriggerReport, WITH_SKILL,
    WITHOUT_SKILL, named_skills,
};

use crate::auth::Visitor;
use crate::catalog_pages::encode_component;
use crate::eval_files::{
    EvalFileError, EvalsFolder, MAX_REPORT_BYTES, TranscriptEntry, TranscriptFile, is_transcript_id,
};
use crate::pages::{Layout, render};
use crate::runs::clock_time;
use crate::{WebError, WebState, on_blocking_thread};

/// Eval runs the list shows (the newest).
pub const MAX_LISTED_EVAL_RUNS: usize = 200;
/// Skills of one run the list shows; the run's page shows them all. A report may name any
/// number: a row per skill had made one 3 MiB report a list of 60 MB.
pub const MAX_LISTED_SKILLS_PER_RUN: usize = 20;
/// Bytes of reports the list reads in all to summarise its runs; runs past it are listed
/// without their figures (a run's own page reads its report whole).
pub const MAX_LIST_REPORT_BYTES: u64 = 64 * 1024 * 1024;
/// Characters of one text shown on the run and transcript pages (an answer, a tool result);
/// the rest is cut, and the page says so.
pub const MAX_SHOWN_TEXT_CHARS: usize = 64 * 1024;
/// What a missing figure shows.
const NO_FIGURE: &str = "–";
/// Eval pages read and rendered at once; others wait for a place (within the blocking pool's
/// budget), then are told to try again. A report is read whole and model-written: 14 MiB of
/// small JSON values (an eval's id may be any JSON) held 620 MB while read, and 24 views at
/// once had held 7.6 GB and most of the blocking pool every door shares. The work is the
/// processor's, so more at once would not answer sooner.
pub const MAX_EVAL_PAGES_AT_ONCE: usize = 2;
/// What a client is told when every place for eval pages stayed taken.
const BUSY_WITH_EVALS: &str = "the server is busy showing other eval pages; try again in a moment";

/// Run `read` (an eval page's reading and rendering) on the blocking pool once one of the
/// [`MAX_EVAL_PAGES_AT_ONCE`] places is free. The place goes with the work, so it is held until
/// the work ends even when the request was given up.
async fn on_eval_place<T: Send + 'static>(
    state: &WebState,
    read: impl FnOnce() -> T + Send + 'static,
) -> Result<T, WebError> {
    let wait = state.policy.blocking().budget();
    let place = tokio::time::timeout(wait, Arc::clone(&state.eval_pages).acquire_owned())
        .await
        .map_err(|_| WebError::Busy(BUSY_WITH_EVALS.into()))?
        .map_err(|_| WebError::Internal("the eval pages are closed".into()))?;
    on_blocking_thread(state, move || {
        let _place = place;
        read()
    })
    .await
}

/// `value` (a share, 0 to 1) as a whole percentage.
fn percent(value: f64) -> String {
    if value.is_finite() {
        format!("{:.0}%", value * 100.0)
    } else {
        NO_FIGURE.to_owned()
    }
}

/// A share's mean, or the dash.
fn mean_percent(stat: Option<&Stat>) -> String {
    stat.map_or_else(|| NO_FIGURE.to_owned(), |stat| percent(stat.mean))
}

/// A share's mean ± standard deviation over repeats, or the dash.
fn spread_percent(stat: Option<&Stat>) -> String {
    stat.map_or_else(
        || NO_FIGURE.to_owned(),
        |stat| format!("{} ± {}", percent(stat.mean), percent(stat.stddev)),
    )
}

/// A share's range over repeats, or nothing.
fn range_percent(stat: Option<&Stat>) -> String {
    stat.map_or_else(String::new, |stat| {
        format!("min {}, max {}", percent(stat.min), percent(stat.max))
    })
}

/// An RFC 3339 time as `2025-01-02 10:11:12 UTC` (fractions of a second dropped); anything
/// else as it is.
fn shown_time(text: &str) -> String {
    let bytes = text.as_bytes();
    if text.ends_with('Z') && bytes.len() >= 20 && bytes[10] == b'T' && text.is_char_boundary(19) {
        format!("{} {} UTC", &text[..10], &text[11..19])
    } else {
        text.to_owned()
    }
}

/// Milliseconds as seconds (`12.3 s`) or minutes (`4 min 05 s`).
fn shown_duration(milliseconds: u64) -> String {
    let seconds = milliseconds / 1000;
    if seconds >= 60 {
        format!("{} min {:02} s", seconds / 60, seconds % 60)
    } else {
        format!("{seconds}.{} s", (milliseconds % 1000) / 100)
    }
}

/// `text`, cut at [`MAX_SHOWN_TEXT_CHARS`] characters with a note of what was left out.
fn shown_text(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN_TEXT_CHARS) {
        None => text.to_owned(),
        Some((end, _)) => format!(
            "{}\n… (cut here: {} more characters)",
            &text[..end],
            text[end..].chars().count()
        ),
    }
}

/// The address of a run's page.
fn run_link(run: &str) -> String {
    format!("/evals/{}", encode_component(run))
}

/// The address of a transcript of run `run`, when `id` is a transcript id.
fn transcript_link(run: &str, id: Option<&str>) -> Option<String> {
    id.filter(|id| is_transcript_id(id))
        .map(|id| format!("{}/transcripts/{id}", run_link(run)))
}

/// Who graded an expectation, as the page says it: `check` needs no model; a judge is named.
fn grader_label(graded_by: &str) -> (String, bool) {
    match graded_by.strip_prefix("judge:") {
        Some(model) => (format!("judged by model {model}"), true),
        None if graded_by == "check" => ("check (no model)".to_owned(), false),
        None => (graded_by.to_owned(), false),
    }
}

/// A configuration's name as the page says it.
fn configuration_label(configuration: &str) -> String {
    match configuration {
        WITH_SKILL => "with the skill".to_owned(),
        WITHOUT_SKILL => "without the skill".to_owned(),
        other => other.to_owned(),
    }
}

// ---------------------------------------------------------------- the list

/// One skill's headline figures in the list.
struct SkillHeadline {
    name: String,
    precision: String,
    recall: String,
    accuracy: String,
    with_skill: String,
    without_skill: String,
}

impl SkillHeadline {
    fn of(skill: &SkillReport) -> Self {
        let triggers = skill.triggers.as_ref();
        let pass_rate = |configuration: &str| {
            skill
                .tasks
                .as_ref()
                .and_then(|tasks| tasks.summary.get(configuration))
                .map_or_else(
                    || NO_FIGURE.to_owned(),
                    |summary| percent(summary.pass_rate.mean),
                )
        };
        SkillHeadline {
            name: skill.name.clone(),
            precision: mean_percent(triggers.and_then(|triggers| triggers.precision.as_ref())),
            recall: mean_percent(triggers.and_then(|triggers| triggers.recall.as_ref())),
            accuracy: mean_percent(triggers.and_then(|triggers| triggers.accuracy.as_ref())),
            with_skill: pass_rate(WITH_SKILL),
            without_skill: pass_rate(WITHOUT_SKILL),
        }
    }
}

/// One run in the list: its figures, or why it has none.
struct EvalRunRow {
    id: String,
    /// Its page; none for a link (refused).
    link: Option<String>,
    started: String,
    model: String,
    repeat: String,
    /// The first [`MAX_LISTED_SKILLS_PER_RUN`] skills.
    skills: Vec<SkillHeadline>,
    /// Skills past them, not listed.
    more_skills: usize,
    /// Why the run shows no figures.
    problem: Option<String>,
    /// The problem's badge: `unreadable`, or `not summarised` for a report past the list's
    /// budget.
    badge: &'static str,
}

impl EvalRunRow {
    fn unreadable(id: &str, link: Option<String>, problem: String) -> Self {
        EvalRunRow {
            id: id.to_owned(),
            badge: "unreadable",
            link,
            started: String::new(),
            model: String::new(),
            repeat: String::new(),
            skills: Vec::new(),
            more_skills: 0,
            problem: Some(problem),
        }
    }

    fn of(id: &str, report: &EvalReport) -> Self {
        EvalRunRow {
            id: id.to_owned(),
            link: Some(run_link(id)),
            started: shown_time(&report.started),
            model: report.model.model.clone(),
            repeat: report.repeat.to_string(),
            skills: report
                .skills
                .iter()
                .take(MAX_LISTED_SKILLS_PER_RUN)
                .map(SkillHeadline::of)
                .collect(),
            more_skills: report
                .skills
                .len()
                .saturating_sub(MAX_LISTED_SKILLS_PER_RUN),
            problem: None,
            badge: "",
        }
    }
}

#[derive(Template)]
#[template(path = "evals.html")]
struct EvalsPage {
    layout: Layout,
    folder: String,
    runs: Vec<EvalRunRow>,
    /// Runs past [`MAX_LISTED_EVAL_RUNS`], not listed.
    more: usize,
    /// The folder held too many entries to look at all.
    scan_cut: bool,
    /// Why the folder could not be read at all.
    problem: Option<String>,
}

/// The list's rows, read from `folder` (file I/O: on a blocking thread).
fn list_rows(folder: &EvalsFolder) -> (Vec<EvalRunRow>, usize, bool, Option<String>) {
    let listing = match folder.list() {
        Ok(listing) => listing,
        Err(error) => return (Vec::new(), 0, false, Some(error.to_string())),
    };
    let more = listing.runs.len().saturating_sub(MAX_LISTED_EVAL_RUNS);
    let mut budget = MAX_LIST_REPORT_BYTES;
    let rows = listing
        .runs
        .iter()
        .take(MAX_LISTED_EVAL_RUNS)
        .map(|entry| {
            let id = entry.id.as_str();
            if entry.link {
                return EvalRunRow::unreadable(
                    id,
                    None,
                    EvalFileError::Link(id.to_owned()).to_string(),
                );
            }
            match folder.read_report(id, &mut budget) {
                Ok(report) => EvalRunRow::of(id, &report),
                Err(EvalFileError::TooLarge { bytes, .. }) if bytes <= MAX_REPORT_BYTES => {
                    EvalRunRow {
                        badge: "not summarised",
                        ..EvalRunRow::unreadable(
                            id,
                            Some(run_link(id)),
                            format!(
                                "this list reads at most {} MiB of reports; open the run",
                                MAX_LIST_REPORT_BYTES / (1024 * 1024)
                            ),
                        )
                    }
                }
                Err(error) => EvalRunRow::unreadable(id, Some(run_link(id)), error.to_string()),
            }
        })
        .collect();
    (rows, more, listing.cut, None)
}

/// `GET /evals`.
pub(crate) async fn evals_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
) -> Result<Response, WebError> {
    let folder = state.evals.clone();
    on_eval_place(&state, move || {
        let (runs, more, scan_cut, problem) = list_rows(&folder);
        render(
            &EvalsPage {
                layout: Layout::for_visitor(&visitor, "evals", "Evals".into()),
                folder: folder.path().display().to_string(),
                runs,
                more,
                scan_cut,
                problem,
            },
            StatusCode::OK,
        )
    })
    .await
}

// ---------------------------------------------------------------- one run

/// The confusion counts and figures of a skill's triggers.
struct TriggersView {
    true_positive: u32,
    false_positive: u32,
    true_negative: u32,
    false_negative: u32,
    precision: String,
    precision_range: String,
    recall: String,
    recall_range: String,
    accuracy: String,
    accuracy_range: String,
    errors: u32,
    misfires: usize,
    queries: Vec<QueryRow>,
}

/// One trigger query over its repeats.
struct QueryRow {
    query: String,
    should_trigger: bool,
    rate: String,
    named: String,
    misfire: bool,
    errors: Vec<String>,
    /// Each repeat's transcript: its label and address (none when it was not kept).
    transcripts: Vec<(String, Option<String>)>,
}

impl TriggersView {
    fn of(run: &str, triggers: &TriggerReport) -> Self {
        let confusion = &triggers.confusion;
        let queries: Vec<QueryRow> = triggers
            .queries
            .iter()
            .map(|query| QueryRow {
                query: query.query.clone(),
                should_trigger: query.should_trigger,
                rate: format!("{} of {}", percent(query.trigger_rate), query.runs.len()),
                named: named_skills(&query.runs),
                misfire: query.misfire,
                errors: query
                    .runs
                    .iter()
                    .filter_map(|repeat| repeat.error.clone())
                    .collect(),
                transcripts: query
                    .runs
                    .iter()
                    .enumerate()
                    .map(|(index, repeat)| {
                        (
                            format!("#{}", index + 1),
                            transcript_link(run, repeat.transcript.as_deref()),
                        )
                    })
                    .collect(),
            })
            .collect();
        TriggersView {
            true_positive: confusion.true_positive,
            false_positive: confusion.false_positive,
            true_negative: confusion.true_negative,
            false_negative: confusion.false_negative,
            precision: spread_percent(triggers.precision.as_ref()),
            precision_range: range_percent(triggers.precision.as_ref()),
            recall: spread_percent(triggers.recall.as_ref()),
            recall_range: range_percent(triggers.recall.as_ref()),
            accuracy: spread_percent(triggers.accuracy.as_ref()),
            accuracy_range: range_percent(triggers.accuracy.as_ref()),
            errors: triggers.errors,
            misfires: queries.iter().filter(|query| query.misfire).count(),
            queries,
        }
    }
}

/// One bar of the pass-rate chart, with its value as text.
struct Bar {
    /// The eval (or "All evals").
    label: String,
    /// `with` or `without`: the bar's class.
    class: &'static str,
    configuration: String,
    /// The bar's length, 0 to 100.
    width: u32,
    text: String,
}

/// Pass rates summed over one eval's runs in one configuration.
#[derive(Default)]
struct PassTally {
    rate_sum: f64,
    runs: u32,
    passed: u32,
    total: u32,
}

impl PassTally {
    /// Count one task run. Counts from a hostile report may be anything: they saturate.
    fn add(&mut self, result: &skillbox_eval::report::RunResult) {
        self.rate_sum += result.pass_rate;
        self.runs = self.runs.saturating_add(1);
        self.passed = self.passed.saturating_add(result.passed);
        self.total = self.total.saturating_add(result.total);
    }

    fn bar(&self, label: &str, configuration: &str) -> Bar {
        let mean = if self.runs == 0 {
            0.0
        } else {
            self.rate_sum / f64::from(self.runs)
        };
        Bar {
            label: label.to_owned(),
            class: if configuration == WITHOUT_SKILL {
                "without"
            } else {
                "with"
            },
            configuration: configuration_label(configuration),
            width: bar_width(mean),
            text: format!(
                "{} ({} of {} expectations, {} run{})",
                percent(mean),
                self.passed,
                self.total,
                self.runs,
                if self.runs == 1 { "" } else { "s" }
            ),
        }
    }
}

/// A share as a bar's length out of 100.
fn bar_width(share: f64) -> u32 {
    if share.is_finite() {
        // Rounded and clamped to 0..=100 first: the cast cannot lose anything.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let width = (share * 100.0).round().clamp(0.0, 100.0) as u32;
        width
    } else {
        0
    }
}

/// One expectation of a task run, graded.
struct ExpectationRow {
    text: String,
    passed: bool,
    evidence: String,
    grader: String,
    judged: bool,
}

/// One task run.
struct TaskRunView {
    eval_name: String,
    configuration: String,
    run_number: u32,
    pass: String,
    all_passed: bool,
    figures: String,
    error: Option<String>,
    answer: String,
    transcript: Option<String>,
    expectations: Vec<ExpectationRow>,
}

impl TaskRunView {
    fn of(run: &str, task: &TaskRunReport) -> Self {
        let result = &task.result;
        TaskRunView {
            eval_name: task.eval_name.clone(),
            configuration: configuration_label(&task.configuration),
            run_number: task.run_number,
            pass: format!(
                "{} of {} passed ({})",
                result.passed,
                result.total,
                percent(result.pass_rate)
            ),
            all_passed: result.failed == 0 && task.run.error.is_none(),
            figures: format!(
                "{:.1} s · {} tokens · {} tool call{} · {} error{}",
                result.time_seconds,
                result.tokens,
                result.tool_calls,
                if result.tool_calls == 1 { "" } else { "s" },
                result.errors,
                if result.errors == 1 { "" } else { "s" },
            ),
            error: task.run.error.clone(),
            answer: shown_text(&task.run.answer),
            transcript: transcript_link(run, task.run.transcript.as_deref()),
            expectations: task
                .expectations
                .iter()
                .map(|graded| {
                    let (grader, judged) = grader_label(&graded.graded_by);
                    ExpectationRow {
                        text: graded.text.clone(),
                        passed: graded.passed,
                        evidence: graded.evidence.clone(),
                        grader,
                        judged,
                    }
                })
                .collect(),
        }
    }
}

/// A skill's task evals.
struct TasksView {
    bars: Vec<Bar>,
    delta: Vec<(String, String)>,
    judged: usize,
    runs: Vec<TaskRunView>,
}

impl TasksView {
    fn of(run: &str, tasks: &TaskReport) -> Self {
        // Evals and configurations numbered as they first appear (with and without the skill
        // first), so the chart is built in one pass whatever a report holds: 0 is all evals.
        let mut evals: Vec<&str> = Vec::new();
        let mut eval_numbers: HashMap<&str, usize> = HashMap::new();
        let mut configurations: Vec<&str> = vec![WITH_SKILL, WITHOUT_SKILL];
        let mut configuration_numbers: HashMap<&str, usize> =
            HashMap::from([(WITH_SKILL, 0), (WITHOUT_SKILL, 1)]);
        let mut tallies: BTreeMap<(usize, usize), PassTally> = BTreeMap::new();
        for task in &tasks.runs {
            let eval = *eval_numbers
                .entry(task.eval_name.as_str())
                .or_insert_with(|| {
                    evals.push(&task.eval_name);
                    evals.len()
                });
            let configuration = *configuration_numbers
                .entry(task.configuration.as_str())
                .or_insert_with(|| {
                    configurations.push(&task.configuration);
                    configurations.len() - 1
                });
            for group in [0, eval] {
                tallies
                    .entry((group, configuration))
                    .or_default()
                    .add(&task.result);
            }
        }
        // The whole skill first, then each eval, when there is more than one.
        let bars = tallies
            .iter()
            .filter(|((group, _), _)| *group == 0 || evals.len() > 1)
            .map(|(&(group, configuration), tally)| {
                let label = match group.checked_sub(1) {
                    None => "All evals",
                    Some(eval) => evals.get(eval).copied().unwrap_or_default(),
                };
                tally.bar(
                    label,
                    configurations
                        .get(configuration)
                        .copied()
                        .unwrap_or_default(),
                )
            })
            .collect();
        TasksView {
            bars,
            delta: tasks
                .delta
                .iter()
                .flatten()
                .map(|(name, value)| (name.replace('_', " "), value.clone()))
                .collect(),
            judged: tasks
                .runs
                .iter()
                .flat_map(|task| &task.expectations)
                .filter(|graded| graded.graded_by.starts_with("judge:"))
                .count(),
            runs: tasks
                .runs
                .iter()
                .map(|task| TaskRunView::of(run, task))
                .collect(),
        }
    }
}

/// One line of a diff, with its class (`add`, `remove`, `meta` or `same`).
struct DiffLine {
    class: &'static str,
    text: String,
}

/// One proposed description.
struct CandidateRow {
    description: String,
    accuracy: String,
    recall: String,
    rejected: Option<String>,
    best: bool,
}

/// What description tuning found.
struct DescriptionView {
    original: String,
    original_accuracy: String,
    best: Option<String>,
    written: bool,
    train: usize,
    holdout: usize,
    candidates: Vec<CandidateRow>,
    diff: Vec<DiffLine>,
}

impl DescriptionView {
    fn of(description: &DescriptionReport) -> Self {
        let share = |value: Option<f64>| value.map_or_else(|| NO_FIGURE.to_owned(), percent);
        DescriptionView {
            original: description.original.clone(),
            original_accuracy: share(description.original_holdout_accuracy),
            best: description.best.clone(),
            written: description.written,
            train: description.train_queries.len(),
            holdout: description.holdout_queries.len(),
            candidates: description
                .candidates
                .iter()
                .map(|candidate| CandidateRow {
                    description: candidate.description.clone(),
                    accuracy: share(candidate.holdout_accuracy),
                    recall: share(candidate.holdout_recall),
                    rejected: candidate.rejected.clone(),
                    best: description.best.as_deref() == Some(candidate.description.as_str()),
                })
                .collect(),
            diff: description
                .diff
                .as_deref()
                .map(diff_lines)
                .unwrap_or_default(),
        }
    }
}

/// A unified diff's lines, each with the class that colours it.
fn diff_lines(diff: &str) -> Vec<DiffLine> {
    diff.lines()
        .map(|line| DiffLine {
            class: if line.starts_with("+++") || line.starts_with("---") || line.starts_with("@@") {
                "meta"
            } else if line.starts_with('+') {
                "add"
            } else if line.starts_with('-') {
                "remove"
            } else {
                "same"
            },
            text: line.to_owned(),
        })
        .collect()
}

/// One skill of a run.
struct SkillView {
    name: String,
    path: String,
    triggers: Option<TriggersView>,
    tasks: Option<TasksView>,
    description: Option<DescriptionView>,
}

#[derive(Template)]
#[template(path = "eval_run.html")]
struct EvalRunPage {
    layout: Layout,
    id: String,
    started: String,
    model: String,
    format: String,
    endpoint: String,
    judge: String,
    repeat: u32,
    duration: String,
    cache: String,
    skills: Vec<SkillView>,
}

impl EvalRunPage {
    fn of(layout: Layout, run: &str, report: &EvalReport) -> Self {
        EvalRunPage {
            layout,
            id: run.to_owned(),
            started: shown_time(&report.started),
            model: report.model.model.clone(),
            format: report.model.format.clone(),
            endpoint: report.model.endpoint.clone(),
            judge: report.model.judge.clone(),
            repeat: report.repeat,
            duration: shown_duration(report.duration_ms),
            cache: format!(
                "{} answered from the cache, {} asked",
                report.cache.hits, report.cache.misses
            ),
            skills: report
                .skills
                .iter()
                .map(|skill| SkillView {
                    name: skill.name.clone(),
                    path: skill.path.display().to_string(),
                    triggers: skill
                        .triggers
                        .as_ref()
                        .map(|triggers| TriggersView::of(run, triggers)),
                    tasks: skill.tasks.as_ref().map(|tasks| TasksView::of(run, tasks)),
                    description: skill.description.as_ref().map(DescriptionView::of),
                })
                .collect(),
        }
    }
}

/// The page's error for a run (or transcript) that cannot be shown: 404 when it is not
/// there, 422 when it is there but cannot be read.
fn run_error(run: &str, error: &EvalFileError) -> WebError {
    if error.is_missing() {
        WebError::NotFound(format!(
            "nothing to show: {error} in the evals folder; /evals lists the runs"
        ))
    } else {
        WebError::Unreadable(format!(
            "the eval run `{run}` cannot be shown: {error}. /evals lists the runs"
        ))
    }
}

/// `GET /evals/{run}`.
pub(crate) async fn eval_run_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
    Path(run): Path<String>,
) -> Result<Response, WebError> {
    let folder = state.evals.clone();
    on_eval_place(&state, move || {
        let mut budget = MAX_REPORT_BYTES;
        let report = folder
            .read_report(&run, &mut budget)
            .map_err(|error| run_error(&run, &error))?;
        let layout = Layout::for_visitor(&visitor, "evals", format!("Eval {run}"));
        Ok(render(
            &EvalRunPage::of(layout, &run, &report),
            StatusCode::OK,
        ))
    })
    .await?
}

// ---------------------------------------------------------------- one transcript

/// One thing shown on the transcript page.
struct TranscriptItem {
    /// `user`, `assistant`, `call`, `turn` or `problem`.
    kind: &'static str,
    /// A call's tool.
    title: String,
    /// The text, a call's arguments, a turn's figures or a problem.
    text: String,
    /// A call's result, once it came.
    result: Option<String>,
    failed: bool,
}

impl TranscriptItem {
    fn new(kind: &'static str, text: String) -> Self {
        TranscriptItem {
            kind,
            title: String::new(),
            text,
            result: None,
            failed: false,
        }
    }
}

/// A tool call's arguments, pretty when they are JSON. They are model output: pretty-printing
/// puts each value on a line of its own indented by its depth (a hundredfold for deeply nested
/// arrays), so only arguments up to [`MAX_SHOWN_TEXT_CHARS`] bytes are read as JSON, and only
/// the first [`MAX_SHOWN_TEXT_CHARS`] bytes of their pretty form are made.
fn shown_arguments(arguments: &str) -> String {
    if arguments.len() > MAX_SHOWN_TEXT_CHARS {
        return shown_text(arguments);
    }
    let Ok(value) = serde_json::from_str::<serde_json::Value>(arguments) else {
        return shown_text(arguments);
    };
    let mut pretty = BoundedText::new(MAX_SHOWN_TEXT_CHARS);
    let whole = serde_json::to_writer_pretty(&mut pretty, &value).is_ok();
    let text = pretty.into_text();
    if whole {
        text
    } else {
        format!(
            "{text}\n… (cut here: the arguments are {} bytes as the model wrote them)",
            arguments.len()
        )
    }
}

/// Text written up to a bound of bytes; a write past it fails, which ends the writing.
struct BoundedText {
    bytes: Vec<u8>,
    bound: usize,
}

impl BoundedText {
    fn new(bound: usize) -> Self {
        BoundedText {
            bytes: Vec::new(),
            bound,
        }
    }

    /// What was written, up to its last whole character.
    fn into_text(self) -> String {
        match String::from_utf8(self.bytes) {
            Ok(text) => text,
            Err(error) => {
                let whole = error.utf8_error().valid_up_to();
                let mut bytes = error.into_bytes();
                bytes.truncate(whole);
                String::from_utf8(bytes).unwrap_or_default()
            }
        }
    }
}

impl std::io::Write for BoundedText {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        let room = self.bound.saturating_sub(self.bytes.len());
        if room == 0 && !buffer.is_empty() {
            return Err(std::io::Error::other("the shown text is at its bound"));
        }
        let taken = buffer.len().min(room);
        self.bytes
            .extend_from_slice(buffer.get(..taken).unwrap_or_default());
        Ok(taken)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The page's items for a transcript's lines: each call with its result beside it, and a note
/// of the `unshown_problems` lines that were not named.
fn transcript_items(lines: &[TranscriptEntry], unshown_problems: usize) -> Vec<TranscriptItem> {
    let mut items: Vec<TranscriptItem> = Vec::new();
    let mut calls: HashMap<String, usize> = HashMap::new();
    for line in lines {
        match line {
            TranscriptEntry::Message(Message::User { content }) => {
                items.push(TranscriptItem::new("user", shown_text(content)));
            }
            TranscriptEntry::Message(Message::Assistant {
                content,
                tool_calls,
                ..
            }) => {
                if !content.is_empty() {
                    items.push(TranscriptItem::new("assistant", shown_text(content)));
                }
                for call in tool_calls {
                    calls.insert(call.id.clone(), items.len());
                    items.push(TranscriptItem {
                        title: call.name.clone(),
                        ..TranscriptItem::new("call", shown_arguments(&call.arguments))
                    });
                }
            }
            TranscriptEntry::Message(Message::Tool { results }) => {
                for result in results {
                    let shown = Some(shown_text(&result.content));
                    match calls
                        .remove(&result.call_id)
                        .and_then(|at| items.get_mut(at))
                    {
                        Some(item) => {
                            item.result = shown;
                            item.failed = result.is_error;
                        }
                        None => items.push(TranscriptItem {
                            title: result.name.clone(),
                            result: shown,
                            failed: result.is_error,
                            ..TranscriptItem::new("call", String::new())
                        }),
                    }
                }
            }
            TranscriptEntry::Turn { end, rounds, usage } => {
                let end = match end {
                    TurnEnd::Answered => "answered",
                    TurnEnd::MaxRounds => "stopped at the round limit",
                    TurnEnd::Cancelled => {
                        "stopped (the eval had what it needed, or it was cancelled)"
                    }
                    TurnEnd::Failed => "failed",
                };
                items.push(TranscriptItem::new(
                    "turn",
                    format!(
                        "Turn {end} · {rounds} round{} · {} tokens in, {} out",
                        if *rounds == 1 { "" } else { "s" },
                        usage.input_tokens,
                        usage.output_tokens
                    ),
                ));
            }
            TranscriptEntry::Unreadable { line, message } => {
                items.push(TranscriptItem::new(
                    "problem",
                    format!("Line {line} is not a transcript line: {message}"),
                ));
            }
        }
    }
    if unshown_problems > 0 {
        items.push(TranscriptItem::new(
            "problem",
            format!(
                "{unshown_problems} more line{} not transcript lines (only the first {} are named)",
                if unshown_problems == 1 {
                    " is"
                } else {
                    "s are"
                },
                crate::eval_files::MAX_NAMED_UNREADABLE_LINES
            ),
        ));
    }
    items
}

/// What a transcript was in its run: the trigger query or task run that names it.
fn transcript_context(report: &EvalReport, id: &str) -> Option<String> {
    for skill in &report.skills {
        for query in skill.triggers.iter().flat_map(|triggers| &triggers.queries) {
            for (index, repeat) in query.runs.iter().enumerate() {
                if repeat.transcript.as_deref() == Some(id) {
                    return Some(format!(
                        "{}: trigger query “{}” ({}), repeat {}",
                        skill.name,
                        query.query,
                        if query.should_trigger {
                            "should trigger"
                        } else {
                            "should not trigger"
                        },
                        index + 1
                    ));
                }
            }
        }
        for task in skill.tasks.iter().flat_map(|tasks| &tasks.runs) {
            if task.run.transcript.as_deref() == Some(id) {
                return Some(format!(
                    "{}: task “{}” {}, run {}",
                    skill.name,
                    task.eval_name,
                    configuration_label(&task.configuration),
                    task.run_number
                ));
            }
        }
    }
    None
}

#[derive(Template)]
#[template(path = "eval_transcript.html")]
struct EvalTranscriptPage {
    layout: Layout,
    run: String,
    run_link: String,
    id: String,
    context: Option<String>,
    model: String,
    endpoint: String,
    created: String,
    items: Vec<TranscriptItem>,
    cut_at_bytes: Option<u64>,
}

/// `GET /evals/{run}/transcripts/{id}`.
pub(crate) async fn eval_transcript_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
    Path((run, id)): Path<(String, String)>,
) -> Result<Response, WebError> {
    let folder = state.evals.clone();
    on_eval_place(&state, move || {
        let transcript: TranscriptFile = folder
            .read_transcript(&run, &id)
            .map_err(|error| run_error(&run, &error))?;
        // The report says what the transcript was; a report that cannot be read only loses
        // that line.
        let mut budget = MAX_REPORT_BYTES;
        let context = folder
            .read_report(&run, &mut budget)
            .ok()
            .and_then(|report| transcript_context(&report, &id));
        let header = transcript.header.as_ref();
        let page = EvalTranscriptPage {
            layout: Layout::for_visitor(&visitor, "evals", format!("Transcript {id}")),
            run_link: run_link(&run),
            context,
            model: header
                .map(|header| header.model.clone())
                .unwrap_or_default(),
            endpoint: header
                .map(|header| header.base_url.clone())
                .unwrap_or_default(),
            created: header
                .map(|header| clock_time(header.created_unix_ms))
                .unwrap_or_default(),
            items: transcript_items(&transcript.lines, transcript.unnamed_unreadable_lines),
            cut_at_bytes: transcript.cut_at_bytes,
            run,
            id,
        };
        Ok(render(&page, StatusCode::OK))
    })
    .await?
}

#[cfg(test)]
mod tests {
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

    use super::*;
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
        let passed =
            u32::try_from(expectations.iter().filter(|(passed, _)| *passed).count()).unwrap();
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
            skills: vec![SkillReport {
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
        let (status, page) =
            get(&router, &format!("/evals/{id}/transcripts/{transcript_id}")).await;
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
            let (status, _, _) =
                get_with(&router, path, &[("authorization", "Bearer wrong")]).await;
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
}
