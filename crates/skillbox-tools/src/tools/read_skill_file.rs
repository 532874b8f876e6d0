//! `read_skill_file`: a file of a skill's folder, in both profiles. The skills profile names
//! the skill `skill` (seed 004's `loadSkillFile`); the Skills Protocol names it `name` and may
//! give a `version` (seed 001). Both accept either spelling, so a call answers the same
//! whichever profile's schema the caller read.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

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
    /// Name of the skill
    #[serde(default)]
    skill: Option<String>,
    /// Path of the file inside the skill folder (e.g. "references/guide.md")
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    version: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    skill_name: Option<String>,
    #[serde(default, rename = "skillName")]
    #[schemars(skip)]
    skill_name_camel: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    name: Option<String>,
}

impl ReadSkillFileParams {
    /// The skill named, by any of the names models use for it.
    fn skill(&self) -> Option<&str> {
        super::first_skill_name([
            self.skill.as_deref(),
            self.skill_name.as_deref(),
            self.skill_name_camel.as_deref(),
            self.name.as_deref(),
        ])
    }
}

impl Tool for ReadSkillFile {
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str =
        "Read a file from a skill's folder (a reference, template or example the skill lists).";
    const FACTS: ToolFacts = FACTS;
    type Params<'a> = ReadSkillFileParams;

    fn specialise(&self, _provider: &SkillsProvider, _skills: Option<&[&str]>, schema: &mut Value) {
        schema["required"] = json!(["skill", "path"]);
    }

    fn intent(&self, _provider: &SkillsProvider, params: &ReadSkillFileParams) -> CallIntent {
        CallIntent {
            skill: params.skill().map(str::to_owned),
            effect: None,
        }
    }

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: ReadSkillFileParams,
    ) -> PrepareFuture<'a> {
        let skill = params.skill().map(str::to_owned);
        Box::pin(std::future::ready(prepare(
            provider,
            Wording::Skills,
            skill,
            params.version,
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
    /// Skill name
    #[serde(default)]
    name: Option<String>,
    /// Skill version (omit for latest)
    #[serde(default)]
    version: Option<String>,
    /// Path to file within skill directory (e.g., 'SKILL.md')
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    skill: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    skill_name: Option<String>,
    #[serde(default, rename = "skillName")]
    #[schemars(skip)]
    skill_name_camel: Option<String>,
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

    fn specialise(&self, _provider: &SkillsProvider, _skills: Option<&[&str]>, schema: &mut Value) {
        schema["required"] = json!(["name", "path"]);
    }

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: ProtocolReadSkillFileParams,
    ) -> PrepareFuture<'a> {
        let skill = super::first_skill_name([
            params.skill.as_deref(),
            params.skill_name.as_deref(),
            params.skill_name_camel.as_deref(),
            params.name.as_deref(),
        ])
        .map(str::to_owned);
        Box::pin(std::future::ready(prepare(
            provider,
            Wording::Protocol,
            skill,
            params.version,
            params.path,
        )))
    }
}

/// Whose names a missing parameter is told in: the skills profile's (`skill`) or the
/// protocol's (`name`).
#[derive(Debug, Clone, Copy)]
enum Wording {
    Skills,
    Protocol,
}

fn prepare<'a>(
    provider: &Arc<SkillsProvider>,
    wording: Wording,
    skill: Option<String>,
    version: Option<String>,
    path: Option<String>,
) -> Result<Prepared<'a>, ToolOutcome> {
    let skill = match (wording, skill) {
        (Wording::Protocol, None) => {
            return Err(ToolOutcome::invalid_params(
                "missing required parameter `name`",
            ));
        }
        (_, skill) => super::named_skill(provider, NAME, skill.as_deref(), version.as_deref())?,
    };
    let Some(path) = path else {
        return Err(ToolOutcome::invalid_params(match wording {
            Wording::Skills => {
                "`read_skill_file` needs the parameter `path` (a file inside the skill folder)"
            }
            Wording::Protocol => "missing required parameter `path`",
        }));
    };
    let max = provider.options().max_file_bytes;
    Ok(Prepared::reads_files(
        "reading the file",
        move || match skill.read_text_file(&path, max) {
            Ok((mut text, truncated)) => {
                if truncated {
                    text.push_str(&format!("\n\n[file cut at {max} bytes]"));
                }
                ToolOutcome::ok(json!({ "name": skill.name(), "path": path, "content": text }))
            }
            Err(skillbox_core::CatalogError::NotText { .. }) => {
                let size = skill
                    .resources()
                    .0
                    .iter()
                    .find(|resource| resource.path == path)
                    .map(|resource| resource.size_bytes);
                ToolOutcome::ok(json!({
                    "name": skill.name(),
                    "path": path,
                    "binary": true,
                    "size_bytes": size,
                    "type": crate::provider::media_type(&path),
                    "note": "binary file: its bytes are not shown",
                }))
            }
            Err(error) => ToolOutcome::invalid_params(format!(
                "cannot read `{path}` in skill `{}`: {error}",
                skill.name()
            )),
        },
    ))
}
