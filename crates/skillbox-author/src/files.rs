//! The files of a skill folder as they go into an archive: walked through open folders, each
//! entry opened relative to its parent without following a link, so nothing outside the skill
//! is ever read, even when a folder is swapped for a link mid-walk. Links, FIFOs, sockets and
//! devices are refused by path; version-control folders, caches and the authors' `evals/` are
//! left out and named; the walk stops at the packing limits.

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};

use crate::error::AuthorError;

/// Folders left out wherever they are: version control, caches and installed dependencies,
/// which a skill's runtime does not need and which differ from machine to machine.
pub const LEFT_OUT_FOLDERS: &[&str] = &[".git", ".hg", ".svn", "__pycache__", "node_modules"];
/// Files left out wherever they are.
pub const LEFT_OUT_FILES: &[&str] = &[".DS_Store"];
/// Folders left out at the top of the skill only: `evals/` holds the author's tests
/// (`skillbox eval`), not what the skill needs at run time.
pub const LEFT_OUT_TOP_FOLDERS: &[&str] = &["evals"];

/// Most files one packed skill may hold: what the catalog reads from one archive.
pub const MAX_PACKED_FILES: usize = skillbox_core::limits::MAX_ARCHIVE_ENTRIES;
/// Most bytes one packed skill's files may hold: what the catalog unpacks from one archive.
pub const MAX_PACKED_BYTES: u64 = skillbox_core::limits::MAX_ARCHIVE_UNPACKED_BYTES;
/// Deepest folder nesting packed.
pub const MAX_PACKED_DEPTH: usize = skillbox_core::source::MAX_FOLDER_DEPTH;

/// How much one skill may hold to be packed; the defaults are what the catalog reads back
/// from an archive ([`skillbox_core::CatalogLimits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackLimits {
    /// See [`MAX_PACKED_FILES`].
    pub max_files: usize,
    /// See [`MAX_PACKED_BYTES`].
    pub max_bytes: u64,
    /// See [`MAX_PACKED_DEPTH`].
    pub max_depth: usize,
    /// Largest archive written, in bytes (the catalog's `MAX_ARCHIVE_BYTES`).
    pub max_archive_bytes: u64,
    /// Largest ratio of a file's size to its compressed size (the catalog refuses entries past
    /// it as zip bombs).
    pub max_compression_ratio: u64,
}

impl Default for PackLimits {
    fn default() -> Self {
        PackLimits {
            max_files: MAX_PACKED_FILES,
            max_bytes: MAX_PACKED_BYTES,
            max_depth: MAX_PACKED_DEPTH,
            max_archive_bytes: skillbox_core::limits::MAX_ARCHIVE_BYTES,
            max_compression_ratio: skillbox_core::limits::MAX_ARCHIVE_COMPRESSION_RATIO,
        }
    }
}

/// One file of a skill, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// Its path in the skill folder, `/`-separated.
    pub path: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Whether its owner may execute it (the archive gives it mode 0755, else 0644).
    pub executable: bool,
}

/// What of a skill folder goes into an archive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillFiles {
    /// The files packed, sorted by path (bytewise).
    pub files: Vec<SkillFile>,
    /// What was left out (folders end with `/`), sorted.
    pub left_out: Vec<String>,
}

/// Read the files of the skill folder `folder` within `limits`.
///
/// # Errors
/// [`AuthorError::SpecialEntry`] naming a link, FIFO, socket or device;
/// [`AuthorError::NameNotUtf8`]; [`AuthorError::TooLarge`] naming the limit passed;
/// [`AuthorError::Io`] naming what cannot be read.
pub fn collect_files(folder: &Path, limits: &PackLimits) -> Result<SkillFiles, AuthorError> {
    let root = rustix::fs::open(
        folder,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|error| AuthorError::io("open the folder", folder, error.into()))?;
    let mut walk = Walk {
        folder,
        limits,
        collected: SkillFiles::default(),
        bytes: 0,
    };
    walk.level(root, "", 1)?;
    walk.collected
        .files
        .sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    walk.collected.left_out.sort();
    Ok(walk.collected)
}

struct Walk<'a> {
    folder: &'a Path,
    limits: &'a PackLimits,
    collected: SkillFiles,
    bytes: u64,
}

