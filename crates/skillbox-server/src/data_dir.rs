//! The server's data folder and who may read what in it.
//!
//! ```text
//! <data-dir>/             0711  others may pass through, never list
//!   blobs/                0700  the blob store: folders 0700, files 0600
//!   run-inputs/           0711
//!     <uuid>/             0711  one run's copies of its input blobs, removed when it ends
//!       <random name>     0644  readable by the run's sandbox user, who cannot list the folder
//!   builtin/              0755  the built-in skills: public text that runs may mount
//! ```
//!
//! Runs execute as other users, so they can never read the store itself; each run gets its
//! own copies of the blobs it asked for, under names nobody else can guess.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::blobs::{BlobError, BlobStore};

/// Mode of the data folder and of `run-inputs/`: others may pass through but not list.
pub const PASS_THROUGH_DIR_MODE: u32 = 0o711;
/// Mode of a run's copy of an input blob: its sandbox user must read it.
pub const RUN_INPUT_FILE_MODE: u32 = 0o644;
/// Input copies older than this are left over from a server that was killed (runs last at most
/// a few minutes) and are removed when the next server opens the folder.
pub const STALE_RUN_INPUTS_AGE: Duration = Duration::from_secs(60 * 60);

/// The opened data folder: the blob store and the place for runs' input copies.
#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
    blobs: BlobStore,
    run_inputs: PathBuf,
}

impl DataDir {
    /// Open (creating it if needed) the data folder at `root`, with blobs kept for `blob_ttl`.
    /// Folders and files an older version left readable by others are made private, and input
    /// copies left by a killed server are removed.
    ///
    /// # Errors
    /// When a folder cannot be created or its permissions set.
    pub fn open(root: &Path, blob_ttl: Duration) -> Result<Self, BlobError> {
        create_pass_through_dir(root)?;
        let blobs = BlobStore::local(&root.join("blobs"), blob_ttl)?;
        let run_inputs = root.join("run-inputs");
        create_pass_through_dir(&run_inputs)?;
        remove_stale_run_inputs(&run_inputs);
        Ok(DataDir {
            root: root.to_path_buf(),
            blobs,
            run_inputs,
        })
    }

    /// The folder itself.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The blob store under `blobs/`.
    #[must_use]
    pub fn blobs(&self) -> &BlobStore {
        &self.blobs
    }

    /// `run-inputs/`, where each run's input copies live.
    #[must_use]
    pub fn run_inputs(&self) -> &Path {
        &self.run_inputs
    }
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> BlobError + '_ {
    move |error| BlobError::Storage(format!("`{}`: {error}", path.display()))
}

/// Create a folder others may pass through but not list (or set an existing one so).
pub(crate) fn create_pass_through_dir(path: &Path) -> Result<(), BlobError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(PASS_THROUGH_DIR_MODE)
        .create(path)
        .map_err(io_error(path))?;
    // The umask may have taken bits away, and an existing folder may have more.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(PASS_THROUGH_DIR_MODE))
        .map_err(io_error(path))
}

fn remove_stale_run_inputs(run_inputs: &Path) {
    let Ok(entries) = fs_err::read_dir(run_inputs) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|metadata| metadata.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > STALE_RUN_INPUTS_AGE);
        if old {
            let path = entry.path();
            if let Err(error) = fs_err::remove_dir_all(&path) {
                tracing::warn!(%error, "cannot remove input copies left by an earlier server");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_data_folder_has_the_documented_modes() {
        let parent = tempfile::tempdir().unwrap();
        let root = parent.path().join("data");
        let data = DataDir::open(&root, crate::blobs::DEFAULT_BLOB_TTL).unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(data.root()), 0o711);
        assert_eq!(mode(data.run_inputs()), 0o711);
        for folder in ["blobs", "blobs/data", "blobs/meta"] {
            assert_eq!(mode(&root.join(folder)), 0o700, "{folder}");
        }
    }
}
