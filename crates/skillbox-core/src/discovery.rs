//! Discovery: finding skill folders and archives under one root.
//!
//! Each directory is read once; its listing says whether it is a skill (it holds `SKILL.md`) and
//! which sidecar files it has, so loading needs no further checks. Descent stops at skill
//! folders, at the depth limit and at the directory limit; hidden folders and dependency folders
//! are never entered; a symlink whose target is one of the current folder's ancestors is a loop
//! and is reported instead of followed.
//!
//! Folders are opened relative to their parent's descriptor, and a skill folder is loaded while
//! the walk holds it open, so each file is found with a one-name lookup instead of a walk of its
//! whole path. Whether a folder is a skill is found by looking up `SKILL.md` and its sidecars by
//! name; only folders that are not skills are listed.

use std::ffi::OsString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};

use crate::archive::is_archive_path;
use crate::diagnostic::{Diagnostic, DiagnosticCode, Severity};
use crate::directory_listing::{EntryKind, list_directory};
use crate::limits::CatalogLimits;
use crate::loader::{FolderListing, LoadOutcome, SKILL_MD_NAMES};
use crate::skill_servers::MCP_JSON_FILE;
use crate::skill_toml::SKILL_MANIFEST_FILE;
use crate::tools_json::TOOLS_MANIFEST_FILE;

/// Folder names discovery never enters (besides hidden ones).
pub const SKIPPED_FOLDERS: &[&str] = &["node_modules", "__pycache__", "target"];

/// A place discovery found that may hold a skill.
#[derive(Debug)]
pub(crate) enum Candidate {
    /// A folder holding a `SKILL.md`, to be loaded by its path.
    Folder {
        path: PathBuf,
        root_index: usize,
        listing: FolderListing,
    },
    /// A skill folder the walk loaded while it held the folder open.
    Loaded { path: PathBuf, outcome: LoadOutcome },
    /// A `.zip` / `.skill` archive.
    Archive { path: PathBuf, root_index: usize },
}

