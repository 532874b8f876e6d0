//! Execution errors. Each maps to a stable `errorType` string a model can act on.

use serde::Serialize;

/// The kinds of failure, as reported in results (`errorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum ErrorType {
    /// No skill of that name.
    SkillNotFound,
    /// The script does not exist in the skill.
    ScriptNotFound,
    /// The script path leaves the skill (absolute, `..`, symlink) or cannot be run, or the
    /// person (the approval hook) did not allow the run.
    ScriptNotAllowed,
    /// Arguments are malformed (not strings, NUL bytes, schema violations).
    InvalidArgs,
    /// The script ran and failed (non-zero exit, or an error thrown by a handler).
    ExecutionFailed,
    /// The script ran past its time limit and was killed.
    ExecutionTimeout,
    /// The sandbox policy requires layers this host lacks, or the helper could not set up.
    SandboxUnavailable,
    /// No interpreter for the script's language is installed (or usable by the sandbox).
    InterpreterNotFound,
    /// No tool of that name.
    ToolNotFound,
    /// The skill comes from a folder the user has not trusted (or it changed since), so its
    /// code does not run; the message says which command trusts it.
    Untrusted,
    /// Too many runs are executing and waiting already; the same call may succeed in a moment.
    Busy,
}

impl ErrorType {
    /// The name as reported.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::SkillNotFound => "SkillNotFound",
            ErrorType::ScriptNotFound => "ScriptNotFound",
            ErrorType::ScriptNotAllowed => "ScriptNotAllowed",
            ErrorType::InvalidArgs => "InvalidArgs",
            ErrorType::ExecutionFailed => "ExecutionFailed",
            ErrorType::ExecutionTimeout => "ExecutionTimeout",
            ErrorType::SandboxUnavailable => "SandboxUnavailable",
            ErrorType::InterpreterNotFound => "InterpreterNotFound",
            ErrorType::ToolNotFound => "ToolNotFound",
            ErrorType::Untrusted => "Untrusted",
            ErrorType::Busy => "Busy",
        }
    }
}

impl std::fmt::Display for ErrorType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure before or around running something, with the message to show.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExecError {
    /// The kind.
    pub error_type: ErrorType,
    /// What happened and what to do, naming the skill, script or parameter.
    pub message: String,
}

impl ExecError {
    /// A new error.
    pub fn new(error_type: ErrorType, message: impl Into<String>) -> Self {
        ExecError {
            error_type,
            message: message.into(),
        }
    }
}
