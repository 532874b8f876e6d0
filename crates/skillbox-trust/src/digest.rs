//! The digest of a skill's files: one sha256 over every entry of the skill folder, in a fixed
//! order, so that any change to what could run (a file's bytes, its executable bit, a new or
//! removed file, a symlink's target) changes the digest.
//!
//! Each entry is hashed as its kind, its `/`-separated path relative to the skill, and then the
//! sha256 of a file's bytes (with its executable bit) or a symlink's target text, each part
//! length-prefixed so that no two trees hash alike. Folders are walked in sorted order without
//! following links (a link is recorded by its target, never read through), from the skill
//! folder as loaded (a folder replaced since is refused, as every read of it is) and each
//! relative to its parent's descriptor, FIFOs, sockets and devices are refused without being
//! opened, and the work is bounded by
//! [`MAX_DIGEST_ENTRIES`] and [`MAX_DIGEST_BYTES`]. Archived skills are hashed from the archive
//! bytes the catalog holds, entry by entry (decompressed a buffer at a time), which are what
//! runs.

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::FileType;
use rustix::io::Errno;
use sha2::{Digest, Sha256};

use crate::error::TrustError;
use skillbox_core::Skill;
use skillbox_core::source::EntryKind;
use skillbox_core::source::{
    ArchivedFiles, FolderEntry, LISTING_FLAGS, SkillFolder, SkillSource, Visit, entry_stat,
    hash_reader, open_entry, regular_file, special_file_kind, walk_beneath,
};

/// Most entries (files, folders, links) of one skill that are hashed; past this the skill cannot
/// be pinned (trust its root with the `follow` policy instead).
pub const MAX_DIGEST_ENTRIES: usize = 20_000;
/// Most bytes of one skill's files that are hashed; past this the skill cannot be pinned.
pub const MAX_DIGEST_BYTES: u64 = 512 * 1024 * 1024;
/// Deepest folder nesting hashed inside one skill.
pub const MAX_DIGEST_DEPTH: usize = 64;
/// The prefix of every digest's text.
pub const DIGEST_PREFIX: &str = "sha256:";

/// What the hash of a folder-source skill starts with; archives use another, so the two kinds
/// never collide.
const FOLDER_DOMAIN: &[u8] = b"skillbox trust digest v1 folder\n";
const ARCHIVE_DOMAIN: &[u8] = b"skillbox trust digest v1 archive\n";

/// The digest of a skill's files, as `sha256:<64 hex>`.
///
/// # Errors
/// [`TrustError::Digest`] naming the skill folder and the entry when the folder (or an entry)
/// cannot be read, holds a FIFO, socket or device, or is larger than the limits.
pub fn skill_digest(skill: &Skill) -> Result<String, TrustError> {
    match &skill.source {
        SkillSource::Directory(folder) => directory_digest(folder),
        SkillSource::Archive(files) => files.trust_digest_once(archive_digest),
    }
}

/// The digest of a skill folder (a symlink at the folder itself is followed, as the executor
/// does before running anything in it), as it was loaded.
///
/// # Errors
/// As [`skill_digest`].
fn directory_digest(folder: &SkillFolder) -> Result<String, TrustError> {
    folder_inventory(folder).map(|inventory| inventory.digest)
}

/// One regular file of a skill folder, as [`folder_inventory`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryFile {
    /// The sha256 of its bytes, as `sha256:<64 hex>` (the MCP skills extension's form).
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
    /// Whether any executable bit is set.
    pub executable: bool,
}

/// Everything a skill folder holds, with the tree digest [`skill_digest`] gives it: what an
/// install records in its lock and what `verify` compares against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FolderInventory {
    /// The tree digest (`sha256:<hex>`), the same as [`skill_digest`] of the folder.
    pub digest: String,
    /// Regular files by `/`-separated path relative to the folder.
    pub files: std::collections::BTreeMap<String, InventoryFile>,
    /// Symbolic links by path, with their target text (never followed).
    pub links: std::collections::BTreeMap<String, String>,
}

/// The inventory of the skill folder at `path` (see [`FolderInventory`]): walked as the digest
/// walks it, under the same limits, refusing FIFOs, sockets and devices without opening them.
///
/// # Errors
/// [`TrustError::Digest`] naming the folder and the entry when it cannot be read, holds a
/// special file, or is past the limits; a path that is not a folder is refused as well.
pub fn folder_inventory_at(path: &Path) -> Result<FolderInventory, TrustError> {
    let folder = SkillFolder::open(path).map_err(|error| TrustError::Digest {
        path: path.to_path_buf(),
        message: error.to_string(),
    })?;
    folder_inventory(&folder)
}

