//! A content-addressed store of skill trees: private, read-only copies of skill folders, each
//! kept under the digest of its files, so that code that was verified is the code that runs.
//!
//! A skill pinned by trust (policy `pin`) is checked against a digest of its files, but its
//! folder stays writable by whoever can write the project: a writer swapping a script between
//! the check and the interpreter's start would get unverified code run. So a pinned skill runs
//! from its copy in this store instead: [`SkillStore::insert_verified`] copies the folder into a
//! private staging folder while hashing exactly the bytes it writes, compares that digest with
//! the trusted one, and only then renames the copy into place; whatever the folder holds
//! meanwhile, the copy holds the bytes that were hashed, or it is thrown away.
//!
//! Layout (meant for installed skills too, whose lockfile records each file's sha256 and so
//! names the same tree digest without reading the files):
//!
//! ```text
//! <store>/sha256/<64 hex digits>/   one tree, its digest the trust digest (`sha256:<hex>`)
//! <store>/sha256/.staging-<id>/     a tree being copied (renamed into place whole)
//! ```
//!
//! Files are 0444 (0555 when executable), folders 0555, symlinks copied as links (their target
//! text, never followed); FIFOs, sockets and devices are refused. A tree is written once and
//! never changed; each use touches its folder, and [`SkillStore::sweep_unused`] removes trees
//! unused for a while and staging folders a killed process left.
//!
//! The tree digest is the one [`crate::digest`] computes over a folder: per entry in
//! walk order, its kind, its relative path, and a file's content sha256 (its executable bit in
//! the kind) or a link's target, each length-prefixed. The copy feeds the records it writes to
//! the same `TreeHasher`; a unit test checks that the copy and the folder digest alike.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use fs_err::os::unix::fs::OpenOptionsExt as _;
use rustix::fs::FileType;
use rustix::io::Errno;
use sha2::{Digest, Sha256};

use crate::digest::{MAX_DIGEST_BYTES, MAX_DIGEST_DEPTH, MAX_DIGEST_ENTRIES, TreeHasher};
use skillbox_core::Skill;
use skillbox_core::source::EntryKind;
use skillbox_core::source::{
    FolderEntry, LISTING_FLAGS, SkillFolder, SkillSource, Visit, entry_stat, open_entry,
    regular_file, special_file_kind, walk_beneath,
};

/// The folder of the store holding trees by their sha256 tree digest.
pub const TREES_FOLDER: &str = "sha256";
/// What a tree's folder is called while it is being copied.
const STAGING_PREFIX: &str = ".staging-";
/// Mode of the store's own folders: the sandbox users of runs that see host paths must pass
/// through them to their tree, but nobody else may list them.
const STORE_FOLDER_MODE: u32 = 0o711;
/// Mode of a copied file.
const FILE_MODE: u32 = 0o444;
/// Mode of a copied executable file.
const EXECUTABLE_MODE: u32 = 0o555;
/// Mode of a copied folder, once the copy is complete.
const FOLDER_MODE: u32 = 0o555;
/// Bytes copied at a time.
const COPY_CHUNK_BYTES: usize = 64 * 1024;

/// Why a tree could not be stored or found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillStoreError {
    /// The store itself cannot be used (created, written, renamed in).
    #[error("cannot use the skill store `{}`: {message}", path.display())]
    Store {
        /// The store folder or the entry in it.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The skill's folder could not be copied: unreadable, a special file, past the limits.
    #[error("cannot copy skill folder `{}`: {message}", path.display())]
    Source {
        /// The skill folder.
        path: PathBuf,
        /// Why, naming the entry.
        message: String,
    },
    /// The files copied are not the ones expected: the folder changed since it was trusted, or
    /// while it was copied.
    #[error(
        "skill folder `{}` holds files whose digest is `{found}`, not `{expected}`",
        path.display()
    )]
    Mismatch {
        /// The skill folder.
        path: PathBuf,
        /// The digest asked for.
        expected: String,
        /// The digest of what was copied.
        found: String,
    },
}

/// A content-addressed store of read-only skill trees in one folder (see the module docs).
#[derive(Debug, Clone)]
pub struct SkillStore {
    trees: PathBuf,
}

