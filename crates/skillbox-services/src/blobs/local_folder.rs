//! A local store's folder: only what the store made may be in it, and it is private to the
//! runtime's user (folders 0700, files 0600).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::ids::object_key;
use super::{BlobError, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, storage};

/// The entries a local store's folder holds: its bytes and its commit records.
const LOCAL_STORE_ENTRIES: &[&str] = &["data", "meta"];

/// Refuse a folder holding anything the store did not make: the store makes every file under
/// its folder private, so a folder given by mistake (`--blob-store file:///etc`) would have
/// had every file in it made unreadable to everyone else. `data/` and `meta/` must be real
/// folders (not links) holding only objects named as the store names them: a folder of
/// someone's files that happens to be called `data` is not the store's either.
pub(crate) fn refuse_foreign_entries(directory: &Path) -> Result<(), BlobError> {
    let entries = match fs_err::read_dir(directory) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(storage(error)),
    };
    let foreign = |name: &str| {
        BlobError::Storage(format!(
            "`{}` holds `{name}`, which the blob store did not make; the store makes everything in its folder private, so it needs a new or empty folder, or one it made: pass a --blob-store file:///… of its own",
            directory.display(),
        ))
    };
    for entry in entries {
        let entry = entry.map_err(storage)?;
        let name = entry.file_name();
        let Some(folder) = LOCAL_STORE_ENTRIES.iter().find(|ours| name == **ours) else {
            return Err(foreign(&name.to_string_lossy()));
        };
        // `DirEntry::file_type` does not follow links.
        if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            return Err(foreign(&format!("{folder} (not a folder)")));
        }
        for object in fs_err::read_dir(entry.path()).map_err(storage)? {
            let object = object.map_err(storage)?;
            let object_name = object.file_name();
            let ours = object.file_type().is_ok_and(|kind| kind.is_file())
                && object_name
                    .to_str()
                    .is_some_and(|object_name| named_by_the_store(folder, object_name));
            if !ours {
                return Err(foreign(&format!(
                    "{folder}/{}",
                    object_name.to_string_lossy()
                )));
            }
        }
    }
    Ok(())
}

/// Whether `name` in the store's `folder` (`data` or `meta`) is a name the store gives: a
/// blob's key (with `.json` in `meta`), or a staged upload of one (`<name>#<digits>`).
fn named_by_the_store(folder: &str, name: &str) -> bool {
    let name = match name.split_once('#') {
        Some((object, suffix))
            if !suffix.is_empty() && suffix.bytes().all(|byte| byte.is_ascii_digit()) =>
        {
            object
        }
        Some(_) => return false,
        None => name,
    };
    let id = if folder == "meta" {
        name.strip_suffix(".json")
    } else {
        Some(name)
    };
    id.and_then(object_key).is_some()
}

/// Make a folder tree the runtime's user's alone: folders 0700, files 0600 (links are left
/// alone; the store never makes any).
pub(super) fn make_private(folder: &Path) -> std::io::Result<()> {
    let set = |path: &Path, metadata: &std::fs::Metadata, mode: u32| {
        if metadata.permissions().mode() & 0o7777 == mode {
            return Ok(());
        }
        fs_err::set_permissions(path, std::fs::Permissions::from_mode(mode))
    };
    set(folder, &fs_err::symlink_metadata(folder)?, PRIVATE_DIR_MODE)?;
    for entry in fs_err::read_dir(folder)? {
        let entry = entry?;
        let path = entry.path();
        let metadata = fs_err::symlink_metadata(&path)?;
        if metadata.is_dir() {
            make_private(&path)?;
        } else if metadata.is_file() {
            set(&path, &metadata, PRIVATE_FILE_MODE)?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "local_folder_tests.rs"]
mod tests;
