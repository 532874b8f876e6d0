//! The three wire formats, with no I/O: each turns a [`ModelRequest`] into a request body and
//! reads a response back, whole or as server-sent events. [`crate::http`] does the sending.
//!
//! - [`chat`]: OpenAI Chat Completions (OpenAI, OpenRouter, llama.cpp, vLLM, Ollama).
//! - [`responses`]: the Responses API (OpenRouter's default, OpenAI), stateless: the whole
//!   conversation goes in every request.
//! - [`anthropic`]: Anthropic Messages.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{ModelError, ModelRequest, ModelResponse};

pub mod anthropic;
pub mod chat;
pub mod responses;

/// Which API a model client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireFormat {
    /// `POST {base}/responses`.
    Responses,
    /// `POST {base}/chat/completions`.
    Chat,
    /// `POST {base}/messages`.
    Anthropic,
}

impl WireFormat {
    /// Parse a format name as used on the command line (`responses`, `chat`, `anthropic`).
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "responses" => Some(WireFormat::Responses),
            "chat" | "chat-completions" | "openai" => Some(WireFormat::Chat),
            "anthropic" | "messages" => Some(WireFormat::Anthropic),
            _ => None,
        }
    }

    /// The name [`WireFormat::parse`] reads.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            WireFormat::Responses => "responses",
            WireFormat::Chat => "chat",
            WireFormat::Anthropic => "anthropic",
        }
    }

    /// The path of the endpoint below the base URL.
    #[must_use]
    pub fn endpoint(self) -> &'static str {
        match self {
            WireFormat::Responses => "responses",
            WireFormat::Chat => "chat/completions",
            WireFormat::Anthropic => "messages",
        }
    }

    /// The streaming request body.
    #[must_use]
    pub fn request_body(self, request: &ModelRequest<'_>) -> Value {
        match self {
            WireFormat::Responses => responses::request_body(request),
            WireFormat::Chat => chat::request_body(request),
            WireFormat::Anthropic => anthropic::request_body(request),
        }
    }

    /// A reader for the response's event stream.
    #[must_use]
    pub fn stream_decoder(self) -> Box<dyn StreamDecoder> {
        match self {
            WireFormat::Responses => Box::new(responses::ResponsesStream::default()),
            WireFormat::Chat => Box::new(chat::ChatStream::default()),
            WireFormat::Anthropic => Box::new(anthropic::AnthropicStream::default()),
        }
    }

    /// Read a whole (not streamed) response body: some servers ignore `stream: true`.
    ///
    /// # Errors
    /// [`ModelError::Malformed`] when the body is not a response of this format, or
    /// [`ModelError::Provider`] when it is an error.
    pub fn parse_response(self, body: &Value) -> Result<ModelResponse, ModelError> {
        match self {
            WireFormat::Responses => responses::parse_response(body),
            WireFormat::Chat => chat::parse_response(body),
            WireFormat::Anthropic => anthropic::parse_response(body),
        }
    }
}

/// Reads one streamed response, event by event.
pub trait StreamDecoder: Send {
    /// Take one server-sent event (`event` is its type, empty when the stream names none).
    /// Text pieces go to `on_text` as they arrive. Returns whether the response is complete.
    ///
    /// # Errors
    /// [`ModelError::Malformed`] for data that is not the JSON the format says, and
    /// [`ModelError::Provider`] for an error the provider reports in the stream.
    fn event(
        &mut self,
        event: &str,
        data: &str,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<bool, ModelError>;

    /// The response, once the stream has ended.
    ///
    /// # Errors
    /// [`ModelError::Truncated`] when the stream ended before the response was complete, or
    /// [`ModelError::Malformed`] for a tool call without a name or id.
    fn finish(self: Box<Self>) -> Result<ModelResponse, ModelError>;
}

/// Tool calls (or output items, or content blocks) one streamed response may hold: far more
/// than a model makes, few enough that a hostile stream cannot make the decoders (which look
/// items up by index) or the next request grow without bound.
pub const MAX_STREAMED_ITEMS: usize = 256;

/// [`ModelError::Malformed`] once a response holds more than [`MAX_STREAMED_ITEMS`] items.
pub(crate) fn check_item_count(count: usize) -> Result<(), ModelError> {
    if count > MAX_STREAMED_ITEMS {
        return Err(ModelError::Malformed {
            detail: format!(
                "the response holds more than {MAX_STREAMED_ITEMS} items (tool calls or blocks)"
            ),
        });
    }
    Ok(())
}

/// Parse an event's JSON data, naming the event and the start of the data when it is not JSON.
pub(crate) fn parse_event_data(event: &str, data: &str) -> Result<Value, ModelError> {
    serde_json::from_str(data).map_err(|error| ModelError::Malformed {
        detail: format!(
            "event `{}` is not JSON ({error}): {}",
            if event.is_empty() { "message" } else { event },
            excerpt(data)
        ),
    })
}

/// The start of a text, for error messages.
pub(crate) fn excerpt(text: &str) -> String {
    const MAX_EXCERPT_CHARS: usize = 200;
    let mut excerpt: String = text.chars().take(MAX_EXCERPT_CHARS).collect();
    if excerpt.len() < text.len() {
        excerpt.push('…');
    }
    excerpt
}

/// A JSON number as an unsigned count (absent or negative counts are zero).
pub(crate) fn count(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

/// An event's type: the `type` field of its data, which the Responses API and Anthropic both
/// send, else the SSE event name (the HTTP client names unnamed events `""`).
pub(crate) fn event_type<'a>(event: &'a str, data: &'a Value) -> &'a str {
    data["type"]
        .as_str()
        .filter(|kind| !kind.is_empty())
        .unwrap_or(event)
}

/// Whether an event's data is the `[DONE]` some servers send last (OpenAI-compatible ones, and
/// OpenRouter's Responses and Messages endpoints, which the official APIs do not).
pub(crate) fn is_done_marker(data: &str) -> bool {
    data.trim() == "[DONE]"
}

/// The tool the request-body tests offer.
#[cfg(test)]
pub(crate) fn weather_tool() -> skillbox_tools::ToolSpec {
    skillbox_tools::ToolSpec {
        name: "get_weather".into(),
        description: "Current weather".into(),
        parameters: serde_json::json!({"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}),
    }
}

/// Decode a whole server-sent-events transcript the way [`crate::http`] reads a stream: the same
/// SSE parser (comments dropped, multi-line data joined), the event name `message` given as `""`,
/// and the decoder left at the first event that completes the response. Returns the text handed
/// to `on_text` and the response.
#[cfg(test)]
pub(crate) fn decode_transcript(
    format: WireFormat,
    transcript: &str,
) -> (String, Result<ModelResponse, ModelError>) {
    use eventsource_stream::Eventsource;
    use futures_util::{FutureExt, StreamExt};

    let chunks = futures_util::stream::iter(
        transcript
            .as_bytes()
            .chunks(7)
            .map(Ok::<_, std::convert::Infallible>),
    );
    let mut events = chunks.eventsource();
    let mut decoder = format.stream_decoder();
    let mut streamed = String::new();
    while let Some(event) = events.next().now_or_never().flatten() {
        let event = event.expect("the transcript is valid SSE");
        let name = if event.event == "message" {
            ""
        } else {
            event.event.as_str()
        };
        match decoder.event(name, &event.data, &mut |text| streamed.push_str(text)) {
            Ok(true) => break,
            Ok(false) => {}
            Err(error) => return (streamed, Err(error)),
        }
    }
    (streamed, decoder.finish())
}
