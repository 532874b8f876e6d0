//! The executor: the one place skills' code runs. `run_script` is seed 002's `use_skill`;
//! `call_tool` runs a `tools.json` handler. Both resolve what to run inside the skill, prepare a
//! fresh workspace, apply the sandbox, enforce limits, capture capped output and write the
//! audit line.
//!
//! This file holds the [`Executor`], its configuration and what every kind of run shares (its
//! environment, its process, its audit line). Each kind of call and each piece of the runtime
//! folder's upkeep has a module of its own:
//! - `scripts`: scripts and preprocessing commands, answered with a [`ScriptResult`];
//! - `tool_calls`: `tools.json` handlers, their arguments checked against the tool's schema,
//!   answered with a [`ToolCallResult`];
//! - [`python_run`]: Skills Protocol runs;
//! - `skill_files`: the skill's folder on disk, the file a call names in it, and the program
//!   that runs that file;
//! - `pinned`: the trust check, and the verified copy a skill pinned by trust runs from;
//! - [`layout`]: the file-system layout every run gets;
//! - `archives`: archived skills unpacked for runs, and their sweep;
//! - `bootstraps`: the handler bootstraps and runners written to the runtime folder;
//! - `sweep`: run folders that killed runtimes left behind, removed at start-up.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use skillbox_core::{Skill, SkillCatalog, ToolDefinition};
use skillbox_trust::TrustGate;
use skillbox_trust::store::SkillStore;

use crate::audit::{AuditLog, AuditRecord, now_ms};
use crate::error::{ErrorType, ExecError};
use crate::process::{Invocation, SandboxRuntime};
use crate::sandbox::{
    HelperCommand, HostSupport, SandboxLayers, SandboxLevel, SandboxMode, SandboxPolicy,
};
use crate::workers::{WorkerPool, WorkerPoolConfig};
use archives::sweep_unused_archives;
use bootstraps::write_bootstraps;
use layout::{LayoutRequest, RunLayout, SANDBOX_SKILL_DIR, Shown};
use skill_files::SkillFiles;
use sweep::{STALE_RUN_AGE, sweep_stale_runs};

mod archives;
mod bootstraps;
pub mod layout;
mod package_servers;
mod pinned;
pub mod python_run;
mod scripts;
pub mod servers;
mod skill_files;
mod sweep;
mod tool_calls;

pub use package_servers::SANDBOX_PACKAGE_DIR;
pub use scripts::{MAX_SCRIPT_ARGUMENT_BYTES, MAX_SCRIPT_ARGUMENTS, ScriptResult};
pub use servers::{ServerLaunch, ServerProcess};
pub use skill_files::{check_runnable_name, resolve_in_skill};
pub use tool_calls::{
    ARGUMENT_CHECK_BUDGET, MIN_HANDLER_OUTPUT_BYTES, PATTERN_BACKTRACK_LIMIT, ToolCallResult,
};

/// Default wall-clock limit per execution, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// Default bytes kept per output stream.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 20 * 1024;
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
    /// [`skillbox_trust`] for the gate the command line builds over project folders).
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

    /// Whether the copy in effect of `skill` may receive it.
    #[must_use]
    pub fn granted_to(&self, skill: &str) -> bool {
        self.granted_to_copy(skill, SkillCopy::InEffect)
    }

    /// Whether `copy` of `skill` may receive it: a secret granted to skills by name reaches
    /// only the copy of that name in effect, never another version asked for explicitly (a
    /// copy in an earlier, less trusted root, say), nor a copy in effect whose name another
    /// root holds too ([`SkillCopy::Contested`]); one granted to every declaring skill reaches
    /// every copy.
    #[must_use]
    pub fn granted_to_copy(&self, skill: &str, copy: SkillCopy) -> bool {
        match &self.skills {
            None => true,
            Some(skills) => copy.takes_grants_by_name() && skills.contains(skill),
        }
    }
}

