//! The agent loop. One turn: the person's input goes in, the model is asked, the tools it
//! calls run (concurrently, results returned in the order asked), and so on until it answers
//! or `max_rounds` ends the turn. Skill semantics of seed 003 are applied here: a loaded
//! skill's `model` override, its `allowed-tools` (when enforced), `context: fork` sub-agents
//! and `/name args` user invocation; seed 004's tools that appear when their skill is loaded;
//! and the host's approval before any code runs.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;
use skillbox_core::Skill;
use skillbox_tools::{
    LiveProvider, PromptFormat, Session, SkillsProvider, ToolOutcome, ToolProfile, ToolSpec,
    builtin_tools,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::approval::{Approval, ApprovalDecision, ApprovalPolicy, ApprovalRequest};
use crate::conversation::{Message, ToolCall, ToolResult, Usage};
use crate::events::{AgentEvent, TurnEnd};
use crate::model::{ModelClient, ModelEvent, ModelRequest};
use crate::transcript::Transcript;
use crate::wire::excerpt;

/// Model calls one turn makes at most before it is ended.
pub const DEFAULT_MAX_ROUNDS: u32 = 10;
/// Tokens the model may generate per call by default.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 4096;
/// The same call (tool and arguments) made this many times in one turn is not run again.
pub const MAX_IDENTICAL_CALLS: u32 = 3;
/// Tool calls of one response answered at most; the rest get an error saying so.
pub const MAX_CALLS_PER_ROUND: usize = 32;
/// Tool calls of one response that run at once (the rest wait their turn).
pub const MAX_CONCURRENT_CALLS: usize = 4;
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
    /// Refuse calls outside the active skill's `allowed-tools` (`load_skill` always passes).
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
pub enum SkillSource {
    /// One provider for the agent's life.
    Fixed(Arc<SkillsProvider>),
    /// The provider a [`LiveProvider`] holds when each round begins.
    Live(Arc<LiveProvider>),
}

impl SkillSource {
    fn current(&self) -> Arc<SkillsProvider> {
        match self {
            SkillSource::Fixed(provider) => Arc::clone(provider),
            SkillSource::Live(live) => live.current(),
        }
    }
}

/// A conversation: its messages, the skill state of seed 003, and its transcript.
#[derive(Debug)]
pub struct Conversation {
    id: String,
    messages: Vec<Message>,
    session: Session,
    /// Skills loaded so far (their tools are offered in tools-on-load mode).
    loaded: BTreeSet<String>,
    /// Skills the person invoked: the model may use them even when hidden from it.
    invoked: BTreeSet<String>,
    transcript: Option<Transcript>,
    transcript_failed: bool,
}

impl Conversation {
    /// An empty conversation with this skill state, saved to `transcript` when given.
    fn new(id: String, session: Session, transcript: Option<Transcript>) -> Self {
        Conversation {
            id,
            messages: Vec::new(),
            session,
            loaded: BTreeSet::new(),
            invoked: BTreeSet::new(),
            transcript,
            transcript_failed: false,
        }
    }

    /// The conversation's id (its transcript's, when it has one).
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The messages so far.
    #[must_use]
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The skill loaded last.
    #[must_use]
    pub fn active_skill(&self) -> Option<&str> {
        self.session.active_skill()
    }

    /// `skill` was loaded: it is the active skill, and its tools are offered in tools-on-load
    /// mode.
    fn activate(&mut self, skill: &Skill) {
        self.session.activate(skill);
        self.loaded.insert(skill.name().to_owned());
    }

    fn push(&mut self, message: Message) {
        if let Some(transcript) = &mut self.transcript
            && let Err(error) = transcript.append(&message)
            && !self.transcript_failed
        {
            self.transcript_failed = true;
            tracing::warn!(
                "cannot write the transcript {}: {error}; the conversation goes on unsaved",
                transcript.path().display()
            );
        }
        self.messages.push(message);
    }
}

/// One turn under way: its events as a stream, a handle to cancel it, and the conversation
/// back when it is over.
#[derive(Debug)]
pub struct Turn {
    events: mpsc::UnboundedReceiver<AgentEvent>,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<Conversation>,
}

impl Turn {
    /// The next event; `None` once the turn is over.
    pub async fn next_event(&mut self) -> Option<AgentEvent> {
        self.events.recv().await
    }

    /// A token that cancels the turn: the model call stops, running tools are killed, the
    /// conversation keeps what happened.
    #[must_use]
    pub fn canceller(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// The conversation after the turn.
    ///
    /// # Errors
    /// When the turn's task panicked (a bug).
    pub async fn finish(self) -> Result<Conversation, tokio::task::JoinError> {
        self.task.await
    }
}

impl futures_util::Stream for Turn {
    type Item = AgentEvent;

    fn poll_next(
        mut self: Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<AgentEvent>> {
        self.events.poll_recv(context)
    }
}

/// What the person typed, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnInput {
    /// A prompt for the model.
    Prompt(String),
    /// `/name args`: invoke a skill.
    Invoke {
        /// The skill.
        skill: String,
        /// The rest of the line.
        arguments: String,
    },
}

/// Skills an agent (or a sub-agent) may use: all of the provider's, or a subset.
#[derive(Debug, Clone, Default)]
struct Scope {
    allowed: Option<Arc<BTreeSet<String>>>,
    depth: u32,
    /// A sub-agent's bound: its fork skill's `allowed-tools`, which hold whatever skill the
    /// sub-agent loads next (loading one must not widen them).
    bound: Option<Session>,
}

impl Scope {
    fn allows(&self, skill: &str) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|allowed| allowed.contains(skill))
    }
}

