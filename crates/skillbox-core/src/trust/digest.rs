//! The digest of a skill's files: one sha256 over every entry of the skill folder, in a fixed
//! order, so that any change to what could run (a file's bytes, its executable bit, a new or
//! removed file, a symlink's target) changes the digest.
//!
//! Each entry is hashed as its kind, its `/`-separated path relative to the skill, and then the
//! sha256 of a file's bytes (with its executable bit) or a symlink's target text, each part
//! length-prefixed so that no two trees hash alike. Folders are walked in sorted order without
//! following links (a link is recorded by its target, never read through), FIFOs, sockets and
//! devices are refused without being opened for long, and the work is bounded by
//! [`MAX_DIGEST_ENTRIES`] and [`MAX_DIGEST_BYTES`]. Archived skills are hashed from the archive
//! bytes the catalog holds, entry by entry (decompressed a buffer at a time), which are what
//! runs.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::TrustError;
use crate::Skill;
use crate::source::{
    ArchivedFiles, SkillSource, hash_reader, open_without_blocking, regular_file, special_file_kind,
};

/// Most entries (files, folders, links) of one skill that are hashed; past this the skill cannot
/// be pinned (trust its root with the `follow` policy instead).
pub const MAX_DIGEST_ENTRIES: usize = 20_000;
/// Most bytes of one skill's files that are hashed; past this the skill cannot be pinned.
pub const MAX_DIGEST_BYTES: u64 = 512 * 1024 * 1024;
/// Deepest folder nesting hashed inside one skill.
pub const MAX_DIGEST_DEPTH: usize = 64;
/// The prefix of every digest's text.
pub(crate) const DIGEST_PREFIX: &str = "sha256:";

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
        SkillSource::Directory(directory) => directory_digest(directory),
        SkillSource::Archive(files) => files.trust_digest_once(archive_digest),
    }
}

/// The digest of a skill folder (a symlink at the folder itself is resolved first, as the
/// executor does before running anything in it).
///
/// # Errors
/// As [`skill_digest`].
fn directory_digest(directory: &Path) -> Result<String, TrustError> {
    let refused = |message: String| TrustError::Digest {
        path: directory.to_path_buf(),
        message,
    };
    let real = fs_err::canonicalize(directory).map_err(|error| refused(error.to_string()))?;
    let mut hasher = Sha256::new();
    hasher.update(FOLDER_DOMAIN);
    let mut entries = 0usize;
    let mut remaining_bytes = MAX_DIGEST_BYTES;
    let walker = walkdir::WalkDir::new(&real)
        .follow_links(false)
        .sort_by(|a, b| a.file_name().cmp(b.file_name()));
    for entry in walker {
        let entry = entry.map_err(|error| refused(error.to_string()))?;
        if entry.depth() == 0 {
            continue;
        }
        if entry.depth() > MAX_DIGEST_DEPTH {
            return Err(refused(format!(
                "`{}` is nested deeper than {MAX_DIGEST_DEPTH} folders",
                entry.path().display()
            )));
        }
        entries += 1;
        if entries > MAX_DIGEST_ENTRIES {
            return Err(refused(format!(
                "it holds more than {MAX_DIGEST_ENTRIES} entries, too many to pin; trust its root with `--trust-policy follow`"
            )));
        }
        let relative = entry
            .path()
            .strip_prefix(&real)
            .map_err(|_| refused(format!("`{}` is outside it", entry.path().display())))?;
        let relative = relative_bytes(relative);
        let file_type = entry.file_type();
        if file_type.is_dir() {
            add_record(&mut hasher, b'd', &relative, &[]);
        } else if file_type.is_symlink() {
            let target = fs_err::read_link(entry.path()).map_err(|e| refused(e.to_string()))?;
            add_record(&mut hasher, b'l', &relative, target.as_os_str().as_bytes());
        } else if file_type.is_file() {
            let (content_hash, executable) =
                hash_file(entry.path(), &mut remaining_bytes).map_err(refused)?;
            let tag = if executable { b'x' } else { b'f' };
            add_record(&mut hasher, tag, &relative, &content_hash);
        } else {
            return Err(refused(format!(
                "`{}` is {}, which a skill that can be trusted may not hold; remove it",
                entry.path().display(),
                special_file_kind(file_type)
            )));
        }
    }
    Ok(format_digest(&hasher.finalize()))
}

