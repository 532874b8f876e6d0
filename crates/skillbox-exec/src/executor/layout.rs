//! One file-system layout for every kind of run: scripts, tool handlers, warm workers,
//! preprocessing commands and Skills Protocol runs.
//!
//! On hosts with namespaces a run sees a minimal root ([`RootLayout`]): the system folders and a
//! short list of `/etc` read-only, its skill read-only at a fixed path ([`SANDBOX_SKILL_DIR`], or
//! `/skills/<name>/` for protocol runs), the runtime's bootstraps at [`SANDBOX_RUNTIME_DIR`], a
//! private `/tmp`, and a scratch workspace ([`SANDBOX_WORKSPACE`]): a size-limited tmpfs that
//! exists only inside the run's mount namespace. The runtime never creates, chmods or chowns
//! anything the sandbox could have written; output files are copied out by the helper once
//! every process of the run is dead.
//!
//! Without namespaces (a weaker host, or the sandbox off) the same programs get host paths
//! instead: a fresh folder per run under the runtime's private folder, created before anything
//! runs.

use std::path::{Path, PathBuf};

use crate::error::{ErrorType, ExecError};
use crate::sandbox::{BindMount, OutputCopy, ROOT_WORKSPACE, RootLayout, UidLease, WorkspaceMount};

use super::Executor;

/// Where the executed skill appears inside a script's, handler's or command's root.
pub const SANDBOX_SKILL_DIR: &str = "/skill";
/// Where mounted skills appear inside a protocol run's root.
pub const SANDBOX_SKILLS_DIR: &str = "/skills";
/// Where input blobs appear inside a protocol run's root.
pub const SANDBOX_BLOBS_DIR: &str = "/blobs";
/// The run's writable folder.
pub const SANDBOX_WORKSPACE: &str = ROOT_WORKSPACE;
/// Where the runners, handler bootstraps and the `runtime` module appear inside every root.
pub const SANDBOX_RUNTIME_DIR: &str = "/skillbox";
/// Size of the run's private `/tmp`.
pub const RUN_TMP_BYTES: u64 = 64 * 1024 * 1024;
/// Prefixes of the host folders runs leave under the runtime folder (swept when stale).
/// Worker folders (hosts without namespaces) are not swept: another runtime's warm worker may
/// still use one, however old. `blob-copies-` folders are no longer made (the server copies
/// input blobs into its data folder); the ones older versions left are still swept.
pub(crate) const RUN_FOLDER_PREFIXES: &[&str] = &["run-", "protocol-run-", "blob-copies-"];

/// Whether a skill folder may also be shown at its own host path inside a minimal root: not
/// when that path is already visible (under a system folder) or would land on a place the
/// root reserves.
pub(crate) fn may_show_at_host_path(path: &Path) -> bool {
    const RESERVED: &[&str] = &[
        "/proc",
        "/dev",
        "/etc",
        SANDBOX_WORKSPACE,
        SANDBOX_SKILL_DIR,
        SANDBOX_SKILLS_DIR,
        SANDBOX_BLOBS_DIR,
        SANDBOX_RUNTIME_DIR,
    ];
    path.is_absolute()
        && path.parent().is_some()
        && !crate::sandbox::ROOT_SYSTEM_FOLDERS
            .iter()
            .chain(RESERVED)
            .any(|taken| path.starts_with(taken))
}

/// A host path a run is shown, and where it appears inside a minimal root.
#[derive(Debug, Clone)]
pub(crate) struct Shown {
    pub host: PathBuf,
    pub inside: PathBuf,
}

/// What one run needs of the file system.
#[derive(Debug, Default)]
pub(crate) struct LayoutRequest {
    /// Skill folders (read-only).
    pub skills: Vec<Shown>,
    /// Single files (read-only), such as input blobs.
    pub files: Vec<Shown>,
    /// The interpreter, whose installation folder is shown when outside the system folders.
    pub interpreter: Option<PathBuf>,
    /// Empty folders created inside the root (absolute), e.g. `/skills`.
    pub folders: Vec<PathBuf>,
    /// Folders created inside the workspace before the program starts, e.g. `out`.
    pub workspace_folders: Vec<&'static str>,
    /// Keep the workspace's `out/` files for the caller after the run.
    pub keep_outputs: bool,
    /// A warm worker's layout (its host folder, without namespaces, is never swept as stale).
    pub long_lived: bool,
}

