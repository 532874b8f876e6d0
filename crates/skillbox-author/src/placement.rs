//! Putting outputs in place so that no one ever sees half of one: a file is written beside its
//! place under a temporary name and renamed over it; a folder is built in a staging folder
//! beside its place and renamed into it (never over something that appeared there meanwhile),
//! or swapped with the folder it replaces in one step. A rename replaces a link planted at the
//! output's name; it never writes through it.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};

use fs_err::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{CWD, RenameFlags};

use crate::error::AuthorError;

/// Mode of the folders written.
pub const FOLDER_MODE: u32 = 0o755;
/// Mode of the files written.
pub const FILE_MODE: u32 = 0o644;
/// Mode of the executable files written.
pub const EXECUTABLE_MODE: u32 = 0o755;

/// What is at `path`, without following a link, for messages; `None` when nothing is.
pub(crate) fn entry_kind(path: &Path) -> Option<&'static str> {
    let metadata = fs_err::symlink_metadata(path).ok()?;
    let file_type = metadata.file_type();
    Some(if file_type.is_symlink() {
        "a symlink"
    } else if file_type.is_dir() {
        "a folder"
    } else if file_type.is_file() {
        "a file"
    } else {
        "a special file"
    })
}

/// What a file that is neither a regular file nor a folder is, for messages; `None` for those.
fn special_file_kind(file_type: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if file_type.is_char_device() {
        Some("a character device")
    } else if file_type.is_block_device() {
        Some("a block device")
    } else if file_type.is_socket() {
        Some("a socket")
    } else {
        None
    }
}

/// A name part no other temporary name of this host has at the same time.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The folder holding `path` (`.` for a bare file name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Write `bytes` to `path`: to a new file beside it first, renamed over `path` once complete
/// and synced. Whatever was at `path` (a file, a link) is replaced, not written through.
///
/// # Errors
/// [`AuthorError::OutputRefused`] when `path` is a folder, or a device, FIFO or socket (or a
/// link to one); [`AuthorError::Io`] naming the file when it cannot be written or renamed; the
/// temporary file is removed then.
pub(crate) fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<(), AuthorError> {
    if path.file_name().is_none() {
        return Err(AuthorError::OutputRefused {
            path: path.to_path_buf(),
            problem: "names no file".to_owned(),
            hint: "give the archive a file name, such as `my-skill.skill`",
        });
    }
    if fs_err::symlink_metadata(path).is_ok_and(|metadata| metadata.is_dir()) {
        return Err(AuthorError::OutputRefused {
            path: path.to_path_buf(),
            problem: "is a folder".to_owned(),
            hint: "give -o a file name, such as `my-skill.skill`",
        });
    }
    // A device or pipe (`/dev/null`, `/dev/stdout` and the link to it) would be replaced by the
    // rename, for every program of the machine when the folder is `/dev` and this runs as root.
    if let Some(kind) = fs_err::metadata(path)
        .ok()
        .and_then(|metadata| special_file_kind(metadata.file_type()))
    {
        return Err(AuthorError::OutputRefused {
            path: path.to_path_buf(),
            problem: format!("is {kind}, or a link to one"),
            hint: "the archive is written as a file and renamed into place: give -o a file path",
        });
    }
    skillbox_trust::safe_write::write_file_atomically(
        path,
        bytes,
        skillbox_trust::safe_write::WriteOptions::SHARED,
    )
    .map_err(|error| AuthorError::io("write", path, error))
}

/// Create the file `path`, which must not exist (a link there is not followed), with `bytes`
/// and `mode` whatever the umask; synced to disk when `sync`.
fn create_file(path: &Path, bytes: &[u8], mode: u32, sync: bool) -> std::io::Result<()> {
    let mut file = fs_err::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    file.write_all(bytes)?;
    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    if sync {
        file.sync_all()?;
    }
    Ok(())
}

/// A folder being built beside its place; removed when dropped unless placed.
#[derive(Debug)]
pub(crate) struct StagingFolder {
    path: PathBuf,
    placed: bool,
}

