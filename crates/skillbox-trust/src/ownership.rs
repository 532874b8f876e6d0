//! Whether someone other than us could change a file or folder: the rule the trust file
//! ([`crate::gate`]) and the runtime's private folders (in skillbox-exec) are both held to. An
//! entry is ours when it belongs to root or to our effective uid and nobody else may write it;
//! a folder on the way to it may be writable by others only with the sticky bit (`/tmp`), which
//! keeps them from renaming what is ours inside it.

use std::fmt;
use std::os::unix::fs::MetadataExt;

/// Permission bits that let the group or other users write.
const WRITABLE_BY_OTHERS: u32 = 0o022;
/// The sticky bit: in a folder, only an entry's owner may rename or remove it.
const STICKY: u32 = 0o1000;

/// Why an entry could be changed by someone other than us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnershipProblem {
    /// It belongs to another user (neither us nor root).
    ForeignOwner {
        /// Its owner.
        owner: u32,
        /// Our effective uid.
        ours: u32,
    },
    /// The group or other users can write it, with no sticky bit that would keep them from
    /// renaming what is inside (or the entry is the final one, where the sticky bit does not
    /// help).
    OpenToOthers {
        /// Its permission bits (with set-id and sticky bits).
        mode: u32,
    },
}

impl fmt::Display for OwnershipProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OwnershipProblem::ForeignOwner { owner, ours } => {
                write!(f, "belongs to uid {owner}, not to you (uid {ours})")
            }
            OwnershipProblem::OpenToOthers { mode } => {
                write!(f, "can be written by other users (mode {mode:o})")
            }
        }
    }
}

/// Whether the entry whose metadata is given (from `lstat`) could be changed by someone else:
/// `None` when it belongs to root or to us and no one else may write it. `sticky_allowed` says
/// the entry is a folder on the way to what is relied on, where write access for others is
/// accepted with the sticky bit.
#[must_use]
pub fn ownership_problem(
    metadata: &std::fs::Metadata,
    sticky_allowed: bool,
) -> Option<OwnershipProblem> {
    let ours = rustix::process::geteuid().as_raw();
    let owner = metadata.uid();
    if owner != ours && owner != 0 {
        return Some(OwnershipProblem::ForeignOwner { owner, ours });
    }
    let mode = metadata.mode() & 0o7777;
    let sticky = sticky_allowed && mode & STICKY != 0;
    if mode & WRITABLE_BY_OTHERS != 0 && !sticky {
        return Some(OwnershipProblem::OpenToOthers { mode });
    }
    None
}

/// The first entry on `path` that someone else could change, with what is wrong: `path` itself
/// must belong to root or us and be writable by no one else; every folder above it, up to `/`,
/// too, except that a folder above may be writable by others with the sticky bit (`/tmp`), which
/// keeps them from renaming what is ours. Owning any folder on the way would let a user rename
/// it and put something else at `path`. Give a canonical path (links resolved): each entry is
/// read without following links.
///
/// # Errors
/// When an entry cannot be read.
pub fn path_ownership_problem(
    path: &std::path::Path,
) -> std::io::Result<Option<(std::path::PathBuf, OwnershipProblem)>> {
    for (index, entry) in path.ancestors().enumerate() {
        let metadata = fs_err::symlink_metadata(entry)?;
        if let Some(problem) = ownership_problem(&metadata, index > 0) {
            return Ok(Some((entry.to_path_buf(), problem)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn others_may_write_only_a_sticky_folder_on_the_way() {
        let temp = tempfile::tempdir().unwrap();
        let folder = temp.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        let problem_with = |mode: u32, sticky_allowed: bool| {
            std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode)).unwrap();
            ownership_problem(&std::fs::symlink_metadata(&folder).unwrap(), sticky_allowed)
        };
        assert_eq!(problem_with(0o755, false), None);
        assert_eq!(problem_with(0o1777, true), None);
        assert_eq!(
            problem_with(0o1777, false),
            Some(OwnershipProblem::OpenToOthers { mode: 0o1777 })
        );
        assert_eq!(
            problem_with(0o775, true),
            Some(OwnershipProblem::OpenToOthers { mode: 0o775 })
        );
        assert_eq!(
            problem_with(0o775, true).unwrap().to_string(),
            "can be written by other users (mode 775)"
        );
        if rustix::process::geteuid().is_root() {
            std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::os::unix::fs::chown(&folder, Some(4242), None).unwrap();
            let problem =
                ownership_problem(&std::fs::symlink_metadata(&folder).unwrap(), true).unwrap();
            assert_eq!(
                problem,
                OwnershipProblem::ForeignOwner {
                    owner: 4242,
                    ours: 0
                }
            );
            assert_eq!(
                problem.to_string(),
                "belongs to uid 4242, not to you (uid 0)"
            );
        }
    }
}