/// How one run sees the file system, and the host folder and uid that live as long as it does.
#[derive(Debug)]
pub(crate) struct RunLayout {
    /// The minimal root, on hosts with namespaces.
    pub root: Option<RootLayout>,
    /// Paths Landlock lets the program read.
    pub readable: Vec<PathBuf>,
    /// The working directory as the program sees it.
    pub workspace: PathBuf,
    /// `TMPDIR` as the program sees it.
    pub tmp: PathBuf,
    /// Where the run's `out/` files can be read on the host after the run.
    pub outputs: Option<PathBuf>,
    /// The helper's list of `out/` entries it did not copy.
    pub output_report: Option<PathBuf>,
    /// The host folder of the run and the uid it runs as; released when dropped.
    pub folder: RunFolder,
}

impl RunLayout {
    /// The uid the run executes as.
    pub fn uid(&self) -> u32 {
        self.folder
            .lease
            .as_ref()
            .map_or(crate::sandbox::SANDBOX_UID, |lease| lease.uid)
    }
}

/// A run's host folder (removed when dropped) and leased uid (returned when dropped).
#[derive(Debug, Default)]
pub(crate) struct RunFolder {
    pub path: Option<PathBuf>,
    pub lease: Option<UidLease>,
}

impl Drop for RunFolder {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

impl Executor {
    /// Whether runs get a minimal root (the host has namespaces and the sandbox is on).
    pub(crate) fn isolated(&self) -> bool {
        self.sandbox.layers.namespaces
    }

    /// Where a host path appears to a run: `inside` in a minimal root, the host path otherwise.
    pub(crate) fn shown(&self, host: &Path, inside: &Path) -> Shown {
        Shown {
            host: host.to_path_buf(),
            inside: if self.isolated() {
                inside.to_path_buf()
            } else {
                host.to_path_buf()
            },
        }
    }

    /// The bootstraps as a run sees them.
    pub(crate) fn runtime_path(&self) -> PathBuf {
        self.shown(&self.bootstrap_directory, Path::new(SANDBOX_RUNTIME_DIR))
            .inside
    }

    /// Lay one run out, leasing its uid.
    pub(crate) fn layout(&self, request: LayoutRequest) -> Result<RunLayout, ExecError> {
        let lease = self.lease_uid()?;
        let owner = lease.as_ref().map(|lease| lease.uid);
        if self.isolated() {
            self.root_layout(request, lease)
        } else {
            self.host_layout(request, lease, owner)
        }
    }

