//! Where a skill's files live: a folder on disk, or a read-only archive held in memory. Every
//! read of a skill's files goes through [`SkillSource`], which keeps reads inside the skill:
//! inside the folder that was loaded, even when its path names another folder since
//! ([`SkillFolder`]).

mod folder;

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
use std::sync::Arc;

use rustix::fs::FileType;

pub use crate::directory_listing::EntryKind;
use crate::error::CatalogError;
use folder::{Access, file_type, open_beneath};
pub use folder::{
    FolderEntry, LISTING_FLAGS, OnUnreadable, Visit, VisitEntry, entry_stat, open_entry,
    walk_beneath,
};
pub use folder::{MAX_FOLDER_DEPTH, MAX_SYMLINK_HOPS, SkillFolder};

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
    /// A folder on disk, held to the folder that was loaded.
    Directory(SkillFolder),
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
    /// The source of the skill folder at `path`, recording which folder it is now: reads
    /// refuse once the path names another folder ([`CatalogError::FolderReplaced`]).
    ///
    /// # Errors
    /// When `path` does not name a readable folder.
    pub fn directory(path: impl Into<std::path::PathBuf>) -> Result<Self, CatalogError> {
        SkillFolder::open(path).map(SkillSource::Directory)
    }

    /// Read at most `max_bytes` of a file; the flag says whether the file went on past that.
    /// For folders, symlinks that resolve outside the skill are refused, and so is a folder
    /// replaced since it was loaded.
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
    /// `filled` bytes are the head; it is zeroed only when it grows), opening the file relative
    /// to `folder`, the skill folder's descriptor, when the caller holds one.
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
        let file = open_in_directory(directory, &relative, folder)?;
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

    /// [`SkillSource::read_file_from`], opening the file relative to `folder`, the skill
    /// folder's descriptor, when the caller holds one.
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
                let mut file = open_in_directory(directory, &relative, folder)?;
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
                let mut file = open_in_directory(directory, &relative, None)?;
                hash_reader(&mut file, &mut hasher).map_err(CatalogError::io)?;
            }
            SkillSource::Archive(archive) => {
                archive.read_with(&relative, |entry| hash_reader(entry, &mut hasher))?;
            }
        }
        Ok(hasher.finalize().into())
    }

    /// Whether a regular file exists at the relative path (inside the skill).
    #[must_use]
    pub fn is_file(&self, relative: &str) -> bool {
        self.is_file_in(None, relative)
    }

    /// [`SkillSource::is_file`], looking relative to `folder`, the skill folder's descriptor,
    /// when the caller holds one.
    pub(crate) fn is_file_in(&self, folder: Option<BorrowedFd<'_>>, relative: &str) -> bool {
        let Ok(relative) = contained_relative_path(relative) else {
            return false;
        };
        match self {
            SkillSource::Directory(directory) => directory
                .open_file(folder, &relative, Access::Inspect)
                .is_ok_and(|opened| file_type(opened.as_fd()) == Some(FileType::RegularFile)),
            SkillSource::Archive(archive) => archive.contains(&relative),
        }
    }

    /// Every regular file of the skill, sorted by path, at most `limit` of them; the flag says
    /// whether more were left out. Hidden folders, `.git` and `node_modules` are skipped, and
    /// symlinks are listed only when they stay inside the skill. A folder replaced since it was
    /// loaded lists nothing, and folders deeper than [`MAX_FOLDER_DEPTH`] are not listed.
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
}

/// Open a file of a folder source for reading, inside the folder (see [`SkillFolder`]): relative
/// to `held`, the folder's descriptor, when the caller holds one. Only a regular file is
/// returned.
fn open_in_directory(
    directory: &SkillFolder,
    relative: &str,
    held: Option<BorrowedFd<'_>>,
) -> Result<fs_err::File, CatalogError> {
    let opened = directory.open_file(held, relative, Access::Read)?;
    regular_file(fs_err::File::from_parts(
        std::fs::File::from(opened),
        directory.path().join(relative),
    ))
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
pub fn hash_reader(reader: &mut dyn Read, hasher: &mut impl sha2::Digest) -> std::io::Result<u64> {
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
///
/// # Errors
/// [`CatalogError::NotRegularFile`] naming what it is instead; an I/O error from `fstat`.
pub fn regular_file(file: fs_err::File) -> Result<fs_err::File, CatalogError> {
    use std::os::unix::fs::MetadataExt;
    let metadata = file.metadata().map_err(CatalogError::io)?;
    if !metadata.is_file() {
        return Err(CatalogError::NotRegularFile {
            path: file.path().to_path_buf(),
            kind: special_file_kind(FileType::from_raw_mode(metadata.mode())),
        });
    }
    Ok(file)
}

/// What a file that is not a regular file is, for messages.
#[must_use]
pub fn special_file_kind(file_type: FileType) -> &'static str {
    match file_type {
        FileType::Directory => "a folder",
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        _ => "a special file",
    }
}

/// Folders [`SkillSource::list_files`] leaves out (besides hidden ones).
const UNLISTED_FOLDERS: &[&str] = &["node_modules", "__pycache__"];

/// [`SkillSource::list_files`] of a folder: walked from the folder opened and checked again,
/// one descriptor per level, never through a link.
fn list_directory_files(directory: &SkillFolder, limit: usize) -> (Vec<SourceFile>, bool) {
    let Ok(root) = directory.open_checked(LISTING_FLAGS) else {
        return (Vec::new(), false);
    };
    let mut files = Vec::new();
    let mut more = false;
    let mut visit = |entry: &FolderEntry<'_>| {
        let size = match entry.kind {
            EntryKind::Folder => {
                let name = entry.name.to_string_lossy();
                let skipped = name.starts_with('.') || UNLISTED_FOLDERS.contains(&name.as_ref());
                let enter = !skipped && entry.depth < MAX_FOLDER_DEPTH;
                return Ok::<_, std::convert::Infallible>(if enter {
                    Visit::Enter
                } else {
                    Visit::Next
                });
            }
            EntryKind::File => entry_stat(entry)
                .ok()
                .filter(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile)
                .map(|stat| stat.st_size),
            // A symlink is listed only when its target is a file inside the skill.
            EntryKind::Symlink => open_beneath(
                root.as_fd(),
                OsStr::from_bytes(entry.relative),
                Access::Inspect,
            )
            .ok()
            .and_then(|target| rustix::fs::fstat(target).ok())
            .filter(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile)
            .map(|stat| stat.st_size),
            EntryKind::Special => None,
        };
        let Some(size) = size else {
            return Ok(Visit::Next);
        };
        if files.len() == limit {
            more = true;
            return Ok(Visit::Stop);
        }
        files.push(SourceFile {
            relative_path: String::from_utf8_lossy(entry.relative).into_owned(),
            size_bytes: u64::try_from(size).unwrap_or(0),
        });
        Ok(Visit::Next)
    };
    let Ok(()) = walk_beneath(root.as_fd(), &mut visit, &mut |_, _| Ok(()));
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
        let source = SkillSource::directory(skill).unwrap();
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