impl Walk<'_> {
    fn shown(&self, relative: &str) -> PathBuf {
        self.folder.join(relative)
    }

    /// Walk the open folder `descriptor`, whose path in the skill is `prefix` (`""` or ending
    /// with `/`), `depth` folders down.
    fn level(
        &mut self,
        descriptor: OwnedFd,
        prefix: &str,
        depth: usize,
    ) -> Result<(), AuthorError> {
        let unreadable = |error: rustix::io::Errno| {
            AuthorError::io("list the folder", &self.folder.join(prefix), error.into())
        };
        let mut names: Vec<Vec<u8>> = Vec::new();
        {
            let mut listing = Dir::read_from(descriptor.as_fd()).map_err(unreadable)?;
            while let Some(entry) = listing.read() {
                let entry = entry.map_err(unreadable)?;
                let name = entry.file_name().to_bytes();
                if name != b"." && name != b".." {
                    names.push(name.to_vec());
                }
            }
        }
        names.sort();
        for name in names {
            let name = OsStr::from_bytes(&name);
            let Some(text) = name.to_str() else {
                return Err(AuthorError::NameNotUtf8 {
                    path: self.folder.join(prefix).join(name),
                });
            };
            let relative = format!("{prefix}{text}");
            let stat = rustix::fs::statat(descriptor.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|error| AuthorError::io("read", &self.shown(&relative), error.into()))?;
            let file_type = FileType::from_raw_mode(stat.st_mode);
            let left_out_folder = LEFT_OUT_FOLDERS.contains(&text)
                || (depth == 1 && LEFT_OUT_TOP_FOLDERS.contains(&text));
            // Left out by name whatever they are: a `node_modules` link is no refusal.
            if left_out_folder || LEFT_OUT_FILES.contains(&text) {
                let shown = if file_type == FileType::Directory {
                    format!("{relative}/")
                } else {
                    relative
                };
                self.collected.left_out.push(shown);
                continue;
            }
            match file_type {
                FileType::Directory => {
                    if depth >= self.limits.max_depth {
                        return Err(AuthorError::TooLarge {
                            path: self.shown(&relative),
                            what: format!("is nested {} folders deep", depth + 1),
                            limit: format!("{} folders", self.limits.max_depth),
                            hint: "flatten the skill's folders",
                        });
                    }
                    let child = rustix::fs::openat(
                        descriptor.as_fd(),
                        name,
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .map_err(|error| {
                        self.refusal_or_io(descriptor.as_fd(), name, &relative, error)
                    })?;
                    self.level(child, &format!("{relative}/"), depth + 1)?;
                }
                FileType::RegularFile => {
                    let file = self.read_file(descriptor.as_fd(), name, relative)?;
                    self.collected.files.push(file);
                }
                other => return Err(special_entry(self.shown(&relative), other)),
            }
        }
        Ok(())
    }

    /// Read one regular file: opened without following a link or blocking on a FIFO, and
    /// checked on its descriptor, so a file swapped for something else since it was listed is
    /// refused rather than read.
    fn read_file(
        &mut self,
        parent: BorrowedFd<'_>,
        name: &OsStr,
        relative: String,
    ) -> Result<SkillFile, AuthorError> {
        let shown = self.shown(&relative);
        if self.collected.files.len() >= self.limits.max_files {
            return Err(AuthorError::TooLarge {
                path: self.folder.to_path_buf(),
                what: format!("holds more than {} files", self.limits.max_files),
                limit: format!("{} files", self.limits.max_files),
                hint: "leave generated or downloaded files out of the skill folder",
            });
        }
        let opened = rustix::fs::openat(
            parent,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|error| self.refusal_or_io(parent, name, &relative, error))?;
        let stat = rustix::fs::fstat(&opened)
            .map_err(|error| AuthorError::io("read", &shown, error.into()))?;
        let file_type = FileType::from_raw_mode(stat.st_mode);
        if file_type != FileType::RegularFile {
            return Err(special_entry(shown, file_type));
        }
        let remaining = self.limits.max_bytes.saturating_sub(self.bytes);
        let mut bytes = Vec::with_capacity(usize::try_from(stat.st_size).unwrap_or(0));
        std::fs::File::from(opened)
            .take(remaining.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|error| AuthorError::io("read", &shown, error))?;
        self.bytes = self.bytes.saturating_add(bytes.len() as u64);
        if self.bytes > self.limits.max_bytes {
            return Err(AuthorError::TooLarge {
                path: shown,
                what: format!(
                    "takes the skill's files past {} bytes",
                    self.limits.max_bytes
                ),
                limit: format!("{} bytes for all the files", self.limits.max_bytes),
                hint: "ship large data outside the skill and fetch it at run time",
            });
        }
        Ok(SkillFile {
            path: relative,
            bytes,
            executable: stat.st_mode & 0o100 != 0,
        })
    }

    /// The error for an entry that could not be opened: a refusal naming it when it turned
    /// into a link or special file since it was listed, else the system's reason.
    fn refusal_or_io(
        &self,
        parent: BorrowedFd<'_>,
        name: &OsStr,
        relative: &str,
        error: rustix::io::Errno,
    ) -> AuthorError {
        let now = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)
            .map(|stat| FileType::from_raw_mode(stat.st_mode));
        match now {
            Ok(file_type)
                if file_type != FileType::RegularFile && file_type != FileType::Directory =>
            {
                special_entry(self.shown(relative), file_type)
            }
            _ => AuthorError::io("open", &self.shown(relative), error.into()),
        }
    }
}

