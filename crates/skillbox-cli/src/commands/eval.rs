//! `skillbox eval`: trigger evals, task evals and description tuning of skills on a model,
//! through skillbox-eval; prints a summary table (or the report as JSON), writes the report
//! folder and JUnit XML, and exits 1 when a threshold is missed (for CI).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot, ValidationMode};
use skillbox_eval::{
    EvalPlan, EvalReport, EvalRunner, EvalTarget, ImprovePlan, ModelSetup, Progress,
    ProviderFactory, ResponseCache, SkillEvals,
};
use skillbox_tools::{ProviderOptions, SkillsProvider};

use crate::arguments::{EvalArguments, GlobalOptions};
use crate::output::eval_report;
use crate::setup;

/// The catalogs and executors of eval runs, built from the command line's options as `ask`
/// builds its own: the same sandbox, secrets, trust and prompt budget.
struct CommandLineProviders {
    executor: skillbox_exec::ExecutorConfig,
    options: ProviderOptions,
}

impl ProviderFactory for CommandLineProviders {
    fn provider(
        &self,
        options: &CatalogOptions,
        workdir: Option<&Path>,
    ) -> Result<SkillsProvider, String> {
        let catalog = SkillCatalog::load(options).map_err(|error| error.to_string())?;
        let config = skillbox_exec::ExecutorConfig {
            trust: setup::trust_gate(&options.roots),
            working_directory: workdir.map(Path::to_path_buf),
            ..self.executor.clone()
        };
        let executor = skillbox_exec::Executor::new(config).map_err(|error| error.to_string())?;
        Ok(SkillsProvider::new(
            Arc::new(catalog),
            Arc::new(executor),
            self.options.clone(),
        ))
    }
}

/// A skill folder's skills, or the skills of the roots named `name`.
fn resolve_targets(
    global: &GlobalOptions,
    arguments: &EvalArguments,
) -> anyhow::Result<Vec<EvalTarget>> {
    // Each skill, and whether the person named its folder (a root of its own, trusted as every
    // named root is) or its name (offered from the roots it was found under, their trust kept).
    let mut skills: Vec<(Arc<skillbox_core::Skill>, bool)> = Vec::new();
    let mut named = Vec::new();

    // A bare word that is both a folder here and a skill under the roots is refused: taking the
    // folder would trust it (a path is a root the person named), and a repository can hold a
    // folder named like the skill the person meant.
    let bare_folders: Vec<&String> = arguments
        .targets
        .iter()
        .filter(|target| !target.contains('/') && Path::new(target).exists())
        .collect();
    // The roots' catalog, loaded once, when a bare word, a name or no target at all needs it.
    let needs_roots = arguments.targets.is_empty()
        || !bare_folders.is_empty()
        || arguments
            .targets
            .iter()
            .any(|target| !Path::new(target).exists());
    let roots_catalog = if needs_roots {
        Some(setup::Setup::new(global, &[])?.catalog()?)
    } else {
        None
    };
    if let Some(catalog) = &roots_catalog
        && let Some(both) = bare_folders
            .iter()
            .find(|target| catalog.get(target).is_some())
    {
        bail!(
            "`{both}` is both a folder here and a skill under the roots; write `./{both}` for the folder, or run from elsewhere for the skill"
        );
    }
    for target in &arguments.targets {
        let path = Path::new(target);
        if path.exists() {
            let catalog = SkillCatalog::load(&CatalogOptions {
                roots: vec![SkillRoot::explicit(path)],
                mode: ValidationMode::Lenient,
                ..CatalogOptions::default()
            })
            .with_context(|| format!("`{target}`"))?;
            for skipped in catalog.skipped() {
                crate::output::eprint_diagnostics(&skipped.diagnostics);
            }
            if catalog.is_empty() {
                bail!("`{target}` holds no skill (a folder with SKILL.md, or a folder of them)");
            }
            skills.extend(
                catalog
                    .skills()
                    .iter()
                    .map(|skill| (Arc::clone(skill), true)),
            );
        } else {
            named.push(target.clone());
        }
    }
    if let Some(catalog) = &roots_catalog {
        for name in &named {
            match catalog.get(name) {
                Some(skill) => skills.push((Arc::clone(skill), false)),
                None => {
                    let hint = catalog
                        .closest_name(name)
                        .map(|close| format!(" (did you mean `{close}`?)"))
                        .unwrap_or_default();
                    bail!(
                        "`{name}` is neither a folder nor a skill under the roots{hint}; give a skill folder, or --root DIR"
                    );
                }
            }
        }
        if arguments.targets.is_empty() {
            skills.extend(
                catalog
                    .latest()
                    .filter(|skill| {
                        skill
                            .directory
                            .join(skillbox_eval::suite::EVALS_FOLDER)
                            .is_dir()
                    })
                    .map(|skill| (Arc::clone(skill), false)),
            );
            if skills.is_empty() {
                bail!(
                    "no skill under the roots has an `evals/` folder; name a skill folder, or make one with `skillbox new`"
                );
            }
        }
    }
    let mut targets: Vec<EvalTarget> = Vec::new();
    for (skill, own_root) in skills {
        if targets.iter().any(|target| target.name == skill.name()) {
            continue;
        }
        if skill.is_archived() {
            bail!(
                "skill `{}` is in an archive ({}); evaluate its folder (unpack it, or `skillbox add` it)",
                skill.name(),
                skill.directory.display()
            );
        }
        let evals = SkillEvals::read(&skill.directory)?;
        let body = skill
            .body()
            .map(|body| body.text.to_string())
            .unwrap_or_default();
        targets.push(EvalTarget {
            name: skill.name().to_owned(),
            directory: skill.directory.clone(),
            skill_md: skill.skill_md_name.clone(),
            description: skill.description.clone(),
            description_in_manifest: skill
                .manifest
                .as_ref()
                .is_some_and(|manifest| !manifest.description.is_empty()),
            body,
            evals,
            own_root,
        });
    }
    Ok(targets)
}

