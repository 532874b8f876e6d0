//! The install lock (`skillbox.lock`): what `skillbox add` and `install` put in a skills folder,
//! down to every file's digest, so that an install can be repeated exactly and checked later.
//!
//! The lock sits beside the project's manifest (`skillbox.toml`) and is JSON, written with sorted
//! keys so that it diffs well in review:
//!
//! ```json
//! {
//!   "version": 1,
//!   "skills": {
//!     "pdf": {
//!       "source": "https://github.com/anthropics/skills.git",
//!       "kind": "git",
//!       "path": "skills/pdf",
//!       "reference": "main",
//!       "revision": "0123…",
//!       "digest": "sha256:…",
//!       "files": { "SKILL.md": { "digest": "sha256:…", "size": 1234 } },
//!       "requires": []
//!     }
//!   }
//! }
//! ```
//!
//! `digest` is the tree digest trust uses ([`crate::digest`]), which also names the
//! tree in the content-addressed store; `files` carries each file's sha256 in the MCP skills
//! extension's form (`sha256:<64 hex>`) with its size, so a change can be named file by file.
//! `requires` leaves room for skills that need other skills: the names of locked skills this
//! one brought in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::digest::{FolderInventory, InventoryFile};

/// The lock file's name, beside the manifest.
pub const LOCK_FILE_NAME: &str = "skillbox.lock";
/// The lock format this code reads and writes.
pub const LOCK_FORMAT_VERSION: u32 = 1;
/// Largest lock file read.
pub const MAX_LOCK_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The whole lock.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillLock {
    /// [`LOCK_FORMAT_VERSION`].
    pub version: u32,
    /// Locked skills by the name they are installed under.
    pub skills: BTreeMap<String, LockedSkill>,
}

/// Where a locked skill came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// A folder or archive file on this machine.
    Path,
    /// A git repository.
    Git,
    /// An archive (`.zip`, `.skill`, `.tar.gz`) at a URL.
    Archive,
    /// A `.well-known/agent-skills/` index.
    WellKnown,
}

impl SourceKind {
    /// The kind as the lock writes it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Path => "path",
            SourceKind::Git => "git",
            SourceKind::Archive => "archive",
            SourceKind::WellKnown => "well-known",
        }
    }
}

/// One locked skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LockedSkill {
    /// The source as the manifest names it (a path, a git URL, an archive or index URL).
    pub source: String,
    /// What kind of source it is.
    pub kind: SourceKind,
    /// The skill's folder inside the source (`/`-separated; empty for the source's root).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// The reference asked for (a branch, tag or commit), when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// What the source resolved to: a git commit id, or an artifact's digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The tree digest of the skill's files (`sha256:<hex>`).
    pub digest: String,
    /// Every regular file, by path.
    pub files: BTreeMap<String, LockedFile>,
    /// Symbolic links inside the skill, by path, with their targets.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub links: BTreeMap<String, String>,
    /// Locked skills this one needs (room for the dependency graph).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    /// Agents whose own skills folder also shows this skill (`claude`, `cursor`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
    /// Whether those agents' folders hold copies rather than links.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub copies: bool,
    /// Its package servers (npm, PyPI) installed ahead, by server name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, crate::package_servers::LockedServer>,
}

/// One locked file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedFile {
    /// `sha256:<64 hex>` of its bytes.
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
    /// Whether it is executable.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub executable: bool,
}

impl From<&InventoryFile> for LockedFile {
    fn from(file: &InventoryFile) -> Self {
        LockedFile {
            digest: file.digest.clone(),
            size: file.size,
            executable: file.executable,
        }
    }
}

/// Why a lock could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Reading or writing failed.
    #[error("cannot {action} lock file `{}`: {message}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The lock file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The file is not a lock this code can read.
    #[error(
        "lock file `{}` is not valid: {message}; restore it from version control, or delete it and run `skillbox install` to lock the manifest again",
        path.display()
    )]
    Invalid {
        /// The lock file.
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
}

impl SkillLock {
    /// An empty lock.
    #[must_use]
    pub fn new() -> Self {
        SkillLock {
            version: LOCK_FORMAT_VERSION,
            skills: BTreeMap::new(),
        }
    }

