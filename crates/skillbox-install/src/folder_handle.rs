//! Folders of an install held open while it writes in them. Every folder an install writes
//! into, renames in or deletes from (`.agents`, `.agents/skills`, an agent's folder, a staging
//! folder) is opened once, each folder below the project opened relative to the one above it
//! without following a link, and every change is made relative to that handle (`openat`,
//! `mkdirat`, `renameat`, `unlinkat`, `symlinkat`). A link swapped in for one of those folders
//! after they were checked (by a concurrent writer of the project) changes nothing: the handle
//! still names the folder that was opened, never where the link points.
//!
//! In the user's own scope (`--global`) links are followed as they are (dotfiles kept in a
//! repository).

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::error::InstallError;
use crate::scope::InstallScope;

/// Mode of a folder an install creates or copies.
const FOLDER_MODE: u32 = 0o755;
/// Mode of a copied file.
const FILE_MODE: u32 = 0o644;
/// Mode of a copied executable file.
const EXECUTABLE_MODE: u32 = 0o755;
/// Mode of a staging folder while it is built (the user's alone).
const STAGING_MODE: u32 = 0o700;
/// How many names are tried for a new staging folder.
const STAGING_ATTEMPTS: u32 = 64;
/// Deepest folder nesting copied or removed through handles.
const MAX_DEPTH: usize = 128;

/// Flags opening a folder below another: a link or a file is refused, not followed.
fn folder_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// An open folder, and its path (for messages).
#[derive(Debug)]
pub(crate) struct FolderHandle {
    fd: OwnedFd,
    path: PathBuf,
}

impl AsFd for FolderHandle {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

fn io_error(action: &'static str, path: &Path, error: Errno) -> InstallError {
    InstallError::io(action, path, std::io::Error::from(error))
}

impl FolderHandle {
    /// Open `folder` (following links), which must exist.
    ///
    /// # Errors
    /// [`InstallError::Io`] naming it.
    pub(crate) fn open_path(folder: &Path) -> Result<FolderHandle, InstallError> {
        let fd = rustix::fs::open(
            folder,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|error| io_error("open", folder, error))?;
        Ok(FolderHandle {
            fd,
            path: folder.to_path_buf(),
        })
    }

    /// Open `folder` of `scope`, creating the folders missing. In a project, the project
    /// folder itself is opened as named and each folder below it through the handle of the one
    /// above, never through a link; in the user's scope, or for a folder outside the project,
    /// links are followed.
    ///
    /// # Errors
    /// [`InstallError::Refused`] for a link or a file on the way; [`InstallError::Io`].
    pub(crate) fn open_in(
        scope: &InstallScope,
        folder: &Path,
    ) -> Result<FolderHandle, InstallError> {
        FolderHandle::walk_to(scope, folder, true)?
            .ok_or_else(|| io_error("open", folder, Errno::NOENT))
    }

    /// [`FolderHandle::open_in`] without creating anything: `None` when a folder on the way
    /// is missing.
    ///
    /// # Errors
    /// As [`FolderHandle::open_in`].
    pub(crate) fn open_existing_in(
        scope: &InstallScope,
        folder: &Path,
    ) -> Result<Option<FolderHandle>, InstallError> {
        FolderHandle::walk_to(scope, folder, false)
    }

    fn walk_to(
        scope: &InstallScope,
        folder: &Path,
        create: bool,
    ) -> Result<Option<FolderHandle>, InstallError> {
        let inside = folder
            .strip_prefix(&scope.base)
            .ok()
            .filter(|_| !scope.global);
        let Some(inside) = inside else {
            if create {
                fs_err::create_dir_all(folder)
                    .map_err(|error| InstallError::io("create", folder, error))?;
            } else if !folder.is_dir() {
                return Ok(None);
            }
            return FolderHandle::open_path(folder).map(Some);
        };
        let mut handle = FolderHandle::open_path(&scope.base)?;
        for component in inside.components() {
            if let Component::Normal(part) = component {
                match handle.child_if_exists(part, create)? {
                    Some(child) => handle = child,
                    None => return Ok(None),
                }
            }
        }
        Ok(Some(handle))
    }

