//! A skill folder on disk, held to the folder that was loaded, and the lookups that keep every
//! read inside it.
//!
//! A loaded skill records its folder's identity (device and inode) as loading saw it, not an
//! open descriptor: a catalog holds tens of thousands of skills and a process far fewer
//! descriptors. Each read opens the folder by its path again, refuses it when it is no longer
//! the folder that was loaded (renamed away and replaced by a symlink to somewhere else, say),
//! and then opens the file relative to that descriptor with `openat2(RESOLVE_BENEATH)`, so
//! neither `..` nor a symlink, nor a folder flipped into a symlink mid-lookup, leads out.
//! Where the kernel has no `openat2` (before Linux 5.6, or a seccomp filter refusing it), and
//! for absolute symlinks that point back inside the skill (which `RESOLVE_BENEATH` refuses
//! outright), the lookup walks the path one component at a time from that descriptor, never
//! letting the kernel follow a link: symlinks are followed by hand, at most
//! [`MAX_SYMLINK_HOPS`] of them, and only while they stay inside.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;

use crate::directory_listing::{EntryKind, list_directory};
use crate::error::CatalogError;

/// Most symlinks one lookup inside a skill follows by hand (as many as Linux follows in a path).
pub const MAX_SYMLINK_HOPS: usize = 40;
/// Deepest folder nesting a lookup by hand or a listing goes through inside a skill: each level
/// holds one descriptor while it is walked.
pub const MAX_FOLDER_DEPTH: usize = 64;

/// How a skill folder is opened to look files up in it (search permission is enough).
const LOOKUP_FLAGS: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
/// How a skill folder (or a folder inside it) is opened to list it.
pub const LISTING_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NONBLOCK);
/// How a folder on the way to a file is opened by the lookup by hand: never through a link.
const STEP_FLAGS: OFlags = LOOKUP_FLAGS.union(OFlags::NOFOLLOW);

/// A skill folder: its path, and the identity of the folder found there when the skill was
/// loaded. Reads through it refuse with [`CatalogError::FolderReplaced`] once the path names
/// another folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFolder {
    path: PathBuf,
    identity: FolderIdentity,
}

/// Which folder a path named when it was opened: the device and inode numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FolderIdentity {
    device: u64,
    inode: u64,
}

impl FolderIdentity {
    fn of(descriptor: BorrowedFd<'_>) -> rustix::io::Result<Self> {
        let stat = rustix::fs::fstat(descriptor)?;
        Ok(FolderIdentity {
            device: stat.st_dev,
            inode: stat.st_ino,
        })
    }
}

