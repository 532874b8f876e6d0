//! `skillbox doctor`: what the sandbox can do on this host, and which interpreters it runs.

use std::process::ExitCode;

use serde::Serialize;
use skillbox_exec::interpreter::Reach;
use skillbox_exec::sandbox::SandboxLayers;
use skillbox_exec::{Executor, SandboxMode};

use crate::arguments::{DoctorArguments, GlobalOptions};
use crate::output::print_json;
use crate::setup::executor::executor_config;

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
pub fn run(global: &GlobalOptions, arguments: &DoctorArguments) -> anyhow::Result<ExitCode> {
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
