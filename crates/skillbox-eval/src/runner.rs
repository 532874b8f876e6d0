//! An eval run: every trigger query and task of every skill, repeated, within `jobs` requests
//! at once, through the agent loop `ask` uses, with each response cached; then the report.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt;
use skillbox_agent::{
    Agent, AgentOptions, Conversation, ModelClient, ProviderSource, TranscriptStore,
};
use skillbox_core::{CatalogOptions, SkillRoot, ValidationMode};
use skillbox_tools::{Approval, ApprovalPolicy, SkillsProvider};

use crate::cache::{CachedModel, ResponseCache};
use crate::error::EvalError;
use crate::grade::{Judge, grade};
use crate::improve::{
    QuerySplit, TrainOutcome, description_diff, propose_description, split_queries,
    write_description,
};
use crate::report::{
    CandidateDescription, DescriptionReport, EvalReport, ModelInfo, SkillEvalReport, TaskReport,
    TaskRunReport, TriggerReport, WITH_SKILL, WITHOUT_SKILL,
};
use crate::suite::{SkillEvals, TaskEval, TriggerQuery};
use crate::task::{private_runs_folder, run_task, stage_files, task_prompt};
use crate::trigger::{TRIGGER_MAX_ROUNDS, TriggerProbe, TriggerRun, run_trigger_query};

/// Builds the tool provider a run offers: the catalog `options` describe, and an executor that
/// runs scripts in `workdir` (a fresh workspace per run when `None`). The command line builds
/// it from its own options (sandbox, secrets, trust), so an eval runs code exactly as `ask`.
pub trait ProviderFactory: Send + Sync {
    /// The provider.
    ///
    /// # Errors
    /// A message naming what could not be set up.
    fn provider(
        &self,
        options: &CatalogOptions,
        workdir: Option<&Path>,
    ) -> Result<SkillsProvider, String>;
}

/// A skill to evaluate.
#[derive(Debug, Clone)]
pub struct EvalTarget {
    /// Its name.
    pub name: String,
    /// Its folder.
    pub directory: PathBuf,
    /// Its `SKILL.md` file's name.
    pub skill_md: String,
    /// Its description now.
    pub description: String,
    /// Whether `skill.toml` holds the description (else `SKILL.md`'s frontmatter).
    pub description_in_manifest: bool,
    /// Its instructions (shown to the description proposer).
    pub body: String,
    /// Its eval files.
    pub evals: SkillEvals,
    /// Whether it is offered from its own folder as a root the person named (a path given to
    /// `skillbox eval`, trusted like every named root). A skill found by name under the
    /// neighbours' roots is offered from there, keeping that root's trust: naming a project's
    /// skill does not make its code trusted.
    pub own_root: bool,
}

/// The model evaluated on, and the judge.
#[derive(Clone)]
pub struct ModelSetup {
    /// The client (wrapped in the cache per sample).
    pub client: Arc<dyn ModelClient>,
    /// The server, as shown (no credentials): part of every cache key.
    pub endpoint: String,
    /// The agent's options (model, prompt, rounds, tokens, temperature).
    pub options: AgentOptions,
    /// The judge's model name (same server).
    pub judge_model: String,
}

impl std::fmt::Debug for ModelSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSetup")
            .field("endpoint", &self.endpoint)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Description tuning's settings.
#[derive(Debug, Clone, Copy)]
pub struct ImprovePlan {
    /// Rewrites to propose.
    pub candidates: u32,
    /// Write the best into the skill.
    pub write: bool,
}

/// What to run.
#[derive(Clone)]
pub struct EvalPlan {
    /// The skills.
    pub targets: Vec<EvalTarget>,
    /// Roots offered beside them.
    pub neighbours: Vec<SkillRoot>,
    /// Runs per query and task.
    pub repeat: u32,
    /// Runs at once.
    pub jobs: usize,
    /// Also run tasks without the skill.
    pub baseline: bool,
    /// Run trigger evals.
    pub triggers: bool,
    /// Run task evals.
    pub tasks: bool,
    /// Tune descriptions.
    pub improve: Option<ImprovePlan>,
    /// Approval for code in task runs (trigger runs never run code).
    pub task_approval: Arc<dyn Approval>,
    /// Where the report, transcripts and run folders go.
    pub output: PathBuf,
    /// The longest one query or task may take.
    pub run_timeout: std::time::Duration,
}

