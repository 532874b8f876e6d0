//! The conversation in a provider-neutral shape: what the loop keeps, what transcripts save,
//! and what each wire format renders into its own request. A response's raw items are kept
//! beside the neutral fields so the next request of the same format can send them back
//! unchanged (reasoning items, thinking blocks, item ids), as the providers ask.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use skillbox_core::Skill;
use skillbox_tools::{ServerHolds, SkillSession};

use crate::agent::bound::ToolBound;
use crate::history;
use crate::transcript::Transcript;
use crate::wire::WireFormat;

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the person wrote (or a skill they invoked, rendered as text).
    User {
        /// The text.
        content: String,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// The text of the answer (empty when the model only called tools).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        content: String,
        /// The tool calls, in the order the model made them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// The response as the provider sent it, for sending back unchanged.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay: Option<Replay>,
    },
    /// The results of the previous assistant message's tool calls, in the order of the calls.
    Tool {
        /// One result per call.
        results: Vec<ToolResult>,
    },
}

impl Message {
    /// A user message.
    #[must_use]
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
        }
    }

    /// An assistant message with text only.
    #[must_use]
    pub fn assistant(content: impl Into<String>) -> Self {
        Message::Assistant {
            content: content.into(),
            tool_calls: Vec::new(),
            replay: None,
        }
    }
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id (`call_…`, `toolu_…`): opaque, echoed in the result.
    pub id: String,
    /// The tool's name as the model wrote it (it may name no tool).
    pub name: String,
    /// The arguments as the model wrote them: JSON text, possibly not valid.
    pub arguments: String,
    /// The Responses API item id (`fc_…`), separate from the call id there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
}

/// What a tool call returned, as the model receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call answered.
    pub call_id: String,
    /// The tool's name (some formats want it beside the result).
    pub name: String,
    /// The result text.
    pub content: String,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// A response as the provider sent it: its output items (Responses) or content blocks
/// (Anthropic) or message (Chat Completions), sent back unchanged in the same format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// The wire format the items belong to; another format rebuilds from the neutral fields.
    pub format: WireFormat,
    /// The raw items.
    pub items: Vec<Value>,
}

/// Tokens a model call used, as the provider counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens read (cached ones included).
    pub input_tokens: u64,
    /// Tokens generated (reasoning included).
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache, when it says.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// Reasoning tokens among the output tokens, when the provider says.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl Usage {
    /// Add another call's usage to this one.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }

    /// All tokens, read and generated.
    #[must_use]
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// A conversation: its messages (within the bound of [`crate::history`]), the skill state of
/// seed 003, and its transcript.
#[derive(Debug)]
pub struct Conversation {
    pub(crate) id: String,
    /// Private, so that only [`Conversation::push`] and [`Conversation::restore`] change it:
    /// `sizes` follows it.
    messages: Vec<Message>,
    /// Each message's bytes as JSON, as the history bound counts them: kept, so that a push
    /// serializes only the new message.
    sizes: Vec<usize>,
    pub(crate) session: SkillSession,
    /// The `allowed-tools` in force (see [`ToolBound`]).
    pub(crate) bound: ToolBound,
    /// Skills loaded so far (their tools are offered in tools-on-load mode).
    pub(crate) loaded: BTreeSet<String>,
    /// Skills the person invoked: the model may use them even when hidden from it.
    pub(crate) invoked: BTreeSet<String>,
    pub(crate) transcript: Option<Transcript>,
    pub(crate) transcript_failed: bool,
    /// The MCP servers of the skills it loaded: they stop when it ends (unless another
    /// conversation holds them too).
    pub(crate) servers: Arc<ServerHolds>,
    /// Skills a resumed conversation had loaded whose MCP servers start again before its next
    /// turn.
    pub(crate) servers_to_restart: Vec<String>,
}

impl Conversation {
    /// An empty conversation, its skills' `allowed-tools` enforced when
    /// `enforce_allowed_tools`, saved to `transcript` when given.
    pub(crate) fn new(
        id: String,
        enforce_allowed_tools: bool,
        transcript: Option<Transcript>,
    ) -> Self {
        Conversation {
            id,
            messages: Vec::new(),
            sizes: Vec::new(),
            session: SkillSession::new(enforce_allowed_tools),
            bound: ToolBound::new(enforce_allowed_tools),
            loaded: BTreeSet::new(),
            invoked: BTreeSet::new(),
            transcript,
            transcript_failed: false,
            servers: Arc::new(ServerHolds::new()),
            servers_to_restart: Vec::new(),
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

    /// Whether the conversation is saved: it has a transcript, and the transcript's file was
    /// written (a transcript begun with [`crate::TranscriptStore::begin`] is written from the
    /// model's first answer on).
    #[must_use]
    pub fn is_saved(&self) -> bool {
        self.transcript.as_ref().is_some_and(Transcript::is_written)
    }

    /// `skill` was loaded: it is the active skill, its `allowed-tools` narrow the bound, and
    /// its tools are offered in tools-on-load mode.
    pub(crate) fn activate(&mut self, skill: &Skill) {
        self.session.activate(skill);
        self.bound.narrow(skill);
        self.loaded.insert(skill.name().to_owned());
        // The skills it requires were loaded with it: their tools are offered too.
        self.loaded
            .extend(skill.properties.requires.iter().cloned());
    }

    /// The MCP servers this conversation holds (those of the skills it loaded).
    #[must_use]
    pub fn servers(&self) -> &ServerHolds {
        &self.servers
    }

    /// The person invoked `skill` (`/name`): it is active, and the bound starts again from it.
    pub(crate) fn activate_invoked(&mut self, skill: &Skill) {
        self.invoked.insert(skill.name().to_owned());
        self.bound.restart(skill);
        self.activate(skill);
    }

    /// Take `messages` as the history (a resumed conversation's), within the bound; the
    /// transcript has them already.
    pub(crate) fn restore(&mut self, messages: Vec<Message>) {
        self.sizes = messages.iter().map(history::json_bytes).collect();
        self.messages = messages;
        history::bound(&mut self.messages, &mut self.sizes);
    }

    /// Add a message: the history is kept within its bound, then the message is saved as it
    /// is kept.
    pub(crate) fn push(&mut self, message: Message) {
        self.sizes.push(history::json_bytes(&message));
        self.messages.push(message);
        history::bound(&mut self.messages, &mut self.sizes);
        if let Some(transcript) = &mut self.transcript
            && let Some(message) = self.messages.last()
            && let Err(error) = transcript.append(message)
            && !self.transcript_failed
        {
            self.transcript_failed = true;
            tracing::warn!(
                "cannot write the transcript {}: {error}; the conversation goes on unsaved",
                transcript.path().display()
            );
        }
    }
}
