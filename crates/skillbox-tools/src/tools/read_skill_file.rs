//! `read_skill_file`: a file of a skill's folder, in both profiles. The skills profile names
//! the skill `skill` (seed 004's `loadSkillFile`); the Skills Protocol names it `name` and may
//! give a `version` (seed 001). Both accept either spelling, so a call answers the same
//! whichever profile's schema the caller read.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::skill_name::{SkillName, SkillParameter};
use crate::effect::CallIntent;
use crate::outcome::ToolOutcome;
use crate::provider::SkillsProvider;
use crate::registry::{
    Annotations, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles, RunsCode, Tool,
    ToolFacts,
};

const NAME: &str = "read_skill_file";

const FACTS: ToolFacts = ToolFacts {
    profiles: Profiles::SKILLS,
    runs_code: RunsCode::Never,
    reads_files: ReadsFiles::Always,
    mutating: false,
    loads_skills: false,
    needs_services: false,
    params_size: ParamsSize::Small,
    annotations: Annotations::READ_ONLY,
};

/// `read_skill_file` as the skills profile offers it.
#[derive(Debug, Clone, Copy)]
pub struct ReadSkillFile;

/// Its parameters in the skills profile.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadSkillFileParams {
    /// The skill, by any name models give it.
    #[serde(flatten)]
    skill: SkillName<SkillsProfileName>,
    /// Path of the file inside the skill folder (e.g. "references/guide.md")
    path: String,
    #[serde(default)]
    #[schemars(skip)]
    version: Option<String>,
}

/// The skills profile's `skill`.
#[derive(Debug)]
pub struct SkillsProfileName;

impl SkillParameter for SkillsProfileName {
    const PROPERTY: &'static str = "skill";
    const DESCRIPTION: &'static str = "Name of the skill";
}

/// A file of a skill: its text, or for a binary file what it is.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadSkillFileResult {
    /// The skill's name.
    name: String,
    /// The file's path inside the skill folder, as asked.
    path: String,
    /// The text, or what the file is when it is not text.
    #[serde(flatten)]
    file: SkillFileContent,
}

/// What a read of a skill's file returns.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum SkillFileContent {
    /// A text file.
    Text {
        /// Its text; a file over the size limit is cut, with a note at the end saying where.
        content: String,
    },
    /// A binary file: its bytes are not shown.
    Binary {
        /// Always `true`.
        binary: bool,
        /// Its size in bytes, when the skill's listing has it.
        size_bytes: Option<u64>,
        /// Its media type, by its name.
        #[serde(rename = "type")]
        media_type: &'static str,
        /// Says that its bytes are not shown.
        note: &'static str,
    },
}

impl Tool for ReadSkillFile {
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str =
        "Read a file from a skill's folder (a reference, template or example the skill lists).";
    const FACTS: ToolFacts = FACTS;
    type Params<'a> = ReadSkillFileParams;
    type Result = ReadSkillFileResult;

    fn intent(&self, _provider: &SkillsProvider, params: &ReadSkillFileParams) -> CallIntent {
        CallIntent {
            skill: Some(params.skill.as_str().to_owned()),
            effect: None,
        }
    }

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: ReadSkillFileParams,
    ) -> PrepareFuture<'a> {
        Box::pin(std::future::ready(prepare(
            provider,
            params.skill.as_str(),
            params.version.as_deref(),
            params.path,
        )))
    }
}

/// `read_skill_file` as the Skills Protocol defines it.
#[derive(Debug, Clone, Copy)]
pub struct ProtocolReadSkillFile;

/// Its parameters in the Skills Protocol.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ProtocolReadSkillFileParams {
    /// The skill, by any name models give it.
    #[serde(flatten)]
    name: SkillName<ProtocolName>,
    /// Skill version (omit for latest)
    #[serde(default)]
    version: Option<String>,
    /// Path to file within skill directory (e.g., 'SKILL.md')
    path: String,
}

/// The Skills Protocol's `name`.
#[derive(Debug)]
pub struct ProtocolName;

impl SkillParameter for ProtocolName {
    const PROPERTY: &'static str = "name";
    const DESCRIPTION: &'static str = "Skill name";
}

impl Tool for ProtocolReadSkillFile {
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str =
        "Read any file in a skill's directory (e.g., SKILL.md, extra docs, schemas).";
    const FACTS: ToolFacts = ToolFacts {
        profiles: Profiles::PROTOCOL,
        ..FACTS
    };
    type Params<'a> = ProtocolReadSkillFileParams;
    type Result = ReadSkillFileResult;

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: ProtocolReadSkillFileParams,
    ) -> PrepareFuture<'a> {
        Box::pin(std::future::ready(prepare(
            provider,
            params.name.as_str(),
            params.version.as_deref(),
            params.path,
        )))
    }
}

fn prepare<'a>(
    provider: &Arc<SkillsProvider>,
    skill: &str,
    version: Option<&str>,
    path: String,
) -> Result<Prepared<'a>, ToolOutcome> {
    let skill = super::model_skill(provider, skill, version)?;
    let max = provider.options().max_file_bytes;
    Ok(Prepared::reads_files(
        "reading the file",
        move || match skill.read_text_file(&path, max) {
            Ok((mut text, truncated)) => {
                if truncated {
                    text.push_str(&format!("\n\n[file cut at {max} bytes]"));
                }
                ToolOutcome::answer(&ReadSkillFileResult {
                    name: skill.name().to_owned(),
                    path,
                    file: SkillFileContent::Text { content: text },
                })
            }
            Err(skillbox_core::CatalogError::NotText { .. }) => {
                let size_bytes = skill
                    .resources()
                    .0
                    .iter()
                    .find(|resource| resource.path == path)
                    .map(|resource| resource.size_bytes);
                let media_type = crate::provider::media_type(&path);
                ToolOutcome::answer(&ReadSkillFileResult {
                    name: skill.name().to_owned(),
                    path,
                    file: SkillFileContent::Binary {
                        binary: true,
                        size_bytes,
                        media_type,
                        note: "binary file: its bytes are not shown",
                    },
                })
            }
            Err(error) => ToolOutcome::invalid_params(format!(
                "cannot read `{path}` in skill `{}`: {error}",
                skill.name()
            )),
        },
    ))
}
