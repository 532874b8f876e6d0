//! The executor: the one place skills' code runs. `run_script` is seed 002's `use_skill`;
//! `call_tool` runs a `tools.json` handler. Both resolve what to run inside the skill, prepare a
//! fresh workspace, apply the sandbox, enforce limits, capture capped output and write the
//! audit line.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use skillbox_core::source::{SkillSource, contained_relative_path};
use skillbox_core::trust::TrustVerdict;
use skillbox_core::{Skill, SkillCatalog, ToolDefinition, TrustGate};

use crate::audit::{AuditLog, AuditRecord, now_ms};
use crate::error::{ErrorType, ExecError};
use crate::interpreter::{Language, Reach, interpreter_for};
use crate::process::{Completed, Invocation, SandboxRuntime};
use crate::sandbox::{
    HelperCommand, HostSupport, SandboxLayers, SandboxLevel, SandboxMode, SandboxPolicy,
};
use crate::workers::{WorkerKey, WorkerPool, WorkerPoolConfig};
use layout::{LayoutRequest, RunLayout, SANDBOX_SKILL_DIR};

pub mod layout;
pub mod python_run;

/// Default wall-clock limit per execution, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// Default bytes kept per output stream.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 20 * 1024;
/// Fewest bytes of a handler's output kept (its answer is JSON, cut short it is useless).
pub const MIN_HANDLER_OUTPUT_BYTES: usize = 1024 * 1024;
/// Most arguments a script call may pass.
pub const MAX_SCRIPT_ARGUMENTS: usize = 1_000;
/// Most bytes of arguments a script call may pass in total.
pub const MAX_SCRIPT_ARGUMENT_BYTES: usize = 1024 * 1024;
/// Longest a tool's arguments may take to check against its schema before the call is
/// refused (a backtracking `pattern` over many items can take seconds).
pub const ARGUMENT_CHECK_BUDGET: Duration = Duration::from_secs(2);
/// Backtracking steps a schema `pattern` may take per match.
pub const PATTERN_BACKTRACK_LIMIT: usize = 100_000;
/// Variable naming the runtime folder (default: a per-user runtime folder).
pub const RUNTIME_DIRECTORY_VARIABLE: &str = "SKILLBOX_RUNTIME_DIR";
/// Environment variables every execution gets, before the per-run ones (`HOME`, `TMPDIR`,
/// `SKILLBOX_*`), the allowlist and declared secrets.
pub const BASE_ENVIRONMENT: &[(&str, &str)] = &[
    ("PATH", "/usr/local/bin:/usr/bin:/bin"),
    ("LANG", "C.UTF-8"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
    ("PYTHONUNBUFFERED", "1"),
    ("PYTHONIOENCODING", "utf-8"),
    ("NODE_NO_WARNINGS", "1"),
];

/// How the executor is set up.
#[derive(Debug, Clone)]
pub struct ExecutorConfig {
    /// The sandbox helper; `None` runs without one (only allowed with [`SandboxMode::Off`]).
    pub helper: Option<HelperCommand>,
    /// The sandbox policy.
    pub policy: SandboxPolicy,
    /// Default wall-clock limit.
    pub timeout: Duration,
    /// Bytes kept per output stream.
    pub max_output_bytes: usize,
    /// A fixed working directory for every run; `None` gives each run a fresh workspace.
    pub working_directory: Option<PathBuf>,
    /// The runtime's private folder: handler bootstraps, unpacked archived skills, host-side
    /// run folders and caches. It and every folder above it must be the runtime user's (or
    /// root's) and closed to others; see [`crate::private_directory`].
    pub workspace_root: PathBuf,
    /// Names of the runtime's environment variables passed through to scripts (e.g. `TZ`).
    pub environment_allowlist: Vec<String>,
    /// Secrets the operator provides, by variable name; a skill gets only those it declares
    /// and the operator granted to it.
    pub secrets: BTreeMap<String, Secret>,
    /// Append an audit line per execution to this file.
    pub audit_log: Option<PathBuf>,
    /// Warm handler workers.
    pub workers: WorkerPoolConfig,
    /// Which skills' code may run; the default trusts every skill (see
    /// [`skillbox_core::trust`] for the gate the command line builds over project folders).
    pub trust: TrustGate,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        ExecutorConfig {
            helper: HelperCommand::beside_current_executable(),
            policy: SandboxPolicy::default(),
            timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            working_directory: None,
            workspace_root: default_runtime_directory(),
            environment_allowlist: Vec::new(),
            secrets: BTreeMap::new(),
            audit_log: None,
            workers: WorkerPoolConfig::default(),
            trust: TrustGate::default(),
        }
    }
}

/// A secret value and the skills it may go to.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    /// The value.
    pub value: String,
    /// The skills that may receive it (when they declare it); `None`: every skill declaring
    /// it.
    pub skills: Option<BTreeSet<String>>,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secret")
            .field("value", &"<hidden>")
            .field("skills", &self.skills)
            .finish()
    }
}

impl Secret {
    /// A secret for every skill that declares it.
    #[must_use]
    pub fn for_any_declaring_skill(value: impl Into<String>) -> Self {
        Secret {
            value: value.into(),
            skills: None,
        }
    }

