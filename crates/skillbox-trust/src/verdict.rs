//! A trust verdict: whether a skill's code may run, and when it may not, which skill, which
//! root and why, worded for the person who can change it (with the command that does).

use std::fmt;
use std::path::{Path, PathBuf};

/// Whether a skill's code may run, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustVerdict {
    /// It may run.
    Trusted,
    /// It may not.
    Untrusted(Untrusted),
}

impl TrustVerdict {
    /// One word for listings: `trusted`, `untrusted`, `changed`, `new` or `unverifiable`.
    #[must_use]
    pub fn label(&self) -> &'static str {
        match self {
            TrustVerdict::Trusted => "trusted",
            TrustVerdict::Untrusted(untrusted) => match untrusted.reason {
                UntrustedReason::NeverTrusted => "untrusted",
                UntrustedReason::Changed => "changed",
                UntrustedReason::AddedSince => "new",
                UntrustedReason::Unverifiable(_) => "unverifiable",
                UntrustedReason::InstalledChanged { .. } => "modified",
            },
        }
    }
}

/// A refusal: which skill, which root, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    /// The skill (`name` or `name@version`).
    pub skill: String,
    /// The root's canonical path, as `skillbox trust` takes it.
    pub root: PathBuf,
    /// Why.
    pub reason: UntrustedReason,
}

/// Why a skill is not trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UntrustedReason {
    /// Its root was never trusted.
    NeverTrusted,
    /// Its files differ from those trusted (policy `pin`).
    Changed,
    /// It was not in its root when the root was trusted (policy `pin`).
    AddedSince,
    /// Trust could not be checked (an invalid trust file, an unreadable skill).
    Unverifiable(String),
    /// An installed skill's files differ from those its lock records.
    InstalledChanged {
        /// The skill's folder.
        folder: PathBuf,
        /// The lock that records it.
        lock: PathBuf,
        /// The changes, named file by file.
        changes: String,
    },
}

impl Untrusted {
    /// The command that trusts the skill's root, ready to paste into a shell.
    #[must_use]
    pub fn trust_command(&self) -> String {
        format!("skillbox trust {}", shell_word(&self.root))
    }
}

impl fmt::Display for Untrusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let skill = &self.skill;
        let root = self.root.display();
        let command = self.trust_command();
        match &self.reason {
            UntrustedReason::NeverTrusted => write!(
                f,
                "skill `{skill}` comes from `{root}`, a project folder that was never trusted, so its code does not run; the user can review the folder and allow it with `{command}`"
            ),
            UntrustedReason::Changed => write!(
                f,
                "skill `{skill}` in `{root}` changed since trusted (the folder's policy is `pin`), so its code does not run; the user can review the change and allow it with `{command}`"
            ),
            UntrustedReason::AddedSince => write!(
                f,
                "skill `{skill}` was added to `{root}` since trusted (the folder's policy is `pin`), so its code does not run; the user can review it and allow it with `{command}`"
            ),
            UntrustedReason::Unverifiable(detail) => write!(
                f,
                "cannot check that skill `{skill}` in `{root}` is trusted, so its code does not run: {detail}"
            ),
            UntrustedReason::InstalledChanged {
                folder,
                lock,
                changes,
            } => write!(
                f,
                "installed skill `{skill}` in `{}` no longer holds the files `{}` locked ({changes}), so its code does not run; `skillbox verify` lists every change, `skillbox install` puts the locked files back",
                folder.display(),
                lock.display()
            ),
        }
    }
}

/// A path as one shell word, for a command the person pastes.
pub(crate) fn shell_word(path: &Path) -> String {
    skillbox_core::shell_words::printable_shell_word(&path.to_string_lossy())
}