/// The inventory of a skill folder as it was loaded (see [`folder_inventory_at`]).
///
/// # Errors
/// As [`folder_inventory_at`].
pub fn folder_inventory(folder: &SkillFolder) -> Result<FolderInventory, TrustError> {
    let directory = folder.path();
    let refused = |message: String| TrustError::Digest {
        path: directory.to_path_buf(),
        message,
    };
    let root = folder
        .open_checked(LISTING_FLAGS)
        .map_err(|error| refused(error.to_string()))?;
    let mut hasher = TreeHasher::folder();
    let mut inventory = FolderInventory::default();
    let mut entries = 0usize;
    let mut remaining_bytes = MAX_DIGEST_BYTES;
    let mut visit = |entry: &FolderEntry<'_>| {
        let shown = || inside(directory, entry.relative);
        if entry.depth > MAX_DIGEST_DEPTH {
            return Err(format!(
                "`{}` is nested deeper than {MAX_DIGEST_DEPTH} folders",
                shown().display()
            ));
        }
        entries += 1;
        if entries > MAX_DIGEST_ENTRIES {
            return Err(format!(
                "it holds more than {MAX_DIGEST_ENTRIES} entries, too many to pin; trust its root with `--trust-policy follow`"
            ));
        }
        let relative = String::from_utf8_lossy(entry.relative).into_owned();
        match entry.kind {
            EntryKind::Folder => {
                hasher.folder_entry(entry.relative);
                return Ok(Visit::Enter);
            }
            EntryKind::Symlink => {
                let target = rustix::fs::readlinkat(entry.parent, entry.name, Vec::new())
                    .map_err(|error| refusal("cannot read the link", &shown(), error))?;
                hasher.link(entry.relative, target.as_bytes());
                inventory
                    .links
                    .insert(relative, target.to_string_lossy().into_owned());
            }
            EntryKind::File => {
                let opened =
                    open_entry(entry).map_err(|error| refusal("cannot open", &shown(), error))?;
                let file = fs_err::File::from_parts(std::fs::File::from(opened), shown());
                let before = remaining_bytes;
                let (content_hash, executable) = hash_file(file, &mut remaining_bytes)?;
                hasher.file(entry.relative, &content_hash, executable);
                inventory.files.insert(
                    relative,
                    InventoryFile {
                        digest: format!("{DIGEST_PREFIX}{}", hex::encode(&content_hash)),
                        size: before - remaining_bytes,
                        executable,
                    },
                );
            }
            EntryKind::Special => {
                let kind = entry_stat(entry).map_or("a special file", |stat| {
                    special_file_kind(FileType::from_raw_mode(stat.st_mode))
                });
                return Err(format!(
                    "`{}` is {kind}, which a skill that can be trusted may not hold; remove it",
                    shown().display()
                ));
            }
        }
        Ok(Visit::Next)
    };
    let mut unreadable = |relative: &[u8], error: Errno| {
        Err(refusal("cannot read", &inside(directory, relative), error))
    };
    walk_beneath(root.as_fd(), &mut visit, &mut unreadable).map_err(refused)?;
    inventory.digest = hasher.finish();
    Ok(inventory)
}

/// The path of the entry at `relative` (`/`-separated) inside `directory`, for messages.
fn inside(directory: &Path, relative: &[u8]) -> PathBuf {
    directory.join(OsStr::from_bytes(relative))
}

/// What the digest says when the system refused `what` on `path`.
fn refusal(what: &str, path: &Path, error: Errno) -> String {
    format!(
        "{what} `{}`: {}",
        path.display(),
        std::io::Error::from(error)
    )
}

/// The digest of an archived skill's files, in path order. Archives are bounded when loaded
/// (their declared sizes, which reads never pass), so no budget applies here.
///
/// # Errors
/// [`TrustError::Digest`] naming the archive and the entry when an entry cannot be read.
fn archive_digest(files: &ArchivedFiles) -> Result<String, TrustError> {
    let mut hasher = TreeHasher(Sha256::new_with_prefix(ARCHIVE_DOMAIN));
    for file in files.files() {
        let mut content = Sha256::new();
        files
            .read_with(&file.relative_path, |entry| {
                hash_reader(entry, &mut content)
            })
            .map_err(|error| TrustError::Digest {
                path: files.archive_path.clone(),
                message: error.to_string(),
            })?;
        hasher.file(file.relative_path.as_bytes(), &content.finalize(), false);
    }
    Ok(hasher.finish())
}

/// Whether text has the shape of a digest this module writes.
#[must_use]
pub fn is_digest(text: &str) -> bool {
    text.strip_prefix(DIGEST_PREFIX).is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
    })
}

/// A tree digest being computed, fed one record per entry in walk order (depth first, each
/// folder's entries in byte order of their names, a folder's record before its entries): the
/// one place the record format is written, for the digest here, for the copy the skill store
/// hashes as it writes it ([`crate::store`]), and for trees digested before they are
/// written out (a git tree, by installs).
pub struct TreeHasher(Sha256);

