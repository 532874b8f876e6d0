//! The one result shape of a tool call, whatever door it came through: what the caller reads,
//! and how the call ended. Each door maps the [`CallStatus`] to its wire once (a JSON-RPC code,
//! an MCP error result, an HTTP status, an exit code); the message is the same everywhere.

use std::ops::Deref;
use std::sync::Arc;

use serde::Serialize;
use serde::ser::SerializeStruct;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use skillbox_exec::ErrorType;
use skillbox_services::ServiceError;

use crate::effect::ToolEffect;

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallStatus {
    /// It answered.
    Ok,
    /// The tool ran, or looked and refused, and failed: a script's non-zero exit, a handler's
    /// error, a file that cannot be read. The content says what happened.
    Failed,
    /// What the caller sent is wrong: a missing or ill-typed parameter, a skill, version,
    /// blob or file that does not exist here (a skill hidden from models included).
    InvalidParams,
    /// No tool of that name is offered to this caller.
    UnknownTool,
    /// The approval hook refused the call.
    Denied,
    /// Too much is in flight (the run queue, the answer budget, the file-read places); the
    /// same call may succeed after `retry_after_ms`.
    Busy {
        /// How long to wait before retrying, in milliseconds.
        retry_after_ms: u64,
    },
    /// The call did not finish within its budget (a file read held up by a stalled file
    /// system); the server goes on answering others.
    TimedOut,
    /// Something failed inside the runtime; the log has the details.
    Internal,
}

impl CallStatus {
    /// A short name for logs and metric labels.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::Failed => "failed",
            CallStatus::InvalidParams => "invalid_params",
            CallStatus::UnknownTool => "unknown_tool",
            CallStatus::Denied => "denied",
            CallStatus::Busy { .. } => "busy",
            CallStatus::TimedOut => "timed_out",
            CallStatus::Internal => "internal",
        }
    }
}

/// An answer rendered once for a catalog snapshot and shared by every call that asks for it:
/// the value, and its JSON text, so a door that writes JSON sends the text as it is.
#[derive(Debug)]
pub struct Rendered {
    value: Value,
    json: Box<RawValue>,
}

impl Rendered {
    /// Render `value` once.
    #[must_use]
    pub fn new(value: Value) -> Self {
        let json =
            serde_json::value::to_raw_value(&value).unwrap_or_else(|_| RawValue::NULL.to_owned());
        Rendered { value, json }
    }

    /// The value.
    #[must_use]
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Its JSON text.
    #[must_use]
    pub fn json(&self) -> &RawValue {
        &self.json
    }

    /// Bytes it holds, roughly (for the bound on what a snapshot keeps).
    #[must_use]
    pub fn size(&self) -> usize {
        // The value as a tree costs a few times its text.
        self.json.get().len() * 4
    }
}

/// What a call answered: a value made for this call, or a snapshot's shared rendered answer.
/// Either reads as a [`Value`].
#[derive(Debug, Clone)]
pub enum Content {
    /// Made for this call.
    Value(Value),
    /// Rendered once for the catalog snapshot.
    Rendered(Arc<Rendered>),
}

impl Content {
    /// The value, owned (a shared answer is copied).
    #[must_use]
    pub fn into_value(self) -> Value {
        match self {
            Content::Value(value) => value,
            Content::Rendered(rendered) => rendered.value.clone(),
        }
    }

    /// The JSON text, when it was rendered already.
    #[must_use]
    pub fn rendered_json(&self) -> Option<&RawValue> {
        match self {
            Content::Value(_) => None,
            Content::Rendered(rendered) => Some(rendered.json()),
        }
    }
}

impl Deref for Content {
    type Target = Value;

    fn deref(&self) -> &Value {
        match self {
            Content::Value(value) => value,
            Content::Rendered(rendered) => &rendered.value,
        }
    }
}

impl PartialEq for Content {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl From<Value> for Content {
    fn from(value: Value) -> Self {
        Content::Value(value)
    }
}

impl Serialize for Content {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Value(value) => value.serialize(serializer),
            Content::Rendered(rendered) => rendered.json.serialize(serializer),
        }
    }
}

/// What a tool call produced: text or JSON for the caller, and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// The result: a string (instructions, file text) or a JSON value; for an error,
    /// `{"error": message}` (or the tool's own failure report, such as a script's result).
    pub content: Content,
    /// How the call ended.
    pub status: CallStatus,
    /// What the call changed beyond its answer, when it succeeded (a skill loaded, the tools
    /// changed): set by the door policy from the tool's [`crate::registry::Tool::intent`].
    pub effect: Option<ToolEffect>,
}

impl ToolOutcome {
    /// A successful answer.
    #[must_use]
    pub fn ok(content: Value) -> Self {
        ToolOutcome {
            content: Content::Value(content),
            status: CallStatus::Ok,
            effect: None,
        }
    }

    /// A successful answer: a tool's typed result ([`crate::registry::Tool::Result`]), as the
    /// JSON its type serializes to.
    #[must_use]
    pub fn answer<R: Serialize>(result: &R) -> Self {
        Self::answer_value(result).map_or_else(|failure| failure, ToolOutcome::ok)
    }

    /// A tool's typed result as JSON, or the failure saying it could not be written (a type
    /// whose `Serialize` fails, such as a map with keys that are not text).
    ///
    /// # Errors
    /// The internal failure to answer instead.
    pub fn answer_value<R: Serialize>(result: &R) -> Result<Value, Self> {
        serde_json::to_value(result).map_err(|error| {
            Self::with_status(
                CallStatus::Internal,
                format!("the tool's answer could not be written as JSON: {error}"),
            )
        })
    }

