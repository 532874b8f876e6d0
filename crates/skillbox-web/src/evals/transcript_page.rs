//! `/evals/{run}/transcripts/{id}`: one eval run's transcript, every message and tool call,
//! with the bounded texts a page may show.

use std::collections::HashMap;
use std::sync::Arc;

use askama::Template;
use axum::Extension;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use skillbox_agent::{Message, TurnEnd};
use skillbox_eval::EvalReport;

use crate::auth::Visitor;
use crate::eval_files::{MAX_REPORT_BYTES, TranscriptEntry, TranscriptFile};
use crate::pages::{Layout, render};
use crate::runs::clock_time;
use crate::{WebError, WebState};

use super::format::*;
use super::*;

/// One thing shown on the transcript page.
pub(super) struct TranscriptItem {
    /// `user`, `assistant`, `call`, `turn` or `problem`.
    kind: &'static str,
    /// A call's tool.
    title: String,
    /// The text, a call's arguments, a turn's figures or a problem.
    text: String,
    /// A call's result, once it came.
    result: Option<String>,
    failed: bool,
}

impl TranscriptItem {
    fn new(kind: &'static str, text: String) -> Self {
        TranscriptItem {
            kind,
            title: String::new(),
            text,
            result: None,
            failed: false,
        }
    }
}

/// A tool call's arguments, pretty when they are JSON. They are model output: pretty-printing
/// puts each value on a line of its own indented by its depth (a hundredfold for deeply nested
/// arrays), so only arguments up to [`MAX_SHOWN_TEXT_CHARS`] bytes are read as JSON, and only
/// the first [`MAX_SHOWN_TEXT_CHARS`] bytes of their pretty form are made.
pub(super) fn shown_arguments(arguments: &str) -> String {
    if arguments.len() > MAX_SHOWN_TEXT_CHARS {
        return shown_text(arguments);
    }
    let Ok(value) = serde_json::from_str::<serde_json::Value>(arguments) else {
        return shown_text(arguments);
    };
    let mut pretty = BoundedText::new(MAX_SHOWN_TEXT_CHARS);
    let whole = serde_json::to_writer_pretty(&mut pretty, &value).is_ok();
    let text = pretty.into_text();
    if whole {
        text
    } else {
        format!(
            "{text}\n… (cut here: the arguments are {} bytes as the model wrote them)",
            arguments.len()
        )
    }
}

/// Text written up to a bound of bytes; a write past it fails, which ends the writing.
pub(super) struct BoundedText {
    bytes: Vec<u8>,
    bound: usize,
}

impl BoundedText {
    fn new(bound: usize) -> Self {
        BoundedText {
            bytes: Vec::new(),
            bound,
        }
    }

    /// What was written, up to its last whole character.
    fn into_text(self) -> String {
        match String::from_utf8(self.bytes) {
            Ok(text) => text,
            Err(error) => {
                let whole = error.utf8_error().valid_up_to();
                let mut bytes = error.into_bytes();
                bytes.truncate(whole);
                String::from_utf8(bytes).unwrap_or_default()
            }
        }
    }
}