impl SkillFolder {
    /// Open the folder at `path` (following symlinks: roots and skill folders may be links)
    /// and record which folder it is.
    ///
    /// # Errors
    /// When `path` does not name a readable folder.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, CatalogError> {
        let path = path.into();
        let descriptor = rustix::fs::open(&path, LOOKUP_FLAGS, Mode::empty())
            .map_err(|error| folder_unreadable(&path, error))?;
        SkillFolder::opened(path, descriptor.as_fd())
    }

    /// Record the folder open as `descriptor`, found at `path`.
    pub(crate) fn opened(path: PathBuf, descriptor: BorrowedFd<'_>) -> Result<Self, CatalogError> {
        let identity =
            FolderIdentity::of(descriptor).map_err(|error| folder_unreadable(&path, error))?;
        Ok(SkillFolder { path, identity })
    }

    /// The folder's path, as found (not resolved).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The device and inode numbers of the folder found when the skill was loaded: which
    /// folder on disk it is, whatever path names it.
    #[must_use]
    pub fn device_and_inode(&self) -> (u64, u64) {
        (self.identity.device, self.identity.inode)
    }

    /// Whether `other` is this same folder on disk (the same device and inode), however each
    /// path reached it: a link to a skill folder and the folder itself are one folder.
    #[must_use]
    pub fn is_same_folder(&self, other: &SkillFolder) -> bool {
        self.identity == other.identity
    }

    /// Open the folder by its path as it is now, with `flags`, refusing it when it is not the
    /// folder that was loaded (or no folder at all).
    ///
    /// # Errors
    /// When it cannot be opened, or is no longer the folder that was loaded.
    pub fn open_checked(&self, flags: OFlags) -> Result<OwnedFd, CatalogError> {
        let descriptor =
            rustix::fs::open(&self.path, flags, Mode::empty()).map_err(|error| match error {
                Errno::NOENT => CatalogError::FileNotFound {
                    path: self.path.clone(),
                },
                Errno::NOTDIR => self.replaced(),
                other => folder_unreadable(&self.path, other),
            })?;
        let identity = FolderIdentity::of(descriptor.as_fd())
            .map_err(|error| folder_unreadable(&self.path, error))?;
        if identity != self.identity {
            return Err(self.replaced());
        }
        Ok(descriptor)
    }

    fn replaced(&self) -> CatalogError {
        CatalogError::FolderReplaced {
            path: self.path.clone(),
        }
    }

    /// Open the file at `relative` (already checked by
    /// [`super::contained_relative_path`]) for `access`, inside the folder: relative to `held`,
    /// the folder's descriptor while loading holds it, else to the folder opened and checked
    /// again.
    pub(crate) fn open_file(
        &self,
        held: Option<BorrowedFd<'_>>,
        relative: &str,
        access: Access,
    ) -> Result<OwnedFd, CatalogError> {
        let checked;
        let folder = match held {
            Some(held) => held,
            None => {
                checked = self.open_checked(LOOKUP_FLAGS)?;
                checked.as_fd()
            }
        };
        open_beneath(folder, OsStr::new(relative), access).map_err(|refusal| match refusal {
            LookupRefusal::Escapes => CatalogError::PathEscapes {
                path: relative.to_owned(),
            },
            LookupRefusal::NotFound => CatalogError::FileNotFound {
                path: self.path.join(relative),
            },
            LookupRefusal::TooManyLinks => CatalogError::Io(format!(
                "`{}` goes through more than {MAX_SYMLINK_HOPS} symlinks and was not read",
                self.path.join(relative).display()
            )),
            LookupRefusal::TooDeep => CatalogError::Io(format!(
                "`{}` is nested deeper than {MAX_FOLDER_DEPTH} folders and was not read",
                self.path.join(relative).display()
            )),
            LookupRefusal::Failed(error) => CatalogError::Io(format!(
                "cannot open `{}`: {}",
                self.path.join(relative).display(),
                std::io::Error::from(error)
            )),
        })
    }
}

fn folder_unreadable(path: &Path, error: Errno) -> CatalogError {
    CatalogError::Io(format!(
        "cannot open the skill folder `{}`: {}",
        path.display(),
        std::io::Error::from(error)
    ))
}

/// What a lookup opens the file it finds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reading, without blocking on a FIFO.
    Read,
    /// Looking at what it is (`fstat`), which needs no read permission.
    Inspect,
}

impl Access {
    fn flags(self) -> OFlags {
        match self {
            Access::Read => OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Access::Inspect => OFlags::PATH | OFlags::CLOEXEC,
        }
    }
}

/// Why a lookup inside a skill opened nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LookupRefusal {
    /// The path, or a symlink on it, leads out of the skill.
    Escapes,
    /// Nothing is there (or a component on the way is not a folder).
    NotFound,
    /// More than [`MAX_SYMLINK_HOPS`] symlinks (a loop, most likely).
    TooManyLinks,
    /// More than [`MAX_FOLDER_DEPTH`] folders deep.
    TooDeep,
    /// The system refused (permissions, descriptors exhausted…).
    Failed(Errno),
}

impl From<Errno> for LookupRefusal {
    fn from(error: Errno) -> Self {
        match error {
            Errno::NOENT | Errno::NOTDIR => LookupRefusal::NotFound,
            other => LookupRefusal::Failed(other),
        }
    }
}

/// Open `relative` inside the folder open as `folder` without ever leaving it: by
/// `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, else (no `openat2`, an absolute symlink,
/// a rename racing the lookup, a chain of links) by [`open_beneath_by_hand`], which decides.
pub(crate) fn open_beneath(
    folder: BorrowedFd<'_>,
    relative: &OsStr,
    access: Access,
) -> Result<OwnedFd, LookupRefusal> {
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(folder, relative, access.flags(), Mode::empty(), resolve) {
        Ok(opened) => Ok(opened),
        Err(error @ (Errno::NOENT | Errno::NOTDIR | Errno::ACCESS | Errno::MFILE)) => {
            Err(error.into())
        }
        // EXDEV: an absolute link or a `..` out (the walk tells which); ENOSYS / EPERM: no
        // openat2 here; EAGAIN: a rename raced the lookup; ELOOP: links too deep or magic.
        Err(_) => open_beneath_by_hand(folder, relative, access),
    }
}

