//! The conversation in a provider-neutral shape: what the loop keeps, what transcripts save,
//! and what each wire format renders into its own request. A response's raw items are kept
//! beside the neutral fields so the next request of the same format can send them back
//! unchanged (reasoning items, thinking blocks, item ids), as the providers ask.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use skillbox_core::Skill;
use skillbox_tools::Session;

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

/// A conversation: its messages, the skill state of seed 003, and its transcript.
#[derive(Debug)]
pub struct Conversation {
    pub(crate) id: String,
    pub(crate) messages: Vec<Message>,
    pub(crate) session: Session,
    /// Skills loaded so far (their tools are offered in tools-on-load mode).
    pub(crate) loaded: BTreeSet<String>,
    /// Skills the person invoked: the model may use them even when hidden from it.
    pub(crate) invoked: BTreeSet<String>,
    pub(crate) transcript: Option<Transcript>,
    pub(crate) transcript_failed: bool,
}

impl Conversation {
    /// An empty conversation with this skill state, saved to `transcript` when given.
    pub(crate) fn new(id: String, session: Session, transcript: Option<Transcript>) -> Self {
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
    pub(crate) fn activate(&mut self, skill: &Skill) {
        self.session.activate(skill);
        self.loaded.insert(skill.name().to_owned());
    }

    pub(crate) fn push(&mut self, message: Message) {
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
