//! OpenAI Chat Completions: `POST {base}/chat/completions`, spoken by OpenAI, OpenRouter and
//! every OpenAI-compatible server (llama.cpp, vLLM, Ollama).

use serde_json::{Map, Value, json};
use skillbox_tools::{ToolFormat, render_tools};

use super::{count, excerpt, is_done_marker, parse_event_data};
use crate::conversation::{Message, ToolCall, Usage};
use crate::model::{ModelError, ModelRequest, ModelResponse, StopReason};

/// The streaming request body.
#[must_use]
pub fn request_body(request: &ModelRequest<'_>) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({ "role": "system", "content": request.system }));
    }
    for message in request.messages {
        match message {
            Message::User { content } => {
                messages.push(json!({ "role": "user", "content": content }));
            }
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                let mut entry = json!({
                    "role": "assistant",
                    "content": if content.is_empty() { Value::Null } else { json!(content) },
                });
                if !tool_calls.is_empty() {
                    entry["tool_calls"] = tool_calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": {
                                    "name": call.name,
                                    "arguments": sendable_arguments(&call.arguments),
                                },
                            })
                        })
                        .collect();
                }
                messages.push(entry);
            }
            Message::Tool { results } => {
                for result in results {
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": result.call_id,
                        "content": result.content,
                    }));
                }
            }
        }
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": { "include_usage": true },
        "max_tokens": request.max_output_tokens,
    });
    if !request.tools.is_empty() {
        body["tools"] = render_tools(request.tools, ToolFormat::OpenAi);
        body["tool_choice"] = json!("auto");
    }
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
    body
}

/// Arguments as they are sent back in history: the model's text when it is a JSON object,
/// else `{}` (servers that render history through a template parse it, and fail on anything
/// else; the call's result already told the model what was wrong).
#[must_use]
pub fn sendable_arguments(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(_)) => arguments.to_owned(),
        _ => "{}".to_owned(),
    }
}

/// The arguments as a JSON object for formats that carry objects (see [`sendable_arguments`]).
#[must_use]
pub fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(Map::new()),
    }
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "stop" | "end_turn" => StopReason::Completed,
        "tool_calls" | "function_call" | "tool_use" => StopReason::ToolCalls,
        "length" | "max_tokens" => StopReason::MaxTokens,
        "content_filter" | "refusal" => StopReason::Refused,
        other => StopReason::Other(other.to_owned()),
    }
}

fn usage(value: &Value) -> Usage {
    Usage {
        input_tokens: count(&value["prompt_tokens"]),
        output_tokens: count(&value["completion_tokens"]),
        cached_input_tokens: count(&value["prompt_tokens_details"]["cached_tokens"]),
        reasoning_tokens: count(&value["completion_tokens_details"]["reasoning_tokens"]),
    }
}

/// An error object in a body or an event (`{"error": {"message", "type"|"code"}}`).
pub(crate) fn provider_error(value: &Value) -> Option<ModelError> {
    let error = value.get("error")?;
    let message = error["message"]
        .as_str()
        .map_or_else(|| excerpt(&error.to_string()), str::to_owned);
    let kind = error["type"]
        .as_str()
        .or_else(|| error["code"].as_str())
        .map(str::to_owned)
        .or_else(|| error["code"].as_u64().map(|code| code.to_string()));
    Some(ModelError::Provider { kind, message })
}