impl TreeHasher {
    /// The digest of a folder-source skill.
    #[must_use]
    pub fn folder() -> Self {
        TreeHasher(Sha256::new_with_prefix(FOLDER_DOMAIN))
    }

    /// A folder at `path`.
    pub fn folder_entry(&mut self, path: &[u8]) {
        self.record(b'd', path, &[]);
    }

    /// A symlink at `path`, by its target text.
    pub fn link(&mut self, path: &[u8], target: &[u8]) {
        self.record(b'l', path, target);
    }

    /// A regular file at `path`, by the sha256 of its bytes and its executable bit.
    pub fn file(&mut self, path: &[u8], content_hash: &[u8], executable: bool) {
        self.record(if executable { b'x' } else { b'f' }, path, content_hash);
    }

    /// One entry: kind, length-prefixed path, length-prefixed payload.
    fn record(&mut self, kind: u8, path: &[u8], payload: &[u8]) {
        self.0.update([kind]);
        self.0.update((path.len() as u64).to_le_bytes());
        self.0.update(path);
        self.0.update((payload.len() as u64).to_le_bytes());
        self.0.update(payload);
    }

    /// The digest, as `sha256:<64 hex>`.
    #[must_use]
    pub fn finish(self) -> String {
        format!("{DIGEST_PREFIX}{}", hex::encode(self.0.finalize()))
    }
}

