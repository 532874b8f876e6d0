//! Whether the sandbox uid can read a host path: the path itself (for paths bound into a
//! minimal root), or the path and every folder above it.

use std::path::Path;

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
