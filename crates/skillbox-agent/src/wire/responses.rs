//! The Responses API: `POST {base}/responses`, OpenRouter's default and OpenAI's newer API.
//! Used statelessly (`store: false`, no `previous_response_id`): every request carries the whole
//! conversation in `input`, the model's own output items sent back as it wrote them (reasoning
//! items, messages, function calls with their `fc_…` ids), then one `function_call_output` per
//! call.

use serde_json::{Value, json};
use skillbox_tools::{ToolFormat, render_tools};

use super::chat::{provider_error, sendable_arguments};
use super::{WireFormat, count, event_type, excerpt, is_done_marker, parse_event_data};
use crate::conversation::{Message, Replay, ToolCall, ToolResult, Usage};
use crate::model::{ModelError, ModelRequest, ModelResponse, StopReason};

/// The streaming request body.
#[must_use]
pub fn request_body(request: &ModelRequest<'_>) -> Value {
    let mut input = Vec::with_capacity(request.messages.len());
    for message in request.messages {
        match message {
            Message::User { content } => input.push(json!({
                "type": "message",
                "role": "user",
                "content": [{ "type": "input_text", "text": content }],
            })),
            Message::Assistant {
                content,
                tool_calls,
                replay,
            } => match replay {
                Some(replay) if replay.format == WireFormat::Responses => {
                    input.extend(replay.items.iter().map(replayed_item));
                }
                _ => {
                    if !content.is_empty() {
                        input.push(json!({
                            "type": "message",
                            "role": "assistant",
                            "content": [{ "type": "output_text", "text": content }],
                        }));
                    }
                    input.extend(tool_calls.iter().map(function_call_item));
                }
            },
            Message::Tool { results } => input.extend(results.iter().map(function_call_output)),
        }
    }
    let mut body = json!({ "model": request.model });
    if !request.system.is_empty() {
        body["instructions"] = json!(request.system);
    }
    body["input"] = Value::Array(input);
    if !request.tools.is_empty() {
        body["tools"] = render_tools(request.tools, ToolFormat::Responses);
        body["tool_choice"] = json!("auto");
    }
    body["stream"] = json!(true);
    body["max_output_tokens"] = json!(request.max_output_tokens);
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
    // Nothing is kept on the server: the next request sends the conversation again.
    body["store"] = json!(false);
    body
}

/// An output item sent back as the API wrote it, except a function call's arguments that are
/// not a JSON object: they become `{}` (see [`sendable_arguments`]), since servers that pass
/// the history on to another model's API parse them; the call's result told the model already.
fn replayed_item(item: &Value) -> Value {
    let mut item = item.clone();
    if item["type"] == "function_call"
        && let Some(arguments) = item["arguments"].as_str()
    {
        let sendable = sendable_arguments(arguments);
        if sendable != arguments {
            item["arguments"] = json!(sendable);
        }
    }
    item
}

/// A tool call rebuilt from the neutral fields (history from another format, or an old
/// transcript): its `fc_…` item id when it has one.
fn function_call_item(call: &ToolCall) -> Value {
    let mut item = json!({ "type": "function_call" });
    if let Some(item_id) = &call.item_id {
        item["id"] = json!(item_id);
    }
    item["call_id"] = json!(call.id);
    item["name"] = json!(call.name);
    item["arguments"] = json!(sendable_arguments(&call.arguments));
    item
}

/// A tool result. OpenRouter requires an `id` on `function_call_output` items in history; it is
/// derived from the call id, so the same result always carries the same id.
fn function_call_output(result: &ToolResult) -> Value {
    json!({
        "type": "function_call_output",
        "id": format!("fco_{}", result.call_id),
        "call_id": result.call_id,
        "output": result.content,
    })
}

fn usage(value: &Value) -> Usage {
    Usage {
        input_tokens: count(&value["input_tokens"]),
        output_tokens: count(&value["output_tokens"]),
        cached_input_tokens: count(&value["input_tokens_details"]["cached_tokens"]),
        reasoning_tokens: count(&value["output_tokens_details"]["reasoning_tokens"]),
    }
}

/// A failed response's error (`response.error` `{code, message}`).
fn failure(response: &Value) -> ModelError {
    match provider_error(response).filter(|_| response["error"].is_object()) {
        Some(error) => error,
        None => ModelError::Provider {
            kind: None,
            message: format!(
                "the response failed without saying why: {}",
                excerpt(&response.to_string())
            ),
        },
    }
}