impl std::fmt::Debug for EvalPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalPlan")
            .field("targets", &self.targets.len())
            .field("repeat", &self.repeat)
            .field("output", &self.output)
            .finish_non_exhaustive()
    }
}

/// What a run reports as it goes.
#[derive(Debug, Clone)]
pub enum Progress {
    /// This many steps are planned.
    Planned(u64),
    /// One step finished.
    Step(String),
    /// A stage began.
    Stage(String),
}

/// Runs [`EvalPlan`]s.
#[derive(Clone)]
pub struct EvalRunner {
    model: ModelSetup,
    cache: ResponseCache,
    factory: Arc<dyn ProviderFactory>,
    progress: Arc<dyn Fn(Progress) + Send + Sync>,
}

impl std::fmt::Debug for EvalRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalRunner")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

/// One trigger query to run: which skill's, and the query.
struct QueryUnit<'a> {
    target: usize,
    query: &'a TriggerQuery,
}

impl EvalRunner {
    /// A runner asking `model` (responses kept in `cache`), building providers with `factory`
    /// and reporting progress to `progress`.
    #[must_use]
    pub fn new(
        model: ModelSetup,
        cache: ResponseCache,
        factory: Arc<dyn ProviderFactory>,
        progress: Arc<dyn Fn(Progress) + Send + Sync>,
    ) -> Self {
        EvalRunner {
            model,
            cache,
            factory,
            progress,
        }
    }

    fn catalog_options(&self, plan: &EvalPlan, replaced: Option<(usize, &Path)>) -> CatalogOptions {
        let mut roots = plan.neighbours.clone();
        for (index, target) in plan.targets.iter().enumerate() {
            match replaced {
                // A description variant: only trigger runs see it, and they run no code.
                Some((at, folder)) if at == index => roots.push(SkillRoot::explicit(folder)),
                _ if target.own_root => roots.push(SkillRoot::explicit(&target.directory)),
                _ => {}
            }
        }
        CatalogOptions {
            roots,
            mode: ValidationMode::Lenient,
            ..CatalogOptions::default()
        }
    }

    fn provider(
        &self,
        options: &CatalogOptions,
        workdir: Option<&Path>,
    ) -> Result<Arc<SkillsProvider>, EvalError> {
        self.factory
            .provider(options, workdir)
            .map(Arc::new)
            .map_err(EvalError::Setup)
    }

    fn client(&self, sample: u32) -> Arc<dyn ModelClient> {
        Arc::new(CachedModel::new(
            Arc::clone(&self.model.client),
            self.model.endpoint.clone(),
            self.cache.clone(),
            sample,
        ))
    }

    fn conversation(&self, agent: &Agent, transcripts: &TranscriptStore) -> Conversation {
        match transcripts.begin(
            self.model.client.format(),
            &self.model.options.model,
            &self.model.endpoint,
        ) {
            Ok(transcript) => agent.conversation(Some(transcript)),
            Err(error) => {
                tracing::warn!(%error, "an eval run's transcript cannot be kept");
                agent.conversation(None)
            }
        }
    }

