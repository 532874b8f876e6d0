//! What an eval run reports: per skill, trigger precision, recall and accuracy (mean and spread
//! over repeats, the confusion counts, each query's trigger rate), task pass rates with and
//! without the skill, and the description tuning's outcome. Written as `report.json`, as
//! skill-creator's `benchmark.json` per skill (its viewer reads it), and as JUnit XML.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cache::CacheUse;
use crate::grade::GradedExpectation;
use crate::task::TaskRun;
use crate::trigger::TriggerRun;

/// The report's file in an eval's output folder.
pub const REPORT_FILE: &str = "report.json";
/// skill-creator's benchmark file, one per skill folder in the output folder.
pub const BENCHMARK_FILE: &str = "benchmark.json";
/// The configuration names skill-creator's viewer groups by.
pub const WITH_SKILL: &str = "with_skill";
/// See [`WITH_SKILL`].
pub const WITHOUT_SKILL: &str = "without_skill";

/// Mean, standard deviation, min and max of a figure over repeats (skill-creator's shape).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one value).
    pub stddev: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Stat {
    /// The statistics of `values`; `None` when there are none.
    #[must_use]
    pub fn of(values: &[f64]) -> Option<Stat> {
        if values.is_empty() {
            return None;
        }
        #[allow(clippy::cast_precision_loss)]
        let count = values.len() as f64;
        let mean = values.iter().sum::<f64>() / count;
        let stddev = if values.len() > 1 {
            (values
                .iter()
                .map(|value| (value - mean).powi(2))
                .sum::<f64>()
                / (count - 1.0))
                .sqrt()
        } else {
            0.0
        };
        Some(Stat {
            mean,
            stddev,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// Trigger outcomes summed over the repeats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confusion {
    /// Should trigger, did.
    pub true_positive: u32,
    /// Should not, did.
    pub false_positive: u32,
    /// Should not, did not.
    pub true_negative: u32,
    /// Should, did not.
    pub false_negative: u32,
}

impl Confusion {
    /// Add one outcome.
    pub fn add(&mut self, should_trigger: bool, triggered: bool) {
        match (should_trigger, triggered) {
            (true, true) => self.true_positive += 1,
            (false, true) => self.false_positive += 1,
            (false, false) => self.true_negative += 1,
            (true, false) => self.false_negative += 1,
        }
    }

    /// Of the queries that triggered, the share that should have; `None` when none did.
    #[must_use]
    pub fn precision(&self) -> Option<f64> {
        ratio(self.true_positive, self.true_positive + self.false_positive)
    }

    /// Of the queries that should trigger, the share that did; `None` when there are none.
    #[must_use]
    pub fn recall(&self) -> Option<f64> {
        ratio(self.true_positive, self.true_positive + self.false_negative)
    }

    /// The share of queries decided right.
    #[must_use]
    pub fn accuracy(&self) -> Option<f64> {
        ratio(
            self.true_positive + self.true_negative,
            self.true_positive + self.true_negative + self.false_positive + self.false_negative,
        )
    }
}

fn ratio(part: u32, whole: u32) -> Option<f64> {
    (whole > 0).then(|| f64::from(part) / f64::from(whole))
}

/// One trigger query over its repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryResult {
    /// The request.
    pub query: String,
    /// Whether the skill should be used.
    pub should_trigger: bool,
    /// Each repeat's outcome.
    pub runs: Vec<TriggerRun>,
    /// The share of repeats in which this skill triggered.
    pub trigger_rate: f64,
    /// Whether the query mostly went the wrong way (triggered at most half the time when it
    /// should, more than half when it should not).
    pub misfire: bool,
}

/// A skill's trigger evals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerReport {
    /// Each query.
    pub queries: Vec<QueryResult>,
    /// Precision per repeat (absent when the skill never triggered in any).
    pub precision: Option<Stat>,
    /// Recall per repeat.
    pub recall: Option<Stat>,
    /// Accuracy per repeat.
    pub accuracy: Option<Stat>,
    /// Counts over every repeat.
    pub confusion: Confusion,
    /// Runs that failed (the model could not be reached, say).
    pub errors: u32,
}

impl TriggerReport {
    /// The report of `queries`, each with one run per repeat, for `skill`.
    #[must_use]
    pub fn new(skill: &str, queries: Vec<(crate::suite::TriggerQuery, Vec<TriggerRun>)>) -> Self {
        let repeats = queries
            .iter()
            .map(|(_, runs)| runs.len())
            .max()
            .unwrap_or(0);
        let mut per_repeat = vec![Confusion::default(); repeats];
        let mut confusion = Confusion::default();
        let mut errors = 0;
        let mut results = Vec::with_capacity(queries.len());
        for (query, runs) in queries {
            let mut hits = 0u32;
            for (repeat, run) in runs.iter().enumerate() {
                let triggered = run.triggered.as_deref() == Some(skill);
                hits += u32::from(triggered);
                errors += u32::from(run.error.is_some());
                confusion.add(query.should_trigger, triggered);
                if let Some(counts) = per_repeat.get_mut(repeat) {
                    counts.add(query.should_trigger, triggered);
                }
            }
            let total = u32::try_from(runs.len()).unwrap_or(u32::MAX);
            let trigger_rate = ratio(hits, total).unwrap_or(0.0);
            let misfire = if query.should_trigger {
                trigger_rate <= 0.5
            } else {
                trigger_rate > 0.5
            };
            results.push(QueryResult {
                query: query.query,
                should_trigger: query.should_trigger,
                runs,
                trigger_rate,
                misfire,
            });
        }
        let figure = |pick: fn(&Confusion) -> Option<f64>| {
            Stat::of(&per_repeat.iter().filter_map(pick).collect::<Vec<_>>())
        };
        TriggerReport {
            precision: figure(Confusion::precision),
            recall: figure(Confusion::recall),
            accuracy: figure(Confusion::accuracy),
            queries: results,
            confusion,
            errors,
        }
    }
}

/// skill-creator's per-run `result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Passed over total (0 when there are no expectations).
    pub pass_rate: f64,
    /// Expectations met.
    pub passed: u32,
    /// Expectations not met.
    pub failed: u32,
    /// Expectations.
    pub total: u32,
    /// Wall time.
    pub time_seconds: f64,
    /// Tokens used (input and output).
    pub tokens: u64,
    /// Tool calls made.
    pub tool_calls: u32,
    /// Failed calls, and a failed turn.
    pub errors: u32,
}

