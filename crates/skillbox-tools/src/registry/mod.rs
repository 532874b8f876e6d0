//! The tool registry: every tool the runtime answers, each with its facts declared once.
//!
//! A built-in tool is a type implementing [`Tool`] in its own file under `tools/`, listed once
//! in [`BUILTINS`]. Skill tools (`tools.json` entries and tools made with `define_tool`) are
//! data: the provider's tool ownership finds them, after the built-ins, so a skill can never
//! answer to a built-in's name. Every question a door asks about tools is answered here: is
//! this a tool, does it run code, may this caller call it, what is its schema.

use std::collections::BTreeSet;
use std::sync::{Arc, LazyLock};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use skillbox_core::{Skill, ToolDefinition};

use crate::effect::CallIntent;
use crate::outcome::{CallStatus, ToolOutcome};
use crate::params::{self, Arguments};
use crate::provider::SkillsProvider;
use crate::tool_spec::ToolSpec;
use crate::tools;

mod facts;
mod prepared;

pub use facts::{
    Annotations, Offer, ParamsSize, Profiles, ReadsFiles, RunsCode, ToolFacts, ToolProfile,
};
pub use prepared::{ApprovalSubject, BudgetedWork, Job, PrepareFuture, Prepared, ToolFuture};

/// A built-in tool. One type per tool, in its own file under `tools/`.
pub trait Tool: Send + Sync + 'static {
    /// The tool's name, spelled here only.
    const NAME: &'static str;
    /// What the tool does, for the model.
    const DESCRIPTION: &'static str;
    /// Its facts.
    const FACTS: ToolFacts;
    /// Its parameters: decoded once by the door policy; the schema is derived from them, its
    /// `required` from the fields that are not `Option`.
    type Params<'a>: Deserialize<'a> + JsonSchema + Send;
    /// What a successful call answers, as the JSON this type serializes to. When it is always
    /// an object, its schema is the tool's output schema (MCP's `outputSchema`,
    /// [`crate::result_schema`]); text, or JSON the tool does not shape itself, has none.
    type Result: Serialize + JsonSchema;
    /// Every failure it answers is seed 002's `SkillExecutionResult` and says its kind
    /// (`errorType`, such as `SkillNotFound`): the tool types its own, and the door policy
    /// those it answers itself (arguments it cannot decode, a denial, a full run queue) and
    /// gives a failure before anything ran the result's fields ([`ToolOutcome::as_execution_result`]).
    const TYPES_FAILURES: bool = false;

    /// Whether this provider answers the tool at all (`define_tool` only when enabled).
    fn enabled(&self, _provider: &SkillsProvider) -> bool {
        true
    }

    /// Whether this provider lists it to models (`find_skills` per `--find-skills`).
    fn listed(&self, provider: &SkillsProvider) -> bool {
        self.enabled(provider)
    }

    /// The schema as this provider offers it to a caller who may see `skills` (a sub-agent's
    /// share of the catalog; `None`: every skill a model may see): the derived one, adjusted
    /// (`load_skill` lists the skill names).
    fn specialise(
        &self,
        _provider: &SkillsProvider,
        _skills: Option<&[&str]>,
        _schema: &mut Value,
    ) {
    }

    /// What a call with `params` concerns and would change, told without running it (no side
    /// effects): the skill it names and its [`ToolEffect`](crate::effect::ToolEffect). Nothing, by default.
    fn intent(&self, _provider: &SkillsProvider, _params: &Self::Params<'_>) -> CallIntent {
        CallIntent::default()
    }

    /// Check the call without side effects (find its skill, its blobs) and return its job.
    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: Self::Params<'a>,
    ) -> PrepareFuture<'a>;
}

/// A built-in tool behind a trait object: what the registry holds.
pub(crate) trait BuiltinTool: Send + Sync {
    fn name(&self) -> &'static str;
    fn types_failures(&self) -> bool;
    fn description(&self) -> &'static str;
    fn facts(&self) -> &'static ToolFacts;
    fn schema(&self) -> Value;
    fn output_schema(&self) -> Option<Value>;
    fn enabled(&self, provider: &SkillsProvider) -> bool;
    fn listed(&self, provider: &SkillsProvider) -> bool;
    fn specialise(&self, provider: &SkillsProvider, skills: Option<&[&str]>, schema: &mut Value);
    fn intent(&self, provider: &SkillsProvider, arguments: Arguments<'_>) -> CallIntent;
    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        arguments: Arguments<'a>,
    ) -> PrepareFuture<'a>;
}