    /// The path it was opened by.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The folder `name` in it, created when missing and `create`; `None` when missing.
    ///
    /// # Errors
    /// [`InstallError::Refused`] when `name` is a link or not a folder.
    pub(crate) fn child_if_exists(
        &self,
        name: &OsStr,
        create: bool,
    ) -> Result<Option<FolderHandle>, InstallError> {
        let path = self.path.join(name);
        let mut created = false;
        loop {
            match rustix::fs::openat(&self.fd, name, folder_flags(), Mode::empty()) {
                Ok(fd) => return Ok(Some(FolderHandle { fd, path })),
                Err(Errno::NOENT) if create && !created => {
                    match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(FOLDER_MODE)) {
                        Ok(()) | Err(Errno::EXIST) => created = true,
                        Err(error) => return Err(io_error("create", &path, error)),
                    }
                }
                Err(Errno::NOENT) => return Ok(None),
                Err(Errno::LOOP | Errno::NOTDIR) => {
                    return Err(InstallError::refused(
                        path.display().to_string(),
                        "it is a symbolic link or not a folder; skillbox installs only into folders of the project itself, so that it never writes or deletes anything elsewhere; replace it with a folder",
                    ));
                }
                Err(error) => return Err(io_error("open", &path, error)),
            }
        }
    }

    /// The folder `name` in it, created when missing.
    ///
    /// # Errors
    /// As [`FolderHandle::child_if_exists`].
    pub(crate) fn child(&self, name: &OsStr, create: bool) -> Result<FolderHandle, InstallError> {
        self.child_if_exists(name, create)?
            .ok_or_else(|| io_error("open", &self.path.join(name), Errno::NOENT))
    }

    /// What `name` in it is (a link is not followed); `None` when there is nothing.
    pub(crate) fn kind(&self, name: &OsStr) -> Option<FileType> {
        rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(|stat| FileType::from_raw_mode(stat.st_mode))
    }

    /// The target of the link `name` in it.
    pub(crate) fn read_link(&self, name: &OsStr) -> Option<PathBuf> {
        rustix::fs::readlinkat(&self.fd, name, Vec::new())
            .ok()
            .map(|target| PathBuf::from(OsStr::from_bytes(target.as_bytes())))
    }

    /// Make `name` in it a link to `target`.
    ///
    /// # Errors
    /// [`InstallError::Io`].
    pub(crate) fn symlink(&self, target: &Path, name: &OsStr) -> Result<(), InstallError> {
        rustix::fs::symlinkat(target, &self.fd, name)
            .map_err(|error| io_error("link", &self.path.join(name), error))
    }

    /// Remove the link or file `name` in it.
    ///
    /// # Errors
    /// [`InstallError::Io`].
    pub(crate) fn remove_file(&self, name: &OsStr) -> Result<(), InstallError> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())
            .map_err(|error| io_error("remove", &self.path.join(name), error))
    }

    /// Remove `name` in it, a folder with everything in it (read-only folders opened up first)
    /// or a file or link; links inside are removed, never followed. Nothing there is no error.
    ///
    /// # Errors
    /// [`InstallError::Io`].
    pub(crate) fn remove_tree(&self, name: &OsStr) -> Result<(), InstallError> {
        let path = self.path.join(name);
        match self.kind(name) {
            None => Ok(()),
            Some(FileType::Directory) => {
                remove_contents(&self.fd, name, &path, 0)?;
                match rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR) {
                    Ok(()) | Err(Errno::NOENT) => Ok(()),
                    Err(error) => Err(io_error("remove", &path, error)),
                }
            }
            Some(_) => self.remove_file(name),
        }
    }

    /// Rename `from` in it to `to` in `into`.
    ///
    /// # Errors
    /// [`InstallError::Io`] naming the destination.
    pub(crate) fn rename(
        &self,
        from: &OsStr,
        into: &FolderHandle,
        to: &OsStr,
    ) -> Result<(), InstallError> {
        rustix::fs::renameat(&self.fd, from, &into.fd, to)
            .map_err(|error| io_error("replace", &into.path.join(to), error))
    }

    /// The names in it.
    ///
    /// # Errors
    /// [`InstallError::Io`].
    pub(crate) fn names(&self) -> Result<Vec<OsString>, InstallError> {
        let listing = rustix::fs::Dir::read_from(&self.fd)
            .map_err(|error| io_error("read", &self.path, error))?;
        let mut names = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|error| io_error("read", &self.path, error))?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(name).to_owned());
            }
        }
        Ok(names)
    }

    /// A new, empty staging folder in it, named `prefix` and a unique part; removed when
    /// dropped.
    ///
    /// # Errors
    /// [`InstallError::Io`].
    pub(crate) fn staging(&self, prefix: &str) -> Result<Staging<'_>, InstallError> {
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut last = Errno::EXIST;
        for _ in 0..STAGING_ATTEMPTS {
            let count = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.subsec_nanos());
            let name = OsString::from(format!("{prefix}{}-{count}-{nanos:x}", std::process::id()));
            match rustix::fs::mkdirat(&self.fd, &*name, Mode::from_raw_mode(STAGING_MODE)) {
                Ok(()) => {
                    let folder = self.child(&name, false)?;
                    return Ok(Staging {
                        parent: self,
                        name,
                        folder,
                    });
                }
                Err(Errno::EXIST) => last = Errno::EXIST,
                Err(error) => {
                    last = error;
                    break;
                }
            }
        }
        Err(io_error("create", &self.path.join(prefix), last))
    }
}

