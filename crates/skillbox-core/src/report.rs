//! A validation report over a whole catalog: one entry per skill folder or archive examined,
//! valid or not, with its diagnostics. `skillbox validate` prints it; tests and CI read it as
//! JSON.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rayon::slice::ParallelSliceMut;
use serde::Serialize;

use crate::catalog::SkillCatalog;
use crate::diagnostic::{Diagnostic, Severity, has_errors};

/// The verdict on one skill.
#[derive(Debug, Clone, Serialize)]
pub struct SkillReport {
    /// The skill folder or archive.
    pub path: PathBuf,
    /// The skill's name, when it could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The version, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// No error-level diagnostics.
    pub valid: bool,
    /// Everything found, errors first.
    pub diagnostics: Vec<Diagnostic>,
}

/// The verdict on everything examined.
#[derive(Debug, Clone, Serialize)]
pub struct ValidationReport {
    /// Every skill valid and no catalog-level error.
    pub valid: bool,
    /// Skills examined.
    pub checked: usize,
    /// Skills with at least one error.
    pub invalid: usize,
    /// Warnings across all skills and the catalog.
    pub warnings: usize,
    /// One entry per skill, in path order.
    pub skills: Vec<SkillReport>,
    /// Problems not tied to one skill (discovery limits, unreadable entries, empty roots).
    pub diagnostics: Vec<Diagnostic>,
}

impl ValidationReport {
    /// Build the report for every skill the catalog examined: in effect, shadowed, or skipped.
    #[must_use]
    pub fn from_catalog(catalog: &SkillCatalog) -> Self {
        let mut skills: Vec<SkillReport> = catalog
            .skills()
            .iter()
            .chain(catalog.shadowed())
            .map(|skill| SkillReport {
                path: skill.directory.clone(),
                name: Some(skill.id.name.clone()),
                version: skill.version_label(),
                valid: !skill.has_errors(),
                diagnostics: sorted(skill.diagnostics.clone()),
            })
            .chain(catalog.skipped().iter().map(|skipped| SkillReport {
                path: skipped.path.clone(),
                name: None,
                version: None,
                valid: false,
                diagnostics: sorted(skipped.diagnostics.clone()),
            }))
            .collect();
        sort_by_path(&mut skills);
        // Shadowing is reported on the skills themselves; keep the rest at catalog level.
        let diagnostics: Vec<Diagnostic> = catalog
            .diagnostics()
            .iter()
            .filter(|diagnostic| {
                diagnostic.code != crate::diagnostic::DiagnosticCode::SkillShadowed
            })
            .cloned()
            .collect();
        let invalid = skills.iter().filter(|skill| !skill.valid).count();
        let warnings = skills
            .iter()
            .flat_map(|skill| &skill.diagnostics)
            .chain(&diagnostics)
            .filter(|diagnostic| diagnostic.severity == Severity::Warning)
            .count();
        ValidationReport {
            valid: invalid == 0 && !has_errors(&diagnostics),
            checked: skills.len(),
            invalid,
            warnings,
            skills,
            diagnostics,
        }
    }
}

/// Sort by path in `Path`'s order (component by component). When every path is plain
/// (components joined by single `/`, no `.` or `..` and no trailing `/`), comparing the bytes
/// with `/` below every other byte gives that same order without splitting paths into
/// components, which for thousands of skills is most of the cost of sorting.
fn sort_by_path(skills: &mut [SkillReport]) {
    if skills.iter().all(|skill| is_plain_path(&skill.path)) {
        skills.par_sort_by_cached_key(|skill| plain_path_key(skill.path.as_os_str().as_bytes()));
    } else {
        skills.sort_by(|a, b| a.path.cmp(&b.path));
    }
}

/// Whether a path is its components joined by single `/` (after a leading `/` when absolute),
/// with no `.` or `..` among them.
fn is_plain_path(path: &Path) -> bool {
    let bytes = path.as_os_str().as_bytes();
    let relative = bytes.strip_prefix(b"/").unwrap_or(bytes);
    !relative.is_empty()
        && relative
            .split(|byte| *byte == b'/')
            .all(|part| !part.is_empty() && part != b"." && part != b"..")
}

/// A key whose byte order is [`Path`]'s order for plain paths: `/` becomes the byte 0, which
/// no path holds, so it sorts below every other byte.
fn plain_path_key(path: &[u8]) -> Vec<u8> {
    path.iter()
        .map(|byte| if *byte == b'/' { 0 } else { *byte })
        .collect()
}

fn sorted(mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diagnostics.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.line.cmp(&b.line)));
    diagnostics
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use proptest::prelude::*;
    use proptest::sample::select;

    use super::{is_plain_path, plain_path_key};

    #[test]
    fn plain_paths() {
        for plain in ["a", "/a/b", "skills/x-y/z.md", "/"] {
            assert_eq!(is_plain_path(Path::new(plain)), plain != "/", "{plain}");
        }
        for not_plain in ["", "a/", "a//b", "./a", "a/./b", "a/../b", ".."] {
            assert!(!is_plain_path(Path::new(not_plain)), "{not_plain}");
        }
    }

    proptest! {
        /// The byte order of plain paths is exactly `Path`'s component order.
        #[test]
        fn plain_path_order_is_path_order(
            a in prop::collection::vec(select(vec!["a", "a-b", "a.b", "ab", "b", "-", "A", "é", ".x", "a0"]), 1..5),
            b in prop::collection::vec(select(vec!["a", "a-b", "a.b", "ab", "b", "-", "A", "é", ".x", "a0"]), 1..5),
            absolute in any::<(bool, bool)>(),
        ) {
            let join = |parts: &[&str], absolute: bool| {
                format!("{}{}", if absolute { "/" } else { "" }, parts.join("/"))
            };
            let (a, b) = (join(&a, absolute.0), join(&b, absolute.1));
            prop_assert!(is_plain_path(Path::new(&a)) && is_plain_path(Path::new(&b)));
            prop_assert_eq!(
                plain_path_key(a.as_bytes()).cmp(&plain_path_key(b.as_bytes())),
                Path::new(&a).cmp(Path::new(&b)),
                "{} vs {}", a, b
            );
        }
    }
}
