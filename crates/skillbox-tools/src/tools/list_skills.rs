//! `list_skills` (Skills Protocol): the skills a model may see, sorted by name, a page at a
//! time, optionally within one namespace. A cursor holds the last name of its page, so a
//! reload between two pages neither repeats nor skips a skill that stayed.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use skillbox_core::SkillKind;

use crate::outcome::ToolOutcome;
use crate::params::Bounded;
use crate::provider::SkillsProvider;
use crate::registry::{
    Annotations, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles, RunsCode, Tool,
    ToolFacts,
};
use skillbox_services::word_parameter;

/// Skills per page when the caller names no limit.
pub const DEFAULT_PAGE_SIZE: usize = 50;
/// Skills per page at most.
pub const MAX_PAGE_SIZE: u64 = 1000;

/// `list_skills`.
#[derive(Debug, Clone, Copy)]
pub struct ListSkills;

word_parameter! {
    /// How much of each skill `list_skills` gives.
    pub enum ListDetail {
        /// Names and versions.
        Names => "names",
        /// Also the description, namespace and kind.
        Summary => "summary",
    }
}

/// Its parameters.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListSkillsParams {
    /// Optional namespace to filter skills (e.g., 'salesforce')
    #[serde(default)]
    namespace: Option<String>,
    /// Level of detail to return
    #[serde(default)]
    #[schemars(extend("default" = "names"))]
    detail: Option<ListDetail>,
    /// Maximum number of results
    #[serde(default)]
    #[schemars(extend("default" = 50))]
    limit: Option<Bounded<1, MAX_PAGE_SIZE>>,
    /// Pagination cursor from previous response
    #[serde(default)]
    cursor: Option<String>,
}

/// A page of skills, sorted by name.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListSkillsResult {
    /// The skills of this page.
    skills: Vec<ListedSkill>,
    /// The cursor of the next page, or `null` on the last.
    next_cursor: Option<String>,
}

/// A skill of the page.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListedSkill {
    /// Its name.
    name: String,
    /// Its version, when it has one.
    version: Option<String>,
    /// What it does and when to use it (`detail: "summary"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    /// Its namespace (`detail: "summary"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<String>,
    /// `action` (it runs) or `instruction` (it informs) (`detail: "summary"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::describe_skill::skill_kinds")]
    kind: Option<SkillKind>,
}

impl Tool for ListSkills {
    const NAME: &'static str = "list_skills";
    const DESCRIPTION: &'static str = "Enumerate available skills, optionally filtering by namespace. Results are deterministically sorted.";
    const FACTS: ToolFacts = ToolFacts {
        profiles: Profiles::PROTOCOL,
        runs_code: RunsCode::Never,
        reads_files: ReadsFiles::Never,
        mutating: false,
        loads_skills: false,
        needs_services: false,
        params_size: ParamsSize::Small,
        annotations: Annotations::READ_ONLY,
    };
    type Params<'a> = ListSkillsParams;
    type Result = ListSkillsResult;

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: ListSkillsParams,
    ) -> PrepareFuture<'a> {
        // The params as Rust shows them: every string quoted and escaped, so none run together.
        let key = format!(
            "{:?}",
            (
                Self::NAME,
                &params.namespace,
                params.detail.map(ListDetail::as_str),
                params.limit.map(Bounded::get),
                &params.cursor,
            )
        );
        let outcome = provider.snapshot_answer(key, || page(provider, &params));
        Box::pin(std::future::ready(Ok(Prepared::answered(outcome))))
    }
}

fn page(
    provider: &SkillsProvider,
    params: &ListSkillsParams,
) -> Result<ListSkillsResult, ToolOutcome> {
    let summary = params.detail == Some(ListDetail::Summary);
    let limit = params.limit.map_or(DEFAULT_PAGE_SIZE, Bounded::count);
    let after = match params.cursor.as_deref() {
        None => None,
        Some(cursor) => Some(decode_cursor(cursor).ok_or_else(|| {
            ToolOutcome::invalid_params(
                "parameter `cursor` is not a cursor this server issued; start again without it",
            )
        })?),
    };
    let namespace = params.namespace.as_deref();
    let mut page: Vec<ListedSkill> = Vec::new();
    let mut next_cursor = None;
    for skill in provider.catalog().latest_visible_to_model() {
        let skill_namespace = skill.namespace();
        if namespace.is_some_and(|wanted| wanted != skill_namespace) {
            continue;
        }
        if after.as_deref().is_some_and(|after| skill.name() <= after) {
            continue;
        }
        if page.len() == limit {
            next_cursor = page.last().map(|last| encode_cursor(&last.name));
            break;
        }
        page.push(ListedSkill {
            name: skill.name().to_owned(),
            version: skill.version_label(),
            description: summary.then(|| skill.description.clone()),
            namespace: summary.then(|| skill_namespace.to_owned()),
            kind: summary.then(|| skill.kind()),
        });
    }
    Ok(ListSkillsResult {
        skills: page,
        next_cursor,
    })
}

fn encode_cursor(name: &str) -> String {
    format!("c1.{}", hex::encode(name))
}

fn decode_cursor(cursor: &str) -> Option<String> {
    let hex = cursor.strip_prefix("c1.").filter(|hex| !hex.is_empty())?;
    String::from_utf8(hex::decode(hex).ok()?).ok()
}
