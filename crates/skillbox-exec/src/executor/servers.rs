//! A skill's MCP server as a long-lived sandboxed process (`docs/design/skill-servers.md`):
//! started through the trust gate scripts pass, in the skill's layout (the warm workers'
//! machinery: a leased uid, namespaces, Landlock, seccomp, limits), in the skill's folder as
//! its working directory, with the skill's network policy, and given only the environment
//! variables it declares that the user granted as secrets. Its standard input and output are
//! the MCP connection; dropping the [`ServerProcess`] kills its whole process tree.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::unistd::Pid;
use skillbox_core::Skill;
use tokio::process::{ChildStdin, ChildStdout};

use super::layout::{LayoutRequest, RunLayout, SANDBOX_SKILL_DIR};
use super::skill_files::resolve_in_skill;
use super::{Executor, InvocationIo, SkillCopy, outcome};
use crate::audit::{AuditRecord, now_ms};
use crate::error::{ErrorType, ExecError};
use crate::interpreter::Language;
use crate::sandbox::stray_processes::WorkerProcesses;
use crate::workers::{end_sandboxed_process, keep_stderr_tail, stderr_tail_text};

/// The declared program of a stdio server, as skillbox starts it.
#[derive(Debug, Clone, Copy)]
pub struct ServerLaunch<'a> {
    /// The server's name (for the audit log and messages).
    pub name: &'a str,
    /// `python3`/`python` and `node` run with the executor's interpreters; a relative path
    /// names a file inside the skill; any other name is looked up on the sandbox's `PATH`.
    pub command: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// The environment variables it may receive: each is passed when the user granted a
    /// secret of that name to the skill, and never otherwise.
    pub env: &'a [String],
}

/// A skill's MCP server, running. Dropped, it is killed with every process it started.
pub struct ServerProcess {
    /// Kept so the child is reaped; killed with its tree on drop.
    child: tokio::process::Child,
    process_id: Option<Pid>,
    processes: Option<WorkerProcesses>,
    pipes: Option<(ChildStdout, ChildStdin)>,
    stderr_tail: Arc<std::sync::Mutex<Vec<u8>>>,
    /// Its host folder (without namespaces) and uid, released when it goes.
    _layout: RunLayout,
}

impl std::fmt::Debug for ServerProcess {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ServerProcess")
            .field("process_id", &self.process_id)
            .finish_non_exhaustive()
    }
}

impl ServerProcess {
    /// Its standard output and input, the MCP connection (once).
    pub fn take_pipes(&mut self) -> Option<(ChildStdout, ChildStdin)> {
        self.pipes.take()
    }

    /// The last lines it wrote to stderr.
    #[must_use]
    pub fn stderr_tail(&self) -> String {
        stderr_tail_text(&self.stderr_tail)
    }

    /// The process id of the helper that runs it (the root of its process tree).
    #[must_use]
    pub fn process_id(&self) -> Option<u32> {
        self.process_id.map(|pid| pid.as_raw().unsigned_abs())
    }

    /// How it ended, when it has: its exit code or signal, and what it said on stderr.
    pub fn ended(&mut self) -> Option<String> {
        let status = self.child.try_wait().ok().flatten()?;
        let how = match status.code() {
            Some(code) => format!("it exited with code {code}"),
            None => "it was killed by a signal".to_owned(),
        };
        let tail = self.stderr_tail();
        Some(if tail.is_empty() {
            how
        } else {
            format!("{how}; its stderr ends: {}", last_chars(&tail, 600))
        })
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        end_sandboxed_process(self.process_id, self.processes.take());
    }
}

/// The last `count` characters of `text`.
fn last_chars(text: &str, count: usize) -> &str {
    let skip = text.chars().count().saturating_sub(count);
    text.char_indices()
        .nth(skip)
        .map_or(text, |(start, _)| &text[start..])
}