/// One task run, graded (skill-creator's `runs[]` entry plus what skillbox knows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRunReport {
    /// The eval's id.
    pub eval_id: serde_json::Value,
    /// The eval's name.
    pub eval_name: String,
    /// `with_skill` or `without_skill`.
    pub configuration: String,
    /// The repeat, from 1.
    pub run_number: u32,
    /// The figures.
    pub result: RunResult,
    /// Each expectation, graded.
    pub expectations: Vec<GradedExpectation>,
    /// The run itself: answer, calls, transcript, outputs folder.
    pub run: TaskRun,
}

impl TaskRunReport {
    /// The report of one graded run.
    #[must_use]
    pub fn new(
        eval: &crate::suite::TaskEval,
        configuration: &str,
        run_number: u32,
        run: TaskRun,
        expectations: Vec<GradedExpectation>,
    ) -> Self {
        let passed = u32::try_from(expectations.iter().filter(|graded| graded.passed).count())
            .unwrap_or(u32::MAX);
        let total = u32::try_from(expectations.len()).unwrap_or(u32::MAX);
        #[allow(clippy::cast_precision_loss)]
        let time_seconds = run.duration_ms as f64 / 1000.0;
        TaskRunReport {
            eval_id: eval.id.clone(),
            eval_name: eval.label(),
            configuration: configuration.to_owned(),
            run_number,
            result: RunResult {
                pass_rate: ratio(passed, total).unwrap_or(0.0),
                passed,
                failed: total - passed,
                total,
                time_seconds,
                tokens: run.usage.total_tokens(),
                tool_calls: u32::try_from(run.calls.len()).unwrap_or(u32::MAX),
                errors: u32::try_from(run.errors()).unwrap_or(u32::MAX),
            },
            expectations,
            run,
        }
    }
}

