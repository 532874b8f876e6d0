//! Why getting a skill failed: every error names the source, file, field or skill, and what to
//! do about it.

use std::path::PathBuf;

/// Why an install operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// The SOURCE argument cannot be understood.
    #[error("source `{source_text}` is not understood: {message}")]
    BadSource {
        /// The source as given.
        source_text: String,
        /// Why, and what forms work.
        message: String,
    },
    /// Fetching from the source failed (network, git, HTTP status).
    #[error("cannot fetch `{source_text}`: {message}")]
    Fetch {
        /// The source (never with credentials).
        source_text: String,
        /// Why.
        message: String,
    },
    /// What was fetched is refused (a digest mismatch, an unsafe archive entry, past a limit).
    #[error("refused `{source_text}`: {message}")]
    Refused {
        /// The source or artifact.
        source_text: String,
        /// Why, naming the entry.
        message: String,
    },
    /// The source holds no skill, or not the one asked for.
    #[error("{message}")]
    NotFound {
        /// What was not found and what exists.
        message: String,
    },
    /// A fetched skill is not valid.
    #[error("skill `{name}` from `{source_text}` is not valid:\n{diagnostics}")]
    Invalid {
        /// The skill's folder name or name.
        name: String,
        /// The source.
        source_text: String,
        /// The diagnostics, one per line.
        diagnostics: String,
    },
    /// The manifest (`skillbox.toml`) is not valid.
    #[error("manifest `{}` is not valid: {message}", path.display())]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
    /// The lock and the manifest disagree, or the lock would change under `--frozen`.
    #[error("{message}")]
    Frozen {
        /// What differs.
        message: String,
    },
    /// A package server of a skill could not be installed ahead (npm, PyPI).
    #[error("cannot install server `{server}` of skill `{skill}`: {message}")]
    PackageServer {
        /// The skill.
        skill: String,
        /// The server's name.
        server: String,
        /// Why, with what the registry tool said.
        message: String,
    },
    /// A skill named on the command line is not installed.
    #[error("skill `{name}` is not in `{}`; `skillbox list` shows what is installed", lock.display())]
    NotInstalled {
        /// The name.
        name: String,
        /// The lock searched.
        lock: PathBuf,
    },
    /// An argument is not valid.
    #[error("{message}")]
    Usage {
        /// What is wrong and what to do.
        message: String,
    },
    /// A file or folder could not be read or written.
    #[error("cannot {action} `{}`: {message}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The lock file could not be read or written.
    #[error(transparent)]
    Lock(#[from] skillbox_trust::lockfile::LockError),
    /// Trust records could not be written.
    #[error(transparent)]
    Trust(#[from] skillbox_trust::TrustError),
    /// The content-addressed store failed.
    #[error(transparent)]
    Store(#[from] skillbox_trust::store::SkillStoreError),
}

impl InstallError {
    /// An I/O error on `path` while doing `action`.
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        error: impl std::fmt::Display,
    ) -> Self {
        InstallError::Io {
            action,
            path: path.into(),
            message: error.to_string(),
        }
    }

    /// A refusal of `source_text` for `message`.
    pub(crate) fn refused(source_text: impl Into<String>, message: impl Into<String>) -> Self {
        InstallError::Refused {
            source_text: source_text.into(),
            message: message.into(),
        }
    }

    /// A fetch failure.
    pub(crate) fn fetch(source_text: impl Into<String>, message: impl std::fmt::Display) -> Self {
        InstallError::Fetch {
            source_text: source_text.into(),
            message: message.to_string(),
        }
    }
}
