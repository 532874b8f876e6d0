//! Anthropic Messages: `POST {base}/messages` (Anthropic, and OpenRouter's Anthropic-compatible
//! endpoint). Roles alternate strictly: an assistant turn's tool results go back as one user
//! message of `tool_result` blocks, merged with the user's next words when they follow; the
//! assistant's content blocks go back as the API sent them (thinking blocks keep their
//! signatures).

use serde_json::{Value, json};
use skillbox_tools::{ToolFormat, render_tools};

use super::chat::{arguments_object, provider_error};
use super::{WireFormat, count, event_type, excerpt, is_done_marker, parse_event_data};
use crate::conversation::{Message, Replay, ToolCall, ToolResult, Usage};
use crate::model::{ModelError, ModelRequest, ModelResponse, StopReason};

/// The streaming request body.
#[must_use]
pub fn request_body(request: &ModelRequest<'_>) -> Value {
    // (role, content blocks), consecutive messages of one role merged into one.
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::with_capacity(request.messages.len());
    for message in request.messages {
        let (role, blocks) = match message {
            Message::User { content } => ("user", vec![json!({ "type": "text", "text": content })]),
            Message::Assistant {
                content,
                tool_calls,
                replay,
            } => (
                "assistant",
                match replay {
                    Some(replay) if replay.format == WireFormat::Anthropic => replay
                        .items
                        .iter()
                        .filter(|block| !is_empty_text(block))
                        .cloned()
                        .collect(),
                    _ => rebuilt_blocks(content, tool_calls),
                },
            ),
            Message::Tool { results } => ("user", results.iter().map(tool_result).collect()),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect();
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_output_tokens,
    });
    if !request.system.is_empty() {
        body["system"] = json!(request.system);
    }
    body["messages"] = Value::Array(messages);
    if !request.tools.is_empty() {
        body["tools"] = render_tools(request.tools, ToolFormat::Anthropic);
    }
    body["stream"] = json!(true);
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
    body
}

/// A text block with no text, which the API rejects in requests (it may send one itself).
fn is_empty_text(block: &Value) -> bool {
    block["type"] == "text" && block["text"].as_str().is_none_or(str::is_empty)
}

/// An assistant turn rebuilt from the neutral fields: its text, then one `tool_use` per call.
fn rebuilt_blocks(content: &str, tool_calls: &[ToolCall]) -> Vec<Value> {
    let mut blocks = Vec::with_capacity(tool_calls.len() + 1);
    if !content.is_empty() {
        blocks.push(json!({ "type": "text", "text": content }));
    }
    blocks.extend(tool_calls.iter().map(|call| {
        json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": arguments_object(&call.arguments),
        })
    }));
    blocks
}

/// A `tool_result` block (`content` left out when empty: it is optional, and the API refuses
/// empty text).
fn tool_result(result: &ToolResult) -> Value {
    let mut block = json!({ "type": "tool_result", "tool_use_id": result.call_id });
    if !result.content.is_empty() {
        block["content"] = json!(result.content);
    }
    if result.is_error {
        block["is_error"] = json!(true);
    }
    block
}

fn stop_reason(reason: Option<&str>, has_tool_calls: bool) -> StopReason {
    match reason {
        Some("end_turn" | "stop_sequence") => StopReason::Completed,
        Some("tool_use") => StopReason::ToolCalls,
        Some("max_tokens") => StopReason::MaxTokens,
        Some("refusal") => StopReason::Refused,
        Some(other) => StopReason::Other(other.to_owned()),
        None if has_tool_calls => StopReason::ToolCalls,
        None => StopReason::Completed,
    }
}

/// Token counts as Anthropic reports them: `input_tokens` leaves out the prompt tokens read
/// from or written to the cache, which [`Usage::input_tokens`] includes.
#[derive(Debug, Default, Clone, Copy)]
struct TokenCounts {
    input: u64,
    cache_creation: u64,
    cache_read: u64,
    output: u64,
}

