//! Listing one directory: its entries with their kinds, sorted by name. Discovery lists the
//! folders of a skill root with it, a skill's source walks its own folder with it, and the trust
//! digest reads the kinds.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use rayon::prelude::*;
use rustix::fs::{AtFlags, Dir, FileType};

/// Folders with more entries than this have them sorted on all cores.
const PARALLEL_SORT_ENTRIES: usize = 1024;

/// What a directory entry is, as the walk needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A folder.
    Folder,
    /// A regular file.
    File,
    /// A symbolic link (never followed).
    Symlink,
    /// A FIFO, socket or device.
    Special,
}

/// A directory's entries with their kinds (from the listing itself where the file system reports
/// them, else one `lstat`), sorted by name.
pub(crate) fn list_directory(folder: &mut Dir) -> rustix::io::Result<Vec<(OsString, EntryKind)>> {
    let mut entries = Vec::new();
    while let Some(entry) = folder.read() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Unknown => {
                let descriptor = folder.fd()?;
                let stat =
                    rustix::fs::statat(descriptor, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)?;
                entry_kind(FileType::from_raw_mode(stat.st_mode))
            }
            known => entry_kind(known),
        };
        entries.push((OsStr::from_bytes(name).to_os_string(), kind));
    }
    // Names in one folder are unique, so an unstable sort gives the one order.
    if entries.len() > PARALLEL_SORT_ENTRIES {
        entries.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
    } else {
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    }
    Ok(entries)
}

fn entry_kind(file_type: FileType) -> EntryKind {
    match file_type {
        FileType::Directory => EntryKind::Folder,
        FileType::RegularFile => EntryKind::File,
        FileType::Symlink => EntryKind::Symlink,
        _ => EntryKind::Special,
    }
}