    fn root_layout(
        &self,
        request: LayoutRequest,
        lease: Option<UidLease>,
    ) -> Result<RunLayout, ExecError> {
        let mut binds: Vec<BindMount> = request
            .skills
            .iter()
            .chain(&request.files)
            .map(|shown| BindMount {
                source: shown.host.clone(),
                target: shown.inside.clone(),
            })
            .collect();
        binds.push(BindMount {
            source: self.bootstrap_directory.clone(),
            target: PathBuf::from(SANDBOX_RUNTIME_DIR),
        });
        // Shown only where a skill folder could be (never `/`, a system folder or a place the
        // root reserves): the helper binds it as root before the root is entered.
        if let Some(prefix) = request
            .interpreter
            .as_deref()
            .and_then(crate::interpreter::installation_prefix)
            .filter(|prefix| may_show_at_host_path(prefix))
        {
            binds.push(BindMount {
                source: prefix.clone(),
                target: prefix,
            });
        }
        let workspace = match &self.config.working_directory {
            Some(directory) => WorkspaceMount::Host {
                source: directory.clone(),
            },
            None => WorkspaceMount::Scratch {
                bytes: self.config.policy.limits.workspace_bytes,
            },
        };
        let mut folder = RunFolder { path: None, lease };
        let (output_copy, outputs, output_report) = if request.keep_outputs {
            let path = self.new_host_folder("protocol-run")?;
            folder.path = Some(path.clone());
            let outputs = path.join(super::python_run::OUTPUT_FOLDER);
            fs_err::create_dir(&outputs).map_err(workspace_error)?;
            let report = path.join("skipped-outputs.txt");
            let copy = OutputCopy {
                source: PathBuf::from(super::python_run::OUTPUT_FOLDER),
                destination: outputs.clone(),
                report: report.clone(),
                max_files: super::python_run::MAX_OUTPUT_FILES,
                max_bytes: super::python_run::MAX_OUTPUT_BYTES_TOTAL,
            };
            (Some(copy), Some(outputs), Some(report))
        } else {
            (None, None, None)
        };
        Ok(RunLayout {
            root: Some(RootLayout {
                mount_point: self.mount_point.clone(),
                binds,
                folders: request.folders,
                tmp_bytes: RUN_TMP_BYTES,
                workspace,
                workspace_folders: request
                    .workspace_folders
                    .iter()
                    .map(PathBuf::from)
                    .collect(),
                output_copy,
            }),
            // Everything in the minimal root was put there to be read; Landlock still keeps
            // writes to the workspace, /tmp and /dev/shm.
            readable: vec![PathBuf::from("/")],
            workspace: PathBuf::from(SANDBOX_WORKSPACE),
            tmp: PathBuf::from("/tmp"),
            outputs,
            output_report,
            folder,
        })
    }

    fn host_layout(
        &self,
        request: LayoutRequest,
        lease: Option<UidLease>,
        owner: Option<u32>,
    ) -> Result<RunLayout, ExecError> {
        let mut readable: Vec<PathBuf> = request
            .skills
            .iter()
            .chain(&request.files)
            .map(|shown| shown.host.clone())
            .collect();
        readable.push(self.bootstrap_directory.clone());
        if let Some(directory) = &self.config.working_directory {
            return Ok(RunLayout {
                root: None,
                readable,
                workspace: directory.clone(),
                tmp: directory.join("tmp"),
                outputs: request
                    .keep_outputs
                    .then(|| directory.join(super::python_run::OUTPUT_FOLDER)),
                output_report: None,
                folder: RunFolder { path: None, lease },
            });
        }
        let path = self.new_host_folder(if request.long_lived { "worker" } else { "run" })?;
        let folder = RunFolder {
            path: Some(path.clone()),
            lease,
        };
        // Made before anything runs, inside a folder only the runtime can write.
        let mut folders = vec!["tmp"];
        folders.extend(request.workspace_folders.iter().copied());
        for relative in folders {
            hand_over(&path.join(relative), owner).map_err(workspace_error)?;
        }
        hand_over(&path, owner).map_err(workspace_error)?;
        Ok(RunLayout {
            root: None,
            readable,
            tmp: path.join("tmp"),
            outputs: request
                .keep_outputs
                .then(|| path.join(super::python_run::OUTPUT_FOLDER)),
            output_report: None,
            workspace: path,
            folder,
        })
    }

    /// A fresh `<prefix>-<uuid>` folder (0700, the runtime's) under the runtime folder.
    pub(crate) fn new_host_folder(&self, prefix: &str) -> Result<PathBuf, ExecError> {
        use std::os::unix::fs::DirBuilderExt;
        let path = self
            .runtime_root
            .join(format!("{prefix}-{}", uuid::Uuid::new_v4().simple()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(workspace_error)?;
        Ok(path)
    }
}

/// Create a folder (0700) that nothing has written yet and give it to the run's uid.
fn hand_over(path: &Path, owner: Option<u32>) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(error),
    }
    if let Some(owner) = owner {
        std::os::unix::fs::lchown(path, Some(owner), Some(owner))?;
    }
    Ok(())
}

fn workspace_error(error: std::io::Error) -> ExecError {
    ExecError::new(
        ErrorType::SandboxUnavailable,
        format!("cannot create a workspace: {error}"),
    )
}