/// The refusal of an entry that is neither a regular file nor a folder.
fn special_entry(path: PathBuf, file_type: FileType) -> AuthorError {
    let (kind, hint) = match file_type {
        FileType::Symlink => (
            "a symlink",
            "replace the link with the file or folder it points to (a packed skill cannot reach outside itself)",
        ),
        FileType::Fifo => ("a FIFO (named pipe)", "remove it from the skill folder"),
        FileType::Socket => ("a socket", "remove it from the skill folder"),
        FileType::CharacterDevice => ("a character device", "remove it from the skill folder"),
        FileType::BlockDevice => ("a block device", "remove it from the skill folder"),
        _ => ("a special file", "remove it from the skill folder"),
    };
    AuthorError::SpecialEntry { path, kind, hint }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn files_are_sorted_bytewise_and_the_left_out_ones_named() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path();
        for relative in [
            "SKILL.md",
            "a/b.txt",
            "a-c.txt",
            "scripts/run.sh",
            ".git/config",
            "scripts/__pycache__/x.pyc",
            "node_modules/m/index.js",
            "evals/evals.json",
            "docs/evals/kept.md",
            "docs/.DS_Store",
        ] {
            write(root, relative, relative);
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            root.join("scripts/run.sh"),
            std::fs::Permissions::from_mode(0o744),
        )
        .unwrap();
        let collected = collect_files(root, &PackLimits::default()).unwrap();
        let paths: Vec<(&str, bool)> = collected
            .files
            .iter()
            .map(|file| (file.path.as_str(), file.executable))
            .collect();
        assert_eq!(
            paths,
            vec![
                ("SKILL.md", false),
                ("a-c.txt", false),
                ("a/b.txt", false),
                ("docs/evals/kept.md", false),
                ("scripts/run.sh", true),
            ]
        );
        assert_eq!(
            collected.left_out,
            vec![
                ".git/",
                "docs/.DS_Store",
                "evals/",
                "node_modules/",
                "scripts/__pycache__/"
            ]
        );
    }

    #[test]
    fn links_and_fifos_are_refused_by_path() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("skill");
        write(&root, "SKILL.md", "x");
        write(temp.path(), "secret.txt", "secret");
        std::os::unix::fs::symlink(temp.path().join("secret.txt"), root.join("link.txt")).unwrap();
        let error = collect_files(&root, &PackLimits::default()).unwrap_err();
        assert!(
            error.to_string().contains("link.txt` is a symlink"),
            "{error}"
        );
        std::fs::remove_file(root.join("link.txt")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("pipe"),
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let error = collect_files(&root, &PackLimits::default()).unwrap_err();
        assert!(
            error.to_string().contains("pipe` is a FIFO (named pipe)"),
            "{error}"
        );
    }

    #[test]
    fn limits_are_named() {
        let temp = tempfile::tempdir().unwrap();
        for index in 0..5 {
            write(temp.path(), &format!("f{index}"), "12345");
        }
        let few = PackLimits {
            max_files: 3,
            ..PackLimits::default()
        };
        let error = collect_files(temp.path(), &few).unwrap_err().to_string();
        assert!(error.contains("more than 3 files"), "{error}");
        let small = PackLimits {
            max_bytes: 12,
            ..PackLimits::default()
        };
        let error = collect_files(temp.path(), &small).unwrap_err().to_string();
        assert!(
            error.contains("f2` takes the skill's files past 12 bytes"),
            "{error}"
        );
    }
}
