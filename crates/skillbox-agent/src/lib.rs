//! skillbox-agent: skills driving a real model. An [`Agent`] holds a [`ProviderSource`], a
//! [`ModelClient`] and its options; each turn streams [`AgentEvent`]s (text, tool calls with
//! their results and durations, usage, the final answer) that the CLI, the server and the web
//! page all read. Model clients speak three wire formats ([`WireFormat`]): the Responses API,
//! Chat Completions and Anthropic Messages, streamed over HTTP with retries
//! ([`HttpModelClient`]). Conversations are saved as JSONL transcripts ([`TranscriptStore`]).

pub mod agent;
pub mod client;
pub mod conversation;
pub mod events;
pub mod history;
pub mod http;
pub mod model;
pub mod transcript;
pub mod wire;

pub use agent::{Agent, AgentOptions, DEFAULT_MAX_ROUNDS, ProviderSource, Turn, TurnInput};
pub use client::ModelClient;
pub use conversation::{Conversation, Message, Replay, ToolCall, ToolResult, Usage};
pub use events::{AgentEvent, TurnEnd};
pub use history::{MAX_HISTORY_BYTES, MAX_HISTORY_CALLS};
pub use http::{ApiKey, ClientError, HttpModelClient, RetryPolicy, shown_url, url_host};
pub use model::{ModelError, ModelEvent, ModelRequest, ModelResponse, StopReason};
pub use skillbox_tools::{
    Approval, ApprovalDecision, ApprovalMode, ApprovalPolicy, ApprovalRequest,
};
pub use transcript::{Transcript, TranscriptError, TranscriptStore, TranscriptSummary};
pub use wire::WireFormat;
