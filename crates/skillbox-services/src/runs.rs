//! `execute_skill` and `run_code` in two steps: a plan, which checks the parameters, the skills
//! and the input blobs without running or copying anything (each problem is a
//! [`ServiceError::InvalidParams`] naming the parameter), and the run, which the door policy
//! starts once the call has its place in the run queue ([`RunGate`]): inputs copied, the run
//! done by the caller's executor, the outcome turned into a Run object (a failing skill is a
//! successful answer with `status: "failed"`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use skillbox_core::{Skill, SkillKind, ToolDefinition};
use skillbox_exec::executor::python_run::{
    InputBlob, MAX_OUTPUT_BYTES_TOTAL, PythonRun, PythonRunOutcome, PythonTarget, RunFailure,
    is_python_identifier, open_output_file,
};
use skillbox_exec::{ErrorType, Executor, RunOptions, SkillCopy};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::blobs::{BlobError, BlobMeta};
use crate::error::ServiceError;
use crate::params::NonBlank;
use crate::protocol::{ExecuteSkillParams, RunCodeParams};
use crate::{RunContext, Services};

/// Longest wall-clock limit a caller may ask for.
pub const MAX_RUN_TIMEOUT: Duration = Duration::from_secs(240);
/// Most input blobs one run may mount.
pub const MAX_INPUT_BLOBS: usize = 64;
/// Default for the most bytes of input blobs one run may read in all: each run gets its own
/// copy of its inputs on the data folder's disk, so without a bound one request naming 64 large
/// blobs would copy tens of GiB. The same as a run may write to `out/`.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = MAX_OUTPUT_BYTES_TOTAL;
/// Most skills one `run_code` may mount.
pub const MAX_MOUNTED_SKILLS: usize = 64;
/// Largest `code` accepted, in bytes.
pub const MAX_CODE_BYTES: usize = 1024 * 1024;
/// Characters of the logs returned in `logs_preview`: from the beginning, then from the end.
const LOG_PREVIEW_HEAD: usize = 2_000;
const LOG_PREVIEW_TAIL: usize = 6_000;
/// Characters of an error message repeated in the summary.
const SUMMARY_MESSAGE_CHARS: usize = 200;

/// How many runs may execute at once, and how many may wait for a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    /// Runs executing at once.
    pub max_concurrent: usize,
    /// Runs waiting for a turn; past this, callers get a "busy, retry" error.
    pub max_queued: usize,
    /// Bytes of input blobs one run may read in all (they are copied for it).
    pub max_input_bytes: u64,
}

impl Default for RunLimits {
    /// As many runs as cores, four times that waiting, and [`DEFAULT_MAX_INPUT_BYTES`] of
    /// inputs each.
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        RunLimits {
            max_concurrent: cores,
            max_queued: cores * 4,
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
        }
    }
}

/// The bounded run queue: a semaphore for the runs executing, a counter for those waiting.
#[derive(Debug)]
pub struct RunGate {
    limits: RunLimits,
    running: Arc<Semaphore>,
    waiting: AtomicUsize,
}

impl RunGate {
    /// A gate with these limits (at least one run at a time).
    #[must_use]
    pub fn new(limits: RunLimits) -> Self {
        let limits = RunLimits {
            max_concurrent: limits.max_concurrent.max(1),
            ..limits
        };
        RunGate {
            running: Arc::new(Semaphore::new(limits.max_concurrent)),
            waiting: AtomicUsize::new(0),
            limits,
        }
    }

    /// The limits in force.
    #[must_use]
    pub fn limits(&self) -> RunLimits {
        self.limits
    }

    /// Runs executing now.
    #[must_use]
    pub fn running(&self) -> usize {
        self.limits
            .max_concurrent
            .saturating_sub(self.running.available_permits())
    }

    /// Runs waiting for a turn now (a caller being refused is not one, even for the moment it
    /// is counted while it learns the queue is full).
    #[must_use]
    pub fn queued(&self) -> usize {
        self.waiting
            .load(Ordering::SeqCst)
            .min(self.limits.max_queued)
    }

