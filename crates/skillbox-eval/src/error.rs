//! Why an eval could not run. Every message names the file, skill or setting it is about and
//! what to do.

use std::path::PathBuf;

/// An eval that could not be set up or reported (a model that fails during a run is part of
/// the run's result, not an error).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// An eval file is malformed.
    #[error("{}: {message}", path.display())]
    Suite {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the field and position.
        message: String,
    },
    /// A skill to evaluate could not be used.
    #[error("skill `{skill}`: {message}")]
    Skill {
        /// The skill.
        skill: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// The catalog or the tool provider for a run could not be built.
    #[error("cannot set up the skills for a run: {0}")]
    Setup(String),
}

impl EvalError {
    /// An I/O failure at `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        EvalError::Io {
            path: path.into(),
            source,
        }
    }
}