/// The components of a `/`-separated path, without empty ones and `.`.
fn components(path: &[u8]) -> impl DoubleEndedIterator<Item = &[u8]> {
    path.split(|byte| *byte == b'/')
        .filter(|part| !part.is_empty() && *part != b".")
}

/// [`open_beneath`] one component at a time from `folder`: each folder on the way is opened
/// relative to the one before with `O_NOFOLLOW`, a symlink is read (`readlinkat`) and its target
/// walked in its place (`..` goes back to the folder walked before, never above `folder`; an
/// absolute target counts only when it names a place inside the folder's real path), and the
/// file is opened with `O_NOFOLLOW` too. Whatever the files do meanwhile, every open is
/// relative to a descriptor inside the skill and follows no link.
pub(crate) fn open_beneath_by_hand(
    folder: BorrowedFd<'_>,
    relative: &OsStr,
    access: Access,
) -> Result<OwnedFd, LookupRefusal> {
    let mut pending: VecDeque<Vec<u8>> = components(relative.as_bytes())
        .map(<[u8]>::to_vec)
        .collect();
    // The folders walked into below `folder`, innermost last.
    let mut walked: Vec<OwnedFd> = Vec::new();
    let mut hops = 0;
    let mut real_folder: Option<Option<PathBuf>> = None;
    loop {
        let current = walked.last().map_or(folder, AsFd::as_fd);
        let Some(part) = pending.pop_front() else {
            // The path ends at a folder (a link's target).
            return rustix::fs::openat(current, c".", access.flags(), Mode::empty())
                .map_err(LookupRefusal::from);
        };
        if part == b".." {
            walked.pop().ok_or(LookupRefusal::Escapes)?;
            continue;
        }
        let last = pending.is_empty();
        let flags = if last {
            access.flags() | OFlags::NOFOLLOW
        } else {
            STEP_FLAGS
        };
        let link = match rustix::fs::openat(current, part.as_slice(), flags, Mode::empty()) {
            // `O_PATH | O_NOFOLLOW` opens a symlink itself.
            Ok(opened)
                if last
                    && access == Access::Inspect
                    && file_type(opened.as_fd()) == Some(FileType::Symlink) =>
            {
                rustix::fs::readlinkat(current, part.as_slice(), Vec::new())
                    .map_err(|_| LookupRefusal::NotFound)?
            }
            Ok(opened) if last => return Ok(opened),
            Ok(opened) => {
                if walked.len() >= MAX_FOLDER_DEPTH {
                    return Err(LookupRefusal::TooDeep);
                }
                walked.push(opened);
                continue;
            }
            // A symlink where a file (ELOOP) or a folder (ENOTDIR) was opened, or not a link at
            // all, which the original error then describes.
            Err(error @ (Errno::LOOP | Errno::NOTDIR)) => {
                rustix::fs::readlinkat(current, part.as_slice(), Vec::new())
                    .map_err(|_| LookupRefusal::from(error))?
            }
            Err(error) => return Err(error.into()),
        };
        hops += 1;
        if hops > MAX_SYMLINK_HOPS {
            return Err(LookupRefusal::TooManyLinks);
        }
        let target = link.as_bytes();
        let target = if target.starts_with(b"/") {
            let real = real_folder.get_or_insert_with(|| real_path(folder));
            let inside = real
                .as_deref()
                .and_then(|real| Path::new(OsStr::from_bytes(target)).strip_prefix(real).ok())
                .ok_or(LookupRefusal::Escapes)?;
            walked.clear();
            inside.as_os_str().as_bytes()
        } else {
            target
        };
        for part in components(target).rev() {
            pending.push_front(part.to_vec());
        }
    }
}

/// What the file open as `descriptor` is (`fstat`, so no race with its path), `None` when it
/// cannot be told.
pub(crate) fn file_type(descriptor: BorrowedFd<'_>) -> Option<FileType> {
    rustix::fs::fstat(descriptor)
        .ok()
        .map(|stat| FileType::from_raw_mode(stat.st_mode))
}

/// Where the folder open as `descriptor` is now, as the kernel names it.
fn real_path(descriptor: BorrowedFd<'_>) -> Option<PathBuf> {
    fs_err::read_link(format!("/proc/self/fd/{}", descriptor.as_raw_fd())).ok()
}

