//! `find_skills {query, limit?}`: the skills a model may see that best match a few words, for
//! the skills a prompt had no room to list. Offered per `--find-skills`; answered always, and
//! on `/rpc` as this server's extension to the Skills Protocol.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
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
    query: String,
    /// Most skills to return (default 5)
    #[serde(default)]
    limit: Option<Bounded<1, MAX_LIMIT, true>>,
}

/// The skills that best match the query, best first, and what to do next.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FindSkillsResult {
    /// The best matches, best first.
    skills: Vec<FoundSkill>,
    /// How many skills matched at least one word.
    matched: usize,
    /// What to do next.
    hint: &'static str,
    /// Distinct words of the query past the most searched, when there were any.
    #[serde(skip_serializing_if = "Option::is_none")]
    ignored_words: Option<usize>,
    /// Says that only the first words were searched, when some were not.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

/// A skill that matches the query.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FoundSkill {
    /// Its name, for `load_skill`.
    name: String,
    /// What it does and when to use it.
    description: String,
    /// How well it matches, rounded (higher is better).
    score: f64,
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
    type Result = FindSkillsResult;

    fn listed(&self, provider: &SkillsProvider) -> bool {
        provider.offers_find_skills()
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
    let query = params.query;
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
    let skills: Vec<FoundSkill> = results
        .hits
        .iter()
        .map(|hit| FoundSkill {
            name: hit.skill.name().to_owned(),
            description: hit.skill.description.clone(),
            score: hit.shown_score(),
        })
        .collect();
    let hint = if skills.is_empty() {
        "No skill matches these words. Try other words for the task (what it is about, the kind of file or service), or call load_skill with {\"list_skills\": true} to list every skill."
    } else {
        "Call load_skill with the name of the skill that fits the task to read its instructions before using it."
    };
    let ignored = results.ignored_terms > 0;
    ToolOutcome::answer(&FindSkillsResult {
        skills,
        matched: results.matched,
        hint,
        ignored_words: ignored.then_some(results.ignored_terms),
        note: ignored.then(|| {
            format!("only the first {MAX_QUERY_TERMS} distinct words of the query were searched")
        }),
    })
}