/// Loads a skill folder the walk holds open: its path, its descriptor, which of the files
/// loading cares about it holds, and its `SKILL.md` when the walk has it open.
pub(crate) type LoadOpenFolder<'a> =
    dyn Fn(&Path, BorrowedFd<'_>, FolderListing, Option<&std::fs::File>) -> LoadOutcome + Sync + 'a;

/// Find candidate skills under one root, in path order, loading skill folders on the way.
pub(crate) fn discover(
    root: &Path,
    root_index: usize,
    limits: &CatalogLimits,
    load: &LoadOpenFolder<'_>,
    candidates: &mut Vec<Candidate>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if root.is_file() {
        discover_file(root, root_index, candidates, diagnostics);
        return;
    }
    let canonical_root = fs_err::canonicalize(root).ok();
    let root_resolved = canonical_root.is_some();
    let real_root = canonical_root.unwrap_or_else(|| root.to_path_buf());
    let walk = Walk {
        root,
        root_index,
        limits,
        load,
        directories: AtomicUsize::new(0),
        too_deep: AtomicUsize::new(0),
        stopped: AtomicBool::new(false),
    };
    let found_before = candidates.len();
    let found = match rustix::fs::open(root, DIRECTORY_FLAGS, Mode::empty()) {
        Ok(descriptor) => walk.visit(
            root,
            descriptor,
            Real {
                path: &real_root,
                canonical: root_resolved,
            },
            0,
        ),
        Err(error) => vec![unreadable_folder(root, error)],
    };
    for found in found {
        match found {
            Found::Candidate(candidate) => candidates.push(candidate),
            Found::Diagnostic(diagnostic) => diagnostics.push(diagnostic),
        }
    }
    let too_deep = walk.too_deep.load(Ordering::Relaxed);
    if too_deep > 0 && candidates.len() == found_before {
        diagnostics.push(
            Diagnostic::new(
                Severity::Info,
                DiagnosticCode::DiscoveryLimit,
                format!(
                    "{too_deep} folder(s) under `{}` are deeper than {} levels and were not searched",
                    root.display(),
                    limits.max_discovery_depth
                ),
            )
            .in_file(root)
            .with_hint("keep skills at most a few folders below their root"),
        );
    }
}

/// A root that is a file: an archive, or a `SKILL.md` naming its folder.
fn discover_file(
    root: &Path,
    root_index: usize,
    candidates: &mut Vec<Candidate>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let is_skill_md = root
        .file_name()
        .is_some_and(|name| SKILL_MD_NAMES.iter().any(|known| name == *known));
    if is_archive_path(root) {
        candidates.push(Candidate::Archive {
            path: root.to_path_buf(),
            root_index,
        });
    } else if let (true, Some(parent)) = (is_skill_md, root.parent()) {
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        // Which of the known names the folder holds, looked up by path (following symlinks,
        // unlike `probe_skill_folder` for walked folders); the loader uses this listing.
        let mut listing = FolderListing::default();
        for name in [
            SKILL_MD_NAMES[0],
            SKILL_MD_NAMES[1],
            SKILL_MANIFEST_FILE,
            TOOLS_MANIFEST_FILE,
            MCP_JSON_FILE,
        ] {
            if names_something_but_a_folder(&parent.join(name)) {
                listing.note(name);
            }
        }
        candidates.push(Candidate::Folder {
            path: parent.to_path_buf(),
            root_index,
            listing,
        });
    } else {
        diagnostics.push(
            Diagnostic::error(
                DiagnosticCode::PathUnreadable,
                format!(
                    "`{}` is neither a skill folder, a `SKILL.md`, nor a `.zip`/`.skill` archive",
                    root.display()
                ),
            )
            .in_file(root)
            .with_hint(
                "name a folder of skills, one skill folder, its SKILL.md, or a packaged skill",
            ),
        );
    }
}

/// What a walk finds, in path order.
enum Found {
    Candidate(Candidate),
    Diagnostic(Diagnostic),
}

/// Work found in one directory, in name order: results, or subdirectories to walk.
enum Step {
    Found(Found),
    Descend {
        name: OsString,
        /// For a symlink to a folder (followed): where it resolves to.
        resolved: Option<PathBuf>,
    },
}

/// One root's walk. Subdirectories are walked in parallel; results keep path order.
struct Walk<'a> {
    root: &'a Path,
    root_index: usize,
    limits: &'a CatalogLimits,
    load: &'a LoadOpenFolder<'a>,
    directories: AtomicUsize,
    too_deep: AtomicUsize,
    stopped: AtomicBool,
}

/// Where a folder the walk visits resolves to.
#[derive(Clone, Copy)]
struct Real<'a> {
    /// The folder's location with the links on the way resolved as the walk met them.
    path: &'a Path,
    /// Whether `path` is the folder's canonical path: the root resolved, and every link on the
    /// way still named the folder the walk opened.
    canonical: bool,
}

/// Whether `path` names the folder open as `folder` (the same device and inode).
fn names_folder(path: &Path, folder: BorrowedFd<'_>) -> bool {
    match (rustix::fs::stat(path), rustix::fs::fstat(folder)) {
        (Ok(named), Ok(opened)) => named.st_dev == opened.st_dev && named.st_ino == opened.st_ino,
        _ => false,
    }
}

/// How folders are opened for the walk.
const DIRECTORY_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NONBLOCK);

fn unreadable_folder(path: &Path, error: rustix::io::Errno) -> Found {
    skipped(
        path,
        format!(
            "it cannot be read: {}",
            std::io::Error::from_raw_os_error(error.raw_os_error())
        ),
        "check the folder's permissions",
    )
}

fn skipped(path: &Path, reason: String, hint: &str) -> Found {
    Found::Diagnostic(
        Diagnostic::warning(
            DiagnosticCode::DiscoverySkipped,
            format!("skipped `{}`: {reason}", path.display()),
        )
        .in_file(path)
        .with_hint(hint),
    )
}