/// An `error` event: `{type: "error", code, message, param}` (or an `error` object inside).
fn stream_error(event: &Value) -> ModelError {
    if event["error"].is_object()
        && let Some(error) = provider_error(event)
    {
        return error;
    }
    ModelError::Provider {
        kind: event["code"].as_str().map(str::to_owned),
        message: event["message"]
            .as_str()
            .map_or_else(|| excerpt(&event.to_string()), str::to_owned),
    }
}

/// Read a response object (a whole body, or the one a terminal event carries) given its
/// status. `streamed` holds the items assembled from the stream, used when the object carries
/// no `output` (its `output`, when present, is the authority).
fn read_response(
    response: &Value,
    status: &str,
    streamed: &[StreamItem],
) -> Result<ModelResponse, ModelError> {
    if status == "failed" {
        return Err(failure(response));
    }
    let items: Vec<Value> = match response["output"].as_array() {
        Some(output) if !output.is_empty() => output.clone(),
        _ => {
            let mut streamed: Vec<&StreamItem> = streamed.iter().collect();
            streamed.sort_by_key(|item| item.output_index.unwrap_or(u64::MAX));
            streamed.into_iter().map(StreamItem::assembled).collect()
        }
    };
    let mut content = String::new();
    let mut refused = false;
    let mut tool_calls = Vec::new();
    for item in &items {
        match item["type"].as_str() {
            Some("message") => {
                for part in item["content"].as_array().into_iter().flatten() {
                    match part["type"].as_str() {
                        Some("output_text") => {
                            content.push_str(part["text"].as_str().unwrap_or_default());
                        }
                        Some("refusal") => {
                            refused = true;
                            content.push_str(part["refusal"].as_str().unwrap_or_default());
                        }
                        _ => {}
                    }
                }
            }
            Some("function_call") => tool_calls.push(tool_call(item)?),
            _ => {}
        }
    }
    let stop = match status {
        "incomplete" => match response["incomplete_details"]["reason"].as_str() {
            None | Some("max_output_tokens") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::Refused,
            Some(other) => StopReason::Other(other.to_owned()),
        },
        _ if !tool_calls.is_empty() => StopReason::ToolCalls,
        _ if refused => StopReason::Refused,
        "completed" => StopReason::Completed,
        other => StopReason::Other(other.to_owned()),
    };
    Ok(ModelResponse {
        content,
        tool_calls,
        stop,
        usage: usage(&response["usage"]),
        replay: (!items.is_empty()).then_some(Replay {
            format: WireFormat::Responses,
            items,
        }),
    })
}

/// A `function_call` output item as a tool call: `call_id` answers it, `id` names the item.
fn tool_call(item: &Value) -> Result<ToolCall, ModelError> {
    let id = item["call_id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .ok_or_else(|| ModelError::Malformed {
            detail: format!(
                "a `function_call` item without a `call_id`: {}",
                excerpt(&item.to_string())
            ),
        })?;
    Ok(ToolCall {
        id: id.to_owned(),
        name: item["name"].as_str().unwrap_or_default().to_owned(),
        arguments: match &item["arguments"] {
            Value::String(text) => text.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        },
        item_id: item["id"].as_str().map(str::to_owned),
    })
}

/// Read a whole (not streamed) response.
///
/// # Errors
/// [`ModelError::Provider`] for an error body or a failed response, [`ModelError::Malformed`]
/// without `output` or for a function call without a `call_id`.
pub fn parse_response(body: &Value) -> Result<ModelResponse, ModelError> {
    if body["error"].is_object()
        && let Some(error) = provider_error(body)
    {
        return Err(error);
    }
    if !body["output"].is_array() {
        return Err(ModelError::Malformed {
            detail: format!(
                "a response without `output`: {}",
                excerpt(&body.to_string())
            ),
        });
    }
    read_response(body, body["status"].as_str().unwrap_or("completed"), &[])
}

/// One output item as the stream builds it: the item from `response.output_item.added` (then
/// `.done`), and the text and argument pieces streamed for it.
#[derive(Debug)]
struct StreamItem {
    output_index: Option<u64>,
    item: Value,
    text: String,
    arguments: String,
}

