//! `SkillsProvider`: the Rust shape of seed 002's `createSkillsProvider`, one catalog snapshot
//! as models and clients see it. It renders the system-prompt section, knows which skills a
//! model may see and which skill owns each tool name, and holds what the tools answer with
//! (the executor, the run and blob services, the tools made with `define_tool`). Calls are
//! answered through the door policy (`door.rs`), whatever door they came through.

use std::sync::Arc;

use serde_json::Value;
use skillbox_core::tool_names::ToolOwnership;
use skillbox_core::{CatalogError, Skill, SkillCatalog, ToolDefinition};
use skillbox_exec::{Executor, SkillCopy};
use skillbox_services::{RunContext, Services};

use crate::prompt::{
    OmittedSkillsHint, PromptFormat, budget_leaves_skills_out, render_prompt_hinting,
};
use crate::registry;
use crate::tools::define_tool::DefinedTools;

mod instructions;
mod options;
mod requirements;
mod snapshot_answers;

pub use requirements::MAX_REQUIRED_SKILLS;

pub use options::{FindSkillsOffer, ProviderOptions};
pub use snapshot_answers::MAX_SNAPSHOT_ANSWER_BYTES;

use snapshot_answers::SnapshotAnswers;

/// Bytes of a file `read_skill_file` returns before cutting it with a note.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 * 1024;
/// Bytes of text `load_skill` returns at most for a skill's instructions (after argument
/// substitution and command preprocessing; the resource listing comes after). A body of many
/// `$0` given a long argument would otherwise multiply it without bound.
pub const MAX_LOADED_SKILL_BYTES: usize = 1024 * 1024;
/// Commands `` !`cmd` `` preprocessing runs at most for one `load_skill`; later ones are not run.
pub const MAX_PREPROCESS_COMMANDS: usize = 16;
/// Bytes of command output preprocessing adds at most for one `load_skill`, all commands
/// together; the rest is cut.
pub const MAX_PREPROCESS_OUTPUT_BYTES: usize = 64 * 1024;
/// The protocol guide, shipped as the built-in instruction skill `skills.protocol.guide`.
pub const PROTOCOL_GUIDE: &str = include_str!("guide.md");

/// Why a provider could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The catalog could not be loaded (missing root, bad filter).
    #[error(transparent)]
    Catalog(#[from] skillbox_core::CatalogError),
    /// The executor could not be set up (sandbox policy unmet, folders unwritable).
    #[error(transparent)]
    Executor(#[from] skillbox_exec::ExecError),
}

/// A skill a model may see was not found ([`SkillsProvider::lookup_model_skill`]): the error,
/// and what may help the caller find the skill it meant. Hidden skills appear in neither list.
#[derive(Debug)]
pub struct SkillLookupMiss<'a> {
    /// [`CatalogError::SkillNotFound`] for the name and version asked.
    pub error: CatalogError,
    /// The copies of that name a model may see, newest first: empty when no visible skill has
    /// the name, so the version asked was the miss otherwise.
    pub versions: Vec<&'a Arc<Skill>>,
    /// The visible name closest to the one asked, when close enough to be a typo.
    pub closest: Option<&'a str>,
}

/// The tool surface over a catalog and an executor. Clones share the catalog, the executor,
/// the services and the defined tools.
#[derive(Clone)]
pub struct SkillsProvider {
    catalog: Arc<SkillCatalog>,
    executor: Arc<Executor>,
    options: ProviderOptions,
    tools: ToolOwnership,
    /// Tools made with `define_tool`, shared by the providers a hot reload builds over new
    /// catalogs ([`SkillsProvider::with_catalog`]), so a reload does not forget them.
    defined: DefinedTools,
    warnings: Vec<String>,
    /// The run and blob services, when given ([`SkillsProvider::with_services`]).
    services: Option<Arc<Services>>,
    /// Skills hidden from models (`disable-model-invocation`) that a person invoked in this
    /// conversation, so the model may load them and run their scripts
    /// ([`SkillsProvider::with_unlocked`]).
    unlocked: Arc<std::collections::BTreeSet<String>>,
    /// Whether the prompt budget leaves skills out, worked out on first use for this catalog.
    budget_leaves_skills_out: Arc<std::sync::OnceLock<bool>>,
    /// Answers rendered once for this snapshot (and this visibility: a provider that unlocks
    /// skills has a store of its own).
    answers: Arc<SnapshotAnswers>,
}

impl std::fmt::Debug for SkillsProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillsProvider")
            .field("skills", &self.catalog.len())
            .finish_non_exhaustive()
    }
}

