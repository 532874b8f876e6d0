//! A turn and its rounds: the person's input (a prompt, or `/name args`), then model calls
//! and their tool calls until the model answers, the rounds run out, or the turn is cancelled.

use std::collections::BTreeSet;
use std::pin::Pin;
use std::sync::Arc;

use skillbox_core::Skill;
use skillbox_tools::{ServerHolds, SkillsProvider, ToolOutcome};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::bound::ToolBound;
use super::calls::IdenticalCalls;
use super::fork::{Scope, is_fork};
use super::offer::with_server_tools;
use super::{Agent, Conversation};
use crate::conversation::{Message, ToolCall, ToolResult, Usage};
use crate::events::{AgentEvent, TurnEnd};
use crate::model::{ModelEvent, ModelRequest};

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

pub(super) type Emit<'a> = &'a (dyn Fn(AgentEvent) + Send + Sync);

/// The loop's state over one turn (or one sub-agent run).
pub(super) struct Round<'a> {
    pub(super) scope: &'a Scope,
    pub(super) model: String,
    pub(super) usage: Usage,
    pub(super) rounds: u32,
    pub(super) identical: IdenticalCalls,
    pub(super) emit: Emit<'a>,
    pub(super) cancel: &'a CancellationToken,
}

impl Agent {
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
            identical: IdenticalCalls::default(),
            emit,
            cancel,
        };
        emit(AgentEvent::TurnStarted {
            conversation: conversation.id.clone(),
            model: round.model.clone(),
        });
        self.restart_servers(&provider, conversation).await;
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

    /// A resumed conversation's loaded skills get their MCP servers again (asked of the
    /// approval hook as a load asks), before the first turn after the resume.
    async fn restart_servers(
        &self,
        provider: &Arc<SkillsProvider>,
        conversation: &mut Conversation,
    ) {
        for name in std::mem::take(&mut conversation.servers_to_restart) {
            if let Some(skill) = provider.catalog().get(&name).cloned() {
                let _ = self
                    .hold_servers(provider, &skill, &conversation.servers)
                    .await;
            }
        }
    }

    /// Start the MCP servers `skill` (and the skills it requires) brings for the conversation
    /// holding `servers`, asking this agent's approval hook; what became of each, when it
    /// declares any.
    async fn hold_servers(
        &self,
        provider: &SkillsProvider,
        skill: &Arc<Skill>,
        servers: &ServerHolds,
    ) -> Option<String> {
        let loaded = skillbox_tools::LoadedSkill::new(provider, Arc::clone(skill));
        self.policy
            .hold_servers(provider, &loaded, servers, Some(self.approval.as_ref()))
            .await
    }

    /// `instructions` of `skill`, loaded for the conversation holding `servers` some other way
    /// than a `load_skill` call (a person's `/name`, a fork), with what became of its servers
    /// after them, as a load's answer has it.
    pub(super) async fn with_servers(
        &self,
        provider: &SkillsProvider,
        skill: &Arc<Skill>,
        servers: &ServerHolds,
        instructions: String,
    ) -> String {
        match self.hold_servers(provider, skill, servers).await {
            Some(report) => format!("{instructions}\n\n{report}"),
            None => instructions,
        }
    }

    /// A skill's instructions for a person's `/name` or a sub-agent: its commands, when they
    /// run, wait for a place in the run queue first, as every other run does.
    pub(super) async fn instructions(
        &self,
        provider: &SkillsProvider,
        skill: &Arc<Skill>,
        arguments: Option<&str>,
    ) -> Result<String, ToolOutcome> {
        let _turn = if provider.runs_commands_on_load() {
            Some(
                self.policy
                    .admit()
                    .await
                    .map_err(|busy| ToolOutcome::from_service(Err(busy)))?,
            )
        } else {
            None
        };
        provider
            .skill_instructions(skill, arguments)
            .await
            .map_err(ToolOutcome::failed)
    }

    /// `/name args`: the skill's instructions, arguments substituted, become the person's
    /// message, and the skill is active; a fork skill runs as a sub-agent instead.
    pub(super) async fn invoke(
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
            // The person chose this skill: its sub-agent is bound by its own allowed-tools only.
            let outcome = self
                .fork(
                    provider,
                    &skill,
                    raw,
                    round.scope,
                    &ToolBound::default(),
                    emit,
                    round.cancel,
                )
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
        let instructions = match self.instructions(provider, &skill, raw).await {
            Ok(text) => text,
            Err(outcome) => return finish_failed(round, outcome.message()),
        };
        // The person loaded it: its MCP servers start as a model's load starts them.
        let instructions = self
            .with_servers(provider, &skill, &conversation.servers, instructions)
            .await;
        conversation.push(Message::user(format!(
            "{typed}\n\n{INVOKED_PREFIX}{name}{INVOKED_SUFFIX}\n\n{instructions}"
        )));
        conversation.activate_invoked(&skill);
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
    pub(super) async fn run_loop(
        &self,
        conversation: &mut Conversation,
        round: &mut Round<'_>,
    ) -> TurnEnd {
        let emit = round.emit;
        loop {
            let current = self.skills.current();
            let provider = self.scoped_provider(&current, conversation);
            let offer = self.offer(&current, &provider, round.scope, &conversation.loaded);
            let offer = with_server_tools(offer, &conversation.servers);
            round.rounds += 1;
            let mut streamed = String::new();
            let answer = {
                let request = ModelRequest {
                    model: &round.model,
                    system: &offer.system,
                    messages: conversation.messages(),
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
}

/// How the person's message of a `/name` invocation names the skill, after the line typed.
const INVOKED_PREFIX: &str = "I invoked the skill `";
const INVOKED_SUFFIX: &str = "`. Its instructions follow; carry them out.";

/// The skill a person's message invoked (`/name args`, then the line the invocation writes),
/// when it is such a message: a resumed conversation sets the bound anew there too.
pub(super) fn invoked_skill(content: &str) -> Option<&str> {
    let (typed, rest) = content.split_once(&format!("\n\n{INVOKED_PREFIX}"))?;
    let (name, _) = rest.split_once(INVOKED_SUFFIX)?;
    let typed_name = typed.strip_prefix('/')?.split_whitespace().next()?;
    (typed_name == name).then_some(name)
}

/// Results for calls that were not run, saying why.
pub(super) fn not_run(calls: &[ToolCall], reason: &str) -> Message {
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
pub(super) fn finish(round: &Round<'_>, end: TurnEnd, text: String) -> TurnEnd {
    (round.emit)(AgentEvent::Final {
        text,
        end,
        rounds: round.rounds,
        usage: round.usage,
    });
    end
}

/// End the turn on an error: report it, then end as failed with it as the final text.
pub(super) fn finish_failed(round: &Round<'_>, message: String) -> TurnEnd {
    (round.emit)(AgentEvent::Error {
        message: message.clone(),
    });
    finish(round, TurnEnd::Failed, message)
}