/// One configuration's figures over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigurationSummary {
    /// Pass rate.
    pub pass_rate: Stat,
    /// Wall time.
    pub time_seconds: Stat,
    /// Tokens.
    pub tokens: Stat,
}

/// A skill's task evals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskReport {
    /// Every run.
    pub runs: Vec<TaskRunReport>,
    /// Per configuration (`with_skill`, `without_skill`).
    pub summary: BTreeMap<String, ConfigurationSummary>,
    /// with_skill minus without_skill, as skill-creator writes it (`+0.50`).
    pub delta: Option<BTreeMap<String, String>>,
}

impl TaskReport {
    /// The summary of `runs`.
    #[must_use]
    pub fn new(runs: Vec<TaskRunReport>) -> Self {
        let mut summary = BTreeMap::new();
        for configuration in [WITH_SKILL, WITHOUT_SKILL] {
            let of = |pick: fn(&RunResult) -> f64| {
                let values: Vec<f64> = runs
                    .iter()
                    .filter(|run| run.configuration == configuration)
                    .map(|run| pick(&run.result))
                    .collect();
                Stat::of(&values)
            };
            #[allow(clippy::cast_precision_loss)]
            let (Some(pass_rate), Some(time_seconds), Some(tokens)) = (
                of(|result| result.pass_rate),
                of(|result| result.time_seconds),
                of(|result| result.tokens as f64),
            ) else {
                continue;
            };
            summary.insert(
                configuration.to_owned(),
                ConfigurationSummary {
                    pass_rate,
                    time_seconds,
                    tokens,
                },
            );
        }
        let delta = match (summary.get(WITH_SKILL), summary.get(WITHOUT_SKILL)) {
            (Some(with), Some(without)) => Some(BTreeMap::from([
                (
                    "pass_rate".to_owned(),
                    format!("{:+.2}", with.pass_rate.mean - without.pass_rate.mean),
                ),
                (
                    "time_seconds".to_owned(),
                    format!("{:+.1}", with.time_seconds.mean - without.time_seconds.mean),
                ),
                (
                    "tokens".to_owned(),
                    format!("{:+.0}", with.tokens.mean - without.tokens.mean),
                ),
            ])),
            _ => None,
        };
        TaskReport {
            runs,
            summary,
            delta,
        }
    }

    /// The mean pass rate with the skill.
    #[must_use]
    pub fn pass_rate(&self) -> Option<f64> {
        self.summary
            .get(WITH_SKILL)
            .map(|summary| summary.pass_rate.mean)
    }
}

/// One proposed description and how it did on the held-out queries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateDescription {
    /// The text.
    pub description: String,
    /// Accuracy on the held-out queries (mean over repeats).
    pub holdout_accuracy: Option<f64>,
    /// Recall there.
    pub holdout_recall: Option<f64>,
    /// Why it was not scored (the model's proposal was unusable), if so.
    pub rejected: Option<String>,
}

/// What description tuning found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DescriptionReport {
    /// The description now.
    pub original: String,
    /// Queries the proposals were based on.
    pub train_queries: Vec<String>,
    /// Queries the descriptions were judged on (never shown to the proposer).
    pub holdout_queries: Vec<String>,
    /// The current description's held-out accuracy.
    pub original_holdout_accuracy: Option<f64>,
    /// Each proposal.
    pub candidates: Vec<CandidateDescription>,
    /// The best description, when it beats the current one on the held-out queries.
    pub best: Option<String>,
    /// Whether it was written into the skill (`--write`).
    pub written: bool,
    /// The change as a diff, when there is a better description.
    pub diff: Option<String>,
}

/// Everything about one skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillEvalReport {
    /// The skill's name.
    pub name: String,
    /// Its folder.
    pub path: PathBuf,
    /// Trigger evals, when it has them and they ran.
    pub triggers: Option<TriggerReport>,
    /// Task evals, when it has them and they ran.
    pub tasks: Option<TaskReport>,
    /// Description tuning, when asked for.
    pub description: Option<DescriptionReport>,
}

/// The model an eval ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// Wire format.
    pub format: String,
    /// The model's name.
    pub model: String,
    /// The server (without credentials).
    pub endpoint: String,
    /// The judge's model name.
    pub judge: String,
}

