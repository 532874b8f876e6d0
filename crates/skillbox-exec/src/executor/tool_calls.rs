//! Calling a `tools.json` tool: its arguments checked against the tool's schema (compiled once,
//! with limits on `pattern`s), its handler run on a warm worker or once, and its answer turned
//! into the [`ToolCallResult`] the model receives.

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use skillbox_core::{Skill, ToolDefinition};

use super::layout::{LayoutRequest, RunLayout};
use super::skill_files::resolve_in_skill;
use super::{Command, Executor, InvocationIo, RunOptions, SkillCopy, outcome};
use crate::audit::{AuditRecord, now_ms};
use crate::error::{ErrorType, ExecError};
use crate::interpreter::Language;
use crate::process::{Completed, Invocation};
use crate::workers::WorkerKey;

/// Fewest bytes of a handler's output kept (its answer is JSON, cut short it is useless).
pub const MIN_HANDLER_OUTPUT_BYTES: usize = 1024 * 1024;
/// Longest a tool's arguments may take to check against its schema before the call is
/// refused (a backtracking `pattern` over many items can take seconds).
pub const ARGUMENT_CHECK_BUDGET: Duration = Duration::from_secs(2);
/// Backtracking steps a schema `pattern` may take per match.
pub const PATTERN_BACKTRACK_LIMIT: usize = 100_000;

/// The result of a tool call: the handler's JSON value, or `{"error": …}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallResult {
    /// What the model receives.
    pub value: Value,
    /// The kind of failure, when it failed.
    pub error_type: Option<ErrorType>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Whether a warm worker answered.
    pub warm: bool,
}

impl ToolCallResult {
    fn error(error: &ExecError) -> Self {
        ToolCallResult {
            value: json!({ "error": error.message }),
            error_type: Some(error.error_type),
            duration_ms: 0,
            warm: false,
        }
    }
}

impl Executor {
    /// Call a `tools.json` tool: validate the arguments against its schema, then run its
    /// handler (on a warm worker when enabled). Failures come back as `{"error": …}`.
    pub async fn call_tool(
        &self,
        skill: &Skill,
        tool: &ToolDefinition,
        arguments: Value,
        options: RunOptions,
    ) -> ToolCallResult {
        self.call_tool_as(skill, SkillCopy::InEffect, tool, arguments, options)
            .await
    }

    /// [`Executor::call_tool`] on `copy` of the skill: a copy asked for by its version that is
    /// not the one in effect for its name ([`SkillCopy::Other`]) gets no secret granted by
    /// name, and a warm worker of its own.
    pub async fn call_tool_as(
        &self,
        skill: &Skill,
        copy: SkillCopy,
        tool: &ToolDefinition,
        arguments: Value,
        options: RunOptions,
    ) -> ToolCallResult {
        let started = std::time::Instant::now();
        let attempt = self
            .call_tool_inner((skill, copy), tool, arguments, options)
            .await;
        let (mut result, completed) = match attempt {
            Ok(done) => done,
            Err(error) => (ToolCallResult::error(&error), None),
        };
        result.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.audit(AuditRecord {
            timestamp_ms: now_ms(),
            kind: "tool",
            skill: skill.name().to_owned(),
            target: tool.name.clone(),
            argument_count: 1,
            duration_ms: result.duration_ms,
            exit_code: completed.as_ref().and_then(|completed| completed.exit_code),
            stdout_bytes: completed
                .as_ref()
                .map_or(0, |completed| completed.stdout.total_bytes),
            stderr_bytes: completed
                .as_ref()
                .map_or(0, |completed| completed.stderr.total_bytes),
            truncated: completed.as_ref().is_some_and(|completed| {
                completed.stdout.truncated() || completed.stderr.truncated()
            }),
            sandbox_level: self.level,
            outcome: outcome(result.error_type),
        });
        result
    }

