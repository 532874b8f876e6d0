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
//! 4. seccomp: no sockets other than `AF_UNIX`, no ptrace, io_uring, bpf, mount, keyrings…, and,
//!    when runs see host paths, no metadata changes (chmod, chown, times, xattrs succeed as no-ops);
//! 5. resource limits: processes, CPU time, address space, file size, open files, no core dumps.

pub mod cgroups;
pub mod helper;
pub(crate) mod stray_processes;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// User and group id the probe drops to (`nobody`).
pub const SANDBOX_UID: u32 = 65534;
/// See [`SANDBOX_UID`].
pub const SANDBOX_GID: u32 = 65534;
/// First uid of the pool sandboxed executions run as when the runtime is root. Each live
/// execution gets its own uid (and gid), so `RLIMIT_NPROC` limits each run separately: a fork
/// bomb in one sandbox cannot starve another. The pool sits above 2^31, where no account
/// allocator hands out uids (SSSD's default range ends at 2,000,200,000; systemd's ranges end
/// below 2^31), so no real user can share a sandbox uid and read its processes.
pub const SANDBOX_UID_POOL_START: u32 = 3_000_000_000;
/// Size of that pool (most executions alive at once).
pub const SANDBOX_UID_POOL_SIZE: u32 = 4_096;

/// Folder of per-uid lock files shared by every skillbox runtime on the host. A runtime holds
/// an exclusive `flock` on `<uid>` for as long as an execution runs as that uid, so two runtimes
/// (or two pools) never hand out the same uid at once.
pub const UID_LOCK_DIRECTORY: &str = "/run/skillbox-uids";

/// Hands out uids from the sandbox pool, one per live execution, host-wide: a uid is in use by
/// this pool (an in-process set) or by any other runtime (its lock file is locked).
#[derive(Debug)]
pub struct UidPool {
    in_use: std::sync::Mutex<std::collections::BTreeSet<u32>>,
    next: std::sync::atomic::AtomicU32,
    lock_directory: PathBuf,
    prepared: OnceLock<Result<PathBuf, String>>,
}

impl Default for UidPool {
    /// A pool that coordinates through [`UID_LOCK_DIRECTORY`].
    fn default() -> Self {
        UidPool::with_lock_directory(Path::new(UID_LOCK_DIRECTORY), 0)
    }
}

impl UidPool {
    /// A pool coordinating with other runtimes through the lock files in `lock_directory`,
    /// trying uids from `SANDBOX_UID_POOL_START + first_offset` on.
    #[must_use]
    pub fn with_lock_directory(lock_directory: &Path, first_offset: u32) -> Self {
        UidPool {
            in_use: std::sync::Mutex::default(),
            next: std::sync::atomic::AtomicU32::new(first_offset % SANDBOX_UID_POOL_SIZE),
            lock_directory: lock_directory.to_path_buf(),
            prepared: OnceLock::new(),
        }
    }

    /// The process-wide pool. It starts at an offset derived from the process id so that
    /// runtimes rarely contend for the same lock files; the locks make sharing impossible.
    #[must_use]
    pub fn global() -> std::sync::Arc<Self> {
        static POOL: OnceLock<std::sync::Arc<UidPool>> = OnceLock::new();
        std::sync::Arc::clone(POOL.get_or_init(|| {
            std::sync::Arc::new(UidPool::with_lock_directory(
                Path::new(UID_LOCK_DIRECTORY),
                std::process::id().wrapping_mul(7_919),
            ))
        }))
    }

    fn lock_directory(&self) -> Result<&Path, String> {
        self.prepared
            .get_or_init(|| {
                crate::private_directory::ensure_private_directory(&self.lock_directory, 0o700)
                    .map_err(|error| format!("cannot prepare the sandbox uid locks: {error}"))
            })
            .as_deref()
            .map_err(Clone::clone)
    }

    /// Lease a uid no other live execution (of this or any other runtime) uses.
    ///
    /// # Errors
    /// When every uid of the pool is in use, or the lock folder cannot be used.
    pub fn lease(self: &std::sync::Arc<Self>) -> Result<UidLease, String> {
        let directory = self.lock_directory()?;
        let mut in_use = self
            .in_use
            .lock()
            .map_err(|_| "the uid pool is poisoned".to_owned())?;
        for _ in 0..SANDBOX_UID_POOL_SIZE {
            let offset = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                % SANDBOX_UID_POOL_SIZE;
            let uid = SANDBOX_UID_POOL_START + offset;
            if in_use.contains(&uid) {
                continue;
            }
            let path = directory.join(uid.to_string());
            let file = fs_err::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|error| format!("cannot claim a sandbox uid: {error}"))?;
            match nix::fcntl::Flock::lock(
                file.into_parts().0,
                nix::fcntl::FlockArg::LockExclusiveNonblock,
            ) {
                Ok(lock) => {
                    in_use.insert(uid);
                    return Ok(UidLease {
                        uid,
                        pool: std::sync::Arc::clone(self),
                        _lock: lock,
                    });
                }
                Err((_, nix::errno::Errno::EWOULDBLOCK)) => continue,
                Err((_, error)) => {
                    return Err(format!(
                        "cannot lock `{}` to claim a sandbox uid: {error}",
                        path.display()
                    ));
                }
            }
        }
        Err(format!(
            "all {SANDBOX_UID_POOL_SIZE} sandbox uids are in use"
        ))
    }
}

