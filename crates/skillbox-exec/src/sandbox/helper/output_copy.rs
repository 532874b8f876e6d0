//! Copying a run's output files out of its workspace once every process of the run is dead.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use skillbox_core::printable::printable_path;

use super::mounts::{contained, open_folder};
use crate::sandbox::{OutputCopy, OutputNotes};

/// The copy of a run's output files, prepared before the fork (the host folder is opened while
/// the host's tree is still reachable) and made after the program's namespace is gone.
pub(super) struct OutputCopyJob {
    source: PathBuf,
    destination: std::os::fd::OwnedFd,
    report: std::fs::File,
    max_files: usize,
    max_bytes: u64,
}

/// Folder depth an output copy descends to.
const MAX_OUTPUT_DEPTH: usize = 16;

impl OutputCopyJob {
    pub(super) fn open(copy: &OutputCopy) -> Result<Self, String> {
        use std::os::unix::fs::OpenOptionsExt;
        let source = contained(&copy.source)?;
        let destination = open_folder(None, &copy.destination)?;
        let report = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&copy.report)
            .map_err(|error| format!("cannot create `{}`: {error}", copy.report.display()))?;
        Ok(OutputCopyJob {
            source,
            destination,
            report,
            max_files: copy.max_files,
            max_bytes: copy.max_bytes,
        })
    }

    /// Copy the regular files under the source folder of `workspace` (every process that could
    /// change it is dead), noting in the report what was left and why.
    pub(super) fn run(mut self, workspace: &std::os::fd::OwnedFd) {
        use std::io::Write;
        use std::os::fd::AsFd;
        let mut notes = OutputNotes::default();
        let mut copied = CopyBudget::default();
        match open_folder(Some(workspace.as_fd()), &self.source) {
            Ok(source) => {
                let destination = self.destination.as_fd();
                self.copy_folder(
                    &source,
                    destination,
                    Path::new(""),
                    0,
                    &mut copied,
                    &mut notes,
                );
            }
            Err(message) => notes.push(format!("out/: {message}")),
        }
        for note in notes.into_lines() {
            let _ = writeln!(self.report, "{note}");
        }
    }

    fn copy_folder(
        &self,
        source: &std::os::fd::OwnedFd,
        destination: std::os::fd::BorrowedFd<'_>,
        relative: &Path,
        depth: usize,
        budget: &mut CopyBudget,
        notes: &mut OutputNotes,
    ) {
        use nix::sys::stat::{Mode, SFlag};
        use std::os::fd::AsFd;
        let Ok(listing) = nix::dir::Dir::from_fd(match source.try_clone() {
            Ok(clone) => clone,
            Err(error) => {
                notes.push(format!("out/{}: {error}", printable_path(relative)));
                return;
            }
        }) else {
            notes.push(format!(
                "out/{}: cannot be listed",
                printable_path(relative)
            ));
            return;
        };
        let mut names: Vec<std::ffi::OsString> = Vec::new();
        for entry in listing.into_iter().flatten() {
            let name = std::ffi::OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            if !notes.look_at_one_more() {
                break;
            }
            names.push(name.to_owned());
        }
        names.sort();
        for name in names {
            let shown = relative.join(&name);
            let Ok(status) = nix::sys::stat::fstatat(
                source.as_fd(),
                name.as_os_str(),
                nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
            ) else {
                continue;
            };
            let kind = SFlag::from_bits_truncate(status.st_mode) & SFlag::S_IFMT;
            if kind == SFlag::S_IFDIR {
                if depth + 1 >= MAX_OUTPUT_DEPTH {
                    notes.push(format!(
                        "out/{}: deeper than {MAX_OUTPUT_DEPTH} folders",
                        printable_path(&shown)
                    ));
                    continue;
                }
                let made = nix::sys::stat::mkdirat(
                    destination,
                    name.as_os_str(),
                    Mode::from_bits_truncate(0o700),
                );
                let opened = made
                    .map_err(|error| error.to_string())
                    .and_then(|()| open_folder(Some(source.as_fd()), Path::new(&name)))
                    .and_then(|inner| {
                        open_folder(Some(destination), Path::new(&name)).map(|out| (inner, out))
                    });
                match opened {
                    Ok((inner, out)) if !notes.stopped() => {
                        self.copy_folder(&inner, out.as_fd(), &shown, depth + 1, budget, notes);
                    }
                    Ok(_) => {}
                    Err(message) => {
                        notes.push(format!("out/{}: {message}", printable_path(&shown)))
                    }
                }
                continue;
            }
            if kind != SFlag::S_IFREG {
                notes.push(format!(
                    "out/{}: not a regular file (links are not followed)",
                    printable_path(&shown)
                ));
                continue;
            }
            let size = u64::try_from(status.st_size).unwrap_or(0);
            if budget.files >= self.max_files {
                notes.push(format!(
                    "out/{}: more than {} output files",
                    printable_path(&shown),
                    self.max_files
                ));
                continue;
            }
            if budget.bytes.saturating_add(size) > self.max_bytes {
                notes.push(format!(
                    "out/{}: output files exceed {} bytes in total",
                    printable_path(&shown),
                    self.max_bytes
                ));
                continue;
            }
            match copy_file(source.as_fd(), destination, &name) {
                Ok(bytes) => {
                    budget.files += 1;
                    budget.bytes += bytes;
                }
                Err(message) => notes.push(format!("out/{}: {message}", printable_path(&shown))),
            }
        }
    }
}

/// What an output copy has used so far.
#[derive(Default)]
struct CopyBudget {
    files: usize,
    bytes: u64,
}

/// Copy one regular file between folders, never following a link on either side.
fn copy_file(
    from: std::os::fd::BorrowedFd<'_>,
    to: std::os::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
) -> Result<u64, String> {
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::Mode;
    let source = openat(
        from,
        name,
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|error| error.to_string())?;
    let target = openat(
        to,
        name,
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )
    .map_err(|error| error.to_string())?;
    let mut source = std::fs::File::from(source);
    let mut target = std::fs::File::from(target);
    if !source
        .metadata()
        .map_err(|error| error.to_string())?
        .is_file()
    {
        return Err("not a regular file".to_owned());
    }
    std::io::copy(&mut source, &mut target).map_err(|error| error.to_string())
}
