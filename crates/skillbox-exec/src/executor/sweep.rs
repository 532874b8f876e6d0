//! The start-up sweep of run folders that runtimes killed mid-run left in the runtime folder, and
//! the age test every sweep uses (unpacked archives have their own sweep, in `archives`).

use std::path::Path;
use std::time::Duration;

use super::layout;

/// Age after which a run folder left in the workspace root (by a runtime killed mid-run) is
/// removed when an executor starts. Generous, since other runtimes may share the root.
pub(super) const STALE_RUN_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// Remove run folders older than `age` that a killed runtime left behind.
pub(super) fn sweep_stale_runs(root: &Path, age: Duration) {
    for entry in entries_untouched_for(root, age) {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !layout::RUN_FOLDER_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            continue;
        }
        match std::fs::remove_dir_all(entry.path()) {
            Ok(()) => {
                tracing::info!(folder = %entry.path().display(), "removed a stale run folder")
            }
            Err(error) => {
                tracing::warn!(folder = %entry.path().display(), %error, "cannot remove a stale run folder")
            }
        }
    }
}

/// The entries of `folder` last modified more than `age` ago (none when it cannot be read).
pub(super) fn entries_untouched_for(folder: &Path, age: Duration) -> Vec<fs_err::DirEntry> {
    let Ok(entries) = fs_err::read_dir(folder) else {
        return Vec::new();
    };
    let now = std::time::SystemTime::now();
    entries
        .flatten()
        .filter(|entry| {
            entry
                .metadata()
                .and_then(|metadata| metadata.modified())
                .is_ok_and(|modified| {
                    now.duration_since(modified)
                        .is_ok_and(|elapsed| elapsed > age)
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_old_run_folders_are_swept() {
        let root = tempfile::tempdir().unwrap();
        for name in [
            "run-old",
            "protocol-run-old",
            "worker-old",
            "bootstrap-1",
            "run-new",
        ] {
            fs_err::create_dir_all(root.path().join(name).join("inside")).unwrap();
        }
        let long_ago = std::time::SystemTime::now() - Duration::from_secs(48 * 60 * 60);
        for name in ["run-old", "protocol-run-old", "worker-old", "bootstrap-1"] {
            let folder = fs_err::File::open(root.path().join(name)).unwrap();
            folder.file().set_modified(long_ago).unwrap();
        }
        sweep_stale_runs(root.path(), STALE_RUN_AGE);
        let mut left: Vec<String> = fs_err::read_dir(root.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["bootstrap-1", "run-new", "worker-old"]);
    }
}