/// A uid leased for one execution; returned to the pool (and its lock released) when dropped.
#[derive(Debug)]
pub struct UidLease {
    /// The uid (also used as the gid).
    pub uid: u32,
    pool: std::sync::Arc<UidPool>,
    _lock: nix::fcntl::Flock<std::fs::File>,
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
/// Default memory of all a run's processes together (their tmpfs pages included), in bytes,
/// where the host gives each run a control group.
pub const DEFAULT_RUN_MEMORY_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// Default size limit of everything a run writes in its workspace, in bytes (enforced where the
/// workspace is a scratch tmpfs: on hosts with namespaces).
pub const DEFAULT_WORKSPACE_BYTES: u64 = 512 * 1024 * 1024;
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
    /// A control group per run can be made (memory and tasks of the whole run bounded).
    #[serde(default)]
    pub cgroups: bool,
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
    /// A control group per run (not part of the level: many hosts do not delegate one).
    #[serde(default)]
    pub cgroups: bool,
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

impl SandboxLevel {
    /// The level's name, as results, audit lines and the configuration spell it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxLevel::None => "none",
            SandboxLevel::Partial => "partial",
            SandboxLevel::Full => "full",
        }
    }
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
            cgroups: support.cgroups,
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
            cgroups: false,
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

/// Everything the helper needs to set up one execution; passed to it as JSON. A field the
/// helper does not know is refused: a helper older than its runtime must fail, never run a
/// program without a setting it cannot read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxPlan {
    /// Layers to apply.
    pub layers: SandboxLayers,
    /// Whether the network stays reachable (no network namespace, no TCP or socket rules).
    pub network: bool,
    /// The writable workspace; the working directory unless `working_directory` says another.
    pub workspace: PathBuf,
    /// Where the program starts, when not the workspace (a skill's MCP server starts in its
    /// skill's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_directory: Option<PathBuf>,
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
    /// Limits of the run's own control group, when the host gives each run one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<cgroups::GroupLimits>,
    /// A random token the helper puts in its own error lines, so the runtime can tell them
    /// from look-alike lines a program prints.
    #[serde(default)]
    pub setup_token: String,
    /// Build a minimal root for the program (needs `layers.namespaces`); `None` keeps the
    /// host's file tree (narrowed by Landlock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<RootLayout>,
}

/// Where the writable workspace appears inside every minimal root.
pub const ROOT_WORKSPACE: &str = "/workspace";

/// A minimal root file system, built by the helper inside the sandbox's own mount namespace
/// (the host sees none of it) and entered with `pivot_root`. Every kind of run gets one on hosts
/// with namespaces; only the binds differ.
///
/// It always holds the system folders read-only ([`ROOT_SYSTEM_FOLDERS`], the symlinks the host
/// has in their place, and the [`ROOT_ETC_ENTRIES`] of `/etc`), a private `/proc`, a `/dev` with
/// only the harmless devices, small writable `/tmp` and `/dev/shm` tmpfs mounts (the latter a
/// quarter of `tmp_bytes`), and the workspace at [`ROOT_WORKSPACE`]. Everything else comes from
/// `binds`. The root itself is read-only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootLayout {
    /// An empty folder on the host; a tmpfs is mounted over it (inside the sandbox's mount
    /// namespace only) and becomes the new root. Concurrent runs may share it.
    pub mount_point: PathBuf,
    /// Host paths shown inside the root, read-only.
    pub binds: Vec<BindMount>,
    /// Empty folders created inside the root (absolute).
    pub folders: Vec<PathBuf>,
    /// Size of the writable `/tmp`, in bytes.
    pub tmp_bytes: u64,
    /// What the workspace is.
    pub workspace: WorkspaceMount,
    /// Folders created inside the workspace before the program starts (relative paths).
    pub workspace_folders: Vec<PathBuf>,
    /// Files to copy out of the workspace once the program has ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_copy: Option<OutputCopy>,
}