    /// Wait for a turn, or fail at once with the busy error when the queue is full.
    pub async fn enter(&self) -> Result<OwnedSemaphorePermit, ServiceError> {
        if let Ok(permit) = Arc::clone(&self.running).try_acquire_owned() {
            return Ok(permit);
        }
        let queued = self.waiting.fetch_add(1, Ordering::SeqCst);
        let _leave = WaitingGuard(&self.waiting);
        if queued >= self.limits.max_queued {
            crate::metrics::run_rejected();
            return Err(ServiceError::busy(format!(
                "the server is busy: {} runs are executing and {} are waiting; retry in a moment",
                self.limits.max_concurrent, self.limits.max_queued
            )));
        }
        Arc::clone(&self.running)
            .acquire_owned()
            .await
            .map_err(|_| ServiceError::internal("the run queue is closed (the server is stopping)"))
    }
}

struct WaitingGuard<'a>(&'a AtomicUsize);

impl Drop for WaitingGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Services {
    /// Check an `execute_skill` call: the skill that `context` finds by name (a `skill.toml`
    /// action with a `[runtime]`, or a `tools.json` skill), its tool, its input blobs. Nothing
    /// runs and nothing is copied: the caller takes a place in the run queue, then runs the
    /// plan ([`PlannedRun::run`]).
    ///
    /// # Errors
    /// Bad parameters, an unknown skill, version, blob or tool, an instruction skill
    /// ([`ServiceError::InvalidParams`]).
    pub async fn plan_execute_skill(
        &self,
        context: &dyn RunContext,
        params: ExecuteSkillParams,
    ) -> Result<PlannedRun, ServiceError> {
        let name = required(params.name, "name")?;
        let version = params.version.map(|version| version.0);
        let args = Value::Object(params.args.unwrap_or_default().0);
        let blob_ids = params.input_blobs.unwrap_or_default().0;
        let timeout = params
            .timeout_ms
            .map_or_else(|| default_timeout(context), |timeout| timeout.0);
        let skill = find_skill(context, &name, version.as_deref())?;
        // A secret granted to the name goes only to the copy the name gives without a
        // version: another copy (another version, a copy in an earlier, less trusted root)
        // runs without it. Asked whatever the lookup was, so no way of naming a copy skips it.
        let copy = context.copy_of(&skill);
        let label = match skill.id.version.as_ref() {
            Some(version) => format!("`{name}` {version}"),
            None => format!("`{name}`"),
        };
        let run = |work: RunWork| PlannedRun {
            services: self.clone(),
            executor: Arc::clone(context.executor()),
            method: crate::protocol::EXECUTE_SKILL,
            skill_name: Some(name.clone()),
            label: label.clone(),
            timeout,
            work,
        };
        if skill
            .manifest
            .as_ref()
            .is_some_and(|manifest| manifest.runtime.is_some())
            && skill.kind() == SkillKind::Action
        {
            let blobs = check_input_blobs(self, &blob_ids).await?;
            return Ok(run(RunWork::Python {
                export: Some((skill, copy)),
                code: None,
                args,
                mount_skills: Vec::new(),
                blobs,
            }));
        }
        if !skill.tools.is_empty() {
            let (tool, arguments) = tool_call(&skill, args, &blob_ids)?;
            return Ok(run(RunWork::Tool {
                skill,
                copy,
                tool,
                arguments,
            }));
        }
        if skill.kind() == SkillKind::Action {
            return Err(ServiceError::invalid_params(format!(
                "skill `{name}` is an action skill without a [runtime] section in its skill.toml (language, entrypoint, export), so there is nothing to execute; its author must add one"
            )));
        }
        Err(ServiceError::invalid_params(format!(
            "skill `{name}` is an instruction skill: it cannot be executed; read it with describe_skill (detail \"full\") or read_skill_file and follow it"
        )))
    }