    async fn call_tool_inner(
        &self,
        (skill, copy): (&Skill, SkillCopy),
        tool: &ToolDefinition,
        arguments: Value,
        options: RunOptions,
    ) -> Result<(ToolCallResult, Option<Completed>), ExecError> {
        let Value::Object(mut arguments) = arguments else {
            return Err(ExecError::new(
                ErrorType::InvalidArgs,
                format!("arguments for tool `{}` must be a JSON object", tool.name),
            ));
        };
        self.validate_arguments(skill, tool, &arguments).await?;
        let Some(script) = &tool.script else {
            let value = json!({
                "message": format!(
                    "tool `{}` has no handler of its own: load the skill `{}` (load_skill) and follow its instructions",
                    tool.name,
                    skill.name()
                )
            });
            return Ok((
                ToolCallResult {
                    value,
                    error_type: None,
                    duration_ms: 0,
                    warm: false,
                },
                None,
            ));
        };
        let skill_files = self.skill_directory(skill)?;
        let skill_directory = &skill_files.directory;
        let handler = resolve_in_skill(skill_directory, script, false)?;
        let handler_seen = self.seen_in_skill(skill_directory, &handler);
        let language = Language::from_path(&handler);
        let timeout = options.timeout.unwrap_or(self.config.timeout);
        let runtime_path = self.runtime_path();
        let bootstrap = match language {
            Some(Language::Node) => Some(runtime_path.join("node_handler.mjs")),
            Some(Language::Python) => Some(runtime_path.join("python_handler.py")),
            _ => None,
        };
        if let (Some(language), Some(bootstrap)) = (language, &bootstrap)
            && self.config.workers.enabled
        {
            let interpreter = self.interpreter(language, &handler)?;
            let key = WorkerKey {
                language,
                skill_directory: skill_directory.clone(),
                copy,
            };
            let prepare = || -> Result<(Invocation, RunLayout), ExecError> {
                let request = LayoutRequest {
                    long_lived: true,
                    ..self.skill_request(&skill_files, Some(&interpreter))
                };
                let layout = self.layout(request)?;
                let invocation = self.invocation(
                    (skill, copy),
                    skill_directory,
                    &layout,
                    interpreter.clone(),
                    vec![OsString::from(bootstrap), OsString::from("serve")],
                    InvocationIo {
                        stdin: Some(Vec::new()),
                        timeout: Duration::MAX,
                        max_output_bytes: 0,
                        live_output: None,
                    },
                );
                Ok((invocation, layout))
            };
            let spawn = crate::workers::WorkerSpawn {
                sandbox: &self.sandbox,
                prepare: &prepare,
            };
            let (value, error_type) = self
                .workers
                .call(
                    &key,
                    &spawn,
                    &handler_seen,
                    Value::Object(arguments),
                    crate::workers::CallLimits {
                        timeout,
                        max_answer_bytes: self.handler_output_bytes(),
                    },
                )
                .await;
            return Ok((
                ToolCallResult {
                    value,
                    error_type,
                    duration_ms: 0,
                    warm: true,
                },
                None,
            ));
        }
        let (command, bootstrapped) = match (language, &bootstrap) {
            (Some(language), Some(bootstrap)) => {
                let interpreter = self.interpreter(language, &handler)?;
                let command = Command {
                    program: interpreter.clone(),
                    args: vec![OsString::from(bootstrap)],
                    interpreter: Some(interpreter),
                };
                (command, true)
            }
            _ => (self.command_for(&handler, &handler_seen)?, false),
        };
        let layout =
            self.layout(self.skill_request(&skill_files, command.interpreter.as_deref()))?;
        arguments.insert(
            "__workDir".to_owned(),
            Value::String(layout.workspace.display().to_string()),
        );
        let stdin = if bootstrapped {
            json!({ "id": 0, "handler": handler_seen, "args": Value::Object(arguments) })
        } else {
            Value::Object(arguments)
        };
        let invocation = self.invocation(
            (skill, copy),
            skill_directory,
            &layout,
            command.program,
            command.args,
            InvocationIo {
                stdin: Some(serde_json::to_vec(&stdin).unwrap_or_default()),
                timeout,
                max_output_bytes: self.handler_output_bytes(),
                live_output: None,
            },
        );
        let completed = self.sandbox.execute(invocation).await;
        drop(layout);
        let (value, error_type) = tool_value(&completed, timeout, &tool.name, bootstrapped);
        Ok((
            ToolCallResult {
                value,
                error_type,
                duration_ms: 0,
                warm: false,
            },
            Some(completed),
        ))
    }

    /// Bytes of a handler's output (its JSON answer) kept: the operator's output limit, and at
    /// least [`MIN_HANDLER_OUTPUT_BYTES`]. A warm worker's answer line is held to it too.
    fn handler_output_bytes(&self) -> usize {
        self.config.max_output_bytes.max(MIN_HANDLER_OUTPUT_BYTES)
    }

    /// Check a tool's arguments against its schema off the async threads, within
    /// [`ARGUMENT_CHECK_BUDGET`].
    async fn validate_arguments(
        &self,
        skill: &Skill,
        tool: &ToolDefinition,
        arguments: &serde_json::Map<String, Value>,
    ) -> Result<(), ExecError> {
        let validator = self.validator(skill, tool)?;
        let checked = Value::Object(arguments.clone());
        let check = tokio::task::spawn_blocking(move || {
            validator
                .iter_errors(&checked)
                .take(MAX_REPORTED_PROBLEMS)
                .map(|error| describe_schema_error(&error))
                .collect::<Vec<String>>()
        });
        let problems = match tokio::time::timeout(ARGUMENT_CHECK_BUDGET, check).await {
            Ok(Ok(problems)) => problems,
            Ok(Err(_)) => {
                return Err(ExecError::new(
                    ErrorType::InvalidArgs,
                    format!("checking the arguments of tool `{}` failed", tool.name),
                ));
            }
            Err(_) => {
                return Err(ExecError::new(
                    ErrorType::InvalidArgs,
                    format!(
                        "checking the arguments of tool `{}` against its schema took longer than {} ms (a `pattern` that backtracks?); send shorter or fewer values, or simplify the schema",
                        tool.name,
                        ARGUMENT_CHECK_BUDGET.as_millis()
                    ),
                ));
            }
        };
        if problems.is_empty() {
            return Ok(());
        }
        Err(ExecError::new(
            ErrorType::InvalidArgs,
            format!(
                "invalid arguments for tool `{}`: {}",
                tool.name,
                problems.join("; ")
            ),
        ))
    }