/// The workspace of a minimal root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkspaceMount {
    /// A fresh tmpfs of at most `bytes`, owned by the run's uid, gone when the run ends: the
    /// runtime never touches a folder the sandbox could write.
    Scratch {
        /// Size limit of everything the run writes there.
        bytes: u64,
    },
    /// A host folder chosen by the operator (`--workdir`), writable.
    Host {
        /// The folder.
        source: PathBuf,
    },
}

/// Regular files the helper copies out of a scratch workspace after the program (and every
/// process of its PID namespace) has ended, into a host folder only the runtime can write.
/// Links and special files are never followed or copied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputCopy {
    /// The folder inside the workspace (relative, e.g. `out`).
    pub source: PathBuf,
    /// An existing, empty host folder that receives the files.
    pub destination: PathBuf,
    /// A host file (created) that lists what was not copied and why, one line each.
    pub report: PathBuf,
    /// Most files copied.
    pub max_files: usize,
    /// Most bytes copied in total.
    pub max_bytes: u64,
}

/// Most entries of a run's `out/` (files, folders, links alike) the output copy looks at. Empty
/// files and folders cost a run next to nothing of its size limit, so without this bound the
/// copy (as root) and the runtime would list, mirror and report any number of them.
pub const MAX_OUTPUT_ENTRIES: usize = 10_000;
/// Most lines of notes about `out/` entries that were not collected; the rest are counted.
pub const MAX_OUTPUT_NOTES: usize = 100;

/// Why `out/` entries were not collected: at most [`MAX_OUTPUT_NOTES`] lines, the rest counted,
/// and whether the walk stopped at [`MAX_OUTPUT_ENTRIES`].
#[derive(Debug, Default)]
pub struct OutputNotes {
    lines: Vec<String>,
    unlisted: usize,
    entries: usize,
    stopped: bool,
}

impl OutputNotes {
    /// Note one entry that was not collected.
    pub fn push(&mut self, line: String) {
        if self.lines.len() < MAX_OUTPUT_NOTES {
            self.lines.push(line);
        } else {
            self.unlisted += 1;
        }
    }

    /// Count one more entry looked at; `false` once [`MAX_OUTPUT_ENTRIES`] were (the walk then
    /// stops).
    pub fn look_at_one_more(&mut self) -> bool {
        if self.entries >= MAX_OUTPUT_ENTRIES {
            self.stopped = true;
            return false;
        }
        self.entries += 1;
        true
    }

    /// Whether the walk stopped at the entry limit.
    #[must_use]
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The lines, with one line for the uncounted rest and one when the walk stopped.
    #[must_use]
    pub fn into_lines(self) -> Vec<String> {
        let mut lines = self.lines;
        if self.unlisted > 0 {
            lines.push(format!(
                "out/: {} more entries not collected (not listed one by one)",
                self.unlisted
            ));
        }
        if self.stopped {
            lines.push(format!(
                "out/: more than {MAX_OUTPUT_ENTRIES} entries; the rest were not looked at"
            ));
        }
        lines
    }
}

/// One host path shown inside a [`RootLayout`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BindMount {
    /// The path on the host (a file or a folder).
    pub source: PathBuf,
    /// Where it appears inside the root (absolute).
    pub target: PathBuf,
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