impl StreamItem {
    /// The item with its streamed pieces filled in where the item itself has none.
    fn assembled(&self) -> Value {
        let mut item = self.item.clone();
        match item["type"].as_str() {
            Some("function_call") if item["arguments"].as_str().is_none_or(str::is_empty) => {
                item["arguments"] = json!(self.arguments);
            }
            Some("message")
                if item["content"].as_array().is_none_or(Vec::is_empty)
                    && !self.text.is_empty() =>
            {
                item["content"] =
                    json!([{ "type": "output_text", "text": self.text, "annotations": [] }]);
            }
            _ => {}
        }
        item
    }
}

/// Reads a Responses API event stream: typed events (`response.output_text.delta`,
/// `response.function_call_arguments.delta`, …) ending with `response.completed`,
/// `response.incomplete` or `response.failed`, which carry the whole response.
#[derive(Debug, Default)]
pub struct ResponsesStream {
    items: Vec<StreamItem>,
    response: Option<ModelResponse>,
    done_marker: bool,
}

impl ResponsesStream {
    /// The item an event is about (by `item_id`, else `output_index`), opened with `opening`
    /// when no `response.output_item.added` announced it.
    fn item_for(&mut self, event: &Value, opening: impl FnOnce() -> Value) -> &mut StreamItem {
        let item_id = event["item_id"].as_str();
        let output_index = event["output_index"].as_u64();
        let position = item_id
            .and_then(|id| {
                self.items
                    .iter()
                    .position(|item| item.item["id"].as_str() == Some(id))
            })
            .or_else(|| {
                output_index.and_then(|index| {
                    self.items
                        .iter()
                        .position(|item| item.output_index == Some(index))
                })
            });
        let position = position.unwrap_or_else(|| {
            let mut item = opening();
            if let Some(id) = item_id {
                item["id"] = json!(id);
            }
            self.items.push(StreamItem {
                output_index,
                item,
                text: String::new(),
                arguments: String::new(),
            });
            self.items.len() - 1
        });
        &mut self.items[position]
    }

    /// `response.output_item.added` / `.done`: the item as the API describes it now.
    fn item_event(&mut self, event_name: &str, event: &Value) -> Result<(), ModelError> {
        let item = &event["item"];
        if !item.is_object() {
            return Err(ModelError::Malformed {
                detail: format!(
                    "`{event_name}` without an `item` object: {}",
                    excerpt(&event.to_string())
                ),
            });
        }
        let mut keyed = event.clone();
        if keyed["item_id"].is_null()
            && let Some(id) = item["id"].as_str()
        {
            keyed["item_id"] = json!(id);
        }
        self.item_for(&keyed, || item.clone()).item = item.clone();
        Ok(())
    }

    /// A terminal event: the whole response it carries.
    fn terminal(&mut self, event_name: &str, event: &Value) -> Result<(), ModelError> {
        let response = &event["response"];
        if !response.is_object() {
            return Err(ModelError::Malformed {
                detail: format!(
                    "`{event_name}` without a `response` object: {}",
                    excerpt(&event.to_string())
                ),
            });
        }
        let status = response["status"].as_str().unwrap_or(match event_name {
            "response.incomplete" => "incomplete",
            "response.failed" => "failed",
            _ => "completed",
        });
        self.response = Some(read_response(response, status, &self.items)?);
        Ok(())
    }
}

