//! `skillbox run`, `skillbox call` and `skillbox doctor`: the commands that run skill code,
//! all through one `Executor`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use serde::Serialize;
use serde_json::Value;
use skillbox_core::SkillRoot;
use skillbox_core::printable::{printable, printable_block};
use skillbox_exec::executor::Secret;
use skillbox_exec::interpreter::Reach;
use skillbox_exec::output::StreamKind;
use skillbox_exec::sandbox::SandboxLayers;
use skillbox_exec::{
    Executor, ExecutorConfig, HelperCommand, RunOptions, SandboxMode, SandboxPolicy,
    WorkerPoolConfig,
};

use crate::arguments::{
    CallArguments, DoctorArguments, ExecutionOptions, GlobalOptions, RunArguments,
    SandboxModeArgument,
};
use crate::output::print_json;
use crate::{EXIT_PROBLEMS, EXIT_USAGE, SANDBOX_HELPER_ARGUMENT};

/// The executor configuration the command-line options describe; this binary is its own
/// sandbox helper.
pub fn executor_config(options: &ExecutionOptions) -> anyhow::Result<ExecutorConfig> {
    let program = std::env::current_exe().context("cannot locate the skillbox executable")?;
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
        helper: Some(HelperCommand {
            program,
            leading_args: vec![SANDBOX_HELPER_ARGUMENT.to_owned()],
        }),
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

pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The executor for a command that runs the code of the catalog with these roots: code from
/// project folders runs only once trusted.
pub fn executor(global: &GlobalOptions, roots: &[SkillRoot]) -> anyhow::Result<Executor> {
    executor_in(global, roots, None)
}

/// [`executor`] keeping its runtime folder in `runtime_folder` unless `SKILLBOX_RUNTIME_DIR`
/// names one.
pub fn executor_in(
    global: &GlobalOptions,
    roots: &[SkillRoot],
    runtime_folder: Option<std::path::PathBuf>,
) -> anyhow::Result<Executor> {
    let mut config = ExecutorConfig {
        trust: super::trust_gate(roots),
        ..executor_config(&global.execution)?
    };
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

/// `skillbox run`.
pub fn run(global: &GlobalOptions, arguments: &RunArguments) -> anyhow::Result<ExitCode> {
    let catalog = super::default_catalog(global)?;
    let executor = executor(global, catalog.roots())?;
    let runtime = runtime()?;
    let timeout = arguments.timeout_ms.map(Duration::from_millis);
    if arguments.json {
        let result = runtime.block_on(executor.run(
            &catalog,
            &arguments.skill,
            &arguments.script,
            &arguments.args,
            RunOptions {
                timeout,
                live_output: None,
            },
        ));
        print_json(&result)?;
        return Ok(if result.success {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(EXIT_PROBLEMS)
        });
    }
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<(StreamKind, Vec<u8>)>();
    let result = runtime.block_on(async {
        let printer = tokio::spawn(async move {
            while let Some((kind, chunk)) = receiver.recv().await {
                let written = match kind {
                    StreamKind::Stdout => std::io::stdout()
                        .lock()
                        .write_all(&chunk)
                        .and_then(|()| std::io::stdout().flush()),
                    StreamKind::Stderr => std::io::stderr().lock().write_all(&chunk),
                };
                if written.is_err() {
                    break;
                }
            }
        });
        let result = executor
            .run(
                &catalog,
                &arguments.skill,
                &arguments.script,
                &arguments.args,
                RunOptions {
                    timeout,
                    live_output: Some(sender),
                },
            )
            .await;
        let _ = printer.await;
        result
    });
    // A script that exited non-zero has said why on stderr already; anything else is ours to say.
    if let (Some(error), Some(error_type)) = (&result.error, result.error_type)
        && (result.exit_code.is_none() || error_type != skillbox_exec::ErrorType::ExecutionFailed)
    {
        // The message may quote what the skill wrote (an archive entry's name, a script path).
        eprintln!("error[{error_type}]: {}", printable(error));
    }
    let code = match (result.exit_code, result.error_type) {
        (Some(code), _) => u8::try_from(code).unwrap_or(u8::MAX),
        (None, Some(skillbox_exec::ErrorType::InvalidArgs)) => EXIT_USAGE,
        (None, _) => EXIT_PROBLEMS,
    };
    Ok(ExitCode::from(code))
}

/// `skillbox call`: every tool goes through the provider's `handle_tool_call`, so this prints
/// what a model would receive (escaped for the terminal). The run and blob tools are answered
/// with the services of the data folder `skillbox serve` uses by default (`--data-dir`).
pub fn call(global: &GlobalOptions, arguments: &CallArguments) -> anyhow::Result<ExitCode> {
    let parsed: Value = match serde_json::from_str(&arguments.args) {
        Ok(value) => value,
        Err(error) => {
            print_json(&serde_json::json!({
                "error": format!("`--args` is not valid JSON ({error}); pass an object such as '{{\"text\": \"hello\"}}'")
            }))?;
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    // Only the run and blob tools need the data folder: the others never create it.
    let provider = super::surface::provider(global)?;
    let needs_services = skillbox_tools::registry::lookup(
        &provider,
        skillbox_tools::Offer::Everything,
        &arguments.tool,
    )
    .is_some_and(|tool| tool.facts().needs_services);
    // Only the run and blob tools need the data folder: the others never create it.
    let provider = if needs_services {
        let (_, data) = super::surface::open_data_dir(arguments.data_dir.as_deref())?;
        super::surface::provider_with_services(global, &data)?
    } else {
        provider
    };
    let provider = std::sync::Arc::new(provider);
    for warning in provider.warnings() {
        eprintln!("warning: {}", printable(warning));
    }
    let runtime = runtime()?;
    let outcome = runtime.block_on(skillbox_tools::call_once(
        &provider,
        &arguments.tool,
        &parsed,
    ));
    // What the model would receive, with what could drive a terminal (a body's or a script's
    // escape sequences) made visible.
    let mut text = printable_block(&outcome.text()).into_owned();
    text.push('\n');
    crate::output::print_text(&text)?;
    Ok(if outcome.is_error() {
        ExitCode::from(EXIT_PROBLEMS)
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(Serialize)]
struct LayerStatus {
    layer: &'static str,
    available: bool,
    used: bool,
    detail: String,
}

#[derive(Serialize)]
struct DoctorReport {
    level: skillbox_exec::SandboxLevel,
    mode: SandboxMode,
    layers: Vec<LayerStatus>,
    interpreters: Vec<InterpreterStatus>,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct InterpreterStatus {
    #[serde(flatten)]
    interpreter: &'static skillbox_exec::interpreter::Interpreter,
    /// Whether the sandbox, as configured here, can run it.
    usable: bool,
    /// Whether runs of its language use it.
    chosen: bool,
}

/// `skillbox doctor`.
pub fn doctor(global: &GlobalOptions, arguments: &DoctorArguments) -> anyhow::Result<ExitCode> {
    let config = executor_config(&global.execution)?;
    let mode = config.policy.mode;
    // A fresh probe, which also refreshes the cache one-shot commands read.
    let support = match &config.helper {
        Some(helper) => {
            match skillbox_exec::private_directory::ensure_private_directory(
                &config.workspace_root,
                0o700,
            ) {
                Ok(folder) => {
                    helper.probe_fresh(&folder.join(skillbox_exec::sandbox::PROBE_CACHE_FILE))
                }
                Err(_) => helper.probe().clone(),
            }
        }
        None => skillbox_exec::HostSupport::default(),
    };
    let available = SandboxLayers::available(&support);
    let (used, level, refusal, chosen) = match Executor::new(config) {
        Ok(executor) => {
            let chosen: Vec<std::path::PathBuf> = skillbox_exec::interpreter::LANGUAGES
                .iter()
                .filter_map(|language| executor.interpreter_path(*language))
                .collect();
            (executor.layers(), executor.sandbox_level(), None, chosen)
        }
        Err(error) => (
            SandboxLayers::none(),
            skillbox_exec::SandboxLevel::None,
            Some(error.to_string()),
            Vec::new(),
        ),
    };
    let layer = |layer, available, used, detail: String| LayerStatus {
        layer,
        available,
        used,
        detail,
    };
    let report = DoctorReport {
        level,
        mode,
        layers: vec![
            layer(
                "namespaces",
                available.namespaces,
                used.namespaces,
                "own PID, network, mount, IPC and UTS namespaces and a minimal root: no network, no escapees, only system folders and the run's own files"
                    .to_owned(),
            ),
            layer(
                "uid-drop",
                available.uid_drop || !support.running_as_root,
                used.uid_drop || !support.running_as_root,
                if support.running_as_root {
                    "runtime is root: each run gets its own uid (3000000000 and up), no capabilities"
                        .to_owned()
                } else {
                    "runtime is not root: scripts run as the runtime's user, with no_new_privs"
                        .to_owned()
                },
            ),
            layer(
                "landlock",
                available.landlock,
                used.landlock,
                support.landlock_abi.map_or_else(
                    || "not available".to_owned(),
                    |abi| {
                        format!("ABI {abi}: read-only system and skill, writable workspace, no TCP")
                    },
                ),
            ),
            layer(
                "seccomp",
                available.seccomp,
                used.seccomp,
                "no non-Unix sockets, ptrace, io_uring, bpf, mount, keyrings; without namespaces, metadata changes (chmod, chown, times, xattrs) do nothing".to_owned(),
            ),
            layer(
                "cgroups",
                available.cgroups,
                used.cgroups,
                if available.cgroups {
                    "a control group per run: memory (tmpfs included) and tasks of the whole run"
                        .to_owned()
                } else {
                    "not available: runs are bounded per process only (no memory/pids control group to delegate)"
                        .to_owned()
                },
            ),
            layer(
                "rlimits",
                true,
                true,
                "processes, CPU time, memory, file size, open files, no core dumps".to_owned(),
            ),
        ],
        interpreters: skillbox_exec::interpreter::interpreters()
            .into_iter()
            .map(|interpreter| InterpreterStatus {
                interpreter,
                usable: interpreter.usable_by(Reach::for_layers(used)),
                chosen: chosen.contains(&interpreter.program),
            })
            .collect(),
        notes: support.notes.iter().cloned().chain(refusal).collect(),
    };
    if arguments.json {
        print_json(&report)?;
    } else {
        let mut text = format!(
            "sandbox level: {:?} (mode {:?})\n\n",
            report.level, report.mode
        )
        .to_lowercase();
        for status in &report.layers {
            let state = match (status.available, status.used) {
                (_, true) => "on",
                (true, false) => "off",
                (false, false) => "unavailable",
            };
            text.push_str(&format!(
                "  {:<11} {:<12} {}\n",
                status.layer, state, status.detail
            ));
        }
        text.push_str("\ninterpreters:\n");
        for status in &report.interpreters {
            let interpreter = status.interpreter;
            text.push_str(&format!(
                "  {:<7} {}{}\n",
                interpreter.language.command_name(),
                interpreter.program.display(),
                match (status.chosen, status.usable) {
                    (true, _) => "  (used)",
                    (false, true) => "",
                    (false, false) => "  (not usable by the sandbox user)",
                }
            ));
        }
        for note in &report.notes {
            text.push_str(&format!("\nnote: {note}\n"));
        }
        crate::output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