impl std::io::Write for BoundedText {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        let room = self.bound.saturating_sub(self.bytes.len());
        if room == 0 && !buffer.is_empty() {
            return Err(std::io::Error::other("the shown text is at its bound"));
        }
        let taken = buffer.len().min(room);
        self.bytes
            .extend_from_slice(buffer.get(..taken).unwrap_or_default());
        Ok(taken)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The page's items for a transcript's lines: each call with its result beside it, and a note
/// of the `unshown_problems` lines that were not named.
pub(super) fn transcript_items(
    lines: &[TranscriptEntry],
    unshown_problems: usize,
) -> Vec<TranscriptItem> {
    let mut items: Vec<TranscriptItem> = Vec::new();
    let mut calls: HashMap<String, usize> = HashMap::new();
    for line in lines {
        match line {
            TranscriptEntry::Message(Message::User { content }) => {
                items.push(TranscriptItem::new("user", shown_text(content)));
            }
            TranscriptEntry::Message(Message::Assistant {
                content,
                tool_calls,
                ..
            }) => {
                if !content.is_empty() {
                    items.push(TranscriptItem::new("assistant", shown_text(content)));
                }
                for call in tool_calls {
                    calls.insert(call.id.clone(), items.len());
                    items.push(TranscriptItem {
                        title: call.name.clone(),
                        ..TranscriptItem::new("call", shown_arguments(&call.arguments))
                    });
                }
            }
            TranscriptEntry::Message(Message::Tool { results }) => {
                for result in results {
                    let shown = Some(shown_text(&result.content));
                    match calls
                        .remove(&result.call_id)
                        .and_then(|at| items.get_mut(at))
                    {
                        Some(item) => {
                            item.result = shown;
                            item.failed = result.is_error;
                        }
                        None => items.push(TranscriptItem {
                            title: result.name.clone(),
                            result: shown,
                            failed: result.is_error,
                            ..TranscriptItem::new("call", String::new())
                        }),
                    }
                }
            }
            TranscriptEntry::Turn { end, rounds, usage } => {
                let end = match end {
                    TurnEnd::Answered => "answered",
                    TurnEnd::MaxRounds => "stopped at the round limit",
                    TurnEnd::Cancelled => {
                        "stopped (the eval had what it needed, or it was cancelled)"
                    }
                    TurnEnd::Failed => "failed",
                };
                items.push(TranscriptItem::new(
                    "turn",
                    format!(
                        "Turn {end} · {rounds} round{} · {} tokens in, {} out",
                        if *rounds == 1 { "" } else { "s" },
                        usage.input_tokens,
                        usage.output_tokens
                    ),
                ));
            }
            TranscriptEntry::Unreadable { line, message } => {
                items.push(TranscriptItem::new(
                    "problem",
                    format!("Line {line} is not a transcript line: {message}"),
                ));
            }
        }
    }
    if unshown_problems > 0 {
        items.push(TranscriptItem::new(
            "problem",
            format!(
                "{unshown_problems} more line{} not transcript lines (only the first {} are named)",
                if unshown_problems == 1 {
                    " is"
                } else {
                    "s are"
                },
                crate::eval_files::MAX_NAMED_UNREADABLE_LINES
            ),
        ));
    }
    items
}

/// What a transcript was in its run: the trigger query or task run that names it.
pub(super) fn transcript_context(report: &EvalReport, id: &str) -> Option<String> {
    for skill in &report.skills {
        for query in skill.triggers.iter().flat_map(|triggers| &triggers.queries) {
            for (index, repeat) in query.runs.iter().enumerate() {
                if repeat.transcript.as_deref() == Some(id) {
                    return Some(format!(
                        "{}: trigger query “{}” ({}), repeat {}",
                        skill.name,
                        query.query,
                        if query.should_trigger {
                            "should trigger"
                        } else {
                            "should not trigger"
                        },
                        index + 1
                    ));
                }
            }
        }
        for task in skill.tasks.iter().flat_map(|tasks| &tasks.runs) {
            if task.run.transcript.as_deref() == Some(id) {
                return Some(format!(
                    "{}: task “{}” {}, run {}",
                    skill.name,
                    task.eval_name,
                    configuration_label(&task.configuration),
                    task.run_number
                ));
            }
        }
    }
    None
}

#[derive(Template)]
#[template(path = "eval_transcript.html")]
pub(super) struct EvalTranscriptPage {
    layout: Layout,
    run: String,
    run_link: String,
    id: String,
    context: Option<String>,
    model: String,
    endpoint: String,
    created: String,
    items: Vec<TranscriptItem>,
    cut_at_bytes: Option<u64>,
}

/// `GET /evals/{run}/transcripts/{id}`.
pub(crate) async fn eval_transcript_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
    Path((run, id)): Path<(String, String)>,
) -> Result<Response, WebError> {
    let folder = state.evals.clone();
    on_eval_place(&state, move || {
        let transcript: TranscriptFile = folder
            .read_transcript(&run, &id)
            .map_err(|error| run_error(&run, &error))?;
        // The report says what the transcript was; a report that cannot be read only loses
        // that line.
        let mut budget = MAX_REPORT_BYTES;
        let context = folder
            .read_report(&run, &mut budget)
            .ok()
            .and_then(|report| transcript_context(&report, &id));
        let header = transcript.header.as_ref();
        let page = EvalTranscriptPage {
            layout: Layout::for_visitor(&visitor, "evals", format!("Transcript {id}")),
            run_link: run_link(&run),
            context,
            model: header
                .map(|header| header.model.clone())
                .unwrap_or_default(),
            endpoint: header
                .map(|header| header.base_url.clone())
                .unwrap_or_default(),
            created: header
                .map(|header| clock_time(header.created_unix_ms))
                .unwrap_or_default(),
            items: transcript_items(&transcript.lines, transcript.unnamed_unreadable_lines),
            cut_at_bytes: transcript.cut_at_bytes,
            run,
            id,
        };
        Ok(render(&page, StatusCode::OK))
    })
    .await?
}