impl SkillStore {
    /// Open the store in `folder`, creating it and its `sha256/` folder (mode 0711) when
    /// missing. `folder` must be private to this user (the runtime folder's `store/`): the
    /// store trusts what it finds there.
    ///
    /// # Errors
    /// [`SkillStoreError::Store`] when a folder cannot be created or is not a folder.
    pub fn open(folder: &Path) -> Result<Self, SkillStoreError> {
        let trees = folder.join(TREES_FOLDER);
        for path in [folder, trees.as_path()] {
            create_store_folder(path)?;
        }
        Ok(SkillStore { trees })
    }

    /// Where the tree of `digest` (`sha256:<hex>`) is kept, whether or not it is there yet;
    /// `None` for text that is not a digest.
    #[must_use]
    pub fn tree_path(&self, digest: &str) -> Option<PathBuf> {
        crate::digest::is_digest(digest)
            .then(|| digest.strip_prefix(crate::digest::DIGEST_PREFIX))
            .flatten()
            .map(|hex| self.trees.join(hex))
    }

    /// The tree of `digest` when the store holds it, touched (so a sweep keeps it).
    #[must_use]
    pub fn existing(&self, digest: &str) -> Option<PathBuf> {
        let path = self.tree_path(digest)?;
        touch(&path).ok().map(|()| path)
    }

    /// The tree of a folder skill's files, which must have `expected` as their digest: the
    /// stored tree when there is one (touched), else a copy made now. The copy hashes exactly
    /// the bytes it writes and goes into place only when that digest is `expected`, so the
    /// tree holds the verified files whatever the skill's folder does meanwhile.
    ///
    /// A tree already stored is returned without reading the skill's folder: callers that
    /// must know the folder still holds those files check its digest themselves.
    ///
    /// # Errors
    /// [`SkillStoreError::Mismatch`] when the files are not the expected ones,
    /// [`SkillStoreError::Source`] when they cannot be copied (an archived skill, a special
    /// file, past [`MAX_DIGEST_ENTRIES`] entries or [`MAX_DIGEST_BYTES`] bytes), and
    /// [`SkillStoreError::Store`] when the store cannot be written.
    pub fn insert_verified(
        &self,
        skill: &Skill,
        expected: &str,
    ) -> Result<PathBuf, SkillStoreError> {
        let final_path = self
            .tree_path(expected)
            .ok_or_else(|| SkillStoreError::Store {
                path: self.trees.clone(),
                message: format!("`{expected}` is not a tree digest"),
            })?;
        if touch(&final_path).is_ok() {
            return Ok(final_path);
        }
        let SkillSource::Directory(folder) = &skill.source else {
            return Err(SkillStoreError::Source {
                path: skill.directory.clone(),
                message: "only a skill folder can be copied, not an archive".to_owned(),
            });
        };
        let staging = self.new_staging()?;
        let copied = copy_tree(folder, &staging).and_then(|found| {
            if found == expected {
                Ok(())
            } else {
                Err(SkillStoreError::Mismatch {
                    path: folder.path().to_path_buf(),
                    expected: expected.to_owned(),
                    found,
                })
            }
        });
        if let Err(error) = copied {
            remove_tree(&staging);
            return Err(error);
        }
        // Another process may have put the same tree in place first.
        move_into_place(&staging, &final_path)?;
        Ok(final_path)
    }

    /// Store the files of the folder at `folder` (a staging folder of this user's, such as a
    /// fetched skill) under their tree digest, hashing exactly the bytes written: the digest and
    /// the stored tree. A tree already stored is touched and kept, the new copy thrown away.
    ///
    /// # Errors
    /// [`SkillStoreError::Source`] when the folder cannot be copied (a special file, past the
    /// limits), [`SkillStoreError::Store`] when the store cannot be written.
    pub fn insert_folder(&self, folder: &Path) -> Result<(String, PathBuf), SkillStoreError> {
        let source = SkillFolder::open(folder).map_err(|error| SkillStoreError::Source {
            path: folder.to_path_buf(),
            message: error.to_string(),
        })?;
        let staging = self.new_staging()?;
        let digest = match copy_tree(&source, &staging) {
            Ok(digest) => digest,
            Err(error) => {
                remove_tree(&staging);
                return Err(error);
            }
        };
        let Some(final_path) = self.tree_path(&digest) else {
            remove_tree(&staging);
            return Err(store_error(&staging, &"the copy has no digest"));
        };
        move_into_place(&staging, &final_path)?;
        Ok((digest, final_path))
    }

