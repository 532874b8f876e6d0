//! Where a skill's files live: a folder on disk, or a read-only archive held in memory. Every
//! read of a skill's files goes through [`SkillSource`], which keeps reads inside the skill.

use std::io::Read;
use std::os::fd::BorrowedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::error::CatalogError;

/// A file of a skill as listed by [`SkillSource::list_files`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// Path relative to the skill folder, with `/` separators.
    pub relative_path: String,
    /// Size in bytes.
    pub size_bytes: u64,
}

pub use crate::archive::ArchivedFiles;

/// Where a skill's files are read from.
#[derive(Debug, Clone)]
pub enum SkillSource {
    /// A folder on disk.
    Directory(PathBuf),
    /// A `.zip` / `.skill` archive held in memory as it is on disk, read-only; entries are
    /// decompressed as they are read.
    Archive(Arc<ArchivedFiles>),
}

/// Normalise a path relative to a skill and refuse anything that could leave it: absolute paths,
/// `..`, drive prefixes, empty paths. Returns the path with `/` separators.
///
/// # Errors
/// [`CatalogError::PathEscapes`] for paths that leave the skill.
pub fn contained_relative_path(path: &str) -> Result<String, CatalogError> {
    let escapes = || CatalogError::PathEscapes {
        path: path.to_owned(),
    };
    if path.is_empty() || path.contains('\0') {
        return Err(escapes());
    }
    let mut parts = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str().ok_or_else(escapes)?),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(escapes());
            }
        }
    }
    if parts.is_empty() {
        return Err(escapes());
    }
    Ok(parts.join("/"))
}

impl SkillSource {
    /// Read at most `max_bytes` of a file; the flag says whether the file went on past that.
    /// For folders, symlinks that resolve outside the skill are refused.
    ///
    /// # Errors
    /// When the path escapes the skill, the file does not exist, or it cannot be read.
    pub fn read_file(
        &self,
        relative: &str,
        max_bytes: u64,
    ) -> Result<(Vec<u8>, bool), CatalogError> {
        self.read_file_from(relative, 0, max_bytes)
    }

    /// Read the head of a file in small chunks until `is_complete` says enough was read or
    /// `max_bytes` is reached; the flag says whether the file may go on past what was read.
    /// Discovery uses it to read a `SKILL.md` only as far as its frontmatter.
    ///
    /// # Errors
    /// As [`SkillSource::read_file`].
    pub fn read_head(
        &self,
        relative: &str,
        max_bytes: u64,
        is_complete: impl Fn(&[u8]) -> bool,
    ) -> Result<(Vec<u8>, bool), CatalogError> {
        let mut buffer = Vec::new();
        let (filled, truncated) =
            self.read_head_into(None, relative, max_bytes, is_complete, &mut buffer)?;
        buffer.truncate(filled);
        Ok((buffer, truncated))
    }

    /// [`SkillSource::read_head`] into a buffer the caller keeps between reads (its first
    /// `filled` bytes are the head; it is zeroed only when it grows), opening a top-level file
    /// relative to `folder`, the skill folder's descriptor, when the caller holds one.
    pub(crate) fn read_head_into(
        &self,
        folder: Option<BorrowedFd<'_>>,
        relative: &str,
        max_bytes: u64,
        is_complete: impl Fn(&[u8]) -> bool,
        buffer: &mut Vec<u8>,
    ) -> Result<(usize, bool), CatalogError> {
        let relative = contained_relative_path(relative)?;
        let directory = match self {
            SkillSource::Directory(directory) => directory,
            SkillSource::Archive(archive) => {
                return archive.read_with(&relative, |entry| {
                    read_head_of(entry, max_bytes, is_complete, buffer)
                });
            }
        };
        let file = self.open_in_directory(directory, &relative, folder)?;
        read_head_of(file, max_bytes, is_complete, buffer).map_err(CatalogError::io)
    }

    /// Read a file from a byte offset (used to read a body after the frontmatter), at most
    /// `max_bytes`; the flag says whether the file went on past that.
    ///
    /// # Errors
    /// As [`SkillSource::read_file`].
    pub fn read_file_from(
        &self,
        relative: &str,
        offset: u64,
        max_bytes: u64,
    ) -> Result<(Vec<u8>, bool), CatalogError> {
        self.read_file_in(None, relative, offset, max_bytes)
    }