/// Host paths a sandboxed program may read and execute from on hosts without namespaces
/// (where it sees the host's tree, narrowed by Landlock): the system folders, the same parts of
/// `/etc` a minimal root shows, and its own `/proc`.
pub const SYSTEM_READ_PATHS: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
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
    /// The `skillbox-sandbox` binary next to the current executable (or, for a test binary in
    /// cargo's `deps/` folder, one folder up), when it can be trusted as much as the executable
    /// itself: a regular file owned by root or by this user, in a folder owned by one of them,
    /// neither writable by anyone else. The helper runs every sandboxed program with this
    /// process's privileges, so a file someone else planted there is never run (`None`: the
    /// caller then uses its own binary as the helper).
    #[must_use]
    pub fn beside_current_executable() -> Option<Self> {
        let current = std::env::current_exe().ok()?;
        let directory = current.parent()?;
        let mut candidates = vec![directory.join("skillbox-sandbox")];
        if directory.file_name().is_some_and(|name| name == "deps") {
            candidates.push(directory.parent()?.join("skillbox-sandbox"));
        }
        candidates
            .into_iter()
            .find(|candidate| is_trusted_helper(candidate))
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

    /// What the host supports, from `cache` when it was written for this helper binary, this
    /// kernel and boot, and this user; otherwise probed (and the cache rewritten). Saves a
    /// one-shot command the helper's probe (a few forks and namespace attempts).
    pub fn probe_cached(&self, cache: &Path) -> HostSupport {
        static SUPPORT: OnceLock<HostSupport> = OnceLock::new();
        let key = ProbeKey::current(&self.program);
        if let Some(support) = SUPPORT.get() {
            // Probed already in this process; a runtime folder without the cache gets one.
            if let Some(key) = key.filter(|_| !cache.exists()) {
                store_probe(cache, key, support);
            }
            return support.clone();
        }
        if let Some(key) = &key
            && let Ok(text) = fs_err::read(cache)
            && let Ok(cached) = serde_json::from_slice::<ProbeCache>(&text)
            && cached.key == *key
        {
            return SUPPORT.get_or_init(|| cached.support).clone();
        }
        let support = SUPPORT.get_or_init(|| self.probe_uncached()).clone();
        if let Some(key) = key {
            store_probe(cache, key, &support);
        }
        support
    }

    /// Probe afresh, ignoring and rewriting `cache` (for `doctor`).
    #[must_use]
    pub fn probe_fresh(&self, cache: &Path) -> HostSupport {
        let _ = std::fs::remove_file(cache);
        let support = self.probe_uncached();
        if let Some(key) = ProbeKey::current(&self.program) {
            store_probe(cache, key, &support);
        }
        support
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

/// File (in the runtime folder) caching the helper's probe.
pub const PROBE_CACHE_FILE: &str = "host-probe.json";

/// What a probe result depends on: the helper binary, the kernel and this boot (sysctls and
/// boot parameters), and who runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ProbeKey {
    helper: PathBuf,
    helper_identity: (u64, u64, u64, i64, i64),
    kernel: String,
    boot_id: String,
    euid: u32,
}

impl ProbeKey {
    fn current(helper: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(helper).ok()?;
        let read = |path: &str| fs_err::read_to_string(path).ok();
        Some(ProbeKey {
            helper: helper.to_path_buf(),
            helper_identity: (
                metadata.dev(),
                metadata.ino(),
                metadata.size(),
                metadata.mtime(),
                metadata.mtime_nsec(),
            ),
            kernel: format!(
                "{} {}",
                read("/proc/sys/kernel/osrelease")?.trim(),
                read("/proc/sys/kernel/version")?.trim()
            ),
            boot_id: read("/proc/sys/kernel/random/boot_id")?.trim().to_owned(),
            euid: nix::unistd::geteuid().as_raw(),
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct ProbeCache {
    key: ProbeKey,
    support: HostSupport,
}

/// Write JSON to `path` whole, readable by its owner alone (a cache: not flushed to disk).
fn write_atomically(path: &Path, value: &impl Serialize) -> std::io::Result<()> {
    skillbox_trust::safe_write::write_file_atomically(
        path,
        &serde_json::to_vec(value).map_err(std::io::Error::other)?,
        skillbox_trust::safe_write::WriteOptions::PRIVATE.unsynced(),
    )
}

/// Write the probe cache (a failure only costs the next command a probe).
fn store_probe(cache: &Path, key: ProbeKey, support: &HostSupport) {
    let record = ProbeCache {
        key,
        support: support.clone(),
    };
    if let Err(error) = write_atomically(cache, &record) {
        tracing::debug!(%error, cache = %cache.display(), "cannot write the probe cache");
    }
}

/// Whether a file or folder itself can be read and executed (a folder: listed and entered) by
/// a user other than its owner. Its parents are not checked: for paths bind-mounted into a
/// minimal root.
#[must_use]
pub fn open_to_others(path: &Path) -> bool {
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

/// Whether `path` is a helper binary as trustworthy as the running executable: a regular file
/// (not a link) owned by root or the effective user and writable by no one else, in folders
/// that no one else could rename, up to `/` (core's rule,
/// [`skillbox_trust::ownership::path_ownership_problem`], as for the trust file). Refusals are
/// logged: a helper that is there but not used is worth a line.
fn is_trusted_helper(path: &Path) -> bool {
    use skillbox_trust::ownership::path_ownership_problem;
    let Ok(file) = fs_err::symlink_metadata(path) else {
        return false;
    };
    // The helper itself, its folder and every folder above: a user owning any of them could
    // rename it and put another program at this path after the check.
    let problem = if file.file_type().is_file() {
        match fs_err::canonicalize(path).and_then(|real| path_ownership_problem(&real)) {
            Ok(None) => None,
            Ok(Some((entry, problem))) => Some(format!("`{}` {problem}", entry.display())),
            Err(error) => Some(format!("it cannot be checked: {error}")),
        }
    } else {
        Some("it is not a regular file".to_owned())
    };
    if let Some(problem) = &problem {
        tracing::warn!(helper = %path.display(), %problem, "not using this sandbox helper");
    }
    problem.is_none()
}