/// The neighbours offered beside the skills: `--distractors`, and `--root` (or, without it,
/// the default roots `ask` would offer).
fn neighbour_roots(
    global: &GlobalOptions,
    arguments: &EvalArguments,
) -> anyhow::Result<Vec<SkillRoot>> {
    let mut roots: Vec<SkillRoot> = if global.roots.is_empty() {
        let working_directory =
            std::env::current_dir().context("cannot read the working directory")?;
        SkillRoot::from_environment_or_defaults(&working_directory)
    } else {
        global.roots.iter().map(SkillRoot::explicit).collect()
    };
    for folder in &arguments.distractors {
        if !folder.is_dir() {
            bail!(
                "--distractors {}: not a folder; give a folder of skills",
                folder.display()
            );
        }
        roots.push(SkillRoot::explicit(folder));
    }
    Ok(roots)
}

/// Where the report goes: `--output`, else a new folder under the data folder's `evals/`.
fn output_folder(arguments: &EvalArguments) -> anyhow::Result<PathBuf> {
    if let Some(folder) = &arguments.output {
        return Ok(folder.clone());
    }
    let data = match &arguments.data_dir {
        Some(folder) => folder.clone(),
        None => dirs::data_dir()
            .context("no user data folder is known here; pass --output or --data-dir")?
            .join("skillbox"),
    };
    let stamp = jiff::Timestamp::now().strftime("%Y%m%d-%H%M%S").to_string();
    let suffix = &uuid::Uuid::new_v4().simple().to_string()[..6];
    Ok(data.join("evals").join(format!("{stamp}-{suffix}")))
}

fn check_fraction(name: &str, value: Option<f64>) -> anyhow::Result<()> {
    if let Some(value) = value
        && !(0.0..=1.0).contains(&value)
    {
        bail!("{name}: {value} is not between 0 and 1");
    }
    Ok(())
}

/// Most runs of each query and task (`--repeat`).
const MAX_REPEAT: u32 = 100;
/// Most runs at once (`--jobs`).
const MAX_JOBS: usize = 64;
/// Most description rewrites proposed (`--candidates`).
const MAX_CANDIDATES: u32 = 20;