/// Which copy of its name a skill is, as grants given to a name see it. The operator grants a
/// secret (`--secret NAME:skill`) or the network (`--allow-network-for skill`) to a name,
/// meaning the skill that name gives; the catalog may hold other copies of it (other versions,
/// in earlier roots or the same one), reachable only by asking for their version, and those
/// never get it. Nor does the copy in effect when its name is contested: another root holds it
/// and one of the two is a default root (a skill an install or a cloned project put beside the
/// user's own), so which copy is in effect was not the person's choice and the grant may have
/// meant the other; it reaches neither, and the command line says so.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkillCopy {
    /// The copy the catalog gives for the name without a version: the latest root's, its
    /// highest version, and no other root holds the name. What every lookup by name runs.
    #[default]
    InEffect,
    /// The copy in effect, while a copy in another root contests the name
    /// ([`SkillCatalog::contesting_copies`]).
    Contested,
    /// Another copy of the name, asked for by its version.
    Other,
}

impl SkillCopy {
    /// Which copy of its name `skill` (from `catalog`) is: the catalog decides
    /// ([`SkillCatalog::is_latest`], [`SkillCatalog::contesting_copies`]).
    #[must_use]
    pub fn in_catalog(catalog: &SkillCatalog, skill: &Skill) -> Self {
        if !catalog.is_latest(skill) {
            SkillCopy::Other
        } else if catalog.contesting_copies(skill).next().is_some() {
            SkillCopy::Contested
        } else {
            SkillCopy::InEffect
        }
    }

