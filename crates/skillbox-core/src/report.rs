//! A validation report over a whole catalog: one entry per skill folder or archive examined,
//! valid or not, with its diagnostics. `skillbox validate` prints it; tests and CI read it as
//! JSON.

use std::path::PathBuf;

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
        skills.sort_by(|a, b| a.path.cmp(&b.path));
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

fn sorted(mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diagnostics.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.line.cmp(&b.line)));
    diagnostics
}
