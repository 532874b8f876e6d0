//! The bound on a conversation's history: what it keeps in memory, sends with every request
//! and saves. Each model response is capped (64 MiB), but responses add up: a model that sends
//! large arguments every round, or tools that return large results, would grow one turn, a
//! chat and its `--resume` without end. So the history holds at most [`MAX_HISTORY_BYTES`]
//! (its messages as JSON) and [`MAX_HISTORY_CALLS`] tool calls. Past them, in this order:
//!
//! 1. the oldest tool calls are dropped with their results (a note says how many);
//! 2. tool payloads (arguments, results) are cut, oldest first, each replaced by a note the
//!    model can read (`[skillbox: 2.0 MiB of arguments cut …]`);
//! 3. then the raw replays of old responses are dropped and long texts cut, oldest first;
//! 4. then the oldest turns are dropped (a note says how many messages).
//!
//! A real conversation never meets the bounds: a model's whole context (a million tokens) is
//! about 4 MiB of text.

use std::io::Write;

use serde::Serialize;
use serde_json::{Value, json};

use crate::conversation::{Message, Replay, ToolCall};

/// Bytes of history (its messages as JSON) a conversation keeps and sends at most: twice the
/// largest context a model reads today.
pub const MAX_HISTORY_BYTES: usize = 8 * 1024 * 1024;
/// Tool calls (each with its result) the history keeps at most: a hundred full rounds.
pub const MAX_HISTORY_CALLS: usize = 1_000;
/// Payloads and texts at most this long are never cut: the note would hardly be shorter.
pub const MIN_CUT_BYTES: usize = 1024;

