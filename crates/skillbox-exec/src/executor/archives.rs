//! Archived skills on disk: each is unpacked read-only on first use into the runtime folder's
//! `archives/<content digest>`, shared by every process using that folder, touched by every
//! run that uses it, and swept at start-up once unused for a day.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use skillbox_core::Skill;
use skillbox_core::source::contained_relative_path;
use skillbox_trust::store::{remove_tree, touch};

use super::sweep::entries_untouched_for;
use super::{Executor, off_the_async_threads};
use crate::error::{ErrorType, ExecError};

/// The runtime folder's subfolder holding archived skills unpacked for runs, one folder per
/// archive content digest.
const ARCHIVES_FOLDER: &str = "archives";
/// What an archive's folder is called while it is being unpacked.
const STAGING_PREFIX: &str = ".unpacking-";

impl Executor {
    /// The folder an archived skill runs from: `archives/<sha256 of the archive>` under the
    /// runtime folder, unpacked read-only on first use by any process sharing the runtime
    /// folder and reused by every later run (never named by anything the archive says). Each
    /// use touches it, so the sweep at start-up removes only copies unused for a day.
    pub(super) fn unpack(
        &self,
        skill: &Skill,
        files: &skillbox_core::source::ArchivedFiles,
    ) -> Result<PathBuf, ExecError> {
        let io = |error: std::io::Error| {
            ExecError::new(
                ErrorType::ScriptNotFound,
                format!("cannot unpack skill `{}`: {error}", skill.name()),
            )
        };
        let archives = self.runtime_root.join(ARCHIVES_FOLDER);
        let directory = archives.join(files.content_digest());
        if touch(&directory).is_ok() {
            return Ok(directory);
        }
        // The first use writes every file of the archive.
        off_the_async_threads(|| unpack_once(files, &archives, &directory))
            .map(|()| directory)
            .map_err(io)
    }
}

/// Unpack an archived skill into `directory` under `archives`, read-only. Unpacked beside the
/// final name and renamed into place whole: a process that finds the folder finds every file
/// in it.
fn unpack_once(
    files: &skillbox_core::source::ArchivedFiles,
    archives: &Path,
    directory: &Path,
) -> std::io::Result<()> {
    match fs_err::create_dir(archives) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(error),
    }
    let staging = archives.join(format!("{STAGING_PREFIX}{}", uuid::Uuid::new_v4().simple()));
    fs_err::create_dir(&staging)?;
    let unpacked = unpack_into(files, &staging)
        .and_then(|()| make_read_only_tree(&staging))
        .and_then(|()| fs_err::rename(&staging, directory));
    if let Err(error) = unpacked {
        let _ = remove_tree(&staging);
        // Another process may have put the same archive in place first.
        if touch(directory).is_ok() {
            return Ok(());
        }
        return Err(error);
    }
    Ok(())
}

/// Write every file of an archived skill under `directory`, decompressed a buffer at a time.
fn unpack_into(
    files: &skillbox_core::source::ArchivedFiles,
    directory: &Path,
) -> std::io::Result<()> {
    use fs_err::os::unix::fs::OpenOptionsExt;
    for file in files.files() {
        // Archive paths were checked when the archive was read; they become host paths here,
        // so check again.
        let relative = contained_relative_path(&file.relative_path).map_err(|_| {
            std::io::Error::other(format!(
                "the archive names a path that leaves the skill: `{}`",
                file.relative_path
            ))
        })?;
        let path = directory.join(&relative);
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent)?;
        }
        let mut output = fs_err::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o555)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)?;
        files
            .copy_to(&relative, &mut output)
            .map_err(|error| std::io::Error::other(error.to_string()))?;
    }
    Ok(())
}

/// Remove unpacked archives no run has used for `age`, and staging folders a process left
/// behind when it stopped mid-unpack.
pub(super) fn sweep_unused_archives(root: &Path, age: Duration) {
    for entry in entries_untouched_for(&root.join(ARCHIVES_FOLDER), age) {
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) && remove_tree(&entry.path()) {
            tracing::info!(folder = %entry.path().display(), "removed an unused unpacked archive");
        }
    }
}

fn make_read_only_tree(directory: &Path) -> std::io::Result<()> {
    for entry in fs_err::read_dir(directory)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            make_read_only_tree(&entry.path())?;
        }
    }
    fs_err::set_permissions(directory, std::fs::Permissions::from_mode(0o555))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::sweep::STALE_RUN_AGE;

    #[test]
    fn only_unpacked_archives_unused_for_a_day_are_swept() {
        let root = tempfile::tempdir().unwrap();
        let archives = root.path().join(ARCHIVES_FOLDER);
        let unused = "a".repeat(64);
        let staging = format!("{STAGING_PREFIX}1234");
        let used = "b".repeat(64);
        for name in [&unused, &staging, &used] {
            fs_err::create_dir_all(archives.join(name).join("scripts")).unwrap();
            fs_err::write(archives.join(name).join("scripts/run.py"), "print(1)").unwrap();
            make_read_only_tree(&archives.join(name)).unwrap();
        }
        let long_ago = std::time::SystemTime::now() - Duration::from_secs(48 * 60 * 60);
        for name in [&unused, &staging, &used] {
            let folder = fs_err::File::open(archives.join(name)).unwrap();
            folder.file().set_modified(long_ago).unwrap();
        }
        // A run touches the folder it uses.
        touch(&archives.join(&used)).unwrap();
        sweep_unused_archives(root.path(), STALE_RUN_AGE);
        let left: Vec<String> = fs_err::read_dir(&archives)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, [used]);
    }
}