    /// Whether `skill` may receive it.
    #[must_use]
    pub fn granted_to(&self, skill: &str) -> bool {
        self.skills
            .as_ref()
            .is_none_or(|skills| skills.contains(skill))
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret::for_any_declaring_skill(value)
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret::for_any_declaring_skill(value)
    }
}

/// The default runtime folder: `SKILLBOX_RUNTIME_DIR`; else `/run/skillbox` for root;
/// `$XDG_RUNTIME_DIR/skillbox` for other users; else a per-user folder in the temp folder.
/// Never one shared folder that another user could create first.
#[must_use]
pub fn default_runtime_directory() -> PathBuf {
    if let Some(directory) = runtime_directory_from_environment() {
        return directory;
    }
    let euid = nix::unistd::geteuid();
    if euid.is_root() && Path::new("/run").is_dir() {
        return PathBuf::from("/run/skillbox");
    }
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|runtime| runtime.is_absolute() && runtime.is_dir())
    {
        return runtime.join("skillbox");
    }
    std::env::temp_dir().join(format!("skillbox-{}", euid.as_raw()))
}

/// The runtime folder `SKILLBOX_RUNTIME_DIR` names, when set and not empty.
#[must_use]
pub fn runtime_directory_from_environment() -> Option<PathBuf> {
    std::env::var_os(RUNTIME_DIRECTORY_VARIABLE)
        .filter(|directory| !directory.is_empty())
        .map(PathBuf::from)
}

/// Per-call options.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Overrides the executor's timeout.
    pub timeout: Option<Duration>,
    /// Forward the script's output here as it arrives (the result still holds the capped copy).
    pub live_output: Option<crate::output::OutputSender>,
}

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

/// Runs skills' scripts and handlers under one policy.
#[derive(Debug)]
pub struct Executor {
    config: ExecutorConfig,
    sandbox: SandboxRuntime,
    level: SandboxLevel,
    audit: Option<AuditLog>,
    workers: WorkerPool,
    validators: Mutex<HashMap<(PathBuf, String), Arc<jsonschema::Validator>>>,
    /// The runtime folder, checked private and with every link resolved.
    runtime_root: PathBuf,
    /// The empty folder every minimal root is mounted on (each in its own namespace).
    mount_point: PathBuf,
    bootstrap_directory: PathBuf,
}