/// Read a whole (not streamed) response.
///
/// # Errors
/// [`ModelError::Provider`] for an error body, [`ModelError::Malformed`] without `choices`.
pub fn parse_response(body: &Value) -> Result<ModelResponse, ModelError> {
    if let Some(error) = provider_error(body) {
        return Err(error);
    }
    let choice = body["choices"]
        .get(0)
        .ok_or_else(|| ModelError::Malformed {
            detail: format!(
                "a chat completion without `choices`: {}",
                excerpt(&body.to_string())
            ),
        })?;
    let message = &choice["message"];
    let tool_calls = message["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .enumerate()
                .map(|(index, call)| ToolCall {
                    id: call["id"]
                        .as_str()
                        .filter(|id| !id.is_empty())
                        .map_or_else(|| format!("call_{index}"), str::to_owned),
                    name: call["function"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    arguments: match &call["function"]["arguments"] {
                        Value::String(text) => text.clone(),
                        Value::Null => String::new(),
                        other => other.to_string(),
                    },
                    item_id: None,
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(ModelResponse {
        content: message["content"].as_str().unwrap_or_default().to_owned(),
        tool_calls,
        stop: stop_reason(choice["finish_reason"].as_str().unwrap_or("stop")),
        usage: usage(&body["usage"]),
        replay: None,
    })
}

/// One tool call being assembled from stream fragments.
#[derive(Debug, Default)]
struct PartialCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

/// Reads a Chat Completions event stream: `data: {chunk}` lines ending with `data: [DONE]`.
#[derive(Debug, Default)]
pub struct ChatStream {
    content: String,
    calls: Vec<PartialCall>,
    stop: Option<StopReason>,
    usage: Usage,
    done: bool,
}

impl ChatStream {
    fn tool_call_fragment(&mut self, fragment: &Value) {
        let index = fragment["index"].as_u64().unwrap_or(0);
        let id = fragment["id"].as_str().filter(|id| !id.is_empty());
        // A fragment opens a new call when its index is new, or (servers that reuse index 0)
        // when it carries an id other than the current call's.
        let opens = match self.calls.last() {
            None => true,
            Some(last) => {
                last.index != index && !self.calls.iter().any(|call| call.index == index)
                    || id.is_some_and(|id| {
                        self.calls
                            .iter()
                            .rev()
                            .find(|call| call.index == index)
                            .is_some_and(|call| !call.id.is_empty() && call.id != id)
                    })
            }
        };
        if opens {
            self.calls.push(PartialCall {
                index,
                ..PartialCall::default()
            });
        }
        let Some(call) = self.calls.iter_mut().rev().find(|call| call.index == index) else {
            return;
        };
        if let Some(id) = id {
            id.clone_into(&mut call.id);
        }
        if let Some(name) = fragment["function"]["name"].as_str() {
            call.name.push_str(name);
        }
        match &fragment["function"]["arguments"] {
            Value::String(piece) => call.arguments.push_str(piece),
            Value::Null => {}
            other => call.arguments.push_str(&other.to_string()),
        }
    }
}

impl super::StreamDecoder for ChatStream {
    fn event(
        &mut self,
        event: &str,
        data: &str,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<bool, ModelError> {
        let data = data.trim();
        if is_done_marker(data) {
            self.done = true;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk = parse_event_data(event, data)?;
        if let Some(error) = provider_error(&chunk) {
            return Err(error);
        }
        if chunk["usage"].is_object() {
            self.usage = usage(&chunk["usage"]);
        }
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str().filter(|text| !text.is_empty()) {
                self.content.push_str(text);
                on_text(text);
            }
            for fragment in delta["tool_calls"].as_array().into_iter().flatten() {
                self.tool_call_fragment(fragment);
                super::check_item_count(self.calls.len())?;
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.stop = Some(stop_reason(reason));
            }
        }
        Ok(false)
    }

    fn finish(self: Box<Self>) -> Result<ModelResponse, ModelError> {
        let Some(stop) = self.stop else {
            return Err(ModelError::Truncated {
                detail: if self.done {
                    "`[DONE]` came before any choice had a `finish_reason`".to_owned()
                } else {
                    "no chunk had a `finish_reason` and no `data: [DONE]` came".to_owned()
                },
            });
        };
        let tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(position, call)| ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{position}")
                } else {
                    call.id
                },
                name: call.name,
                arguments: call.arguments,
                item_id: None,
            })
            .collect();
        Ok(ModelResponse {
            content: self.content,
            tool_calls,
            stop,
            usage: self.usage,
            replay: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{WireFormat, decode_transcript};
    use pretty_assertions::assert_eq;

    /// Decode a stream whose events carry these data lines.
    fn decode(lines: &[&str]) -> (String, Result<ModelResponse, ModelError>) {
        let transcript: String = lines
            .iter()
            .map(|line| format!("data: {line}\n\n"))
            .collect();
        decode_transcript(WireFormat::Chat, &transcript)
    }

    #[test]
    fn streamed_tool_call_is_assembled_from_fragments() {
        let (_, response) = decode(&[
            r#"{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"loc"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ation\":\"NYC\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":15,"total_tokens":65}}"#,
            "[DONE]",
        ]);
        let response = response.expect("complete");
        assert_eq!(
            response.tool_calls,
            vec![ToolCall {
                id: "call_abc".into(),
                name: "get_weather".into(),
                arguments: r#"{"location":"NYC"}"#.into(),
                item_id: None,
            }]
        );
        assert_eq!(response.stop, StopReason::ToolCalls);
        assert_eq!(response.usage.input_tokens, 50);
        assert_eq!(response.usage.output_tokens, 15);
    }

    #[test]
    fn a_new_id_at_index_zero_is_a_new_call() {
        let (_, response) = decode(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"one","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"two","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        let names: Vec<String> = response
            .expect("complete")
            .tool_calls
            .into_iter()
            .map(|call| call.name)
            .collect();
        assert_eq!(names, vec!["one", "two"]);
    }

    #[test]
    fn text_streams_and_a_cut_stream_is_truncated() {
        let (streamed, response) =
            decode(&[r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#]);
        assert_eq!(streamed, "Hel");
        assert!(matches!(response, Err(ModelError::Truncated { .. })));
    }

    #[test]
    fn malformed_chunks_and_stream_errors_are_errors() {
        let (_, response) = decode(&[r#"{"choices":[{"delta":"#]);
        let error = response.expect_err("malformed");
        assert!(error.to_string().contains("not JSON"), "{error}");
        let (_, response) = decode(&[r#"{"error":{"message":"upstream overloaded","code":502}}"#]);
        assert!(matches!(response, Err(ModelError::Provider { .. })));
    }

    #[test]
    fn history_is_rendered_with_tool_results() {
        let messages = vec![
            Message::user("weather?"),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "get_weather".into(),
                    arguments: "not json".into(),
                    item_id: None,
                }],
                replay: None,
            },
            Message::Tool {
                results: vec![crate::conversation::ToolResult {
                    call_id: "c1".into(),
                    name: "get_weather".into(),
                    content: "sunny".into(),
                    is_error: false,
                }],
            },
        ];
        let body = request_body(&ModelRequest {
            model: "m",
            system: "sys",
            messages: &messages,
            tools: &[],
            max_output_tokens: 100,
            temperature: Some(0.0),
        });
        insta::assert_json_snapshot!(body);
    }
}
