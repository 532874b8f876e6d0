//! Running a skill's scripts (`use_skill`) and its opt-in preprocessing commands: the checks on
//! a script call's arguments, the run itself, and the [`ScriptResult`] a caller gets.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use skillbox_core::{Skill, SkillCatalog};

use super::skill_files::{SkillFiles, resolve_in_skill};
use super::{Command, Executor, InvocationIo, RunOptions, SkillCopy, outcome};
use crate::audit::{AuditRecord, now_ms};
use crate::error::{ErrorType, ExecError};
use crate::interpreter::Language;
use crate::process::Completed;
use crate::sandbox::SandboxLevel;

/// Most arguments a script call may pass.
pub const MAX_SCRIPT_ARGUMENTS: usize = 1_000;
/// Most bytes of arguments a script call may pass in total.
pub const MAX_SCRIPT_ARGUMENT_BYTES: usize = 1024 * 1024;
/// Bytes one argument must stay under, its final NUL included: Linux's `MAX_ARG_STRLEN`
/// (32 pages), past which `execve` fails.
pub const MAX_SCRIPT_ARGUMENT_LENGTH: usize = 128 * 1024;

/// The result of running a script (seed 002's `SkillExecutionResult`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScriptResult {
    /// Exit code 0 and no error.
    pub success: bool,
    /// Captured stdout (capped, `[output truncated]` appended when cut).
    pub stdout: String,
    /// Captured stderr (capped likewise).
    pub stderr: String,
    /// The exit code, when the script ran to an exit.
    pub exit_code: Option<i32>,
    /// What went wrong, for a person or a model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The kind of failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_type: Option<ErrorType>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// The sandbox level it ran at.
    pub sandbox: SandboxLevel,
}

impl ScriptResult {
    fn failed(error: &ExecError, sandbox: SandboxLevel) -> Self {
        ScriptResult {
            success: false,
            stdout: String::new(),
            stderr: String::new(),
            exit_code: None,
            error: Some(error.message.clone()),
            error_type: Some(error.error_type),
            duration_ms: 0,
            sandbox,
        }
    }
}

impl Executor {
    /// Run a script of a skill looked up by name, or by its path in its root for a copy that
    /// another of its name shadows (`skillbox run`).
    pub async fn run(
        &self,
        catalog: &SkillCatalog,
        skill_name: &str,
        script: &str,
        args: &[String],
        options: RunOptions,
    ) -> ScriptResult {
        match catalog.find(skill_name, None) {
            Ok(skill) => {
                let copy = SkillCopy::in_catalog(catalog, skill);
                self.run_script_as(skill, copy, script, args, options).await
            }
            Err(_) => {
                let error = ExecError::new(
                    ErrorType::SkillNotFound,
                    format!("no skill named `{skill_name}`; list the skills to see which exist"),
                );
                self.audit_failure("script", skill_name, script, args.len(), &error);
                ScriptResult::failed(&error, self.level)
            }
        }
    }

    /// Run a script of the copy in effect of a skill's name (see [`Executor::run_script_as`]).
    pub async fn run_script(
        &self,
        skill: &Skill,
        script: &str,
        args: &[String],
        options: RunOptions,
    ) -> ScriptResult {
        self.run_script_as(skill, SkillCopy::InEffect, script, args, options)
            .await
    }

    /// Run a script of a skill, which is `copy` of its name: secrets granted by name reach
    /// only the copy in effect.
    pub async fn run_script_as(
        &self,
        skill: &Skill,
        copy: SkillCopy,
        script: &str,
        args: &[String],
        options: RunOptions,
    ) -> ScriptResult {
        match self.prepare_script(skill, script, args) {
            Ok(prepared) => {
                let what = ("script", script, args.len());
                self.run_prepared((skill, copy), what, prepared, options)
                    .await
            }
            Err(error) => {
                self.audit_failure("script", skill.name(), script, args.len(), &error);
                ScriptResult::failed(&error, self.level)
            }
        }
    }

    /// Run a shell command line for a skill (`bash -c`), under the same sandbox and limits as
    /// its scripts, with the skill folder readable. Used for opt-in `` !`command` ``
    /// preprocessing of skill bodies; never for model-supplied scripts.
    pub async fn run_command(
        &self,
        skill: &Skill,
        command: &str,
        options: RunOptions,
    ) -> ScriptResult {
        self.run_command_as(skill, SkillCopy::InEffect, command, options)
            .await
    }

    /// [`Executor::run_command`] for `copy` of the skill's name.
    pub async fn run_command_as(
        &self,
        skill: &Skill,
        copy: SkillCopy,
        command: &str,
        options: RunOptions,
    ) -> ScriptResult {
        let prepared = self.skill_directory(skill).and_then(|skill_files| {
            let bash = self.interpreter(Language::Bash, Path::new("command.sh"))?;
            Ok(PreparedScript {
                command: Command {
                    program: bash.clone(),
                    args: vec![OsString::from("-c"), OsString::from(command)],
                    interpreter: Some(bash),
                },
                skill_files,
            })
        });
        match prepared {
            Ok(prepared) => {
                self.run_prepared((skill, copy), ("command", command, 0), prepared, options)
                    .await
            }
            Err(error) => {
                self.audit_failure("command", skill.name(), command, 0, &error);
                ScriptResult::failed(&error, self.level)
            }
        }
    }