impl<T: Tool> BuiltinTool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn types_failures(&self) -> bool {
        T::TYPES_FAILURES
    }

    fn description(&self) -> &'static str {
        T::DESCRIPTION
    }

    fn facts(&self) -> &'static ToolFacts {
        &T::FACTS
    }

    fn schema(&self) -> Value {
        params::schema_of::<T::Params<'static>>()
    }

    fn output_schema(&self) -> Option<Value> {
        crate::result_schema::output_schema_of::<T::Result>()
    }

    fn enabled(&self, provider: &SkillsProvider) -> bool {
        Tool::enabled(self, provider)
    }

    fn listed(&self, provider: &SkillsProvider) -> bool {
        Tool::listed(self, provider)
    }

    fn specialise(&self, provider: &SkillsProvider, skills: Option<&[&str]>, schema: &mut Value) {
        Tool::specialise(self, provider, skills, schema);
    }

    fn intent(&self, provider: &SkillsProvider, arguments: Arguments<'_>) -> CallIntent {
        params::decode::<T::Params<'_>>(T::NAME, arguments)
            .map(|params| Tool::intent(self, provider, &params))
            .unwrap_or_default()
    }

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        arguments: Arguments<'a>,
    ) -> PrepareFuture<'a> {
        match params::decode::<T::Params<'a>>(T::NAME, arguments) {
            Ok(params) => {
                // Decoded once: the effect is told from the same parameters the call runs with.
                let effect = Tool::intent(self, provider, &params).effect;
                let prepared = Tool::prepare(self, provider, params);
                Box::pin(async move {
                    let mut prepared = prepared.await?;
                    prepared.effect = effect;
                    Ok(prepared)
                })
            }
            Err(error) => Box::pin(std::future::ready(Err(ToolOutcome::invalid_params(
                error.0,
            )))),
        }
    }
}

/// A built-in tool with its derived schemas, computed once per process.
pub struct Builtin {
    pub(crate) tool: &'static dyn BuiltinTool,
    pub(crate) schema: Value,
    pub(crate) output_schema: Option<Value>,
}

/// Every built-in tool, the skills profile's first, in the order models are offered them.
pub(crate) static BUILTINS: LazyLock<Vec<Builtin>> = LazyLock::new(|| {
    tools::ALL
        .iter()
        .map(|tool| Builtin {
            tool: *tool,
            schema: tool.schema(),
            output_schema: tool.output_schema(),
        })
        .collect()
});

/// Every name the runtime answers itself, in either profile: no `tools.json` tool may take
/// one ([`skillbox_core::tool_names::ToolOwnership`] refuses them).
#[must_use]
pub fn reserved_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = tools::ALL.iter().map(|tool| tool.name()).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Whether calls of the built-in tool `name` load skills ([`ToolFacts::loads_skills`]).
#[must_use]
pub fn loads_skills(name: &str) -> bool {
    tools::ALL
        .iter()
        .any(|tool| tool.name() == name && tool.facts().loads_skills)
}

/// The name of the built-in tool whose calls load skills (`load_skill`).
#[must_use]
pub fn skill_loader() -> &'static str {
    use crate::registry::Tool as _;
    tools::load_skill::LoadSkill::NAME
}

/// The arguments of a call of [`skill_loader`] that loads `skill` with `arguments` (as a
/// person types them after its name): what an agent runs for a model's call that names a skill
/// instead of a tool.
#[must_use]
pub fn loading_arguments(skill: &str, arguments: Option<String>) -> Value {
    tools::load_skill::arguments_loading(skill, arguments)
}

/// Whether `name` is a built-in tool's, in either profile.
#[must_use]
pub fn is_reserved(name: &str) -> bool {
    tools::ALL.iter().any(|tool| tool.name() == name)
}

/// `name` as a built-in tool's name, for labels that must come from a fixed set (metrics).
#[must_use]
pub fn known_name(name: &str) -> Option<&'static str> {
    tools::ALL
        .iter()
        .map(|tool| tool.name())
        .find(|known| *known == name)
}