    /// A successful answer rendered once for the snapshot.
    #[must_use]
    pub fn rendered(answer: Arc<Rendered>) -> Self {
        ToolOutcome {
            content: Content::Rendered(answer),
            status: CallStatus::Ok,
            effect: None,
        }
    }

    /// An answer with this status whose content is `{"error": message}`.
    #[must_use]
    pub fn with_status(status: CallStatus, message: impl Into<String>) -> Self {
        ToolOutcome {
            content: Content::Value(json!({ "error": message.into() })),
            status,
            effect: None,
        }
    }

    /// The tool failed, with the message a model can act on.
    #[must_use]
    pub fn failed(message: impl Into<String>) -> Self {
        Self::with_status(CallStatus::Failed, message)
    }

    /// The tool failed; `content` is its own report of what happened.
    #[must_use]
    pub fn failed_with(content: Value) -> Self {
        ToolOutcome {
            content: Content::Value(content),
            status: CallStatus::Failed,
            effect: None,
        }
    }

    /// What the caller sent is wrong; the message names the parameter.
    #[must_use]
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::with_status(CallStatus::InvalidParams, message)
    }

    /// The service's answer or failure as a tool outcome.
    #[must_use]
    pub fn from_service(result: Result<Value, ServiceError>) -> Self {
        match result {
            Ok(content) => ToolOutcome::ok(content),
            Err(ServiceError::InvalidParams(message)) => ToolOutcome::invalid_params(message),
            Err(ServiceError::Busy {
                message,
                retry_after_ms,
            }) => Self::with_status(CallStatus::Busy { retry_after_ms }, message),
            Err(ServiceError::Internal(message)) => {
                Self::with_status(CallStatus::Internal, message)
            }
            Err(other) => Self::with_status(CallStatus::Internal, other.to_string()),
        }
    }

    /// The same failure in the shape of seed 002's `SkillExecutionResult`: `success` false,
    /// empty `stdout` and `stderr`, and no `exitCode` when nothing ran (a skill not found,
    /// arguments refused, a denial, a full queue), beside its `error` and `errorType`. Fields
    /// the failure has already are kept; a success, or a failure whose content is not an
    /// object, is left as it is.
    #[must_use]
    pub fn as_execution_result(mut self) -> Self {
        if !self.is_error() {
            return self;
        }
        if let Content::Value(Value::Object(fields)) = &mut self.content {
            fields.entry("success").or_insert(Value::Bool(false));
            fields
                .entry("stdout")
                .or_insert_with(|| Value::String(String::new()));
            fields
                .entry("stderr")
                .or_insert_with(|| Value::String(String::new()));
            fields.entry("exitCode").or_insert(Value::Null);
        }
        self
    }

    /// The same failure saying its kind (`errorType`, seed 002's kinds), unless it says one
    /// already; a success, or a failure whose content is not an object, is left as it is.
    #[must_use]
    pub fn with_error_type(mut self, kind: ErrorType) -> Self {
        if !self.is_error() {
            return self;
        }
        if let Content::Value(Value::Object(fields)) = &mut self.content {
            fields
                .entry("errorType")
                .or_insert_with(|| Value::String(kind.as_str().to_owned()));
        }
        self
    }

    /// The kind (`errorType`) of a failure the door policy answered itself, from how the call
    /// ended: arguments it could not decode, a denial, a full run queue, a time budget spent.
    #[must_use]
    pub fn error_type_of_status(&self) -> Option<ErrorType> {
        match self.status {
            CallStatus::Ok | CallStatus::UnknownTool => None,
            CallStatus::InvalidParams => Some(ErrorType::InvalidArgs),
            CallStatus::Denied => Some(ErrorType::ScriptNotAllowed),
            CallStatus::Busy { .. } => Some(ErrorType::Busy),
            CallStatus::TimedOut => Some(ErrorType::ExecutionTimeout),
            CallStatus::Failed | CallStatus::Internal => Some(ErrorType::ExecutionFailed),
        }
    }

    /// Whether the call did not answer successfully.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.status != CallStatus::Ok
    }

    /// The error's message, when the content is `{"error": "..."}`.
    #[must_use]
    pub fn error_message(&self) -> Option<&str> {
        self.content.get("error").and_then(Value::as_str)
    }

    /// The message of a failed call: its `error` text, or the whole content as text.
    #[must_use]
    pub fn message(&self) -> String {
        self.error_message()
            .map_or_else(|| self.text(), str::to_owned)
    }

    /// The result as the text a model receives.
    #[must_use]
    pub fn text(&self) -> String {
        match &*self.content {
            Value::String(text) => text.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        }
    }

    /// Add a section to a text answer (a load's instructions get what became of the skill's
    /// servers); another answer becomes its text with the section after it.
    pub fn append_text(&mut self, section: &str) {
        let mut text = self.text().trim_end().to_owned();
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(section);
        self.content = Content::Value(Value::String(text));
    }
}

/// `{content, is_error}`: how the web app and `--json` output show an outcome.
impl Serialize for ToolOutcome {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut outcome = serializer.serialize_struct("ToolOutcome", 2)?;
        outcome.serialize_field("content", &self.content)?;
        outcome.serialize_field("is_error", &self.is_error())?;
        outcome.end()
    }
}