    /// [`SkillSource::read_file_from`], opening a top-level file relative to `folder`, the
    /// skill folder's descriptor, when the caller holds one.
    pub(crate) fn read_file_in(
        &self,
        folder: Option<BorrowedFd<'_>>,
        relative: &str,
        offset: u64,
        max_bytes: u64,
    ) -> Result<(Vec<u8>, bool), CatalogError> {
        let relative = contained_relative_path(relative)?;
        match self {
            SkillSource::Directory(directory) => {
                use std::io::{Seek, SeekFrom};
                let mut file = self.open_in_directory(directory, &relative, folder)?;
                if offset > 0 {
                    file.seek(SeekFrom::Start(offset))
                        .map_err(CatalogError::io)?;
                }
                read_at_most(&mut file, max_bytes).map_err(CatalogError::io)
            }
            SkillSource::Archive(archive) => archive.read_with(&relative, |entry| {
                std::io::copy(&mut (&mut *entry).take(offset), &mut std::io::sink())?;
                read_at_most(entry, max_bytes)
            }),
        }
    }

    /// The sha256 digest of a file, read in chunks: a large file costs one buffer of memory,
    /// not its size.
    ///
    /// # Errors
    /// As [`SkillSource::read_file`].
    pub fn sha256(&self, relative: &str) -> Result<[u8; 32], CatalogError> {
        use sha2::{Digest, Sha256};
        let relative = contained_relative_path(relative)?;
        let mut hasher = Sha256::new();
        match self {
            SkillSource::Directory(directory) => {
                let mut file = self.open_in_directory(directory, &relative, None)?;
                hash_reader(&mut file, &mut hasher).map_err(CatalogError::io)?;
            }
            SkillSource::Archive(archive) => {
                archive.read_with(&relative, |entry| hash_reader(entry, &mut hasher))?;
            }
        }
        Ok(hasher.finalize().into())
    }

    /// Open a file of a folder source: directly when it sits at the top of the skill and is not
    /// a symlink (relative to `folder`, the folder's descriptor, when given: no walk of the
    /// whole path), otherwise after the containment check. Either way only a regular file is
    /// returned.
    fn open_in_directory(
        &self,
        directory: &Path,
        relative: &str,
        folder: Option<BorrowedFd<'_>>,
    ) -> Result<fs_err::File, CatalogError> {
        if !relative.contains('/') {
            let path = directory.join(relative);
            // A symlink (`ELOOP`) or a missing file takes the checked path, which says which.
            let opened = match folder {
                Some(folder) => open_top_level_at(folder, relative)
                    .map(|file| fs_err::File::from_parts(file, path)),
                None => open_without_blocking(&path, libc::O_NOFOLLOW).ok(),
            };
            if let Some(file) = opened {
                return regular_file(file);
            }
        }
        let (path, _) = self.resolve_in_directory(directory, relative)?;
        regular_file(open_without_blocking(&path, 0).map_err(CatalogError::io)?)
    }

    /// Whether a regular file exists at the relative path (inside the skill).
    #[must_use]
    pub fn is_file(&self, relative: &str) -> bool {
        let Ok(relative) = contained_relative_path(relative) else {
            return false;
        };
        match self {
            SkillSource::Directory(directory) => self
                .resolve_in_directory(directory, &relative)
                .is_ok_and(|(_, metadata)| metadata.is_file()),
            SkillSource::Archive(archive) => archive.contains(&relative),
        }
    }

    /// Every regular file of the skill, sorted by path, at most `limit` of them; the flag says
    /// whether more were left out. Hidden folders, `.git` and `node_modules` are skipped, and
    /// symlinks are listed only when they stay inside the skill.
    #[must_use]
    pub fn list_files(&self, limit: usize) -> (Vec<SourceFile>, bool) {
        match self {
            SkillSource::Directory(directory) => list_directory_files(directory, limit),
            SkillSource::Archive(archive) => {
                let files: Vec<SourceFile> = archive.files().take(limit).collect();
                (files, archive.len() > limit)
            }
        }
    }