    /// Check a `run_code` call: the language, the code, the skills `context` finds to mount,
    /// the input blobs. Nothing runs and nothing is copied until [`PlannedRun::run`].
    ///
    /// # Errors
    /// Bad parameters, an unsupported language, unknown skills or blobs
    /// ([`ServiceError::InvalidParams`]).
    pub async fn plan_run_code(
        &self,
        context: &dyn RunContext,
        params: RunCodeParams,
    ) -> Result<PlannedRun, ServiceError> {
        let language = required(params.language, "language")?;
        if !language.eq_ignore_ascii_case("python") {
            return Err(ServiceError::invalid_params(format!(
                "parameter `language` must be \"python\" (the only language run_code supports), not \"{language}\""
            )));
        }
        let code = required(params.code, "code")?;
        if code.len() > MAX_CODE_BYTES {
            return Err(ServiceError::invalid_params(format!(
                "parameter `code` is {} bytes; at most {MAX_CODE_BYTES} are accepted (put data in a blob)",
                code.len()
            )));
        }
        let entrypoint = params
            .entrypoint
            .map_or_else(|| "main".to_owned(), |entrypoint| entrypoint.0);
        if !is_python_identifier(&entrypoint) {
            return Err(ServiceError::invalid_params(format!(
                "parameter `entrypoint` must be a Python function name, not `{entrypoint}`"
            )));
        }
        let args = Value::Object(params.args.unwrap_or_default().0);
        let skill_names = params.mount_skills.unwrap_or_default().0;
        let blob_ids = params.input_blobs.unwrap_or_default().0;
        let timeout = params
            .limits
            .and_then(|limits| limits.timeout_ms)
            .map_or_else(|| default_timeout(context), |timeout| timeout.0);
        let mut mount_skills = Vec::with_capacity(skill_names.len());
        for name in &skill_names {
            mount_skills.push(find_skill(context, name, None)?);
        }
        let blobs = check_input_blobs(self, &blob_ids).await?;
        Ok(PlannedRun {
            services: self.clone(),
            executor: Arc::clone(context.executor()),
            method: crate::protocol::RUN_CODE,
            skill_name: None,
            label: "the code".to_owned(),
            timeout,
            work: RunWork::Python {
                export: None,
                code: Some((code, entrypoint)),
                args,
                mount_skills,
                blobs,
            },
        })
    }
}

/// The wall-clock limit of a run whose parameters set none: the executor's (30 s unless its
/// owner set another, as `skillbox call --timeout-ms` does), at most [`MAX_RUN_TIMEOUT`].
fn default_timeout(context: &dyn RunContext) -> Duration {
    context.executor().config().timeout.min(MAX_RUN_TIMEOUT)
}

/// A run or tool call whose parameters, skills and blobs were checked: run it once it has
/// its place in the run queue.
pub struct PlannedRun {
    services: Services,
    executor: Arc<Executor>,
    method: &'static str,
    skill_name: Option<String>,
    label: String,
    timeout: Duration,
    work: RunWork,
}