type Emit<'a> = &'a (dyn Fn(AgentEvent) + Send + Sync);

/// How a call of one round is answered.
enum Plan {
    /// With this outcome, without running anything.
    Answer(ToolOutcome),
    /// Through the provider.
    Run(Value),
    /// By a sub-agent running this skill.
    Fork {
        skill: Arc<Skill>,
        arguments: Option<String>,
    },
}

/// The loop's state over one turn (or one sub-agent run).
struct Round<'a> {
    scope: &'a Scope,
    model: String,
    usage: Usage,
    rounds: u32,
    identical: BTreeMap<String, u32>,
    emit: Emit<'a>,
    cancel: &'a CancellationToken,
}

/// What a round offers the model: the system prompt and the tools, with the provider they
/// were rendered from. Rendering walks the whole catalog (milliseconds for a thousand
/// skills), so the agent keeps the last offer and uses it again while nothing it depends on
/// changed.
#[derive(Debug)]
struct Offer {
    /// The provider rendered from; holding it keeps the pointer comparison sound (a provider
    /// a reload replaced cannot be freed and another take its address while it is kept).
    provider: Arc<SkillsProvider>,
    /// In tools-on-load mode, the loaded skills the tools were chosen for.
    loaded: Option<BTreeSet<String>>,
    system: Arc<str>,
    tools: Vec<ToolSpec>,
    /// The tools' names, to check the calls against.
    names: BTreeSet<String>,
}

/// Skills driving a model: a skill source, a model client, options and an approval hook.
/// Clones share all four, and the last rendered [`Offer`].
#[derive(Clone)]
pub struct Agent {
    skills: SkillSource,
    client: Arc<dyn ModelClient>,
    options: Arc<AgentOptions>,
    approval: Arc<dyn Approval>,
    last_offer: Arc<Mutex<Option<Arc<Offer>>>>,
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
    pub fn new(skills: SkillSource, client: Arc<dyn ModelClient>, options: AgentOptions) -> Self {
        Agent {
            skills,
            client,
            options: Arc::new(options),
            approval: Arc::new(ApprovalPolicy::Allow),
            last_offer: Arc::default(),
        }
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
        Conversation::new(
            id,
            Session::new(self.options.enforce_allowed_tools),
            transcript,
        )
    }