impl SkillsProvider {
    /// A provider over a catalog (filtered by the caller's include/exclude) and an executor.
    #[must_use]
    pub fn new(
        catalog: Arc<SkillCatalog>,
        executor: Arc<Executor>,
        options: ProviderOptions,
    ) -> Self {
        let provider = SkillsProvider::unlogged(catalog, executor, options);
        for warning in &provider.warnings {
            tracing::warn!("{warning}");
        }
        provider
    }

    /// [`SkillsProvider::new`] without logging its warnings.
    fn unlogged(
        catalog: Arc<SkillCatalog>,
        executor: Arc<Executor>,
        options: ProviderOptions,
    ) -> Self {
        let tools = ToolOwnership::for_model(&catalog, &registry::reserved_names());
        let warnings: Vec<String> = tools
            .refusals()
            .iter()
            .map(|refusal| refusal.message())
            .collect();
        SkillsProvider {
            catalog,
            executor,
            options,
            tools,
            defined: Arc::default(),
            warnings,
            services: None,
            unlocked: Arc::default(),
            budget_leaves_skills_out: Arc::default(),
            answers: Arc::default(),
        }
    }

    /// A provider over another catalog (a reload of the same roots) with this one's executor,
    /// options, services and defined tools.
    #[must_use]
    pub fn with_catalog(&self, catalog: Arc<SkillCatalog>) -> Self {
        let mut provider =
            SkillsProvider::unlogged(catalog, Arc::clone(&self.executor), self.options.clone());
        // A reload logs only what it newly refuses, not every warning again.
        for warning in &provider.warnings {
            if !self.warnings.contains(warning) {
                tracing::warn!("{warning}");
            }
        }
        provider.defined = Arc::clone(&self.defined);
        provider.services = self.services.clone();
        provider.unlocked = Arc::clone(&self.unlocked);
        provider
    }

    /// This provider answering the run and blob tools with `services`: the same catalog,
    /// executor and options, sharing its defined tools.
    #[must_use]
    pub fn with_services(&self, services: Arc<Services>) -> SkillsProvider {
        SkillsProvider {
            services: Some(services),
            ..self.clone()
        }
    }

    /// This provider, answering calls about the skills `unlocked` names as if they were
    /// visible to models: a person invoked them (`/name`), so the model may load them and run
    /// their scripts even when `disable-model-invocation` hides them. Names that are not safe
    /// to show stay hidden.
    #[must_use]
    pub fn with_unlocked(&self, unlocked: std::collections::BTreeSet<String>) -> Self {
        let mut provider = self.clone();
        provider.unlocked = Arc::new(unlocked);
        provider.answers = Arc::default();
        provider
    }

    /// Build everything from configuration, in the shape of seed 002's
    /// `createSkillsProvider(dir, {include, exclude, timeout, maxOutput, cwd})`: the catalog
    /// options carry the roots and include/exclude filters, the executor configuration the
    /// script timeout, output cap, working directory and sandbox policy, and the provider options
    /// the prompt budget and the opt-in features.
    ///
    /// # Errors
    /// When an explicit root is missing, a filter is not a valid glob, or the sandbox policy
    /// cannot be met on this host.
    pub fn from_config(
        catalog: &skillbox_core::CatalogOptions,
        executor: skillbox_exec::ExecutorConfig,
        options: ProviderOptions,
    ) -> Result<Self, ProviderError> {
        let catalog = SkillCatalog::load(catalog)?;
        let executor = Executor::new(executor)?;
        Ok(SkillsProvider::new(
            Arc::new(catalog),
            Arc::new(executor),
            options,
        ))
    }

    /// The same provider with `!`command`` preprocessing off: for showing what `load_skill`
    /// returns without running anything (a web page shows a skill's text on every visit).
    #[must_use]
    pub fn without_commands(&self) -> Self {
        let mut provider = self.clone();
        provider.options.preprocess_commands = false;
        provider
    }

    /// Whether loading a skill runs the `!`command`` lines of its body.
    #[must_use]
    pub fn runs_commands_on_load(&self) -> bool {
        self.options.preprocess_commands
    }

    /// The options the provider was built with.
    #[must_use]
    pub fn options(&self) -> &ProviderOptions {
        &self.options
    }

    /// The executor that runs the skills' code.
    #[must_use]
    pub fn executor(&self) -> &Arc<Executor> {
        &self.executor
    }