impl super::StreamDecoder for ResponsesStream {
    fn event(
        &mut self,
        event: &str,
        data: &str,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<bool, ModelError> {
        super::check_item_count(self.items.len())?;
        if is_done_marker(data) {
            self.done_marker = true;
            return Ok(true);
        }
        if data.trim().is_empty() {
            return Ok(false);
        }
        let value = parse_event_data(event, data)?;
        let kind = event_type(event, &value);
        match kind {
            "response.output_item.added" | "response.output_item.done" => {
                self.item_event(kind, &value)?;
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(delta) = value["delta"].as_str().filter(|delta| !delta.is_empty()) {
                    self.item_for(&value, || json!({ "type": "message", "role": "assistant" }))
                        .text
                        .push_str(delta);
                    on_text(delta);
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(delta) = value["delta"].as_str() {
                    self.item_for(&value, || json!({ "type": "function_call" }))
                        .arguments
                        .push_str(delta);
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(arguments) = value["arguments"].as_str() {
                    arguments.clone_into(
                        &mut self
                            .item_for(&value, || json!({ "type": "function_call" }))
                            .arguments,
                    );
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                self.terminal(kind, &value)?;
                return Ok(true);
            }
            "error" => return Err(stream_error(&value)),
            _ => {}
        }
        Ok(false)
    }

    fn finish(self: Box<Self>) -> Result<ModelResponse, ModelError> {
        self.response.ok_or_else(|| ModelError::Truncated {
            detail: if self.done_marker {
                "`[DONE]` came before `response.completed`".to_owned()
            } else {
                "no `response.completed`, `response.incomplete` or `response.failed` event came"
                    .to_owned()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{StreamDecoder, decode_transcript, weather_tool};
    use pretty_assertions::assert_eq;

    fn decode(transcript: &str) -> (String, Result<ModelResponse, ModelError>) {
        decode_transcript(WireFormat::Responses, transcript)
    }

    fn call(id: &str, name: &str, arguments: &str, item_id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            item_id: Some(item_id.into()),
        }
    }

    /// OpenAI's stream for a reasoning model calling a tool: every event it sends, named.
    const TOOL_CALL_STREAM: &str = r#"event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_123","object":"response","created_at":1741290958,"status":"in_progress","model":"o4-mini-2025-04-16","output":[],"parallel_tool_calls":true,"store":false,"tool_choice":"auto","usage":null}}

event: response.in_progress
data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_123","object":"response","created_at":1741290958,"status":"in_progress","model":"o4-mini-2025-04-16","output":[],"usage":null}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAAB-opaque"}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":4,"output_index":1,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_9","name":"get_weather"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":5,"item_id":"fc_1","output_index":1,"delta":"{\"location\":"}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":6,"item_id":"fc_1","output_index":1,"delta":"\"San Francisco, CA\"}"}

event: response.function_call_arguments.done
data: {"type":"response.function_call_arguments.done","sequence_number":7,"item_id":"fc_1","output_index":1,"arguments":"{\"location\":\"San Francisco, CA\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":8,"output_index":1,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"location\":\"San Francisco, CA\"}","call_id":"call_9","name":"get_weather"}}

event: response.completed
data: {"type":"response.completed","sequence_number":9,"response":{"id":"resp_123","object":"response","created_at":1741290958,"status":"completed","model":"o4-mini-2025-04-16","output":[{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAAB-opaque"},{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"location\":\"San Francisco, CA\"}","call_id":"call_9","name":"get_weather"}],"parallel_tool_calls":true,"usage":{"input_tokens":45,"input_tokens_details":{"cached_tokens":32},"output_tokens":25,"output_tokens_details":{"reasoning_tokens":12},"total_tokens":70}}}

"#;

    #[test]
    fn a_streamed_tool_call_keeps_its_reasoning_for_the_replay() {
        let (streamed, response) = decode(TOOL_CALL_STREAM);
        assert_eq!(streamed, "");
        assert_eq!(
            response.expect("complete"),
            ModelResponse {
                content: String::new(),
                tool_calls: vec![call(
                    "call_9",
                    "get_weather",
                    r#"{"location":"San Francisco, CA"}"#,
                    "fc_1"
                )],
                stop: StopReason::ToolCalls,
                usage: Usage {
                    input_tokens: 45,
                    output_tokens: 25,
                    cached_input_tokens: 32,
                    reasoning_tokens: 12,
                },
                replay: Some(Replay {
                    format: WireFormat::Responses,
                    items: vec![
                        json!({"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAAB-opaque"}),
                        json!({"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"location\":\"San Francisco, CA\"}","call_id":"call_9","name":"get_weather"}),
                    ],
                }),
            }
        );
    }

    /// OpenRouter's stream for a text answer: unnamed events, a processing comment, `[DONE]`, and
    /// a reasoning item only in the final output.
    const TEXT_STREAM: &str = r#": OPENROUTER PROCESSING

data: {"type":"response.created","sequence_number":0,"response":{"id":"gen-1","object":"response","status":"in_progress","model":"openai/gpt-4o-mini","output":[]}}

data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"gen-1","object":"response","status":"in_progress","model":"openai/gpt-4o-mini","output":[]}}

data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}}

data: {"type":"response.content_part.added","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}

: OPENROUTER PROCESSING

data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"It is 18°C"}

data: {"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":0,"content_index":0,"delta":" and sunny."}

data: {"type":"response.output_text.done","sequence_number":6,"item_id":"msg_1","output_index":0,"content_index":0,"text":"It is 18°C and sunny."}

data: {"type":"response.content_part.done","sequence_number":7,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"It is 18°C and sunny.","annotations":[]}}