    /// Whether a grant given to the skill's name reaches this copy.
    #[must_use]
    pub fn takes_grants_by_name(self) -> bool {
        self == SkillCopy::InEffect
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
    /// Verified, read-only copies that skills pinned by trust run from (`store/` in the
    /// runtime folder).
    skill_store: SkillStore,
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
        let skill_store = SkillStore::open(&runtime_root.join(pinned::STORE_FOLDER))
            .map_err(|error| unavailable(error.to_string()))?;
        skill_store.sweep_unused(STALE_RUN_AGE);
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
            skill_store,
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

    /// The layout request of a script, handler or command: the skill at its fixed path, and
    /// also at its own host path, read-only, because instructions give models that path
    /// (`${SKILL_DIR}`) and models pass files of the skill to its scripts by it. A skill that
    /// runs from a verified copy shows the copy at both.
    fn skill_request(&self, files: &SkillFiles, interpreter: Option<&Path>) -> LayoutRequest {
        let mut skills = vec![self.shown(&files.directory, Path::new(SANDBOX_SKILL_DIR))];
        if self.isolated() && layout::may_show_at_host_path(&files.host_path) {
            skills.push(Shown {
                host: files.directory.clone(),
                inside: files.host_path.clone(),
            });
        }
        LayoutRequest {
            skills,
            interpreter: interpreter.map(Path::to_path_buf),
            ..LayoutRequest::default()
        }
    }

    /// One process of a skill in its layout, with the skill's environment.
    fn invocation(
        &self,
        skill: (&Skill, SkillCopy),
        skill_directory: &Path,
        layout: &RunLayout,
        program: PathBuf,
        args: Vec<OsString>,
        io: InvocationIo,
    ) -> Invocation {
        let (skill, copy) = skill;
        let mut env = self.run_environment(&layout.workspace, &layout.tmp, Some((skill, copy)));
        let seen = self
            .shown(skill_directory, Path::new(SANDBOX_SKILL_DIR))
            .inside;
        env.push(("SKILLBOX_SKILL_DIR".to_owned(), seen.display().to_string()));
        Invocation {
            program,
            args,
            env,
            workspace: layout.workspace.clone(),
            working_directory: None,
            readable: layout.readable.clone(),
            network: self.config.policy.allows_network(skill.name(), copy),
            stdin: io.stdin,
            timeout: io.timeout,
            max_output_bytes: io.max_output_bytes,
            live_output: io.live_output,
            uid: layout.uid(),
            stderr_tail_bytes: 0,
            root: layout.root.clone(),
        }
    }

    /// A uid of its own for one execution, when the sandbox drops to one.
    fn lease_uid(&self) -> Result<Option<crate::sandbox::UidLease>, ExecError> {
        if !self.sandbox.layers.uid_drop {
            return Ok(None);
        }
        let lease = self
            .sandbox
            .uids
            .lease()
            .map_err(|message| ExecError::new(ErrorType::SandboxUnavailable, message))?;
        // With namespaces a run's processes die with its namespace; without, what a killed
        // runtime's run left keeps its uid, and is ended before the uid runs anything again.
        if !self.sandbox.layers.namespaces {
            let ended = crate::sandbox::stray_processes::end_processes_of_uid(lease.uid);
            if ended > 0 {
                tracing::warn!(
                    uid = lease.uid,
                    ended,
                    "ended processes an earlier run left on a sandbox uid"
                );
            }
        }
        Ok(Some(lease))
    }

    /// What every execution's environment starts from: the minimal base, `HOME` (the
    /// workspace), `TMPDIR`, `SKILLBOX_WORKSPACE`, the allowlist, and the secrets `secrets_of`
    /// declares that are granted to that copy of it (none without a skill).
    fn run_environment(
        &self,
        workspace: &Path,
        tmp: &Path,
        secrets_of: Option<(&Skill, SkillCopy)>,
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
        if let Some((skill, copy)) = secrets_of {
            for name in skill.declared_secrets() {
                if let Some(secret) = self.config.secrets.get(&name)
                    && secret.granted_to_copy(skill.name(), copy)
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

fn outcome(error_type: Option<ErrorType>) -> String {
    error_type.map_or_else(|| "success".to_owned(), |error_type| error_type.to_string())
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
    is_send(executor.call_tool_as(
        skill,
        SkillCopy::Other,
        tool,
        Value::Null,
        RunOptions::default(),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillbox_core::{CatalogOptions, RootOrigin, SkillRoot};

    fn write_skill(root: &Path, name: &str) {
        let folder = root.join(name);
        fs_err::create_dir_all(&folder).unwrap();
        fs_err::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: The {name} skill.\n---\nBody.\n"),
        )
        .unwrap();
    }

    #[test]
    fn a_name_a_default_root_contests_takes_no_grant_by_name() {
        let user = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        write_skill(user.path(), "private");
        write_skill(project.path(), "private");
        write_skill(project.path(), "alone");
        let catalog_over = |origins: [RootOrigin; 2]| {
            SkillCatalog::load(&CatalogOptions {
                roots: vec![
                    SkillRoot {
                        path: user.path().to_path_buf(),
                        origin: origins[0],
                    },
                    SkillRoot {
                        path: project.path().to_path_buf(),
                        origin: origins[1],
                    },
                ],
                ..CatalogOptions::default()
            })
            .unwrap()
        };
        // Roots the person named in order: the later copy is the one they mean.
        let chosen = catalog_over([RootOrigin::Explicit, RootOrigin::Explicit]);
        assert_eq!(
            SkillCopy::in_catalog(&chosen, chosen.get("private").unwrap()),
            SkillCopy::InEffect
        );
        // A project's copy over the user's own: which wins is not the person's choice.
        let catalog = catalog_over([RootOrigin::User, RootOrigin::Project]);
        let contested = catalog.get("private").unwrap();
        let alone = catalog.get("alone").unwrap();
        assert_eq!(
            SkillCopy::in_catalog(&catalog, contested),
            SkillCopy::Contested
        );
        assert_eq!(SkillCopy::in_catalog(&catalog, alone), SkillCopy::InEffect);
        let by_name = Secret {
            value: "v".to_owned(),
            skills: Some(BTreeSet::from(["private".to_owned(), "alone".to_owned()])),
        };
        assert!(!by_name.granted_to_copy("private", SkillCopy::Contested));
        assert!(by_name.granted_to_copy("alone", SkillCopy::InEffect));
        assert!(
            Secret::for_any_declaring_skill("v").granted_to_copy("private", SkillCopy::Contested)
        );
        let policy = crate::sandbox::SandboxPolicy {
            network_skills: vec!["private".to_owned(), "alone".to_owned()],
            ..crate::sandbox::SandboxPolicy::default()
        };
        assert!(!policy.allows_network("private", SkillCopy::Contested));
        assert!(!policy.allows_network("alone", SkillCopy::Other));
        assert!(policy.allows_network("alone", SkillCopy::InEffect));
    }
}