impl Executor {
    /// Start a skill's stdio MCP server: only when its code may run (the trust gate), in its
    /// layout, in its folder. Nothing is read from or written to it here.
    ///
    /// # Errors
    /// The trust gate's refusal, a command that leaves the skill, or a process that cannot
    /// start.
    pub fn start_server(
        &self,
        skill: &Skill,
        copy: SkillCopy,
        launch: ServerLaunch<'_>,
    ) -> Result<ServerProcess, ExecError> {
        let started = Instant::now();
        let files = self.skill_directory(skill)?;
        let (program, mut args, interpreter) = self.server_program(&files.directory, launch)?;
        args.extend(launch.args.iter().map(OsString::from));
        let layout = self.layout(LayoutRequest {
            long_lived: true,
            ..self.skill_request(&files, interpreter.as_deref())
        })?;
        let mut invocation = self.invocation(
            (skill, copy),
            &files.directory,
            &layout,
            program,
            args,
            InvocationIo {
                stdin: Some(Vec::new()),
                timeout: Duration::MAX,
                max_output_bytes: 0,
                live_output: None,
            },
        );
        invocation.working_directory = Some(
            self.shown(&files.directory, Path::new(SANDBOX_SKILL_DIR))
                .inside,
        );
        for name in launch.env {
            let granted = self
                .config
                .secrets
                .get(name)
                .filter(|secret| secret.granted_to_copy(skill.name(), copy));
            if let Some(secret) = granted
                && !invocation.env.iter().any(|(key, _)| key == name)
            {
                invocation.env.push((name.clone(), secret.value.clone()));
            }
        }
        let setup_token = uuid::Uuid::new_v4().simple().to_string();
        let spawned = self.sandbox.command(&invocation, &setup_token).spawn();
        self.audit(AuditRecord {
            timestamp_ms: now_ms(),
            kind: "mcp_server",
            skill: skill.name().to_owned(),
            target: launch.name.to_owned(),
            argument_count: launch.args.len(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            exit_code: None,
            stdout_bytes: 0,
            stderr_bytes: 0,
            truncated: false,
            sandbox_level: self.level,
            outcome: outcome(spawned.as_ref().err().map(|_| ErrorType::ExecutionFailed)),
        });
        let mut child = spawned.map_err(|error| {
            ExecError::new(
                ErrorType::ExecutionFailed,
                format!(
                    "cannot start the MCP server `{}` of skill `{}`: {error}",
                    launch.name,
                    skill.name()
                ),
            )
        })?;
        let process_id = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let processes = process_id.map(|helper| {
            let uid = layout.folder.lease.as_ref().map(|lease| lease.uid);
            WorkerProcesses::new(helper.as_raw(), self.sandbox.layers, uid)
        });
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ExecError::new(
                ErrorType::ExecutionFailed,
                "an MCP server started without its pipes",
            ));
        };
        Ok(ServerProcess {
            child,
            process_id,
            processes,
            pipes: Some((stdout, stdin)),
            stderr_tail: keep_stderr_tail(stderr),
            _layout: layout,
        })
    }

    /// The program, leading arguments and interpreter (whose folder the layout shows) of a
    /// server's command.
    fn server_program(
        &self,
        skill_directory: &Path,
        launch: ServerLaunch<'_>,
    ) -> Result<(PathBuf, Vec<OsString>, Option<PathBuf>), ExecError> {
        let command = launch.command;
        let language = match command {
            "python3" | "python" => Some(Language::Python),
            "node" => Some(Language::Node),
            _ => None,
        };
        if let Some(language) = language {
            let interpreter = self.interpreter(language, Path::new(command))?;
            let leading = language.leading_args().iter().map(OsString::from).collect();
            return Ok((interpreter.clone(), leading, Some(interpreter)));
        }
        if command.contains('/') && !command.starts_with('/') {
            let file = resolve_in_skill(skill_directory, command, false)?;
            let seen = self.seen_in_skill(skill_directory, &file);
            let found = self.command_for(&file, &seen)?;
            return Ok((found.program, found.args, found.interpreter));
        }
        if command.is_empty() || command.contains('\0') {
            return Err(ExecError::new(
                ErrorType::InvalidArgs,
                format!(
                    "the MCP server `{}` has no command to run; declare one",
                    launch.name
                ),
            ));
        }
        // A program of the sandbox's system folders, by name or absolute path.
        Ok((PathBuf::from(command), Vec::new(), None))
    }
}

impl Executor {
    /// Whether skillbox may reach a skill's MCP server over HTTP: its code may run (the
    /// trust gate) and the operator allowed it the network (`--allow-network`,
    /// `--allow-network-for SKILL`): the server acts for the skill, so it gets what the
    /// skill's scripts get, and a skill can never make the runtime call a host it could not.
    ///
    /// # Errors
    /// The trust gate's refusal, or the network not allowed, saying how to allow it.
    pub fn check_server_reach(&self, skill: &Skill, server: &str) -> Result<(), ExecError> {
        self.skill_directory(skill)?;
        if self.config.policy.allows_network(skill.name()) {
            return Ok(());
        }
        Err(ExecError::new(
            ErrorType::ScriptNotAllowed,
            format!(
                "the MCP server `{server}` of skill `{}` is reached over the network, which this skill is not allowed: start skillbox with `--allow-network-for {}` to allow it",
                skill.name(),
                skill.name()
            ),
        ))
    }

    /// Log one call of a skill's MCP server tool in the audit log.
    pub fn audit_server_call(&self, skill: &str, tool: &str, duration: Duration, failed: bool) {
        self.audit(AuditRecord {
            timestamp_ms: now_ms(),
            kind: "mcp_tool",
            skill: skill.to_owned(),
            target: tool.to_owned(),
            argument_count: 1,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            exit_code: None,
            stdout_bytes: 0,
            stderr_bytes: 0,
            truncated: false,
            sandbox_level: self.level,
            outcome: outcome(failed.then_some(ErrorType::ExecutionFailed)),
        });
    }
}
