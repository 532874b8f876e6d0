//! What a service call can fail with, in the terms of the Skills Protocol rather than of any wire:
//! each door maps the kinds to its own (JSON-RPC codes, a model's error result, an exit code)
//! and passes the message on as it is.

/// Milliseconds a caller refused as busy is told to wait before it tries again.
pub const RETRY_AFTER_MS: u64 = 1000;

/// Why a run or blob call was refused or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// A problem with what the caller sent: a missing or ill-typed parameter, an unknown skill,
    /// version, tool or blob, an instruction skill, an unsupported language. The message names
    /// the parameter and what to send instead.
    #[error("{0}")]
    InvalidParams(String),
    /// Too much is in flight (a full run queue, a spent answer budget): the same call may
    /// succeed after `retry_after_ms`.
    #[error("{message}")]
    Busy {
        /// What is busy, and that the caller should retry.
        message: String,
        /// How long to wait before retrying, in milliseconds.
        retry_after_ms: u64,
    },
    /// Something failed inside the runtime. The message says what without its details (host
    /// paths of the data folder, say), which went to the log.
    #[error("{0}")]
    Internal(String),
}

impl ServiceError {
    /// A problem with what the caller sent.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        ServiceError::InvalidParams(message.into())
    }

    /// Too much in flight: retry after [`RETRY_AFTER_MS`].
    pub fn busy(message: impl Into<String>) -> Self {
        ServiceError::Busy {
            message: message.into(),
            retry_after_ms: RETRY_AFTER_MS,
        }
    }

    /// A failure inside the runtime, its message given as it is.
    pub fn internal(message: impl Into<String>) -> Self {
        ServiceError::Internal(message.into())
    }

    /// A failure inside the runtime whose details stay out of the answer: they go to the log,
    /// and the caller is told `what` failed and where to look.
    pub fn internal_failure(what: &str, error: &dyn std::fmt::Display) -> Self {
        tracing::error!(%error, "{what}");
        ServiceError::Internal(format!(
            "{what} inside the server; the server's log has the details"
        ))
    }
}
