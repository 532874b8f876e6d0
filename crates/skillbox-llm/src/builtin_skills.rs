//! Skills every runtime ships. Today that is the Skills Protocol guide,
//! [`GUIDE_SKILL_NAME`]: an instruction skill whose SKILL.md body is the text
//! `load_skills_protocol_guide` returns, so it is listed, described and read like any other
//! skill and can never disagree with the tool.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::provider::PROTOCOL_GUIDE;

/// The guide skill's name.
pub const GUIDE_SKILL_NAME: &str = "skills.protocol.guide";
/// The guide skill's version.
pub const GUIDE_SKILL_VERSION: &str = "0.1.0";
/// The guide skill's one-line description.
pub const GUIDE_SKILL_DESCRIPTION: &str = "Intro to the Skills Protocol for LLMs.";

/// The files of the built-in skills: `(path relative to the root, content)`.
#[must_use]
pub fn builtin_skill_files() -> Vec<(String, String)> {
    let manifest = format!(
        "name = \"{GUIDE_SKILL_NAME}\"\nversion = \"{GUIDE_SKILL_VERSION}\"\ndescription = \"{GUIDE_SKILL_DESCRIPTION}\"\nkind = \"instruction\"\n"
    );
    let skill_md = format!(
        "---\nname: {GUIDE_SKILL_NAME}\ndescription: {GUIDE_SKILL_DESCRIPTION}\n---\n\n{PROTOCOL_GUIDE}"
    );
    vec![
        (format!("{GUIDE_SKILL_NAME}/skill.toml"), manifest),
        (format!("{GUIDE_SKILL_NAME}/SKILL.md"), skill_md),
    ]
}

/// Write the built-in skills under `directory` (created if needed; files rewritten only when
/// they differ) and return it, to be used as a skill root. Everything is world-readable, so
/// sandboxed runs may mount the skills.
///
/// # Errors
/// When the folder or a file cannot be written.
pub fn write_builtin_skills(directory: &Path) -> std::io::Result<PathBuf> {
    for (relative, content) in builtin_skill_files() {
        let path = directory.join(&relative);
        let folder = path.parent().unwrap_or(directory);
        fs_err::create_dir_all(folder)?;
        for open in [directory, folder] {
            fs_err::set_permissions(open, std::fs::Permissions::from_mode(0o755))?;
        }
        if fs_err::read_to_string(&path).ok().as_deref() != Some(content.as_str()) {
            let staging = folder.join(format!(".staging-{}", uuid::Uuid::new_v4().simple()));
            fs_err::write(&staging, &content)?;
            fs_err::set_permissions(&staging, std::fs::Permissions::from_mode(0o644))?;
            fs_err::rename(&staging, &path)?;
        }
    }
    Ok(directory.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guide_skill_loads_as_a_valid_instruction_skill_with_the_guide_as_body() {
        let directory = tempfile::tempdir().unwrap();
        let root = write_builtin_skills(directory.path()).unwrap();
        // Writing twice changes nothing.
        write_builtin_skills(directory.path()).unwrap();
        let catalog = skillbox_core::SkillCatalog::load(&skillbox_core::CatalogOptions {
            roots: vec![skillbox_core::SkillRoot::explicit(root)],
            mode: skillbox_core::ValidationMode::Lenient,
            ..skillbox_core::CatalogOptions::default()
        })
        .unwrap();
        let skill = catalog.get(GUIDE_SKILL_NAME).unwrap();
        assert!(!skill.has_errors(), "{:?}", skill.diagnostics);
        assert_eq!(skill.kind(), skillbox_core::SkillKind::Instruction);
        assert_eq!(
            skill
                .id
                .version
                .as_ref()
                .map(ToString::to_string)
                .as_deref(),
            Some(GUIDE_SKILL_VERSION)
        );
        assert_eq!(skill.body().unwrap().text.trim(), PROTOCOL_GUIDE.trim());
    }
}
