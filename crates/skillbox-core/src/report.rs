//! A validation report over a whole catalog: one entry per skill folder or archive examined,
//! valid or not, with its diagnostics. `skillbox validate` prints it; tests and CI read it as
//! JSON.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
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
    /// Count warnings as errors (`validate --strict`): a skill with any warning is invalid, and
    /// so is the report when anything warned.
    pub fn treat_warnings_as_errors(&mut self) {
        let warned = |diagnostics: &[Diagnostic]| {
            diagnostics
                .iter()
                .any(|diagnostic| diagnostic.severity == crate::Severity::Warning)
        };
        for skill in &mut self.skills {
            if warned(&skill.diagnostics) {
                skill.valid = false;
            }
        }
        self.invalid = self.skills.iter().filter(|skill| !skill.valid).count();
        self.valid = self.valid && self.invalid == 0 && !warned(&self.diagnostics);
    }

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

impl ValidationReport {
    /// The report as pretty JSON, byte for byte what `serde_json::to_vec_pretty` writes, with
    /// the skills rendered on all cores: for thousands of skills, rendering is much of what
    /// `validate --json` does after the catalog is loaded, and it would run on one core.
    ///
    /// # Errors
    /// When a value cannot be rendered as JSON.
    pub fn to_json_pretty(&self) -> serde_json::Result<Vec<u8>> {
        // Each skill sits two levels deep: inside the report and inside its `skills` array.
        const SKILL_INDENT: &[u8] = b"    ";
        const EMPTY_SKILLS: &[u8] = b"\n  \"skills\": []";
        if self.skills.is_empty() {
            return serde_json::to_vec_pretty(self);
        }
        let rendered: Vec<Vec<u8>> = self
            .skills
            .par_iter()
            .map(|skill| {
                let text = serde_json::to_vec_pretty(skill)?;
                let mut indented = Vec::with_capacity(text.len() + text.len() / 8);
                // Pretty JSON has no line break inside a string, so each line is indented whole.
                for (index, line) in text.split(|byte| *byte == b'\n').enumerate() {
                    if index > 0 {
                        indented.push(b'\n');
                    }
                    indented.extend_from_slice(SKILL_INDENT);
                    indented.extend_from_slice(line);
                }
                Ok(indented)
            })
            .collect::<serde_json::Result<_>>()?;
        let outline = serde_json::to_vec_pretty(&ValidationReport {
            skills: Vec::new(),
            diagnostics: self.diagnostics.clone(),
            ..*self
        })?;
        let Some(at) = outline
            .windows(EMPTY_SKILLS.len())
            .position(|window| window == EMPTY_SKILLS)
        else {
            return serde_json::to_vec_pretty(self);
        };
        let skills_bytes: usize = rendered.iter().map(|skill| skill.len() + 2).sum();
        let mut text = Vec::with_capacity(outline.len() + skills_bytes + 16);
        text.extend_from_slice(&outline[..at]);
        text.extend_from_slice(b"\n  \"skills\": [\n");
        for (index, skill) in rendered.iter().enumerate() {
            if index > 0 {
                text.extend_from_slice(b",\n");
            }
            text.extend_from_slice(skill);
        }
        text.extend_from_slice(b"\n  ]");
        text.extend_from_slice(&outline[at + EMPTY_SKILLS.len()..]);
        Ok(text)
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

    use std::path::PathBuf;

    use super::{SkillReport, ValidationReport, is_plain_path, plain_path_key};
    use crate::diagnostic::{Diagnostic, DiagnosticCode};

    fn report(skills: usize, catalog_diagnostics: bool) -> ValidationReport {
        let diagnostic = |index: usize| {
            Diagnostic::error(
                DiagnosticCode::NameTooLong,
                format!("name `a\"b\\c` ünïcode {index}\ttab"),
            )
            .in_file(format!("skills/s{index}/SKILL.md"))
            .at(Some(crate::diagnostic::TextPosition { line: 2, column: 7 }))
            .for_field("name")
            .with_hint("shorten it")
        };
        let skills: Vec<SkillReport> = (0..skills)
            .map(|index| SkillReport {
                path: PathBuf::from(format!("skills/ü{index}")),
                name: (index % 2 == 0).then(|| format!("s{index}")),
                version: (index % 3 == 0).then(|| "1.10".to_owned()),
                valid: index % 2 == 1,
                diagnostics: (0..index % 3).map(diagnostic).collect(),
            })
            .collect();
        ValidationReport {
            valid: false,
            checked: skills.len(),
            invalid: 1,
            warnings: 2,
            skills,
            diagnostics: if catalog_diagnostics {
                vec![diagnostic(9), diagnostic(10)]
            } else {
                Vec::new()
            },
        }
    }

    #[test]
    fn pretty_json_on_all_cores_is_serde_jsons_byte_for_byte() {
        for (skills, catalog_diagnostics) in
            [(0, false), (0, true), (1, false), (7, true), (7, false)]
        {
            let report = report(skills, catalog_diagnostics);
            assert_eq!(
                String::from_utf8(report.to_json_pretty().unwrap()).unwrap(),
                serde_json::to_string_pretty(&report).unwrap(),
                "{skills} skills, catalog diagnostics: {catalog_diagnostics}"
            );
        }
    }

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
