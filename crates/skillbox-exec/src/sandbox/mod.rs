//! The sandbox: one policy for every execution, applied by a small helper program that the
//! runtime starts in place of the script. The helper (see [`helper`]) sets up the layers the
//! host supports, in order, and then `execve`s the interpreter, so no policy code runs between
//! `fork` and `exec` inside the runtime.
//!
//! Layers, strongest first (see `docs/design/execution.md`):
//! 1. namespaces: new PID, network, mount, IPC and UTS namespaces; the script is PID 1 of its
//!    own namespace, so when it ends (or is killed) every process it started dies with it, and
//!    it has no network at all, loopback included;
//! 2. a non-root uid with no supplementary groups, an empty capability bounding set and
//!    `no_new_privs`;
//! 3. Landlock: read-only system folders and skill folder, a writable workspace, nothing else;
//!    no TCP bind/connect; no signals or abstract sockets outside the sandbox;
//! 4. seccomp: no sockets other than `AF_UNIX`, no ptrace, io_uring, bpf, mount, keyrings…;
//! 5. resource limits: processes, CPU time, address space, file size, open files, no core dumps.

pub mod helper;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// User and group id the probe drops to (`nobody`).
pub const SANDBOX_UID: u32 = 65534;
/// See [`SANDBOX_UID`].
pub const SANDBOX_GID: u32 = 65534;
/// First uid of the pool sandboxed executions run as when the runtime is root. Each live
/// execution gets its own uid (and gid), so `RLIMIT_NPROC` limits each run separately: a fork
/// bomb in one sandbox cannot starve another.
pub const SANDBOX_UID_POOL_START: u32 = 2_000_000;
/// Size of that pool (most executions alive at once).
pub const SANDBOX_UID_POOL_SIZE: u32 = 4_096;

/// Hands out uids from the sandbox pool, one per live execution.
#[derive(Debug, Default)]
pub struct UidPool {
    in_use: std::sync::Mutex<std::collections::BTreeSet<u32>>,
    next: std::sync::atomic::AtomicU32,
}

impl UidPool {
    /// The process-wide pool. It starts at an offset derived from the process id, so that two
    /// runtimes on one host rarely hand out the same uids.
    #[must_use]
    pub fn global() -> std::sync::Arc<Self> {
        static POOL: OnceLock<std::sync::Arc<UidPool>> = OnceLock::new();
        std::sync::Arc::clone(POOL.get_or_init(|| {
            std::sync::Arc::new(UidPool {
                in_use: std::sync::Mutex::default(),
                next: std::sync::atomic::AtomicU32::new(
                    std::process::id().wrapping_mul(7_919) % SANDBOX_UID_POOL_SIZE,
                ),
            })
        }))
    }

    /// Lease a uid not used by any other live execution.
    ///
    /// # Errors
    /// When every uid of the pool is in use.
    pub fn lease(self: &std::sync::Arc<Self>) -> Result<UidLease, String> {
        let mut in_use = self
            .in_use
            .lock()
            .map_err(|_| "the uid pool is poisoned".to_owned())?;
        for _ in 0..SANDBOX_UID_POOL_SIZE {
            let offset = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                % SANDBOX_UID_POOL_SIZE;
            let uid = SANDBOX_UID_POOL_START + offset;
            if in_use.insert(uid) {
                return Ok(UidLease {
                    uid,
                    pool: std::sync::Arc::clone(self),
                });
            }
        }
        Err(format!(
            "all {SANDBOX_UID_POOL_SIZE} sandbox uids are in use"
        ))
    }
}

/// A uid leased for one execution; returned to the pool when dropped.
#[derive(Debug)]
pub struct UidLease {
    /// The uid (also used as the gid).
    pub uid: u32,
    pool: std::sync::Arc<UidPool>,
}

impl Drop for UidLease {
    fn drop(&mut self) {
        if let Ok(mut in_use) = self.pool.in_use.lock() {
            in_use.remove(&self.uid);
        }
    }
}
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
/// Exit code the helper uses when it could not set the sandbox up (nothing ran).
pub const HELPER_SETUP_FAILED: i32 = 125;
/// Exit code the helper uses when the program could not be executed.
pub const HELPER_EXEC_FAILED: i32 = 127;

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
}