    /// A conversation continued from saved messages: the skills it loaded are loaded again
    /// (active skill, tools), and calls left without results (an interrupted turn) are
    /// answered as not run, so the history is valid for every provider.
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
                        let loaded = call.name == "load_skill"
                            && results
                                .iter()
                                .any(|result| result.call_id == call.id && !result.is_error);
                        // A fork skill ran in a sub-agent: it never became the parent's
                        // active skill, so resuming does not make it one either.
                        if loaded
                            && let Some(skill) =
                                provider.loaded_skill(&Value::String(call.arguments))
                            && !is_fork(&skill)
                        {
                            conversation.activate(&skill);
                        }
                    }
                }
                other => {
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
        conversation.messages = restored;
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

    /// Start a turn on `input` in the background; read its events from the returned
    /// [`Turn`], then take the conversation back with [`Turn::finish`].
    pub fn run(&self, mut conversation: Conversation, input: TurnInput) -> Turn {
        let (sender, events) = mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let agent = self.clone();
        let token = cancel.clone();
        let task = tokio::spawn(async move {
            let emit = move |event: AgentEvent| {
                let _ = sender.send(event);
            };
            agent
                .run_turn(&mut conversation, input, &emit, &token)
                .await;
            conversation
        });
        Turn {
            events,
            cancel,
            task,
        }
    }

    /// Run one turn to its end in the caller's task, reporting to `emit`.
    pub async fn run_turn(
        &self,
        conversation: &mut Conversation,
        input: TurnInput,
        emit: Emit<'_>,
        cancel: &CancellationToken,
    ) -> TurnEnd {
        let provider = self.skills.current();
        let scope = Scope::default();
        let mut round = Round {
            scope: &scope,
            model: self.options.model.clone(),
            usage: Usage::default(),
            rounds: 0,
            identical: BTreeMap::new(),
            emit,
            cancel,
        };
        emit(AgentEvent::TurnStarted {
            conversation: conversation.id.clone(),
            model: round.model.clone(),
        });
        let end = match input {
            TurnInput::Prompt(text) => {
                conversation.push(Message::user(text));
                self.run_loop(conversation, &mut round).await
            }
            TurnInput::Invoke { skill, arguments } => {
                self.invoke(&provider, conversation, &skill, &arguments, &mut round)
                    .await
            }
        };
        conversation.session.clear_model_override();
        if let Some(transcript) = &mut conversation.transcript {
            let _ = transcript.record_turn(end, round.rounds, round.usage);
        }
        end
    }

    /// `/name args`: the skill's instructions, arguments substituted, become the person's
    /// message, and the skill is active; a fork skill runs as a sub-agent instead.
    async fn invoke(
        &self,
        provider: &SkillsProvider,
        conversation: &mut Conversation,
        name: &str,
        arguments: &str,
        round: &mut Round<'_>,
    ) -> TurnEnd {
        let emit = round.emit;
        let Some(skill) = provider.catalog().get(name).cloned() else {
            return finish_failed(
                round,
                format!("no skill `/{name}`; /skills lists the skills you can invoke"),
            );
        };
        emit(AgentEvent::SkillInvoked {
            skill: name.to_owned(),
            arguments: arguments.to_owned(),
        });
        let typed = if arguments.is_empty() {
            format!("/{name}")
        } else {
            format!("/{name} {arguments}")
        };
        conversation.invoked.insert(skill.name().to_owned());
        let raw = (!arguments.is_empty()).then_some(arguments);
        if is_fork(&skill) {
            conversation.push(Message::user(typed));
            let outcome = self
                .fork(provider, &skill, raw, round.scope, emit, round.cancel)
                .await;
            let text = outcome.text();
            conversation.push(Message::assistant(text.clone()));
            let end = if round.cancel.is_cancelled() {
                TurnEnd::Cancelled
            } else {
                TurnEnd::Answered
            };
            return finish(round, end, text);
        }
        let instructions = match provider.skill_instructions(&skill, raw).await {
            Ok(text) => text,
            Err(message) => return finish_failed(round, message),
        };
        conversation.push(Message::user(format!(
            "{typed}\n\nI invoked the skill `{name}`. Its instructions follow; carry them out.\n\n{instructions}"
        )));
        conversation.activate(&skill);
        if let Some(model) = skill.properties.model.clone() {
            round.model.clone_from(&model);
            emit(AgentEvent::ModelChanged {
                model,
                skill: name.to_owned(),
            });
        }
        self.run_loop(conversation, round).await
    }

    /// Ask the model, run its calls, and again, until it answers or the rounds run out.
    async fn run_loop(&self, conversation: &mut Conversation, round: &mut Round<'_>) -> TurnEnd {
        let emit = round.emit;
        loop {
            let current = self.skills.current();
            let provider = self.scoped_provider(&current, conversation);
            let offer = self.offer(&current, &provider, round.scope, &conversation.loaded);
            round.rounds += 1;
            let mut streamed = String::new();
            let answer = {
                let request = ModelRequest {
                    model: &round.model,
                    system: &offer.system,
                    messages: &conversation.messages,
                    tools: &offer.tools,
                    max_output_tokens: self.options.max_output_tokens,
                    temperature: self.options.temperature,
                };
                let mut on_event = |event: ModelEvent| match event {
                    ModelEvent::TextDelta(text) => {
                        streamed.push_str(&text);
                        emit(AgentEvent::TextDelta { text });
                    }
                    ModelEvent::Retry {
                        attempt,
                        reason,
                        delay_ms,
                    } => emit(AgentEvent::Retry {
                        attempt,
                        reason,
                        delay_ms,
                    }),
                };
                tokio::select! {
                    answer = self.client.respond(&request, &mut on_event) => Some(answer),
                    () = round.cancel.cancelled() => None,
                }
            };
            let response = match answer {
                None => {
                    if !streamed.is_empty() {
                        conversation.push(Message::assistant(format!("{streamed} [cancelled]")));
                    }
                    return finish(round, TurnEnd::Cancelled, String::new());
                }
                Some(Err(error)) => return finish_failed(round, error.to_string()),
                Some(Ok(response)) => response,
            };
            round.usage.add(&response.usage);
            emit(AgentEvent::Usage {
                round: round.rounds,
                usage: response.usage,
                turn: round.usage,
            });
            if response.tool_calls.is_empty() {
                let text = response.content.clone();
                conversation.push(response.into_message());
                return finish(round, TurnEnd::Answered, text);
            }
            let calls = response.tool_calls.clone();
            conversation.push(response.into_message());
            if round.rounds >= self.options.max_rounds {
                let reason = format!(
                    "not run: the turn reached its limit of {} rounds",
                    self.options.max_rounds
                );
                conversation.push(not_run(&calls, &reason));
                let names: BTreeSet<&str> = calls.iter().map(|call| call.name.as_str()).collect();
                let text = format!(
                    "Stopped after {} rounds: the model was still calling tools ({}). Ask it to go on, or allow more rounds (--max-rounds).",
                    round.rounds,
                    names.into_iter().collect::<Vec<_>>().join(", ")
                );
                return finish(round, TurnEnd::MaxRounds, text);
            }
            let Some(results) = self
                .answer_calls(&provider, conversation, &calls, &offer.names, round)
                .await
            else {
                conversation.push(not_run(&calls, "the user cancelled the turn"));
                return finish(round, TurnEnd::Cancelled, String::new());
            };
            conversation.push(Message::Tool { results });
        }
    }

    /// The provider for this conversation: `current` unlocking the skills the person invoked.
    fn scoped_provider(
        &self,
        current: &Arc<SkillsProvider>,
        conversation: &Conversation,
    ) -> Arc<SkillsProvider> {
        if conversation.invoked.is_empty() {
            Arc::clone(current)
        } else {
            Arc::new(current.with_unlocked(conversation.invoked.clone()))
        }
    }

    /// The system prompt and the tools offered this round: the last ones rendered while the
    /// provider in effect (`current`) and, in tools-on-load mode, the loaded skills are the
    /// same; when only the loaded skills changed, the tools alone are rendered again.
    /// Unlocking invoked skills changes neither, so `provider` (the scoped one) is not part of
    /// the key. Rendered every round: a sub-agent's share of the catalog, and a provider
    /// offering `define_tool` (a defined tool changes its tools in place).
    fn offer(
        &self,
        current: &Arc<SkillsProvider>,
        provider: &SkillsProvider,
        scope: &Scope,
        loaded: &BTreeSet<String>,
    ) -> Arc<Offer> {
        let wanted = self.options.tools_on_load.then_some(loaded);
        let reusable =
            scope.allowed.is_none() && !provider.offers_tool(ToolProfile::Skills, "define_tool");
        let same_provider = reusable
            .then(|| self.last_offer.lock().ok().and_then(|last| last.clone()))
            .flatten()
            .filter(|offer| Arc::ptr_eq(&offer.provider, current));
        if let Some(offer) = &same_provider
            && offer.loaded.as_ref() == wanted
        {
            return Arc::clone(offer);
        }
        let (system, visible_names) = match &same_provider {
            Some(offer) => (Arc::clone(&offer.system), None),
            None => self.render_system(provider, scope),
        };
        let tools = self.render_tools(provider, scope, loaded, visible_names.as_deref());
        let offer = Arc::new(Offer {
            provider: Arc::clone(current),
            loaded: wanted.cloned(),
            names: tools.iter().map(|tool| tool.name.clone()).collect(),
            system,
            tools,
        });
        if reusable && let Ok(mut last) = self.last_offer.lock() {
            *last = Some(Arc::clone(&offer));
        }
        offer
    }

    /// Render the system prompt; with a sub-agent's scope, also the names of the skills it
    /// lists.
    fn render_system(
        &self,
        provider: &SkillsProvider,
        scope: &Scope,
    ) -> (Arc<str>, Option<Vec<String>>) {
        let format = self.options.prompt_format;
        let (section, visible_names) = if scope.allowed.is_some() {
            let visible: Vec<Arc<Skill>> = provider
                .model_skills()
                .into_iter()
                .filter(|skill| scope.allows(skill.name()))
                .collect();
            let names: Vec<String> = visible
                .iter()
                .map(|skill| skill.name().to_owned())
                .collect();
            (provider.system_prompt_for(&visible, format), Some(names))
        } else {
            (provider.system_prompt(format), None)
        };
        let mut system = self.options.base_prompt.clone();
        if !section.is_empty() {
            if !system.is_empty() {
                system.push_str("\n\n");
            }
            system.push_str(&section);
        }
        if self.options.tools_on_load {
            system.push_str(
                "\n\nA skill's own tools become available after you load it with load_skill.",
            );
        }
        (Arc::from(system), visible_names)
    }

    /// Render the tools offered: `load_skill` naming `visible_names` when given, and the
    /// skills' own tools within the scope (in tools-on-load mode, of the `loaded` skills).
    fn render_tools(
        &self,
        provider: &SkillsProvider,
        scope: &Scope,
        loaded: &BTreeSet<String>,
        visible_names: Option<&[String]>,
    ) -> Vec<ToolSpec> {
        provider
            .tools(ToolProfile::Skills)
            .into_iter()
            .filter_map(|spec| match spec.name.as_str() {
                "load_skill" => Some(match visible_names {
                    Some(names) => builtin_tools::load_skill(
                        &names.iter().map(String::as_str).collect::<Vec<_>>(),
                    ),
                    None => spec,
                }),
                "use_skill" | "read_skill_file" | "define_tool" | "remove_tool" => Some(spec),
                name => match provider.tool_owner(name) {
                    Some(owner) => (scope.allows(owner.name())
                        && (!self.options.tools_on_load || loaded.contains(owner.name())))
                    .then_some(spec),
                    None => Some(spec),
                },
            })
            .collect()
    }

    /// Answer one round's calls: check each (offered, JSON, repeated, allowed, approved), run
    /// the ones that may run concurrently, and return the results in the order of the calls.
    /// `None` when the turn was cancelled meanwhile.
    async fn answer_calls(
        &self,
        provider: &SkillsProvider,
        conversation: &mut Conversation,
        calls: &[ToolCall],
        offered: &BTreeSet<String>,
        round: &mut Round<'_>,
    ) -> Option<Vec<ToolResult>> {
        let emit = round.emit;
        // What each call does: a call naming a skill is that skill's load_skill.
        let effective: Vec<ToolCall> = calls
            .iter()
            .map(|call| {
                skill_called_by_name(provider, call, offered, round.scope)
                    .unwrap_or_else(|| call.clone())
            })
            .collect();
        let mut plans = Vec::with_capacity(calls.len());
        for (position, (call, effective)) in calls.iter().zip(&effective).enumerate() {
            emit(AgentEvent::ToolCallStarted {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: serde_json::from_str::<Value>(&call.arguments)
                    .unwrap_or_else(|_| Value::String(call.arguments.clone())),
            });
            if position >= MAX_CALLS_PER_ROUND {
                plans.push(Plan::Answer(ToolOutcome::error(format!(
                    "not run: one response may make at most {MAX_CALLS_PER_ROUND} tool calls"
                ))));
                continue;
            }
            let parsed = serde_json::from_str::<Value>(&effective.arguments).ok();
            let plan = self
                .plan(provider, conversation, effective, parsed, offered, round)
                .await;
            plans.push(plan);
        }
        let scope = round.scope;
        let cancel = round.cancel;
        // At most MAX_CONCURRENT_CALLS run at once; join_all keeps the results in call order.
        let permits = tokio::sync::Semaphore::new(MAX_CONCURRENT_CALLS);
        let permits = &permits;
        let runs =
            calls
                .iter()
                .zip(&effective)
                .zip(plans)
                .map(|((call, effective), plan)| async move {
                    let _permit = permits.acquire().await;
                    let started = Instant::now();
                    let outcome = match plan {
                        Plan::Answer(outcome) => outcome,
                        Plan::Run(arguments) => {
                            provider.handle_tool_call(&effective.name, &arguments).await
                        }
                        Plan::Fork { skill, arguments } => {
                            self.fork(provider, &skill, arguments.as_deref(), scope, emit, cancel)
                                .await
                        }
                    };
                    let result = ToolResult {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        content: outcome.text(),
                        is_error: outcome.is_error,
                    };
                    emit(AgentEvent::ToolCallFinished {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        result: result.content.clone(),
                        is_error: result.is_error,
                        duration_ms: u64::try_from(started.elapsed().as_millis())
                            .unwrap_or(u64::MAX),
                    });
                    result
                });
        let results = tokio::select! {
            results = futures_util::future::join_all(runs) => results,
            () = cancel.cancelled() => return None,
        };
        for (call, result) in effective.iter().zip(&results) {
            if call.name != "load_skill" || result.is_error {
                continue;
            }
            let Some(skill) = provider.loaded_skill(&Value::String(call.arguments.clone())) else {
                continue;
            };
            if is_fork(&skill) && scope.depth < MAX_FORK_DEPTH {
                continue;
            }
            conversation.activate(&skill);
            if let Some(model) = &skill.properties.model
                && *model != round.model
            {
                round.model.clone_from(model);
                emit(AgentEvent::ModelChanged {
                    model: model.clone(),
                    skill: skill.name().to_owned(),
                });
            }
        }
        Some(results)
    }

    /// How to answer one call.
    async fn plan(
        &self,
        provider: &SkillsProvider,
        conversation: &Conversation,
        call: &ToolCall,
        parsed: Option<Value>,
        offered: &BTreeSet<String>,
        round: &mut Round<'_>,
    ) -> Plan {
        let name = call.name.as_str();
        if !offered.contains(name) {
            if let Some(owner) = provider.tool_owner(name)
                && round.scope.allows(owner.name())
            {
                return Plan::Answer(ToolOutcome::error(format!(
                    "the tool `{name}` comes with the skill `{}`: call load_skill with {{\"skill\": \"{}\"}} first",
                    owner.name(),
                    owner.name()
                )));
            }
            let known: Vec<&str> = offered.iter().map(String::as_str).collect();
            return Plan::Answer(ToolOutcome::error(format!(
                "unknown tool `{name}`; the tools are: {}",
                known.join(", ")
            )));
        }
        let arguments = match parsed {
            Some(value @ Value::Object(_)) => value,
            None if call.arguments.trim().is_empty() => Value::Object(serde_json::Map::new()),
            None => {
                return Plan::Answer(ToolOutcome::error(format!(
                    "the arguments of `{name}` are not valid JSON: {}; call it again with a JSON object",
                    excerpt(&call.arguments)
                )));
            }
            Some(_) => {
                return Plan::Answer(ToolOutcome::error(format!(
                    "the arguments of `{name}` must be a JSON object"
                )));
            }
        };
        let key = format!("{name} {}", canonical_json(&arguments));
        let seen = round.identical.entry(key).or_insert(0);
        *seen += 1;
        if *seen >= MAX_IDENTICAL_CALLS {
            return Plan::Answer(ToolOutcome::error(format!(
                "you already called `{name}` with these same arguments {} times in this turn, and the results are above; do not call it again: use those results, change the arguments, or answer the user",
                *seen - 1
            )));
        }
        let named_skill = matches!(name, "load_skill" | "use_skill" | "read_skill_file")
            .then(|| SkillsProvider::skill_named_in(&arguments))
            .flatten();
        if let Some(skill) = &named_skill
            && !round.scope.allows(skill)
        {
            return Plan::Answer(ToolOutcome::error(format!(
                "no skill named `{skill}` is available here"
            )));
        }
        if let Some(refusal) = conversation.session.refusal(name) {
            return Plan::Answer(refusal);
        }
        if let Some(bound) = &round.scope.bound
            && !bound.permits(name)
        {
            return Plan::Answer(ToolOutcome::error(format!(
                "the tool `{name}` is not in the allowed-tools of `{}` ({}), which bound this sub-agent",
                bound.active_skill().unwrap_or_default(),
                bound.allowed_tools().unwrap_or_default().join(", ")
            )));
        }
        if name == "define_tool" || provider.runs_code(name) {
            let skill = named_skill.or_else(|| {
                provider
                    .tool_owner(name)
                    .map(|owner| owner.name().to_owned())
            });
            let request = ApprovalRequest {
                tool: name.to_owned(),
                skill,
                arguments: arguments.clone(),
            };
            if let ApprovalDecision::Deny { reason } = self.approval.decide(&request).await {
                (round.emit)(AgentEvent::ApprovalDenied {
                    id: call.id.clone(),
                    name: name.to_owned(),
                    reason: reason.clone(),
                });
                return Plan::Answer(ToolOutcome::error(format!(
                    "the user did not allow this call ({reason}); do not call it again: go on without it or tell the user what you would need"
                )));
            }
        }
        // After the approval: a fork skill's `load_skill` runs its commands too (preprocessing).
        if name == "load_skill"
            && round.scope.depth < MAX_FORK_DEPTH
            && let Some(skill) = provider.loaded_skill(&arguments)
            && is_fork(&skill)
        {
            let raw = arguments.get("arguments").map(|value| match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            });
            return Plan::Fork {
                skill,
                arguments: raw,
            };
        }
        Plan::Run(arguments)
    }

    /// Run a `context: fork` skill as a sub-agent: a fresh history whose first message is the
    /// skill's instructions, the parent's skills minus this one, the skill's `model` when it
    /// names one. Its final answer is the result.
    fn fork<'a>(
        &'a self,
        provider: &'a SkillsProvider,
        skill: &'a Arc<Skill>,
        arguments: Option<&'a str>,
        parent: &'a Scope,
        emit: Emit<'a>,
        cancel: &'a CancellationToken,
    ) -> Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>> {
        Box::pin(async move {
            let instructions = match provider.skill_instructions(skill, arguments).await {
                Ok(text) => text,
                Err(message) => return ToolOutcome::error(message),
            };
            let name = skill.name().to_owned();
            let allowed: BTreeSet<String> = provider
                .model_skills()
                .iter()
                .map(|skill| skill.name().to_owned())
                .filter(|other| *other != name && parent.allows(other))
                .collect();
            let bound = (!skill.properties.allowed_tools.is_empty()).then(|| {
                let mut bound = Session::new(true);
                bound.activate(skill);
                bound
            });
            let scope = Scope {
                allowed: Some(Arc::new(allowed)),
                depth: parent.depth + 1,
                bound,
            };
            let forward = |event: AgentEvent| {
                emit(AgentEvent::Fork {
                    skill: name.clone(),
                    event: Box::new(event),
                });
            };
            let mut conversation = Conversation::new(
                format!("fork-{}", uuid::Uuid::now_v7().simple()),
                // A fork skill's allowed-tools bound its sub-agent whatever the operator chose.
                Session::new(
                    self.options.enforce_allowed_tools
                        || !skill.properties.allowed_tools.is_empty(),
                ),
                None,
            );
            conversation.activate(skill);
            conversation.push(Message::user(instructions));
            let mut round = Round {
                scope: &scope,
                model: skill
                    .properties
                    .model
                    .clone()
                    .unwrap_or_else(|| self.options.model.clone()),
                usage: Usage::default(),
                rounds: 0,
                identical: BTreeMap::new(),
                emit: &forward,
                cancel,
            };
            forward(AgentEvent::TurnStarted {
                conversation: conversation.id.clone(),
                model: round.model.clone(),
            });
            let end = self.run_loop(&mut conversation, &mut round).await;
            let answer = conversation
                .messages
                .iter()
                .rev()
                .find_map(|message| match message {
                    Message::Assistant { content, .. } if !content.is_empty() => {
                        Some(content.clone())
                    }
                    _ => None,
                })
                .unwrap_or_default();
            match end {
                TurnEnd::Answered => ToolOutcome {
                    content: Value::String(answer),
                    is_error: false,
                },
                TurnEnd::MaxRounds => ToolOutcome::error(format!(
                    "the sub-agent running `{name}` stopped after {} rounds without an answer",
                    round.rounds
                )),
                TurnEnd::Cancelled => ToolOutcome::error("the sub-agent was cancelled"),
                TurnEnd::Failed => ToolOutcome::error(format!(
                    "the sub-agent running `{name}` failed; its last words: {}",
                    excerpt(&answer)
                )),
            }
        })
    }
}

