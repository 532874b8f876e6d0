//! Discovery: finding skill folders and archives under one root.
//!
//! Each directory is read once; its listing says whether it is a skill (it holds `SKILL.md`) and
//! which sidecar files it has, so loading needs no further checks. Descent stops at skill
//! folders, at the depth limit and at the directory limit; hidden folders and dependency folders
//! are never entered; a symlink whose target is one of the current folder's ancestors is a loop
//! and is reported instead of followed.

use std::ffi::OsString;
use std::fs::FileType;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::archive::is_archive_path;
use crate::diagnostic::{Diagnostic, DiagnosticCode, Severity};
use crate::limits::CatalogLimits;
use crate::loader::{FolderListing, SKILL_MD_NAMES};

/// Folder names discovery never enters (besides hidden ones).
pub const SKIPPED_FOLDERS: &[&str] = &["node_modules", "__pycache__", "target"];

/// A place discovery found that may hold a skill.
#[derive(Debug)]
pub(crate) enum Candidate {
    /// A folder holding a `SKILL.md`.
    Folder {
        path: PathBuf,
        root_index: usize,
        listing: FolderListing,
    },
    /// A `.zip` / `.skill` archive.
    Archive { path: PathBuf, root_index: usize },
}

/// Find candidate skills under one root, in path order.
pub(crate) fn discover(
    root: &Path,
    root_index: usize,
    limits: &CatalogLimits,
    candidates: &mut Vec<Candidate>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if root.is_file() {
        discover_file(root, root_index, candidates, diagnostics);
        return;
    }
    let real_root = fs_err::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let walk = Walk {
        root,
        root_index,
        limits,
        directories: AtomicUsize::new(0),
        too_deep: AtomicUsize::new(0),
        stopped: AtomicBool::new(false),
    };
    let found_before = candidates.len();
    for found in walk.visit(root, &real_root, 0) {
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
        // The listing is rebuilt by the loader from the folder itself.
        let mut listing = FolderListing::default();
        for name in [
            SKILL_MD_NAMES[0],
            SKILL_MD_NAMES[1],
            "skill.toml",
            "tools.json",
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
    Descend { path: PathBuf, real: PathBuf },
}

/// One root's walk. Subdirectories are walked in parallel; results keep path order.
struct Walk<'a> {
    root: &'a Path,
    root_index: usize,
    limits: &'a CatalogLimits,
    directories: AtomicUsize,
    too_deep: AtomicUsize,
    stopped: AtomicBool,
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
    /// loop detection).
    fn visit(&self, directory: &Path, real: &Path, depth: usize) -> Vec<Found> {
        let entries = match list_directory(directory) {
            Ok(entries) => entries,
            Err(error) => {
                return vec![skipped(
                    directory,
                    error.to_string(),
                    "check the folder's permissions",
                )];
            }
        };
        // Any entry but a folder counts: a FIFO or device named `SKILL.md` or `tools.json` is
        // then refused by the loader with a diagnostic instead of passed over in silence.
        let mut listing = FolderListing::default();
        for (name, file_type) in &entries {
            if let Some(name) = name.to_str()
                && !file_type.is_dir()
            {
                listing.note(name);
            }
        }
        if let Some(skill_md) = listing.skill_md
            && (!entries_name_is_symlink(&entries, skill_md)
                || names_something_but_a_folder(&directory.join(skill_md)))
        {
            return vec![Found::Candidate(Candidate::Folder {
                path: directory.to_path_buf(),
                root_index: self.root_index,
                listing,
            })];
        }
        let mut steps = Vec::new();
        for (name, file_type) in entries {
            if let Some(step) = self.step(directory, real, depth, name, file_type) {
                steps.push(step);
            }
            if self.stopped.load(Ordering::Relaxed) {
                break;
            }
        }
        let parts: Vec<Vec<Found>> = steps
            .into_par_iter()
            .map(|step| match step {
                Step::Found(found) => vec![found],
                Step::Descend { path, real } => self.visit(&path, &real, depth + 1),
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
        file_type: FileType,
    ) -> Option<Step> {
        let path = directory.join(&name);
        let (is_directory, target) = if file_type.is_symlink() {
            // A dangling link is nothing to discover.
            let metadata = std::fs::metadata(&path).ok()?;
            (metadata.is_dir(), Some(metadata.file_type()))
        } else {
            (file_type.is_dir(), None)
        };
        if !is_directory {
            let is_file = target.map_or(file_type.is_file(), |target| target.is_file());
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
            let real = real.join(&name);
            return Some(Step::Descend { path, real });
        }
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
            path,
            real: real_target,
        })
    }
}

/// Whether the path (following symlinks) exists and is not a folder: a file the loader reads,
/// or a special file it refuses with a diagnostic.
fn names_something_but_a_folder(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|metadata| !metadata.is_dir())
}

fn entries_name_is_symlink(entries: &[(OsString, FileType)], name: &str) -> bool {
    entries
        .iter()
        .any(|(entry, file_type)| entry == name && file_type.is_symlink())
}

/// A directory's entries with their types (no extra `stat` where the OS reports the type),
/// sorted by name.
fn list_directory(directory: &Path) -> std::io::Result<Vec<(OsString, FileType)>> {
    let mut entries = Vec::new();
    for entry in fs_err::read_dir(directory)? {
        let entry = entry?;
        entries.push((entry.file_name(), entry.file_type()?));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}