    /// Read the lock at `path`; a missing file is `Ok(None)`.
    ///
    /// # Errors
    /// [`LockError::Invalid`] naming the field for a file that is not a lock,
    /// [`LockError::Io`] when it cannot be read.
    pub fn load(path: &Path) -> Result<Option<Self>, LockError> {
        let io = |error: std::io::Error| LockError::Io {
            action: "read",
            path: path.to_path_buf(),
            message: error.to_string(),
        };
        if let Err(error) = fs_err::symlink_metadata(path)
            && error.kind() == std::io::ErrorKind::NotFound
        {
            return Ok(None);
        }
        let file =
            skillbox_core::source::open_regular_file(path).map_err(|error| LockError::Io {
                action: "read",
                path: path.to_path_buf(),
                message: error.to_string(),
            })?;
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut std::io::Read::take(file, MAX_LOCK_FILE_BYTES + 1),
            &mut text,
        )
        .map_err(io)?;
        if text.len() as u64 > MAX_LOCK_FILE_BYTES {
            return Err(LockError::Invalid {
                path: path.to_path_buf(),
                message: format!("it is larger than {MAX_LOCK_FILE_BYTES} bytes"),
            });
        }
        Self::parse(&text)
            .map(Some)
            .map_err(|message| LockError::Invalid {
                path: path.to_path_buf(),
                message,
            })
    }

    /// Parse a lock's text; the error names the field and position.
    ///
    /// # Errors
    /// A message naming what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let deserializer = &mut serde_json::Deserializer::from_str(text);
        let lock: SkillLock = serde_path_to_error::deserialize(deserializer).map_err(|error| {
            let path = error.path().to_string();
            let inner = error.into_inner();
            if path == "." {
                inner.to_string()
            } else {
                format!("`{path}`: {inner}")
            }
        })?;
        if lock.version != LOCK_FORMAT_VERSION {
            return Err(format!(
                "`version` is {}, but this skillbox reads version {LOCK_FORMAT_VERSION}; use the skillbox that wrote it",
                lock.version
            ));
        }
        for (name, skill) in &lock.skills {
            if let Some(problem) = skillbox_core::names::unsafe_name_reason(name) {
                return Err(format!(
                    "`skills.{name}` cannot name a skill folder: {problem}"
                ));
            }
            if !crate::digest::is_digest(&skill.digest) {
                return Err(format!(
                    "`skills.{name}.digest` is not a `sha256:<64 hex>` digest"
                ));
            }
            // `path` names a folder inside the fetched source: an install joins it to the
            // staging folder, so a path that leaves would read any folder on this machine.
            let contained = skill.path.is_empty()
                || skillbox_core::source::contained_relative_path(&skill.path)
                    .is_ok_and(|clean| clean == skill.path);
            if !contained {
                return Err(format!(
                    "`skills.{name}.path` is `{}`, which is not a folder inside the source",
                    skill.path
                ));
            }
            for agent in &skill.agents {
                if !agent
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                {
                    return Err(format!(
                        "`skills.{name}.agents` names `{agent}`, which is not an agent name"
                    ));
                }
            }
            for (server, locked) in &skill.servers {
                if let Some(problem) = locked.problem() {
                    return Err(format!("`skills.{name}.servers.{server}`: {problem}"));
                }
            }
            for (file, locked) in &skill.files {
                skillbox_core::source::contained_relative_path(file).map_err(|_| {
                    format!("`skills.{name}.files` names `{file}`, which leaves the skill")
                })?;
                if !crate::digest::is_digest(&locked.digest) {
                    return Err(format!(
                        "`skills.{name}.files.{file}.digest` is not a `sha256:<64 hex>` digest"
                    ));
                }
            }
        }
        Ok(lock)
    }

    /// The lock as written: pretty JSON with a final newline.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// How one file of an installed skill differs from its lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// The file, relative to the skill.
    pub path: String,
    /// What happened to it.
    pub change: ChangeKind,
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// Its bytes differ.
    Changed,
    /// Its executable bit differs.
    ModeChanged,
    /// It is not in the lock.
    Added,
    /// It is in the lock but not in the folder.
    Missing,
}

impl ChangeKind {
    /// The change as a word.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Changed => "changed",
            ChangeKind::ModeChanged => "mode changed",
            ChangeKind::Added => "added",
            ChangeKind::Missing => "missing",
        }
    }
}

impl LockedSkill {
    /// How a folder's inventory differs from this lock entry, file by file (links included),
    /// in path order; empty when they hold the same files.
    #[must_use]
    pub fn changes(&self, found: &FolderInventory) -> Vec<FileChange> {
        changes_between(&self.files, &self.links, found)
    }
}