/// The names of the Skills Protocol's tools, in the seed's order.
#[must_use]
pub fn protocol_names() -> Vec<&'static str> {
    tools::ALL
        .iter()
        .filter(|tool| tool.facts().profiles.protocol)
        .map(|tool| tool.name())
        .collect()
}

/// A tool found by name: a built-in, or a skill's tool.
#[derive(Clone)]
pub enum ToolRef {
    /// A built-in tool.
    Builtin(&'static Builtin),
    /// A `tools.json` tool or a tool made with `define_tool`.
    Skill {
        /// The skill that answers it.
        skill: Arc<Skill>,
        /// The tool as declared.
        tool: ToolDefinition,
    },
    /// A tool of a skill's MCP server, held by the caller's conversation.
    Server {
        /// The server.
        server: Arc<crate::servers::SkillServer>,
        /// The tool as the server listed it.
        tool: crate::servers::ServerTool,
    },
}

impl std::fmt::Debug for ToolRef {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.name())
    }
}

/// The facts of every tool of a skill's MCP server: code of the skill's runs (the server), and
/// it may reach the world (a server over HTTP, or one the skill's network policy lets out).
const SERVER_TOOL_FACTS: ToolFacts = ToolFacts {
    annotations: Annotations {
        open_world: true,
        ..Annotations::ACTS
    },
    ..SKILL_TOOL_FACTS
};

/// The facts of every skill tool.
const SKILL_TOOL_FACTS: ToolFacts = ToolFacts {
    profiles: Profiles::SKILLS,
    runs_code: RunsCode::Always,
    reads_files: ReadsFiles::Never,
    mutating: false,
    loads_skills: false,
    needs_services: false,
    params_size: ParamsSize::Run,
    annotations: Annotations::ACTS,
};

impl ToolRef {
    /// The tool's name.
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            ToolRef::Builtin(builtin) => builtin.tool.name(),
            ToolRef::Skill { tool, .. } => &tool.name,
            ToolRef::Server { tool, .. } => &tool.offered_name,
        }
    }

    /// Its facts.
    #[must_use]
    pub fn facts(&self) -> &'static ToolFacts {
        match self {
            ToolRef::Builtin(builtin) => builtin.tool.facts(),
            ToolRef::Skill { .. } => &SKILL_TOOL_FACTS,
            ToolRef::Server { .. } => &SERVER_TOOL_FACTS,
        }
    }

    /// Whether every failure it answers says its kind (see [`Tool::TYPES_FAILURES`]).
    #[must_use]
    pub fn types_failures(&self) -> bool {
        match self {
            ToolRef::Builtin(builtin) => builtin.tool.types_failures(),
            ToolRef::Skill { .. } | ToolRef::Server { .. } => false,
        }
    }

    /// Whether a call of it may run code with this provider.
    #[must_use]
    pub fn runs_code(&self, provider: &SkillsProvider) -> bool {
        match self.facts().runs_code {
            RunsCode::Never => false,
            RunsCode::Always => true,
            RunsCode::WhenCommandsRun => provider.runs_commands_on_load(),
        }
    }

    /// The skill that owns it, for a skill's tool.
    #[must_use]
    pub fn owner(&self) -> Option<&Arc<Skill>> {
        match self {
            ToolRef::Builtin(_) | ToolRef::Server { .. } => None,
            ToolRef::Skill { skill, .. } => Some(skill),
        }
    }

    /// A label for metrics: the built-in's name, or `skill_tool` (skill tools are many).
    #[must_use]
    pub fn metric_label(&self) -> &'static str {
        match self {
            ToolRef::Builtin(builtin) => builtin.tool.name(),
            ToolRef::Skill { .. } => "skill_tool",
            ToolRef::Server { .. } => "server_tool",
        }
    }

    /// Its definition as this provider offers it to a caller who may see every skill a model
    /// may see.
    #[must_use]
    pub fn spec(&self, provider: &SkillsProvider) -> ToolSpec {
        self.spec_within(provider, None)
    }

    /// Its definition as this provider offers it to a caller who may see only `skills` (a
    /// sub-agent's share of the catalog; `None`: every skill a model may see).
    #[must_use]
    pub fn spec_within(&self, provider: &SkillsProvider, skills: Option<&[&str]>) -> ToolSpec {
        match self {
            ToolRef::Builtin(builtin) => {
                let mut parameters = builtin.schema.clone();
                builtin.tool.specialise(provider, skills, &mut parameters);
                ToolSpec {
                    name: builtin.tool.name().to_owned(),
                    description: builtin.tool.description().to_owned(),
                    parameters,
                }
            }
            ToolRef::Skill { tool, .. } => ToolSpec {
                name: tool.name.clone(),
                description: tool.description.clone(),
                parameters: tool.input_schema.clone(),
            },
            ToolRef::Server { tool, .. } => tool.spec(),
        }
    }

    /// The JSON Schema every successful answer of it matches, when its answers are objects of
    /// a fixed shape (a built-in's typed result): MCP's `outputSchema`. A skill's or a
    /// server's tool answers whatever its code returns: none.
    #[must_use]
    pub fn output_schema(&self) -> Option<&Value> {
        match self {
            ToolRef::Builtin(builtin) => builtin.output_schema.as_ref(),
            ToolRef::Skill { .. } | ToolRef::Server { .. } => None,
        }
    }

    /// Decode the arguments, check the call and return its job.
    pub(crate) fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        arguments: Arguments<'a>,
    ) -> PrepareFuture<'a> {
        match self {
            ToolRef::Builtin(builtin) => builtin.tool.prepare(provider, arguments),
            ToolRef::Skill { skill, tool } => {
                tools::skill_tool::prepare(provider, skill, tool, arguments)
            }
            ToolRef::Server { server, tool } => {
                crate::servers::prepare_call(server, tool, arguments)
            }
        }
    }
}

