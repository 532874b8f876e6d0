//! The operator's sandbox policy: how hard to insist on the sandbox ([`SandboxMode`]), who may
//! use the network, and the [`ResourceLimits`] every sandboxed process gets, with their
//! defaults.

use serde::{Deserialize, Serialize};

/// Default CPU time per execution, in seconds.
pub const DEFAULT_CPU_SECONDS: u64 = 60;
/// Default address-space limit per process, in bytes.
pub const DEFAULT_MEMORY_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// Default largest file a script may write, in bytes.
pub const DEFAULT_FILE_SIZE_BYTES: u64 = 256 * 1024 * 1024;
/// Default open files per process.
pub const DEFAULT_OPEN_FILES: u64 = 256;
/// Default processes (and threads) the sandbox uid may have.
pub const DEFAULT_PROCESSES: u64 = 64;
/// Default memory of all a run's processes together (their tmpfs pages included), in bytes,
/// where the host gives each run a control group.
pub const DEFAULT_RUN_MEMORY_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// Default size limit of everything a run writes in its workspace, in bytes (enforced where the
/// workspace is a scratch tmpfs: on hosts with namespaces).
pub const DEFAULT_WORKSPACE_BYTES: u64 = 512 * 1024 * 1024;

/// How hard to insist on the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// No isolation beyond a clean environment, limits and process-tree cleanup.
    Off,
    /// Every layer the host supports; run weaker (with a warning) where it lacks one.
    #[default]
    BestEffort,
    /// Refuse to run unless every layer is available.
    Required,
}

/// Resource limits applied to every sandboxed process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceLimits {
    /// CPU seconds (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Address space in bytes (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// Largest file written, in bytes (`RLIMIT_FSIZE`).
    pub file_size_bytes: u64,
    /// Open file descriptors (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// Processes of the sandbox uid (`RLIMIT_NPROC`); holds against fork bombs.
    pub processes: u64,
    /// Everything written in the workspace together, in bytes.
    #[serde(default = "default_workspace_bytes")]
    pub workspace_bytes: u64,
    /// Memory of all the run's processes together, in bytes (a control group per run; the
    /// process limit above then also caps the run's tasks as a whole).
    #[serde(default = "default_run_memory_bytes")]
    pub run_memory_bytes: u64,
}

fn default_run_memory_bytes() -> u64 {
    DEFAULT_RUN_MEMORY_BYTES
}

fn default_workspace_bytes() -> u64 {
    DEFAULT_WORKSPACE_BYTES
}

impl Default for ResourceLimits {
    fn default() -> Self {
        ResourceLimits {
            cpu_seconds: DEFAULT_CPU_SECONDS,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            file_size_bytes: DEFAULT_FILE_SIZE_BYTES,
            open_files: DEFAULT_OPEN_FILES,
            processes: DEFAULT_PROCESSES,
            workspace_bytes: DEFAULT_WORKSPACE_BYTES,
            run_memory_bytes: DEFAULT_RUN_MEMORY_BYTES,
        }
    }
}

/// The operator's sandbox policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxPolicy {
    /// How hard to insist.
    pub mode: SandboxMode,
    /// Whether scripts may use the network (off by default; per skill via [`SandboxPolicy::network_skills`]).
    pub network: bool,
    /// Skills allowed network access even when `network` is off.
    pub network_skills: Vec<String>,
    /// Resource limits.
    pub limits: ResourceLimits,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy {
            mode: SandboxMode::BestEffort,
            network: false,
            network_skills: Vec::new(),
            limits: ResourceLimits::default(),
        }
    }
}

impl SandboxPolicy {
    /// Whether `copy` of the skill `skill` may use the network: every skill with
    /// `--allow-network`; with `--allow-network-for NAME`, only the copy of that name a grant by
    /// name reaches ([`crate::SkillCopy::takes_grants_by_name`]).
    #[must_use]
    pub fn allows_network(&self, skill: &str, copy: crate::SkillCopy) -> bool {
        self.network
            || (copy.takes_grants_by_name() && self.network_skills.iter().any(|name| name == skill))
    }
}
