//! The private root of a run with namespaces: built on its mount point before the fork, then
//! entered by the namespace's first process.

use std::path::{Path, PathBuf};

use nix::unistd::{Gid, Uid};

use super::output_copy::OutputCopyJob;
use crate::sandbox::{
    ROOT_ETC_ENTRIES, ROOT_SYSTEM_FOLDERS, ROOT_WORKSPACE, RootLayout, SandboxPlan, WorkspaceMount,
};

/// Stop mount events from crossing between the host and the sandbox's mount namespace.
fn make_mounts_private() -> Result<(), String> {
    use nix::mount::{MsFlags, mount};
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|error| format!("cannot make mounts private: {error}"))
}

/// A `/proc` showing only the sandbox's PID namespace.
fn mount_proc() -> Result<(), String> {
    use nix::mount::{MsFlags, mount};
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(|error| format!("cannot mount a private /proc: {error}"))
}

/// Devices the private `/dev` shows (bound from the host's).
const ROOT_DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];

/// What the helper keeps of a root it built: the workspace, and the output copy to make.
pub(super) struct PreparedRoot {
    pub(super) workspace: std::os::fd::OwnedFd,
    pub(super) output_copy: Option<OutputCopyJob>,
}

/// Build the minimal root described by `layout` on its mount point. Runs as root inside the new
/// mount namespace, before the fork and before any privilege is dropped; nothing here is
/// visible to the host. The child then enters it with [`enter_root`].
pub(super) fn prepare_root(
    layout: &RootLayout,
    plan: &SandboxPlan,
) -> Result<PreparedRoot, String> {
    use nix::mount::{MsFlags, mount};
    let new_root = layout.mount_point.as_path();
    make_mounts_private()?;
    mount(
        Some("tmpfs"),
        new_root,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("mode=0755,size=4m"),
    )
    .map_err(|error| {
        format!(
            "cannot mount the new root on `{}`: {error}",
            new_root.display()
        )
    })?;
    let inside = |path: &Path| new_root.join(path.strip_prefix("/").unwrap_or(path));
    for folder in ROOT_SYSTEM_FOLDERS {
        let host = Path::new(folder);
        match std::fs::symlink_metadata(host) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = std::fs::read_link(host)
                    .map_err(|error| format!("cannot read the link `{folder}`: {error}"))?;
                std::os::unix::fs::symlink(&target, inside(host))
                    .map_err(|error| format!("cannot link `{folder}`: {error}"))?;
            }
            Ok(_) => bind(host, &inside(host), BindKind::ReadOnly)?,
            Err(_) => {}
        }
    }
    for entry in ROOT_ETC_ENTRIES {
        let host = Path::new(entry);
        if host.exists() {
            bind(host, &inside(host), BindKind::ReadOnly)?;
        }
    }
    let dev = inside(Path::new("/dev"));
    create_folder(&dev)?;
    for device in ROOT_DEVICES {
        bind(
            &Path::new("/dev").join(device),
            &dev.join(device),
            BindKind::Device,
        )?;
    }
    for (link, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, dev.join(link))
            .map_err(|error| format!("cannot link `/dev/{link}`: {error}"))?;
    }
    // Private scratch space: /tmp, and /dev/shm for POSIX shared memory and semaphores.
    for (folder, bytes) in [
        ("/tmp", layout.tmp_bytes),
        ("/dev/shm", layout.tmp_bytes / 4),
    ] {
        mount_scratch(&inside(Path::new(folder)), bytes, "mode=1777")?;
    }
    for extra in &layout.binds {
        bind(
            &extra.source,
            &under_root(new_root, &extra.target)?,
            BindKind::ReadOnly,
        )?;
    }
    let workspace = inside(Path::new(ROOT_WORKSPACE));
    let owner = if plan.layers.uid_drop {
        plan.uid
    } else {
        nix::unistd::geteuid().as_raw()
    };
    match &layout.workspace {
        WorkspaceMount::Scratch { bytes } => {
            let options = format!("mode=0700,uid={owner},gid={owner}");
            mount_scratch(&workspace, *bytes, &options)?;
        }
        WorkspaceMount::Host { source } => bind(source, &workspace, BindKind::Writable)?,
    }
    let workspace_descriptor = open_folder(None, &workspace)?;
    for folder in &layout.workspace_folders {
        hand_workspace_folder(&workspace_descriptor, &contained(folder)?, owner)?;
    }
    for folder in &layout.folders {
        create_folder(&under_root(new_root, folder)?)?;
    }
    create_folder(&inside(Path::new("/proc")))?;
    create_folder(&inside(Path::new("/.old-root")))?;
    let output_copy = match &layout.output_copy {
        Some(copy) => Some(OutputCopyJob::open(copy)?),
        None => None,
    };
    Ok(PreparedRoot {
        workspace: workspace_descriptor,
        output_copy,
    })
}

/// Enter the root [`prepare_root`] built: `pivot_root`, detach the host's tree, mount this PID
/// namespace's `/proc`, make the root read-only. Runs in the namespace's first process.
pub(super) fn enter_root(layout: &RootLayout) -> Result<(), String> {
    use nix::mount::{MntFlags, MsFlags, mount, umount2};
    let new_root = layout.mount_point.as_path();
    let old_root = new_root.join(".old-root");
    nix::unistd::pivot_root(new_root, &old_root)
        .map_err(|error| format!("cannot enter the new root: {error}"))?;
    nix::unistd::chdir("/").map_err(|error| format!("cannot enter the new root: {error}"))?;
    umount2("/.old-root", MntFlags::MNT_DETACH)
        .map_err(|error| format!("cannot detach the host's root: {error}"))?;
    std::fs::remove_dir("/.old-root")
        .map_err(|error| format!("cannot remove the host root's mount point: {error}"))?;
    mount_proc()?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        None::<&str>,
    )
    .map_err(|error| format!("cannot make the new root read-only: {error}"))
}

