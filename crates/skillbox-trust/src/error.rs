//! Why trust could not be read, recorded or checked.

use std::path::PathBuf;

use skillbox_core::error::CatalogError;

use crate::ownership::OwnershipProblem;
use crate::trust_file::CONFIG_DIRECTORY_ENVIRONMENT_VARIABLE;

/// Why trust could not be read, recorded or checked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// Neither the environment variable nor the platform names a config folder.
    #[error(
        "no user config folder is known here; set `{CONFIG_DIRECTORY_ENVIRONMENT_VARIABLE}` to the folder skillbox keeps its settings in"
    )]
    NoConfigFolder,
    /// The trust file exists but is not what this code writes (hand-edited or damaged).
    #[error(
        "trust file `{}` is not valid: {message}; fix it, or delete it and trust the roots again with `skillbox trust`",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
    /// The trust file, or a folder above it, could be written by someone else: what it says
    /// cannot be believed.
    #[error(
        "trust file `{}` is not safe to believe: `{}` {problem}; only you (or root) may be able to change it and the folders above it (chmod go-w, or move the file to a folder of your own)",
        path.display(),
        unsafe_path.display()
    )]
    NotPrivate {
        /// The trust file.
        path: PathBuf,
        /// The file or folder that others could change.
        unsafe_path: PathBuf,
        /// What is wrong with it.
        problem: OwnershipProblem,
    },
    /// Reading or writing a file failed (the message names it).
    #[error("{0}")]
    Io(String),
    /// A skill's files could not be digested.
    #[error("cannot digest skill folder `{}`: {message}", path.display())]
    Digest {
        /// The skill folder.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The root to trust does not exist.
    #[error("`{}` does not exist; name a folder of skills", path.display())]
    RootMissing {
        /// The path as given.
        path: PathBuf,
    },
    /// The root to trust holds no skills.
    #[error("no skills found under `{}`, so there is nothing to trust", path.display())]
    NoSkills {
        /// The root.
        path: PathBuf,
    },
    /// The root to untrust is not recorded.
    #[error(
        "`{}` is not a trusted root; `skillbox trust --list` shows the trusted roots",
        path.display()
    )]
    UnknownRoot {
        /// The path as given.
        path: PathBuf,
    },
    /// A path the trust file would have to record is not UTF-8.
    #[error("path `{}` is not UTF-8, which the trust file cannot record", path.display())]
    PathNotUtf8 {
        /// The path.
        path: PathBuf,
    },
    /// Loading the root's skills failed.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
}

pub(crate) fn io_error(error: std::io::Error) -> TrustError {
    TrustError::Io(error.to_string())
}