impl Default for ResourceLimits {
    fn default() -> Self {
        ResourceLimits {
            cpu_seconds: DEFAULT_CPU_SECONDS,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            file_size_bytes: DEFAULT_FILE_SIZE_BYTES,
            open_files: DEFAULT_OPEN_FILES,
            processes: DEFAULT_PROCESSES,
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
    /// Whether a skill may use the network.
    #[must_use]
    pub fn allows_network(&self, skill: &str) -> bool {
        self.network || self.network_skills.iter().any(|name| name == skill)
    }
}

/// What the host can do, as found by the helper's probe.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostSupport {
    /// The runtime runs as root (so the sandbox must drop to another uid).
    pub running_as_root: bool,
    /// Dropping to the sandbox uid works.
    pub uid_drop: bool,
    /// New PID, network, mount, IPC and UTS namespaces can be created.
    pub namespaces: bool,
    /// Landlock ABI version, when Landlock is enabled.
    pub landlock_abi: Option<i32>,
    /// seccomp filters can be installed.
    pub seccomp: bool,
    /// Why a layer is missing, per layer.
    pub notes: Vec<String>,
}

/// Which layers an execution gets, given the policy and the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxLayers {
    /// PID/network/mount/IPC/UTS namespaces.
    pub namespaces: bool,
    /// Drop to the sandbox uid (only when the runtime is root).
    pub uid_drop: bool,
    /// Landlock filesystem (and TCP) rules.
    pub landlock: bool,
    /// seccomp syscall filter.
    pub seccomp: bool,
}

/// The level an execution ran at, for results, audit lines and `doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxLevel {
    /// Clean environment, limits and process-tree cleanup only.
    None,
    /// Some layers missing.
    Partial,
    /// Every layer.
    Full,
}

impl SandboxLayers {
    /// Every layer the host supports (the uid drop only matters when running as root).
    #[must_use]
    pub fn available(support: &HostSupport) -> Self {
        SandboxLayers {
            namespaces: support.namespaces,
            uid_drop: support.running_as_root && support.uid_drop,
            landlock: support.landlock_abi.is_some(),
            seccomp: support.seccomp,
        }
    }

    /// No layers.
    #[must_use]
    pub fn none() -> Self {
        SandboxLayers {
            namespaces: false,
            uid_drop: false,
            landlock: false,
            seccomp: false,
        }
    }

    /// The level these layers amount to on a host.
    #[must_use]
    pub fn level(&self, support: &HostSupport) -> SandboxLevel {
        let uid_ok = self.uid_drop || !support.running_as_root;
        match (self.namespaces, uid_ok, self.landlock, self.seccomp) {
            (true, true, true, true) => SandboxLevel::Full,
            (false, false, false, false) => SandboxLevel::None,
            _ => SandboxLevel::Partial,
        }
    }

    /// Names of the missing layers, for warnings.
    #[must_use]
    pub fn missing(&self, support: &HostSupport) -> Vec<&'static str> {
        let mut missing = Vec::new();
        if !self.namespaces {
            missing.push("namespaces");
        }
        if support.running_as_root && !self.uid_drop {
            missing.push("uid drop");
        }
        if !self.landlock {
            missing.push("landlock");
        }
        if !self.seccomp {
            missing.push("seccomp");
        }
        missing
    }
}

/// Everything the helper needs to set up one execution; passed to it as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxPlan {
    /// Layers to apply.
    pub layers: SandboxLayers,
    /// Whether the network stays reachable (no network namespace, no TCP or socket rules).
    pub network: bool,
    /// Working directory; writable.
    pub workspace: PathBuf,
    /// Extra read-only (and executable) paths: the skill folder, the interpreter's prefix.
    pub readable: Vec<PathBuf>,
    /// Extra writable paths.
    pub writable: Vec<PathBuf>,
    /// Resource limits.
    pub limits: ResourceLimits,
    /// uid and gid to drop to when `layers.uid_drop`.
    pub uid: u32,
    /// See `uid`.
    pub gid: u32,
    /// Build a minimal root for the program (needs `layers.namespaces`); `None` keeps the
    /// host's file tree (narrowed by Landlock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<RootLayout>,
}

/// A minimal root file system, built by the helper inside the sandbox's own mount namespace
/// (the host sees none of it) and entered with `pivot_root`.
///
/// It always holds the system folders read-only ([`ROOT_SYSTEM_FOLDERS`], the symlinks the host
/// has in their place, and the [`ROOT_ETC_ENTRIES`] of `/etc`), a private `/proc`, a `/dev` with
/// only the harmless devices, and small writable `/tmp` and `/dev/shm` tmpfs mounts (the latter a
/// quarter of `tmp_bytes`). Everything else comes from `binds`.
/// The root itself is read-only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootLayout {
    /// An empty folder on the host; a tmpfs is mounted over it (inside the sandbox's mount
    /// namespace only) and becomes the new root.
    pub mount_point: PathBuf,
    /// Host paths shown inside the root.
    pub binds: Vec<BindMount>,
    /// Empty folders created inside the root (absolute).
    pub folders: Vec<PathBuf>,
    /// Symlinks created inside the root: `(link, target)`.
    pub symlinks: Vec<(PathBuf, PathBuf)>,
    /// Size of the writable `/tmp`, in bytes.
    pub tmp_bytes: u64,
}