    /// The compiled schema of a tool (cached), with a backtracking limit on `pattern`s.
    fn validator(
        &self,
        skill: &Skill,
        tool: &ToolDefinition,
    ) -> Result<Arc<jsonschema::Validator>, ExecError> {
        let key = (skill.directory.clone(), tool.name.clone());
        let mut validators = self
            .validators
            .lock()
            .map_err(|_| ExecError::new(ErrorType::InvalidArgs, "validator cache poisoned"))?;
        if let Some(validator) = validators.get(&key) {
            return Ok(Arc::clone(validator));
        }
        let validator = jsonschema::options()
            .with_pattern_options(
                jsonschema::PatternOptions::fancy_regex()
                    .backtrack_limit(PATTERN_BACKTRACK_LIMIT)
                    .size_limit(PATTERN_SIZE_LIMIT_BYTES),
            )
            .build(&tool.input_schema)
            .map_err(|error| {
                ExecError::new(
                    ErrorType::InvalidArgs,
                    format!(
                        "tool `{}` has an unusable parameter schema: {error}",
                        tool.name
                    ),
                )
            })?;
        let validator = Arc::new(validator);
        validators.insert(key, Arc::clone(&validator));
        Ok(validator)
    }
}

/// Most schema problems reported for one call.
const MAX_REPORTED_PROBLEMS: usize = 20;
/// Approximate size a compiled schema `pattern` may take, in bytes.
const PATTERN_SIZE_LIMIT_BYTES: usize = 1024 * 1024;

/// What a handler run produced, as the model should see it.
fn tool_value(
    completed: &Completed,
    timeout: Duration,
    tool: &str,
    bootstrapped: bool,
) -> (Value, Option<ErrorType>) {
    if let Some(setup) = &completed.setup_error {
        return (
            json!({ "error": format!("the sandbox could not run tool `{tool}`: {setup}") }),
            Some(ErrorType::SandboxUnavailable),
        );
    }
    if completed.timed_out {
        return (
            json!({ "error": format!("tool `{tool}` ran longer than {} ms and was stopped", timeout.as_millis()) }),
            Some(ErrorType::ExecutionTimeout),
        );
    }
    let stdout = String::from_utf8_lossy(&completed.stdout.bytes);
    let stderr_tail = tail(&completed.stderr.text(), 2_000);
    if bootstrapped {
        let answer = stdout
            .lines()
            .rev()
            .find_map(|line| serde_json::from_str::<Value>(line).ok());
        return match answer {
            Some(Value::Object(mut answer)) => {
                match (answer.remove("ok"), answer.remove("error")) {
                    (_, Some(error)) => {
                        (json!({ "error": error }), Some(ErrorType::ExecutionFailed))
                    }
                    (Some(value), None) => (value, None),
                    (None, None) => (Value::Null, None),
                }
            }
            _ => (
                json!({ "error": format!("tool `{tool}` ended without an answer (exit status {:?}): {stderr_tail}", completed.exit_code) }),
                Some(ErrorType::ExecutionFailed),
            ),
        };
    }
    if completed.exit_code != Some(0) {
        let message = if stderr_tail.trim().is_empty() {
            format!("tool `{tool}` exited with status {:?}", completed.exit_code)
        } else {
            stderr_tail.trim().to_owned()
        };
        return (
            json!({ "error": message }),
            Some(ErrorType::ExecutionFailed),
        );
    }
    let text = stdout.trim();
    match serde_json::from_str::<Value>(text) {
        Ok(value) => (value, None),
        Err(_) => (Value::String(text.to_owned()), None),
    }
}

fn tail(text: &str, max_chars: usize) -> String {
    let count = text.chars().count();
    if count <= max_chars {
        return text.to_owned();
    }
    text.chars().skip(count - max_chars).collect()
}

/// A schema violation in words that name the parameter.
fn describe_schema_error(error: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind;
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            return format!("missing required parameter `{name}`");
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let names: Vec<String> = unexpected.iter().map(|name| format!("`{name}`")).collect();
            return format!(
                "unknown parameter {} (the tool does not declare it)",
                names.join(", ")
            );
        }
        _ => {}
    }
    let path = error.instance_path().to_string();
    let parameter = path.trim_start_matches('/').replace('/', ".");
    if parameter.is_empty() {
        error.to_string()
    } else {
        format!("parameter `{parameter}`: {error}")
    }
}