/// The sha256 of a regular file's bytes and whether it is executable, taking its size from
/// `remaining_bytes`. The file was opened without following a link and without blocking; it is
/// checked again to be a regular file, so a FIFO swapped in after the walk saw a file is
/// refused rather than waited on.
fn hash_file(file: fs_err::File, remaining_bytes: &mut u64) -> Result<(Vec<u8>, bool), String> {
    let mut file = regular_file(file).map_err(|error| error.to_string())?;
    let metadata = file.metadata().map_err(|error| error.to_string())?;
    let executable = metadata.permissions().mode() & 0o111 != 0;
    let mut hasher = Sha256::new();
    // One byte past the budget tells a file that exceeds it.
    let hashed = hash_reader(
        &mut file.by_ref().take(remaining_bytes.saturating_add(1)),
        &mut hasher,
    )
    .map_err(|error| error.to_string())?;
    *remaining_bytes = remaining_bytes.checked_sub(hashed).ok_or_else(|| {
        format!(
            "its files hold more than {MAX_DIGEST_BYTES} bytes, too many to pin; trust its root with `--trust-policy follow`"
        )
    })?;
    Ok((hasher.finalize().to_vec(), executable))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn tree() -> tempfile::TempDir {
        let temp = tempfile::tempdir().unwrap();
        let skill = temp.path();
        std::fs::create_dir_all(skill.join("scripts/lib")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "---\nname: a\n---\n").unwrap();
        std::fs::write(skill.join("scripts/run.py"), "print(1)\n").unwrap();
        std::fs::write(skill.join("scripts/lib/util.py"), "X = 1\n").unwrap();
        temp
    }

    /// A digest pinned in a `trust.json` by an earlier release still matches: the walk by
    /// descriptor gives what the walk by path it replaced gave, for this tree of every kind of
    /// entry (nested files, hidden and vendored folders, a space and a non-ASCII name, links in
    /// and out, an empty folder, an executable).
    #[test]
    fn the_digest_of_a_tree_of_every_kind_is_the_one_pinned_before() {
        let temp = tempfile::tempdir().unwrap();
        let skill = temp.path().join("digest");
        let write = |relative: &str, text: &str| {
            let path = skill.join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "SKILL.md",
            "---\nname: digest\ndescription: A skill for tests.\n---\nBody of A skill for tests.\n",
        );
        write("scripts/run.py", "print(1)\n");
        write("scripts/lib/util.py", "X = 1\n");
        write(".hidden/x", "h\n");
        write("node_modules/m.js", "m\n");
        write("a b/ü.txt", "u\n");
        std::os::unix::fs::symlink("scripts/run.py", skill.join("alias")).unwrap();
        std::os::unix::fs::symlink("/etc", skill.join("out")).unwrap();
        std::fs::create_dir_all(skill.join("empty")).unwrap();
        std::fs::set_permissions(
            skill.join("scripts/run.py"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let catalog = skillbox_core::SkillCatalog::load(&skillbox_core::CatalogOptions {
            roots: vec![skillbox_core::SkillRoot::explicit(temp.path())],
            ..skillbox_core::CatalogOptions::default()
        })
        .unwrap();
        assert_eq!(
            skill_digest(catalog.get("digest").unwrap()).unwrap(),
            "sha256:1d0a5234cad7df99b8db6e89473ff2f564149d1ceefad0c8a5dccb8b593785bc"
        );
    }

    #[test]
    fn the_digest_is_stable_and_sees_every_kind_of_change() {
        let temp = tree();
        let skill = temp.path();
        let first = directory_digest(&SkillFolder::open(skill).unwrap()).unwrap();
        assert!(is_digest(&first), "{first}");
        assert_eq!(
            directory_digest(&SkillFolder::open(skill).unwrap()).unwrap(),
            first
        );

        let mut seen = vec![first.clone()];
        let mut changed = |what: &str, change: &dyn Fn()| {
            change();
            let digest = directory_digest(&SkillFolder::open(skill).unwrap()).unwrap();
            assert!(!seen.contains(&digest), "{what} did not change the digest");
            seen.push(digest);
        };
        changed("contents", &|| {
            std::fs::write(skill.join("scripts/run.py"), "print(2)\n").unwrap()
        });
        changed("executable bit", &|| {
            std::fs::set_permissions(
                skill.join("scripts/run.py"),
                std::fs::Permissions::from_mode(0o755),
            )
            .unwrap()
        });
        changed("a new file", &|| {
            std::fs::write(skill.join("scripts/lib/extra.py"), "").unwrap()
        });
        changed("an empty folder", &|| {
            std::fs::create_dir(skill.join("scripts/empty")).unwrap()
        });
        changed("a hidden file", &|| {
            std::fs::write(skill.join(".hidden.py"), "").unwrap()
        });
        changed("a symlink", &|| {
            std::os::unix::fs::symlink("scripts/run.py", skill.join("alias.py")).unwrap()
        });
        changed("a symlink's target", &|| {
            std::fs::remove_file(skill.join("alias.py")).unwrap();
            std::os::unix::fs::symlink("scripts/lib/util.py", skill.join("alias.py")).unwrap();
        });
        changed("a rename", &|| {
            std::fs::rename(
                skill.join("scripts/lib/extra.py"),
                skill.join("scripts/lib/other.py"),
            )
            .unwrap()
        });
    }

    #[test]
    fn links_out_of_the_skill_are_recorded_not_followed() {
        let temp = tree();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "one").unwrap();
        std::os::unix::fs::symlink(outside.path(), temp.path().join("out")).unwrap();
        let before = directory_digest(&SkillFolder::open(temp.path()).unwrap()).unwrap();
        std::fs::write(outside.path().join("secret.txt"), "two").unwrap();
        assert_eq!(
            directory_digest(&SkillFolder::open(temp.path()).unwrap()).unwrap(),
            before
        );
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let temp = tree();
        skillbox_testkit::make_fifo(&temp.path().join("scripts/pipe"));
        let skill = temp.path().to_path_buf();
        let error = skillbox_testkit::finishes_within(
            std::time::Duration::from_secs(10),
            "the digest of a folder holding a FIFO",
            move || {
                directory_digest(&SkillFolder::open(skill).unwrap())
                    .unwrap_err()
                    .to_string()
            },
        );
        assert!(error.contains("is a FIFO"), "{error}");
        assert!(error.contains("scripts/pipe"), "{error}");
    }

    /// Write a one-file archive (`SKILL.md` holding `content`) at `path` and unpack it.
    fn unpacked_archive(path: &Path, content: &[u8]) -> skillbox_core::archive::UnpackedArchive {
        let mut writer = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        writer
            .start_file("SKILL.md", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut writer, content).unwrap();
        writer.finish().unwrap();
        skillbox_core::archive::unpack_archive(path, &skillbox_core::CatalogLimits::default())
            .unwrap()
    }

    #[test]
    fn archives_hash_their_files() {
        let temp = tempfile::tempdir().unwrap();
        let digest_of = |content: &[u8]| {
            let unpacked = unpacked_archive(&temp.path().join("one.skill"), content);
            archive_digest(&unpacked.files).unwrap()
        };
        let first = digest_of(b"a");
        assert!(is_digest(&first));
        assert_ne!(digest_of(b"b"), first);
        assert_eq!(digest_of(b"a"), first);
    }

    #[test]
    fn an_archive_is_hashed_once_per_load() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("once.skill");
        let unpacked = unpacked_archive(&path, b"---\nname: once\n---\n");
        let first = unpacked.files.trust_digest_once(archive_digest).unwrap();
        let again = unpacked
            .files
            .trust_digest_once(|_| {
                Err::<String, TrustError>(TrustError::Digest {
                    path: path.clone(),
                    message: "hashed a second time".to_owned(),
                })
            })
            .unwrap();
        assert_eq!(first, again);
    }

    #[test]
    fn digest_shapes() {
        assert!(is_digest(&format!("sha256:{}", "0".repeat(64))));
        for bad in [
            "sha256:",
            "sha1:00",
            "0000",
            &format!("sha256:{}", "G".repeat(64)),
        ] {
            assert!(!is_digest(bad), "{bad}");
        }
    }
}
