//! What the loop asks of a model and what it gets back, whatever the wire format: one trait,
//! [`ModelClient`], implemented over HTTP for the three formats ([`crate::http`]).

use serde::{Deserialize, Serialize};
use skillbox_tools::ToolSpec;

use crate::conversation::{Message, Replay, ToolCall, Usage};

/// One request to a model: everything it sees this round.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The model's name as the provider knows it.
    pub model: &'a str,
    /// The system prompt (the user's base prompt and the skills section).
    pub system: &'a str,
    /// The conversation so far.
    pub messages: &'a [Message],
    /// The tools offered this round.
    pub tools: &'a [ToolSpec],
    /// Tokens the model may generate at most (Anthropic requires a value).
    pub max_output_tokens: u32,
    /// Sampling temperature, when set.
    pub temperature: Option<f32>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A finished answer.
    Completed,
    /// The model called tools and waits for their results.
    ToolCalls,
    /// The output reached the token limit.
    MaxTokens,
    /// The provider filtered or the model refused the answer.
    Refused,
    /// Anything else the provider said, verbatim.
    Other(String),
}

/// A model's answer to one request (serializable, so an eval can keep it in its response
/// cache).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// The answer's text (empty when the model only called tools).
    pub content: String,
    /// The tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    pub stop: StopReason,
    /// Tokens used.
    pub usage: Usage,
    /// The raw output, to send back unchanged.
    pub replay: Option<Replay>,
}

impl ModelResponse {
    /// The assistant message this response adds to the conversation.
    #[must_use]
    pub fn into_message(self) -> Message {
        Message::Assistant {
            content: self.content,
            tool_calls: self.tool_calls,
            replay: self.replay,
        }
    }
}

/// What happens while a response streams in.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// A piece of the answer's text.
    TextDelta(String),
    /// The request failed and is sent again after `delay_ms`.
    Retry {
        /// The attempt that failed, from 1.
        attempt: u32,
        /// Why it failed.
        reason: String,
        /// How long the client waits before the next attempt.
        delay_ms: u64,
    },
}

/// Why a model call failed. Every message names the server and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// No connection could be made (refused, DNS, TLS, timeout while connecting).
    #[error(
        "cannot reach the model server at {url}: {detail}; is it running, and is the base URL right (--base-url)?"
    )]
    Unreachable {
        /// The URL asked.
        url: String,
        /// What failed.
        detail: String,
    },
    /// Nothing listens at a loopback address: a local server that is not running. Retrying
    /// cannot help, so the turn ends at once.
    #[error(
        "cannot reach the model server at {url}: nothing listens there (connection refused); start the server, or check --base-url"
    )]
    NotListening {
        /// The URL asked.
        url: String,
    },
    /// The server refused the credentials.
    #[error(
        "the model server at {url} refused the API key (HTTP {status}): {message}; check {key_hint}"
    )]
    Unauthorized {
        /// The URL asked.
        url: String,
        /// 401 or 403.
        status: u16,
        /// The server's message.
        message: String,
        /// Where the key comes from (the environment variable).
        key_hint: String,
    },
    /// The server answered with an error status.
    #[error("the model server at {url} answered HTTP {status}: {message}")]
    Status {
        /// The URL asked.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The server's message, or the start of its body.
        message: String,
    },
    /// The body or an event was not what the format says.
    #[error("the model server sent a malformed response: {detail}")]
    Malformed {
        /// What was wrong, with the start of the offending text.
        detail: String,
    },
    /// The stream ended before the response was complete.
    #[error("the model server's stream ended before the response was complete: {detail}")]
    Truncated {
        /// What was missing.
        detail: String,
    },
    /// The provider reported an error inside the stream.
    #[error("the model reported an error: {message}")]
    Provider {
        /// The provider's error type, when given (`overloaded_error`, `server_error`).
        kind: Option<String>,
        /// Its message.
        message: String,
    },
    /// No byte arrived for too long.
    #[error("the model server at {url} sent nothing for {seconds} s; giving up")]
    Stalled {
        /// The URL asked.
        url: String,
        /// The idle limit.
        seconds: u64,
    },
}

impl ModelError {
    /// Whether sending the same request again may succeed (overload, rate limits, server
    /// errors, lost connections); client errors are not retried.
    #[must_use]
    pub fn is_transient(&self) -> bool {
        match self {
            ModelError::Unreachable { .. } | ModelError::Stalled { .. } => true,
            // Timeouts, rate limits, server errors, overload (529).
            ModelError::Status { status, .. } => matches!(
                status,
                408 | 409 | 425 | 429 | 500 | 502 | 503 | 504 | 520..=529
            ),
            ModelError::Provider { kind, .. } => kind.as_deref().is_some_and(|kind| {
                matches!(
                    kind,
                    "overloaded_error" | "rate_limit_error" | "api_error" | "server_error"
                ) || kind.contains("rate_limit")
            }),
            ModelError::Truncated { .. } => true,
            ModelError::NotListening { .. }
            | ModelError::Unauthorized { .. }
            | ModelError::Malformed { .. } => false,
        }
    }
}
