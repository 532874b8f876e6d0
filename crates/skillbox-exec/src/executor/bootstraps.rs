//! The handler bootstraps, the protocol runner and its `runtime` module, written to the runtime
//! folder where every run can read them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Write the handler bootstraps where the sandbox user can read them; returns their folder.
pub(super) fn write_bootstraps(root: &Path) -> std::io::Result<PathBuf> {
    let directory = root.join(format!("bootstrap-{}", env!("CARGO_PKG_VERSION")));
    fs_err::create_dir_all(&directory)?;
    for (name, text) in [
        (
            "node_handler.mjs",
            include_str!("../bootstrap/node_handler.mjs"),
        ),
        (
            "python_handler.py",
            include_str!("../bootstrap/python_handler.py"),
        ),
        (
            "protocol_runner.py",
            include_str!("../bootstrap/protocol_runner.py"),
        ),
        (
            "python-lib/runtime.py",
            include_str!("../bootstrap/runtime.py"),
        ),
    ] {
        let path = directory.join(name);
        if fs_err::read_to_string(&path).ok().as_deref() != Some(text) {
            let folder = path.parent().unwrap_or(&directory);
            fs_err::create_dir_all(folder)?;
            fs_err::set_permissions(folder, std::fs::Permissions::from_mode(0o755))?;
            let file_name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let staging = folder.join(format!(".{file_name}.{}", uuid::Uuid::new_v4()));
            fs_err::write(&staging, text)?;
            fs_err::set_permissions(&staging, std::fs::Permissions::from_mode(0o644))?;
            fs_err::rename(&staging, &path)?;
        }
    }
    fs_err::set_permissions(&directory, std::fs::Permissions::from_mode(0o755))?;
    Ok(directory)
}
