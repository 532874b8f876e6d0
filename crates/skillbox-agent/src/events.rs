//! What a turn reports as it goes: the one event stream the CLI prints, `--json` writes as
//! JSONL, and the server sends to the web page.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::Usage;

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model answered without calling more tools.
    Answered,
    /// The model was still calling tools after `max_rounds` rounds.
    MaxRounds,
    /// The person cancelled the turn.
    Cancelled,
    /// The model could not be reached or failed.
    Failed,
}

/// One thing that happened in a turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The turn began.
    TurnStarted {
        /// The conversation's id (its transcript's name).
        conversation: String,
        /// The model asked first.
        model: String,
    },
    /// The person invoked a skill (`/name args`).
    SkillInvoked {
        /// The skill.
        skill: String,
        /// The arguments as typed.
        arguments: String,
    },
    /// A piece of the model's answer.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A model request failed and is sent again.
    Retry {
        /// The attempt that failed, from 1.
        attempt: u32,
        /// Why.
        reason: String,
        /// The wait before the next attempt.
        delay_ms: u64,
    },
    /// The model called a tool; it runs now (or is answered with an error).
    ToolCallStarted {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments: parsed JSON, or the text when it is not JSON.
        arguments: Value,
    },
    /// A call that runs code was denied by the approval policy.
    ApprovalDenied {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// Why, when the policy said.
        reason: String,
    },
    /// A tool call finished.
    ToolCallFinished {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The result as the model receives it.
        result: String,
        /// Whether it failed.
        is_error: bool,
        /// How long it took.
        duration_ms: u64,
    },
    /// A loaded skill's `model` overrides the model for the rest of the turn.
    ModelChanged {
        /// The model asked from now on.
        model: String,
        /// The skill that asked for it.
        skill: String,
    },
    /// Tokens used by one model call, and by the turn so far.
    Usage {
        /// The round (model call) of the turn, from 1.
        round: u32,
        /// This call's tokens.
        usage: Usage,
        /// The turn's tokens so far.
        turn: Usage,
    },
    /// An event of a sub-agent running a `context: fork` skill.
    Fork {
        /// The skill the sub-agent runs.
        skill: String,
        /// What happened in it.
        event: Box<AgentEvent>,
    },
    /// The turn ended.
    Final {
        /// The answer (or, when the turn did not end with one, why).
        text: String,
        /// How it ended.
        end: TurnEnd,
        /// Model calls made.
        rounds: u32,
        /// Tokens used by the whole turn.
        usage: Usage,
    },
    /// Something failed (the turn then ends with [`TurnEnd::Failed`]).
    Error {
        /// What, and what to do.
        message: String,
    },
}
