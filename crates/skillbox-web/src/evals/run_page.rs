//! `/evals/{run}`: one run in full: per skill, the triggers as a confusion table and each
//! query's outcome, the task pass rates with and without the skill as a chart, each task
//! run's graded expectations, and the description tuning.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use askama::Template;
use axum::Extension;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use skillbox_eval::EvalReport;
use skillbox_eval::report::{
    DescriptionReport, TaskReport, TaskRunReport, TriggerReport, WITH_SKILL, WITHOUT_SKILL,
    named_skills,
};

use crate::auth::Visitor;
use crate::eval_files::MAX_REPORT_BYTES;
use crate::pages::{Layout, render};
use crate::{WebError, WebState};

use super::format::*;
use super::*;

/// The confusion counts and figures of a skill's triggers.
pub(super) struct TriggersView {
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
pub(super) struct QueryRow {
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
pub(super) struct Bar {
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
pub(super) struct PassTally {
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
pub(super) fn bar_width(share: f64) -> u32 {
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
pub(super) struct ExpectationRow {
    text: String,
    passed: bool,
    evidence: String,
    grader: String,
    judged: bool,
}

/// One task run.
pub(super) struct TaskRunView {
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
pub(super) struct TasksView {
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
pub(super) struct DiffLine {
    class: &'static str,
    text: String,
}

/// One proposed description.
pub(super) struct CandidateRow {
    description: String,
    accuracy: String,
    recall: String,
    rejected: Option<String>,
    best: bool,
}

/// What description tuning found.
pub(super) struct DescriptionView {
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
pub(super) fn diff_lines(diff: &str) -> Vec<DiffLine> {
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
pub(super) struct SkillView {
    name: String,
    path: String,
    triggers: Option<TriggersView>,
    tasks: Option<TasksView>,
    description: Option<DescriptionView>,
}

#[derive(Template)]
#[template(path = "eval_run.html")]
pub(super) struct EvalRunPage {
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