    /// The on-disk path of a file for a folder source, after checking that it (following any
    /// symlinks) stays inside the skill. Each component is `lstat`ed; only when one is a symlink
    /// are both paths resolved and compared, so the common case costs one call per component.
    fn resolve_in_directory(
        &self,
        directory: &Path,
        relative: &str,
    ) -> Result<(PathBuf, std::fs::Metadata), CatalogError> {
        let candidate = directory.join(relative);
        let not_found = || CatalogError::FileNotFound {
            path: candidate.clone(),
        };
        let mut current = directory.to_path_buf();
        let mut metadata = None;
        for part in relative.split('/') {
            current.push(part);
            let found = std::fs::symlink_metadata(&current).map_err(|_| not_found())?;
            if found.file_type().is_symlink() {
                let real = fs_err::canonicalize(&candidate).map_err(|_| not_found())?;
                let root = fs_err::canonicalize(directory).map_err(CatalogError::io)?;
                if !real.starts_with(&root) {
                    return Err(CatalogError::PathEscapes {
                        path: relative.to_owned(),
                    });
                }
                let target = std::fs::metadata(&real).map_err(|_| not_found())?;
                return Ok((candidate, target));
            }
            metadata = Some(found);
        }
        let metadata = metadata.ok_or_else(not_found)?;
        Ok((candidate, metadata))
    }
}

/// Read the head of an open file into `buffer` as [`SkillSource::read_head`] describes, until
/// `is_complete` or `max_bytes`: each read fills what the buffer holds, and a full buffer grows
/// from 4 KiB by doubling. Returns the bytes filled and whether the file may go on past them;
/// the buffer is kept by the caller (so it may start large) and zeroed only when it grows.
pub(crate) fn read_head_of(
    mut file: impl Read,
    max_bytes: u64,
    is_complete: impl Fn(&[u8]) -> bool,
    buffer: &mut Vec<u8>,
) -> std::io::Result<(usize, bool)> {
    const CHUNK_BYTES: usize = 4 * 1024;
    let limit = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    // One byte past the limit tells a file that goes on from one that ends there.
    let capacity = limit.saturating_add(1);
    let mut filled = 0;
    loop {
        let window = buffer.len().min(capacity);
        if filled == window {
            if filled == capacity {
                return Ok((limit, true));
            }
            let grown = (window * 2).max(CHUNK_BYTES).min(capacity);
            if grown > buffer.len() {
                buffer.resize(grown, 0);
            }
            continue;
        }
        let read = file.read(&mut buffer[filled..window])?;
        if read == 0 {
            return Ok((filled, false));
        }
        filled += read;
        if is_complete(&buffer[..filled]) {
            return Ok((filled, true));
        }
    }
}

/// Read at most `max_bytes` of a reader; the flag says whether it went on past that.
fn read_at_most(reader: &mut dyn Read, max_bytes: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let initial = max_bytes.min(16 * 1024).saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(initial).unwrap_or(0));
    reader.take(max_bytes + 1).read_to_end(&mut bytes)?;
    let truncated = bytes.len() as u64 > max_bytes;
    bytes.truncate(usize::try_from(max_bytes).unwrap_or(usize::MAX));
    Ok((bytes, truncated))
}

/// Feed a reader to a hasher a buffer at a time: a large file costs one buffer of memory.
/// Returns the number of bytes hashed.
pub(crate) fn hash_reader(
    reader: &mut dyn Read,
    hasher: &mut impl sha2::Digest,
) -> std::io::Result<u64> {
    const CHUNK_BYTES: usize = 64 * 1024;
    let mut buffer = vec![0u8; CHUNK_BYTES];
    let mut hashed = 0u64;
    loop {
        let read = reader.read(&mut buffer)?;
        if read == 0 {
            return Ok(hashed);
        }
        hashed += read as u64;
        hasher.update(&buffer[..read]);
    }
}

/// Open a file at a path (following symlinks) for reading, refusing anything that is not a
/// regular file with [`CatalogError::NotRegularFile`]. For files a skill or a client names, such
/// as archives, where a FIFO must not block the reader.
///
/// # Errors
/// When the file cannot be opened or is not a regular file.
pub fn open_regular_file(path: &Path) -> Result<fs_err::File, CatalogError> {
    regular_file(open_without_blocking(path, 0).map_err(CatalogError::io)?)
}

