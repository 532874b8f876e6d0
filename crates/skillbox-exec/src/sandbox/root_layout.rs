//! The minimal root the helper builds for a program on hosts with namespaces ([`RootLayout`]):
//! the system folders and the parts of `/etc` it shows, the host paths bound into it, its
//! workspace and the files copied out of it; and the host paths a program may read where there
//! are no namespaces.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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