impl std::fmt::Debug for PlannedRun {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("PlannedRun")
            .field("method", &self.method)
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

/// What a planned run does.
enum RunWork {
    /// A Python run: an action skill's export, or model-written code.
    Python {
        /// The action skill whose export runs, and which copy of its name it is.
        export: Option<(Arc<Skill>, SkillCopy)>,
        code: Option<(String, String)>,
        args: Value,
        mount_skills: Vec<Arc<Skill>>,
        blobs: Vec<BlobMeta>,
    },
    /// A `tools.json` tool.
    Tool {
        skill: Arc<Skill>,
        /// Which copy of its name the skill is.
        copy: SkillCopy,
        tool: ToolDefinition,
        arguments: Value,
    },
}

impl PlannedRun {
    /// Copy the inputs, run, store `out/` files as blobs, and answer with the Run object (a
    /// failing skill is a Run with `status: "failed"`). Remembered for the runs page.
    ///
    /// # Errors
    /// When the input blobs could not be copied for the run (a storage failure).
    pub async fn run(self) -> Result<Value, ServiceError> {
        let PlannedRun {
            services,
            executor,
            method,
            skill_name,
            label,
            timeout,
            work,
        } = self;
        let run = match work {
            RunWork::Python {
                export,
                code,
                args,
                mount_skills,
                blobs,
            } => {
                let copy = export
                    .as_ref()
                    .map_or(SkillCopy::InEffect, |(_, copy)| *copy);
                let target = match (&export, code) {
                    (Some((skill, _)), _) => PythonTarget::Export(skill),
                    (None, Some((code, entrypoint))) => PythonTarget::Code { code, entrypoint },
                    (None, None) => PythonTarget::Code {
                        code: String::new(),
                        entrypoint: "main".to_owned(),
                    },
                };
                run_python(
                    &services,
                    &executor,
                    &label,
                    (target, copy),
                    args,
                    &mount_skills,
                    &blobs,
                    timeout,
                )
                .await?
            }
            RunWork::Tool {
                skill,
                copy,
                tool,
                arguments,
            } => execute_tool(&executor, (&skill, copy), &tool, &label, arguments, timeout).await,
        };
        services.remember_run(method, skill_name.as_deref(), &run);
        Ok(run)
    }
}

/// A required text parameter.
fn required(value: Option<NonBlank>, name: &str) -> Result<String, ServiceError> {
    value
        .map(|value| value.0)
        .ok_or_else(|| ServiceError::invalid_params(format!("missing required parameter `{name}`")))
}

/// Copy the input blobs, run, and answer with the Run. The caller holds its place in the run
/// queue; nothing was copied before it had one, so callers the queue refuses cost no disk.
#[allow(clippy::too_many_arguments)]
async fn run_python(
    services: &Services,
    executor: &Executor,
    label: &str,
    (target, copy): (PythonTarget<'_>, SkillCopy),
    args: Value,
    mount_skills: &[Arc<Skill>],
    blobs: &[BlobMeta],
    timeout: Duration,
) -> Result<Value, ServiceError> {
    let mut input_blobs = input_blobs(services, blobs).await?;
    let outcome = executor
        .run_python(PythonRun {
            target,
            args,
            mount_skills: mount_skills.iter().map(AsRef::as_ref).collect(),
            input_blobs: std::mem::take(&mut input_blobs.files),
            timeout,
            copy,
        })
        .await;
    let run = run_object(services, label, outcome).await;
    input_blobs.remove().await;
    Ok(run)
}

/// `execute_skill` on a `tools.json` skill: `args` is `{"tool": NAME, "arguments": {...}}`.
fn tool_call(
    skill: &Skill,
    mut args: Value,
    blob_ids: &[String],
) -> Result<(ToolDefinition, Value), ServiceError> {
    let tool_names = || {
        skill
            .tools
            .iter()
            .map(|tool| tool.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !blob_ids.is_empty() {
        return Err(ServiceError::invalid_params(format!(
            "skill `{}` is a tools.json skill: its tools take their input in `args.arguments`, so `input_blobs` cannot be mounted; use run_code to work on blobs",
            skill.name()
        )));
    }
    let Some(object) = args.as_object_mut() else {
        return Err(ServiceError::invalid_params(
            "parameter `args` must be an object",
        ));
    };
    if let Some(unknown) = object
        .keys()
        .find(|key| !matches!(key.as_str(), "tool" | "arguments"))
    {
        return Err(ServiceError::invalid_params(format!(
            "parameter `args.{unknown}` is not expected: skill `{}` is a tools.json skill, so `args` is {{\"tool\": NAME, \"arguments\": {{...}}}} (tools: {})",
            skill.name(),
            tool_names()
        )));
    }
    let tool_name = match object.get("tool") {
        Some(Value::String(tool)) => tool.clone(),
        _ => {
            return Err(ServiceError::invalid_params(format!(
                "parameter `args.tool` must name the tool to call: skill `{}` is a tools.json skill (tools: {})",
                skill.name(),
                tool_names()
            )));
        }
    };
    let Some(tool) = skill.tools.iter().find(|tool| tool.name == tool_name) else {
        return Err(ServiceError::invalid_params(format!(
            "skill `{}` has no tool `{tool_name}`; its tools are: {}",
            skill.name(),
            tool_names()
        )));
    };
    let arguments = match object.remove("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(arguments)) => Value::Object(arguments),
        Some(_) => {
            return Err(ServiceError::invalid_params(
                "parameter `args.arguments` must be an object of the tool's parameters",
            ));
        }
    };
    Ok((tool.clone(), arguments))
}

/// Call a `tools.json` tool and answer with the Run.
async fn execute_tool(
    executor: &Executor,
    (skill, copy): (&Skill, SkillCopy),
    tool: &ToolDefinition,
    label: &str,
    arguments: Value,
    timeout: Duration,
) -> Value {
    let started = Instant::now();
    let result = executor
        .call_tool_as(
            skill,
            copy,
            tool,
            arguments,
            RunOptions {
                timeout: Some(timeout),
                live_output: None,
            },
        )
        .await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let label = format!("{label} tool `{}`", tool.name);
    let outcome = match result.error_type {
        None => Ok(result.value),
        Some(error_type) => {
            let message = result
                .value
                .get("error")
                .map(|error| match error {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_else(|| result.value.to_string());
            let error_type = match error_type {
                ErrorType::ExecutionTimeout => "Timeout".to_owned(),
                other => other.as_str().to_owned(),
            };
            Err(RunFailure {
                error_type,
                message,
            })
        }
    };
    run_json(
        &label,
        &outcome,
        duration_ms,
        String::new(),
        Vec::new(),
        executor.sandbox_level(),
    )
}

/// Turn an outcome into a Run, storing `out/` files as output blobs.
async fn run_object(services: &Services, label: &str, outcome: PythonRunOutcome) -> Value {
    let mut result = outcome.result.clone();
    let mut logs = outcome.logs_preview.clone();
    let mut output_files = Vec::new();
    for file in &outcome.output_files {
        // What the client is told; host paths in the details go to the log only.
        let stored = match open_output_file(file) {
            Ok(opened) => services
                .blobs
                .create_from_reader(
                    tokio::fs::File::from_std(opened),
                    kind_for(&file.name),
                    MAX_OUTPUT_BYTES_TOTAL,
                )
                .await
                .map_err(|error| match error {
                    BlobError::Storage(details) => {
                        tracing::error!(file = %file.name, %details, "an output file could not be stored");
                        "blob storage failed inside the server; the server's log has the details"
                            .to_owned()
                    }
                    other => other.to_string(),
                }),
            Err(error) => {
                tracing::error!(file = %file.name, %error, "an output file could not be opened");
                Err("it could not be read back from the run's folder; the server's log has the details".to_owned())
            }
        };
        match stored {
            Ok(meta) => output_files.push(json!({
                "path": format!("out/{}", file.name),
                "blob_id": meta.blob_id,
                "kind": meta.kind,
                "size_bytes": meta.size_bytes,
            })),
            Err(error) => {
                if result.is_ok() {
                    result = Err(RunFailure {
                        error_type: "OutputNotStored".to_owned(),
                        message: format!(
                            "the run completed but `out/{}` could not be stored as a blob: {error}",
                            file.name
                        ),
                    });
                }
            }
        }
    }
    for skipped in &outcome.skipped_outputs {
        if !logs.is_empty() && !logs.ends_with('\n') {
            logs.push('\n');
        }
        logs.push_str(&format!("skillbox: not collected: {skipped}\n"));
    }
    run_json(
        label,
        &result,
        outcome.duration_ms,
        logs,
        output_files,
        outcome.sandbox,
    )
}

fn run_json(
    label: &str,
    result: &Result<Value, RunFailure>,
    duration_ms: u64,
    logs: String,
    output_files: Vec<Value>,
    sandbox: skillbox_exec::SandboxLevel,
) -> Value {
    let run_id = format!("run_{}", &uuid::Uuid::new_v4().simple().to_string()[..16]);
    let blob_count = output_files.len();
    let mut run = json!({
        "run_id": run_id,
        "duration_ms": duration_ms,
        "sandbox": sandbox,
    });
    match result {
        Ok(output) => {
            run["status"] = json!("completed");
            run["summary"] = json!(format!(
                "{label} completed in {duration_ms} ms{}.",
                match blob_count {
                    0 => String::new(),
                    1 => "; 1 output blob".to_owned(),
                    count => format!("; {count} output blobs"),
                }
            ));
            run["output"] = output.clone();
        }
        Err(failure) => {
            run["status"] = json!("failed");
            run["summary"] = json!(format!(
                "{label} failed: {}: {}",
                failure.error_type,
                shorten(&failure.message, SUMMARY_MESSAGE_CHARS)
            ));
            run["error"] = json!({ "type": failure.error_type, "message": failure.message });
        }
    }
    run["output_blobs"] = Value::Array(
        output_files
            .iter()
            .filter_map(|file| file.get("blob_id").cloned())
            .collect(),
    );
    run["output_files"] = Value::Array(output_files);
    run["logs_preview"] = json!(logs_preview(&logs));
    run
}

/// The logs' beginning and end, with the middle cut out when they are long.
fn logs_preview(logs: &str) -> String {
    let count = logs.chars().count();
    if count <= LOG_PREVIEW_HEAD + LOG_PREVIEW_TAIL {
        return logs.to_owned();
    }
    let head: String = logs.chars().take(LOG_PREVIEW_HEAD).collect();
    let tail: String = logs.chars().skip(count - LOG_PREVIEW_TAIL).collect();
    format!(
        "{head}\n[… {} characters of logs omitted …]\n{tail}",
        count - LOG_PREVIEW_HEAD - LOG_PREVIEW_TAIL
    )
}

fn shorten(text: &str, max_chars: usize) -> String {
    let first_line = text.lines().next().unwrap_or_default();
    if first_line.chars().count() <= max_chars && first_line.len() == text.len() {
        return text.to_owned();
    }
    let mut short: String = first_line.chars().take(max_chars).collect();
    short.push('…');
    short
}

/// A MIME type for an output file, by its extension.
fn kind_for(name: &str) -> &'static str {
    let extension = std::path::Path::new(name)
        .extension()
        .and_then(|extension| extension.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("txt" | "log") => "text/plain",
        Some("md" | "markdown") => "text/markdown",
        Some("csv") => "text/csv",
        Some("tsv") => "text/tab-separated-values",
        Some("json") => "application/json",
        Some("jsonl" | "ndjson") => "application/x-ndjson",
        Some("html" | "htm") => "text/html",
        Some("xml") => "application/xml",
        Some("yaml" | "yml") => "application/yaml",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("zip") => "application/zip",
        _ => "application/octet-stream",
    }
}

/// A skill the caller lets protocol clients use; the caller words the miss (a hidden skill is
/// answered exactly as a name the catalog does not hold, hints included).
fn find_skill(
    context: &dyn RunContext,
    name: &str,
    version: Option<&str>,
) -> Result<Arc<Skill>, ServiceError> {
    context
        .find_skill(name, version)
        .map_err(ServiceError::InvalidParams)
}

/// The input blobs of one run: its own copies, in a folder of its own under
/// `<data-dir>/run-inputs/` that is removed with the run.
struct RunInputs {
    files: Vec<InputBlob>,
    folder: Option<std::path::PathBuf>,
}

impl RunInputs {
    /// Remove the copies (up to [`MAX_INPUT_BLOBS`] files of [`DEFAULT_MAX_INPUT_BYTES`] in
    /// all) on a blocking thread, and wait until they are gone: the run's answer comes after.
    /// A request cancelled meanwhile leaves the removal running to its end.
    async fn remove(mut self) {
        let Some(folder) = self.folder.take() else {
            return;
        };
        if let Err(error) = tokio::task::spawn_blocking(move || remove_input_copies(&folder)).await
        {
            tracing::warn!(%error, "cannot remove a run's input copies");
        }
    }
}

/// When a run ends early (an error, a cancelled request), its copies are removed in place:
/// [`RunInputs::remove`] is the usual way, off the async threads.
impl Drop for RunInputs {
    fn drop(&mut self) {
        if let Some(folder) = self.folder.take() {
            remove_input_copies(&folder);
        }
    }
}

fn remove_input_copies(folder: &std::path::Path) {
    if let Err(error) = fs_err::remove_dir_all(folder) {
        tracing::warn!(%error, "cannot remove a run's input copies");
    }
}

/// The metadata of a run's distinct input blobs, after checking that each exists and that
/// together they are within the run's input bytes.
///
/// # Errors
/// -32602 naming `input_blobs`.
async fn check_input_blobs(
    services: &Services,
    blob_ids: &[String],
) -> Result<Vec<BlobMeta>, ServiceError> {
    let limit = services.max_input_bytes;
    let mut distinct: Vec<BlobMeta> = Vec::with_capacity(blob_ids.len());
    let mut total: u64 = 0;
    for blob_id in blob_ids {
        if distinct
            .iter()
            .any(|seen| seen.blob_id.eq_ignore_ascii_case(blob_id))
        {
            continue;
        }
        let meta = services
            .blobs
            .meta(blob_id)
            .await
            .map_err(input_blob_error)?;
        total = total.saturating_add(meta.size_bytes);
        distinct.push(meta);
    }
    if total > limit {
        return Err(ServiceError::invalid_params(format!(
            "parameter `input_blobs`: the blobs hold {total} bytes in all, and one run may read at most {limit} (each run gets its own copy); pass fewer or smaller blobs"
        )));
    }
    Ok(distinct)
}

fn input_blob_error(error: BlobError) -> ServiceError {
    match error {
        BlobError::NotFound(_) => {
            ServiceError::invalid_params(format!("parameter `input_blobs`: {error}"))
        }
        other => ServiceError::internal_failure("copying the input blobs failed", &other),
    }
}

/// Copy a run's input blobs (distinct, already checked) into a folder of its own.
async fn input_blobs(services: &Services, blobs: &[BlobMeta]) -> Result<RunInputs, ServiceError> {
    let mut inputs = RunInputs {
        files: Vec::with_capacity(blobs.len()),
        folder: None,
    };
    if blobs.is_empty() {
        return Ok(inputs);
    }
    let folder = services
        .run_inputs
        .join(uuid::Uuid::new_v4().simple().to_string());
    let created = folder.clone();
    tokio::task::spawn_blocking(move || crate::data_dir::create_pass_through_dir(&created))
        .await
        .unwrap_or_else(|error| Err(BlobError::Storage(error.to_string())))
        .map_err(|error| {
            ServiceError::internal_failure("copying the input blobs failed", &error)
        })?;
    inputs.folder = Some(folder.clone());
    for meta in blobs {
        let path = services
            .blobs
            .copy_for_run(meta, &folder)
            .await
            .map_err(input_blob_error)?;
        // The store writes ids in lower case, whatever case the caller used.
        inputs.files.push(InputBlob {
            blob_id: meta.blob_id.clone(),
            path,
        });
    }
    Ok(inputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_gate_counts_runs_executing_and_waiting() {
        let gate = Arc::new(RunGate::new(RunLimits {
            max_concurrent: 1,
            max_queued: 1,
            max_input_bytes: 0,
        }));
        assert_eq!((gate.running(), gate.queued()), (0, 0));
        let turn = gate.enter().await.unwrap();
        assert_eq!((gate.running(), gate.queued()), (1, 0));
        let waiter = tokio::spawn({
            let gate = Arc::clone(&gate);
            async move { gate.enter().await.map(drop) }
        });
        while gate.queued() == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!((gate.running(), gate.queued()), (1, 1));
        assert!(gate.enter().await.is_err(), "the queue is full");
        assert_eq!((gate.running(), gate.queued()), (1, 1));
        drop(turn);
        waiter.await.unwrap().unwrap();
        assert_eq!((gate.running(), gate.queued()), (0, 0));
    }

    #[test]
    fn long_logs_keep_their_beginning_and_end() {
        let logs = format!(
            "{}{}{}",
            "a".repeat(3000),
            "b".repeat(10_000),
            "c".repeat(3000)
        );
        let preview = logs_preview(&logs);
        assert!(preview.starts_with(&"a".repeat(2000)));
        assert!(preview.ends_with(&"c".repeat(3000)));
        assert!(preview.contains("[… 8000 characters of logs omitted …]"));
        assert_eq!(logs_preview("short"), "short");
    }

    #[test]
    fn timeouts_are_bounded() {
        use crate::params::{Arguments, decode};
        use crate::protocol::ExecuteSkillParams;
        let decoded: ExecuteSkillParams = decode(
            "execute_skill",
            Arguments::Value(&json!({"timeout_ms": 1500})),
        )
        .unwrap();
        assert_eq!(
            decoded.timeout_ms.map(|timeout| timeout.0),
            Some(Duration::from_millis(1500))
        );
        for bad in [
            json!(0),
            json!(-1),
            json!(1.5),
            json!("10"),
            json!(10_000_000),
        ] {
            let error = decode::<ExecuteSkillParams>(
                "execute_skill",
                Arguments::Value(&json!({ "timeout_ms": bad })),
            )
            .unwrap_err();
            assert_eq!(
                error.0,
                "parameter `timeout_ms` must be a whole number of milliseconds from 1 to 240000",
                "{bad}"
            );
        }
    }

    #[test]
    fn output_kinds_follow_extensions() {
        assert_eq!(kind_for("report.MD"), "text/markdown");
        assert_eq!(kind_for("nested/data.csv"), "text/csv");
        assert_eq!(kind_for("blob"), "application/octet-stream");
    }
}