/// Bytes of `value` as JSON (what the history bound counts), without writing it anywhere.
pub(crate) fn json_bytes<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Counter(usize);
    impl Write for Counter {
        fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
            self.0 += buffer.len();
            Ok(buffer.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Messages have string keys only: writing them to a counter cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// `bytes` for people: `2.0 MiB`, `3.5 KiB`, `512 bytes`.
fn shown_bytes(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    #[allow(clippy::cast_precision_loss)] // one decimal is shown
    let value = bytes as f64;
    if value >= KIB * KIB {
        format!("{:.1} MiB", value / (KIB * KIB))
    } else if value >= KIB {
        format!("{:.1} KiB", value / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The note that replaces `bytes` of `what` (arguments, result, text).
fn cut_note(bytes: usize, what: &str) -> String {
    format!(
        "[skillbox: {} of {what} cut to keep the conversation within its bound of {}]",
        shown_bytes(bytes),
        shown_bytes(MAX_HISTORY_BYTES)
    )
}

/// Cut arguments: a JSON object, so every format sends it back as written and the model reads
/// the note where its arguments were.
fn cut_arguments(bytes: usize) -> String {
    json!({ "skillbox": cut_note(bytes, "arguments") }).to_string()
}

/// The number of tool calls the history holds.
fn call_count(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|message| match message {
            Message::Assistant { tool_calls, .. } => tool_calls.len(),
            _ => 0,
        })
        .sum()
}

const DROPPED_CALLS_PREFIX: &str = "[skillbox: ";
const DROPPED_CALLS_MIDDLE: &str = " older tool calls and their results were dropped";
const DROPPED_MESSAGES_MIDDLE: &str = " older messages were dropped";

fn dropped_calls_note(count: usize) -> Message {
    Message::user(format!(
        "{DROPPED_CALLS_PREFIX}{count}{DROPPED_CALLS_MIDDLE} to keep the conversation within its bound of {MAX_HISTORY_CALLS} calls]"
    ))
}

fn dropped_messages_note(count: usize) -> Message {
    Message::user(format!(
        "{DROPPED_CALLS_PREFIX}{count}{DROPPED_MESSAGES_MIDDLE} to keep the conversation within its bound of {}]",
        shown_bytes(MAX_HISTORY_BYTES)
    ))
}

/// The count a note of this bound holds (`middle` says which note).
fn noted_count(message: &Message, middle: &str) -> Option<usize> {
    let Message::User { content } = message else {
        return None;
    };
    let rest = content.strip_prefix(DROPPED_CALLS_PREFIX)?;
    let (count, _) = rest.split_once(middle)?;
    count.parse().ok()
}

/// Keep `messages` within the bounds; `sizes` holds each message's [`json_bytes`], and is
/// kept so. The last message is never dropped.
pub(crate) fn bound(messages: &mut Vec<Message>, sizes: &mut Vec<usize>) {
    if call_count(messages) > MAX_HISTORY_CALLS {
        drop_oldest_calls(messages, sizes);
    }
    let mut total: usize = sizes.iter().sum();
    for cut in [cut_payloads as fn(&mut Message, usize) -> usize, cut_texts] {
        for index in 0..messages.len() {
            if total <= MAX_HISTORY_BYTES {
                return;
            }
            if cut(&mut messages[index], total - MAX_HISTORY_BYTES) > 0 {
                let size = json_bytes(&messages[index]);
                total = total - sizes[index] + size;
                sizes[index] = size;
            }
        }
    }
    if total > MAX_HISTORY_BYTES {
        drop_oldest_turns(messages, sizes, total);
    }
}

/// Drop the oldest calls with their results (an assistant message with calls and the results
/// after it), a note in their place, until at most [`MAX_HISTORY_CALLS`] remain.
fn drop_oldest_calls(messages: &mut Vec<Message>, sizes: &mut Vec<usize>) {
    let mut excess = call_count(messages).saturating_sub(MAX_HISTORY_CALLS);
    let mut kept = Vec::with_capacity(messages.len());
    let mut kept_sizes = Vec::with_capacity(messages.len());
    let mut dropped = 0;
    let mut old = std::mem::take(messages)
        .into_iter()
        .zip(std::mem::take(sizes))
        .peekable();
    while let Some((message, size)) = old.next() {
        let calls = match &message {
            Message::Assistant { tool_calls, .. } => tool_calls.len(),
            _ => 0,
        };
        if excess > 0 && calls > 0 && matches!(old.peek(), Some((Message::Tool { .. }, _))) {
            old.next();
            dropped += calls;
            excess = excess.saturating_sub(calls);
            continue;
        }
        if dropped > 0 {
            note_dropped(&mut kept, &mut kept_sizes, dropped);
            dropped = 0;
        }
        kept.push(message);
        kept_sizes.push(size);
    }
    if dropped > 0 {
        note_dropped(&mut kept, &mut kept_sizes, dropped);
    }
    *messages = kept;
    *sizes = kept_sizes;
}

/// Add a note that `count` more calls were dropped: to the note just before, or a new one.
fn note_dropped(kept: &mut Vec<Message>, sizes: &mut Vec<usize>, count: usize) {
    let before = kept
        .last()
        .and_then(|last| noted_count(last, DROPPED_CALLS_MIDDLE));
    if before.is_some() {
        kept.pop();
        sizes.pop();
    }
    let note = dropped_calls_note(before.unwrap_or(0) + count);
    sizes.push(json_bytes(&note));
    kept.push(note);
}

/// Cut the payloads (arguments, results) of `message` longer than [`MIN_CUT_BYTES`], in order,
/// until about `wanted` bytes are saved; returns about how many were.
fn cut_payloads(message: &mut Message, wanted: usize) -> usize {
    let mut saved = 0;
    match message {
        Message::Assistant {
            tool_calls, replay, ..
        } => {
            for call in tool_calls {
                if saved >= wanted {
                    break;
                }
                saved += cut_call(call, replay.as_mut());
            }
        }
        Message::Tool { results } => {
            for result in results {
                if saved >= wanted {
                    break;
                }
                if result.content.len() > MIN_CUT_BYTES {
                    let note = cut_note(result.content.len(), "result");
                    saved += json_bytes(&result.content).saturating_sub(json_bytes(&note));
                    result.content = note;
                }
            }
        }
        Message::User { .. } => {}
    }
    saved
}

/// Cut a call's arguments, in the neutral fields and in the replay's item for it.
fn cut_call(call: &mut ToolCall, replay: Option<&mut Replay>) -> usize {
    if call.arguments.len() <= MIN_CUT_BYTES {
        return 0;
    }
    let cut = cut_arguments(call.arguments.len());
    let mut saved = json_bytes(&call.arguments).saturating_sub(json_bytes(&cut));
    for item in replay
        .into_iter()
        .flat_map(|replay| replay.items.iter_mut())
    {
        let field = match item["type"].as_str() {
            Some("function_call") if item["call_id"] == call.id.as_str() => "arguments",
            Some("tool_use") if item["id"] == call.id.as_str() => "input",
            _ => continue,
        };
        let before = json_bytes(item);
        item[field] = if field == "input" {
            serde_json::from_str(&cut).unwrap_or(Value::Null)
        } else {
            Value::String(cut.clone())
        };
        saved += before.saturating_sub(json_bytes(item));
    }
    call.arguments = cut;
    saved
}

/// Drop the replay of `message` (the request rebuilds it from the neutral fields) and cut its
/// text when longer than [`MIN_CUT_BYTES`]; returns about how many bytes that saved.
fn cut_texts(message: &mut Message, _wanted: usize) -> usize {
    let mut saved = 0;
    let content = match message {
        Message::User { content } => content,
        Message::Assistant {
            content, replay, ..
        } => {
            if let Some(dropped) = replay.take() {
                saved += json_bytes(&dropped);
            }
            content
        }
        Message::Tool { .. } => return 0,
    };
    if content.len() > MIN_CUT_BYTES {
        let note = cut_note(content.len(), "text");
        saved += json_bytes(content).saturating_sub(json_bytes(&note));
        *content = note;
    }
    saved
}

/// Drop the oldest turns (the messages before a person's message), a note in their place,
/// until `total` bytes fit the bound or only the last turn is left.
fn drop_oldest_turns(messages: &mut Vec<Message>, sizes: &mut Vec<usize>, total: usize) {
    /// Bytes a note takes, at most.
    const NOTE_BYTES: usize = 256;
    let noted = messages
        .first()
        .and_then(|first| noted_count(first, DROPPED_MESSAGES_MIDDLE));
    let start = usize::from(noted.is_some());
    // The bytes kept when the messages before `index` are dropped.
    let mut kept = total - sizes[..start].iter().sum::<usize>() + NOTE_BYTES;
    let mut end = None;
    for index in start..messages.len() {
        if index > start && matches!(messages[index], Message::User { .. }) {
            end = Some(index);
            if kept <= MAX_HISTORY_BYTES {
                break;
            }
        }
        kept -= sizes[index];
    }
    let Some(end) = end else {
        return;
    };
    let note = dropped_messages_note(noted.unwrap_or(0) + end - start);
    sizes.splice(0..end, [json_bytes(&note)]);
    messages.splice(0..end, [note]);
}

/// Cut every payload and text of `message` longer than [`MIN_CUT_BYTES`], and its replay: what
/// a transcript saves of a message too large for one line.
pub(crate) fn cut_all(message: &mut Message) {
    cut_payloads(message, usize::MAX);
    cut_texts(message, usize::MAX);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolResult;
    use crate::wire::WireFormat;
    use pretty_assertions::assert_eq;

    fn sizes_of(messages: &[Message]) -> Vec<usize> {
        messages.iter().map(json_bytes).collect()
    }

    fn round(index: usize, arguments: &str, result: &str) -> [Message; 2] {
        let id = format!("call_{index}");
        [
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![ToolCall {
                    id: id.clone(),
                    name: "read".to_owned(),
                    arguments: arguments.to_owned(),
                    item_id: None,
                }],
                replay: Some(Replay {
                    format: WireFormat::Responses,
                    items: vec![
                        json!({"type":"function_call","call_id":id,"name":"read","arguments":arguments}),
                    ],
                }),
            },
            Message::Tool {
                results: vec![ToolResult {
                    call_id: id,
                    name: "read".to_owned(),
                    content: result.to_owned(),
                    is_error: false,
                }],
            },
        ]
    }

    #[test]
    fn old_payloads_are_cut_first_with_a_note_the_model_reads() {
        let big = "x".repeat(3 * 1024 * 1024);
        let mut messages = vec![Message::user("go")];
        for index in 0..4 {
            messages.extend(round(index, r#"{"path":"a"}"#, &big));
        }
        let mut sizes = sizes_of(&messages);
        bound(&mut messages, &mut sizes);
        assert_eq!(sizes, sizes_of(&messages));
        assert!(sizes.iter().sum::<usize>() <= MAX_HISTORY_BYTES);
        let results: Vec<&str> = messages
            .iter()
            .filter_map(|message| match message {
                Message::Tool { results } => Some(results[0].content.as_str()),
                _ => None,
            })
            .collect();
        // The two oldest results are cut; the two newest (6 MiB) fit.
        assert_eq!(
            results[0],
            "[skillbox: 3.0 MiB of result cut to keep the conversation within its bound of 8.0 MiB]"
        );
        assert_eq!(results[0], results[1]);
        assert_eq!(results[2], big);
        assert_eq!(results[3], big);
    }

    #[test]
    fn cut_arguments_are_cut_in_the_replay_too() {
        let big = format!("{{\"pad\":\"{}\"}}", "y".repeat(9 * 1024 * 1024));
        let mut messages = vec![Message::user("go")];
        messages.extend(round(0, &big, "ok"));
        let mut sizes = sizes_of(&messages);
        bound(&mut messages, &mut sizes);
        let Message::Assistant {
            tool_calls, replay, ..
        } = &messages[1]
        else {
            panic!("{messages:?}");
        };
        let note = r#"{"skillbox":"[skillbox: 9.0 MiB of arguments cut to keep the conversation within its bound of 8.0 MiB]"}"#;
        assert_eq!(tool_calls[0].arguments, note);
        assert_eq!(replay.as_ref().expect("replay").items[0]["arguments"], note);
    }

    #[test]
    fn past_the_call_bound_the_oldest_calls_are_dropped_with_their_results() {
        let mut messages = vec![Message::user("go")];
        for index in 0..(MAX_HISTORY_CALLS + 5) {
            messages.extend(round(index, "{}", "ok"));
        }
        let mut sizes = sizes_of(&messages);
        bound(&mut messages, &mut sizes);
        assert_eq!(call_count(&messages), MAX_HISTORY_CALLS);
        assert_eq!(
            messages[1],
            Message::user(
                "[skillbox: 5 older tool calls and their results were dropped to keep the conversation within its bound of 1000 calls]"
            )
        );
        // Again: the note counts on.
        messages.extend(round(9999, "{}", "ok"));
        let mut sizes = sizes_of(&messages);
        bound(&mut messages, &mut sizes);
        assert_eq!(call_count(&messages), MAX_HISTORY_CALLS);
        assert_eq!(noted_count(&messages[1], DROPPED_CALLS_MIDDLE), Some(6));
        assert!(matches!(messages[2], Message::Assistant { .. }));
    }

    #[test]
    fn past_all_cuts_the_oldest_turns_are_dropped() {
        let line = "z".repeat(MIN_CUT_BYTES);
        let mut messages = Vec::new();
        for _ in 0..5000 {
            messages.push(Message::user(line.clone()));
            messages.push(Message::assistant(line.clone()));
        }
        let mut sizes = sizes_of(&messages);
        bound(&mut messages, &mut sizes);
        assert!(sizes.iter().sum::<usize>() <= MAX_HISTORY_BYTES);
        assert_eq!(sizes, sizes_of(&messages));
        let dropped = noted_count(&messages[0], DROPPED_MESSAGES_MIDDLE).expect("a note");
        assert_eq!(dropped + messages.len() - 1, 10_000);
        assert_eq!(messages.last(), Some(&Message::assistant(line)));
    }
}