data: {"type":"response.output_item.done","sequence_number":8,"output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"It is 18°C and sunny.","annotations":[]}]}}

data: {"type":"response.completed","sequence_number":9,"response":{"id":"gen-1","object":"response","status":"completed","model":"openai/gpt-4o-mini","output":[{"type":"reasoning","id":"rs_gen-1","summary":[{"type":"summary_text","text":"Weather lookup."}],"encrypted_content":"opaque"},{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"It is 18°C and sunny.","annotations":[]}]}],"usage":{"input_tokens":80,"output_tokens":9,"total_tokens":89,"cost":0.00002,"is_byok":false}}}

data: [DONE]

"#;

    #[test]
    fn streamed_text_reaches_on_text_and_the_answer() {
        let (streamed, response) = decode(TEXT_STREAM);
        let response = response.expect("complete");
        assert_eq!(streamed, "It is 18°C and sunny.");
        assert_eq!(response.content, "It is 18°C and sunny.");
        assert_eq!(response.stop, StopReason::Completed);
        assert_eq!(response.tool_calls, vec![]);
        assert_eq!(
            (response.usage.input_tokens, response.usage.output_tokens),
            (80, 9)
        );
        // The terminal event's output is the authority: it holds a reasoning item never
        // announced by the stream.
        let ids: Vec<&Value> = response
            .replay
            .as_ref()
            .expect("a replay")
            .items
            .iter()
            .map(|item| &item["id"])
            .collect();
        assert_eq!(ids, vec!["rs_gen-1", "msg_1"]);
    }

    #[test]
    fn a_done_marker_after_the_response_is_tolerated() {
        let mut stream = ResponsesStream::default();
        let mut ignore = |_: &str| {};
        let completed =
            r#"{"type":"response.completed","response":{"status":"completed","output":[]}}"#;
        assert!(stream.event("", completed, &mut ignore).expect("read"));
        assert!(stream.event("", "[DONE]", &mut ignore).expect("tolerated"));
        let response = Box::new(stream).finish().expect("complete");
        assert_eq!(response.stop, StopReason::Completed);
    }

    #[test]
    fn parallel_function_calls_are_kept_in_order() {
        let (_, response) = decode(
            r#"event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"fc_a","type":"function_call","status":"in_progress","arguments":"","call_id":"call_a","name":"get_weather"}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":2,"output_index":1,"item":{"id":"fc_b","type":"function_call","status":"in_progress","arguments":"","call_id":"call_b","name":"get_time"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_b","output_index":1,"delta":"{\"zone\":\"CET\"}"}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":4,"item_id":"fc_a","output_index":0,"delta":"{\"location\":\"Paris\"}"}

event: response.completed
data: {"type":"response.completed","sequence_number":5,"response":{"id":"resp_2","status":"completed","output":[{"id":"fc_a","type":"function_call","status":"completed","arguments":"{\"location\":\"Paris\"}","call_id":"call_a","name":"get_weather"},{"id":"fc_b","type":"function_call","status":"completed","arguments":"{\"zone\":\"CET\"}","call_id":"call_b","name":"get_time"}],"usage":{"input_tokens":50,"output_tokens":30,"total_tokens":80}}}

"#,
        );
        let response = response.expect("complete");
        assert_eq!(
            response.tool_calls,
            vec![
                call("call_a", "get_weather", r#"{"location":"Paris"}"#, "fc_a"),
                call("call_b", "get_time", r#"{"zone":"CET"}"#, "fc_b"),
            ]
        );
        assert_eq!(response.stop, StopReason::ToolCalls);
    }

    #[test]
    fn without_output_in_the_terminal_event_the_streamed_items_are_assembled() {
        let (streamed, response) = decode(
            r#"data: {"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_7","role":"assistant","content":[]}}

data: {"type":"response.output_text.delta","item_id":"msg_7","output_index":0,"content_index":0,"delta":"Let me check."}

data: {"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_7","call_id":"call_7","name":"get_weather","arguments":""}}

data: {"type":"response.function_call_arguments.delta","item_id":"fc_7","output_index":1,"delta":"{\"location\":"}

data: {"type":"response.function_call_arguments.delta","item_id":"fc_7","output_index":1,"delta":"\"Oslo\"}"}

data: {"type":"response.completed","response":{"status":"completed","output":[],"usage":{"input_tokens":10,"output_tokens":5}}}

"#,
        );
        let response = response.expect("complete");
        assert_eq!(streamed, "Let me check.");
        assert_eq!(response.content, "Let me check.");
        assert_eq!(
            response.tool_calls,
            vec![call(
                "call_7",
                "get_weather",
                r#"{"location":"Oslo"}"#,
                "fc_7"
            )]
        );
        assert_eq!(
            response.replay.expect("a replay").items,
            vec![
                json!({"type":"message","id":"msg_7","role":"assistant","content":[{"type":"output_text","text":"Let me check.","annotations":[]}]}),
                json!({"type":"function_call","id":"fc_7","call_id":"call_7","name":"get_weather","arguments":"{\"location\":\"Oslo\"}"}),
            ]
        );
    }

    #[test]
    fn arguments_that_are_not_json_are_kept_as_written_and_sent_back_as_an_object() {
        let (_, response) = decode(
            r#"event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"location\": San Fr","call_id":"call_1","name":"get_weather"}}

event: response.completed
data: {"type":"response.completed","sequence_number":2,"response":{"status":"completed","output":[{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"location\": San Fr","call_id":"call_1","name":"get_weather"}],"usage":{"input_tokens":5,"output_tokens":5}}}

"#,
        );
        let response = response.expect("complete");
        assert_eq!(response.tool_calls[0].arguments, r#"{"location": San Fr"#);
        let messages = [Message::user("weather?"), response.into_message()];
        let body = request_body(&ModelRequest {
            model: "m",
            system: "",
            messages: &messages,
            tools: &[],
            max_output_tokens: 100,
            temperature: None,
        });
        assert_eq!(body["input"][1]["arguments"], "{}");
        assert_eq!(body["input"][1]["id"], "fc_1");
    }

    #[test]
    fn a_cut_stream_is_truncated() {
        let cut = TOOL_CALL_STREAM
            .split("event: response.completed")
            .next()
            .expect("a prefix");
        let (_, response) = decode(cut);
        let error = response.expect_err("truncated");
        assert!(matches!(error, ModelError::Truncated { .. }), "{error}");
        assert!(error.is_transient());

        let (streamed, response) = decode(
            "data: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"delta\":\"Hel\"}\n\ndata: [DONE]\n\n",
        );
        assert_eq!(streamed, "Hel");
        let error = response.expect_err("truncated");
        assert!(
            error.to_string().contains("`[DONE]` came before"),
            "{error}"
        );
    }

    #[test]
    fn malformed_data_is_an_error() {
        let (_, response) = decode(
            "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\n\n",
        );
        let error = response.expect_err("malformed");
        assert!(matches!(error, ModelError::Malformed { .. }), "{error}");
        assert!(
            error
                .to_string()
                .contains("event `response.output_text.delta` is not JSON"),
            "{error}"
        );

        let (_, response) =
            decode("data: {\"type\":\"response.completed\",\"response\":\"done\"}\n\n");
        let error = response.expect_err("malformed");
        assert!(
            error
                .to_string()
                .contains("`response.completed` without a `response` object"),
            "{error}"
        );
    }

    #[test]
    fn errors_in_the_stream_are_provider_errors() {
        let (_, response) = decode(
            r#"event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}

event: error
data: {"type":"error","sequence_number":1,"code":"rate_limit_exceeded","message":"Rate limit reached for o4-mini","param":null}

"#,
        );
        let error = response.expect_err("an error");
        assert!(
            matches!(&error, ModelError::Provider { kind: Some(kind), message }
                if kind == "rate_limit_exceeded" && message == "Rate limit reached for o4-mini"),
            "{error:?}"
        );
        assert!(error.is_transient());

        let (_, response) = decode(
            r#"event: response.failed
data: {"type":"response.failed","sequence_number":3,"response":{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"The model failed to generate a response."},"output":[],"usage":null}}

"#,
        );
        let error = response.expect_err("failed");
        assert!(
            matches!(&error, ModelError::Provider { kind: Some(kind), .. } if kind == "server_error"),
            "{error:?}"
        );
        assert!(error.to_string().contains("The model failed"), "{error}");
    }

    #[test]
    fn an_incomplete_response_says_why() {
        let (streamed, response) = decode(
            r#"event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"The long"}

event: response.incomplete
data: {"type":"response.incomplete","sequence_number":5,"response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","id":"msg_1","role":"assistant","status":"incomplete","content":[{"type":"output_text","text":"The long","annotations":[]}]}],"usage":{"input_tokens":10,"output_tokens":2}}}

