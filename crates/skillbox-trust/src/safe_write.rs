//! The safe writes every crate makes: a file replaced whole (a reader, or a crash, sees the old
//! file or the new one, never half of one), and a read-only tree removed. Both refuse to work
//! through a link planted at the name: a file is written beside its place and renamed over it
//! (a link there is replaced, never written through), and a tree's links are never followed.
//!
//! The trust file, `skillbox.lock` and `skillbox.toml`, eval reports, `.skill` archives, an
//! edited `SKILL.md` and the sandbox's probe cache are all written with
//! [`write_file_atomically`]; the store, the runtime's unpacked archives and an install's
//! staging folders are removed with [`remove_read_only_tree`].

use std::io::Write;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;

/// How [`write_file_atomically`] writes a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// The new file's mode, whatever the umask.
    pub mode: u32,
    /// Keep the mode of the file it replaces, when there is one (an edited `SKILL.md`).
    pub keep_existing_mode: bool,
    /// Flush the file to disk before it is renamed into place (a lock, the trust file).
    pub sync: bool,
}

impl WriteOptions {
    /// A file only its owner reads (the trust file, caches of the runtime).
    pub const PRIVATE: WriteOptions = WriteOptions {
        mode: 0o600,
        keep_existing_mode: false,
        sync: true,
    };
    /// A file anyone may read (a lock, a manifest, a report, an archive).
    pub const SHARED: WriteOptions = WriteOptions {
        mode: 0o644,
        keep_existing_mode: false,
        sync: true,
    };

    /// The same, keeping the mode of the file replaced.
    #[must_use]
    pub const fn keeping_existing_mode(mut self) -> Self {
        self.keep_existing_mode = true;
        self
    }

    /// The same, without flushing to disk (a cache whose loss costs only time).
    #[must_use]
    pub const fn unsynced(mut self) -> Self {
        self.sync = false;
        self
    }
}

/// Write `bytes` to `path` through a new file beside it (created with `O_EXCL`, so a link
/// planted at its name is refused) renamed over `path` once complete: a reader never sees half
/// a file, and whatever was at `path` (a file, a link) is replaced, not written through. The
/// folder is created when missing. A folder, device, FIFO or socket at `path` (or a link to
/// one) is refused: the rename would replace it for every program of the machine.
///
/// # Errors
/// An [`std::io::Error`] whose message names the file: when the target is refused
/// ([`std::io::ErrorKind::InvalidInput`]), or the folder or the file cannot be written or
/// renamed (the new file is removed then).
pub fn write_file_atomically(
    path: &Path,
    bytes: &[u8],
    options: WriteOptions,
) -> std::io::Result<()> {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let Some(file_name) = path.file_name() else {
        return Err(refused(path, "names no file"));
    };
    let existing = fs_err::metadata(path).ok();
    if let Some(metadata) = &existing {
        let kind = metadata.file_type();
        if kind.is_dir() {
            return Err(refused(path, "is a folder"));
        }
        if kind.is_fifo() || kind.is_socket() || kind.is_block_device() || kind.is_char_device() {
            return Err(refused(
                path,
                "is a device, FIFO or socket, or a link to one",
            ));
        }
    }
    fs_err::create_dir_all(folder)?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(file_name);
    prefix.push(".");
    let mut temporary = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".partial")
        .permissions(std::fs::Permissions::from_mode(options.mode))
        .tempfile_in(folder)
        .map_err(|error| with_path(error, folder))?;
    let mode = match &existing {
        Some(metadata) if options.keep_existing_mode => metadata.permissions().mode() & 0o7777,
        _ => options.mode,
    };
    let written = temporary
        .write_all(bytes)
        // The umask may have narrowed the mode the file was created with.
        .and_then(|()| {
            temporary
                .as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))
        })
        .and_then(|()| {
            if options.sync {
                temporary.as_file().sync_all()
            } else {
                Ok(())
            }
        });
    written.map_err(|error| with_path(error, path))?;
    temporary
        .persist(path)
        .map_err(|error| with_path(error.error, path))?;
    Ok(())
}

fn refused(path: &Path, problem: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "`{}` {problem}; a file is written beside it and renamed into place, so name a file path",
            path.display()
        ),
    )
}

/// `error` with a message naming `path` (as `fs_err` words its own).
fn with_path(error: std::io::Error, path: &Path) -> std::io::Error {
    std::io::Error::new(
        error.kind(),
        format!("failed to write `{}`: {error}", path.display()),
    )
}

/// Remove a read-only tree this store (or the runtime's unpacked archives) made: its folders are
/// opened for writing first, which the owner may always do; what cannot be removed is left and
/// logged. Whether it is gone.
pub fn remove_tree(directory: &Path) -> bool {
    let removed = remove_read_only_tree(directory);
    if let Err(error) = &removed {
        tracing::warn!(folder = %directory.display(), %error, "cannot remove a read-only tree");
    }
    removed.is_ok()
}

/// Remove the folder at `directory` and everything in it, opening its read-only folders for
/// writing first. Links are never followed, the folder itself included: a link there is not
/// touched, and an error.
///
/// # Errors
/// When a folder cannot be opened up or removed (the message names it).
pub fn remove_read_only_tree(directory: &Path) -> std::io::Result<()> {
    fn open_up(directory: &Path) -> std::io::Result<()> {
        if !fs_err::symlink_metadata(directory)?.is_dir() {
            return Ok(());
        }
        fs_err::set_permissions(directory, std::fs::Permissions::from_mode(0o700))?;
        for entry in fs_err::read_dir(directory)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                open_up(&entry.path())?;
            }
        }
        Ok(())
    }
    open_up(directory)?;
    fs_err::remove_dir_all(directory)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_a_link_at_its_name_is_not_written_through() {
        let temp = tempfile::tempdir().unwrap();
        let outside = temp.path().join("outside");
        fs_err::write(&outside, "keep").unwrap();
        let path = temp.path().join("deep/folder/file.json");
        write_file_atomically(&path, b"one", WriteOptions::SHARED).unwrap();
        assert_eq!(fs_err::read_to_string(&path).unwrap(), "one");
        let mode = fs_err::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
        let link = temp.path().join("link");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        write_file_atomically(&link, b"two", WriteOptions::PRIVATE).unwrap();
        assert_eq!(fs_err::read_to_string(&outside).unwrap(), "keep");
        assert!(!fs_err::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(fs_err::read_to_string(&link).unwrap(), "two");
        // Nothing is left beside it.
        let left: Vec<_> = fs_err::read_dir(temp.path()).unwrap().collect();
        assert_eq!(left.len(), 3);
    }

    #[test]
    fn the_mode_of_the_file_replaced_can_be_kept() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("SKILL.md");
        fs_err::write(&path, "old").unwrap();
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file_atomically(&path, b"new", WriteOptions::SHARED.keeping_existing_mode()).unwrap();
        let mode = fs_err::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn folders_and_devices_are_refused_by_name() {
        let temp = tempfile::tempdir().unwrap();
        let error = write_file_atomically(temp.path(), b"x", WriteOptions::SHARED).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        assert!(error.to_string().contains("is a folder"), "{error}");
        let error =
            write_file_atomically(Path::new("/dev/null"), b"x", WriteOptions::SHARED).unwrap_err();
        assert!(
            error.to_string().contains("`/dev/null` is a device"),
            "{error}"
        );
    }
}
