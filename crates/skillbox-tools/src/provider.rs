//! `SkillsProvider`: the Rust shape of seed 002's `createSkillsProvider`. It renders the
//! system-prompt section and the tool definitions, and answers every tool call through one
//! function, `handle_tool_call`, which never panics: unknown tools, arguments that are not
//! JSON and missing parameters come back as error results a model can act on.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use skillbox_core::tool_names::{ToolOwnership, is_reserved_tool_name};
use skillbox_core::{CatalogError, Skill, SkillCatalog, ToolDefinition};
use skillbox_exec::{Executor, RunOptions};
use skillbox_services::{ReadBudget, Unbudgeted};

use crate::builtin_tools;
use crate::prompt::{
    OmittedSkillsHint, PromptBudget, PromptFormat, budget_leaves_skills_out, render_prompt_hinting,
};
use crate::substitution::substitute;
use crate::tool_spec::ToolSpec;

mod protocol_call;

pub use protocol_call::ProtocolCallError;

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

/// Which tools to offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolProfile {
    /// `load_skill`, `use_skill`, `read_skill_file`, one tool per `tools.json` entry.
    Skills,
    /// The 8 Skills Protocol tools.
    Protocol,
}

impl ToolProfile {
    /// Parse a profile name as used on the command line.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "skills" => Some(ToolProfile::Skills),
            "protocol" => Some(ToolProfile::Protocol),
            _ => None,
        }
    }
}

/// Provider options.
#[derive(Debug, Clone)]
pub struct ProviderOptions {
    /// Size limit of the system-prompt section.
    pub prompt_budget: PromptBudget,
    /// Bytes `read_skill_file` returns at most.
    pub max_file_bytes: u64,
    /// Offer `define_tool` and `remove_tool` (seed 000 section 8); off by default.
    pub define_tools: bool,
    /// Where tools defined with `persistent: "true"` are saved as Skill Tools skills.
    pub persistent_tools_root: Option<std::path::PathBuf>,
    /// Where tools defined for this session only are written.
    pub session_tools_root: std::path::PathBuf,
    /// Run `` !`command` `` patterns in skill bodies when they are loaded; off by default.
    pub preprocess_commands: bool,
    /// When the skills profile offers `find_skills`.
    pub find_skills: FindSkillsOffer,
}

/// When the skills profile offers `find_skills` (it answers calls of it in every case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FindSkillsOffer {
    /// When the prompt budget leaves skills out, and then the prompt says to use it.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl FindSkillsOffer {
    /// Parse `auto`, `always` or `never`.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(FindSkillsOffer::Auto),
            "always" => Some(FindSkillsOffer::Always),
            "never" => Some(FindSkillsOffer::Never),
            _ => None,
        }
    }
}

impl Default for ProviderOptions {
    fn default() -> Self {
        ProviderOptions {
            prompt_budget: PromptBudget::default(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            define_tools: false,
            persistent_tools_root: None,
            session_tools_root: std::env::temp_dir().join("skillbox").join("defined-tools"),
            preprocess_commands: false,
            find_skills: FindSkillsOffer::Auto,
        }
    }
}

/// A tool created with `define_tool`: a real Skill Tools folder, loaded like any other.
#[derive(Debug, Clone)]
struct DefinedTool {
    skill: Arc<Skill>,
    tool: ToolDefinition,
    folder: std::path::PathBuf,
    persistent: bool,
}

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

/// What a tool call produced: text or JSON for the model, and whether it is an error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolOutcome {
    /// The result: a string (instructions, file text) or a JSON value.
    pub content: Value,
    /// Whether the call failed (Anthropic's `is_error`; other providers see `{"error": …}`).
    pub is_error: bool,
}

impl ToolOutcome {
    fn ok(content: Value) -> Self {
        ToolOutcome {
            content,
            is_error: false,
        }
    }

    /// A failed call with the message a model can act on (`{"error": message}`).
    pub fn error(message: impl Into<String>) -> Self {
        ToolOutcome {
            content: json!({ "error": message.into() }),
            is_error: true,
        }
    }

    /// An error for a call the session refused.
    pub(crate) fn refusal(message: impl Into<String>) -> Self {
        Self::error(message)
    }