/// A whole eval run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// The run's id (its folder's name).
    pub id: String,
    /// When it started (RFC 3339).
    pub started: String,
    /// The model.
    pub model: ModelInfo,
    /// Repeats per query and task.
    pub repeat: u32,
    /// Each skill.
    pub skills: Vec<SkillEvalReport>,
    /// Wall time of the whole run.
    pub duration_ms: u64,
    /// What the response cache saved.
    pub cache: CacheUse,
}

impl EvalReport {
    /// Write `report.json` and each skill's `benchmark.json` into `folder`.
    ///
    /// # Errors
    /// When a file cannot be written.
    pub fn write(&self, folder: &Path) -> Result<(), crate::error::EvalError> {
        write_json(&folder.join(REPORT_FILE), self)?;
        for skill in &self.skills {
            if let Some(tasks) = &skill.tasks {
                let benchmark = benchmark(self, skill, tasks);
                write_json(&folder.join(&skill.name).join(BENCHMARK_FILE), &benchmark)?;
            }
        }
        Ok(())
    }

    /// The report as JUnit XML: a suite per skill, a case per trigger query and per task run.
    ///
    /// # Errors
    /// When the XML cannot be serialized.
    pub fn junit(&self) -> Result<String, String> {
        use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
        let mut report = Report::new(format!("skillbox eval {}", self.id));
        for skill in &self.skills {
            let mut suite = TestSuite::new(skill.name.clone());
            if let Some(triggers) = &skill.triggers {
                for query in &triggers.queries {
                    let name = format!(
                        "trigger ({}): {}",
                        if query.should_trigger {
                            "should"
                        } else {
                            "should not"
                        },
                        query.query
                    );
                    let status = if query.misfire {
                        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                        status.set_message(format!(
                            "triggered in {:.0}% of {} runs; named: {}",
                            query.trigger_rate * 100.0,
                            query.runs.len(),
                            named_skills(&query.runs)
                        ));
                        status
                    } else {
                        TestCaseStatus::success()
                    };
                    suite.add_test_case(TestCase::new(name, status));
                }
            }
            if let Some(tasks) = &skill.tasks {
                for run in &tasks.runs {
                    let name = format!(
                        "task {} [{}] #{}",
                        run.eval_name, run.configuration, run.run_number
                    );
                    let failed: Vec<String> = run
                        .expectations
                        .iter()
                        .filter(|graded| !graded.passed)
                        .map(|graded| format!("{}: {}", graded.text, graded.evidence))
                        .collect();
                    // Runs without the skill are the baseline: reported, never failed.
                    let status = if failed.is_empty() || run.configuration == WITHOUT_SKILL {
                        TestCaseStatus::success()
                    } else {
                        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                        status.set_message(failed.join("; "));
                        status
                    };
                    let mut case = TestCase::new(name, status);
                    case.set_time(std::time::Duration::from_millis(run.run.duration_ms));
                    suite.add_test_case(case);
                }
            }
            report.add_test_suite(suite);
        }
        report.to_string().map_err(|error| error.to_string())
    }
}

/// The skills named by `runs`, for messages.
#[must_use]
pub fn named_skills(runs: &[TriggerRun]) -> String {
    let named: Vec<String> = runs
        .iter()
        .map(|run| match (&run.triggered, &run.error) {
            (Some(skill), _) => skill.clone(),
            (None, Some(_)) => "error".to_owned(),
            (None, None) => "none".to_owned(),
        })
        .collect();
    named.join(", ")
}