    /// The catalog the provider serves.
    #[must_use]
    pub fn catalog(&self) -> &Arc<SkillCatalog> {
        &self.catalog
    }

    /// The run and blob services, when the provider has them.
    #[must_use]
    pub fn services(&self) -> Option<&Arc<Services>> {
        self.services.as_ref()
    }

    /// Warnings found while building the provider: `tools.json` tools that are not offered
    /// because a built-in or another skill owns their name ([`ToolOwnership`]).
    #[must_use]
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The copy in effect of every skill a model may see ([`Skill::visible_to_model`]), sorted
    /// by name.
    #[must_use]
    pub fn model_skills(&self) -> Vec<Arc<Skill>> {
        self.catalog.latest_visible_to_model().cloned().collect()
    }

    /// The copies a model may see that another copy of their name shadows in the same root,
    /// each reached by its path in the root (`openai/skill-creator`; see
    /// [`skillbox_core::SkillCatalog::find_by_path`]): only those that path finds.
    #[must_use]
    pub fn other_model_copies(&self) -> Vec<Arc<Skill>> {
        self.catalog
            .shadowed()
            .iter()
            .filter(|skill| {
                let path = skill.path_in_root();
                skill.visible_to_model()
                    && path.contains('/')
                    && self
                        .catalog
                        .find(&path, None)
                        .is_ok_and(|found| Arc::ptr_eq(found, skill))
            })
            .cloned()
            .collect()
    }

    /// Look up a skill a model may see, by name and optional version text. A skill hidden
    /// from models ([`Skill::visible_to_model`]) is not found, with the same error as a name
    /// the catalog does not hold, so that no answer tells the two apart.
    ///
    /// # Errors
    /// [`CatalogError::SkillNotFound`] when no visible skill has that name and version.
    pub fn find_model_skill(
        &self,
        name: &str,
        version: Option<&str>,
    ) -> Result<Arc<Skill>, CatalogError> {
        match self.catalog.find(name, version) {
            Ok(skill)
                if skill.visible_to_model()
                    || (self.unlocked.contains(skill.name())
                        && skillbox_core::skill::is_safe_skill_name(skill.name())) =>
            {
                Ok(Arc::clone(skill))
            }
            _ => Err(CatalogError::SkillNotFound {
                name: name.to_owned(),
                version: version.map(str::to_owned),
            }),
        }
    }