impl Walk<'_> {
    /// `directory` as reached (for the paths people see) and `real` its resolved location (for
    /// loop detection, and for the resolved paths of the skills found when it is canonical).
    fn visit(
        &self,
        directory: &Path,
        descriptor: OwnedFd,
        real: Real<'_>,
        depth: usize,
    ) -> Vec<Found> {
        if let Some(probe) = probe_skill_folder(directory, descriptor.as_fd()) {
            let outcome = (self.load)(
                directory,
                descriptor.as_fd(),
                probe.listing,
                probe.skill_md.as_ref(),
            );
            // `SKILL.md` opened without following links is a file in the folder itself, so
            // its resolved path is the folder's: no lookup of each part of the path later.
            if let (true, Some(_), LoadOutcome::Loaded(skill)) =
                (real.canonical, &probe.skill_md, &outcome)
            {
                skill.note_resolved_directory(real.path);
            }
            return vec![Found::Candidate(Candidate::Loaded {
                path: directory.to_path_buf(),
                outcome,
            })];
        }
        let mut folder = match Dir::new(descriptor) {
            Ok(folder) => folder,
            Err(error) => return vec![unreadable_folder(directory, error)],
        };
        let entries = match list_directory(&mut folder) {
            Ok(entries) => entries,
            Err(error) => return vec![unreadable_folder(directory, error)],
        };
        let mut steps = Vec::new();
        for (name, kind) in entries {
            if let Some(step) = self.step(directory, real.path, depth, name, kind) {
                steps.push(step);
            }
            if self.stopped.load(Ordering::Relaxed) {
                break;
            }
        }
        let Ok(parent) = folder.fd() else {
            return vec![unreadable_folder(directory, rustix::io::Errno::BADF)];
        };
        let parts: Vec<Vec<Found>> = steps
            .into_par_iter()
            .map(|step| match step {
                Step::Found(found) => vec![found],
                Step::Descend { name, resolved } => {
                    let path = directory.join(&name);
                    let flags = if resolved.is_some() {
                        DIRECTORY_FLAGS
                    } else {
                        DIRECTORY_FLAGS | OFlags::NOFOLLOW
                    };
                    let followed = resolved.is_some();
                    let child_real = resolved.unwrap_or_else(|| real.path.join(&name));
                    match rustix::fs::openat(parent, name.as_os_str(), flags, Mode::empty()) {
                        Ok(child) => {
                            // A link's target was resolved before the folder was opened: it is
                            // the folder's canonical path only if it still names that folder
                            // (a link swapped in between, or one through another namespace's
                            // `/proc/PID/root`, does not).
                            let canonical = real.canonical
                                && (!followed || names_folder(&child_real, child.as_fd()));
                            let real = Real {
                                path: &child_real,
                                canonical,
                            };
                            self.visit(&path, child, real, depth + 1)
                        }
                        Err(error) => vec![unreadable_folder(&path, error)],
                    }
                }
            })
            .collect();
        parts.into_iter().flatten().collect()
    }

    /// Decide what one directory entry means.
    fn step(
        &self,
        directory: &Path,
        real: &Path,
        depth: usize,
        name: OsString,
        kind: EntryKind,
    ) -> Option<Step> {
        // Files other than archives are nothing to discover; their path is never built.
        if kind == EntryKind::Special
            || (kind == EntryKind::File && !is_archive_path(Path::new(&name)))
        {
            return None;
        }
        // Paths are built here only for symlinks and archives; a folder's path is built by the
        // task that walks it.
        let (is_directory, target, path) = if kind == EntryKind::Symlink {
            // A dangling link is nothing to discover.
            let path = directory.join(&name);
            let metadata = std::fs::metadata(&path).ok()?;
            (metadata.is_dir(), Some(metadata.file_type()), Some(path))
        } else {
            (kind == EntryKind::Folder, None, None)
        };
        if !is_directory {
            let path = path.unwrap_or_else(|| directory.join(&name));
            let is_file = target.map_or(kind == EntryKind::File, |target| target.is_file());
            if !(is_file && is_archive_path(&path)) {
                return None;
            }
            return Some(Step::Found(Found::Candidate(Candidate::Archive {
                path,
                root_index: self.root_index,
            })));
        }
        let text = name.to_string_lossy();
        if text.starts_with('.') || SKIPPED_FOLDERS.contains(&text.as_ref()) {
            return None;
        }
        if depth + 1 > self.limits.max_discovery_depth {
            self.too_deep.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let visited = self.directories.fetch_add(1, Ordering::Relaxed) + 1;
        if visited > self.limits.max_directories_per_root {
            if !self.stopped.swap(true, Ordering::Relaxed) {
                return Some(Step::Found(Found::Diagnostic(
                    Diagnostic::warning(
                        DiagnosticCode::DiscoveryLimit,
                        format!(
                            "stopped searching `{}` after {} directories; skills further on were not loaded",
                            self.root.display(),
                            self.limits.max_directories_per_root
                        ),
                    )
                    .in_file(self.root)
                    .with_hint("point the root at the folder that holds the skills, or raise the directory limit"),
                )));
            }
            return None;
        }
        if target.is_none() {
            return Some(Step::Descend {
                name,
                resolved: None,
            });
        }
        let path = path?;
        let real_target = fs_err::canonicalize(&path).ok()?;
        if real.starts_with(&real_target) {
            return Some(Step::Found(skipped(
                &path,
                format!(
                    "it is a symlink loop (it points at `{}`)",
                    real_target.display()
                ),
                "remove the link or point it outside the folders that contain it",
            )));
        }
        Some(Step::Descend {
            name,
            resolved: Some(real_target),
        })
    }
}