    /// Run what was prepared for `copy` of `skill`; `(kind, label, argument_count)` say what
    /// it is in the audit log.
    async fn run_prepared(
        &self,
        (skill, copy): (&Skill, SkillCopy),
        (kind, label, argument_count): (&'static str, &str, usize),
        prepared: PreparedScript,
        options: RunOptions,
    ) -> ScriptResult {
        let command = prepared.command;
        let request = self.skill_request(&prepared.skill_files, command.interpreter.as_deref());
        let layout = match self.layout(request) {
            Ok(layout) => layout,
            Err(error) => {
                self.audit_failure(kind, skill.name(), label, argument_count, &error);
                return ScriptResult::failed(&error, self.level);
            }
        };
        let timeout = options.timeout.unwrap_or(self.config.timeout);
        let invocation = self.invocation(
            (skill, copy),
            &prepared.skill_files.directory,
            &layout,
            command.program,
            command.args,
            InvocationIo {
                stdin: None,
                timeout,
                max_output_bytes: self.config.max_output_bytes,
                live_output: options.live_output.clone(),
            },
        );
        let completed = self.sandbox.execute(invocation).await;
        drop(layout);
        let result = self.script_result(&completed, timeout, label);
        self.audit(AuditRecord {
            timestamp_ms: now_ms(),
            kind,
            skill: skill.name().to_owned(),
            target: if kind == "command" {
                "inline command".to_owned()
            } else {
                label.to_owned()
            },
            argument_count,
            duration_ms: result.duration_ms,
            exit_code: completed.exit_code,
            stdout_bytes: completed.stdout.total_bytes,
            stderr_bytes: completed.stderr.total_bytes,
            truncated: completed.stdout.truncated() || completed.stderr.truncated(),
            sandbox_level: self.level,
            outcome: outcome(result.error_type),
        });
        result
    }

    fn script_result(
        &self,
        completed: &Completed,
        timeout: Duration,
        script: &str,
    ) -> ScriptResult {
        let (error, error_type) = if let Some(setup) = &completed.setup_error {
            (
                Some(format!("the sandbox could not run `{script}`: {setup}")),
                Some(ErrorType::SandboxUnavailable),
            )
        } else if completed.timed_out {
            (
                Some(format!(
                    "`{script}` ran longer than {} ms and was stopped, with everything it started",
                    timeout.as_millis()
                )),
                Some(ErrorType::ExecutionTimeout),
            )
        } else {
            match completed.exit_code {
                Some(0) => (None, None),
                Some(code) => (
                    Some(format!("`{script}` exited with status {code}; see stderr")),
                    Some(ErrorType::ExecutionFailed),
                ),
                None => (
                    Some(format!("`{script}` did not run to an exit")),
                    Some(ErrorType::ExecutionFailed),
                ),
            }
        };
        ScriptResult {
            success: error.is_none(),
            stdout: completed.stdout.text(),
            stderr: completed.stderr.text(),
            exit_code: completed.exit_code,
            error,
            error_type,
            duration_ms: u64::try_from(completed.duration.as_millis()).unwrap_or(u64::MAX),
            sandbox: self.level,
        }
    }

    /// Resolve everything about a script call before anything runs.
    fn prepare_script(
        &self,
        skill: &Skill,
        script: &str,
        args: &[String],
    ) -> Result<PreparedScript, ExecError> {
        if args.len() > MAX_SCRIPT_ARGUMENTS
            || args.iter().map(String::len).sum::<usize>() > MAX_SCRIPT_ARGUMENT_BYTES
        {
            return Err(ExecError::new(
                ErrorType::InvalidArgs,
                format!(
                    "too many arguments: at most {MAX_SCRIPT_ARGUMENTS} arguments and {MAX_SCRIPT_ARGUMENT_BYTES} bytes"
                ),
            ));
        }
        if let Some(index) = args
            .iter()
            .position(|arg| arg.len() >= MAX_SCRIPT_ARGUMENT_LENGTH)
        {
            return Err(ExecError::new(
                ErrorType::InvalidArgs,
                format!(
                    "argument {index} is {} bytes; one argument may be at most {} bytes (the kernel's limit); pass long text in a file or on stdin",
                    args[index].len(),
                    MAX_SCRIPT_ARGUMENT_LENGTH - 1
                ),
            ));
        }
        if let Some(index) = args.iter().position(|arg| arg.contains('\0')) {
            return Err(ExecError::new(
                ErrorType::InvalidArgs,
                format!("argument {index} contains a NUL byte, which no program can receive"),
            ));
        }
        let skill_files = self.skill_directory(skill)?;
        let path = resolve_in_skill(&skill_files.directory, script, true)?;
        let seen = self.seen_in_skill(&skill_files.directory, &path);
        let mut command = self.command_for(&path, &seen)?;
        command.args.extend(args.iter().map(OsString::from));
        Ok(PreparedScript {
            command,
            skill_files,
        })
    }
}

struct PreparedScript {
    command: Command,
    skill_files: SkillFiles,
}