fn builtin_in(offer: Offer<'_>, provider: &SkillsProvider, builtin: &Builtin) -> bool {
    let tool = builtin.tool;
    let profiles = tool.facts().profiles;
    match offer {
        Offer::Profile(ToolProfile::Skills) => profiles.skills && tool.listed(provider),
        Offer::Profile(ToolProfile::Protocol) => profiles.protocol && tool.listed(provider),
        Offer::Rpc => (profiles.protocol || profiles.rpc_extension) && tool.enabled(provider),
        Offer::Everything => tool.enabled(provider),
        Offer::Named(names) => {
            profiles.skills && tool.listed(provider) && names.contains(tool.name())
        }
    }
}

fn skill_tools_in(offer: Offer<'_>) -> bool {
    matches!(
        offer,
        Offer::Profile(ToolProfile::Skills) | Offer::Everything | Offer::Named(_)
    )
}

/// The tool `name` as offered to a caller holding `servers`, or `None` when this caller has
/// no such tool: a built-in first, then a tool of the skill servers the caller holds (offered
/// wherever skills' own tools are; a server tool's name always holds `__`, which no built-in's
/// does), then a skill's own tool. A held server's tool wins over a `tools.json` tool of
/// another skill that took its name, so no skill can intercept calls meant for a server.
#[must_use]
pub fn lookup_held(
    provider: &SkillsProvider,
    offer: Offer<'_>,
    servers: Option<&crate::servers::ServerHolds>,
    name: &str,
) -> Option<ToolRef> {
    let found = lookup(provider, offer, name);
    if matches!(found, Some(ToolRef::Builtin(_))) || !skill_tools_in(offer) {
        return found;
    }
    if let Offer::Named(names) = offer
        && !names.contains(name)
    {
        return None;
    }
    servers
        .and_then(|servers| servers.find(name))
        .map(|(server, tool)| ToolRef::Server { server, tool })
        .or(found)
}

/// The tools of the skill servers `servers` holds, as a caller offered `offer` sees them (none
/// outside the skills profile), leaving out any whose name a built-in has. A caller listing
/// them drops any skill tool of the same name ([`lookup_held`] calls the server's).
#[must_use]
pub fn held_server_tools(offer: Offer<'_>, servers: &crate::servers::ServerHolds) -> Vec<ToolRef> {
    if !skill_tools_in(offer) {
        return Vec::new();
    }
    servers
        .tools()
        .into_iter()
        .filter(|(_, tool)| !is_reserved(&tool.offered_name))
        .map(|(server, tool)| ToolRef::Server { server, tool })
        .collect()
}