    /// The result as the text a model receives.
    #[must_use]
    pub fn text(&self) -> String {
        match &self.content {
            Value::String(text) => text.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        }
    }
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

/// The LLM surface over a catalog and an executor. Clones share the catalog, the executor,
/// the services and the defined tools.
#[derive(Clone)]
pub struct SkillsProvider {
    catalog: Arc<SkillCatalog>,
    executor: Arc<Executor>,
    options: ProviderOptions,
    tools: ToolOwnership,
    /// Tools made with `define_tool`, shared by the providers a hot reload builds over new
    /// catalogs ([`SkillsProvider::with_catalog`]), so a reload does not forget them.
    defined: Arc<std::sync::RwLock<BTreeMap<String, DefinedTool>>>,
    warnings: Vec<String>,
    /// The run and blob services, when given ([`SkillsProvider::with_services`]).
    services: Option<Arc<skillbox_services::Services>>,
    /// Skills hidden from models (`disable-model-invocation`) that a person invoked in this
    /// conversation, so the model may load them and run their scripts
    /// ([`SkillsProvider::with_unlocked`]).
    unlocked: Arc<std::collections::BTreeSet<String>>,
    /// Whether the prompt budget leaves skills out, worked out on first use for this catalog.
    budget_leaves_skills_out: Arc<std::sync::OnceLock<bool>>,
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
        let tools = ToolOwnership::for_model(&catalog);
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
        }
    }

    /// A provider over another catalog (a reload of the same roots) with this one's executor,
    /// options and defined tools.
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

    /// This provider, answering calls about the skills `unlocked` names as if they were
    /// visible to models: a person invoked them (`/name`), so the model may load them and run
    /// their scripts even when `disable-model-invocation` hides them. Names that are not safe
    /// to show stay hidden.
    #[must_use]
    pub fn with_unlocked(&self, unlocked: std::collections::BTreeSet<String>) -> Self {
        let mut provider = self.clone();
        provider.unlocked = Arc::new(unlocked);
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

    /// Whether the profile offers a tool of this name ([`SkillsProvider::tools`] holds it),
    /// without building the definitions.
    #[must_use]
    pub fn offers_tool(&self, profile: ToolProfile, name: &str) -> bool {
        match profile {
            ToolProfile::Protocol => builtin_tools::PROTOCOL_TOOL_NAMES.contains(&name),
            ToolProfile::Skills => {
                matches!(name, "load_skill" | "use_skill" | "read_skill_file")
                    || (name == "find_skills" && self.offers_find_skills())
                    || (self.options.define_tools && matches!(name, "define_tool" | "remove_tool"))
                    || self.tools.owner(name).is_some()
                    || self
                        .defined
                        .read()
                        .is_ok_and(|defined| defined.contains_key(name))
            }
        }
    }

    /// Whether a call of the tool `name` may run code: a script, a handler, a protocol run, or
    /// `load_skill` when the body's commands run. Doors bound how many such calls run at once.
    #[must_use]
    pub fn runs_code(&self, name: &str) -> bool {
        match name {
            "use_skill" | "execute_skill" | "run_code" => true,
            "load_skill" => self.options.preprocess_commands,
            "read_skill_file" | "find_skills" | "define_tool" | "remove_tool" | "create_blob"
            | "read_blob" => false,
            _ => !builtin_tools::PROTOCOL_TOOL_NAMES.contains(&name),
        }
    }

    /// The tools of a profile, in a fixed order.
    #[must_use]
    pub fn tools(&self, profile: ToolProfile) -> Vec<ToolSpec> {
        match profile {
            ToolProfile::Protocol => builtin_tools::protocol_tools(),
            ToolProfile::Skills => {
                let skills = self.model_skills();
                let names: Vec<&str> = skills.iter().map(|skill| skill.name()).collect();
                let mut specs = vec![
                    builtin_tools::load_skill(&names),
                    builtin_tools::use_skill(),
                    builtin_tools::read_skill_file(),
                ];
                if self.offers_find_skills() {
                    specs.push(builtin_tools::find_skills());
                }
                let defined = self
                    .defined
                    .read()
                    .map(|defined| defined.clone())
                    .unwrap_or_default();
                specs.extend(
                    self.tools
                        .owned()
                        .filter(|(_, tool)| !defined.contains_key(&tool.name))
                        .map(|(_, tool)| tool)
                        .chain(defined.values().map(|defined| &defined.tool))
                        .map(|tool| ToolSpec {
                            name: tool.name.clone(),
                            description: tool.description.clone(),
                            parameters: tool.input_schema.clone(),
                        }),
                );
                if self.options.define_tools {
                    specs.push(builtin_tools::define_tool());
                    specs.push(builtin_tools::remove_tool());
                }
                specs
            }
        }
    }

    /// Whether the catalog call `name` (see [`SkillsProvider::catalog_call`]) with `arguments`
    /// reads skill files: `read_skill_file`, and `describe_skill` with `detail: "full"` (the
    /// `SKILL.md` text and the resource listing). The others answer from the catalog in memory.
    /// A server runs the calls that read files off its async threads, under a time budget.
    #[must_use]
    pub fn reads_skill_files(name: &str, arguments: &Value) -> bool {
        match name {
            "read_skill_file" => true,
            "describe_skill" => arguments.get("detail").and_then(Value::as_str) == Some("full"),
            _ => false,
        }
    }

    /// Answer a catalog call of the Skills Protocol (`load_skills_protocol_guide`,
    /// `list_skills`, `describe_skill`, `read_skill_file`) as [`SkillsProvider::handle_tool_call`]
    /// does, without awaiting anything: it may run on a thread of its own, and reads files
    /// only when [`SkillsProvider::reads_skill_files`] says so. Any other name is an error.
    #[must_use]
    pub fn catalog_call(&self, name: &str, arguments: &Value) -> ToolOutcome {
        let arguments = match parse_arguments(name, arguments) {
            Ok(arguments) => arguments,
            Err(outcome) => return outcome,
        };
        self.answer_catalog_call(name, &arguments)
            .unwrap_or_else(|| ToolOutcome::error(format!("`{name}` is not a catalog call")))
    }

    fn answer_catalog_call(
        &self,
        name: &str,
        arguments: &serde_json::Map<String, Value>,
    ) -> Option<ToolOutcome> {
        Some(match name {
            "read_skill_file" => self.read_skill_file(arguments),
            "list_skills" => self.list_skills(arguments),
            "describe_skill" => self.describe_skill(arguments),
            "find_skills" => self.find_skills(arguments),
            "load_skills_protocol_guide" => ToolOutcome::ok(json!({ "content": PROTOCOL_GUIDE })),
            _ => return None,
        })
    }

    /// Answer a tool call. `arguments` may be a JSON object or a string holding one (as
    /// OpenAI-style APIs send them).
    pub async fn handle_tool_call(&self, name: &str, arguments: &Value) -> ToolOutcome {
        self.handle_tool_call_within(name, arguments, &mut Unbudgeted)
            .await
    }

    /// [`SkillsProvider::handle_tool_call`], each blob read taking the bytes it returns from
    /// `budget` first: for doors that answer many callers at once.
    pub async fn handle_tool_call_within(
        &self,
        name: &str,
        arguments: &Value,
        budget: &mut dyn ReadBudget,
    ) -> ToolOutcome {
        let arguments = match parse_arguments(name, arguments) {
            Ok(arguments) => arguments,
            Err(outcome) => return outcome,
        };
        if builtin_tools::PROTOCOL_TOOL_NAMES.contains(&name) {
            let answer = self
                .protocol_call_within(name, &Value::Object(arguments), budget)
                .await;
            return ToolOutcome::from_protocol_result(answer);
        }
        match name {
            "load_skill" => self.load_skill(&arguments).await,
            "use_skill" => self.use_skill(&arguments).await,
            "find_skills" => self.find_skills(&arguments),
            "define_tool" if self.options.define_tools => self.define_tool(&arguments),
            "remove_tool" if self.options.define_tools => self.remove_tool(&arguments),
            _ => match self
                .defined_tool(name)
                .or_else(|| self.tools.owner(name).cloned())
            {
                Some((skill, tool)) => {
                    let result = self
                        .executor
                        .call_tool(
                            &skill,
                            &tool,
                            Value::Object(arguments),
                            RunOptions::default(),
                        )
                        .await;
                    ToolOutcome {
                        is_error: result.error_type.is_some(),
                        content: result.value,
                    }
                }
                None => {
                    let mut known: Vec<String> = ["load_skill", "use_skill", "read_skill_file"]
                        .iter()
                        .map(|n| (*n).to_owned())
                        .collect();
                    if self.offers_find_skills() {
                        known.push("find_skills".to_owned());
                    }
                    known.extend(self.tools.owned().map(|(_, tool)| tool.name.clone()));
                    if let Ok(defined) = self.defined.read() {
                        known.extend(
                            defined
                                .keys()
                                .filter(|name| self.tools.owner(name).is_none())
                                .cloned(),
                        );
                    }
                    ToolOutcome::error(format!(
                        "unknown tool `{name}`; the tools are: {}",
                        known.join(", ")
                    ))
                }
            },
        }
    }

    fn defined_tool(&self, name: &str) -> Option<(Arc<Skill>, ToolDefinition)> {
        let defined = self.defined.read().ok()?;
        defined
            .get(name)
            .map(|defined| (Arc::clone(&defined.skill), defined.tool.clone()))
    }

    /// `define_tool`: write the tool as a Skill Tools folder (SKILL.md, tools.json,
    /// scripts/<name>.mjs), load it like any skill, and make it callable at once.
    fn define_tool(&self, arguments: &serde_json::Map<String, Value>) -> ToolOutcome {
        let text = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|value| !value.is_empty())
        };
        let Some(name) = text("name") else {
            return ToolOutcome::error(
                "`define_tool` needs the parameter `name` (lowercase letters, digits, underscores)",
            );
        };
        if !skillbox_core::tools_manifest::is_valid_tool_name(name) {
            return ToolOutcome::error(format!(
                "parameter `name`: `{name}` must match ^[a-z][a-z0-9_]*$"
            ));
        }
        if is_reserved_tool_name(name) {
            return ToolOutcome::error(format!(
                "`{name}` is a built-in tool and cannot be redefined"
            ));
        }
        let skill_name = name.replace('_', "-");
        if self.name_exists_in_catalog(name, &skill_name) {
            return ToolOutcome::error(format!(
                "`{name}` already exists in the skill catalog (as a skill or a skill's tool), and a defined tool never replaces one; choose another name"
            ));
        }
        let Some(description) = text("description") else {
            return ToolOutcome::error("`define_tool` needs the parameter `description`");
        };
        let Some(code) = arguments
            .get("code")
            .and_then(Value::as_str)
            .filter(|code| !code.trim().is_empty())
        else {
            return ToolOutcome::error(
                "`define_tool` needs the parameter `code` (the body of `async function handler(args)`)",
            );
        };
        let parameters = match arguments.get("parameters") {
            None | Some(Value::Null) => json!({}),
            Some(Value::String(text)) if text.trim().is_empty() => json!({}),
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(value @ Value::Object(_)) => value,
                _ => {
                    return ToolOutcome::error(
                        "parameter `parameters` must be a JSON object (as a string) mapping names to {type, description}",
                    );
                }
            },
            Some(value @ Value::Object(_)) => value.clone(),
            Some(_) => {
                return ToolOutcome::error(
                    "parameter `parameters` must be a JSON object (as a string)",
                );
            }
        };
        let persistent = matches!(arguments.get("persistent"), Some(Value::String(flag)) if flag == "true")
            || arguments.get("persistent") == Some(&Value::Bool(true));
        let folder = if persistent {
            let Some(root) = &self.options.persistent_tools_root else {
                return ToolOutcome::error(
                    "persistent tools need a writable tools root, and none is configured; define the tool without `persistent`",
                );
            };
            root.join(&skill_name)
        } else {
            self.options
                .session_tools_root
                .join(format!(
                    "{}-{}",
                    std::process::id(),
                    next_definition_number()
                ))
                .join(&skill_name)
        };
        if persistent && folder.exists() {
            return ToolOutcome::error(format!(
                "a skill folder `{}` already exists; choose another tool name",
                folder.display()
            ));
        }
        let manifest = json!([{ "name": name, "description": description, "script": format!("scripts/{name}.mjs"), "parameters": parameters }]);
        let skill_md = format!(
            "---\nname: {skill_name}\ndescription: {}\n---\n# {name}\n\nA tool created at runtime with define_tool. Call `{name}` directly.\n",
            serde_json::to_string(description).unwrap_or_default()
        );
        let handler = format!("export default async function handler(args) {{\n{code}\n}}\n");
        if let Err(error) = write_tool_folder(&folder, &skill_md, &manifest, name, &handler) {
            return ToolOutcome::error(format!("cannot write tool `{name}`: {error}"));
        }
        let loaded = load_defined_skill(&folder, &skill_name);
        let (skill, tool) = match loaded {
            Ok(found) => found,
            Err(message) => {
                let _ = std::fs::remove_dir_all(&folder);
                return ToolOutcome::error(format!("tool `{name}` is not valid: {message}"));
            }
        };
        let Ok(mut defined) = self.defined.write() else {
            return ToolOutcome::error("the tool registry is unavailable");
        };
        if let Some(previous) = defined.insert(
            name.to_owned(),
            DefinedTool {
                skill,
                tool,
                folder: folder.clone(),
                persistent,
            },
        ) && previous.folder != folder
        {
            // A redefinition replaces the earlier tool and its folder.
            let _ = std::fs::remove_dir_all(&previous.folder);
        }
        let mut result = json!({ "defined": name, "persistent": persistent });
        if persistent {
            result["path"] = json!(folder);
        }
        ToolOutcome::ok(result)
    }

    /// `remove_tool`: only tools created with `define_tool`; their folders go with them.
    fn remove_tool(&self, arguments: &serde_json::Map<String, Value>) -> ToolOutcome {
        let Some(name) = arguments.get("name").and_then(Value::as_str) else {
            return ToolOutcome::error("`remove_tool` needs the parameter `name`");
        };
        if is_reserved_tool_name(name) {
            return ToolOutcome::error(format!(
                "`{name}` is a built-in tool and cannot be removed"
            ));
        }
        let removed = self
            .defined
            .write()
            .ok()
            .and_then(|mut defined| defined.remove(name));
        match (removed, self.tools.owner(name)) {
            (Some(removed), _) => {
                let _ = std::fs::remove_dir_all(&removed.folder);
                ToolOutcome::ok(json!({ "removed": name, "persistent": removed.persistent }))
            }
            (None, Some((skill, _))) => ToolOutcome::error(format!(
                "tool `{name}` comes from skill `{}`; only tools created with define_tool can be removed",
                skill.name()
            )),
            (None, None) => ToolOutcome::error(format!("no tool named `{name}` was defined")),
        }
    }

    /// The skill whose `tools.json` (or `define_tool` call) gives the tool `name`, when a
    /// skill's tool has that name.
    #[must_use]
    pub fn tool_owner(&self, name: &str) -> Option<Arc<Skill>> {
        self.defined_tool(name)
            .map(|(skill, _)| skill)
            .or_else(|| self.tools.owner(name).map(|(skill, _)| Arc::clone(skill)))
    }

    /// The skill name a call's arguments give (`skill`, or its aliases), for the tools that
    /// take one. `arguments` may be an object or a string holding one.
    #[must_use]
    pub fn skill_named_in(arguments: &Value) -> Option<String> {
        let arguments = parse_arguments("", arguments).ok()?;
        skill_argument(&arguments)
    }

    /// The skill a `load_skill` call's arguments name (for session tracking).
    #[must_use]
    pub fn loaded_skill(&self, arguments: &Value) -> Option<Arc<Skill>> {
        let arguments = parse_arguments("load_skill", arguments).ok()?;
        let name = skill_argument(&arguments)?;
        self.find_model_skill(&name, None).ok()
    }

    /// Whether `define_tool` would replace something of the catalog: a skill named `name` or
    /// `skill_name` (hidden or not: a persistent tool's folder would shadow it on the next
    /// load), or a tool any skill declares.
    fn name_exists_in_catalog(&self, name: &str, skill_name: &str) -> bool {
        let skills = self.catalog.skills().iter().chain(self.catalog.shadowed());
        self.catalog.get(name).is_some()
            || self.catalog.get(skill_name).is_some()
            || skills
                .into_iter()
                .any(|skill| skill.tools.iter().any(|tool| tool.name == name))
    }

    fn find_skill(
        &self,
        arguments: &serde_json::Map<String, Value>,
        tool: &str,
    ) -> Result<Arc<Skill>, ToolOutcome> {
        let name = skill_argument(arguments).ok_or_else(|| {
            ToolOutcome::error(format!(
                "`{tool}` needs the parameter `skill` (the skill's name)"
            ))
        })?;
        let version = arguments.get("version").and_then(Value::as_str);
        self.find_named_skill(&name, version)
    }

    /// [`SkillsProvider::lookup_model_skill`], with a miss worded for a model.
    fn find_named_skill(
        &self,
        name: &str,
        version: Option<&str>,
    ) -> Result<Arc<Skill>, ToolOutcome> {
        self.lookup_model_skill(name, version).map_err(|miss| {
            ToolOutcome::error(match miss.closest {
                Some(close) => format!("no skill named `{name}`; did you mean `{close}`?"),
                None => format!("no skill named `{name}`; call load_skill with {{\"list_skills\": true}} to see the skills"),
            })
        })
    }

    async fn load_skill(&self, arguments: &serde_json::Map<String, Value>) -> ToolOutcome {
        if arguments.get("list_skills").and_then(Value::as_bool) == Some(true)
            || (skill_argument(arguments).is_none() && arguments.contains_key("list_skills"))
        {
            let skills: Vec<Value> = self
                .model_skills()
                .iter()
                .map(|skill| {
                    let mut entry =
                        json!({ "name": skill.name(), "description": skill.description });
                    if let Some(hint) = &skill.properties.argument_hint {
                        entry["argument_hint"] = json!(hint);
                    }
                    entry
                })
                .collect();
            return ToolOutcome::ok(json!({ "skills": skills }));
        }
        let skill = match self.find_skill(arguments, "load_skill") {
            Ok(skill) => skill,
            Err(outcome) => return outcome,
        };
        let raw_arguments = match arguments.get("arguments") {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .map_or_else(|| item.to_string(), str::to_owned)
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Some(Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        };
        match self
            .skill_instructions(&skill, raw_arguments.as_deref())
            .await
        {
            Ok(text) => ToolOutcome::ok(Value::String(text)),
            Err(message) => ToolOutcome::error(message),
        }
    }

    /// The instructions of `skill` as `load_skill` gives them: the body with `raw_arguments`
    /// substituted (and its commands run when preprocessing is on), notes where it was cut,
    /// and the listing of its files. Visibility is the caller's business: front doors that
    /// serve people (MCP prompts) use it for skills hidden from models, too.
    ///
    /// # Errors
    /// A message naming the skill when its `SKILL.md` can no longer be read.
    pub async fn skill_instructions(
        &self,
        skill: &Arc<Skill>,
        raw_arguments: Option<&str>,
    ) -> Result<String, String> {
        let body = skill
            .body()
            .map_err(|error| format!("cannot read skill `{}`: {error}", skill.name()))?;
        let names = declared_argument_names(skill);
        let directory =
            std::fs::canonicalize(&skill.directory).unwrap_or_else(|_| skill.directory.clone());
        let directory_text = directory.display().to_string();
        let (mut text, cut) = if self.options.preprocess_commands {
            self.preprocess(skill, &body.text, raw_arguments, &names, &directory_text)
                .await
        } else {
            let substituted = substitute(
                &body.text,
                raw_arguments,
                &names,
                &directory_text,
                MAX_LOADED_SKILL_BYTES,
            );
            (substituted.text, substituted.cut)
        };
        if body.truncated {
            text.push_str(
                "\n\n[The skill's instructions are longer than the size limit and were cut here.]",
            );
        }
        if cut {
            text.push_str(&format!(
                "\n\n[The instructions with their arguments substituted are longer than {MAX_LOADED_SKILL_BYTES} bytes and were cut here; load the skill again with shorter arguments.]"
            ));
        }
        text.push_str(&self.resource_listing(skill, &directory));
        Ok(text)
    }

    /// Run the body's commands and substitute arguments in its text pieces only. At most
    /// [`MAX_PREPROCESS_COMMANDS`] commands run and they add at most
    /// [`MAX_PREPROCESS_OUTPUT_BYTES`] of output; the text stops at [`MAX_LOADED_SKILL_BYTES`]
    /// (the flag says it was cut there). Notes at the end say what was left out and why.
    async fn preprocess(
        &self,
        skill: &Skill,
        body: &str,
        raw: Option<&str>,
        names: &[String],
        directory: &str,
    ) -> (String, bool) {
        let mut text = String::with_capacity(body.len().min(MAX_LOADED_SKILL_BYTES));
        let mut used = false;
        let mut commands_run = 0_usize;
        let mut commands_not_run = 0_usize;
        let mut output_left = MAX_PREPROCESS_OUTPUT_BYTES;
        let mut output_cut = false;
        let mut cut = false;
        for piece in crate::preprocess::pieces(body) {
            let room = MAX_LOADED_SKILL_BYTES.saturating_sub(text.len());
            match piece {
                crate::preprocess::Piece::Text(part) => {
                    let substituted =
                        crate::substitution::substitute_text(&part, raw, names, directory, room);
                    used |= substituted.used_arguments;
                    text.push_str(&substituted.text);
                    cut = substituted.cut;
                }
                crate::preprocess::Piece::Command(_) if commands_run == MAX_PREPROCESS_COMMANDS => {
                    commands_not_run += 1;
                    text.push_str("[command not run]");
                }
                crate::preprocess::Piece::Command(command) => {
                    commands_run += 1;
                    let result = self
                        .executor
                        .run_command(skill, &command, RunOptions::default())
                        .await;
                    let mut output = if result.success {
                        result.stdout.trim_end().to_owned()
                    } else {
                        let reason = result
                            .stderr
                            .lines()
                            .find(|line| !line.trim().is_empty())
                            .map(str::to_owned)
                            .or(result.error)
                            .unwrap_or_default();
                        format!("[error: {}]", reason.trim())
                    };
                    if crate::substitution::cut_at(&mut output, output_left) {
                        output_cut = true;
                        output.push_str("[output cut]");
                    }
                    output_left -= output.len().min(output_left);
                    text.push_str(&output);
                    cut = crate::substitution::cut_at(&mut text, MAX_LOADED_SKILL_BYTES);
                }
            }
            if cut {
                break;
            }
        }
        if !cut {
            cut = crate::substitution::finish(&mut text, raw, used, MAX_LOADED_SKILL_BYTES);
        }
        if commands_not_run > 0 {
            text.push_str(&format!(
                "\n\n[{commands_not_run} command(s) marked `[command not run]` were not run: a skill runs at most {MAX_PREPROCESS_COMMANDS} commands when it is loaded.]"
            ));
        }
        if output_cut {
            text.push_str(&format!(
                "\n\n[The command output was cut where marked `[output cut]`: the commands of a skill add at most {MAX_PREPROCESS_OUTPUT_BYTES} bytes when it is loaded.]"
            ));
        }
        (text, cut)
    }

    /// What the model can read or run next: `files:` entries, scripts, references, tools.
    fn resource_listing(&self, skill: &Skill, directory: &std::path::Path) -> String {
        let mut text = format!("\n\n---\nSkill directory: {}\n", directory.display());
        if !skill.properties.files.is_empty() {
            text.push_str("\nFiles you can read with read_skill_file:\n");
            for file in &skill.properties.files {
                match &file.description {
                    Some(description) => {
                        text.push_str(&format!("- {}: {description}\n", file.path))
                    }
                    None => text.push_str(&format!("- {}\n", file.path)),
                }
            }
        }
        let (resources, more) = skill.resources();
        let listed: Vec<&str> = skill
            .properties
            .files
            .iter()
            .map(|file| file.path.as_str())
            .collect();
        let group = |group: skillbox_core::skill::ResourceGroup| -> Vec<&str> {
            resources
                .iter()
                .filter(|resource| {
                    resource.group == group && !listed.contains(&resource.path.as_str())
                })
                .map(|resource| resource.path.as_str())
                .collect()
        };
        let scripts = group(skillbox_core::skill::ResourceGroup::Scripts);
        if !scripts.is_empty() {
            text.push_str("\nScripts you can run with use_skill:\n");
            for path in scripts {
                text.push_str(&format!("- {path}\n"));
            }
        }
        for (title, group_kind) in [
            (
                "References",
                skillbox_core::skill::ResourceGroup::References,
            ),
            ("Examples", skillbox_core::skill::ResourceGroup::Examples),
            ("Assets", skillbox_core::skill::ResourceGroup::Assets),
        ] {
            let paths = group(group_kind);
            if !paths.is_empty() {
                text.push_str(&format!("\n{title} (read_skill_file):\n"));
                for path in paths {
                    text.push_str(&format!("- {path}\n"));
                }
            }
        }
        if more {
            text.push_str("\n(more files exist than are listed)\n");
        }
        let owned: Vec<&ToolDefinition> = skill
            .tools
            .iter()
            .filter(|tool| self.tools.owns(skill, &tool.name))
            .collect();
        if !owned.is_empty() {
            text.push_str("\nTools this skill provides (call them directly):\n");
            for tool in owned {
                text.push_str(&format!("- {}: {}\n", tool.name, tool.description));
            }
        }
        text
    }

    async fn use_skill(&self, arguments: &serde_json::Map<String, Value>) -> ToolOutcome {
        let Some(skill) = skill_argument(arguments) else {
            return ToolOutcome::error(
                "`use_skill` needs the parameter `skill` (the skill's name)",
            );
        };
        let Some(script) = arguments.get("script").and_then(Value::as_str) else {
            return ToolOutcome::error(
                "`use_skill` needs the parameter `script` (e.g. \"scripts/run.py\")",
            );
        };
        let args: Vec<String> = match arguments.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                let mut args = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    match item {
                        Value::String(text) => args.push(text.clone()),
                        Value::Number(number) => args.push(number.to_string()),
                        Value::Bool(flag) => args.push(flag.to_string()),
                        _ => {
                            return ToolOutcome::error(format!(
                                "parameter `args[{index}]` must be a string"
                            ));
                        }
                    }
                }
                args
            }
            Some(Value::String(single)) => vec![single.clone()],
            Some(_) => return ToolOutcome::error("parameter `args` must be an array of strings"),
        };
        let skill = match self.find_named_skill(&skill, None) {
            Ok(skill) => skill,
            Err(outcome) => return outcome,
        };
        let result = self
            .executor
            .run_script(&skill, script, &args, RunOptions::default())
            .await;
        ToolOutcome {
            is_error: !result.success,
            content: serde_json::to_value(&result).unwrap_or(Value::Null),
        }
    }

    fn read_skill_file(&self, arguments: &serde_json::Map<String, Value>) -> ToolOutcome {
        let skill = match self.find_skill(arguments, "read_skill_file") {
            Ok(skill) => skill,
            Err(outcome) => return outcome,
        };
        let Some(path) = arguments.get("path").and_then(Value::as_str) else {
            return ToolOutcome::error(
                "`read_skill_file` needs the parameter `path` (a file inside the skill folder)",
            );
        };
        let max = self.options.max_file_bytes;
        match skill.read_text_file(path, max) {
            Ok((text, truncated)) => {
                let mut text = text;
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
                    "type": media_type(path),
                    "note": "binary file: its bytes are not shown",
                }))
            }
            Err(error) => ToolOutcome::error(format!(
                "cannot read `{path}` in skill `{}`: {error}",
                skill.name()
            )),
        }
    }

    fn list_skills(&self, arguments: &serde_json::Map<String, Value>) -> ToolOutcome {
        let namespace = arguments.get("namespace").and_then(Value::as_str);
        let summary = match arguments.get("detail").and_then(Value::as_str) {
            None | Some("names") => false,
            Some("summary") => true,
            Some(other) => {
                return ToolOutcome::error(format!(
                    "parameter `detail` must be \"names\" or \"summary\", not \"{other}\""
                ));
            }
        };
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => 50,
            Some(value) => match value.as_u64() {
                Some(limit) if (1..=1000).contains(&limit) => usize::try_from(limit).unwrap_or(50),
                _ => {
                    return ToolOutcome::error(
                        "parameter `limit` must be an integer from 1 to 1000",
                    );
                }
            },
        };
        let after = match arguments.get("cursor").and_then(Value::as_str) {
            None => None,
            Some(cursor) => match decode_cursor(cursor) {
                Some(name) => Some(name),
                None => {
                    return ToolOutcome::error(
                        "parameter `cursor` is not a cursor this server issued; start again without it",
                    );
                }
            },
        };
        let mut page = Vec::new();
        let mut next_cursor = Value::Null;
        for skill in self.catalog.latest_visible_to_model() {
            let skill_namespace = skill.namespace();
            if namespace.is_some_and(|wanted| wanted != skill_namespace) {
                continue;
            }
            if after.as_deref().is_some_and(|after| skill.name() <= after) {
                continue;
            }
            if page.len() == limit {
                if let Some(Value::Object(last)) = page.last()
                    && let Some(name) = last.get("name").and_then(Value::as_str)
                {
                    next_cursor = Value::String(encode_cursor(name));
                }
                break;
            }
            let mut entry = json!({ "name": skill.name(), "version": skill.version_label() });
            if summary {
                entry["description"] = json!(skill.description);
                entry["namespace"] = json!(skill_namespace);
                entry["kind"] = json!(skill.kind());
            }
            page.push(entry);
        }
        ToolOutcome::ok(json!({ "skills": page, "next_cursor": next_cursor }))
    }

    /// `find_skills {query, limit?}`: the skills a model may see that best match the query.
    fn find_skills(&self, arguments: &serde_json::Map<String, Value>) -> ToolOutcome {
        use skillbox_core::search::{DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT};
        let query = match arguments.get("query") {
            Some(Value::String(query)) => query,
            None | Some(Value::Null) => {
                return ToolOutcome::error(
                    "parameter `query` is required: a few words that describe the task",
                );
            }
            Some(_) => return ToolOutcome::error("parameter `query` must be a string"),
        };
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => DEFAULT_SEARCH_LIMIT,
            Some(value) => match value.as_u64().and_then(|limit| usize::try_from(limit).ok()) {
                Some(limit) if (1..=MAX_SEARCH_LIMIT).contains(&limit) => limit,
                _ => {
                    return ToolOutcome::error(format!(
                        "parameter `limit` must be an integer from 1 to {MAX_SEARCH_LIMIT}"
                    ));
                }
            },
        };
        let results = match self
            .catalog
            .search_index()
            .search(query, limit, |skill| skill.visible_to_model())
        {
            Ok(results) => results,
            Err(error) => return ToolOutcome::error(format!("parameter `query`: {error}")),
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
                "only the first {} distinct words of the query were searched",
                skillbox_core::search::MAX_QUERY_TERMS
            ));
        }
        ToolOutcome::ok(answer)
    }

    fn describe_skill(&self, arguments: &serde_json::Map<String, Value>) -> ToolOutcome {
        let skill = match self.find_skill(arguments, "describe_skill") {
            Ok(skill) => skill,
            Err(outcome) => return outcome,
        };
        let detail = arguments
            .get("detail")
            .and_then(Value::as_str)
            .unwrap_or("summary");
        if !matches!(detail, "manifest" | "summary" | "full") {
            return ToolOutcome::error(format!(
                "parameter `detail` must be \"manifest\", \"summary\" or \"full\", not \"{detail}\""
            ));
        }
        ToolOutcome::ok(json!({ "skill": describe(&skill, detail) }))
    }
}