/// skill-creator's `benchmark.json` for one skill.
fn benchmark(
    report: &EvalReport,
    skill: &SkillEvalReport,
    tasks: &TaskReport,
) -> serde_json::Value {
    use serde_json::json;
    let mut evals: Vec<serde_json::Value> = Vec::new();
    for run in &tasks.runs {
        if !evals.contains(&run.eval_id) {
            evals.push(run.eval_id.clone());
        }
    }
    let runs: Vec<serde_json::Value> = tasks
        .runs
        .iter()
        .map(|run| {
            json!({
                "eval_id": run.eval_id,
                "eval_name": run.eval_name,
                "configuration": run.configuration,
                "run_number": run.run_number,
                "result": run.result,
                "expectations": run.expectations.iter().map(|graded| json!({
                    "text": graded.text, "passed": graded.passed, "evidence": graded.evidence,
                })).collect::<Vec<_>>(),
                "notes": run.run.error.iter().cloned().collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut run_summary = serde_json::Map::new();
    for (configuration, summary) in &tasks.summary {
        run_summary.insert(configuration.clone(), json!(summary));
    }
    if let Some(delta) = &tasks.delta {
        run_summary.insert("delta".to_owned(), json!(delta));
    }
    let judged = tasks
        .runs
        .iter()
        .flat_map(|run| &run.expectations)
        .filter(|graded| graded.graded_by.starts_with("judge:"))
        .count();
    let mut notes = Vec::new();
    if judged > 0 {
        notes.push(format!(
            "{judged} expectation gradings were made by the judge model `{}`; the rest by checks that need no model",
            report.model.judge
        ));
    }
    json!({
        "metadata": {
            "skill_name": skill.name,
            "skill_path": skill.path,
            "executor_model": report.model.model,
            "analyzer_model": report.model.judge,
            "timestamp": report.started,
            "evals_run": evals,
            "runs_per_configuration": report.repeat,
        },
        "runs": runs,
        "run_summary": run_summary,
        "notes": notes,
    })
}

/// Write `value` as pretty JSON to `path`, through a temporary file beside it.
///
/// # Errors
/// When the folder or the file cannot be written.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<(), crate::error::EvalError> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|error| crate::error::EvalError::io(path, std::io::Error::other(error)))?;
    bytes.push(b'\n');
    write_atomically(path, &bytes)
}

/// Write `bytes` to `path` whole ([`skillbox_trust::safe_write::write_file_atomically`]): a
/// reader never sees half a file, and a link at `path` is replaced, never written through.
///
/// # Errors
/// When the folder or the file cannot be written.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), crate::error::EvalError> {
    skillbox_trust::safe_write::write_file_atomically(
        path,
        bytes,
        skillbox_trust::safe_write::WriteOptions::SHARED,
    )
    .map_err(|error| crate::error::EvalError::io(path, error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::TriggerQuery;

    fn run(triggered: Option<&str>) -> TriggerRun {
        TriggerRun {
            triggered: triggered.map(str::to_owned),
            calls: Vec::new(),
            error: None,
            rounds: 1,
            duration_ms: 1,
            transcript: None,
        }
    }

    #[test]
    fn trigger_figures_count_only_this_skill() {
        let query = |text: &str, should: bool| TriggerQuery {
            query: text.to_owned(),
            should_trigger: should,
        };
        let report = TriggerReport::new(
            "pdf",
            vec![
                (
                    query("fill this pdf form", true),
                    vec![run(Some("pdf")), run(Some("pdf"))],
                ),
                (
                    query("merge two pdfs", true),
                    vec![run(None), run(Some("pdf"))],
                ),
                // A neighbour triggering on a should-not query is no false positive here.
                (
                    query("resize an image", false),
                    vec![run(Some("image")), run(None)],
                ),
                (
                    query("what is a pdf", false),
                    vec![run(Some("pdf")), run(None)],
                ),
            ],
        );
        assert_eq!(
            report.confusion,
            Confusion {
                true_positive: 3,
                false_positive: 1,
                true_negative: 3,
                false_negative: 1
            }
        );
        let recall = report.recall.unwrap();
        assert!((recall.mean - 0.75).abs() < 1e-9, "{recall:?}");
        assert!((recall.min - 0.5).abs() < 1e-9 && (recall.max - 1.0).abs() < 1e-9);
        let misfires: Vec<&str> = report
            .queries
            .iter()
            .filter(|query| query.misfire)
            .map(|query| query.query.as_str())
            .collect();
        assert_eq!(misfires, ["merge two pdfs"]);
    }

    #[test]
    fn a_skill_that_never_triggers_has_no_precision_and_zero_recall() {
        let report = TriggerReport::new(
            "pdf",
            vec![(
                TriggerQuery {
                    query: "q".to_owned(),
                    should_trigger: true,
                },
                vec![run(None)],
            )],
        );
        assert!(report.precision.is_none());
        assert_eq!(report.recall.unwrap().mean, 0.0);
    }
}
