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
//! With `--blob-store s3://…` (or another object store) the blobs live in the bucket and
//! `blobs/` is not made; with `--blob-store file:///folder` they live in that folder, checked
//! and kept private as `blobs/` is. The rest of the folder stays on this machine either way.
//!
//! Runs execute as other users, so they can never read the store itself; each run gets its
//! own copies of the blobs it asked for, under names nobody else can guess.
//!
//! The folder must be the runtime's user's own: it, every folder on the way to it, `blobs/`
//! and `run-inputs/` are refused when another user owns them or could rename what is in them
//! (the same rule as the runtime folder). Otherwise whoever owned a `--data-dir` such as
//! `/tmp/skillbox` could swap `blobs/` for a link to a folder of theirs and read every blob, or
//! swap `builtin/` for a root of their own that would take precedence over every skill.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::blob_location::BlobLocation;
use crate::blobs::{BlobError, BlobStore};

/// Mode of the data folder and of `run-inputs/`: others may pass through but not list.
pub const PASS_THROUGH_DIR_MODE: u32 = 0o711;
/// Mode of a run's copy of an input blob: its sandbox user must read it.
pub const RUN_INPUT_FILE_MODE: u32 = 0o644;
/// Mode of `builtin/`: the built-in skills are public text runs may mount.
const BUILTIN_DIR_MODE: u32 = 0o755;
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
        Self::open_with(root, blob_ttl, None)
    }

    /// [`DataDir::open`] with the blob store at `blobs` (`--blob-store`) instead of `blobs/`
    /// when one is given. A remote store is configured but not contacted yet
    /// ([`BlobStore::check_access`]).
    ///
    /// # Errors
    /// As [`DataDir::open`], and a remote store's configuration the object store refuses.
    pub fn open_with(
        root: &Path,
        blob_ttl: Duration,
        blobs: Option<&BlobLocation>,
    ) -> Result<Self, BlobError> {
        refuse_a_foreign_folder(root)?;
        let root = own_folder(root, PASS_THROUGH_DIR_MODE)?;
        let private = crate::blobs::PRIVATE_DIR_MODE;
        let blobs = match blobs {
            None => BlobStore::local(&own_folder(&root.join("blobs"), private)?, blob_ttl)?,
            Some(BlobLocation::Local(folder)) => {
                // Before the folder is prepared: preparing it sets its mode.
                crate::blobs::refuse_foreign_entries(folder)?;
                BlobStore::local(
                    &own_folder_of(folder, private, BLOB_STORE_FOLDER)?,
                    blob_ttl,
                )?
            }
            Some(BlobLocation::Remote(remote)) => BlobStore::remote(remote, blob_ttl)?,
        };
        let run_inputs = own_folder(&root.join("run-inputs"), PASS_THROUGH_DIR_MODE)?;
        // The built-in skills are written there, its mode set: never through a link.
        own_folder(&root.join("builtin"), BUILTIN_DIR_MODE)?;
        remove_stale_run_inputs(&run_inputs);
        Ok(DataDir {
            root,
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

    /// `builtin/`, the root of the built-in skills, under the checked folder (links resolved):
    /// never rebuilt from the path given, whose links could have changed since the check.
    #[must_use]
    pub fn builtin(&self) -> PathBuf {
        self.root.join("builtin")
    }

    /// `runtime/`, the runtime folder of the server's runs (their output files are copied there
    /// before they become blobs), under the checked folder like [`DataDir::builtin`].
    #[must_use]
    pub fn runtime(&self) -> PathBuf {
        self.root.join("runtime")
    }
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> BlobError + '_ {
    move |error| BlobError::Storage(format!("`{}`: {error}", path.display()))
}

/// Create `path` with `mode`, or accept it when it exists, after checking that it and every
/// folder on the way belong to the runtime's user (or root) and that nobody else can rename
/// what is in them. Returns the path with links resolved.
fn own_folder(path: &Path, mode: u32) -> Result<PathBuf, BlobError> {
    own_folder_of(path, mode, DATA_FOLDER)
}

/// Entries of a data folder, one of which every data folder skillbox used holds.
const DATA_FOLDER_ENTRIES: &[&str] = &["blobs", "run-inputs", "builtin", "runtime", "transcripts"];

/// Refuse a folder that holds files (not only folders) but none of a data folder's entries: a folder given by
/// mistake (`--data-dir /etc`), whose mode opening it would change.
fn refuse_a_foreign_folder(root: &Path) -> Result<(), BlobError> {
    let Ok(entries) = fs_err::read_dir(root) else {
        // Missing (it is created) or unreadable (the ownership check says why).
        return Ok(());
    };
    let entries: Vec<fs_err::DirEntry> = entries.filter_map(Result::ok).collect();
    let ours = entries.iter().any(|entry| {
        DATA_FOLDER_ENTRIES
            .iter()
            .any(|name| entry.file_name() == *name)
    });
    // Folders alone (a caller's own `runs/`, say) are not someone's files.
    let holds_files = entries
        .iter()
        .any(|entry| entry.file_type().is_ok_and(|kind| !kind.is_dir()));
    if ours || !holds_files {
        return Ok(());
    }
    Err(BlobError::Storage(format!(
        "`{}` (the data folder) holds files but no skillbox data: opening it would change its permissions; pass a --data-dir of its own (a new or empty folder)",
        root.display()
    )))
}

/// What a checked folder is, in messages: its name and the flag that gives it.
struct FolderRole {
    name: &'static str,
    flag: &'static str,
}

const DATA_FOLDER: FolderRole = FolderRole {
    name: "the data folder",
    flag: "--data-dir",
};

const BLOB_STORE_FOLDER: FolderRole = FolderRole {
    name: "the blob store's folder",
    flag: "--blob-store file:///…",
};

/// [`own_folder`] for a folder in the role `role`, named so in messages.
fn own_folder_of(path: &Path, mode: u32, role: FolderRole) -> Result<PathBuf, BlobError> {
    use skillbox_exec::private_directory::{PrivateDirectoryError, ensure_private_directory};
    let FolderRole { name, flag } = role;
    let hint = format!("pass a {flag} of your own");
    ensure_private_directory(path, mode).map_err(|error| {
        BlobError::Storage(match error {
            PrivateDirectoryError::ForeignOwner { path, owner, ours } => format!(
                "`{}` ({name} or a folder on its path) belongs to uid {owner}, not to you (uid {ours}) or root: that user could read or replace the blobs kept there; {hint}",
                path.display()
            ),
            PrivateDirectoryError::OpenToOthers { path, mode } => format!(
                "`{}` ({name} or a folder on its path) can be written by other users (mode {mode:o}) and has no sticky bit: they could replace the folders skillbox keeps there; make it yours alone (chmod go-w) or {hint}",
                path.display()
            ),
            PrivateDirectoryError::NotAFolder { path } => format!(
                "`{}` in {name} is not a folder (it may be a link): remove it or {hint}",
                path.display()
            ),
            other => format!("cannot prepare the data folder: {other}"),
        })
    })
}

/// Create a folder others may pass through but not list (or set an existing one so).
pub(crate) fn create_pass_through_dir(path: &Path) -> Result<(), BlobError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(PASS_THROUGH_DIR_MODE)
        .create(path)
        .map_err(io_error(path))?;
    // The umask may have taken bits away, and an existing folder may have more.
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(PASS_THROUGH_DIR_MODE))
        .map_err(|error| BlobError::Storage(error.to_string()))
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
    fn a_blob_store_folder_of_other_files_is_refused_before_its_mode_changes() {
        let data = tempfile::tempdir().unwrap();
        let store = tempfile::tempdir().unwrap();
        fs_err::write(store.path().join("notes.txt"), "keep me").unwrap();
        fs_err::set_permissions(store.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let location = BlobLocation::Local(store.path().to_path_buf());
        let error = DataDir::open_with(data.path(), Duration::from_secs(60), Some(&location))
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("holds `notes.txt`"), "{error}");
        let mode = fs_err::metadata(store.path()).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o755, "the folder's mode was changed");
    }

    #[test]
    fn a_folder_of_other_files_is_refused_as_a_data_folder_and_left_alone() {
        let folder = tempfile::tempdir().unwrap();
        let notes = folder.path().join("notes.txt");
        fs_err::write(&notes, "keep me").unwrap();
        fs_err::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let error = DataDir::open(folder.path(), Duration::from_secs(60))
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("holds files but no skillbox data"),
            "{error}"
        );
        let mode = fs_err::metadata(folder.path())
            .unwrap()
            .permissions()
            .mode()
            & 0o7777;
        assert_eq!(mode, 0o755, "the folder was touched");
        assert!(!folder.path().join("blobs").exists());
    }

    #[test]
    fn a_data_folder_others_could_change_is_refused() {
        let parent = tempfile::tempdir().unwrap();
        let ttl = crate::blobs::DEFAULT_BLOB_TTL;
        let refusal = |root: &Path| match DataDir::open(root, ttl) {
            Ok(_) => panic!("`{}` was accepted", root.display()),
            Err(error) => error.to_string(),
        };
        // Writable by others, without a sticky bit.
        let open = parent.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let message = refusal(&open);
        assert!(
            message.contains("can be written by other users") && message.contains("--data-dir"),
            "{message}"
        );
        // Inside such a folder, even when the data folder itself is new.
        let message = refusal(&open.join("data"));
        assert!(
            message.contains("can be written by other users"),
            "{message}"
        );
        // `blobs` swapped for a link.
        let mine = parent.path().join("mine");
        DataDir::open(&mine, ttl).unwrap();
        let elsewhere = parent.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::rename(mine.join("blobs"), parent.path().join("old-blobs")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, mine.join("blobs")).unwrap();
        let message = refusal(&mine);
        assert!(message.contains("is not a folder"), "{message}");
        // Owned by another user.
        // The temporary folder is ours: its owner says whether we are root.
        if std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(parent.path()).unwrap()) == 0 {
            let planted = parent.path().join("planted");
            std::fs::create_dir(&planted).unwrap();
            std::os::unix::fs::chown(&planted, Some(4242), Some(4242)).unwrap();
            let message = refusal(&planted);
            assert!(message.contains("belongs to uid 4242"), "{message}");
        } else {
            eprintln!("SKIPPED the foreign-owner case: needs root to chown");
        }
    }

    #[test]
    fn the_builtin_and_runtime_folders_stay_where_the_check_was_made() {
        let parent = tempfile::tempdir().unwrap();
        let checked = parent.path().join("checked");
        std::fs::create_dir(&checked).unwrap();
        let link = parent.path().join("link");
        std::os::unix::fs::symlink(&checked, &link).unwrap();
        let data = DataDir::open(&link.join("data"), crate::blobs::DEFAULT_BLOB_TTL).unwrap();
        // The link's owner points it elsewhere after the checks passed.
        let elsewhere = parent.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let resolved = std::fs::canonicalize(checked.join("data")).unwrap();
        assert_eq!(data.builtin(), resolved.join("builtin"));
        assert_eq!(data.runtime(), resolved.join("runtime"));
    }

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
