//! Finding the skill a page is about: by name and the `?version=` the skill pages take, a miss
//! answered with the closest name; and the answer for a path that is not one of its files.

use std::sync::Arc;

use serde::Deserialize;
use skillbox_core::Skill;
use skillbox_tools::SkillsProvider;

use crate::WebError;

/// `?version=` on the skill pages.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct VersionQuery {
    pub(super) version: Option<String>,
}

pub(super) fn find_skill(
    provider: &SkillsProvider,
    name: &str,
    version: Option<&str>,
) -> Result<Arc<Skill>, WebError> {
    let version = version.filter(|version| !version.is_empty());
    provider
        .catalog()
        .find(name, version)
        .cloned()
        .map_err(|error| {
            let hint = provider
                .catalog()
                .closest_name(name)
                .map(|closest| format!(" Did you mean `{closest}`?"))
                .unwrap_or_default();
            WebError::NotFound(format!("{error}.{hint}"))
        })
}

pub(super) fn not_a_file(skill: &Skill, path: &str) -> WebError {
    WebError::NotFound(format!(
        "`{path}` is not a file of skill `{}`; its page lists its files",
        skill.name()
    ))
}