impl TokenCounts {
    /// Take the counts a `usage` object holds. They are cumulative (`message_delta` repeats
    /// and raises them; via OpenRouter `message_start` may say 0 input tokens and
    /// `message_delta` the real count), so the larger value wins.
    fn merge(&mut self, usage: &Value) {
        self.input = self.input.max(count(&usage["input_tokens"]));
        self.cache_creation = self
            .cache_creation
            .max(count(&usage["cache_creation_input_tokens"]));
        self.cache_read = self
            .cache_read
            .max(count(&usage["cache_read_input_tokens"]));
        self.output = self.output.max(count(&usage["output_tokens"]));
    }

    fn usage(self) -> Usage {
        Usage {
            input_tokens: self.input + self.cache_creation + self.cache_read,
            output_tokens: self.output,
            cached_input_tokens: self.cache_read,
            reasoning_tokens: 0,
        }
    }
}

/// The text, tool calls and replay of a message's content blocks.
fn read_blocks(blocks: Vec<Value>) -> Result<(String, Vec<ToolCall>, Option<Replay>), ModelError> {
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for block in &blocks {
        match block["type"].as_str() {
            Some("text") => content.push_str(block["text"].as_str().unwrap_or_default()),
            Some("tool_use") => tool_calls.push(ToolCall {
                id: block["id"]
                    .as_str()
                    .filter(|id| !id.is_empty())
                    .ok_or_else(|| ModelError::Malformed {
                        detail: format!(
                            "a `tool_use` block without an `id`: {}",
                            excerpt(&block.to_string())
                        ),
                    })?
                    .to_owned(),
                name: block["name"].as_str().unwrap_or_default().to_owned(),
                arguments: match &block["input"] {
                    Value::Null => "{}".to_owned(),
                    input => input.to_string(),
                },
                item_id: None,
            }),
            _ => {}
        }
    }
    let replay = (!blocks.is_empty()).then_some(Replay {
        format: WireFormat::Anthropic,
        items: blocks,
    });
    Ok((content, tool_calls, replay))
}

/// Read a whole (not streamed) response.
///
/// # Errors
/// [`ModelError::Provider`] for an error body (`{"type": "error", "error": {type, message}}`),
/// [`ModelError::Malformed`] without `content` or for a `tool_use` block without an id.
pub fn parse_response(body: &Value) -> Result<ModelResponse, ModelError> {
    if (body["type"] == "error" || body["error"].is_object())
        && let Some(error) = provider_error(body)
    {
        return Err(error);
    }
    let Some(blocks) = body["content"].as_array() else {
        return Err(ModelError::Malformed {
            detail: format!(
                "a message without `content`: {}",
                excerpt(&body.to_string())
            ),
        });
    };
    let (content, tool_calls, replay) = read_blocks(blocks.clone())?;
    let mut counts = TokenCounts::default();
    counts.merge(&body["usage"]);
    Ok(ModelResponse {
        stop: stop_reason(body["stop_reason"].as_str(), !tool_calls.is_empty()),
        content,
        tool_calls,
        usage: counts.usage(),
        replay,
    })
}

/// One content block as the stream builds it: the block from `content_block_start`, text and
/// thinking appended to it, the tool input's JSON pieces beside it until `content_block_stop`.
#[derive(Debug)]
struct StreamBlock {
    index: u64,
    block: Value,
    partial_json: String,
    /// The tool input's JSON text as the model wrote it, once the block stopped.
    arguments: Option<String>,
}

impl StreamBlock {
    /// End the block: parse the tool input (none streamed: the start's input, else `{}`),
    /// keeping the text as written for the tool call and an object for the replay.
    fn stop(&mut self) {
        let takes_input = self.block.get("input").is_some() || !self.partial_json.is_empty();
        if self.arguments.is_some() || !takes_input {
            return;
        }
        let arguments = if self.partial_json.trim().is_empty() {
            match &self.block["input"] {
                Value::Object(input) if !input.is_empty() => self.block["input"].to_string(),
                _ => "{}".to_owned(),
            }
        } else {
            std::mem::take(&mut self.partial_json)
        };
        self.block["input"] = arguments_object(&arguments);
        self.arguments = Some(arguments);
    }
}