/// A call that names a skill instead of a tool (small models call `greeting("Ada")` for the
/// skill `greeting`: measured with Qwen2.5-Coder-1.5B) is that skill's `load_skill`, with the
/// call's arguments as the skill's arguments. Only for skills the scope shows the model, and
/// only when no tool has the name.
fn skill_called_by_name(
    provider: &SkillsProvider,
    call: &ToolCall,
    offered: &BTreeSet<String>,
    scope: &Scope,
) -> Option<ToolCall> {
    if offered.contains(&call.name) || !offered.contains("load_skill") || !scope.allows(&call.name)
    {
        return None;
    }
    let skill = provider.find_model_skill(&call.name, None).ok()?;
    let arguments = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(Value::Object(map)) if map.is_empty() => None,
        Ok(Value::Object(map)) => Some(match map.get("arguments") {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => Value::Object(map).to_string(),
        }),
        Ok(Value::String(text)) => Some(text),
        Ok(Value::Null) => None,
        Ok(other) => Some(other.to_string()),
        Err(_) if call.arguments.trim().is_empty() => None,
        Err(_) => Some(call.arguments.clone()),
    };
    let mut load = serde_json::json!({ "skill": skill.name() });
    if let Some(arguments) = arguments {
        load["arguments"] = Value::String(arguments);
    }
    Some(ToolCall {
        id: call.id.clone(),
        name: "load_skill".to_owned(),
        arguments: load.to_string(),
        item_id: None,
    })
}