/// Open a file named `name` in the folder open as `folder`, as [`open_without_blocking`] with
/// `O_NOFOLLOW` does by path. `None` when it cannot be opened (a symlink, missing).
fn open_top_level_at(folder: BorrowedFd<'_>, name: &str) -> Option<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::openat(
        folder,
        name,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()
    .map(std::fs::File::from)
}

/// Open read-only with `O_NONBLOCK` (and `extra_flags`): opening a FIFO for reading would
/// otherwise wait for a writer, forever if none comes. Regular files ignore the flag.
pub(crate) fn open_without_blocking(
    path: &Path,
    extra_flags: libc::c_int,
) -> std::io::Result<fs_err::File> {
    use fs_err::os::unix::fs::OpenOptionsExt;
    fs_err::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | extra_flags)
        .open(path)
}

/// The opened file when the descriptor (`fstat`, so no race with the path) is a regular file.
pub(crate) fn regular_file(file: fs_err::File) -> Result<fs_err::File, CatalogError> {
    let file_type = file.metadata().map_err(CatalogError::io)?.file_type();
    if !file_type.is_file() {
        return Err(CatalogError::NotRegularFile {
            path: file.path().to_path_buf(),
            kind: special_file_kind(file_type),
        });
    }
    Ok(file)
}

/// What a file that is not a regular file is, for messages.
pub(crate) fn special_file_kind(file_type: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "a folder"
    } else if file_type.is_fifo() {
        "a FIFO (named pipe)"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else {
        "a special file"
    }
}

fn list_directory_files(directory: &Path, limit: usize) -> (Vec<SourceFile>, bool) {
    let root = fs_err::canonicalize(directory).unwrap_or_else(|_| directory.to_path_buf());
    let mut files = Vec::new();
    let mut more = false;
    let walker = walkdir::WalkDir::new(directory)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| {
            entry.depth() == 0 || {
                let name = entry.file_name().to_string_lossy();
                !(entry.file_type().is_dir()
                    && (name.starts_with('.') || name == "node_modules" || name == "__pycache__"))
            }
        });
    for entry in walker.flatten() {
        let file_type = entry.file_type();
        let size = if file_type.is_file() {
            entry.metadata().map(|m| m.len()).ok()
        } else if file_type.is_symlink() {
            // A symlink is listed only when its target is a file inside the skill.
            fs_err::canonicalize(entry.path())
                .ok()
                .filter(|real| real.starts_with(&root) && real.is_file())
                .and_then(|real| std::fs::metadata(real).ok())
                .map(|m| m.len())
        } else {
            None
        };
        let Some(size) = size else { continue };
        let Ok(relative) = entry.path().strip_prefix(directory) else {
            continue;
        };
        if files.len() == limit {
            more = true;
            break;
        }
        files.push(SourceFile {
            relative_path: relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            size_bytes: size,
        });
    }
    (files, more)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_rules() {
        assert_eq!(
            contained_relative_path("scripts/a.py").unwrap(),
            "scripts/a.py"
        );
        assert_eq!(contained_relative_path("./a.py").unwrap(), "a.py");
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "a/..", "."] {
            assert!(contained_relative_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn directory_reads_stay_inside() {
        let temp = tempfile::tempdir().unwrap();
        let skill = temp.path().join("skill");
        std::fs::create_dir_all(skill.join("scripts")).unwrap();
        std::fs::write(skill.join("scripts/a.sh"), "echo hi").unwrap();
        std::fs::write(temp.path().join("secret.txt"), "secret").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            temp.path().join("secret.txt"),
            skill.join("scripts/link.txt"),
        )
        .unwrap();
        let source = SkillSource::Directory(skill);
        assert_eq!(source.read_file("scripts/a.sh", 100).unwrap().0, b"echo hi");
        assert_eq!(
            source.read_file("scripts/a.sh", 4).unwrap(),
            (b"echo".to_vec(), true)
        );
        assert!(matches!(
            source.read_file("../secret.txt", 100),
            Err(CatalogError::PathEscapes { .. })
        ));
        #[cfg(unix)]
        assert!(matches!(
            source.read_file("scripts/link.txt", 100),
            Err(CatalogError::PathEscapes { .. })
        ));
        let (files, more) = source.list_files(100);
        assert_eq!(
            files
                .iter()
                .map(|f| f.relative_path.as_str())
                .collect::<Vec<_>>(),
            vec!["scripts/a.sh"]
        );
        assert!(!more);
    }
}