/// One entry of a skill folder met by [`walk_beneath`].
pub struct FolderEntry<'a> {
    /// The folder holding the entry, open.
    pub parent: BorrowedFd<'a>,
    /// The entry's name.
    pub name: &'a OsStr,
    /// Its path relative to the skill folder, `/`-separated.
    pub relative: &'a [u8],
    /// What it is (a symlink is not followed).
    pub kind: EntryKind,
    /// 1 for the entries at the top of the skill folder.
    pub depth: usize,
}

/// What [`walk_beneath`] does after an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    /// Walk into this folder, then go on.
    Enter,
    /// Go on with the next entry.
    Next,
    /// Stop the walk.
    Stop,
}

/// What [`walk_beneath`] calls for each entry.
pub type VisitEntry<'a, E> = dyn FnMut(&FolderEntry<'_>) -> Result<Visit, E> + 'a;
/// What [`walk_beneath`] calls for a folder it cannot open or list, with its relative path.
pub type OnUnreadable<'a, E> = dyn FnMut(&[u8], Errno) -> Result<(), E> + 'a;

/// Walk the folder open as `folder` (opened for listing), depth first, each folder's entries in
/// byte order of their names, calling `visit` for each entry. Folders are opened relative to
/// their parent's descriptor without following links, so a folder swapped for a symlink
/// mid-walk is not entered; `unreadable` hears of each folder that could not be opened or
/// listed (by its relative path) and may end the walk with an error.
///
/// # Errors
/// Whatever `visit` or `unreadable` return.
pub fn walk_beneath<E>(
    folder: BorrowedFd<'_>,
    visit: &mut VisitEntry<'_, E>,
    unreadable: &mut OnUnreadable<'_, E>,
) -> Result<(), E> {
    match Dir::read_from(folder) {
        Ok(listing) => walk_level(listing, &mut Vec::new(), 1, visit, unreadable).map(drop),
        Err(error) => unreadable(b"", error),
    }
}

/// Walk one open folder whose path is `relative`; `Ok(true)` when the walk was stopped.
fn walk_level<E>(
    mut listing: Dir,
    relative: &mut Vec<u8>,
    depth: usize,
    visit: &mut VisitEntry<'_, E>,
    unreadable: &mut OnUnreadable<'_, E>,
) -> Result<bool, E> {
    let entries = match list_directory(&mut listing) {
        Ok(entries) => entries,
        Err(error) => {
            unreadable(relative.as_slice(), error)?;
            return Ok(false);
        }
    };
    let parent = match listing.fd() {
        Ok(parent) => parent,
        Err(error) => {
            unreadable(relative.as_slice(), error)?;
            return Ok(false);
        }
    };
    let prefix_length = relative.len();
    for (name, kind) in entries {
        relative.truncate(prefix_length);
        if prefix_length > 0 {
            relative.push(b'/');
        }
        relative.extend_from_slice(name.as_bytes());
        let entry = FolderEntry {
            parent,
            name: name.as_os_str(),
            relative: relative.as_slice(),
            kind,
            depth,
        };
        match visit(&entry)? {
            Visit::Stop => return Ok(true),
            Visit::Next => {}
            Visit::Enter => {
                let opened = rustix::fs::openat(
                    parent,
                    name.as_os_str(),
                    LISTING_FLAGS | OFlags::NOFOLLOW,
                    Mode::empty(),
                )
                .and_then(Dir::new);
                match opened {
                    Ok(child) => {
                        if walk_level(child, relative, depth + 1, visit, unreadable)? {
                            return Ok(true);
                        }
                    }
                    Err(error) => unreadable(relative.as_slice(), error)?,
                }
            }
        }
    }
    relative.truncate(prefix_length);
    Ok(false)
}

/// What an entry the walk met is and its size, as `fstatat` without following links says (for
/// what a listing does not tell).
///
/// # Errors
/// The `fstatat` error.
pub fn entry_stat(entry: &FolderEntry<'_>) -> rustix::io::Result<Stat> {
    rustix::fs::statat(entry.parent, entry.name, AtFlags::SYMLINK_NOFOLLOW)
}

