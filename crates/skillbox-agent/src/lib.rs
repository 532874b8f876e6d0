//! skillbox-agent: skills driving a real model. An [`Agent`] holds a [`skillbox_llm::SkillsProvider`],
//! a [`ModelClient`] and its options; each turn streams [`AgentEvent`]s (text, tool calls with
//! their results and durations, usage, the final answer) that the CLI, the server and the web
//! page all read. Model clients speak three wire formats ([`WireFormat`]): the Responses API,
//! Chat Completions and Anthropic Messages, streamed over HTTP with retries ([`HttpModelClient`]).

pub mod conversation;
pub mod http;
pub mod model;
pub mod wire;

pub use conversation::{Message, Replay, ToolCall, ToolResult, Usage};
pub use http::{ApiKey, ClientError, HttpModelClient, RetryPolicy};
pub use model::{ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse, StopReason};
pub use wire::WireFormat;
