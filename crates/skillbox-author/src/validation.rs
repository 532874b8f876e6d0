//! Checking a skill folder before it is packed or published: loaded by the catalog and checked
//! exactly as `skillbox validate FOLDER` checks it (the same load, the same tool-name rules),
//! so what `validate` accepts packs, and what it refuses does not.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skillbox_core::tool_names::ToolOwnership;
use skillbox_core::{
    CatalogOptions, Diagnostic, Skill, SkillCatalog, SkillRoot, ValidationMode, ValidationReport,
};

use crate::error::AuthorError;

/// A skill that loaded without errors, and what it warned about.
#[derive(Debug, Clone)]
pub struct CheckedSkill {
    /// The skill as loaded.
    pub skill: Arc<Skill>,
    /// The skill folder as given.
    pub folder: PathBuf,
    /// Its warnings (and notes); never an error.
    pub warnings: Vec<Diagnostic>,
}

impl CheckedSkill {
    /// The skill's name (its `skill.toml` id for a Skills Protocol skill).
    #[must_use]
    pub fn name(&self) -> &str {
        self.skill.name()
    }
}

/// Load and check the one skill in `folder`; `reserved_tool_names` are the runtime's own tool
/// names, which a skill's tool may not take (`skillbox validate` warns about them).
///
/// # Errors
/// [`AuthorError::InvalidSkill`] with every diagnostic when the skill has errors,
/// [`AuthorError::NotAFolder`] when `folder` is not a folder, [`AuthorError::NotOneSkill`] when
/// it holds no skill of its own (a folder of skills, say).
pub fn check_skill_folder(
    folder: &Path,
    reserved_tool_names: &[&str],
) -> Result<CheckedSkill, AuthorError> {
    match fs_err::metadata(folder) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => {
            return Err(AuthorError::NotAFolder {
                path: folder.to_path_buf(),
                problem: "is not a folder".to_owned(),
                hint: "name the skill folder, the one holding `SKILL.md`",
            });
        }
        Err(_) => {
            return Err(AuthorError::NotAFolder {
                path: folder.to_path_buf(),
                problem: "does not exist".to_owned(),
                hint: "name the skill folder, the one holding `SKILL.md`",
            });
        }
    }
    let catalog = SkillCatalog::load(&CatalogOptions {
        roots: vec![SkillRoot::explicit(folder)],
        mode: ValidationMode::Lenient,
        ..CatalogOptions::default()
    })
    .map_err(|error| AuthorError::NotOneSkill {
        path: folder.to_path_buf(),
        problem: format!("cannot be read as a skill: {error}"),
        hint: "name the skill folder, the one holding `SKILL.md`",
    })?;
    let mut report = ValidationReport::from_catalog(&catalog);
    ToolOwnership::for_model(&catalog, reserved_tool_names).add_to_report(&mut report);
    let own = |path: &Path| path == folder;
    let skill = catalog
        .skills()
        .iter()
        .chain(catalog.shadowed())
        .find(|skill| own(&skill.directory))
        .cloned();
    let mut diagnostics: Vec<Diagnostic> = report
        .skills
        .iter()
        .filter(|entry| own(&entry.path))
        .flat_map(|entry| entry.diagnostics.iter().cloned())
        .chain(report.diagnostics.iter().cloned())
        .collect();
    let Some(skill) = skill else {
        if !diagnostics.is_empty() {
            return Err(AuthorError::InvalidSkill {
                path: folder.to_path_buf(),
                diagnostics,
            });
        }
        let found = report.skills.len();
        return Err(AuthorError::NotOneSkill {
            path: folder.to_path_buf(),
            problem: if found == 0 {
                "holds no `SKILL.md`".to_owned()
            } else {
                format!("holds no `SKILL.md` of its own but {found} skill folder(s)")
            },
            hint: "name one skill folder (the one holding `SKILL.md`), or publish a folder of skills with `skillbox pack --index`",
        });
    };
    diagnostics.sort_by_key(|diagnostic| std::cmp::Reverse(diagnostic.severity));
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(AuthorError::InvalidSkill {
            path: folder.to_path_buf(),
            diagnostics,
        });
    }
    Ok(CheckedSkill {
        skill,
        folder: folder.to_path_buf(),
        warnings: diagnostics,
    })
}
