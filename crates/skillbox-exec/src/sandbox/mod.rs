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

//!
//! The runtime's side, one concept per file: the operator's [`SandboxPolicy`] and its
//! [`SandboxMode`] and [`ResourceLimits`] (`policy`), the layers an execution gets and the level
//! they amount to (`layers`), what the host supports as the helper's probe finds it, and its
//! cache (`host_probe`), where the helper program is and whether it can be trusted
//! (`helper_command`), the [`SandboxPlan`] handed to the helper (`plan`) with its minimal root
//! (`root_layout`), the notes on `out/` entries not collected (`output_notes`), the uids runs
//! get (`uid_pool`), and whether the sandbox uid can read a path (`path_access`). The helper's
//! own side is [`helper`].

pub mod cgroups;
pub mod helper;
mod helper_command;
mod host_probe;
mod layers;
mod output_notes;
mod path_access;
mod plan;
mod policy;
mod root_layout;
pub(crate) mod stray_processes;
mod uid_pool;

pub use helper_command::{HelperCommand, trusted_named_helper};
pub use host_probe::{HostSupport, PROBE_CACHE_FILE};
pub use layers::{SandboxLayers, SandboxLevel};
pub use output_notes::{MAX_OUTPUT_ENTRIES, MAX_OUTPUT_NOTES, OutputNotes};
pub use path_access::{open_to_others, readable_by_others};
pub use plan::{HELPER_EXEC_FAILED, HELPER_SETUP_FAILED, PROGRAM_ENVIRONMENT_PREFIX, SandboxPlan};
pub use policy::{
    DEFAULT_CPU_SECONDS, DEFAULT_FILE_SIZE_BYTES, DEFAULT_MEMORY_BYTES, DEFAULT_OPEN_FILES,
    DEFAULT_PROCESSES, DEFAULT_RUN_MEMORY_BYTES, DEFAULT_WORKSPACE_BYTES, ResourceLimits,
    SandboxMode, SandboxPolicy,
};
pub use root_layout::{
    BindMount, OutputCopy, ROOT_ETC_ENTRIES, ROOT_SYSTEM_FOLDERS, ROOT_WORKSPACE, RootLayout,
    SYSTEM_READ_PATHS, WorkspaceMount,
};
pub use uid_pool::{
    SANDBOX_GID, SANDBOX_UID, SANDBOX_UID_POOL_SIZE, SANDBOX_UID_POOL_START, UID_LOCK_DIRECTORY,
    UidLease, UidPool,
};