/// The `describe_skill` view of a skill at a detail level.
#[must_use]
pub fn describe(skill: &Skill, detail: &str) -> Value {
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
    if detail == "manifest" {
        return view;
    }
    view["frontmatter"] = json!(skill.properties.raw());
    if detail == "full" {
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

fn next_definition_number() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Write a defined tool's skill folder, readable by the sandbox user.
fn write_tool_folder(
    folder: &std::path::Path,
    skill_md: &str,
    manifest: &Value,
    name: &str,
    handler: &str,
) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let scripts = folder.join("scripts");
    std::fs::create_dir_all(&scripts)?;
    let mut parent = Some(scripts.as_path());
    while let Some(directory) = parent {
        if directory.starts_with(std::env::temp_dir()) || directory.starts_with(folder) {
            let _ = std::fs::set_permissions(directory, std::fs::Permissions::from_mode(0o755));
        }
        parent = directory
            .parent()
            .filter(|parent| parent.starts_with(folder.parent().unwrap_or(folder)));
    }
    for (path, text) in [
        (folder.join("SKILL.md"), skill_md.to_owned()),
        (
            folder.join("tools.json"),
            serde_json::to_string_pretty(manifest).unwrap_or_default(),
        ),
        (scripts.join(format!("{name}.mjs")), handler.to_owned()),
    ] {
        std::fs::write(&path, text)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
    }
    Ok(())
}

/// Load a defined tool's folder through the ordinary skill loader.
fn load_defined_skill(
    folder: &std::path::Path,
    skill_name: &str,
) -> Result<(Arc<Skill>, ToolDefinition), String> {
    let limits = skillbox_core::CatalogLimits::default();
    let root = folder.parent().unwrap_or(folder);
    let source =
        skillbox_core::source::SkillSource::directory(folder).map_err(|error| error.to_string())?;
    let request = skillbox_core::loader::LoadRequest {
        source,
        directory: folder.to_path_buf(),
        folder_name: skill_name.to_owned(),
        parent_folder_name: None,
        listing: None,
        folder: None,
        skill_md: None,
        root,
        root_index: usize::MAX,
        limits: &limits,
        mode: skillbox_core::ValidationMode::Lenient,
    };
    match skillbox_core::loader::load_skill(&request) {
        skillbox_core::loader::LoadOutcome::Loaded(skill) => {
            let errors: Vec<String> = skill
                .diagnostics
                .iter()
                .filter(|d| d.is_error())
                .map(|d| d.message.clone())
                .collect();
            if !errors.is_empty() {
                return Err(errors.join("; "));
            }
            let tool = skill.tools.first().cloned().ok_or("no tool was declared")?;
            Ok((skill, tool))
        }
        skillbox_core::loader::LoadOutcome::Skipped(diagnostics) => Err(diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join("; ")),
    }
}

fn encode_cursor(name: &str) -> String {
    format!("c1.{}", hex::encode(name))
}

fn decode_cursor(cursor: &str) -> Option<String> {
    let hex = cursor.strip_prefix("c1.").filter(|hex| !hex.is_empty())?;
    String::from_utf8(hex::decode(hex).ok()?).ok()
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

/// The skill name from the aliases models use: `skill`, `skill_name`, `skillName`, `name`.
fn skill_argument(arguments: &serde_json::Map<String, Value>) -> Option<String> {
    ["skill", "skill_name", "skillName", "name"]
        .iter()
        .find_map(|key| arguments.get(*key).and_then(Value::as_str))
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
}

fn parse_arguments(
    tool: &str,
    arguments: &Value,
) -> Result<serde_json::Map<String, Value>, ToolOutcome> {
    match arguments {
        Value::Object(map) => Ok(map.clone()),
        Value::Null => Ok(serde_json::Map::new()),
        Value::String(text) if text.trim().is_empty() => Ok(serde_json::Map::new()),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(ToolOutcome::error(format!(
                "arguments for `{tool}` must be a JSON object"
            ))),
            Err(error) => Err(ToolOutcome::error(format!(
                "arguments for `{tool}` are not valid JSON ({error}); send a JSON object such as {{\"skill\": \"name\"}}"
            ))),
        },
        _ => Err(ToolOutcome::error(format!(
            "arguments for `{tool}` must be a JSON object"
        ))),
    }
}

fn media_type(path: &str) -> &'static str {
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