    /// Run `plan` and write its report into `plan.output`.
    ///
    /// # Errors
    /// [`EvalError`] when the plan cannot start (description tuning without enough queries,
    /// a provider that cannot be built, an output folder that cannot be written). Model
    /// failures during runs are results, not errors.
    pub async fn run(&self, plan: &EvalPlan) -> Result<EvalReport, EvalError> {
        let started = Instant::now();
        let started_at = jiff::Timestamp::now().to_string();
        let splits = self.check_plan(plan)?;
        fs_err::create_dir_all(&plan.output).map_err(|error| EvalError::io(&plan.output, error))?;
        let transcripts = TranscriptStore::new(plan.output.join("transcripts"));
        (self.progress)(Progress::Planned(planned_steps(plan, &splits)));

        let mut skills: Vec<SkillEvalReport> = plan
            .targets
            .iter()
            .map(|target| SkillEvalReport {
                name: target.name.clone(),
                path: target.directory.clone(),
                triggers: None,
                tasks: None,
                description: None,
            })
            .collect();

        if plan.triggers {
            (self.progress)(Progress::Stage("trigger evals".to_owned()));
            let provider = self.provider(&self.catalog_options(plan, None), None)?;
            let units: Vec<QueryUnit<'_>> = plan
                .targets
                .iter()
                .enumerate()
                .flat_map(|(target, skill)| {
                    skill
                        .evals
                        .triggers
                        .iter()
                        .flatten()
                        .map(move |query| QueryUnit { target, query })
                })
                .collect();
            let runs = self
                .trigger_runs(&provider, &units, plan, &transcripts)
                .await;
            for (index, target) in plan.targets.iter().enumerate() {
                let queries: Vec<(TriggerQuery, Vec<TriggerRun>)> = units
                    .iter()
                    .zip(&runs)
                    .filter(|(unit, _)| unit.target == index)
                    .map(|(unit, runs)| (unit.query.clone(), runs.clone()))
                    .collect();
                if !queries.is_empty() {
                    skills[index].triggers = Some(TriggerReport::new(&target.name, queries));
                }
            }
        }

        if plan.tasks {
            for (index, target) in plan.targets.iter().enumerate() {
                let Some(suite) = &target.evals.tasks else {
                    continue;
                };
                (self.progress)(Progress::Stage(format!("task evals of {}", target.name)));
                let runs = self
                    .task_runs(plan, index, &suite.evals, &transcripts)
                    .await?;
                skills[index].tasks = Some(TaskReport::new(runs));
            }
        }

        if let Some(improve) = plan.improve {
            for (index, target) in plan.targets.iter().enumerate() {
                let (Some(split), Some(triggers)) = (&splits[index], &skills[index].triggers)
                else {
                    continue;
                };
                (self.progress)(Progress::Stage(format!(
                    "description tuning of {}",
                    target.name
                )));
                let report = self
                    .improve_description(plan, index, split, triggers, improve, &transcripts)
                    .await?;
                skills[index].description = Some(report);
            }
        }

        let report = EvalReport {
            id: plan
                .output
                .file_name()
                .map_or_else(String::new, |name| name.to_string_lossy().into_owned()),
            started: started_at,
            model: ModelInfo {
                format: self.model.client.format().name().to_owned(),
                model: self.model.options.model.clone(),
                endpoint: self.model.endpoint.clone(),
                judge: self.model.judge_model.clone(),
            },
            repeat: plan.repeat,
            skills,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            cache: self.cache.usage(),
        };
        report.write(&plan.output)?;
        Ok(report)
    }

    /// Everything that can be wrong before a model is asked; the query splits of description
    /// tuning (one per target, `None` when it does not apply).
    fn check_plan(&self, plan: &EvalPlan) -> Result<Vec<Option<QuerySplit>>, EvalError> {
        // A skill's name names its folders of runs and its `benchmark.json`: a name that is a
        // path (`../..`, `/home/...`) would put them, world-writable run folders among them,
        // wherever its author chose. The catalog lists such a skill but never offers it.
        for target in &plan.targets {
            if let Some(reason) = skillbox_core::names::unsafe_name_reason(&target.name) {
                return Err(EvalError::Skill {
                    skill: target.name.clone(),
                    message: format!(
                        "the name cannot name a folder of runs ({reason}); fix it (`skillbox validate` shows the rules) and evaluate again"
                    ),
                });
            }
        }
        plan.targets
            .iter()
            .map(|target| match (plan.improve, &target.evals.triggers) {
                (Some(_), Some(queries)) => split_queries(queries)
                    .map(Some)
                    .map_err(|message| EvalError::Skill {
                        skill: target.name.clone(),
                        message,
                    }),
                (Some(_), None) => Err(EvalError::Skill {
                    skill: target.name.clone(),
                    message: "description tuning needs trigger queries; write `evals/triggers.json` (`skillbox new` makes one to fill in)".to_owned(),
                }),
                (None, _) => Ok(None),
            })
            .collect()
    }

