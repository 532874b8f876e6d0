//! Folders only the runtime's user controls. The runtime keeps its handler bootstraps, archive
//! unpacks, run folders and caches in one folder; if another local user could create or swap
//! that folder (or any folder on the way to it), they could replace the bootstraps or read what
//! runs leave there. [`ensure_private_directory`] creates the folder or accepts an existing one
//! only when every folder on its path is owned by root or by us and cannot be renamed by anyone
//! else, and returns the path with every symlink resolved, so later joins cannot be redirected.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use skillbox_trust::ownership::{OwnershipProblem, ownership_problem};

/// Why a folder cannot be used as a private folder.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrivateDirectoryError {
    /// A folder on the path belongs to another user.
    #[error(
        "`{path}` belongs to uid {owner}, not to you (uid {ours}) or root: another user could swap what skillbox keeps there; remove it, or choose another folder (SKILLBOX_RUNTIME_DIR)"
    )]
    ForeignOwner {
        /// The folder.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// Our effective uid.
        ours: u32,
    },
    /// A folder on the path is writable by others without the sticky bit, so they could rename
    /// what is inside it.
    #[error(
        "`{path}` can be written by other users (mode {mode:o}) and has no sticky bit, so they could replace folders inside it; choose another folder (SKILLBOX_RUNTIME_DIR)"
    )]
    OpenToOthers {
        /// The folder.
        path: PathBuf,
        /// Its mode bits.
        mode: u32,
    },
    /// The path exists and is not a folder (or is a symlink).
    #[error(
        "`{path}` exists but is not a folder (it may be a symlink); remove it or choose another folder (SKILLBOX_RUNTIME_DIR)"
    )]
    NotAFolder {
        /// The path.
        path: PathBuf,
    },
    /// An I/O error.
    #[error("cannot prepare the private folder `{path}`: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// Create `path` with `mode` (or accept it when it exists, is ours and no one else can write
/// it, then set `mode`), after checking every folder on the way. Returns the canonical path.
///
/// # Errors
/// When a folder on the way belongs to another user, can be written by others without the
/// sticky bit, or the folder cannot be created.
pub fn ensure_private_directory(path: &Path, mode: u32) -> Result<PathBuf, PrivateDirectoryError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| PrivateDirectoryError::Io { path, source }
    };
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map_err(io(path))?.join(path)
    };
    let name = absolute
        .file_name()
        .ok_or_else(|| PrivateDirectoryError::NotAFolder {
            path: absolute.clone(),
        })?
        .to_owned();
    let parent = absolute.parent().unwrap_or(Path::new("/"));
    // Create missing parents first (as private folders of ours), then resolve and check.
    if !parent.exists() {
        ensure_private_directory(parent, 0o755)?;
    }
    let parent = fs_err::canonicalize(parent).map_err(|error| PrivateDirectoryError::Io {
        path: parent.to_path_buf(),
        source: error,
    })?;
    for folder in parent.ancestors() {
        check_trusted_folder(folder, true)?;
    }
    let target = parent.join(name);
    match std::fs::DirBuilder::new().mode(mode).create(&target) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(io(&target)(error)),
    }
    check_trusted_folder(&target, false)?;
    let metadata = std::fs::symlink_metadata(&target).map_err(io(&target))?;
    if metadata.mode() & 0o7777 != mode {
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode))
            .map_err(io(&target))?;
    }
    Ok(target)
}

/// One folder on the path: a real folder owned by root or us; others may write it only when
/// the sticky bit keeps them from renaming our entries (`/tmp`). `allow_sticky` is false for the
/// final folder, which nobody else may write at all. The rule is core's [`ownership_problem`],
/// which the trust file is held to as well.
fn check_trusted_folder(folder: &Path, allow_sticky: bool) -> Result<(), PrivateDirectoryError> {
    let metadata =
        std::fs::symlink_metadata(folder).map_err(|source| PrivateDirectoryError::Io {
            path: folder.to_path_buf(),
            source,
        })?;
    if !metadata.file_type().is_dir() {
        return Err(PrivateDirectoryError::NotAFolder {
            path: folder.to_path_buf(),
        });
    }
    match ownership_problem(&metadata, allow_sticky) {
        None => Ok(()),
        Some(OwnershipProblem::ForeignOwner { owner, ours }) => {
            Err(PrivateDirectoryError::ForeignOwner {
                path: folder.to_path_buf(),
                owner,
                ours,
            })
        }
        Some(OwnershipProblem::OpenToOthers { mode }) => Err(PrivateDirectoryError::OpenToOthers {
            path: folder.to_path_buf(),
            mode,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_a_private_folder_and_accepts_it_again() {
        let base = tempfile::tempdir().unwrap();
        let wanted = base.path().join("a/b/runtime");
        let made = ensure_private_directory(&wanted, 0o700).unwrap();
        assert_eq!(made, fs_err::canonicalize(&wanted).unwrap());
        let mode = std::fs::metadata(&made).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o700);
        // A second call accepts it and restores the mode.
        std::fs::set_permissions(&made, std::fs::Permissions::from_mode(0o750)).unwrap();
        ensure_private_directory(&wanted, 0o700).unwrap();
        assert_eq!(std::fs::metadata(&made).unwrap().mode() & 0o7777, 0o700);
    }

    #[test]
    fn refuses_a_folder_others_can_write_and_a_symlink() {
        let base = tempfile::tempdir().unwrap();
        let open = base.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let error = ensure_private_directory(&open.join("runtime"), 0o700).unwrap_err();
        assert!(
            matches!(error, PrivateDirectoryError::OpenToOthers { .. }),
            "{error}"
        );
        let error = ensure_private_directory(&open, 0o700).unwrap_err();
        assert!(
            matches!(error, PrivateDirectoryError::OpenToOthers { .. }),
            "{error}"
        );
        let link = base.path().join("link");
        std::os::unix::fs::symlink(base.path(), &link).unwrap();
        let error = ensure_private_directory(&link, 0o700).unwrap_err();
        assert!(
            matches!(error, PrivateDirectoryError::NotAFolder { .. }),
            "{error}"
        );
    }

    #[test]
    fn refuses_a_folder_another_user_created() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("SKIPPED refuses_a_folder_another_user_created: needs root to chown");
            return;
        }
        let base = tempfile::tempdir().unwrap();
        let planted = base.path().join("skillbox");
        std::fs::create_dir(&planted).unwrap();
        std::os::unix::fs::chown(&planted, Some(4242), Some(4242)).unwrap();
        let error = ensure_private_directory(&planted, 0o700).unwrap_err();
        assert!(
            matches!(
                error,
                PrivateDirectoryError::ForeignOwner { owner: 4242, .. }
            ),
            "{error}"
        );
        assert!(error.to_string().contains("uid 4242"), "{error}");
    }
}