    /// Move the folder at `folder` into the store under its tree digest, without copying: for
    /// a folder this process wrote itself in a private staging folder on the store's file
    /// system (a fetched skill), which nobody else can change between the hashing and the
    /// move. Its files become 0444 (0555 when executable) and its folders 0555. When the store
    /// already holds the tree, the folder is removed and the stored tree touched.
    ///
    /// # Errors
    /// [`SkillStoreError::Source`] when the folder cannot be read or holds a special file,
    /// [`SkillStoreError::Store`] when it cannot be moved in.
    pub fn adopt_folder(
        &self,
        folder: &Path,
    ) -> Result<(crate::digest::FolderInventory, PathBuf), SkillStoreError> {
        let source_error = |message: String| SkillStoreError::Source {
            path: folder.to_path_buf(),
            message,
        };
        let inventory = crate::digest::folder_inventory_at(folder)
            .map_err(|error| source_error(error.to_string()))?;
        let final_path = self
            .tree_path(&inventory.digest)
            .ok_or_else(|| source_error("the folder has no digest".to_owned()))?;
        if touch(&final_path).is_ok() {
            remove_tree(folder);
            return Ok((inventory, final_path));
        }
        make_read_only(folder, false).map_err(|error| source_error(error.to_string()))?;
        if move_into_place(folder, &final_path)? {
            // The moved folder's own mode last: moving a folder to another parent needs it
            // writable.
            let _ =
                fs_err::set_permissions(&final_path, std::fs::Permissions::from_mode(FOLDER_MODE));
        }
        Ok((inventory, final_path))
    }

    /// Remove trees no use has touched for `age`, and staging folders older than that (left
    /// by a process killed mid-copy). Returns how many were removed. A tree removed while a
    /// long-lived process still runs from it is gone for that process too: `age` must be far
    /// longer than any worker lives idle.
    pub fn sweep_unused(&self, age: Duration) -> usize {
        let Ok(entries) = fs_err::read_dir(&self.trees) else {
            return 0;
        };
        let now = SystemTime::now();
        let mut removed = 0;
        for entry in entries.flatten() {
            let Ok(metadata) = fs_err::symlink_metadata(entry.path()) else {
                continue;
            };
            let old = metadata.modified().is_ok_and(|modified| {
                now.duration_since(modified)
                    .is_ok_and(|elapsed| elapsed > age)
            });
            if old && metadata.is_dir() && remove_tree(&entry.path()) {
                tracing::info!(folder = %entry.path().display(), "removed an unused skill tree");
                removed += 1;
            }
        }
        removed
    }
}