/// Open an entry the walk met for reading, without following a link or blocking on a FIFO.
///
/// # Errors
/// The `openat` error.
pub fn open_entry(entry: &FolderEntry<'_>) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        entry.parent,
        entry.name,
        Access::Read.flags() | OFlags::NOFOLLOW,
        Mode::empty(),
    )
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    /// A skill folder with `scripts/run.py` and `data/`, and a secret next to it.
    fn tree() -> tempfile::TempDir {
        let temp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(temp.path().join("skill/scripts")).unwrap();
        std::fs::create_dir_all(temp.path().join("skill/data")).unwrap();
        std::fs::write(temp.path().join("skill/scripts/run.py"), "inside").unwrap();
        std::fs::write(temp.path().join("secret"), "outside").unwrap();
        temp
    }

    fn read(folder: BorrowedFd<'_>, relative: &str, by_hand: bool) -> Result<String, String> {
        let relative = OsStr::new(relative);
        let opened = if by_hand {
            open_beneath_by_hand(folder, relative, Access::Read)
        } else {
            open_beneath(folder, relative, Access::Read)
        };
        let file = std::fs::File::from(opened.map_err(|refusal| format!("{refusal:?}"))?);
        std::io::read_to_string(file).map_err(|error| error.to_string())
    }

    #[test]
    fn links_inside_are_followed_and_links_out_refused_both_ways() {
        let temp = tree();
        let skill = temp.path().join("skill");
        let real = fs_err::canonicalize(&skill).unwrap();
        symlink("scripts/run.py", skill.join("relative")).unwrap();
        symlink("../scripts/run.py", skill.join("data/up")).unwrap();
        symlink(real.join("scripts/run.py"), skill.join("absolute")).unwrap();
        symlink(real.join("scripts"), skill.join("data/folder")).unwrap();
        symlink("../secret", skill.join("out")).unwrap();
        symlink("../../secret", skill.join("data/out")).unwrap();
        symlink(temp.path().join("secret"), skill.join("absolute-out")).unwrap();
        symlink("loop-b", skill.join("loop-a")).unwrap();
        symlink("loop-a", skill.join("loop-b")).unwrap();
        let folder = SkillFolder::open(&skill).unwrap();
        let descriptor = folder.open_checked(LOOKUP_FLAGS).unwrap();
        for by_hand in [false, true] {
            let read = |relative| read(descriptor.as_fd(), relative, by_hand);
            for inside in [
                "scripts/run.py",
                "relative",
                "data/up",
                "absolute",
                "data/folder/run.py",
                "data/../scripts/run.py",
            ] {
                assert_eq!(read(inside).as_deref(), Ok("inside"), "{inside} {by_hand}");
            }
            for out in [
                "out",
                "data/out",
                "absolute-out",
                "../secret",
                "data/../../secret",
            ] {
                assert_eq!(read(out), Err("Escapes".to_owned()), "{out} {by_hand}");
            }
            assert_eq!(read("missing"), Err("NotFound".to_owned()));
            assert_eq!(read("scripts/run.py/x"), Err("NotFound".to_owned()));
        }
        assert_eq!(
            read(descriptor.as_fd(), "loop-a", true),
            Err("TooManyLinks".to_owned())
        );
        let inspected =
            open_beneath_by_hand(descriptor.as_fd(), OsStr::new("absolute"), Access::Inspect)
                .unwrap();
        let stat = rustix::fs::fstat(&inspected).unwrap();
        assert_eq!(FileType::from_raw_mode(stat.st_mode), FileType::RegularFile);
    }

    #[test]
    fn the_walk_by_hand_never_follows_a_folder_flipped_into_a_link_out() {
        let temp = tree();
        let skill = temp.path().join("skill");
        std::fs::create_dir_all(temp.path().join("outside")).unwrap();
        std::fs::write(temp.path().join("outside/run.py"), "outside").unwrap();
        symlink(temp.path().join("outside"), skill.join(".link")).unwrap();
        let folder = SkillFolder::open(&skill).unwrap();
        let descriptor = folder.open_checked(LOOKUP_FLAGS).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flipper = {
            let stop = std::sync::Arc::clone(&stop);
            let skill = skill.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::fs::rename(skill.join("scripts"), skill.join(".real")).unwrap();
                    std::fs::rename(skill.join(".link"), skill.join("scripts")).unwrap();
                    std::fs::rename(skill.join("scripts"), skill.join(".link")).unwrap();
                    std::fs::rename(skill.join(".real"), skill.join("scripts")).unwrap();
                }
            })
        };
        let started = std::time::Instant::now();
        let mut inside = 0;
        while started.elapsed() < std::time::Duration::from_secs(1) {
            match read(descriptor.as_fd(), "scripts/run.py", true).as_deref() {
                Ok("inside") => inside += 1,
                Ok(other) => panic!("read {other:?} through a flipped folder"),
                Err(_) => {}
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        flipper.join().unwrap();
        assert!(inside > 0);
    }
}