    /// Look up a skill a model may see, as [`SkillsProvider::find_model_skill`] does, and on a
    /// miss say what could help the caller: the copies of that name a model may see (a wrong
    /// version) and the closest visible name (a typo). Each surface words its own hint.
    ///
    /// # Errors
    /// A [`SkillLookupMiss`] when no visible skill has that name and version.
    pub fn lookup_model_skill<'a>(
        &'a self,
        name: &str,
        version: Option<&str>,
    ) -> Result<Arc<Skill>, SkillLookupMiss<'a>> {
        self.find_model_skill(name, version)
            .map_err(|error| SkillLookupMiss {
                error,
                versions: self
                    .catalog
                    .versions(name)
                    .filter(|skill| skill.visible_to_model())
                    .collect(),
                closest: self.catalog.closest_name_among(
                    name,
                    self.catalog
                        .latest_visible_to_model()
                        .map(|skill| skill.name()),
                ),
            })
    }

    /// The system-prompt section. When the budget leaves skills out, it says how to reach
    /// them: with `find_skills` when that is offered, else by listing them.
    #[must_use]
    pub fn system_prompt(&self, format: PromptFormat) -> String {
        self.system_prompt_for(&self.model_skills(), format)
    }

    /// The system-prompt section listing only `skills` (a sub-agent's share of the catalog),
    /// within the same size budget.
    #[must_use]
    pub fn system_prompt_for(&self, skills: &[Arc<Skill>], format: PromptFormat) -> String {
        let hint = if self.offers_find_skills() {
            OmittedSkillsHint::FindSkills
        } else {
            OmittedSkillsHint::ListSkills
        };
        render_prompt_hinting(skills, format, self.options.prompt_budget, hint)
    }

    /// Whether the skills profile offers `find_skills`: always, never, or (by default) when the
    /// prompt budget leaves some skill a model may see out of the prompt.
    #[must_use]
    pub fn offers_find_skills(&self) -> bool {
        match self.options.find_skills {
            FindSkillsOffer::Always => true,
            FindSkillsOffer::Never => false,
            FindSkillsOffer::Auto => *self.budget_leaves_skills_out.get_or_init(|| {
                budget_leaves_skills_out(&self.model_skills(), self.options.prompt_budget)
            }),
        }
    }

    /// The skill tool answering to `name`: a tool made with `define_tool`, else the
    /// `tools.json` tool that owns the name among the skills a model sees.
    #[must_use]
    pub fn skill_tool(&self, name: &str) -> Option<(Arc<Skill>, ToolDefinition)> {
        self.defined_tool(name)
            .or_else(|| self.owned_skill_tool(name))
    }

    /// Every skill tool offered, in order: the `tools.json` tools by name (those a defined
    /// tool replaces left out), then the defined tools by name.
    #[must_use]
    pub fn skill_tools(&self) -> Vec<(Arc<Skill>, ToolDefinition)> {
        let defined = self
            .defined
            .read()
            .map(|defined| defined.clone())
            .unwrap_or_default();
        let mut tools: Vec<(Arc<Skill>, ToolDefinition)> = self
            .tools
            .owned()
            .filter(|(_, tool)| !defined.contains_key(&tool.name))
            .cloned()
            .collect();
        tools.extend(
            defined
                .into_values()
                .map(|defined| (defined.skill, defined.tool)),
        );
        tools
    }

    /// The `tools.json` tool that owns `name` among the skills a model sees.
    #[must_use]
    pub fn owned_skill_tool(&self, name: &str) -> Option<(Arc<Skill>, ToolDefinition)> {
        self.tools.owner(name).cloned()
    }

    /// Whether `skill`'s tool `name` is the one that answers to its name.
    #[must_use]
    pub fn owns_tool(&self, skill: &Skill, name: &str) -> bool {
        self.tools.owns(skill, name)
    }

    fn defined_tool(&self, name: &str) -> Option<(Arc<Skill>, ToolDefinition)> {
        let defined = self.defined.read().ok()?;
        defined
            .get(name)
            .map(|defined| (Arc::clone(&defined.skill), defined.tool.clone()))
    }

    /// The tools made with `define_tool`.
    pub(crate) fn defined_tools(&self) -> &DefinedTools {
        &self.defined
    }

    /// The answer of this snapshot kept under `key`, or the one `render` makes (see
    /// `snapshot_answers.rs`): for catalog answers that depend on nothing else.
    pub(crate) fn snapshot_answer<R: serde::Serialize>(
        &self,
        key: String,
        render: impl FnOnce() -> Result<R, crate::outcome::ToolOutcome>,
    ) -> crate::outcome::ToolOutcome {
        self.answers.get_or_render(key, || {
            render().and_then(|result| crate::outcome::ToolOutcome::answer_value(&result))
        })
    }
}

/// Runs find skills as every other protocol tool does: only those a model may see
/// ([`Skill::visible_to_model`]), a hidden one answered exactly as a name the catalog does not
/// hold, hints included.
impl RunContext for SkillsProvider {
    fn find_skill(&self, name: &str, version: Option<&str>) -> Result<Arc<Skill>, String> {
        self.lookup_model_skill(name, version).map_err(|miss| {
            let hint = match (version, miss.versions.is_empty(), miss.closest) {
                (Some(_), false, _) => {
                    let versions: Vec<String> = miss
                        .versions
                        .iter()
                        .filter_map(|skill| skill.id.version.as_ref().map(ToString::to_string))
                        .collect();
                    format!("; its versions are: {}", versions.join(", "))
                }
                (_, true, Some(close)) => format!("; did you mean `{close}`?"),
                _ => "; list_skills shows the skills".to_owned(),
            };
            format!("{}{hint}", miss.error)
        })
    }

    /// The catalog's answer ([`SkillCatalog::is_latest`]): the copy in effect, or another (an
    /// older version, a copy reached by its path).
    fn copy_of(&self, skill: &Arc<Skill>) -> SkillCopy {
        SkillCopy::in_catalog(&self.catalog, skill)
    }

    fn executor(&self) -> &Arc<Executor> {
        &self.executor
    }
}

/// Names the frontmatter's `arguments` field declares (space-separated text or a list).
#[must_use]
pub fn declared_argument_names(skill: &Skill) -> Vec<String> {
    match skill.properties.raw().get("arguments") {
        Some(Value::String(text)) => text.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// A MIME type for a binary file a reader is told about, by its extension.
#[must_use]
pub fn media_type(path: &str) -> &'static str {
    match path
        .rsplit('.')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
        .as_str()
    {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "ttf" | "otf" | "woff" | "woff2" => "font",
        _ => "application/octet-stream",
    }
}
