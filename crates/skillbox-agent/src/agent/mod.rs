//! The agent loop. One turn: the person's input goes in, the model is asked, the tools it
//! calls run (concurrently, results returned in the order asked), and so on until it answers
//! or `max_rounds` ends the turn. Skill semantics of seed 003 are applied here: a loaded
//! skill's `model` override, its `allowed-tools` (when enforced), `context: fork` sub-agents
//! and `/name args` user invocation; seed 004's tools that appear when their skill is loaded;
//! and the host's approval before any code runs.
//!
//! The files follow the turn: `turn.rs` (a turn and its rounds), `offer.rs` (what a round
//! offers the model), `calls.rs` (how a round's calls are checked and answered, through the
//! door policy every door uses), `bound.rs` (`allowed-tools` as a bound), `fork.rs`
//! (sub-agents).

pub(crate) mod bound;
mod calls;
mod fork;
mod offer;
#[cfg(test)]
mod tests;
mod turn;

use std::sync::{Arc, Mutex};

use skillbox_tools::{
    Approval, ApprovalPolicy, Arguments, Door, DoorPolicy, LiveProvider, PromptFormat,
    SkillsProvider,
};
use skillbox_tools::{LoadedSkill, ToolEffect, registry};

use crate::client::ModelClient;
use crate::conversation::{Conversation, Message, ToolCall};
use crate::transcript::Transcript;

pub use turn::{Turn, TurnInput};

use fork::is_fork;
use offer::RoundOffer;
use turn::{invoked_skill, not_run};

/// Model calls one turn makes at most before it is ended.
pub const DEFAULT_MAX_ROUNDS: u32 = 10;
/// Tokens the model may generate per call by default.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 4096;
/// The same call (tool and arguments) made this many times in one turn is not run again.
pub const MAX_IDENTICAL_CALLS: u32 = 3;
/// Tool calls of one response answered at most; the rest get an error saying so.
pub const MAX_CALLS_PER_ROUND: usize = 32;
/// How deep `context: fork` sub-agents nest: a sub-agent loads fork skills inline.
pub const MAX_FORK_DEPTH: u32 = 1;
/// Why calls a resumed conversation holds without results were not run.
const INTERRUPTED: &str = "the conversation was interrupted";
/// The base prompt when the person gives none.
pub const DEFAULT_BASE_PROMPT: &str = "You are a helpful assistant. Call a tool only when you need information or an action you cannot get otherwise. When a tool result is available, use it to answer the user in plain text.";

/// How the agent behaves.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The model asked (unless a loaded skill overrides it).
    pub model: String,
    /// The person's part of the system prompt; the skills section follows it.
    pub base_prompt: String,
    /// Model calls per turn at most.
    pub max_rounds: u32,
    /// Tokens per model call at most.
    pub max_output_tokens: u32,
    /// Sampling temperature, when set.
    pub temperature: Option<f32>,
    /// How the skills section is written.
    pub prompt_format: PromptFormat,
    /// Offer a skill's `tools.json` tools only once its `load_skill` succeeded (seed 004):
    /// keeps the tool list short for large catalogs.
    pub tools_on_load: bool,
    /// Hold calls to the `allowed-tools` of the restricted skills loaded (`load_skill` always
    /// passes): a bound the model can narrow but never widen; only the person sets it anew,
    /// by invoking a skill (`/name`).
    pub enforce_allowed_tools: bool,
}

impl AgentOptions {
    /// Options with defaults for `model`.
    #[must_use]
    pub fn new(model: impl Into<String>) -> Self {
        AgentOptions {
            model: model.into(),
            base_prompt: DEFAULT_BASE_PROMPT.to_owned(),
            max_rounds: DEFAULT_MAX_ROUNDS,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            temperature: None,
            prompt_format: PromptFormat::Markdown,
            tools_on_load: false,
            enforce_allowed_tools: false,
        }
    }
}

/// Where the agent gets its skills: a fixed provider, or a live one a watcher reloads (each
/// round then sees the newest catalog).
#[derive(Debug, Clone)]
pub enum ProviderSource {
    /// One provider for the agent's life.
    Fixed(Arc<SkillsProvider>),
    /// The provider a [`LiveProvider`] holds when each round begins.
    Live(Arc<LiveProvider>),
}

impl ProviderSource {
    fn current(&self) -> Arc<SkillsProvider> {
        match self {
            ProviderSource::Fixed(provider) => Arc::clone(provider),
            ProviderSource::Live(live) => live.current(),
        }
    }
}

/// Skills driving a model: a skill source, a model client, options and an approval hook.
/// Clones share all four, and the last rendered [`RoundOffer`].
#[derive(Clone)]
pub struct Agent {
    skills: ProviderSource,
    client: Arc<dyn ModelClient>,
    options: Arc<AgentOptions>,
    approval: Arc<dyn Approval>,
    /// The door policy the calls go through (the server's own, in the web chat).
    policy: Arc<DoorPolicy>,
    /// The door's name in logs and metrics.
    door: Door,
    last_offer: Arc<Mutex<Option<Arc<RoundOffer>>>>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent over `skills`, asking `client`; every call that runs code is approved until
    /// [`Agent::with_approval`] says otherwise.
    #[must_use]
    pub fn new(
        skills: ProviderSource,
        client: Arc<dyn ModelClient>,
        options: AgentOptions,
    ) -> Self {
        Agent {
            skills,
            client,
            options: Arc::new(options),
            approval: Arc::new(ApprovalPolicy::Allow),
            policy: Arc::new(DoorPolicy::default()),
            door: Door::Agent,
            last_offer: Arc::default(),
        }
    }