/// How a folder's inventory differs from `files` and `links` as recorded, file by file, in
/// path order.
#[must_use]
pub fn changes_between(
    files: &BTreeMap<String, LockedFile>,
    links: &BTreeMap<String, String>,
    found: &FolderInventory,
) -> Vec<FileChange> {
    let mut changes = Vec::new();
    let mut change = |path: &str, change| {
        changes.push(FileChange {
            path: path.to_owned(),
            change,
        });
    };
    for (path, locked) in files {
        match found.files.get(path) {
            None => change(path, ChangeKind::Missing),
            Some(file) if file.digest != locked.digest => change(path, ChangeKind::Changed),
            Some(file) if file.executable != locked.executable => {
                change(path, ChangeKind::ModeChanged);
            }
            Some(_) => {}
        }
    }
    for path in found.files.keys() {
        if !files.contains_key(path) {
            change(path, ChangeKind::Added);
        }
    }
    for (path, target) in links {
        match found.links.get(path) {
            None => change(path, ChangeKind::Missing),
            Some(found_target) if found_target != target => change(path, ChangeKind::Changed),
            Some(_) => {}
        }
    }
    for path in found.links.keys() {
        if !links.contains_key(path) {
            change(path, ChangeKind::Added);
        }
    }
    changes.sort_by(|a, b| a.path.cmp(&b.path));
    changes
}

/// One line naming the changes (`` `scripts/run.py` changed, `x` added ``), at most `shown`
/// of them and how many more.
#[must_use]
pub fn describe_changes(changes: &[FileChange], shown: usize) -> String {
    let mut parts: Vec<String> = changes
        .iter()
        .take(shown)
        .map(|change| format!("`{}` {}", change.path, change.change.as_str()))
        .collect();
    if changes.len() > shown {
        parts.push(format!("and {} more", changes.len() - shown));
    }
    if parts.is_empty() {
        "its files differ".to_owned()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inventory(files: &[(&str, &str, bool)]) -> FolderInventory {
        FolderInventory {
            digest: format!("sha256:{}", "0".repeat(64)),
            files: files
                .iter()
                .map(|(path, digest, executable)| {
                    (
                        (*path).to_owned(),
                        InventoryFile {
                            digest: format!("sha256:{}", digest.repeat(64)),
                            size: 1,
                            executable: *executable,
                        },
                    )
                })
                .collect(),
            links: BTreeMap::new(),
        }
    }

    fn locked(found: &FolderInventory) -> LockedSkill {
        LockedSkill {
            source: "./x".to_owned(),
            kind: SourceKind::Path,
            path: String::new(),
            reference: None,
            revision: None,
            digest: found.digest.clone(),
            files: found
                .files
                .iter()
                .map(|(path, file)| (path.clone(), LockedFile::from(file)))
                .collect(),
            links: found.links.clone(),
            requires: Vec::new(),
            agents: Vec::new(),
            copies: false,
            servers: BTreeMap::new(),
        }
    }

    #[test]
    fn changes_name_each_file_and_what_happened() {
        let before = inventory(&[
            ("SKILL.md", "a", false),
            ("run.py", "b", true),
            ("x", "c", false),
        ]);
        let lock = locked(&before);
        assert!(lock.changes(&before).is_empty());
        let after = inventory(&[
            ("SKILL.md", "d", false),
            ("run.py", "b", false),
            ("new", "e", false),
        ]);
        let changes = lock.changes(&after);
        assert_eq!(
            describe_changes(&changes, 10),
            "`SKILL.md` changed, `new` added, `run.py` mode changed, `x` missing"
        );
        assert_eq!(
            describe_changes(&changes, 1),
            "`SKILL.md` changed, and 3 more"
        );
    }

    #[test]
    fn a_lock_round_trips_and_bad_fields_are_named() {
        let mut lock = SkillLock::new();
        lock.skills.insert(
            "demo".to_owned(),
            locked(&inventory(&[("SKILL.md", "a", false)])),
        );
        let text = lock.to_text();
        assert_eq!(SkillLock::parse(&text).unwrap(), lock);
        let error =
            SkillLock::parse(&text.replace("\"kind\": \"path\"", "\"kind\": \"ftp\"")).unwrap_err();
        assert!(error.contains("skills.demo.kind"), "{error}");
        let error = SkillLock::parse(&text.replace("\"demo\"", "\"../up\"")).unwrap_err();
        assert!(error.contains("skills.../up"), "{error}");
        let error = SkillLock::parse(&text.replace("\"SKILL.md\"", "\"../SKILL.md\"")).unwrap_err();
        assert!(error.contains("leaves the skill"), "{error}");
        let error =
            SkillLock::parse(&text.replace("\"version\": 1", "\"version\": 7")).unwrap_err();
        assert!(error.contains("version"), "{error}");
        for path in ["../../etc", "/home/user/.ssh", "a/../../b", "a//b", "./a"] {
            let mut hostile = lock.clone();
            if let Some(skill) = hostile.skills.get_mut("demo") {
                skill.path = path.to_owned();
            }
            let error = SkillLock::parse(&hostile.to_text()).unwrap_err();
            assert!(error.contains("skills.demo.path"), "{path}: {error}");
        }
    }
}