    /// Each unit's runs, one per repeat, in the units' order.
    async fn trigger_runs(
        &self,
        provider: &Arc<SkillsProvider>,
        units: &[QueryUnit<'_>],
        plan: &EvalPlan,
        transcripts: &TranscriptStore,
    ) -> Vec<Vec<TriggerRun>> {
        let mut options = self.model.options.clone();
        options.max_rounds = options.max_rounds.min(TRIGGER_MAX_ROUNDS);
        let work = units.iter().enumerate().flat_map(|(index, unit)| {
            (0..plan.repeat).map(move |sample| (index, sample, unit.query))
        });
        let finished: Vec<(usize, u32, TriggerRun)> = futures_util::stream::iter(work)
            .map(|(index, sample, query)| {
                let probe = Arc::new(TriggerProbe::new(self.client(sample), Arc::clone(provider)));
                let agent = Agent::new(
                    ProviderSource::Fixed(Arc::clone(provider)),
                    Arc::clone(&probe) as Arc<dyn ModelClient>,
                    options.clone(),
                )
                .with_approval(Arc::new(ApprovalPolicy::Deny));
                let conversation = self.conversation(&agent, transcripts);
                let timeout = plan.run_timeout;
                async move {
                    let run =
                        run_trigger_query(&agent, &probe, conversation, &query.query, timeout)
                            .await;
                    (self.progress)(Progress::Step(format!("trigger: {}", query.query)));
                    (index, sample, run)
                }
            })
            .buffer_unordered(plan.jobs.max(1))
            .collect()
            .await;
        let mut runs: Vec<Vec<Option<TriggerRun>>> =
            vec![vec![None; plan.repeat as usize]; units.len()];
        for (index, sample, run) in finished {
            runs[index][sample as usize] = Some(run);
        }
        runs.into_iter()
            .map(|runs| runs.into_iter().flatten().collect())
            .collect()
    }

    /// Every run of one skill's tasks.
    async fn task_runs(
        &self,
        plan: &EvalPlan,
        target_index: usize,
        evals: &[TaskEval],
        transcripts: &TranscriptStore,
    ) -> Result<Vec<TaskRunReport>, EvalError> {
        let target = &plan.targets[target_index];
        let suite_path = target
            .directory
            .join(crate::suite::EVALS_FOLDER)
            .join(crate::suite::TASKS_FILE);
        let configurations: &[&str] = if plan.baseline {
            &[WITH_SKILL, WITHOUT_SKILL]
        } else {
            &[WITH_SKILL]
        };
        private_runs_folder(&plan.output.join("runs"))?;
        let mut work = Vec::new();
        for (eval, folder) in evals.iter().zip(folder_names(evals)) {
            for &configuration in configurations {
                for sample in 0..plan.repeat {
                    let outputs = plan
                        .output
                        .join("runs")
                        .join(&target.name)
                        .join(&folder)
                        .join(configuration)
                        .join(format!("{}", sample + 1))
                        .join("outputs");
                    stage_files(&target.directory, &eval.files, &outputs, &suite_path)?;
                    let mut options = self.catalog_options(plan, None);
                    if configuration == WITHOUT_SKILL {
                        options.exclude = vec![target.name.clone()];
                    }
                    let provider = self.provider(&options, Some(&outputs))?;
                    // `command` checks run as the skill's code, in its sandbox: without the
                    // skill in the run's catalog they need one that has it, so that both
                    // configurations are graded alike.
                    let grader = if configuration == WITHOUT_SKILL && eval.has_command_checks() {
                        self.provider(&self.catalog_options(plan, None), Some(&outputs))?
                    } else {
                        Arc::clone(&provider)
                    };
                    work.push((eval, configuration, sample, outputs, provider, grader));
                }
            }
        }
        let judge_model = self.model.judge_model.clone();
        let results: Vec<TaskRunReport> = futures_util::stream::iter(work)
            .map(|(eval, configuration, sample, outputs, provider, grader)| {
                let agent = Agent::new(
                    ProviderSource::Fixed(Arc::clone(&provider)),
                    self.client(sample),
                    self.model.options.clone(),
                )
                .with_approval(Arc::clone(&plan.task_approval));
                let conversation = self.conversation(&agent, transcripts);
                let judge = Judge {
                    client: self.client(sample),
                    model: judge_model.clone(),
                };
                async move {
                    let prompt = task_prompt(&eval.prompt, &eval.files);
                    let run =
                        run_task(&agent, conversation, &prompt, &outputs, plan.run_timeout).await;
                    let graded =
                        grade(&eval.expectations, &run, &grader, &target.name, &judge).await;
                    (self.progress)(Progress::Step(format!(
                        "task {} [{configuration}]",
                        eval.label()
                    )));
                    TaskRunReport::new(eval, configuration, sample + 1, run, graded)
                }
            })
            .buffer_unordered(plan.jobs.max(1))
            .collect()
            .await;
        let mut results = results;
        results.sort_by(|a, b| {
            (a.eval_name.as_str(), a.configuration.as_str(), a.run_number).cmp(&(
                b.eval_name.as_str(),
                b.configuration.as_str(),
                b.run_number,
            ))
        });
        Ok(results)
    }

    /// Propose rewrites of one skill's description and judge them on its held-out queries.
    async fn improve_description(
        &self,
        plan: &EvalPlan,
        target_index: usize,
        split: &QuerySplit,
        triggers: &TriggerReport,
        improve: ImprovePlan,
        transcripts: &TranscriptStore,
    ) -> Result<DescriptionReport, EvalError> {
        let target = &plan.targets[target_index];
        let in_split =
            |queries: &[TriggerQuery], text: &str| queries.iter().any(|query| query.query == text);
        let train: Vec<TrainOutcome> = triggers
            .queries
            .iter()
            .filter(|result| in_split(&split.train, &result.query))
            .map(|result| TrainOutcome {
                query: TriggerQuery {
                    query: result.query.clone(),
                    should_trigger: result.should_trigger,
                },
                trigger_rate: result.trigger_rate,
            })
            .collect();
        let holdout_now: Vec<(TriggerQuery, Vec<TriggerRun>)> = triggers
            .queries
            .iter()
            .filter(|result| in_split(&split.holdout, &result.query))
            .map(|result| {
                (
                    TriggerQuery {
                        query: result.query.clone(),
                        should_trigger: result.should_trigger,
                    },
                    result.runs.clone(),
                )
            })
            .collect();
        let original_holdout_accuracy = TriggerReport::new(&target.name, holdout_now)
            .accuracy
            .map(|stat| stat.mean);

        let mut candidates: Vec<CandidateDescription> = Vec::new();
        // Beside the response cache, at a place the description names: the variant's
        // location reaches the model's prompt, so a re-run must find it where it was.
        let variants = self.cache.folder().with_file_name(VARIANTS_FOLDER);
        for sample in 0..improve.candidates {
            let proposal = propose_description(
                self.client(sample).as_ref(),
                &self.model.options.model,
                self.model.options.temperature,
                &target.name,
                &target.description,
                &target.body,
                &train,
                sample,
            )
            .await;
            (self.progress)(Progress::Step(format!("proposal {}", sample + 1)));
            let description = match proposal {
                Ok(description) => description,
                Err(rejected) => {
                    candidates.push(CandidateDescription {
                        description: String::new(),
                        holdout_accuracy: None,
                        holdout_recall: None,
                        rejected: Some(rejected),
                    });
                    continue;
                }
            };
            if description == target.description
                || candidates
                    .iter()
                    .any(|seen| seen.description == description)
            {
                candidates.push(CandidateDescription {
                    description,
                    holdout_accuracy: None,
                    holdout_recall: None,
                    rejected: Some("the same as a description already scored".to_owned()),
                });
                continue;
            }
            let digest = {
                use sha2::{Digest, Sha256};
                let mut hasher = Sha256::new();
                hasher.update(target.directory.to_string_lossy().as_bytes());
                hasher.update([0]);
                hasher.update(description.as_bytes());
                hex::encode(&hasher.finalize()[..12])
            };
            let folder = variants.join(digest).join(
                target
                    .directory
                    .file_name()
                    .unwrap_or(std::ffi::OsStr::new(&target.name)),
            );
            copy_for_variant(&target.directory, &folder)?;
            write_description(
                &folder,
                &target.skill_md,
                target.description_in_manifest,
                &description,
            )?;
            let provider = self.provider(
                &self.catalog_options(plan, Some((target_index, &folder))),
                None,
            )?;
            let units: Vec<QueryUnit<'_>> = split
                .holdout
                .iter()
                .map(|query| QueryUnit {
                    target: target_index,
                    query,
                })
                .collect();
            let runs = self
                .trigger_runs(&provider, &units, plan, transcripts)
                .await;
            let scored = TriggerReport::new(
                &target.name,
                split.holdout.iter().cloned().zip(runs).collect(),
            );
            candidates.push(CandidateDescription {
                description,
                holdout_accuracy: scored.accuracy.map(|stat| stat.mean),
                holdout_recall: scored.recall.map(|stat| stat.mean),
                rejected: None,
            });
        }
        let best = candidates
            .iter()
            .filter(|candidate| candidate.rejected.is_none())
            .filter(|candidate| {
                candidate.holdout_accuracy.unwrap_or(0.0)
                    > original_holdout_accuracy.unwrap_or(0.0) + f64::EPSILON
            })
            .max_by(|a, b| {
                let key = |candidate: &CandidateDescription| {
                    (
                        candidate.holdout_accuracy.unwrap_or(0.0),
                        candidate.holdout_recall.unwrap_or(0.0),
                    )
                };
                key(a)
                    .partial_cmp(&key(b))
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then_with(|| b.description.len().cmp(&a.description.len()))
            })
            .map(|candidate| candidate.description.clone());
        let mut written = false;
        if let Some(best) = &best
            && improve.write
        {
            write_description(
                &target.directory,
                &target.skill_md,
                target.description_in_manifest,
                best,
            )?;
            written = true;
        }
        Ok(DescriptionReport {
            original: target.description.clone(),
            train_queries: split
                .train
                .iter()
                .map(|query| query.query.clone())
                .collect(),
            holdout_queries: split
                .holdout
                .iter()
                .map(|query| query.query.clone())
                .collect(),
            original_holdout_accuracy,
            diff: best
                .as_ref()
                .map(|best| description_diff(&target.description, best)),
            candidates,
            best,
            written,
        })
    }
}

/// The folder, beside the response cache, holding the skill copies description tuning scores.
pub const VARIANTS_FOLDER: &str = "eval-variants";

/// Steps a plan takes, for the progress bar.
fn planned_steps(plan: &EvalPlan, splits: &[Option<QuerySplit>]) -> u64 {
    let repeat = u64::from(plan.repeat);
    let mut steps = 0;
    for (index, target) in plan.targets.iter().enumerate() {
        if plan.triggers {
            steps += target.evals.triggers.as_ref().map_or(0, Vec::len) as u64 * repeat;
        }
        if plan.tasks {
            let configurations = if plan.baseline { 2 } else { 1 };
            steps += target
                .evals
                .tasks
                .as_ref()
                .map_or(0, |suite| suite.evals.len()) as u64
                * configurations
                * repeat;
        }
        if let (Some(improve), Some(split)) = (plan.improve, &splits[index]) {
            let candidates = u64::from(improve.candidates);
            steps += candidates + candidates * split.holdout.len() as u64 * repeat;
        }
    }
    steps
}

/// A folder name for an eval id: its letters and digits, dashes for the rest.
fn folder_name(id: &serde_json::Value) -> String {
    let text = match id {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let cleaned: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    format!("eval-{}", cleaned.trim_matches('-'))
}

/// Each eval's folder name ([`folder_name`]), made unique within the suite: ids that differ
/// only in what the cleaning drops (`a/b`, `a b`; `7`, `"7"`) would share one folder, and one
/// run would find the files another wrote.
fn folder_names(evals: &[TaskEval]) -> Vec<String> {
    let mut taken = std::collections::BTreeSet::new();
    evals
        .iter()
        .map(|eval| {
            let base = folder_name(&eval.id);
            let mut name = base.clone();
            let mut suffix = 2;
            while !taken.insert(name.clone()) {
                name = format!("{base}-{suffix}");
                suffix += 1;
            }
            name
        })
        .collect()
}

/// Copy what the model sees of a skill (`SKILL.md`, `tools.json`, `skill.toml`) into `into`,
/// for a description variant: regular files only, never through a link.
fn copy_for_variant(directory: &Path, into: &Path) -> Result<(), EvalError> {
    // Made anew each time: a file the skill no longer has must not be offered from a copy.
    match fs_err::remove_dir_all(into) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(EvalError::io(into, error)),
    }
    fs_err::create_dir_all(into).map_err(|error| EvalError::io(into, error))?;
    for name in ["SKILL.md", "skill.md", "tools.json", "skill.toml"] {
        let from = directory.join(name);
        match fs_err::symlink_metadata(&from) {
            Ok(metadata) if metadata.file_type().is_file() => {
                fs_err::copy(&from, into.join(name))
                    .map_err(|error| EvalError::io(&from, error))?;
            }
            _ => {}
        }
    }
    Ok(())
}