/// A size-limited tmpfs at `path` (created first).
fn mount_scratch(path: &Path, bytes: u64, options: &str) -> Result<(), String> {
    use nix::mount::{MsFlags, mount};
    create_folder(path)?;
    mount(
        Some("tmpfs"),
        path,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(format!("{options},size={}", bytes.max(4096)).as_str()),
    )
    .map_err(|error| format!("cannot mount `{}`: {error}", path.display()))
}

/// Where an absolute path the plan names (a bind target, a folder) lies under the new root.
/// Every part after `/` must be a plain name: a `..` would reach the host's tree, which this
/// root process can still write before it enters the new root.
fn under_root(new_root: &Path, path: &Path) -> Result<PathBuf, String> {
    let relative = path
        .strip_prefix("/")
        .map_err(|_| format!("`{}` must be an absolute path", path.display()))?;
    Ok(new_root.join(contained(relative)?))
}

/// A relative path with no `..`, for folders named in a layout.
pub(super) fn contained(path: &Path) -> Result<PathBuf, String> {
    let fine = path
        .components()
        .all(|component| matches!(component, std::path::Component::Normal(_)));
    if fine && !path.as_os_str().is_empty() {
        Ok(path.to_path_buf())
    } else {
        Err(format!(
            "`{}` must be a plain relative path",
            path.display()
        ))
    }
}

/// Create a folder inside the workspace (a relative path) and hand it to the run's uid, one
/// folder at a time relative to descriptors, never following a link. The workspace may be the
/// operator's `--workdir`, which holds whatever earlier runs left there: a link planted at that
/// name must not lead this root process to a host folder.
fn hand_workspace_folder(
    workspace: &std::os::fd::OwnedFd,
    path: &Path,
    owner: u32,
) -> Result<(), String> {
    use std::os::fd::AsFd;
    let mut folder = workspace
        .try_clone()
        .map_err(|error| format!("cannot open the workspace: {error}"))?;
    for name in path.components().map(|component| component.as_os_str()) {
        match nix::sys::stat::mkdirat(
            folder.as_fd(),
            name,
            nix::sys::stat::Mode::from_bits_truncate(0o755),
        ) {
            Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
            Err(error) => {
                return Err(format!(
                    "cannot create `{}` in the workspace: {error}",
                    path.display()
                ));
            }
        }
        folder = open_folder(Some(folder.as_fd()), Path::new(name)).map_err(|_| {
            format!(
                "`{}` in the workspace is a link or not a folder; remove it",
                path.display()
            )
        })?;
    }
    nix::unistd::fchown(
        folder.as_fd(),
        Some(Uid::from_raw(owner)),
        Some(Gid::from_raw(owner)),
    )
    .map_err(|error| format!("cannot hand `{}` to the run: {error}", path.display()))
}

/// Open a folder without following a symlink at its last component, relative to `at` (or the
/// current root).
pub(super) fn open_folder(
    at: Option<std::os::fd::BorrowedFd<'_>>,
    path: &Path,
) -> Result<std::os::fd::OwnedFd, String> {
    use nix::fcntl::{AT_FDCWD, OFlag, openat};
    use nix::sys::stat::Mode;
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let opened = match at {
        Some(folder) => openat(folder, path, flags, Mode::empty()),
        None => openat(AT_FDCWD, path, flags, Mode::empty()),
    };
    opened.map_err(|error| format!("cannot open the folder `{}`: {error}", path.display()))
}

fn create_folder(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path)
        .map_err(|error| format!("cannot create `{}`: {error}", path.display()))
}

/// How a bind mount may be used. All are `nosuid`; all but devices are `nodev`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BindKind {
    ReadOnly,
    Writable,
    Device,
}

/// Show `source` at `target` (created as an empty file or folder first).
fn bind(source: &Path, target: &Path, kind: BindKind) -> Result<(), String> {
    use nix::mount::{MsFlags, mount};
    let metadata = std::fs::metadata(source)
        .map_err(|error| format!("cannot mount `{}`: {error}", source.display()))?;
    if metadata.is_dir() {
        create_folder(target)?;
    } else {
        if let Some(parent) = target.parent() {
            create_folder(parent)?;
        }
        // The root is a fresh tmpfs: a file already there was put by an earlier entry of the
        // plan, never one to truncate.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(target)
            .map_err(|error| format!("cannot create `{}`: {error}", target.display()))?;
    }
    mount(
        Some(source),
        target,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(|error| {
        format!(
            "cannot mount `{}` at `{}`: {error}",
            source.display(),
            target.display()
        )
    })?;
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_NOSUID;
    match kind {
        BindKind::ReadOnly => flags |= MsFlags::MS_RDONLY | MsFlags::MS_NODEV,
        BindKind::Writable => flags |= MsFlags::MS_NODEV,
        // Reading and writing a device does not need a writable mount; changing its times,
        // mode or owner on the host does.
        BindKind::Device => flags |= MsFlags::MS_RDONLY,
    }
    mount(None::<&str>, target, None::<&str>, flags, None::<&str>).map_err(|error| {
        format!(
            "cannot restrict the mount at `{}`: {error}",
            target.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_paths_stay_under_the_new_root() {
        let root = Path::new("/run/skillbox/root");
        assert_eq!(
            under_root(root, Path::new("/blobs/0123")).unwrap(),
            root.join("blobs/0123")
        );
        for bad in ["/", "/skills/../../etc", "/../x", "blobs/x", ""] {
            assert!(under_root(root, Path::new(bad)).is_err(), "{bad:?}");
        }
    }
}