fn is_fork(skill: &Skill) -> bool {
    skill.properties.context.as_deref() == Some("fork")
}

/// Results for calls that were not run, saying why.
fn not_run(calls: &[ToolCall], reason: &str) -> Message {
    Message::Tool {
        results: calls
            .iter()
            .map(|call| ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: serde_json::json!({ "error": reason }).to_string(),
                is_error: true,
            })
            .collect(),
    }
}

/// End the turn: report its final text, how it ended and what it used.
fn finish(round: &Round<'_>, end: TurnEnd, text: String) -> TurnEnd {
    (round.emit)(AgentEvent::Final {
        text,
        end,
        rounds: round.rounds,
        usage: round.usage,
    });
    end
}

/// End the turn on an error: report it, then end as failed with it as the final text.
fn finish_failed(round: &Round<'_>, message: String) -> TurnEnd {
    (round.emit)(AgentEvent::Error {
        message: message.clone(),
    });
    finish(round, TurnEnd::Failed, message)
}

/// JSON with object keys sorted at every level, so equal arguments compare equal whatever
/// order the model wrote them in.
fn canonical_json(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let ordered: BTreeMap<&String, Value> = map
                    .iter()
                    .map(|(key, value)| (key, sorted(value)))
                    .collect();
                Value::Object(
                    ordered
                        .into_iter()
                        .map(|(key, value)| (key.clone(), value))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot};
    use skillbox_exec::{Executor, ExecutorConfig, SandboxMode, SandboxPolicy};
    use skillbox_tools::ProviderOptions;

    use super::*;
    use crate::model::{ModelError, ModelResponse, StopReason};
    use crate::wire::WireFormat;

    /// What the model saw in one request.
    #[derive(Debug, Clone)]
    struct Seen {
        system: String,
        tools: Vec<String>,
    }

    type BeforeAnswer = Box<dyn Fn(usize) + Send + Sync>;

    /// The model: answers request `n` with the `n`th scripted call (then text), records what
    /// each request offered, and runs `before_answer(n)` before answering.
    struct ScriptedModel {
        calls: Vec<(&'static str, String)>,
        seen: Mutex<Vec<Seen>>,
        before_answer: BeforeAnswer,
    }

    #[async_trait::async_trait]
    impl ModelClient for ScriptedModel {
        fn format(&self) -> WireFormat {
            WireFormat::Chat
        }

        async fn respond(
            &self,
            request: &ModelRequest<'_>,
            _events: &mut (dyn FnMut(ModelEvent) + Send),
        ) -> Result<ModelResponse, ModelError> {
            let index = {
                let mut seen = self.seen.lock().expect("lock");
                seen.push(Seen {
                    system: request.system.to_owned(),
                    tools: request.tools.iter().map(|tool| tool.name.clone()).collect(),
                });
                seen.len() - 1
            };
            (self.before_answer)(index);
            let tool_calls = self
                .calls
                .get(index)
                .map(|(name, arguments)| ToolCall {
                    id: format!("call_{index}"),
                    name: (*name).to_owned(),
                    arguments: arguments.clone(),
                    item_id: None,
                })
                .into_iter()
                .collect::<Vec<_>>();
            Ok(ModelResponse {
                content: if tool_calls.is_empty() {
                    "done".to_owned()
                } else {
                    String::new()
                },
                stop: if tool_calls.is_empty() {
                    StopReason::Completed
                } else {
                    StopReason::ToolCalls
                },
                tool_calls,
                usage: Usage::default(),
                replay: None,
            })
        }
    }

    fn write_skill(root: &std::path::Path, name: &str) {
        let folder = root.join(name);
        fs_err::create_dir_all(&folder).expect("skill folder");
        fs_err::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: The {name} skill.\n---\nDo {name} things.\n"),
        )
        .expect("SKILL.md");
    }

    fn provider_over(
        root: &std::path::Path,
        scratch: &std::path::Path,
        define_tools: bool,
    ) -> SkillsProvider {
        let catalog = SkillCatalog::load(&CatalogOptions {
            roots: vec![SkillRoot::explicit(root)],
            ..CatalogOptions::default()
        })
        .expect("catalog");
        let executor = Executor::new(ExecutorConfig {
            helper: None,
            policy: SandboxPolicy {
                mode: SandboxMode::Off,
                ..SandboxPolicy::default()
            },
            workspace_root: scratch.join("workspaces"),
            ..ExecutorConfig::default()
        })
        .expect("executor");
        SkillsProvider::new(
            Arc::new(catalog),
            Arc::new(executor),
            ProviderOptions {
                define_tools,
                session_tools_root: scratch.join("defined"),
                ..ProviderOptions::default()
            },
        )
    }

    /// Run one turn of `model` over `skills` and return what each request offered.
    async fn turn(
        skills: SkillSource,
        model: Arc<ScriptedModel>,
        options: AgentOptions,
    ) -> Vec<Seen> {
        let client: Arc<dyn ModelClient> = Arc::clone(&model) as Arc<dyn ModelClient>;
        let agent = Agent::new(skills, client, options);
        let mut conversation = agent.conversation(None);
        let end = agent
            .run_turn(
                &mut conversation,
                TurnInput::Prompt("go".to_owned()),
                &|_| {},
                &CancellationToken::new(),
            )
            .await;
        assert_eq!(end, TurnEnd::Answered);
        model.seen.lock().expect("lock").clone()
    }

    #[tokio::test]
    async fn a_reload_between_rounds_shows_in_the_next_round_prompt_and_tools() {
        let root = tempfile::tempdir().expect("root");
        let scratch = tempfile::tempdir().expect("scratch");
        write_skill(root.path(), "alpha");
        let live = LiveProvider::new(provider_over(root.path(), scratch.path(), false));
        write_skill(root.path(), "beta");
        let reloaded = provider_over(root.path(), scratch.path(), false);
        let swap = Mutex::new(Some(reloaded));
        let target = Arc::clone(&live);
        let model = Arc::new(ScriptedModel {
            calls: vec![
                ("load_skill", r#"{"skill":"alpha"}"#.to_owned()),
                (
                    "load_skill",
                    r#"{"skill":"alpha","arguments":"again"}"#.to_owned(),
                ),
            ],
            seen: Mutex::new(Vec::new()),
            // The catalog changes while the second request is answered.
            before_answer: Box::new(move |index| {
                if index == 1
                    && let Some(provider) = swap.lock().expect("lock").take()
                {
                    target.replace(provider, Vec::new());
                }
            }),
        });
        let seen = turn(
            SkillSource::Live(live),
            model,
            AgentOptions::new("scripted"),
        )
        .await;
        assert_eq!(seen.len(), 3);
        assert!(seen[0].system.contains("alpha") && !seen[0].system.contains("beta"));
        assert_eq!(seen[1].system, seen[0].system, "nothing changed yet");
        assert!(
            seen[2].system.contains("beta"),
            "the reload shows in the next round: {}",
            seen[2].system
        );
    }

    #[tokio::test]
    async fn a_tool_defined_in_one_round_is_offered_in_the_next() {
        let root = tempfile::tempdir().expect("root");
        let scratch = tempfile::tempdir().expect("scratch");
        write_skill(root.path(), "alpha");
        let provider = provider_over(root.path(), scratch.path(), true);
        let model = Arc::new(ScriptedModel {
            calls: vec![
                ("load_skill", r#"{"skill":"alpha"}"#.to_owned()),
                (
                    "define_tool",
                    r#"{"name":"shout","description":"Shouts.","code":"return args;"}"#.to_owned(),
                ),
            ],
            seen: Mutex::new(Vec::new()),
            before_answer: Box::new(|_| {}),
        });
        let seen = turn(
            SkillSource::Fixed(Arc::new(provider)),
            model,
            AgentOptions::new("scripted"),
        )
        .await;
        assert_eq!(seen.len(), 3);
        let shout = |index: usize| seen[index].tools.iter().any(|name| name == "shout");
        assert!(!shout(0) && !shout(1), "{seen:?}");
        assert!(
            shout(2),
            "the defined tool is offered next: {:?}",
            seen[2].tools
        );
    }

    #[test]
    fn canonical_json_ignores_key_order() {
        let one: Value =
            serde_json::from_str(r#"{"b":1,"a":{"d":2,"c":[1,{"y":1,"x":2}]}}"#).expect("json");
        let two: Value =
            serde_json::from_str(r#"{"a":{"c":[1,{"x":2,"y":1}],"d":2},"b":1}"#).expect("json");
        assert_eq!(canonical_json(&one), canonical_json(&two));
    }

    #[tokio::test]
    async fn in_tools_on_load_mode_a_skill_s_tools_are_offered_from_the_round_after_its_load() {
        let root = tempfile::tempdir().expect("root");
        let scratch = tempfile::tempdir().expect("scratch");
        write_skill(root.path(), "alpha");
        write_skill(root.path(), "weather");
        fs_err::create_dir_all(root.path().join("weather/scripts")).expect("scripts");
        fs_err::write(
            root.path().join("weather/scripts/sky.py"),
            "print('sunny')\n",
        )
        .expect("script");
        fs_err::write(
            root.path().join("weather/tools.json"),
            r#"[{"name":"sky","description":"The sky.","script":"scripts/sky.py","parameters":{}}]"#,
        )
        .expect("tools.json");
        let provider = provider_over(root.path(), scratch.path(), false);
        let model = Arc::new(ScriptedModel {
            calls: vec![
                ("load_skill", r#"{"skill":"alpha"}"#.to_owned()),
                ("load_skill", r#"{"skill":"weather"}"#.to_owned()),
                (
                    "load_skill",
                    r#"{"skill":"alpha","arguments":"again"}"#.to_owned(),
                ),
            ],
            seen: Mutex::new(Vec::new()),
            before_answer: Box::new(|_| {}),
        });
        let mut options = AgentOptions::new("scripted");
        options.tools_on_load = true;
        let seen = turn(SkillSource::Fixed(Arc::new(provider)), model, options).await;
        assert_eq!(seen.len(), 4);
        let sky = |index: usize| seen[index].tools.iter().any(|name| name == "sky");
        assert!(!sky(0) && !sky(1), "{seen:?}");
        assert!(sky(2) && sky(3), "offered once weather is loaded: {seen:?}");
    }
}