"#,
        );
        assert_eq!(streamed, "The long");
        let response = response.expect("complete");
        assert_eq!(response.stop, StopReason::MaxTokens);
        assert_eq!(response.content, "The long");

        let body = json!({"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]});
        assert_eq!(
            parse_response(&body).expect("parsed").stop,
            StopReason::Refused
        );
    }

    #[test]
    fn a_whole_body_is_read() {
        let body = json!({"id":"resp_123","object":"response","created_at":1,"status":"completed","model":"o4-mini",
            "output":[{"type":"function_call","id":"fc_1","call_id":"call_9","name":"get_weather",
                "arguments":"{\"location\":\"San Francisco, CA\"}","status":"completed"}],
            "output_text":"","parallel_tool_calls":true,"error":null,
            "usage":{"input_tokens":45,"input_tokens_details":{"cached_tokens":0},
                "output_tokens":25,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":70}});
        let response = parse_response(&body).expect("parsed");
        assert_eq!(
            response.tool_calls,
            vec![call(
                "call_9",
                "get_weather",
                r#"{"location":"San Francisco, CA"}"#,
                "fc_1"
            )]
        );
        assert_eq!(response.stop, StopReason::ToolCalls);
        assert_eq!(response.usage.input_tokens, 45);

        let error = parse_response(
            &json!({"error":{"code":"invalid_prompt","message":"Missing input"},"metadata":null}),
        )
        .expect_err("an error body");
        assert!(
            matches!(&error, ModelError::Provider { kind: Some(kind), .. } if kind == "invalid_prompt"),
            "{error:?}"
        );
        let error = parse_response(&json!({"object":"response"})).expect_err("no output");
        assert!(error.to_string().contains("without `output`"), "{error}");
        let error = parse_response(
            &json!({"output":[{"type":"function_call","name":"f","arguments":"{}"}]}),
        )
        .expect_err("no call id");
        assert!(error.to_string().contains("without a `call_id`"), "{error}");
    }

    #[test]
    fn history_is_sent_whole_with_replayed_items() {
        let replayed = decode(TOOL_CALL_STREAM).1.expect("complete");
        let messages = vec![
            Message::user("Weather in SF and NYC?"),
            // Rebuilt: written by another format (its replay is not ours) or an old transcript.
            Message::Assistant {
                content: "Checking NYC first.".into(),
                tool_calls: vec![ToolCall {
                    id: "toolu_01".into(),
                    name: "get_weather".into(),
                    arguments: "not json".into(),
                    item_id: None,
                }],
                replay: Some(Replay {
                    format: WireFormat::Anthropic,
                    items: vec![json!({"type":"text","text":"ignored"})],
                }),
            },
            Message::Tool {
                results: vec![ToolResult {
                    call_id: "toolu_01".into(),
                    name: "get_weather".into(),
                    content: "{\"error\":\"arguments are not JSON\"}".into(),
                    is_error: true,
                }],
            },
            replayed.into_message(),
            Message::Tool {
                results: vec![ToolResult {
                    call_id: "call_9".into(),
                    name: "get_weather".into(),
                    content: "{\"temp_c\":18}".into(),
                    is_error: false,
                }],
            },
            Message::assistant("18°C in San Francisco."),
            Message::user("Thanks!"),
        ];
        let body = request_body(&ModelRequest {
            model: "openai/o4-mini",
            system: "You are a helpful assistant.",
            messages: &messages,
            tools: &[weather_tool()],
            max_output_tokens: 9000,
            temperature: Some(0.5),
        });
        insta::assert_json_snapshot!(body);
    }

    #[test]
    fn optional_fields_are_left_out() {
        let body = request_body(&ModelRequest {
            model: "m",
            system: "",
            messages: &[Message::user("hi")],
            tools: &[],
            max_output_tokens: 64,
            temperature: None,
        });
        assert_eq!(
            body,
            json!({
                "model": "m",
                "input": [{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],
                "stream": true,
                "max_output_tokens": 64,
                "store": false,
            })
        );
    }
}
