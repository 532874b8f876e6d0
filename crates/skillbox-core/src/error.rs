//! Errors of catalog operations that return one result (reading a file, loading a body). Loading
//! many skills does not use these: it reports [`crate::Diagnostic`]s and carries on.

use std::path::PathBuf;

/// A catalog operation that could not be done.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// A path names something outside the skill folder.
    #[error(
        "path `{path}` leaves the skill folder; use a path relative to the skill, without `..`"
    )]
    PathEscapes {
        /// The path as given.
        path: String,
    },
    /// The file does not exist.
    #[error("no file at `{}`", path.display())]
    FileNotFound {
        /// The path looked at.
        path: PathBuf,
    },
    /// The skill folder's path names another folder than the one loaded (it was renamed away
    /// and something, such as a symlink to elsewhere, put in its place): nothing is read from
    /// it until the catalog is loaded again.
    #[error(
        "the skill folder `{}` was replaced since it was loaded; it is served again after a reload",
        path.display()
    )]
    FolderReplaced {
        /// The skill folder.
        path: PathBuf,
    },
    /// Reading failed (the message names the path).
    #[error("{0}")]
    Io(String),
    /// The path names a FIFO, socket, device or folder where a file was expected. Such a path is
    /// never read: a FIFO would wait for a writer forever and a device may never end.
    #[error("`{}` is {kind}, not a regular file, and was not read", path.display())]
    NotRegularFile {
        /// The path looked at.
        path: PathBuf,
        /// What it is instead, with an article: `a FIFO (named pipe)`, `a folder`…
        kind: &'static str,
    },
    /// The file is not UTF-8 text.
    #[error("`{}` is not UTF-8 text", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// No skill of that name (and version).
    #[error("no skill named `{name}`{}", version.as_ref().map(|v| format!(" at version {v}")).unwrap_or_default())]
    SkillNotFound {
        /// The name asked for.
        name: String,
        /// The version asked for.
        version: Option<String>,
    },
    /// A root given explicitly does not exist or is not a folder or archive.
    #[error("skill root `{}` does not exist or is not readable", path.display())]
    RootMissing {
        /// The root.
        path: PathBuf,
    },
    /// An include/exclude pattern is not a valid glob.
    #[error("invalid name pattern `{pattern}`: {message}")]
    InvalidPattern {
        /// The pattern.
        pattern: String,
        /// Why.
        message: String,
    },
}

impl CatalogError {
    /// Wrap an I/O error (fs-err errors already name the path).
    #[must_use]
    pub fn io(error: std::io::Error) -> Self {
        CatalogError::Io(error.to_string())
    }
}
