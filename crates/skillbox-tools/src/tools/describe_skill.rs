//! `describe_skill` (Skills Protocol): a skill's manifest and frontmatter; with `detail:
//! "full"`, also its `SKILL.md` and the listing of its files (read from disk, on the blocking
//! pool).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use skillbox_core::{Skill, SkillKind};

use super::skill_name::{SkillName, SkillParameter};
use crate::outcome::ToolOutcome;
use crate::provider::{DEFAULT_MAX_FILE_BYTES, SkillsProvider};
use crate::registry::{
    Annotations, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles, RunsCode, Tool,
    ToolFacts,
};
use skillbox_services::word_parameter;

/// `describe_skill`.
#[derive(Debug, Clone, Copy)]
pub struct DescribeSkill;

word_parameter! {
    /// How much of a skill `describe_skill` gives.
    pub enum DescribeDetail {
        /// The manifest only.
        Manifest => "manifest",
        /// The manifest and the frontmatter.
        Summary => "summary",
        /// Also `SKILL.md` and the files.
        Full => "full",
    }
}

/// Its parameters.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DescribeSkillParams {
    /// The skill, as `name` (or `skill`).
    #[serde(flatten)]
    name: SkillName<DescribedName>,
    /// Skill version (omit for latest)
    #[serde(default)]
    version: Option<String>,
    /// Level of detail to return
    #[serde(default)]
    #[schemars(extend("default" = "summary"))]
    detail: Option<DescribeDetail>,
}

/// `describe_skill`'s `name`: the protocol's, or `skill`.
#[derive(Debug)]
pub struct DescribedName;

impl SkillParameter for DescribedName {
    const PROPERTY: &'static str = "name";
    const DESCRIPTION: &'static str = "Skill name (e.g., 'salesforce.leads.sync')";
    const NAMES: &'static [&'static str] = &["name", "skill"];
}

/// `{skill: …}`: the skill at the detail asked for.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DescribeSkillResult {
    /// The skill.
    skill: SkillDescription,
}

/// The `describe_skill` view of a skill at a detail level.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SkillDescription {
    /// Its name.
    name: String,
    /// Its version, when it has one.
    version: Option<String>,
    /// Its namespace.
    namespace: String,
    /// `action` (it runs) or `instruction` (it informs).
    #[schemars(schema_with = "skill_kinds")]
    kind: SkillKind,
    /// Its `skill.toml` as JSON; for a skill without one, its name, version, description and
    /// kind.
    manifest: Value,
    /// Its `SKILL.md` frontmatter (from `summary` on).
    #[serde(skip_serializing_if = "Option::is_none")]
    frontmatter: Option<Map<String, Value>>,
    /// Its `SKILL.md` (`full`).
    #[serde(skip_serializing_if = "Option::is_none")]
    skill_md: Option<String>,
    /// Its files (`full`).
    #[serde(skip_serializing_if = "Option::is_none")]
    resources: Option<Vec<SkillFile>>,
}

/// The manifest a skill without `skill.toml` is described by.
#[derive(Debug, Serialize)]
struct ImpliedManifest<'a> {
    name: &'a str,
    version: Option<String>,
    description: &'a str,
    kind: SkillKind,
}

/// A file of the skill.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SkillFile {
    /// Its path inside the skill folder.
    path: String,
    /// Its size in bytes.
    size_bytes: u64,
}

/// The schema of a [`SkillKind`].
pub(crate) fn skill_kinds(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": ["action", "instruction"] })
}

impl Tool for DescribeSkill {
    const NAME: &'static str = "describe_skill";
    const DESCRIPTION: &'static str = "Retrieve a skill's manifest and documentation frontmatter.";
    const FACTS: ToolFacts = ToolFacts {
        profiles: Profiles::PROTOCOL,
        runs_code: RunsCode::Never,
        reads_files: ReadsFiles::PerCall,
        mutating: false,
        loads_skills: false,
        needs_services: false,
        params_size: ParamsSize::Small,
        annotations: Annotations::READ_ONLY,
    };
    type Params<'a> = DescribeSkillParams;
    type Result = DescribeSkillResult;

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: DescribeSkillParams,
    ) -> PrepareFuture<'a> {
        Box::pin(std::future::ready(prepare(provider, params)))
    }
}

fn prepare<'a>(
    provider: &Arc<SkillsProvider>,
    params: DescribeSkillParams,
) -> Result<Prepared<'a>, ToolOutcome> {
    let name = params.name.as_str();
    let detail = params.detail.unwrap_or(DescribeDetail::Summary);
    if detail == DescribeDetail::Full {
        let skill = super::model_skill(provider, name, params.version.as_deref())?;
        return Ok(Prepared::reads_files(
            "reading the skill's files",
            move || {
                ToolOutcome::answer(&DescribeSkillResult {
                    skill: describe(&skill, detail),
                })
            },
        ));
    }
    // Below `full`, the answer depends on the snapshot alone: rendered once. The key is the
    // call's params as Rust shows them (every string quoted and escaped, so none run together).
    let key = format!(
        "{:?}",
        (DescribeSkill::NAME, name, &params.version, detail.as_str())
    );
    let outcome = provider.snapshot_answer(key, || {
        let skill = super::model_skill(provider, name, params.version.as_deref())?;
        Ok(DescribeSkillResult {
            skill: describe(&skill, detail),
        })
    });
    Ok(Prepared::answered(outcome))
}

/// The `describe_skill` view of a skill at a detail level.
#[must_use]
pub fn describe(skill: &Skill, detail: DescribeDetail) -> SkillDescription {
    let manifest = match &skill.manifest {
        Some(manifest) => manifest.raw.clone(),
        None => serde_json::to_value(ImpliedManifest {
            name: skill.name(),
            version: skill.version_label(),
            description: &skill.description,
            kind: skill.kind(),
        })
        .unwrap_or_default(),
    };
    let mut view = SkillDescription {
        name: skill.name().to_owned(),
        version: skill.version_label(),
        namespace: skill.namespace().to_owned(),
        kind: skill.kind(),
        manifest,
        frontmatter: None,
        skill_md: None,
        resources: None,
    };
    if detail == DescribeDetail::Manifest {
        return view;
    }
    view.frontmatter = Some(
        skill
            .properties
            .raw()
            .iter()
            .map(|(field, value)| (field.clone(), value.clone()))
            .collect(),
    );
    if detail == DescribeDetail::Full {
        view.skill_md = skill
            .read_text_file(&skill.skill_md_name, DEFAULT_MAX_FILE_BYTES * 4)
            .ok()
            .map(|(text, _)| text);
        let (resources, _) = skill.resources();
        view.resources = Some(
            resources
                .iter()
                .map(|resource| SkillFile {
                    path: resource.path.clone(),
                    size_bytes: resource.size_bytes,
                })
                .collect(),
        );
    }
    view
}
