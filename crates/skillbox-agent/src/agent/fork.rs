//! `context: fork` skills run as sub-agents: a fresh history whose first message is the
//! skill's instructions, the parent's skills minus this one, the skill's `model` when it names
//! one, and as a bound whatever the sub-agent loads next: its `allowed-tools` and those that
//! bound the parent when the model started it.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use skillbox_core::Skill;
use skillbox_tools::{SkillsProvider, ToolOutcome};
use tokio_util::sync::CancellationToken;

use super::bound::ToolBound;
use super::calls::IdenticalCalls;
use super::turn::{Emit, Round};
use super::{Agent, Conversation};
use crate::conversation::{Message, Usage};
use crate::events::{AgentEvent, TurnEnd};
use crate::wire::excerpt;

/// Skills an agent (or a sub-agent) may use: all of the provider's, or a subset.
#[derive(Debug, Clone, Default)]
pub(super) struct Scope {
    pub(super) allowed: Option<Arc<BTreeSet<String>>>,
    pub(super) depth: u32,
    /// A sub-agent's bound: its fork skill's `allowed-tools` and the parent's bound when the
    /// model started it, which hold whatever skill the sub-agent loads next.
    pub(super) bound: ToolBound,
}

impl Scope {
    pub(super) fn allows(&self, skill: &str) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|allowed| allowed.contains(skill))
    }
}

impl Agent {
    /// Run a `context: fork` skill as a sub-agent: a fresh history whose first message is the
    /// skill's instructions, the parent's skills minus this one, the skill's `model` when it
    /// names one, held to `parent_bound` (the parent conversation's `allowed-tools` bound; an
    /// empty one when the person invoked the skill) and the skill's own. Its final answer is
    /// the result.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fork<'a>(
        &'a self,
        provider: &'a SkillsProvider,
        skill: &'a Arc<Skill>,
        arguments: Option<&'a str>,
        parent: &'a Scope,
        parent_bound: &'a ToolBound,
        emit: Emit<'a>,
        cancel: &'a CancellationToken,
    ) -> Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>> {
        Box::pin(async move {
            let instructions = match self.instructions(provider, skill, arguments).await {
                Ok(text) => text,
                Err(outcome) => return outcome,
            };
            let name = skill.name().to_owned();
            let allowed: BTreeSet<String> = provider
                .model_skills()
                .iter()
                .map(|skill| skill.name().to_owned())
                .filter(|other| *other != name && parent.allows(other))
                .collect();
            let mut bound = parent.bound.joined(parent_bound);
            bound.narrow(skill);
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
                self.options.enforce_allowed_tools || !skill.properties.allowed_tools.is_empty(),
                None,
            );
            conversation.activate(skill);
            // The fork skill's servers run for the sub-agent, and stop when it ends.
            let instructions = self
                .with_servers(provider, skill, &conversation.servers, instructions)
                .await;
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
                identical: IdenticalCalls::default(),
                emit: &forward,
                cancel,
            };
            forward(AgentEvent::TurnStarted {
                conversation: conversation.id.clone(),
                model: round.model.clone(),
            });
            let end = self.run_loop(&mut conversation, &mut round).await;
            let answer = conversation
                .messages()
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
                TurnEnd::Answered => ToolOutcome::ok(Value::String(answer)),
                TurnEnd::MaxRounds => ToolOutcome::failed(format!(
                    "the sub-agent running `{name}` stopped after {} rounds without an answer",
                    round.rounds
                )),
                TurnEnd::Cancelled => ToolOutcome::failed("the sub-agent was cancelled"),
                TurnEnd::Failed => ToolOutcome::failed(format!(
                    "the sub-agent running `{name}` failed; its last words: {}",
                    excerpt(&answer)
                )),
            }
        })
    }
}

pub(super) fn is_fork(skill: &Skill) -> bool {
    skill.properties.context.as_deref() == Some("fork")
}