/// A staging folder, removed (with what it holds) when dropped.
#[derive(Debug)]
pub(crate) struct Staging<'parent> {
    parent: &'parent FolderHandle,
    name: OsString,
    folder: FolderHandle,
}

impl Staging<'_> {
    /// The folder.
    pub(crate) fn folder(&self) -> &FolderHandle {
        &self.folder
    }
}

impl Drop for Staging<'_> {
    fn drop(&mut self) {
        let _ = self.parent.remove_tree(&self.name);
    }
}

/// Remove everything in the folder `name` of `parent` (opened without following a link),
/// opening it up first when it is read-only.
fn remove_contents(
    parent: &OwnedFd,
    name: &OsStr,
    path: &Path,
    depth: usize,
) -> Result<(), InstallError> {
    if depth > MAX_DEPTH {
        return Err(InstallError::io(
            "remove",
            path,
            std::io::Error::other("it is nested too deep"),
        ));
    }
    let folder = match rustix::fs::openat(parent, name, folder_flags(), Mode::empty()) {
        Ok(folder) => folder,
        Err(Errno::NOENT) => return Ok(()),
        Err(error) => return Err(io_error("remove", path, error)),
    };
    let _ = rustix::fs::fchmod(&folder, Mode::from_raw_mode(STAGING_MODE));
    let listing =
        rustix::fs::Dir::read_from(&folder).map_err(|error| io_error("read", path, error))?;
    let mut entries = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|error| io_error("read", path, error))?;
        let entry_name = entry.file_name().to_bytes();
        if entry_name != b"." && entry_name != b".." {
            entries.push(OsStr::from_bytes(entry_name).to_owned());
        }
    }
    for entry in entries {
        let entry_path = path.join(&entry);
        let is_folder = rustix::fs::statat(&folder, &*entry, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Directory);
        if is_folder {
            remove_contents(&folder, &entry, &entry_path, depth + 1)?;
            rustix::fs::unlinkat(&folder, &*entry, AtFlags::REMOVEDIR)
        } else {
            rustix::fs::unlinkat(&folder, &*entry, AtFlags::empty())
        }
        .or_else(|error| {
            if error == Errno::NOENT {
                Ok(())
            } else {
                Err(error)
            }
        })
        .map_err(|error| io_error("remove", &entry_path, error))?;
    }
    Ok(())
}

/// Copy the folder `source` into the new folder `name` of `into`: folders, files (ordinary
/// modes: 0755 folders, 0644 files, 0755 executables) and links as they are, every entry read
/// and written relative to its folder's handle, never through a link.
///
/// # Errors
/// [`InstallError::Io`] naming the entry.
pub(crate) fn copy_folder(
    source: &FolderHandle,
    into: &FolderHandle,
    name: &OsStr,
) -> Result<(), InstallError> {
    copy_folder_at(source, into, name, 0)
}

