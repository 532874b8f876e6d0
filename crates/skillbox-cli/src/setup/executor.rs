//! The executor a command runs skill code with, as the execution options describe it.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Context;
use skillbox_core::{SkillCatalog, SkillRoot};
use skillbox_exec::executor::Secret;
use skillbox_exec::{
    Executor, ExecutorConfig, HelperCommand, SandboxMode, SandboxPolicy, WorkerPoolConfig,
};

use crate::SANDBOX_HELPER_ARGUMENT;
use crate::arguments::{ExecutionOptions, GlobalOptions, SandboxModeArgument};

/// The executor configuration the command-line options describe. The sandbox helper is the
/// small `skillbox-sandbox` binary beside this one when it is there (a release build or an
/// install puts it there: no async runtime, no HTTP, a quarter of the start-up time), else this
/// binary itself through its hidden helper argument.
pub fn executor_config(options: &ExecutionOptions) -> anyhow::Result<ExecutorConfig> {
    let helper = match HelperCommand::beside_current_executable() {
        Some(helper) => helper,
        None => HelperCommand {
            program: std::env::current_exe().context("cannot locate the skillbox executable")?,
            leading_args: vec![SANDBOX_HELPER_ARGUMENT.to_owned()],
        },
    };
    let mut secrets: BTreeMap<String, Secret> = BTreeMap::new();
    for given in &options.secrets {
        let (name, skills) = parse_secret_grant(given)?;
        let Ok(value) = std::env::var(&name) else {
            tracing::warn!(secret = %name, "`--secret {given}` names a variable that is not set");
            continue;
        };
        let secret = secrets.entry(name).or_insert_with(|| Secret {
            value,
            skills: Some(BTreeSet::new()),
        });
        // `--secret NAME` (no skills) grants every declaring skill, whatever else was given.
        match (skills, &mut secret.skills) {
            (None, granted) => *granted = None,
            (Some(skills), Some(granted)) => granted.extend(skills),
            (Some(_), None) => {}
        }
    }
    Ok(ExecutorConfig {
        helper: Some(helper),
        policy: SandboxPolicy {
            mode: match options.sandbox {
                SandboxModeArgument::Required => SandboxMode::Required,
                SandboxModeArgument::BestEffort => SandboxMode::BestEffort,
                SandboxModeArgument::Off => SandboxMode::Off,
            },
            network: options.allow_network,
            network_skills: options.allow_network_for.clone(),
            ..SandboxPolicy::default()
        },
        audit_log: options.audit_log.clone(),
        secrets,
        environment_allowlist: options.pass_env.clone(),
        working_directory: options.workdir.clone(),
        workers: WorkerPoolConfig {
            enabled: !options.no_warm_workers,
            ..WorkerPoolConfig::default()
        },
        ..ExecutorConfig::default()
    })
}

/// What to tell the person about grants given to a name two roots hold (`--secret NAME:skill`,
/// `--allow-network-for skill`): the grant reaches neither copy (see
/// [`skillbox_exec::SkillCopy::Contested`]), and this says which copies and what to do.
pub fn contested_grants(options: &ExecutionOptions, catalog: &SkillCatalog) -> Vec<String> {
    let mut named: Vec<(String, String)> = Vec::new();
    for given in &options.secrets {
        if let Ok((_, Some(skills))) = parse_secret_grant(given) {
            named.extend(
                skills
                    .into_iter()
                    .map(|skill| (skill, format!("--secret {given}"))),
            );
        }
    }
    named.extend(
        options
            .allow_network_for
            .iter()
            .map(|skill| (skill.clone(), format!("--allow-network-for {skill}"))),
    );
    let mut warnings = Vec::new();
    for (name, flag) in named {
        let Some(skill) = catalog.get(&name) else {
            continue;
        };
        let mut folders: Vec<String> = std::iter::once(skill)
            .chain(catalog.contesting_copies(skill))
            // Folder names come from skills and clones: shown escaped, never as raw control text.
            .map(|copy| {
                format!(
                    "`{}`",
                    skillbox_core::printable::printable(&copy.directory.display().to_string())
                )
            })
            .collect();
        if folders.len() < 2 {
            continue;
        }
        folders.dedup();
        warnings.push(format!(
            "`{flag}` reaches no copy of `{name}`: {} roots hold a skill of that name ({}), and a grant by name must not follow whichever copy is in effect; remove or rename all but the copy you mean (`skillbox remove {name}` for one an install put there)",
            folders.len(),
            folders.join(", ")
        ));
    }
    warnings
}

/// `NAME` or `NAME:skill,skill` from `--secret`.
fn parse_secret_grant(given: &str) -> anyhow::Result<(String, Option<Vec<String>>)> {
    let (name, skills) = match given.split_once(':') {
        Some((name, skills)) => {
            let skills: Vec<String> = skills
                .split(',')
                .map(str::trim)
                .filter(|skill| !skill.is_empty())
                .map(str::to_owned)
                .collect();
            if skills.is_empty() {
                anyhow::bail!(
                    "`--secret {given}` names no skill after `:`; write `--secret {name}:SKILL[,SKILL...]`, or `--secret {name}` for every skill that declares it"
                );
            }
            (name, Some(skills))
        }
        None => (given, None),
    };
    if !skillbox_core::properties::is_environment_name(name) {
        anyhow::bail!(
            "`--secret {given}`: `{name}` is not an environment variable name (letters, digits and `_`, not starting with a digit)"
        );
    }
    Ok((name.to_owned(), skills))
}

/// The executor for a command that runs the code of the catalog with these roots: code from
/// project folders runs only once trusted.
pub fn executor(global: &GlobalOptions, roots: &[SkillRoot]) -> anyhow::Result<Executor> {
    executor_in(global, roots, None, None)
}

/// [`executor`] keeping its runtime folder in `runtime_folder` unless `SKILLBOX_RUNTIME_DIR`
/// names one, and running code within `run_timeout` when one is given.
pub fn executor_in(
    global: &GlobalOptions,
    roots: &[SkillRoot],
    runtime_folder: Option<std::path::PathBuf>,
    run_timeout: Option<std::time::Duration>,
) -> anyhow::Result<Executor> {
    let mut config = ExecutorConfig {
        trust: super::trust_gate(roots),
        ..executor_config(&global.execution)?
    };
    if let Some(timeout) = run_timeout {
        config.timeout = timeout;
    }
    if let Some(folder) = runtime_folder
        .filter(|_| skillbox_exec::executor::runtime_directory_from_environment().is_none())
    {
        config.workspace_root = folder;
    }
    let executor = Executor::new(config).map_err(|error| anyhow::anyhow!("{error}"))?;
    executor
        .check_working_directory(roots.iter().map(|root| root.path.as_path()))
        .map_err(|error| anyhow::anyhow!("{error}"))?;
    Ok(executor)
}

/// The settings of the skill servers a command's conversations start, as the execution
/// options give them.
#[must_use]
pub fn server_pool(options: &ExecutionOptions) -> skillbox_tools::ServerPool {
    skillbox_tools::ServerPool::new(skillbox_tools::ServerPoolConfig {
        start_timeout: std::time::Duration::from_secs(options.server_start_timeout),
        idle_timeout: std::time::Duration::from_secs(options.server_idle_timeout),
        max_running: usize::try_from(options.max_servers).unwrap_or(usize::MAX),
        ..skillbox_tools::ServerPoolConfig::default()
    })
}