/// Append a streamed piece to a block's text field (`text`, `thinking`, `signature`).
fn append(block: &mut Value, field: &str, piece: &str) {
    if let Some(object) = block.as_object_mut() {
        match object.get_mut(field) {
            Some(Value::String(text)) => text.push_str(piece),
            _ => {
                object.insert(field.to_owned(), json!(piece));
            }
        }
    }
}

/// Reads an Anthropic Messages event stream: `message_start`, content blocks (`start`,
/// `delta`…, `stop`), `message_delta` with the stop reason, `message_stop`.
#[derive(Debug, Default)]
pub struct AnthropicStream {
    blocks: Vec<StreamBlock>,
    counts: TokenCounts,
    stop_reason: Option<String>,
    started: bool,
    stopped: bool,
    done_marker: bool,
}

impl AnthropicStream {
    fn block(&mut self, event_name: &str, event: &Value) -> Result<&mut StreamBlock, ModelError> {
        let index = event["index"].as_u64();
        self.blocks
            .iter_mut()
            .find(|block| Some(block.index) == index)
            .ok_or_else(|| ModelError::Malformed {
                detail: format!(
                    "`{event_name}` for a block no `content_block_start` opened: {}",
                    excerpt(&event.to_string())
                ),
            })
    }

    fn block_start(&mut self, event: &Value) -> Result<(), ModelError> {
        let block = &event["content_block"];
        let Some(index) = event["index"].as_u64().filter(|_| block.is_object()) else {
            return Err(ModelError::Malformed {
                detail: format!(
                    "`content_block_start` without an `index` and a `content_block` object: {}",
                    excerpt(&event.to_string())
                ),
            });
        };
        self.blocks.retain(|open| open.index != index);
        self.blocks.push(StreamBlock {
            index,
            block: block.clone(),
            partial_json: String::new(),
            arguments: None,
        });
        Ok(())
    }