    /// Call tools through `policy` (its run queue and blocking pool) as the door `door`,
    /// instead of a policy of its own: a server's chat shares the server's.
    #[must_use]
    pub fn with_policy(mut self, policy: Arc<DoorPolicy>, door: Door) -> Self {
        self.policy = policy;
        self.door = door;
        self
    }

    /// Decide calls that run code with `approval`.
    #[must_use]
    pub fn with_approval(mut self, approval: Arc<dyn Approval>) -> Self {
        self.approval = approval;
        self
    }

    /// The options.
    #[must_use]
    pub fn options(&self) -> &AgentOptions {
        &self.options
    }

    /// The provider in effect now.
    #[must_use]
    pub fn provider(&self) -> Arc<SkillsProvider> {
        self.skills.current()
    }

    /// A new conversation, saved to `transcript` when given.
    #[must_use]
    pub fn conversation(&self, transcript: Option<Transcript>) -> Conversation {
        let id = transcript.as_ref().map_or_else(
            || uuid::Uuid::now_v7().simple().to_string(),
            |transcript| transcript.header().id.clone(),
        );
        Conversation::new(id, self.options.enforce_allowed_tools, transcript)
    }

    /// A conversation continued from saved messages: the skills it loaded or the person
    /// invoked are loaded again, in order (active skill, tools, the `allowed-tools` bound),
    /// calls left without results (an interrupted turn) are answered as not run, so the
    /// history is valid for every provider, and the history is kept within its bound.
    #[must_use]
    pub fn resume(&self, transcript: Option<Transcript>, messages: Vec<Message>) -> Conversation {
        let mut conversation = self.conversation(transcript);
        let provider = self.skills.current();
        let mut pending: Vec<ToolCall> = Vec::new();
        let mut restored = Vec::with_capacity(messages.len());
        for message in messages {
            match &message {
                Message::Tool { results } => {
                    for call in pending.drain(..) {
                        let answered = results
                            .iter()
                            .any(|result| result.call_id == call.id && !result.is_error);
                        // A fork skill ran in a sub-agent: it never became the parent's
                        // active skill, so resuming does not make it one either.
                        if answered
                            && let Some(ToolEffect::LoadsSkill(loaded)) = registry::intent_of(
                                &provider,
                                &call.name,
                                Arguments::Text(&call.arguments),
                            )
                            .effect
                            && !is_fork(&loaded.skill)
                        {
                            conversation.activate(&loaded.skill);
                        }
                    }
                }
                other => {
                    if let Message::User { content } = other
                        && let Some(name) = invoked_skill(content)
                        && let Some(skill) = provider.catalog().get(name).cloned()
                        && !is_fork(&skill)
                    {
                        conversation.activate_invoked(&skill);
                    }
                    if !pending.is_empty() {
                        restored.push(not_run(&pending, INTERRUPTED));
                        pending.clear();
                    }
                    if let Message::Assistant { tool_calls, .. } = other {
                        pending.clone_from(tool_calls);
                    }
                }
            }
            restored.push(message);
        }
        // The servers of the skills it had loaded start again before its next turn.
        conversation.servers_to_restart = conversation
            .loaded
            .iter()
            .filter(|name| {
                provider.catalog().get(name).is_some_and(|skill| {
                    LoadedSkill::new(&provider, Arc::clone(skill)).declares_servers()
                })
            })
            .cloned()
            .collect();
        conversation.restore(restored);
        if !pending.is_empty() {
            // Saved too: the calls are the transcript's last lines, so the answer follows them.
            conversation.push(not_run(&pending, INTERRUPTED));
        }
        conversation.session.clear_model_override();
        conversation
    }

    /// Read what the person typed: `/name args` invokes the skill `name` when a skill of that
    /// name exists and people may invoke it; anything else is a prompt.
    ///
    /// # Errors
    /// A message when `/name` names no skill a person may invoke.
    pub fn read_input(&self, text: &str) -> Result<TurnInput, String> {
        let Some(rest) = text.trim_start().strip_prefix('/') else {
            return Ok(TurnInput::Prompt(text.to_owned()));
        };
        let (name, arguments) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let looks_like_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
        if !looks_like_name {
            return Ok(TurnInput::Prompt(text.to_owned()));
        }
        let provider = self.skills.current();
        match provider.catalog().get(name) {
            Some(skill) if skill.user_invocable() => Ok(TurnInput::Invoke {
                skill: skill.name().to_owned(),
                arguments: arguments.trim().to_owned(),
            }),
            Some(_) => Err(format!(
                "the skill `{name}` cannot be invoked by people (user-invocable: false)"
            )),
            None => Err(format!(
                "no skill `/{name}`; /skills lists the skills you can invoke"
            )),
        }
    }
}
