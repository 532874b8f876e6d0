//! Where the sandbox helper program is ([`HelperCommand`]): the `skillbox-sandbox` binary
//! beside the running executable when it is as trustworthy as that executable, or the caller's
//! own binary with a leading argument.

use std::path::{Path, PathBuf};

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
            .iter()
            .find_map(|candidate| trusted_named_helper(candidate))
    }
}

/// The helper at `path`, named by the caller, when it can be trusted as much as one beside the
/// executable: a regular file owned by root or this user, in folders neither writable by
/// anyone else (the helper runs every sandboxed program with this process's privileges).
#[must_use]
pub fn trusted_named_helper(path: &Path) -> Option<HelperCommand> {
    is_trusted_helper(path).then(|| HelperCommand {
        program: path.to_path_buf(),
        leading_args: Vec::new(),
    })
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
