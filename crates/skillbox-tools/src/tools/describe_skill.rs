//! `describe_skill` (Skills Protocol): a skill's manifest and frontmatter; with `detail:
//! "full"`, also its `SKILL.md` and the listing of its files (read from disk, on the blocking
//! pool).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skillbox_core::Skill;

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
    /// Skill name (e.g., 'salesforce.leads.sync')
    #[serde(default)]
    name: Option<String>,
    /// Skill version (omit for latest)
    #[serde(default)]
    version: Option<String>,
    /// Level of detail to return
    #[serde(default)]
    #[schemars(extend("default" = "summary"))]
    detail: Option<DescribeDetail>,
    #[serde(default)]
    #[schemars(skip)]
    skill: Option<String>,
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

    fn specialise(&self, _provider: &SkillsProvider, _skills: Option<&[&str]>, schema: &mut Value) {
        schema["required"] = json!(["name"]);
    }

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
    let name =
        super::first_skill_name([params.name.as_deref(), params.skill.as_deref(), None, None])
            .ok_or_else(|| ToolOutcome::invalid_params("missing required parameter `name`"))?;
    let detail = params.detail.unwrap_or(DescribeDetail::Summary);
    if detail == DescribeDetail::Full {
        let skill = super::model_skill(provider, name, params.version.as_deref())?;
        return Ok(Prepared::reads_files(
            "reading the skill's files",
            move || ToolOutcome::ok(json!({ "skill": describe(&skill, detail) })),
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
        Ok(json!({ "skill": describe(&skill, detail) }))
    });
    Ok(Prepared::answered(outcome))
}

/// The `describe_skill` view of a skill at a detail level.
#[must_use]
pub fn describe(skill: &Skill, detail: DescribeDetail) -> Value {
    let manifest = match &skill.manifest {
        Some(manifest) => manifest.raw.clone(),
        None => json!({
            "name": skill.name(),
            "version": skill.version_label(),
            "description": skill.description,
            "kind": skill.kind(),
        }),
    };
    let mut view = json!({
        "name": skill.name(),
        "version": skill.version_label(),
        "namespace": skill.namespace(),
        "kind": skill.kind(),
        "manifest": manifest,
    });
    if detail == DescribeDetail::Manifest {
        return view;
    }
    view["frontmatter"] = json!(skill.properties.raw());
    if detail == DescribeDetail::Full {
        if let Ok((text, _)) =
            skill.read_text_file(&skill.skill_md_name, DEFAULT_MAX_FILE_BYTES * 4)
        {
            view["skill_md"] = json!(text);
        }
        let (resources, _) = skill.resources();
        view["resources"] = json!(
            resources
                .iter()
                .map(|r| json!({"path": r.path, "size_bytes": r.size_bytes}))
                .collect::<Vec<_>>()
        );
    }
    view
}