impl SkillStore {
    /// A new private (0700) staging folder in the store, for a tree being copied.
    fn new_staging(&self) -> Result<PathBuf, SkillStoreError> {
        let staging = self
            .trees
            .join(format!("{STAGING_PREFIX}{}", unique_suffix()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&staging)
            .map_err(|error| store_error(&staging, &error))?;
        Ok(staging)
    }
}

/// Rename the complete tree `built` to `final_path`, its place in the store; when the store
/// holds that tree already (another process put it there first), `built` is removed and the
/// stored tree touched. Whether `built` is the one now in place.
///
/// # Errors
/// [`SkillStoreError::Store`] when it can be neither moved nor found in place.
fn move_into_place(built: &Path, final_path: &Path) -> Result<bool, SkillStoreError> {
    if touch(final_path).is_ok() {
        remove_tree(built);
        return Ok(false);
    }
    match fs_err::rename(built, final_path) {
        Ok(()) => Ok(true),
        Err(error) => {
            remove_tree(built);
            if touch(final_path).is_ok() {
                Ok(false)
            } else {
                Err(store_error(final_path, &error))
            }
        }
    }
}

/// Create one of the store's own folders (0711) unless it is there; refuse anything else at
/// its name (a link included).
fn create_store_folder(path: &Path) -> Result<(), SkillStoreError> {
    match std::fs::DirBuilder::new()
        .mode(STORE_FOLDER_MODE)
        .create(path)
    {
        Ok(()) => {
            // The mode asked for is narrowed by the umask.
            fs_err::set_permissions(path, std::fs::Permissions::from_mode(STORE_FOLDER_MODE))
                .map_err(|error| store_error(path, &error))
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            let metadata =
                fs_err::symlink_metadata(path).map_err(|error| store_error(path, &error))?;
            if metadata.is_dir() {
                Ok(())
            } else {
                Err(SkillStoreError::Store {
                    path: path.to_path_buf(),
                    message: "it is not a folder".to_owned(),
                })
            }
        }
        Err(error) => Err(store_error(path, &error)),
    }
}

fn store_error(path: &Path, error: &dyn std::fmt::Display) -> SkillStoreError {
    SkillStoreError::Store {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

/// A name part no other staging folder of this host has at the same time.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Set a folder's modification time to now, marking it used for the sweep; fails when it is
/// not a folder (a link is not followed).
///
/// # Errors
/// When the folder cannot be read or its time set.
pub fn touch(directory: &Path) -> std::io::Result<()> {
    let metadata = fs_err::symlink_metadata(directory)?;
    if !metadata.is_dir() {
        return Err(std::io::Error::other("not a folder"));
    }
    let now = std::fs::FileTimes::new().set_modified(SystemTime::now());
    fs_err::File::open(directory)?.set_times(now)
}

pub use crate::safe_write::{remove_read_only_tree, remove_tree};

/// Make the files under `folder` read-only (keeping executable bits) and its subfolders 0555;
/// the folder itself too when `itself`. Links are left as they are.
fn make_read_only(folder: &Path, itself: bool) -> std::io::Result<()> {
    for entry in fs_err::read_dir(folder)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() {
            make_read_only(&path, true)?;
        } else if kind.is_file() {
            let executable = fs_err::symlink_metadata(&path)?.permissions().mode() & 0o111 != 0;
            let mode = if executable {
                EXECUTABLE_MODE
            } else {
                FILE_MODE
            };
            fs_err::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
        }
    }
    if itself {
        fs_err::set_permissions(folder, std::fs::Permissions::from_mode(FOLDER_MODE))?;
    }
    Ok(())
}

/// Copy the skill folder (as loaded) into the empty folder `staging`, read-only, and return
/// the tree digest of what was written. Every entry is opened relative to its parent without
/// following links; each file's bytes are hashed as they are written.
fn copy_tree(folder: &SkillFolder, staging: &Path) -> Result<String, SkillStoreError> {
    let directory = folder.path();
    let refused = |message: String| SkillStoreError::Source {
        path: directory.to_path_buf(),
        message,
    };
    let root = folder
        .open_checked(LISTING_FLAGS)
        .map_err(|error| refused(error.to_string()))?;
    let mut hasher = TreeHasher::folder();
    let mut entries = 0usize;
    let mut remaining_bytes = MAX_DIGEST_BYTES;
    let mut folders: Vec<PathBuf> = Vec::new();
    let mut visit = |entry: &FolderEntry<'_>| -> Result<Visit, CopyFailure> {
        let shown = || directory.join(OsStr::from_bytes(entry.relative));
        if entry.depth > MAX_DIGEST_DEPTH {
            return Err(CopyFailure::Source(format!(
                "`{}` is nested deeper than {MAX_DIGEST_DEPTH} folders",
                shown().display()
            )));
        }
        entries += 1;
        if entries > MAX_DIGEST_ENTRIES {
            return Err(CopyFailure::Source(format!(
                "it holds more than {MAX_DIGEST_ENTRIES} entries"
            )));
        }
        let target = staging.join(OsStr::from_bytes(entry.relative));
        match entry.kind {
            EntryKind::Folder => {
                std::fs::DirBuilder::new()
                    .mode(0o700)
                    .create(&target)
                    .map_err(|error| CopyFailure::Store(target.clone(), error))?;
                hasher.folder_entry(entry.relative);
                folders.push(target);
                return Ok(Visit::Enter);
            }
            EntryKind::Symlink => {
                let link = rustix::fs::readlinkat(entry.parent, entry.name, Vec::new())
                    .map_err(|error| source_refusal("cannot read the link", &shown(), error))?;
                std::os::unix::fs::symlink(OsStr::from_bytes(link.as_bytes()), &target)
                    .map_err(|error| CopyFailure::Store(target.clone(), error))?;
                hasher.link(entry.relative, link.as_bytes());
            }
            EntryKind::File => {
                let opened = open_entry(entry)
                    .map_err(|error| source_refusal("cannot open", &shown(), error))?;
                let source = fs_err::File::from_parts(std::fs::File::from(opened), shown());
                let (content_hash, executable) = copy_file(source, &target, &mut remaining_bytes)?;
                hasher.file(entry.relative, &content_hash, executable);
            }
            EntryKind::Special => {
                let kind = entry_stat(entry).map_or("a special file", |stat| {
                    special_file_kind(FileType::from_raw_mode(stat.st_mode))
                });
                return Err(CopyFailure::Source(format!(
                    "`{}` is {kind}, which a skill that runs from a verified copy may not hold",
                    shown().display()
                )));
            }
        }
        Ok(Visit::Next)
    };
    let mut unreadable = |relative: &[u8], error: Errno| {
        Err(source_refusal(
            "cannot read",
            &directory.join(OsStr::from_bytes(relative)),
            error,
        ))
    };
    walk_beneath(root.as_fd(), &mut visit, &mut unreadable).map_err(|failure| match failure {
        CopyFailure::Source(message) => refused(message),
        CopyFailure::Store(path, error) => store_error(&path, &error),
    })?;
    // Innermost first: a folder made read-only can no longer receive entries.
    for folder in folders.iter().rev().map(PathBuf::as_path).chain([staging]) {
        fs_err::set_permissions(folder, std::fs::Permissions::from_mode(FOLDER_MODE))
            .map_err(|error| store_error(folder, &error))?;
    }
    Ok(hasher.finish())
}

/// Why the walk of a copy stopped.
enum CopyFailure {
    /// The skill's folder is not copyable (the message names the entry).
    Source(String),
    /// Writing the copy failed.
    Store(PathBuf, std::io::Error),
}

fn source_refusal(what: &str, path: &Path, error: Errno) -> CopyFailure {
    CopyFailure::Source(format!(
        "{what} `{}`: {}",
        path.display(),
        std::io::Error::from(error)
    ))
}

/// Copy a regular file (opened without following a link or blocking) to `target`, created
/// new, and return the sha256 of the bytes written and whether it is executable, taking its
/// size from `remaining_bytes`. The descriptor is checked to be a regular file, so a FIFO
/// swapped in after the walk saw a file is refused rather than waited on.
fn copy_file(
    source: fs_err::File,
    target: &Path,
    remaining_bytes: &mut u64,
) -> Result<(Vec<u8>, bool), CopyFailure> {
    let mut source =
        regular_file(source).map_err(|error| CopyFailure::Source(error.to_string()))?;
    let metadata = source
        .metadata()
        .map_err(|error| CopyFailure::Source(error.to_string()))?;
    let executable = metadata.permissions().mode() & 0o111 != 0;
    let mut output = fs_err::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(target)
        .map_err(|error| CopyFailure::Store(target.to_path_buf(), error))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; COPY_CHUNK_BYTES];
    loop {
        let read = source
            .read(&mut buffer)
            .map_err(|error| CopyFailure::Source(error.to_string()))?;
        if read == 0 {
            break;
        }
        *remaining_bytes = remaining_bytes.checked_sub(read as u64).ok_or_else(|| {
            CopyFailure::Source(format!("its files hold more than {MAX_DIGEST_BYTES} bytes"))
        })?;
        hasher.update(&buffer[..read]);
        output
            .write_all(&buffer[..read])
            .map_err(|error| CopyFailure::Store(target.to_path_buf(), error))?;
    }
    let mode = if executable {
        EXECUTABLE_MODE
    } else {
        FILE_MODE
    };
    output
        .file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|error| CopyFailure::Store(target.to_path_buf(), error))?;
    Ok((hasher.finalize().to_vec(), executable))
}