/// A caller's tool list with the tools of the skill servers it holds: `base` (the tools it is
/// offered without them, in any shape, named by `name`) less any whose name a held server
/// tool has (calls of the name go to the server, see [`lookup_held`]), then `held` (from
/// [`held_server_tools`], in the same shape). The one rule every door lists held tools by.
#[must_use]
pub fn with_held_server_tools<T>(base: &[T], held: Vec<T>, name: impl Fn(&T) -> &str) -> Vec<T>
where
    T: Clone,
{
    let held_names: BTreeSet<&str> = held.iter().map(&name).collect();
    let mut tools: Vec<T> = base
        .iter()
        .filter(|tool| !held_names.contains(name(tool)))
        .cloned()
        .collect();
    tools.extend(held);
    tools
}

/// The tool `name` as offered to a caller, or `None` when this caller has no such tool.
/// Built-ins come first (the skills profile's before the protocol's), then skills' tools.
#[must_use]
pub fn lookup(provider: &SkillsProvider, offer: Offer<'_>, name: &str) -> Option<ToolRef> {
    if let Some(builtin) = BUILTINS
        .iter()
        .find(|builtin| builtin.tool.name() == name && builtin_in(offer, provider, builtin))
    {
        return Some(ToolRef::Builtin(builtin));
    }
    if !skill_tools_in(offer) {
        return None;
    }
    if let Offer::Named(names) = offer
        && !names.contains(name)
    {
        return None;
    }
    provider
        .skill_tool(name)
        .map(|(skill, tool)| ToolRef::Skill { skill, tool })
}

/// Every tool a caller is offered, in order: the built-ins (each name once), then the skills'
/// tools, then `define_tool` and `remove_tool`.
#[must_use]
pub fn offered(provider: &SkillsProvider, offer: Offer<'_>) -> Vec<ToolRef> {
    let mut seen = BTreeSet::new();
    let mut found: Vec<ToolRef> = Vec::new();
    let mut late: Vec<ToolRef> = Vec::new();
    for builtin in BUILTINS.iter() {
        if builtin_in(offer, provider, builtin) && seen.insert(builtin.tool.name()) {
            if builtin.tool.facts().mutating {
                late.push(ToolRef::Builtin(builtin));
            } else {
                found.push(ToolRef::Builtin(builtin));
            }
        }
    }
    if skill_tools_in(offer) {
        found.extend(
            provider
                .skill_tools()
                .into_iter()
                .filter(|(_, tool)| match offer {
                    Offer::Named(names) => names.contains(&tool.name),
                    _ => true,
                })
                .map(|(skill, tool)| ToolRef::Skill { skill, tool }),
        );
    }
    found.extend(late);
    found
}

/// The definitions of the tools a caller is offered, ready for any provider format.
#[must_use]
pub fn specs(provider: &SkillsProvider, offer: Offer<'_>) -> Vec<ToolSpec> {
    offered(provider, offer)
        .iter()
        .map(|tool| tool.spec(provider))
        .collect()
}

/// What a call of the built-in tool `name` with `arguments` concerns and would change, told
/// without running it ([`Tool::intent`]): what an agent checks before a call (a sub-agent's
/// scope, a `context: fork` skill) and an eval notes of a model's call. Nothing for a skill's
/// or a server's tool, or arguments that do not decode.
#[must_use]
pub fn intent_of(provider: &SkillsProvider, name: &str, arguments: Arguments<'_>) -> CallIntent {
    BUILTINS
        .iter()
        .find(|builtin| builtin.tool.name() == name)
        .map(|builtin| builtin.tool.intent(provider, arguments))
        .unwrap_or_default()
}

/// The answer to a call of a tool this caller is not offered: the same text at every door.
#[must_use]
pub fn unknown_tool(provider: &SkillsProvider, offer: Offer<'_>, name: &str) -> ToolOutcome {
    let names: Vec<String> = offered(provider, offer)
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect();
    ToolOutcome::with_status(
        CallStatus::UnknownTool,
        format!(
            "unknown tool `{}`; the tools are: {}",
            name,
            names.join(", ")
        ),
    )
}