    fn block_delta(
        &mut self,
        event: &Value,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<(), ModelError> {
        let block = self.block("content_block_delta", event)?;
        let delta = &event["delta"];
        let piece = |field: &str| delta[field].as_str().unwrap_or_default();
        match delta["type"].as_str() {
            Some("text_delta") => {
                let text = piece("text");
                append(&mut block.block, "text", text);
                if !text.is_empty() {
                    on_text(text);
                }
            }
            Some("input_json_delta") => block.partial_json.push_str(piece("partial_json")),
            Some("thinking_delta") => append(&mut block.block, "thinking", piece("thinking")),
            Some("signature_delta") => append(&mut block.block, "signature", piece("signature")),
            Some("citations_delta") => {
                if let Some(object) = block.block.as_object_mut() {
                    let citations = object
                        .entry("citations")
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let Value::Array(citations) = citations {
                        citations.push(delta["citation"].clone());
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl super::StreamDecoder for AnthropicStream {
    fn event(
        &mut self,
        event: &str,
        data: &str,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<bool, ModelError> {
        super::check_item_count(self.blocks.len())?;
        if is_done_marker(data) {
            self.done_marker = true;
            return Ok(true);
        }
        if data.trim().is_empty() {
            return Ok(false);
        }
        let value = parse_event_data(event, data)?;
        match event_type(event, &value) {
            "message_start" => {
                self.started = true;
                self.counts.merge(&value["message"]["usage"]);
            }
            "content_block_start" => self.block_start(&value)?,
            "content_block_delta" => self.block_delta(&value, on_text)?,
            "content_block_stop" => self.block("content_block_stop", &value)?.stop(),
            "message_delta" => {
                if let Some(reason) = value["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(reason.to_owned());
                }
                self.counts.merge(&value["usage"]);
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(true);
            }
            "error" => {
                return Err(
                    provider_error(&value).unwrap_or_else(|| ModelError::Provider {
                        kind: None,
                        message: excerpt(data),
                    }),
                );
            }
            _ => {}
        }
        Ok(false)
    }

    fn finish(mut self: Box<Self>) -> Result<ModelResponse, ModelError> {
        if !self.stopped {
            return Err(ModelError::Truncated {
                detail: if self.done_marker {
                    "`[DONE]` came before `message_stop`".to_owned()
                } else if self.started {
                    "no `message_stop` event came".to_owned()
                } else {
                    "no `message_start` event came".to_owned()
                },
            });
        }
        self.blocks.sort_by_key(|block| block.index);
        let mut streamed_arguments = Vec::new();
        for block in &mut self.blocks {
            block.stop();
            if block.block["type"] == "tool_use" {
                streamed_arguments.push(block.arguments.take());
            }
        }
        let blocks = self.blocks.into_iter().map(|block| block.block).collect();
        let (content, mut tool_calls, replay) = read_blocks(blocks)?;
        // The calls carry the model's text, which may not be JSON; the replay, an object.
        // `read_blocks` made one call per `tool_use` block, in order.
        for (call, text) in tool_calls.iter_mut().zip(streamed_arguments) {
            if let Some(text) = text {
                call.arguments = text;
            }
        }
        Ok(ModelResponse {
            stop: stop_reason(self.stop_reason.as_deref(), !tool_calls.is_empty()),
            content,
            tool_calls,
            usage: self.counts.usage(),
            replay,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{StreamDecoder, decode_transcript, weather_tool};
    use pretty_assertions::assert_eq;

    fn decode(transcript: &str) -> (String, Result<ModelResponse, ModelError>) {
        decode_transcript(WireFormat::Anthropic, transcript)
    }

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            item_id: None,
        }
    }

    /// Anthropic's stream for a model that thinks, says a word and calls a tool: every event it
    /// sends, `ping` included.
    const TOOL_CALL_STREAM: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user wants "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"the weather."}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Checking"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"."}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"location\":"}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":" \"Paris\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":40}}

event: message_stop
data: {"type":"message_stop"}

"#;

    #[test]
    fn a_streamed_tool_call_keeps_its_thinking_for_the_replay() {
        let (streamed, response) = decode(TOOL_CALL_STREAM);
        assert_eq!(streamed, "Checking.");
        assert_eq!(
            response.expect("complete"),
            ModelResponse {
                content: "Checking.".into(),
                tool_calls: vec![call("toolu_01", "get_weather", r#"{"location": "Paris"}"#)],
                stop: StopReason::ToolCalls,
                usage: Usage {
                    input_tokens: 400,
                    output_tokens: 40,
                    cached_input_tokens: 100,
                    reasoning_tokens: 0,
                },
                replay: Some(Replay {
                    format: WireFormat::Anthropic,
                    items: vec![
                        json!({"type":"thinking","thinking":"The user wants the weather.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}),
                        json!({"type":"text","text":"Checking."}),
                        json!({"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"location":"Paris"}}),
                    ],
                }),
            }
        );
    }

    /// OpenRouter's Anthropic-compatible stream: a processing comment, no input count until
    /// `message_delta`, and `[DONE]` after `message_stop`.
    const OPENROUTER_TEXT_STREAM: &str = r#": OPENROUTER PROCESSING

event: message_start
data: {"type":"message_start","message":{"id":"gen-1","type":"message","role":"assistant","model":"anthropic/claude-sonnet-4.5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"18°C and "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"sunny."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":412,"output_tokens":9}}

event: message_stop
data: {"type":"message_stop"}

data: [DONE]

"#;

    #[test]
    fn streamed_text_counts_input_tokens_from_message_delta() {
        let (streamed, response) = decode(OPENROUTER_TEXT_STREAM);
        let response = response.expect("complete");
        assert_eq!(streamed, "18°C and sunny.");
        assert_eq!(response.content, "18°C and sunny.");
        assert_eq!(response.stop, StopReason::Completed);
        assert_eq!(
            (response.usage.input_tokens, response.usage.output_tokens),
            (412, 9)
        );
    }

    #[test]
    fn a_done_marker_after_message_stop_is_tolerated() {
        let mut stream = AnthropicStream::default();
        let mut ignore = |_: &str| {};
        assert!(
            stream
                .event("message_stop", r#"{"type":"message_stop"}"#, &mut ignore)
                .expect("read")
        );
        assert!(stream.event("", "[DONE]", &mut ignore).expect("tolerated"));
        assert_eq!(
            Box::new(stream).finish().expect("complete").stop,
            StopReason::Completed
        );
    }

    #[test]
    fn parallel_tool_uses_and_an_empty_input() {
        let (_, response) = decode(
            r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_02","type":"message","role":"assistant","content":[],"usage":{"input_tokens":20,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"location\":\"Paris\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_b","name":"list_skills","input":{}}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}

event: message_stop
data: {"type":"message_stop"}

"#,
        );
        let response = response.expect("complete");
        assert_eq!(
            response.tool_calls,
            vec![
                call("toolu_a", "get_weather", r#"{"location":"Paris"}"#),
                call("toolu_b", "list_skills", "{}"),
            ]
        );
        assert_eq!(
            response.replay.expect("a replay").items[1],
            json!({"type":"tool_use","id":"toolu_b","name":"list_skills","input":{}})
        );
    }

    #[test]
    fn arguments_that_are_not_json_are_kept_as_written_and_replayed_as_an_object() {
        let (_, response) = decode(
            r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_03","type":"message","role":"assistant","content":[],"usage":{"input_tokens":20,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_x","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"location\": Par"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":12}}

event: message_stop
data: {"type":"message_stop"}

"#,
        );
        let response = response.expect("complete");
        assert_eq!(
            response.tool_calls,
            vec![call("toolu_x", "get_weather", r#"{"location": Par"#)]
        );
        assert_eq!(
            response.replay.expect("a replay").items,
            vec![json!({"type":"tool_use","id":"toolu_x","name":"get_weather","input":{}})]
        );
    }

    #[test]
    fn a_cut_stream_is_truncated() {
        let cut = TOOL_CALL_STREAM
            .split("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}")
            .next()
            .expect("a prefix");
        let (streamed, response) = decode(cut);
        assert_eq!(streamed, "Checking.");
        let error = response.expect_err("truncated");
        assert!(matches!(error, ModelError::Truncated { .. }), "{error}");
        assert!(error.to_string().contains("no `message_stop`"), "{error}");

        let (_, response) = decode(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{}}}\n\ndata: [DONE]\n\n",
        );
        let error = response.expect_err("truncated");
        assert!(
            error.to_string().contains("`[DONE]` came before"),
            "{error}"
        );
    }

    #[test]
    fn malformed_data_is_an_error() {
        let (_, response) =
            decode("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n");
        let error = response.expect_err("malformed");
        assert!(
            error
                .to_string()
                .contains("event `content_block_delta` is not JSON"),
            "{error}"
        );

        let (_, response) = decode(
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":4,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
        );
        let error = response.expect_err("malformed");
        assert!(
            error
                .to_string()
                .contains("`content_block_delta` for a block no `content_block_start` opened"),
            "{error}"
        );
    }

    #[test]
    fn an_error_event_is_a_provider_error() {
        let (streamed, response) = decode(
            r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_04","type":"message","role":"assistant","content":[],"usage":{"input_tokens":20,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}

event: error
data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}

"#,
        );
        assert_eq!(streamed, "Hel");
        let error = response.expect_err("an error");
        assert!(
            matches!(&error, ModelError::Provider { kind: Some(kind), message }
                if kind == "overloaded_error" && message == "Overloaded"),
            "{error:?}"
        );
        assert!(error.is_transient());
    }

    #[test]
    fn a_whole_body_is_read() {
        let body = json!({"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
            "content":[{"type":"text","text":"Checking."},
                {"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"location":"Paris"}}],
            "stop_reason":"tool_use","stop_sequence":null,
            "usage":{"input_tokens":300,"output_tokens":40,
                "cache_creation_input_tokens":0,"cache_read_input_tokens":0}});
        let response = parse_response(&body).expect("parsed");
        assert_eq!(response.content, "Checking.");
        assert_eq!(
            response.tool_calls,
            vec![call("toolu_01", "get_weather", r#"{"location":"Paris"}"#)]
        );
        assert_eq!(response.stop, StopReason::ToolCalls);
        assert_eq!(response.usage.input_tokens, 300);
        assert_eq!(
            response.replay.expect("a replay").items,
            body["content"].as_array().expect("blocks").clone()
        );

        let error = parse_response(&json!({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}))
            .expect_err("an error body");
        assert!(
            matches!(&error, ModelError::Provider { kind: Some(kind), .. } if kind == "invalid_request_error"),
            "{error:?}"
        );
        assert!(!error.is_transient());
        let error = parse_response(&json!({"type":"message"})).expect_err("no content");
        assert!(error.to_string().contains("without `content`"), "{error}");
        let error = parse_response(&json!({"content":[{"type":"tool_use","name":"f","input":{}}]}))
            .expect_err("no id");
        assert!(error.to_string().contains("without an `id`"), "{error}");
    }

    #[test]
    fn stop_reasons_are_mapped() {
        let stop = |reason: &str| {
            parse_response(&json!({"content":[],"stop_reason":reason}))
                .expect("parsed")
                .stop
        };
        assert_eq!(stop("end_turn"), StopReason::Completed);
        assert_eq!(stop("stop_sequence"), StopReason::Completed);
        assert_eq!(stop("tool_use"), StopReason::ToolCalls);
        assert_eq!(stop("max_tokens"), StopReason::MaxTokens);
        assert_eq!(stop("refusal"), StopReason::Refused);
        assert_eq!(stop("pause_turn"), StopReason::Other("pause_turn".into()));
    }

    #[test]
    fn history_alternates_roles_with_replayed_blocks() {
        let mut replayed = decode(TOOL_CALL_STREAM).1.expect("complete");
        if let Some(replay) = &mut replayed.replay {
            // The API may send an empty text block; it cannot go back.
            replay.items.insert(1, json!({"type":"text","text":""}));
        }
        let messages = vec![
            Message::user("Weather in Paris and Oslo?"),
            // Rebuilt: written by another format (its replay is not ours) or an old transcript.
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "call_1".into(),
                        name: "get_weather".into(),
                        arguments: "not json".into(),
                        item_id: Some("fc_1".into()),
                    },
                    ToolCall {
                        id: "call_2".into(),
                        name: "get_weather".into(),
                        arguments: r#"{"location":"Oslo"}"#.into(),
                        item_id: Some("fc_2".into()),
                    },
                ],
                replay: Some(Replay {
                    format: WireFormat::Responses,
                    items: vec![json!({"type":"reasoning","id":"rs_9","summary":[]})],
                }),
            },
            Message::Tool {
                results: vec![
                    ToolResult {
                        call_id: "call_1".into(),
                        name: "get_weather".into(),
                        content: "arguments are not JSON".into(),
                        is_error: true,
                    },
                    ToolResult {
                        call_id: "call_2".into(),
                        name: "get_weather".into(),
                        content: String::new(),
                        is_error: false,
                    },
                ],
            },
            // Right after the results: one user message with both.
            Message::user("Paris only, please."),
            replayed.into_message(),
            Message::Tool {
                results: vec![ToolResult {
                    call_id: "toolu_01".into(),
                    name: "get_weather".into(),
                    content: "18°C, sunny".into(),
                    is_error: false,
                }],
            },
            Message::assistant("18°C and sunny in Paris."),
        ];
        let body = request_body(&ModelRequest {
            model: "claude-sonnet-4-5",
            system: "You are a helpful assistant.",
            messages: &messages,
            tools: &[weather_tool()],
            max_output_tokens: 1024,
            temperature: Some(0.5),
        });
        insta::assert_json_snapshot!(body);
    }

    #[test]
    fn optional_fields_are_left_out() {
        let body = request_body(&ModelRequest {
            model: "m",
            system: "",
            messages: &[Message::user("hi"), Message::assistant("")],
            tools: &[],
            max_output_tokens: 64,
            temperature: None,
        });
        assert_eq!(
            body,
            json!({
                "model": "m",
                "max_tokens": 64,
                "messages": [{"role":"user","content":[{"type":"text","text":"hi"}]}],
                "stream": true,
            })
        );
    }
}