/// The environment variable naming skillbox's cache folder (the store of installed trees, the
/// eval response cache).
pub const CACHE_DIRECTORY_ENVIRONMENT_VARIABLE: &str = "SKILLBOX_CACHE_DIR";

/// skillbox's cache folder, absolute: `SKILLBOX_CACHE_DIR`, else `skillbox/` in
/// `XDG_CACHE_HOME` or `~/.cache`; `None` when none of them is set.
#[must_use]
pub fn cache_folder() -> Option<PathBuf> {
    let named = |variable: &str| std::env::var_os(variable).filter(|folder| !folder.is_empty());
    let folder = match named(CACHE_DIRECTORY_ENVIRONMENT_VARIABLE) {
        Some(folder) => PathBuf::from(folder),
        None => named("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| named("HOME").map(|home| PathBuf::from(home).join(".cache")))?
            .join("skillbox"),
    };
    Some(std::path::absolute(&folder).unwrap_or(folder))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use pretty_assertions::assert_eq;

    use super::*;
    use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot};

    /// A root holding one skill `demo` with a script, a nested folder, an executable, a hidden
    /// file and a link.
    fn root() -> tempfile::TempDir {
        let temp = tempfile::tempdir().unwrap();
        let skill = temp.path().join("demo");
        std::fs::create_dir_all(skill.join("scripts/lib")).unwrap();
        std::fs::create_dir_all(skill.join("empty")).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: demo\ndescription: Demo.\n---\nBody.\n",
        )
        .unwrap();
        std::fs::write(skill.join("scripts/run.py"), "print(1)\n").unwrap();
        std::fs::write(skill.join("scripts/lib/util.py"), "X = 1\n").unwrap();
        std::fs::write(skill.join("scripts/tool.sh"), "echo hi\n").unwrap();
        std::fs::set_permissions(
            skill.join("scripts/tool.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::write(skill.join(".hidden"), "h").unwrap();
        std::os::unix::fs::symlink("scripts/run.py", skill.join("alias.py")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", skill.join("outside")).unwrap();
        temp
    }

    fn load(root: &Path) -> SkillCatalog {
        SkillCatalog::load(&CatalogOptions {
            roots: vec![SkillRoot::explicit(root)],
            ..CatalogOptions::default()
        })
        .unwrap()
    }

    fn mode(path: &Path) -> u32 {
        fs_err::symlink_metadata(path).unwrap().mode() & 0o7777
    }

    #[test]
    fn a_copy_is_read_only_holds_the_same_tree_and_digests_as_the_trust_digest() {
        let temp = root();
        let catalog = load(temp.path());
        let skill = catalog.get("demo").unwrap();
        let digest = crate::digest::skill_digest(skill).unwrap();
        let store_folder = tempfile::tempdir().unwrap();
        let store = SkillStore::open(&store_folder.path().join("store")).unwrap();
        assert_eq!(store.existing(&digest), None);
        let tree = store.insert_verified(skill, &digest).unwrap();
        assert_eq!(Some(tree.clone()), store.tree_path(&digest));
        assert_eq!(
            tree.file_name().unwrap().to_str().unwrap(),
            digest.strip_prefix("sha256:").unwrap()
        );
        assert_eq!(store.existing(&digest), Some(tree.clone()));
        // The copy, loaded as a skill of its own, has the trusted digest.
        let copied = load(&tree);
        assert_eq!(
            crate::digest::skill_digest(copied.get("demo").unwrap()).unwrap(),
            digest,
            "the store's tree digest and the trust digest disagree"
        );
        assert_eq!(
            fs_err::read_to_string(tree.join("scripts/run.py")).unwrap(),
            "print(1)\n"
        );
        assert_eq!(mode(&tree.join("scripts/run.py")), 0o444);
        assert_eq!(mode(&tree.join("scripts/tool.sh")), 0o555);
        for folder in ["", "scripts", "scripts/lib", "empty"] {
            assert_eq!(mode(&tree.join(folder)), 0o555, "{folder}");
        }
        assert_eq!(
            fs_err::read_link(tree.join("outside")).unwrap(),
            Path::new("/etc/hostname")
        );
        assert_eq!(mode(&store_folder.path().join("store/sha256")), 0o711);
        // Inserting again finds the tree.
        assert_eq!(store.insert_verified(skill, &digest).unwrap(), tree);
    }

    #[test]
    fn a_folder_that_is_not_the_expected_one_leaves_nothing() {
        let temp = root();
        let catalog = load(temp.path());
        let skill = catalog.get("demo").unwrap();
        let digest = crate::digest::skill_digest(skill).unwrap();
        std::fs::write(temp.path().join("demo/scripts/run.py"), "print(2)\n").unwrap();
        let store_folder = tempfile::tempdir().unwrap();
        let store = SkillStore::open(store_folder.path()).unwrap();
        let error = store.insert_verified(skill, &digest).unwrap_err();
        assert!(
            matches!(&error, SkillStoreError::Mismatch { expected, .. } if *expected == digest),
            "{error}"
        );
        let left: Vec<_> = fs_err::read_dir(store_folder.path().join(TREES_FOLDER))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn special_files_are_refused_without_blocking() {
        let temp = root();
        skillbox_testkit::make_fifo(&temp.path().join("demo/scripts/pipe"));
        let catalog = load(temp.path());
        let skill = catalog.get("demo").unwrap();
        let store_folder = tempfile::tempdir().unwrap();
        let store = SkillStore::open(store_folder.path()).unwrap();
        let error = store
            .insert_verified(skill, &format!("sha256:{}", "0".repeat(64)))
            .unwrap_err()
            .to_string();
        assert!(error.contains("is a FIFO"), "{error}");
    }

    #[test]
    fn an_adopted_folder_is_moved_in_read_only_under_the_same_digest_as_a_copy() {
        let temp = root();
        let store = SkillStore::open(&temp.path().join("store")).unwrap();
        let catalog = load(temp.path());
        let skill = catalog.get("demo").unwrap();
        let (copied_digest, _) = store.insert_folder(&skill.directory).unwrap();
        let private = temp.path().join("private");
        std::fs::create_dir(&private).unwrap();
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg(&skill.directory)
            .arg(private.join("demo"))
            .status()
            .unwrap();
        assert!(status.success());
        let other = SkillStore::open(&temp.path().join("other-store")).unwrap();
        let (inventory, tree) = other.adopt_folder(&private.join("demo")).unwrap();
        assert_eq!(inventory.digest, copied_digest);
        assert!(!private.join("demo").exists());
        assert_eq!(mode(&tree) & 0o777, 0o555);
        assert_eq!(mode(&tree.join("SKILL.md")) & 0o777, 0o444);
    }

    #[test]
    fn only_trees_unused_for_the_age_are_swept() {
        let temp = root();
        let catalog = load(temp.path());
        let skill = catalog.get("demo").unwrap();
        let digest = crate::digest::skill_digest(skill).unwrap();
        let store_folder = tempfile::tempdir().unwrap();
        let store = SkillStore::open(store_folder.path()).unwrap();
        let tree = store.insert_verified(skill, &digest).unwrap();
        let stale = store_folder
            .path()
            .join(TREES_FOLDER)
            .join(format!("{STAGING_PREFIX}1"));
        std::fs::create_dir_all(stale.join("x")).unwrap();
        std::fs::set_permissions(&stale, std::fs::Permissions::from_mode(0o555)).unwrap();
        assert_eq!(store.sweep_unused(Duration::from_secs(3600)), 0);
        let long_ago = SystemTime::now() - Duration::from_secs(48 * 60 * 60);
        for folder in [&tree, &stale] {
            fs_err::File::open(folder)
                .unwrap()
                .file()
                .set_modified(long_ago)
                .unwrap();
        }
        // A use touches the tree it runs.
        assert_eq!(store.existing(&digest), Some(tree.clone()));
        assert_eq!(store.sweep_unused(Duration::from_secs(3600)), 1);
        assert!(tree.is_dir());
        assert!(!stale.exists());
    }
}
