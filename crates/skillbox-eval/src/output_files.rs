//! A run's outputs folder as the sandboxed code left it. The code that ran wrote that folder and
//! may have planted links in it (`leak -> /`), so the grader looks at it one component at a
//! time, each opened relative to the folder before it and never through a link: nothing outside
//! the folder is stat'ed or read, whatever the path an `output_file` check names.

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// What a path inside a run's outputs folder names, found without following a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputEntry {
    /// A regular file of this many bytes.
    File {
        /// Its size.
        size_bytes: u64,
    },
    /// Nothing is there.
    Missing,
    /// A component of the path (this one, as written in the path) is a link: it is not
    /// followed, so the path names nothing the run wrote.
    Link(String),
    /// A component before the last is not a folder.
    NotAFolder(String),
    /// The last component is something other than a regular file (`a folder`, `a FIFO`, …).
    NotRegular(&'static str),
    /// The path leaves the folder (`..`, absolute) or is empty.
    Outside,
    /// It could not be looked at (permissions, I/O).
    Unreadable(String),
}

/// Look at `relative` (`/`-separated) inside `outputs` without following any link, the
/// outputs folder itself included.
#[must_use]
pub fn inspect_output(outputs: &Path, relative: &str) -> OutputEntry {
    let Ok(relative) = skillbox_core::source::contained_relative_path(relative) else {
        return OutputEntry::Outside;
    };
    let folder_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut folder: OwnedFd = match rustix::fs::open(outputs, folder_flags, Mode::empty()) {
        Ok(folder) => folder,
        Err(Errno::NOENT) => return OutputEntry::Missing,
        Err(Errno::LOOP | Errno::NOTDIR) => return OutputEntry::Link(String::new()),
        Err(error) => return OutputEntry::Unreadable(error.to_string()),
    };
    let components: Vec<&str> = relative.split('/').collect();
    let (last, folders) = components
        .split_last()
        .map_or(("", &[][..]), |(last, folders)| (*last, folders));
    let mut walked = String::new();
    for name in folders {
        if !walked.is_empty() {
            walked.push('/');
        }
        walked.push_str(name);
        folder = match rustix::fs::openat(folder.as_fd(), *name, folder_flags, Mode::empty()) {
            Ok(next) => next,
            Err(Errno::NOENT) => return OutputEntry::Missing,
            Err(error @ (Errno::LOOP | Errno::NOTDIR)) => {
                // Tell a link from a file in the way: look at the entry itself.
                return match rustix::fs::statat(folder.as_fd(), *name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => {
                        OutputEntry::Link(walked)
                    }
                    Ok(_) => OutputEntry::NotAFolder(walked),
                    Err(_) => OutputEntry::Unreadable(error.to_string()),
                };
            }
            Err(error) => return OutputEntry::Unreadable(error.to_string()),
        };
    }
    let stat = match rustix::fs::statat(folder.as_fd(), last, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => stat,
        Err(Errno::NOENT) => return OutputEntry::Missing,
        Err(error) => return OutputEntry::Unreadable(error.to_string()),
    };
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => OutputEntry::File {
            size_bytes: u64::try_from(stat.st_size).unwrap_or(0),
        },
        FileType::Symlink => OutputEntry::Link(relative.clone()),
        FileType::Directory => OutputEntry::NotRegular("a folder"),
        FileType::Fifo => OutputEntry::NotRegular("a FIFO"),
        FileType::Socket => OutputEntry::NotRegular("a socket"),
        FileType::CharacterDevice | FileType::BlockDevice => OutputEntry::NotRegular("a device"),
        _ => OutputEntry::NotRegular("a special file"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn links_planted_in_the_outputs_are_never_followed() {
        let outputs = tempfile::tempdir().unwrap();
        let folder = outputs.path();
        std::fs::create_dir_all(folder.join("reports/2024")).unwrap();
        std::fs::write(folder.join("reports/2024/summary.csv"), "a,b\n").unwrap();
        std::fs::write(folder.join("plain.txt"), "x").unwrap();
        std::os::unix::fs::symlink("/", folder.join("leak")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", folder.join("hostname")).unwrap();
        std::os::unix::fs::symlink("reports", folder.join("alias")).unwrap();
        let inspect = |path: &str| inspect_output(folder, path);

        assert_eq!(
            inspect("reports/2024/summary.csv"),
            OutputEntry::File { size_bytes: 4 }
        );
        assert_eq!(inspect("./plain.txt"), OutputEntry::File { size_bytes: 1 });
        assert_eq!(
            inspect("leak/etc/passwd"),
            OutputEntry::Link("leak".to_owned())
        );
        assert_eq!(
            inspect("hostname"),
            OutputEntry::Link("hostname".to_owned())
        );
        // A link inside the folder is not followed either: the run wrote a link, not a file.
        assert_eq!(
            inspect("alias/2024/summary.csv"),
            OutputEntry::Link("alias".to_owned())
        );
        assert_eq!(
            inspect("plain.txt/x"),
            OutputEntry::NotAFolder("plain.txt".to_owned())
        );
        assert_eq!(inspect("reports"), OutputEntry::NotRegular("a folder"));
        assert_eq!(inspect("nothing.txt"), OutputEntry::Missing);
        assert_eq!(inspect("../outside"), OutputEntry::Outside);
        assert_eq!(inspect("/etc/passwd"), OutputEntry::Outside);

        // The outputs folder itself swapped for a link is not followed.
        let parent = tempfile::tempdir().unwrap();
        let swapped = parent.path().join("outputs");
        std::os::unix::fs::symlink(folder, &swapped).unwrap();
        assert_eq!(
            inspect_output(&swapped, "plain.txt"),
            OutputEntry::Link(String::new())
        );
    }
}