impl Executor {
    /// Set the executor up: probe the host, decide the sandbox layers, open the audit log.
    ///
    /// # Errors
    /// [`ErrorType::SandboxUnavailable`] when the policy requires a sandbox the host cannot
    /// give (or no helper is configured), and I/O errors preparing folders or the audit log.
    pub fn new(config: ExecutorConfig) -> Result<Self, ExecError> {
        let unavailable = |message: String| ExecError::new(ErrorType::SandboxUnavailable, message);
        let io = |error: std::io::Error| unavailable(error.to_string());
        let runtime_root =
            crate::private_directory::ensure_private_directory(&config.workspace_root, 0o700)
                .map_err(|error| unavailable(error.to_string()))?;
        let probe_cache = runtime_root.join(crate::sandbox::PROBE_CACHE_FILE);
        let support = match (&config.helper, config.policy.mode) {
            (Some(helper), SandboxMode::Off) => HostSupport {
                running_as_root: nix::unistd::geteuid().is_root(),
                ..helper.probe_cached(&probe_cache)
            },
            (Some(helper), _) => helper.probe_cached(&probe_cache),
            (None, SandboxMode::Off) => HostSupport {
                running_as_root: nix::unistd::geteuid().is_root(),
                ..HostSupport::default()
            },
            (None, _) => {
                return Err(unavailable(
                    "no sandbox helper (`skillbox-sandbox`) was found next to the executable; build it, or set the sandbox mode to `off`".to_owned(),
                ));
            }
        };
        let layers = match config.policy.mode {
            SandboxMode::Off => SandboxLayers::none(),
            _ => SandboxLayers::available(&support),
        };
        let level = layers.level(&support);
        let missing = layers.missing(&support);
        match config.policy.mode {
            SandboxMode::Required if level != SandboxLevel::Full => {
                return Err(unavailable(format!(
                    "the sandbox policy requires every layer, but this host lacks: {} ({})",
                    missing.join(", "),
                    support.notes.join("; ")
                )));
            }
            SandboxMode::BestEffort if level != SandboxLevel::Full => {
                tracing::warn!(missing = %missing.join(", "), "running with a weaker sandbox than requested");
            }
            SandboxMode::Off => {
                tracing::info!("the sandbox is off: scripts run with the runtime's privileges")
            }
            _ => {}
        }
        let mut config = config;
        if config.helper.is_none() && config.policy.mode != SandboxMode::Off {
            config.policy.mode = SandboxMode::Off;
        }
        if layers.uid_drop && !layers.namespaces {
            // Runs see host paths: the sandbox uids must pass through (not list) this folder.
            fs_err::set_permissions(&runtime_root, std::fs::Permissions::from_mode(0o711))
                .map_err(io)?;
        }
        sweep_stale_runs(&runtime_root, STALE_RUN_AGE);
        sweep_unused_archives(&runtime_root, STALE_RUN_AGE);
        let bootstrap_directory = write_bootstraps(&runtime_root).map_err(io)?;
        let mount_point = runtime_root.join("root");
        match fs_err::create_dir(&mount_point) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(io(error)),
        }
        let audit = match &config.audit_log {
            Some(path) => Some(AuditLog::open(path).map_err(io)?),
            None => None,
        };
        let sandbox = SandboxRuntime {
            helper: config.helper.clone(),
            support,
            policy: config.policy.clone(),
            layers,
            uids: crate::sandbox::UidPool::global(),
            probe_cache: Some(probe_cache),
        };
        let workers = WorkerPool::new(config.workers.clone());
        Ok(Executor {
            config,
            sandbox,
            level,
            audit,
            workers,
            validators: Mutex::new(HashMap::new()),
            runtime_root,
            mount_point,
            bootstrap_directory,
        })
    }

    /// Refuse a configured working directory (`--workdir`) that holds one of `roots` or lies
    /// inside one: runs write there, and must not be able to rewrite skills (code that later
    /// runs with those skills' secrets) or swap a skill folder for a link.
    ///
    /// # Errors
    /// [`ErrorType::InvalidArgs`] naming both folders.
    pub fn check_working_directory<'a>(
        &self,
        roots: impl IntoIterator<Item = &'a Path>,
    ) -> Result<(), ExecError> {
        let Some(directory) = &self.config.working_directory else {
            return Ok(());
        };
        let directory = fs_err::canonicalize(directory).map_err(|error| {
            ExecError::new(
                ErrorType::InvalidArgs,
                format!("the working folder cannot be used: {error}"),
            )
        })?;
        for root in roots {
            let Ok(root) = fs_err::canonicalize(root) else {
                continue;
            };
            if root.starts_with(&directory) || directory.starts_with(&root) {
                return Err(ExecError::new(
                    ErrorType::InvalidArgs,
                    format!(
                        "the working folder `{}` overlaps the skill root `{}`: runs write in the working folder and must not be able to change skills; choose a folder outside every skill root",
                        directory.display(),
                        root.display()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Warm workers alive now.
    #[must_use]
    pub fn live_workers(&self) -> usize {
        self.workers.live_workers()
    }

    /// The runtime folder in use (checked private, links resolved).
    #[must_use]
    pub fn runtime_directory(&self) -> &Path {
        &self.runtime_root
    }

    /// The sandbox level every execution runs at.
    #[must_use]
    pub fn sandbox_level(&self) -> SandboxLevel {
        self.level
    }

    /// What the host supports.
    #[must_use]
    pub fn host_support(&self) -> &HostSupport {
        &self.sandbox.support
    }

    /// The layers in force.
    #[must_use]
    pub fn layers(&self) -> SandboxLayers {
        self.sandbox.layers
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &ExecutorConfig {
        &self.config
    }

    /// Refuse a skill whose code the trust gate holds back: every path that runs a skill's
    /// code (scripts, preprocessing commands, handlers, exports, mounted skills) asks first.
    ///
    /// A gated skill's verdict reads the trust file and may digest the whole skill: on a
    /// multi-threaded runtime that blocking work leaves the async worker first (see
    /// [`off_the_async_threads`]).
    ///
    /// # Errors
    /// [`ErrorType::Untrusted`] naming the skill, its root, why, and the command that trusts it.
    pub fn check_trusted(&self, skill: &Skill) -> Result<(), ExecError> {
        let gate = &self.config.trust;
        if !gate.is_gated(skill) {
            return Ok(());
        }
        match off_the_async_threads(|| gate.verdict(skill)) {
            TrustVerdict::Trusted => Ok(()),
            TrustVerdict::Untrusted(refusal) => {
                Err(ExecError::new(ErrorType::Untrusted, refusal.to_string()))
            }
        }
    }

    /// Run a script of a skill looked up by name (`use_skill`).
    pub async fn run(
        &self,
        catalog: &SkillCatalog,
        skill_name: &str,
        script: &str,
        args: &[String],
        options: RunOptions,
    ) -> ScriptResult {
        match catalog.get(skill_name) {
            Some(skill) => self.run_script(skill, script, args, options).await,
            None => {
                let error = ExecError::new(
                    ErrorType::SkillNotFound,
                    format!("no skill named `{skill_name}`; list the skills to see which exist"),
                );
                self.audit_failure("script", skill_name, script, args.len(), &error);
                ScriptResult::failed(&error, self.level)
            }
        }
    }

    /// Run a script of a skill.
    pub async fn run_script(
        &self,
        skill: &Skill,
        script: &str,
        args: &[String],
        options: RunOptions,
    ) -> ScriptResult {
        match self.prepare_script(skill, script, args) {
            Ok(prepared) => {
                self.run_prepared(skill, "script", script, args.len(), prepared, options)
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
        let prepared = self.check_trusted(skill).and_then(|()| {
            let skill_directory = self.skill_directory(skill)?;
            let bash = self.interpreter(Language::Bash, Path::new("command.sh"))?;
            Ok(PreparedScript {
                command: Command {
                    program: bash.clone(),
                    args: vec![OsString::from("-c"), OsString::from(command)],
                    interpreter: Some(bash),
                },
                skill_directory,
            })
        });
        match prepared {
            Ok(prepared) => {
                self.run_prepared(skill, "command", command, 0, prepared, options)
                    .await
            }
            Err(error) => {
                self.audit_failure("command", skill.name(), command, 0, &error);
                ScriptResult::failed(&error, self.level)
            }
        }
    }

    async fn run_prepared(
        &self,
        skill: &Skill,
        kind: &'static str,
        label: &str,
        argument_count: usize,
        prepared: PreparedScript,
        options: RunOptions,
    ) -> ScriptResult {
        let command = prepared.command;
        let request = self.skill_request(&prepared.skill_directory, command.interpreter.as_deref());
        let layout = match self.layout(request) {
            Ok(layout) => layout,
            Err(error) => {
                self.audit_failure(kind, skill.name(), label, argument_count, &error);
                return ScriptResult::failed(&error, self.level);
            }
        };
        let timeout = options.timeout.unwrap_or(self.config.timeout);
        let invocation = self.invocation(
            skill,
            &prepared.skill_directory,
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

    /// The layout request of a script, handler or command: the skill at its fixed path, and
    /// also at its own host path, read-only, because instructions give models that path
    /// (`${SKILL_DIR}`) and models pass files of the skill to its scripts by it.
    fn skill_request(&self, skill_directory: &Path, interpreter: Option<&Path>) -> LayoutRequest {
        let mut skills = vec![self.shown(skill_directory, Path::new(SANDBOX_SKILL_DIR))];
        if self.isolated() && layout::may_show_at_host_path(skill_directory) {
            skills.push(self.shown(skill_directory, skill_directory));
        }
        LayoutRequest {
            skills,
            interpreter: interpreter.map(Path::to_path_buf),
            ..LayoutRequest::default()
        }
    }

    /// Where a file of the skill appears to the run.
    fn seen_in_skill(&self, skill_directory: &Path, file: &Path) -> PathBuf {
        match file.strip_prefix(skill_directory) {
            Ok(relative) if self.isolated() => Path::new(SANDBOX_SKILL_DIR).join(relative),
            _ => file.to_path_buf(),
        }
    }

    /// One process of a skill in its layout, with the skill's environment.
    fn invocation(
        &self,
        skill: &Skill,
        skill_directory: &Path,
        layout: &RunLayout,
        program: PathBuf,
        args: Vec<OsString>,
        io: InvocationIo,
    ) -> Invocation {
        let mut env = self.run_environment(&layout.workspace, &layout.tmp, Some(skill));
        let seen = self
            .shown(skill_directory, Path::new(SANDBOX_SKILL_DIR))
            .inside;
        env.push(("SKILLBOX_SKILL_DIR".to_owned(), seen.display().to_string()));
        Invocation {
            program,
            args,
            env,
            workspace: layout.workspace.clone(),
            readable: layout.readable.clone(),
            network: self.config.policy.allows_network(skill.name()),
            stdin: io.stdin,
            timeout: io.timeout,
            max_output_bytes: io.max_output_bytes,
            live_output: io.live_output,
            uid: layout.uid(),
            stderr_tail_bytes: 0,
            root: layout.root.clone(),
        }
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

    /// Call a `tools.json` tool: validate the arguments against its schema, then run its
    /// handler (on a warm worker when enabled). Failures come back as `{"error": …}`.
    pub async fn call_tool(
        &self,
        skill: &Skill,
        tool: &ToolDefinition,
        arguments: Value,
        options: RunOptions,
    ) -> ToolCallResult {
        let started = std::time::Instant::now();
        let attempt = self.call_tool_inner(skill, tool, arguments, options).await;
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
        skill: &Skill,
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
        self.check_trusted(skill)?;
        let skill_directory = self.skill_directory(skill)?;
        let handler = resolve_in_skill(&skill_directory, script, false)?;
        let handler_seen = self.seen_in_skill(&skill_directory, &handler);
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
            };
            let prepare = || -> Result<(Invocation, RunLayout), ExecError> {
                let request = LayoutRequest {
                    long_lived: true,
                    ..self.skill_request(&skill_directory, Some(&interpreter))
                };
                let layout = self.layout(request)?;
                let invocation = self.invocation(
                    skill,
                    &skill_directory,
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
            self.layout(self.skill_request(&skill_directory, command.interpreter.as_deref()))?;
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
            skill,
            &skill_directory,
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

    /// Resolve everything about a script call before anything runs.
    fn prepare_script(
        &self,
        skill: &Skill,
        script: &str,
        args: &[String],
    ) -> Result<PreparedScript, ExecError> {
        self.check_trusted(skill)?;
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
        if let Some(index) = args.iter().position(|arg| arg.contains('\0')) {
            return Err(ExecError::new(
                ErrorType::InvalidArgs,
                format!("argument {index} contains a NUL byte, which no program can receive"),
            ));
        }
        let skill_directory = self.skill_directory(skill)?;
        let path = resolve_in_skill(&skill_directory, script, true)?;
        let seen = self.seen_in_skill(&skill_directory, &path);
        let mut command = self.command_for(&path, &seen)?;
        command.args.extend(args.iter().map(OsString::from));
        Ok(PreparedScript {
            command,
            skill_directory,
        })
    }

    /// The program and leading arguments that run a file (`path` on the host, `seen` as the
    /// run sees it): its language's interpreter, or the file itself when it is executable and
    /// has no known extension.
    fn command_for(&self, path: &Path, seen: &Path) -> Result<Command, ExecError> {
        if let Some(language) = Language::from_path(path) {
            let interpreter = self.interpreter(language, path)?;
            let mut args: Vec<OsString> =
                language.leading_args().iter().map(OsString::from).collect();
            args.push(seen.as_os_str().to_owned());
            return Ok(Command {
                program: interpreter.clone(),
                args,
                interpreter: Some(interpreter),
            });
        }
        let executable = std::fs::metadata(path)
            .map(|metadata| metadata.permissions().mode() & 0o111 != 0)
            .unwrap_or(false);
        if executable {
            // Run directly: the program is a file of the skill as the run sees it, not an
            // interpreter whose folder the layout shows.
            return Ok(Command {
                program: seen.to_path_buf(),
                args: Vec::new(),
                interpreter: None,
            });
        }
        Err(ExecError::new(
            ErrorType::ScriptNotAllowed,
            format!(
                "`{}` has no known extension (.py, .js, .mjs, .cjs, .sh, .rb, .pl, .php) and is not executable",
                path.file_name()
                    .map(|name| name.to_string_lossy())
                    .unwrap_or_default()
            ),
        ))
    }

    /// The interpreter this executor runs a language's scripts with.
    #[must_use]
    pub fn interpreter_path(&self, language: Language) -> Option<PathBuf> {
        self.interpreter(language, Path::new("script")).ok()
    }

    /// Who must be able to run the interpreters of this executor's runs.
    #[must_use]
    pub fn reach(&self) -> Reach {
        Reach::for_layers(self.sandbox.layers)
    }

    fn interpreter(&self, language: Language, path: &Path) -> Result<PathBuf, ExecError> {
        let reach = self.reach();
        interpreter_for(language, reach)
            .map(|interpreter| interpreter.program.clone())
            .ok_or_else(|| {
                ExecError::new(
                    ErrorType::InterpreterNotFound,
                    format!(
                        "no `{}` interpreter{} is installed to run `{}`",
                        language.command_name(),
                        if reach == Reach::Runtime {
                            ""
                        } else {
                            " usable by the sandbox user"
                        },
                        path.file_name()
                            .map(|name| name.to_string_lossy())
                            .unwrap_or_default()
                    ),
                )
            })
    }

    /// The skill's folder on disk; archived skills are unpacked read-only on first use. Refuses
    /// a skill whose name could be read as a path: lenient loading keeps such skills listed
    /// with their diagnostics, but never runs them.
    fn skill_directory(&self, skill: &Skill) -> Result<PathBuf, ExecError> {
        check_runnable_name(skill.name())?;
        let directory = match &skill.source {
            SkillSource::Directory(directory) => {
                fs_err::canonicalize(directory.path()).map_err(|error| {
                    ExecError::new(
                        ErrorType::SkillNotFound,
                        format!("skill `{}` is no longer readable: {error}", skill.name()),
                    )
                })?
            }
            SkillSource::Archive(files) => self.unpack(skill, files)?,
        };
        self.check_working_directory([directory.as_path()])?;
        // In a minimal root the folder is bound, so only the folder itself (not the folders
        // above it on the host) must be open to the sandbox user.
        let isolated = self.isolated();
        let readable = if isolated {
            crate::sandbox::open_to_others(&directory)
        } else {
            crate::sandbox::readable_by_others(&directory)
        };
        if self.sandbox.layers.uid_drop && !readable {
            return Err(ExecError::new(
                ErrorType::SandboxUnavailable,
                format!(
                    "the sandbox user cannot read skill `{}` at `{}`; make the folder{} world-readable (chmod o+rx)",
                    skill.name(),
                    directory.display(),
                    if isolated { "" } else { " and its parents" }
                ),
            ));
        }
        Ok(directory)
    }

    /// The folder an archived skill runs from: `archives/<sha256 of the archive>` under the
    /// runtime folder, unpacked read-only on first use by any process sharing the runtime
    /// folder and reused by every later run (never named by anything the archive says). Each
    /// use touches it, so the sweep at start-up removes only copies unused for a day.
    fn unpack(
        &self,
        skill: &Skill,
        files: &skillbox_core::source::ArchivedFiles,
    ) -> Result<PathBuf, ExecError> {
        let io = |error: std::io::Error| {
            ExecError::new(
                ErrorType::ScriptNotFound,
                format!("cannot unpack skill `{}`: {error}", skill.name()),
            )
        };
        let archives = self.runtime_root.join(ARCHIVES_FOLDER);
        let directory = archives.join(files.content_digest());
        if touch(&directory).is_ok() {
            return Ok(directory);
        }
        // The first use writes every file of the archive.
        off_the_async_threads(|| unpack_once(files, &archives, &directory))
            .map(|()| directory)
            .map_err(io)
    }

    /// A uid of its own for one execution, when the sandbox drops to one.
    fn lease_uid(&self) -> Result<Option<crate::sandbox::UidLease>, ExecError> {
        if !self.sandbox.layers.uid_drop {
            return Ok(None);
        }
        self.sandbox
            .uids
            .lease()
            .map(Some)
            .map_err(|message| ExecError::new(ErrorType::SandboxUnavailable, message))
    }

    /// What every execution's environment starts from: the minimal base, `HOME` (the
    /// workspace), `TMPDIR`, `SKILLBOX_WORKSPACE`, the allowlist, and the secrets `secrets_of`
    /// declares (none without a skill).
    fn run_environment(
        &self,
        workspace: &Path,
        tmp: &Path,
        secrets_of: Option<&Skill>,
    ) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = BASE_ENVIRONMENT
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        env.push(("HOME".to_owned(), workspace.display().to_string()));
        env.push(("TMPDIR".to_owned(), tmp.display().to_string()));
        env.push((
            "SKILLBOX_WORKSPACE".to_owned(),
            workspace.display().to_string(),
        ));
        for name in &self.config.environment_allowlist {
            if let Ok(value) = std::env::var(name) {
                env.push((name.clone(), value));
            }
        }
        if let Some(skill) = secrets_of {
            for name in skill.declared_secrets() {
                if let Some(secret) = self.config.secrets.get(&name)
                    && secret.granted_to(skill.name())
                {
                    env.push((name, secret.value.clone()));
                }
            }
        }
        env
    }

    /// The file the audit lines go to, when the executor keeps an audit log.
    #[must_use]
    pub fn audit_log_path(&self) -> Option<&std::path::Path> {
        self.audit.as_ref().map(AuditLog::path)
    }

    fn audit(&self, record: AuditRecord) {
        if let Some(audit) = &self.audit {
            audit.append(&record);
        }
    }

    fn audit_failure(
        &self,
        kind: &'static str,
        skill: &str,
        target: &str,
        argument_count: usize,
        error: &ExecError,
    ) {
        self.audit(AuditRecord {
            timestamp_ms: now_ms(),
            kind,
            skill: skill.to_owned(),
            target: target.to_owned(),
            argument_count,
            duration_ms: 0,
            exit_code: None,
            stdout_bytes: 0,
            stderr_bytes: 0,
            truncated: false,
            sandbox_level: self.level,
            outcome: error.error_type.to_string(),
        });
    }
}

struct PreparedScript {
    command: Command,
    skill_directory: PathBuf,
}

/// The program a run starts, with its leading arguments.
struct Command {
    /// As the run sees it.
    program: PathBuf,
    args: Vec<OsString>,
    /// The interpreter binary on the host, whose installation folder the layout shows; `None`
    /// when a file of the skill is executed directly.
    interpreter: Option<PathBuf>,
}

/// The input and output settings of one process.
struct InvocationIo {
    stdin: Option<Vec<u8>>,
    timeout: Duration,
    max_output_bytes: usize,
    live_output: Option<crate::output::OutputSender>,
}

/// Most schema problems reported for one call.
const MAX_REPORTED_PROBLEMS: usize = 20;
/// Approximate size a compiled schema `pattern` may take, in bytes.
const PATTERN_SIZE_LIMIT_BYTES: usize = 1024 * 1024;

/// Refuse to run a skill whose name could be read as a path or hides characters (see
/// [`skillbox_core::skill::unsafe_name_reason`]).
///
/// # Errors
/// [`ErrorType::ScriptNotAllowed`] naming the skill and what to fix.
pub fn check_runnable_name(name: &str) -> Result<(), ExecError> {
    match skillbox_core::skill::unsafe_name_reason(name) {
        None => Ok(()),
        Some(problem) => Err(ExecError::new(
            ErrorType::ScriptNotAllowed,
            format!(
                "skill {name:?} cannot run: {problem}; a runnable skill's name is letters, digits, `-`, `_` and `.` (fix `name` in its SKILL.md or skill.toml)"
            ),
        )),
    }
}

fn outcome(error_type: Option<ErrorType>) -> String {
    error_type.map_or_else(|| "success".to_owned(), |error_type| error_type.to_string())
}

/// Find a script or handler inside a skill folder. `script` is a path relative to the skill,
/// or (when `search_scripts`) a bare file name found at the skill root or in `scripts/`.
/// Absolute paths, `..`, and symlinks resolving outside the skill are refused.
///
/// # Errors
/// [`ErrorType::ScriptNotAllowed`] or [`ErrorType::ScriptNotFound`], naming the script.
pub fn resolve_in_skill(
    skill_directory: &Path,
    script: &str,
    search_scripts: bool,
) -> Result<PathBuf, ExecError> {
    let not_allowed = |why: &str| {
        ExecError::new(
            ErrorType::ScriptNotAllowed,
            format!(
                "script `{script}` is not allowed: {why}; name a file inside the skill folder, e.g. `scripts/run.py`"
            ),
        )
    };
    if script.trim().is_empty() {
        return Err(not_allowed("it is empty"));
    }
    if Path::new(script).is_absolute() {
        return Err(not_allowed("absolute paths are refused"));
    }
    let relative = contained_relative_path(script)
        .map_err(|_| not_allowed("it climbs out of the skill with `..`"))?;
    let mut candidates = vec![skill_directory.join(&relative)];
    if search_scripts && !relative.contains('/') {
        candidates.push(skill_directory.join("scripts").join(&relative));
    }
    for candidate in candidates {
        let Ok(metadata) = std::fs::symlink_metadata(&candidate) else {
            continue;
        };
        let real =
            fs_err::canonicalize(&candidate).map_err(|_| not_allowed("it is a broken link"))?;
        if !real.starts_with(skill_directory) {
            return Err(not_allowed(
                "it resolves (through a symlink) outside the skill folder",
            ));
        }
        let target = if metadata.file_type().is_symlink() {
            std::fs::metadata(&real).map_err(|_| not_allowed("it is a broken link"))?
        } else {
            metadata
        };
        if !target.is_file() {
            return Err(not_allowed("it is not a regular file"));
        }
        return Ok(real);
    }
    Err(ExecError::new(
        ErrorType::ScriptNotFound,
        format!(
            "script `{script}` does not exist in skill folder `{}`{}",
            skill_directory.display(),
            if search_scripts && !script.contains('/') {
                " (looked at its root and in scripts/)"
            } else {
                ""
            }
        ),
    ))
}

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

/// Age after which a run folder left in the workspace root (by a runtime killed mid-run) is
/// removed when an executor starts. Generous, since other runtimes may share the root.
const STALE_RUN_AGE: Duration = Duration::from_secs(24 * 60 * 60);
/// The runtime folder's subfolder holding archived skills unpacked for runs, one folder per
/// archive content digest.
const ARCHIVES_FOLDER: &str = "archives";
/// What an archive's folder is called while it is being unpacked.
const STAGING_PREFIX: &str = ".unpacking-";

/// Remove run folders older than `age` that a killed runtime left behind.
fn sweep_stale_runs(root: &Path, age: Duration) {
    for entry in entries_untouched_for(root, age) {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !layout::RUN_FOLDER_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            continue;
        }
        match std::fs::remove_dir_all(entry.path()) {
            Ok(()) => {
                tracing::info!(folder = %entry.path().display(), "removed a stale run folder")
            }
            Err(error) => {
                tracing::warn!(folder = %entry.path().display(), %error, "cannot remove a stale run folder")
            }
        }
    }
}

/// The entries of `folder` last modified more than `age` ago (none when it cannot be read).
fn entries_untouched_for(folder: &Path, age: Duration) -> Vec<fs_err::DirEntry> {
    let Ok(entries) = fs_err::read_dir(folder) else {
        return Vec::new();
    };
    let now = std::time::SystemTime::now();
    entries
        .flatten()
        .filter(|entry| {
            entry
                .metadata()
                .and_then(|metadata| metadata.modified())
                .is_ok_and(|modified| {
                    now.duration_since(modified)
                        .is_ok_and(|elapsed| elapsed > age)
                })
        })
        .collect()
}

/// Write the handler bootstraps where the sandbox user can read them; returns their folder.
fn write_bootstraps(root: &Path) -> std::io::Result<PathBuf> {
    let directory = root.join(format!("bootstrap-{}", env!("CARGO_PKG_VERSION")));
    fs_err::create_dir_all(&directory)?;
    for (name, text) in [
        (
            "node_handler.mjs",
            include_str!("bootstrap/node_handler.mjs"),
        ),
        (
            "python_handler.py",
            include_str!("bootstrap/python_handler.py"),
        ),
        (
            "protocol_runner.py",
            include_str!("bootstrap/protocol_runner.py"),
        ),
        (
            "python-lib/runtime.py",
            include_str!("bootstrap/runtime.py"),
        ),
    ] {
        let path = directory.join(name);
        if fs_err::read_to_string(&path).ok().as_deref() != Some(text) {
            let folder = path.parent().unwrap_or(&directory);
            fs_err::create_dir_all(folder)?;
            fs_err::set_permissions(folder, std::fs::Permissions::from_mode(0o755))?;
            let file_name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let staging = folder.join(format!(".{file_name}.{}", uuid::Uuid::new_v4()));
            fs_err::write(&staging, text)?;
            fs_err::set_permissions(&staging, std::fs::Permissions::from_mode(0o644))?;
            fs_err::rename(&staging, &path)?;
        }
    }
    fs_err::set_permissions(&directory, std::fs::Permissions::from_mode(0o755))?;
    Ok(directory)
}

/// Unpack an archived skill into `directory` under `archives`, read-only. Unpacked beside the
/// final name and renamed into place whole: a process that finds the folder finds every file
/// in it.
fn unpack_once(
    files: &skillbox_core::source::ArchivedFiles,
    archives: &Path,
    directory: &Path,
) -> std::io::Result<()> {
    match fs_err::create_dir(archives) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(error),
    }
    let staging = archives.join(format!("{STAGING_PREFIX}{}", uuid::Uuid::new_v4().simple()));
    fs_err::create_dir(&staging)?;
    let unpacked = unpack_into(files, &staging)
        .and_then(|()| make_read_only_tree(&staging))
        .and_then(|()| fs_err::rename(&staging, directory));
    if let Err(error) = unpacked {
        let _ = remove_read_only_tree(&staging);
        // Another process may have put the same archive in place first.
        if touch(directory).is_ok() {
            return Ok(());
        }
        return Err(error);
    }
    Ok(())
}

/// Run blocking file work reached from an async call (a trust digest, an archive's first
/// unpack, collecting outputs) without holding up the other tasks of the async worker it runs
/// on: on a multi-threaded runtime the worker hands them to another thread first. The work
/// borrows the caller's data, so it cannot move to `spawn_blocking`. On a current-thread
/// runtime, or outside one, it simply runs here.
pub(crate) fn off_the_async_threads<R>(work: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) if runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

/// Write every file of an archived skill under `directory`, decompressed a buffer at a time.
fn unpack_into(
    files: &skillbox_core::source::ArchivedFiles,
    directory: &Path,
) -> std::io::Result<()> {
    use fs_err::os::unix::fs::OpenOptionsExt;
    for file in files.files() {
        // Archive paths were checked when the archive was read; they become host paths here,
        // so check again.
        let relative = contained_relative_path(&file.relative_path).map_err(|_| {
            std::io::Error::other(format!(
                "the archive names a path that leaves the skill: `{}`",
                file.relative_path
            ))
        })?;
        let path = directory.join(&relative);
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent)?;
        }
        let mut output = fs_err::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o555)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)?;
        files
            .copy_to(&relative, &mut output)
            .map_err(|error| std::io::Error::other(error.to_string()))?;
    }
    Ok(())
}

/// Set a folder's modification time to now; fails when it does not exist.
fn touch(directory: &Path) -> std::io::Result<()> {
    let now = std::fs::FileTimes::new().set_modified(std::time::SystemTime::now());
    fs_err::File::open(directory)?.set_times(now)
}

/// Remove a tree [`make_read_only_tree`] made (its folders are opened for writing first, which
/// the owner may always do); what cannot be removed is left and logged. Whether it is gone.
fn remove_read_only_tree(directory: &Path) -> bool {
    fn open_up(directory: &Path) -> std::io::Result<()> {
        fs_err::set_permissions(directory, std::fs::Permissions::from_mode(0o700))?;
        for entry in fs_err::read_dir(directory)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                open_up(&entry.path())?;
            }
        }
        Ok(())
    }
    let removed = open_up(directory).and_then(|()| fs_err::remove_dir_all(directory));
    if let Err(error) = &removed {
        tracing::warn!(folder = %directory.display(), %error, "cannot remove an unpacked archive");
    }
    removed.is_ok()
}

/// Remove unpacked archives no run has used for `age`, and staging folders a process left
/// behind when it stopped mid-unpack.
fn sweep_unused_archives(root: &Path, age: Duration) {
    for entry in entries_untouched_for(&root.join(ARCHIVES_FOLDER), age) {
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) && remove_read_only_tree(&entry.path())
        {
            tracing::info!(folder = %entry.path().display(), "removed an unused unpacked archive");
        }
    }
}

fn make_read_only_tree(directory: &Path) -> std::io::Result<()> {
    for entry in fs_err::read_dir(directory)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            make_read_only_tree(&entry.path())?;
        }
    }
    fs_err::set_permissions(directory, std::fs::Permissions::from_mode(0o555))
}

/// Servers run executions on a multi-threaded runtime: every public future must be `Send`.
#[allow(dead_code)]
fn executor_futures_are_send(
    executor: &Executor,
    catalog: &SkillCatalog,
    skill: &Skill,
    tool: &ToolDefinition,
) {
    fn is_send<T: Send>(_: T) {}
    is_send(executor.run(catalog, "skill", "script", &[], RunOptions::default()));
    is_send(executor.run_script(skill, "script", &[], RunOptions::default()));
    is_send(executor.run_command(skill, "true", RunOptions::default()));
    is_send(executor.call_tool(skill, tool, Value::Null, RunOptions::default()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_old_run_folders_are_swept() {
        let root = tempfile::tempdir().unwrap();
        for name in [
            "run-old",
            "protocol-run-old",
            "worker-old",
            "bootstrap-1",
            "run-new",
        ] {
            fs_err::create_dir_all(root.path().join(name).join("inside")).unwrap();
        }
        let long_ago = std::time::SystemTime::now() - Duration::from_secs(48 * 60 * 60);
        for name in ["run-old", "protocol-run-old", "worker-old", "bootstrap-1"] {
            let folder = fs_err::File::open(root.path().join(name)).unwrap();
            folder.file().set_modified(long_ago).unwrap();
        }
        sweep_stale_runs(root.path(), STALE_RUN_AGE);
        let mut left: Vec<String> = fs_err::read_dir(root.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["bootstrap-1", "run-new", "worker-old"]);
    }

    #[test]
    fn only_unpacked_archives_unused_for_a_day_are_swept() {
        let root = tempfile::tempdir().unwrap();
        let archives = root.path().join(ARCHIVES_FOLDER);
        let unused = "a".repeat(64);
        let staging = format!("{STAGING_PREFIX}1234");
        let used = "b".repeat(64);
        for name in [&unused, &staging, &used] {
            fs_err::create_dir_all(archives.join(name).join("scripts")).unwrap();
            fs_err::write(archives.join(name).join("scripts/run.py"), "print(1)").unwrap();
            make_read_only_tree(&archives.join(name)).unwrap();
        }
        let long_ago = std::time::SystemTime::now() - Duration::from_secs(48 * 60 * 60);
        for name in [&unused, &staging, &used] {
            let folder = fs_err::File::open(archives.join(name)).unwrap();
            folder.file().set_modified(long_ago).unwrap();
        }
        // A run touches the folder it uses.
        touch(&archives.join(&used)).unwrap();
        sweep_unused_archives(root.path(), STALE_RUN_AGE);
        let left: Vec<String> = fs_err::read_dir(&archives)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, [used]);
    }
}