/// Whether the path (following symlinks) exists and is not a folder: a file the loader reads,
/// or a special file it refuses with a diagnostic.
fn names_something_but_a_folder(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|metadata| !metadata.is_dir())
}

/// A skill folder as [`probe_skill_folder`] found it.
struct SkillFolderProbe {
    listing: FolderListing,
    /// `SKILL.md` (or `skill.md`), open, when it is a regular file: loading reads it from here.
    skill_md: Option<std::fs::File>,
}

/// Whether the folder open as `folder` is a skill, and which of the files loading cares about
/// it holds: the decision a listing of the folder gives (`SKILL.md` wins over `skill.md`, a
/// folder of that name does not count, a symlink counts when it names something but a folder,
/// a FIFO or device counts and is refused by the loader), made by looking each name up, which
/// costs less than listing the folder.
fn probe_skill_folder(directory: &Path, folder: BorrowedFd<'_>) -> Option<SkillFolderProbe> {
    let mut listing = FolderListing::default();
    let mut skill_md = None;
    for name in SKILL_MD_NAMES {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(folder, *name, flags, Mode::empty()) {
            Ok(opened) => {
                let file = std::fs::File::from(opened);
                match file.metadata() {
                    Ok(metadata) if metadata.is_dir() => continue,
                    Ok(metadata) if metadata.is_file() => skill_md = Some(file),
                    _ => {}
                }
            }
            // A symlink: it decides, whatever it points at.
            Err(rustix::io::Errno::LOOP) => {
                if !names_something_but_a_folder(&directory.join(name)) {
                    return None;
                }
            }
            Err(rustix::io::Errno::NOENT) => continue,
            // There but not readable: the loader says why.
            Err(_) => {}
        }
        listing.note(name);
        break;
    }
    listing.skill_md?;
    for name in [SKILL_MANIFEST_FILE, TOOLS_MANIFEST_FILE, MCP_JSON_FILE] {
        let present = rustix::fs::statat(folder, name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) != FileType::Directory);
        if present {
            listing.note(name);
        }
    }
    Some(SkillFolderProbe { listing, skill_md })
}