/// One host path shown inside a [`RootLayout`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BindMount {
    /// The path on the host (a file or a folder).
    pub source: PathBuf,
    /// Where it appears inside the root (absolute).
    pub target: PathBuf,
    /// Writable (otherwise read-only, and never setuid or device files).
    pub writable: bool,
}

/// Host folders a [`RootLayout`] shows read-only at the same place (when they exist). A host
/// that has a symlink there (merged `/usr`) gets the same symlink.
pub const ROOT_SYSTEM_FOLDERS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32"];

/// The parts of `/etc` a [`RootLayout`] shows: what the dynamic loader, locale, time zone,
/// TLS, name lookup and MIME guessing need; no credentials, no host configuration.
pub const ROOT_ETC_ENTRIES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/locale.alias",
    "/etc/mime.types",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/protocols",
    "/etc/services",
];

/// System folders every sandboxed program may read and execute from.
pub const SYSTEM_READ_PATHS: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/etc",
    "/opt",
    "/proc",
    "/sys/devices/system/cpu",
];

/// How to start the helper: a program and the arguments before the helper's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelperCommand {
    /// The helper executable (the `skillbox-sandbox` binary, or the `skillbox` binary itself).
    pub program: PathBuf,
    /// Arguments that select the helper (e.g. `["__sandbox"]` for the `skillbox` binary).
    pub leading_args: Vec<String>,
}

impl HelperCommand {
    /// The `skillbox-sandbox` binary next to the current executable (or one directory up, as
    /// cargo lays out test binaries).
    #[must_use]
    pub fn beside_current_executable() -> Option<Self> {
        let current = std::env::current_exe().ok()?;
        let directory = current.parent()?;
        [
            directory.join("skillbox-sandbox"),
            directory.parent()?.join("skillbox-sandbox"),
        ]
        .into_iter()
        .find(|candidate| candidate.is_file())
        .map(|program| HelperCommand {
            program,
            leading_args: Vec::new(),
        })
    }

    /// Ask the helper what the host supports (cached for the life of the process).
    pub fn probe(&self) -> &'static HostSupport {
        static SUPPORT: OnceLock<HostSupport> = OnceLock::new();
        SUPPORT.get_or_init(|| self.probe_uncached())
    }

    fn probe_uncached(&self) -> HostSupport {
        let output = std::process::Command::new(&self.program)
            .args(&self.leading_args)
            .arg("probe")
            .env_clear()
            .stdin(std::process::Stdio::null())
            .output();
        match output {
            Ok(output) if output.status.success() => serde_json::from_slice(&output.stdout)
                .unwrap_or_else(|error| HostSupport {
                    notes: vec![format!(
                        "the sandbox probe printed something unreadable: {error}"
                    )],
                    ..HostSupport::default()
                }),
            Ok(output) => HostSupport {
                notes: vec![format!(
                    "the sandbox probe failed: {}",
                    String::from_utf8_lossy(&output.stderr).trim()
                )],
                ..HostSupport::default()
            },
            Err(error) => HostSupport {
                notes: vec![format!(
                    "the sandbox helper `{}` cannot be started: {error}",
                    self.program.display()
                )],
                ..HostSupport::default()
            },
        }
    }
}

/// Whether a folder itself can be listed and entered by a user other than its owner (its
/// parents are not checked: for folders bind-mounted into a minimal root).
#[must_use]
pub fn folder_open_to_others(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|metadata| metadata.permissions().mode() & 0o005 == 0o005)
}

/// Whether a path can be read (and, for folders, entered) by a user other than its owner —
/// that is, by the sandbox uid — checking every ancestor folder.
#[must_use]
pub fn readable_by_others(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let mut current = Some(path);
    let mut first = true;
    while let Some(part) = current {
        let Ok(metadata) = std::fs::metadata(part) else {
            return false;
        };
        let mode = metadata.permissions().mode();
        let needed = if metadata.is_dir() {
            0o005
        } else if first {
            0o004
        } else {
            0o001
        };
        if mode & needed != needed {
            return false;
        }
        first = false;
        current = part
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty());
    }
    true
}
