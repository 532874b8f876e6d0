//! `find_skills {query, limit?}`: the skills a model may see that best match a few words, for
//! the skills a prompt had no room to list. Offered per `--find-skills`; answered always, and
//! on `/rpc` as this server's extension to the Skills Protocol.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skillbox_core::search::{DEFAULT_SEARCH_LIMIT, MAX_QUERY_TERMS, MAX_SEARCH_LIMIT};

use crate::outcome::ToolOutcome;
use crate::params::Bounded;
use crate::provider::SkillsProvider;
use crate::registry::{
    Annotations, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles, RunsCode, Tool,
    ToolFacts,
};

/// `find_skills`.
#[derive(Debug, Clone, Copy)]
pub struct FindSkills;

/// The most skills one search returns, as the parameter's type.
const MAX_LIMIT: u64 = MAX_SEARCH_LIMIT as u64;

/// Its parameters.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FindSkillsParams {
    /// A few words that describe the task, e.g. "convert a PDF to text" or "post a message to Slack"
    #[serde(default)]
    #[schemars(with = "String")]
    query: Option<Value>,
    /// Most skills to return (default 5)
    #[serde(default)]
    limit: Option<Bounded<1, MAX_LIMIT, true>>,
}

impl Tool for FindSkills {
    const NAME: &'static str = "find_skills";
    const DESCRIPTION: &'static str = "Search every available skill, including those not listed in your instructions, for the ones that fit a task. Returns the best matches with their descriptions; then call load_skill with the name of the one that fits.";
    const FACTS: ToolFacts = ToolFacts {
        profiles: Profiles {
            skills: true,
            protocol: false,
            rpc_extension: true,
        },
        runs_code: RunsCode::Never,
        reads_files: ReadsFiles::PerCall,
        mutating: false,
        loads_skills: false,
        needs_services: false,
        params_size: ParamsSize::Small,
        annotations: Annotations::READ_ONLY,
    };
    type Params<'a> = FindSkillsParams;

    fn listed(&self, provider: &SkillsProvider) -> bool {
        provider.offers_find_skills()
    }

    fn specialise(&self, _provider: &SkillsProvider, _skills: Option<&[&str]>, schema: &mut Value) {
        schema["required"] = json!(["query"]);
    }

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: FindSkillsParams,
    ) -> PrepareFuture<'a> {
        Box::pin(std::future::ready(prepare(provider, params)))
    }
}

fn prepare<'a>(
    provider: &Arc<SkillsProvider>,
    params: FindSkillsParams,
) -> Result<Prepared<'a>, ToolOutcome> {
    let query = match params.query {
        Some(Value::String(query)) => query,
        None | Some(Value::Null) => {
            return Err(ToolOutcome::invalid_params(
                "missing required parameter `query`: a few words that describe the task",
            ));
        }
        Some(_) => {
            return Err(ToolOutcome::invalid_params(
                "parameter `query` must be a string",
            ));
        }
    };
    let limit = params.limit.map_or(DEFAULT_SEARCH_LIMIT, Bounded::count);
    if provider.catalog().has_search_index() {
        return Ok(Prepared::answered(search(provider, &query, limit)));
    }
    // The first search builds the index (tens of milliseconds per thousand skills).
    let provider = Arc::clone(provider);
    Ok(Prepared::reads_files(
        "the search index was built",
        move || search(&provider, &query, limit),
    ))
}

fn search(provider: &SkillsProvider, query: &str, limit: usize) -> ToolOutcome {
    let results = match provider
        .catalog()
        .search_index()
        .search(query, limit, |skill| skill.visible_to_model())
    {
        Ok(results) => results,
        Err(error) => return ToolOutcome::invalid_params(format!("parameter `query`: {error}")),
    };
    let skills: Vec<Value> = results
        .hits
        .iter()
        .map(|hit| {
            json!({
                "name": hit.skill.name(),
                "description": hit.skill.description,
                "score": hit.shown_score(),
            })
        })
        .collect();
    let hint = if skills.is_empty() {
        "No skill matches these words. Try other words for the task (what it is about, the kind of file or service), or call load_skill with {\"list_skills\": true} to list every skill."
    } else {
        "Call load_skill with the name of the skill that fits the task to read its instructions before using it."
    };
    let mut answer = json!({
        "skills": skills,
        "matched": results.matched,
        "hint": hint,
    });
    if results.ignored_terms > 0 {
        answer["ignored_words"] = json!(results.ignored_terms);
        answer["note"] = json!(format!(
            "only the first {MAX_QUERY_TERMS} distinct words of the query were searched"
        ));
    }
    ToolOutcome::ok(answer)
}