/// `skillbox eval`.
pub fn run(global: &GlobalOptions, arguments: &EvalArguments) -> anyhow::Result<ExitCode> {
    if arguments.repeat == 0 {
        bail!("--repeat: give at least 1");
    }
    if arguments.repeat > MAX_REPEAT {
        bail!(
            "--repeat: at most {MAX_REPEAT} (every task run's folder is made before the first runs)"
        );
    }
    if arguments.run_timeout == 0 {
        bail!("--run-timeout: give at least 1 second");
    }
    if arguments.jobs == 0 {
        bail!("--jobs: give at least 1");
    }
    if arguments.jobs > MAX_JOBS {
        bail!("--jobs: at most {MAX_JOBS} (each may run a sandboxed process)");
    }
    if arguments.improve_description && arguments.candidates == 0 {
        bail!("--candidates: give at least 1");
    }
    if arguments.candidates > MAX_CANDIDATES {
        bail!("--candidates: at most {MAX_CANDIDATES}");
    }
    check_fraction("--min-recall", arguments.min_recall)?;
    check_fraction("--min-precision", arguments.min_precision)?;
    check_fraction("--min-pass-rate", arguments.min_pass_rate)?;
    let targets = resolve_targets(global, arguments)?;
    let run_triggers = !arguments.tasks_only;
    let run_tasks = !arguments.triggers_only && !arguments.improve_description;
    let has_work = targets.iter().any(|target| {
        (run_triggers && target.evals.triggers.is_some())
            || (run_tasks && target.evals.tasks.is_some())
    });
    if !has_work {
        let names: Vec<&str> = targets.iter().map(|target| target.name.as_str()).collect();
        bail!(
            "{} has no {}; write `evals/triggers.json` or `evals/evals.json` (`skillbox new` makes both to fill in)",
            names.join(", "),
            match (run_triggers, run_tasks) {
                (true, false) => "`evals/triggers.json`",
                (false, true) => "`evals/evals.json`",
                _ => "eval files",
            }
        );
    }
    let neighbours = neighbour_roots(global, arguments)?;
    let (settings, options, approval, client) = setup::model::eval_setup(&arguments.model)?;
    let cache_folder = skillbox_trust::store::cache_folder()
        .context("no cache folder is known; set SKILLBOX_CACHE_DIR")?
        .join(skillbox_eval::cache::RESPONSE_CACHE_FOLDER);
    let cache = ResponseCache::new(cache_folder, !arguments.no_cache);
    let output = output_folder(arguments)?;
    let endpoint = skillbox_agent::shown_url(&settings.base_url);
    let model = ModelSetup {
        client: Arc::new(client),
        endpoint,
        judge_model: arguments
            .judge_model
            .clone()
            .unwrap_or_else(|| options.model.clone()),
        options,
    };
    let factory = Arc::new(CommandLineProviders {
        executor: setup::executor::executor_config(&global.execution)?,
        options: setup::provider::model_provider_options(global),
    });
    let bar = eval_report::progress_bar();
    let reporter = bar.clone();
    let progress: Arc<dyn Fn(Progress) + Send + Sync> = Arc::new(move |event| {
        eval_report::show_progress(reporter.as_ref(), &event);
    });
    let runner = EvalRunner::new(model, cache, factory, progress);
    let plan = EvalPlan {
        targets,
        neighbours,
        repeat: arguments.repeat,
        jobs: arguments.jobs,
        baseline: arguments.baseline,
        triggers: run_triggers,
        tasks: run_tasks,
        improve: arguments.improve_description.then_some(ImprovePlan {
            candidates: arguments.candidates,
            write: arguments.write,
        }),
        task_approval: Arc::new(
            approval
                .policy()
                .unwrap_or(skillbox_tools::ApprovalPolicy::Deny),
        ),
        output: output.clone(),
        run_timeout: std::time::Duration::from_secs(arguments.run_timeout),
    };
    let runtime = setup::runtime()?;
    let report: EvalReport = runtime.block_on(runner.run(&plan))?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    if let Some(path) = &arguments.junit {
        let xml = report.junit().map_err(anyhow::Error::msg)?;
        skillbox_eval::report::write_atomically(path, xml.as_bytes())
            .with_context(|| "--junit".to_owned())?;
    }
    let missed = eval_report::missed_thresholds(
        &report,
        arguments.min_recall,
        arguments.min_precision,
        arguments.min_pass_rate,
    );
    if arguments.json {
        eval_report::print_json(&report)?;
    } else {
        eval_report::print_summary(&report, &output)?;
    }
    for line in &missed {
        eprintln!("error: {line}");
    }
    if let Some(failure) = eval_report::every_run_failed(&report) {
        eprintln!(
            "error: every run failed, so the figures say nothing about the skills; the first failure: {failure}"
        );
        return Ok(ExitCode::from(crate::EXIT_USAGE));
    }
    Ok(if missed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::EXIT_PROBLEMS)
    })
}
