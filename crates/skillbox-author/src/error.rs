//! What can go wrong while writing a skill skeleton, packing a skill or publishing an index.
//! Every message names the file, folder or limit concerned and says what to do about it.

use std::path::{Path, PathBuf};

use skillbox_core::Diagnostic;

/// Why `new`, `pack` or `pack --index` stopped. Nothing is left half-written when one of these
/// is returned: outputs are built beside their place and renamed into it only when complete.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthorError {
    /// The name given to `new` breaks the skill name rules.
    #[error("`{name}` cannot be a skill name: {reason}; {hint}")]
    InvalidName {
        /// The name as given.
        name: String,
        /// The rule it breaks.
        reason: String,
        /// What to use instead.
        hint: String,
    },
    /// Something is already at the place `new` would write.
    #[error(
        "`{}` already exists ({kind}); choose another name or --path, or move it away first",
        path.display()
    )]
    AlreadyExists {
        /// The place.
        path: PathBuf,
        /// What is there (a folder, a file, a symlink, ...).
        kind: &'static str,
    },
    /// The folder `new` writes in, or `pack` reads, is not there.
    #[error("`{}` {problem}; {hint}", path.display())]
    NotAFolder {
        /// The path as given.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
        /// What to do.
        hint: &'static str,
    },
    /// Reading or writing a file failed.
    #[error("cannot {action} `{}`: {source}", path.display())]
    Io {
        /// What was being done (`write`, `read`, `rename`, ...).
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The skill has errors; packing it would publish a skill that does not load.
    #[error(
        "`{}` is not a valid skill ({} error(s)); fix what is listed (`skillbox validate {}` shows the same) and pack again",
        path.display(),
        diagnostics.iter().filter(|diagnostic| diagnostic.is_error()).count(),
        path.display()
    )]
    InvalidSkill {
        /// The skill folder.
        path: PathBuf,
        /// Everything found, errors first.
        diagnostics: Vec<Diagnostic>,
    },
    /// Some skills of an index folder have errors; nothing was published.
    #[error(
        "{} skill folder(s) of `{}` are not valid; fix what is listed and publish again",
        skills.len(),
        folder.display()
    )]
    InvalidSkills {
        /// The folder of skills.
        folder: PathBuf,
        /// Each invalid skill folder with its diagnostics.
        skills: Vec<(PathBuf, Vec<Diagnostic>)>,
    },
    /// The path names no single skill folder.
    #[error("`{}` {problem}; {hint}", path.display())]
    NotOneSkill {
        /// The path as given.
        path: PathBuf,
        /// What it holds instead.
        problem: String,
        /// What to do.
        hint: &'static str,
    },
    /// Two skill folders of an index share a name.
    #[error(
        "skills `{}` and `{}` are both named `{name}`; an index lists each name once: rename one of them",
        first.display(),
        second.display()
    )]
    DuplicateName {
        /// The shared name.
        name: String,
        /// One folder.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// An entry of the skill is not a regular file or folder.
    #[error(
        "`{}` is {kind}; a packed skill holds only regular files and folders: {hint}",
        path.display()
    )]
    SpecialEntry {
        /// The entry.
        path: PathBuf,
        /// What it is (`a symlink`, `a FIFO (named pipe)`, ...).
        kind: &'static str,
        /// What to do.
        hint: &'static str,
    },
    /// An entry's name is not UTF-8, which archives and indexes cannot carry faithfully.
    #[error("`{}` has a name that is not UTF-8; rename it", path.display())]
    NameNotUtf8 {
        /// The entry.
        path: PathBuf,
    },
    /// The skill is past one of the packing limits.
    #[error("`{}` {what}; the limit is {limit}: {hint}", path.display())]
    TooLarge {
        /// The skill folder, or the file past the limit.
        path: PathBuf,
        /// What was counted, with the count (`holds 10001 files`).
        what: String,
        /// The limit, with its unit.
        limit: String,
        /// What to do.
        hint: &'static str,
    },
    /// The output would be written inside what is being packed, so the next pack would hold it.
    #[error(
        "the output `{}` is inside the skill folder `{}`; write it elsewhere (`-o ../{}`)",
        output.display(),
        skill.display(),
        output.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
    )]
    OutputInsideSkill {
        /// The output path.
        output: PathBuf,
        /// The skill folder.
        skill: PathBuf,
    },
    /// The place an output goes holds something the command will not replace.
    #[error("`{}` {problem}; {hint}", path.display())]
    OutputRefused {
        /// The place.
        path: PathBuf,
        /// What is there.
        problem: String,
        /// What to do.
        hint: &'static str,
    },
    /// Writing an archive failed in the archive library.
    #[error("cannot write the archive `{}`: {message}", path.display())]
    Archive {
        /// The archive being written.
        path: PathBuf,
        /// The library's reason.
        message: String,
    },
}

impl AuthorError {
    /// An [`AuthorError::Io`] for `action` on `path`.
    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        AuthorError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }

    /// The diagnostics behind an invalid skill or index, for printing one per line.
    #[must_use]
    pub fn diagnostics(&self) -> Vec<&Diagnostic> {
        match self {
            AuthorError::InvalidSkill { diagnostics, .. } => diagnostics.iter().collect(),
            AuthorError::InvalidSkills { skills, .. } => skills
                .iter()
                .flat_map(|(_, diagnostics)| diagnostics)
                .collect(),
            _ => Vec::new(),
        }
    }
}