impl StagingFolder {
    /// A new, empty staging folder in `parent`, named after `name`.
    ///
    /// # Errors
    /// [`AuthorError::Io`] when it cannot be made.
    pub(crate) fn create(parent: &Path, name: &str) -> Result<Self, AuthorError> {
        let path = parent.join(format!(".{name}.staging-{}", unique_suffix()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|error| AuthorError::io("create the folder", &path, error))?;
        Ok(StagingFolder {
            path,
            placed: false,
        })
    }

    /// Write a file at `relative` (`/`-separated), making its folders: files 0644 or 0755,
    /// folders 0755, whatever the umask, so the tree reads the same everywhere.
    ///
    /// # Errors
    /// [`AuthorError::Io`] naming the file.
    pub(crate) fn write(
        &self,
        relative: &str,
        bytes: &[u8],
        executable: bool,
    ) -> Result<(), AuthorError> {
        let target = self.path.join(relative);
        let mut folder = self.path.clone();
        for part in Path::new(relative)
            .parent()
            .into_iter()
            .flat_map(Path::components)
        {
            folder.push(part);
            if !folder.is_dir() {
                fs_err::create_dir(&folder)
                    .and_then(|()| {
                        fs_err::set_permissions(
                            &folder,
                            std::fs::Permissions::from_mode(FOLDER_MODE),
                        )
                    })
                    .map_err(|error| AuthorError::io("create the folder", &folder, error))?;
            }
        }
        let mode = if executable {
            EXECUTABLE_MODE
        } else {
            FILE_MODE
        };
        create_file(&target, bytes, mode, false)
            .map_err(|error| AuthorError::io("write", &target, error))
    }

    /// Open the folder to everyone's reading (0755) before it is placed.
    fn open_up(&self) -> Result<(), AuthorError> {
        fs_err::set_permissions(&self.path, std::fs::Permissions::from_mode(FOLDER_MODE))
            .map_err(|error| AuthorError::io("set the mode of", &self.path, error))
    }

    /// Rename the finished folder to `target`, which must not exist: when something appeared
    /// there meanwhile, it is left alone and the staging folder removed.
    ///
    /// # Errors
    /// [`AuthorError::AlreadyExists`] when `target` exists, [`AuthorError::Io`] otherwise.
    pub(crate) fn place_new(mut self, target: &Path) -> Result<(), AuthorError> {
        self.open_up()?;
        match rustix::fs::renameat_with(CWD, &self.path, CWD, target, RenameFlags::NOREPLACE) {
            Ok(()) => {
                self.placed = true;
                Ok(())
            }
            Err(rustix::io::Errno::EXIST) => Err(AuthorError::AlreadyExists {
                path: target.to_path_buf(),
                kind: entry_kind(target).unwrap_or("an entry"),
            }),
            // A file system without `RENAME_NOREPLACE`: look, then rename (a folder renamed
            // over a link or file fails; over an empty folder it would replace it).
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {
                if let Some(kind) = entry_kind(target) {
                    return Err(AuthorError::AlreadyExists {
                        path: target.to_path_buf(),
                        kind,
                    });
                }
                fs_err::rename(&self.path, target)
                    .map_err(|error| AuthorError::io("rename into place", target, error))?;
                self.placed = true;
                Ok(())
            }
            Err(error) => Err(AuthorError::io(
                "rename into place",
                target,
                std::io::Error::from(error),
            )),
        }
    }

    /// Put the finished folder at `target`, swapping it with the folder there in one step (the
    /// old one is then removed), or renaming it there when there is none.
    ///
    /// # Errors
    /// [`AuthorError::Io`] when neither works.
    pub(crate) fn replace(mut self, target: &Path) -> Result<(), AuthorError> {
        self.open_up()?;
        if entry_kind(target).is_none() {
            return self.place_new(target);
        }
        match rustix::fs::renameat_with(CWD, &self.path, CWD, target, RenameFlags::EXCHANGE) {
            Ok(()) => {
                // The old tree is now at the staging name, and goes when `self` is dropped.
                Ok(())
            }
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {
                let old = parent_of(target).join(format!(
                    ".{}.old-{}",
                    target
                        .file_name()
                        .map(|name| name.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    unique_suffix()
                ));
                fs_err::rename(target, &old)
                    .map_err(|error| AuthorError::io("move aside", target, error))?;
                let placed = fs_err::rename(&self.path, target);
                remove_entry(&old);
                placed.map_err(|error| AuthorError::io("rename into place", target, error))?;
                self.placed = true;
                Ok(())
            }
            Err(error) => Err(AuthorError::io(
                "replace",
                target,
                std::io::Error::from(error),
            )),
        }
    }
}

impl Drop for StagingFolder {
    fn drop(&mut self) {
        if !self.placed {
            remove_entry(&self.path);
        }
    }
}

/// Remove a folder tree or a link (never following one); what cannot be removed is left.
fn remove_entry(path: &Path) {
    match fs_err::symlink_metadata(path) {
        Ok(metadata) if metadata.is_dir() => {
            let _ = fs_err::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs_err::remove_file(path);
        }
        Err(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_replaces_a_planted_link_instead_of_writing_through_it() {
        let temp = tempfile::tempdir().unwrap();
        let victim = temp.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let output = temp.path().join("out.skill");
        std::os::unix::fs::symlink(&victim, &output).unwrap();
        write_file_atomically(&output, b"archive").unwrap();
        assert_eq!(fs_err::read(&victim).unwrap(), b"keep");
        assert_eq!(fs_err::read(&output).unwrap(), b"archive");
        assert!(!std::fs::symlink_metadata(&output).unwrap().is_symlink());
        let names: Vec<_> = fs_err::read_dir(temp.path()).unwrap().collect();
        assert_eq!(names.len(), 2, "no temporary file is left");
    }

    #[test]
    fn a_new_folder_never_replaces_what_appeared_at_its_place() {
        let temp = tempfile::tempdir().unwrap();
        let staging = StagingFolder::create(temp.path(), "skill").unwrap();
        staging.write("scripts/run.sh", b"echo", true).unwrap();
        let place = temp.path().join("skill");
        std::fs::create_dir(&place).unwrap();
        let error = staging.place_new(&place).unwrap_err();
        assert!(
            matches!(error, AuthorError::AlreadyExists { .. }),
            "{error}"
        );
        let names: Vec<_> = fs_err::read_dir(temp.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "the staging folder is removed");
    }

    #[test]
    fn a_folder_is_swapped_with_the_one_it_replaces() {
        let temp = tempfile::tempdir().unwrap();
        let place = temp.path().join("site");
        std::fs::create_dir(&place).unwrap();
        std::fs::write(place.join("old.txt"), "old").unwrap();
        let staging = StagingFolder::create(temp.path(), "site").unwrap();
        staging.write("new.txt", b"new", false).unwrap();
        staging.replace(&place).unwrap();
        assert!(place.join("new.txt").is_file());
        assert!(!place.join("old.txt").exists());
        let names: Vec<_> = fs_err::read_dir(temp.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