fn copy_folder_at(
    source: &FolderHandle,
    into: &FolderHandle,
    name: &OsStr,
    depth: usize,
) -> Result<(), InstallError> {
    let target_path = into.path.join(name);
    if depth > MAX_DEPTH {
        return Err(InstallError::io(
            "copy",
            &target_path,
            std::io::Error::other("it is nested too deep"),
        ));
    }
    rustix::fs::mkdirat(&into.fd, name, Mode::from_raw_mode(STAGING_MODE))
        .map_err(|error| io_error("create", &target_path, error))?;
    let target = into.child(name, false)?;
    for entry in source.names()? {
        let entry_path = source.path.join(&entry);
        match source.kind(&entry) {
            Some(FileType::Symlink) => {
                let link = source
                    .read_link(&entry)
                    .ok_or_else(|| io_error("read", &entry_path, Errno::INVAL))?;
                target.symlink(&link, &entry)?;
            }
            Some(FileType::Directory) => {
                let inner = source.child(&entry, false)?;
                copy_folder_at(&inner, &target, &entry, depth + 1)?;
            }
            Some(FileType::RegularFile) => copy_file(source, &target, &entry)?,
            _ => {
                return Err(InstallError::io(
                    "copy",
                    &entry_path,
                    std::io::Error::other("it is not a file, a folder or a link"),
                ));
            }
        }
    }
    rustix::fs::fchmod(&target.fd, Mode::from_raw_mode(FOLDER_MODE))
        .map_err(|error| io_error("write", &target_path, error))
}

fn copy_file(source: &FolderHandle, into: &FolderHandle, name: &OsStr) -> Result<(), InstallError> {
    let source_path = source.path.join(name);
    let target_path = into.path.join(name);
    let from = rustix::fs::openat(
        &source.fd,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|error| io_error("read", &source_path, error))?;
    let executable = rustix::fs::fstat(&from)
        .map_err(|error| io_error("read", &source_path, error))?
        .st_mode
        & 0o111
        != 0;
    let mode = if executable {
        EXECUTABLE_MODE
    } else {
        FILE_MODE
    };
    let to = rustix::fs::openat(
        &into.fd,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
    .map_err(|error| io_error("create", &target_path, error))?;
    let mut from = std::fs::File::from(from);
    let mut to = std::fs::File::from(to);
    std::io::copy(&mut from, &mut to)
        .and_then(|_| to.flush())
        .map_err(|error| InstallError::io("copy", &target_path, error))?;
    // The mode asked for at creation is narrowed by the umask; set it whole.
    rustix::fs::fchmod(&to, Mode::from_raw_mode(mode))
        .map_err(|error| io_error("write", &target_path, error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_swapped_in_after_opening_changes_nothing() {
        let temp = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let scope = InstallScope::project(temp.path());
        let skills = FolderHandle::open_in(&scope, &scope.install_folder).unwrap();
        // The project's `.agents/skills` swapped for a link after it was opened.
        std::fs::rename(&scope.install_folder, temp.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), &scope.install_folder).unwrap();
        let source = temp.path().join("source");
        std::fs::create_dir_all(source.join("scripts")).unwrap();
        std::fs::write(source.join("SKILL.md"), "x").unwrap();
        std::fs::write(source.join("scripts/run.py"), "y").unwrap();
        std::os::unix::fs::symlink("SKILL.md", source.join("alias")).unwrap();
        let source = FolderHandle::open_path(&source).unwrap();
        copy_folder(&source, &skills, OsStr::new("pdf")).unwrap();
        assert_eq!(fs_err::read_dir(elsewhere.path()).unwrap().count(), 0);
        let placed = temp.path().join("moved/pdf");
        assert_eq!(fs_err::read(placed.join("scripts/run.py")).unwrap(), b"y");
        assert_eq!(
            std::fs::read_link(placed.join("alias")).unwrap(),
            PathBuf::from("SKILL.md")
        );
        // Opening again refuses the link.
        let error = FolderHandle::open_in(&scope, &scope.install_folder).unwrap_err();
        assert!(error.to_string().contains("symbolic link"), "{error}");
        skills.remove_tree(OsStr::new("pdf")).unwrap();
        assert!(!placed.exists());
    }
}