/// The digest of an archived skill's files, in path order. Archives are bounded when loaded
/// (their declared sizes, which reads never pass), so no budget applies here.
///
/// # Errors
/// [`TrustError::Digest`] naming the archive and the entry when an entry cannot be read.
fn archive_digest(files: &ArchivedFiles) -> Result<String, TrustError> {
    let mut hasher = Sha256::new();
    hasher.update(ARCHIVE_DOMAIN);
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
        add_record(
            &mut hasher,
            b'f',
            file.relative_path.as_bytes(),
            &content.finalize(),
        );
    }
    Ok(format_digest(&hasher.finalize()))
}

/// Whether text has the shape of a digest this module writes.
#[must_use]
pub(crate) fn is_digest(text: &str) -> bool {
    text.strip_prefix(DIGEST_PREFIX).is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
    })
}

/// One entry: kind, length-prefixed path, length-prefixed payload.
fn add_record(hasher: &mut Sha256, kind: u8, path: &[u8], payload: &[u8]) {
    hasher.update([kind]);
    hasher.update((path.len() as u64).to_le_bytes());
    hasher.update(path);
    hasher.update((payload.len() as u64).to_le_bytes());
    hasher.update(payload);
}

/// The sha256 of a regular file's bytes and whether it is executable, taking its size from
/// `remaining_bytes`. The file is opened without following a link and without blocking, then
/// checked again to be a regular file, so a FIFO swapped in after the walk saw a file is
/// refused rather than waited on.
fn hash_file(path: &Path, remaining_bytes: &mut u64) -> Result<(Vec<u8>, bool), String> {
    let mut file = open_without_blocking(path, libc::O_NOFOLLOW)
        .map_err(|error| error.to_string())
        .and_then(|file| regular_file(file).map_err(|error| error.to_string()))?;
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

fn relative_bytes(relative: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for (index, component) in relative.components().enumerate() {
        if index > 0 {
            bytes.push(b'/');
        }
        bytes.extend_from_slice(component.as_os_str().as_bytes());
    }
    bytes
}

fn format_digest(bytes: &[u8]) -> String {
    format!("{DIGEST_PREFIX}{}", crate::skill::hex(bytes))
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

    #[test]
    fn the_digest_is_stable_and_sees_every_kind_of_change() {
        let temp = tree();
        let skill = temp.path();
        let first = directory_digest(skill).unwrap();
        assert!(is_digest(&first), "{first}");
        assert_eq!(directory_digest(skill).unwrap(), first);

        let mut seen = vec![first.clone()];
        let mut changed = |what: &str, change: &dyn Fn()| {
            change();
            let digest = directory_digest(skill).unwrap();
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
        let before = directory_digest(temp.path()).unwrap();
        std::fs::write(outside.path().join("secret.txt"), "two").unwrap();
        assert_eq!(directory_digest(temp.path()).unwrap(), before);
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let temp = tree();
        skillbox_testkit::make_fifo(&temp.path().join("scripts/pipe"));
        let skill = temp.path().to_path_buf();
        let error = skillbox_testkit::finishes_within(
            std::time::Duration::from_secs(10),
            "the digest of a folder holding a FIFO",
            move || directory_digest(&skill).unwrap_err().to_string(),
        );
        assert!(error.contains("is a FIFO"), "{error}");
        assert!(error.contains("scripts/pipe"), "{error}");
    }

    /// Write a one-file archive (`SKILL.md` holding `content`) at `path` and unpack it.
    fn unpacked_archive(path: &Path, content: &[u8]) -> crate::archive::UnpackedArchive {
        let mut writer = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        writer
            .start_file("SKILL.md", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut writer, content).unwrap();
        writer.finish().unwrap();
        crate::archive::unpack_archive(path, &crate::CatalogLimits::default()).unwrap()
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
