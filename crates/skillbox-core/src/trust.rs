//! Trust in project skill folders: code from a folder nobody chose does not run.
//!
//! The project-level default roots (`skills/`, `.claude/skills/`, … under the working
//! directory) hold whatever a cloned repository ships. Their skills are read and listed, but
//! their code (scripts, handlers, preprocessing, exports) runs only once the user has trusted
//! the root with `skillbox trust`. What was trusted is kept in a small JSON file in the user's
//! config folder ([`TrustStore`]): per root, its canonical path, the [`TrustPolicy`] and the
//! [`digest`] of each skill's files at that moment. Under `pin` a skill whose files changed
//! since (or a skill added since) is untrusted again until re-trusted; under `follow`, trusting
//! the root trusts whatever it holds later.
//!
//! Roots the user named (`--root`, `serve ROOT`, `SKILLBOX_ROOTS`) and the user-level roots
//! (`~/.claude/skills`, `~/.agents/skills`) are the user's own choice and always trusted.
//! [`TrustGate`] is what the executor asks before running a skill's code, and what `list` and
//! `show` ask to mark skills. Under `pin` each answer digests the skill's files: a run digests
//! the one skill about to run (never the whole catalog at start), a listing the project skills
//! it shows. A runner asks [`TrustGate::requirement`] instead, which digests nothing: a pinned
//! skill then runs from its copy in a [`crate::skill_store::SkillStore`], whose files were
//! hashed as they were copied, so the files checked are the files run.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use fs_err::os::unix::fs::OpenOptionsExt as _;
use serde::{Deserialize, Serialize};

use crate::catalog::{CatalogOptions, RootOrigin, SkillCatalog, SkillRoot};
use crate::error::CatalogError;
use crate::ownership::{OwnershipProblem, path_ownership_problem};
use crate::skill::Skill;
use crate::source::contained_relative_path;

pub mod digest;

pub use digest::skill_digest;

/// Environment variable naming skillbox's config folder (where `trust.json` lives); without
/// it, `skillbox/` in the user's config folder (`$XDG_CONFIG_HOME`, usually `~/.config`).
pub const CONFIG_DIRECTORY_ENVIRONMENT_VARIABLE: &str = "SKILLBOX_CONFIG_DIR";
/// The trust file's name inside the config folder.
pub const TRUST_FILE_NAME: &str = "trust.json";
/// The trust file format this code reads and writes.
pub const TRUST_FILE_FORMAT_VERSION: u32 = 1;
/// Largest trust file read; a larger one is reported as invalid.
pub const MAX_TRUST_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The key recording a root that is itself one skill (a skill folder or a `SKILL.md`).
pub const WHOLE_ROOT_SKILL_KEY: &str = ".";

/// Refuse a trust file that another user owns or could write, directly or by replacing a
/// folder above it: a file planted in a shared config folder must not decide what runs. Folders
/// writable by others are accepted only with the sticky bit (`/tmp`), which keeps others from
/// renaming what is ours ([`path_ownership_problem`]).
fn check_private(path: &Path) -> Result<(), TrustError> {
    let real = fs_err::canonicalize(path).map_err(io_error)?;
    match path_ownership_problem(&real).map_err(io_error)? {
        None => Ok(()),
        Some((unsafe_path, problem)) => Err(TrustError::NotPrivate {
            path: path.to_path_buf(),
            unsafe_path,
            problem,
        }),
    }
}

/// Permissions of the trust file: the user's alone.
const TRUST_FILE_MODE: u32 = 0o600;
/// Permissions of a config folder skillbox creates.
const CONFIG_FOLDER_MODE: u32 = 0o700;

/// What trusting a root covers later.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrustPolicy {
    /// Only the skills as they were when trusted: a changed or added skill needs trusting again.
    #[default]
    Pin,
    /// Whatever the root holds later.
    Follow,
}

impl TrustPolicy {
    /// The name as written in the trust file and on the command line.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TrustPolicy::Pin => "pin",
            TrustPolicy::Follow => "follow",
        }
    }
}

impl fmt::Display for TrustPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One trusted root as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustEntry {
    /// What the trust covers later.
    pub policy: TrustPolicy,
    /// When it was trusted, in milliseconds since the Unix epoch.
    pub trusted_at_ms: u64,
    /// Each skill's digest when trusted, keyed by its folder relative to the root
    /// ([`WHOLE_ROOT_SKILL_KEY`] when the root is the skill).
    pub skills: BTreeMap<String, String>,
}

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

/// The trust file as written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    version: u32,
    roots: BTreeMap<String, TrustEntry>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    installed: BTreeMap<String, InstalledSkill>,
    /// Per project lock: the folders of this machine outside the project that the user named
    /// to `skillbox add` (see [`TrustStore::confirm_local_source`]).
    #[serde(
        default,
        rename = "localSources",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    local_sources: BTreeMap<String, BTreeSet<String>>,
}

/// A skill folder `skillbox add` or `install` put in place: the user chose it, so its code may
/// run wherever it sits, but only as the files installed (its tree digest), whatever its root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstalledSkill {
    /// The tree digest of the files installed.
    pub digest: String,
    /// The lock file that records it (for naming changed files, and in messages).
    pub lock: PathBuf,
}

/// The roots the user trusted, read from and written to one file.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
    roots: BTreeMap<PathBuf, TrustEntry>,
    installed: BTreeMap<PathBuf, InstalledSkill>,
    local_sources: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
}

/// A root just trusted: its canonical path and what was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedRoot {
    /// The root's canonical path (the key in the trust file).
    pub root: PathBuf,
    /// The record.
    pub entry: TrustEntry,
}

impl TrustStore {
    /// Where the trust file is: `$SKILLBOX_CONFIG_DIR/trust.json`, else
    /// `skillbox/trust.json` in the user's config folder.
    ///
    /// # Errors
    /// [`TrustError::NoConfigFolder`] when neither is known.
    pub fn default_path() -> Result<PathBuf, TrustError> {
        if let Some(folder) = std::env::var_os(CONFIG_DIRECTORY_ENVIRONMENT_VARIABLE)
            .filter(|folder| !folder.is_empty())
        {
            let folder = std::path::absolute(PathBuf::from(folder)).map_err(io_error)?;
            return Ok(folder.join(TRUST_FILE_NAME));
        }
        dirs::config_dir()
            .map(|folder| folder.join("skillbox").join(TRUST_FILE_NAME))
            .ok_or(TrustError::NoConfigFolder)
    }

    /// Read the trust file; a missing file is an empty store. A file that is not exactly what
    /// this code writes is an error naming it, never silently replaced.
    ///
    /// # Errors
    /// [`TrustError::Corrupt`] for an invalid file, [`TrustError::Io`] when it cannot be read.
    pub fn load(path: &Path) -> Result<TrustStore, TrustError> {
        let corrupt = |message: String| TrustError::Corrupt {
            path: path.to_path_buf(),
            message,
        };
        let metadata = match fs_err::metadata(path) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(TrustStore {
                    path: path.to_path_buf(),
                    roots: BTreeMap::new(),
                    installed: BTreeMap::new(),
                    local_sources: BTreeMap::new(),
                });
            }
            Err(error) => return Err(io_error(error)),
        };
        if !metadata.is_file() {
            return Err(corrupt("it is not a regular file".to_owned()));
        }
        check_private(path)?;
        if metadata.len() > MAX_TRUST_FILE_BYTES {
            return Err(corrupt(format!(
                "it is {} bytes; the limit is {MAX_TRUST_FILE_BYTES}",
                metadata.len()
            )));
        }
        let bytes = fs_err::read(path).map_err(io_error)?;
        let file: TrustFile =
            serde_json::from_slice(&bytes).map_err(|error| corrupt(error.to_string()))?;
        if file.version != TRUST_FILE_FORMAT_VERSION {
            return Err(corrupt(format!(
                "`version` is {}; this skillbox reads version {TRUST_FILE_FORMAT_VERSION}",
                file.version
            )));
        }
        let mut roots = BTreeMap::new();
        for (root, entry) in file.roots {
            if !Path::new(&root).is_absolute() {
                return Err(corrupt(format!(
                    "root `{root}` in `roots` is not an absolute path"
                )));
            }
            for (skill, digest) in &entry.skills {
                let contained = skill == WHOLE_ROOT_SKILL_KEY
                    || contained_relative_path(skill).is_ok_and(|clean| clean == *skill);
                if !contained {
                    return Err(corrupt(format!(
                        "skill key `{skill}` under root `{root}` is not a path inside the root"
                    )));
                }
                if !digest::is_digest(digest) {
                    return Err(corrupt(format!(
                        "the digest of skill `{skill}` under root `{root}` is not `{}` and 64 hex digits",
                        digest::DIGEST_PREFIX
                    )));
                }
            }
            roots.insert(PathBuf::from(root), entry);
        }
        let mut installed = BTreeMap::new();
        for (folder, record) in file.installed {
            if !Path::new(&folder).is_absolute() || !record.lock.is_absolute() {
                return Err(corrupt(format!(
                    "installed skill `{folder}` or its lock is not an absolute path"
                )));
            }
            if !digest::is_digest(&record.digest) {
                return Err(corrupt(format!(
                    "the digest of installed skill `{folder}` is not `{}` and 64 hex digits",
                    digest::DIGEST_PREFIX
                )));
            }
            installed.insert(PathBuf::from(folder), record);
        }
        let mut local_sources = BTreeMap::new();
        for (lock, folders) in file.local_sources {
            let all_absolute = Path::new(&lock).is_absolute()
                && folders.iter().all(|f| Path::new(f).is_absolute());
            if !all_absolute {
                return Err(corrupt(format!(
                    "a local source confirmed for `{lock}`, or that lock, is not an absolute path"
                )));
            }
            local_sources.insert(
                PathBuf::from(lock),
                folders.into_iter().map(PathBuf::from).collect(),
            );
        }
        Ok(TrustStore {
            path: path.to_path_buf(),
            roots,
            installed,
            local_sources,
        })
    }

    /// Write the trust file atomically (a new file renamed over the old one), readable by the
    /// user alone, creating the config folder (mode 0700) when missing.
    ///
    /// # Errors
    /// [`TrustError::Io`] naming the file or folder.
    pub fn save(&self) -> Result<(), TrustError> {
        let folder = self
            .path
            .parent()
            .filter(|folder| !folder.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(CONFIG_FOLDER_MODE)
            .create(folder)
            .map_err(|error| {
                TrustError::Io(format!(
                    "cannot create the config folder `{}`: {error}",
                    folder.display()
                ))
            })?;
        let mut roots = BTreeMap::new();
        for (root, entry) in &self.roots {
            let key = root
                .to_str()
                .ok_or_else(|| TrustError::PathNotUtf8 { path: root.clone() })?;
            roots.insert(key.to_owned(), entry.clone());
        }
        let mut installed = BTreeMap::new();
        for (folder, record) in &self.installed {
            let key = folder.to_str().ok_or_else(|| TrustError::PathNotUtf8 {
                path: folder.clone(),
            })?;
            installed.insert(key.to_owned(), record.clone());
        }
        let mut local_sources = BTreeMap::new();
        let utf8 = |path: &PathBuf| {
            path.to_str()
                .map(str::to_owned)
                .ok_or_else(|| TrustError::PathNotUtf8 { path: path.clone() })
        };
        for (lock, folders) in &self.local_sources {
            let folders = folders
                .iter()
                .map(utf8)
                .collect::<Result<BTreeSet<_>, _>>()?;
            local_sources.insert(utf8(lock)?, folders);
        }
        let file = TrustFile {
            version: TRUST_FILE_FORMAT_VERSION,
            roots,
            installed,
            local_sources,
        };
        let mut text = serde_json::to_vec_pretty(&file)
            .map_err(|error| TrustError::Io(format!("cannot encode the trust file: {error}")))?;
        text.push(b'\n');
        let temporary = folder.join(format!(".{TRUST_FILE_NAME}.{}.tmp", std::process::id()));
        match fs_err::remove_file(&temporary) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                return Err(io_error(error));
            }
            _ => {}
        }
        // `create_new` (`O_EXCL`) refuses a symlink planted at the name, as any existing entry.
        let written = fs_err::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(TRUST_FILE_MODE)
            .open(&temporary)
            .and_then(|mut file| {
                file.write_all(&text)?;
                file.sync_all()
            })
            .and_then(|()| fs_err::rename(&temporary, &self.path));
        if let Err(error) = written {
            let _ = fs_err::remove_file(&temporary);
            return Err(io_error(error));
        }
        Ok(())
    }

    /// Every trusted root (canonical path) and its record, sorted by path.
    pub fn entries(&self) -> impl Iterator<Item = (&Path, &TrustEntry)> {
        self.roots
            .iter()
            .map(|(root, entry)| (root.as_path(), entry))
    }

    /// The record of a root, by canonical path.
    #[must_use]
    pub fn get(&self, canonical_root: &Path) -> Option<&TrustEntry> {
        self.roots.get(canonical_root)
    }

    /// The install record of a skill folder, by canonical path.
    #[must_use]
    pub fn installed(&self, canonical_folder: &Path) -> Option<&InstalledSkill> {
        self.installed.get(canonical_folder)
    }

    /// Every install record, by canonical folder.
    pub fn installed_skills(&self) -> impl Iterator<Item = (&Path, &InstalledSkill)> {
        self.installed
            .iter()
            .map(|(folder, record)| (folder.as_path(), record))
    }

    /// Record that the skill folder at `folder` was installed with the files of `digest`, as
    /// the lock at `lock` says (replacing an earlier record of the folder). In memory only:
    /// [`TrustStore::save`] writes it.
    ///
    /// # Errors
    /// When the folder does not exist, or a path is not UTF-8.
    pub fn record_installed(
        &mut self,
        folder: &Path,
        digest: &str,
        lock: &Path,
    ) -> Result<PathBuf, TrustError> {
        let canonical = fs_err::canonicalize(folder).map_err(|_| TrustError::RootMissing {
            path: folder.to_path_buf(),
        })?;
        let lock = std::path::absolute(lock).map_err(io_error)?;
        for path in [&canonical, &lock] {
            if path.to_str().is_none() {
                return Err(TrustError::PathNotUtf8 { path: path.clone() });
            }
        }
        self.installed.insert(
            canonical.clone(),
            InstalledSkill {
                digest: digest.to_owned(),
                lock,
            },
        );
        Ok(canonical)
    }

    /// Forget the install records of folders that no longer exist (a project deleted or
    /// moved); returns how many.
    pub fn forget_missing_installed(&mut self) -> usize {
        let before = self.installed.len();
        self.installed.retain(|folder, _| folder.exists());
        before - self.installed.len()
    }

    /// Forget the install record of a skill folder, named by its canonical path (the folder
    /// may be gone already). Returns whether there was one.
    pub fn forget_installed(&mut self, canonical_folder: &Path) -> bool {
        self.installed.remove(canonical_folder).is_some()
    }

    /// Record that the user named `folder` (a folder, archive or repository of this machine
    /// outside the project, by its canonical path) to `skillbox add` in the project whose lock
    /// is `lock`. A project's manifest and lock are the project's (a cloned repository writes
    /// them), so only this record, in the user's own file, lets `install`, `update` and
    /// `outdated` read such a source for that project. In memory only: [`TrustStore::save`]
    /// writes it.
    ///
    /// # Errors
    /// When a path is not absolute or not UTF-8.
    pub fn confirm_local_source(&mut self, lock: &Path, folder: &Path) -> Result<(), TrustError> {
        let lock = std::path::absolute(lock).map_err(io_error)?;
        for path in [&lock, &folder.to_path_buf()] {
            if path.to_str().is_none() {
                return Err(TrustError::PathNotUtf8 { path: path.clone() });
            }
            if !path.is_absolute() {
                return Err(TrustError::Io(format!(
                    "`{}` is not an absolute path",
                    path.display()
                )));
            }
        }
        self.local_sources
            .entry(lock)
            .or_default()
            .insert(folder.to_path_buf());
        Ok(())
    }

    /// Whether `folder` (a canonical path) is, or lies inside, a local source the user
    /// confirmed for the project whose lock is `lock` ([`TrustStore::confirm_local_source`]).
    #[must_use]
    pub fn local_source_confirmed(&self, lock: &Path, folder: &Path) -> bool {
        let lock = std::path::absolute(lock).unwrap_or_else(|_| lock.to_path_buf());
        self.local_sources
            .get(&lock)
            .is_some_and(|confirmed| confirmed.iter().any(|root| folder.starts_with(root)))
    }

    /// Read the trust file at `path`, change it with `change`, and write it back, holding an
    /// advisory lock on the config folder meanwhile so that two processes recording at once do
    /// not lose each other's records.
    ///
    /// # Errors
    /// As [`TrustStore::load`] and [`TrustStore::save`], and what `change` returns.
    pub fn update<T>(
        path: &Path,
        change: impl FnOnce(&mut TrustStore) -> Result<T, TrustError>,
    ) -> Result<T, TrustError> {
        let folder = path
            .parent()
            .filter(|folder| !folder.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(CONFIG_FOLDER_MODE)
            .create(folder)
            .map_err(io_error)?;
        let guard = fs_err::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(TRUST_FILE_MODE)
            .custom_flags(libc_nofollow())
            .open(folder.join(format!(".{TRUST_FILE_NAME}.lock")))
            .map_err(io_error)?;
        rustix::fs::flock(&guard, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|error| io_error(error.into()))?;
        let mut store = TrustStore::load(path)?;
        let answer = change(&mut store)?;
        store.save()?;
        drop(guard);
        Ok(answer)
    }

    /// Trust every skill under `root` as it is now (replacing an earlier record of the root).
    /// Without a policy, an earlier record's policy is kept, else `pin`. Under `pin` every
    /// skill must digest; under `follow` a skill that cannot is recorded without a digest.
    /// The store is changed in memory only: [`TrustStore::save`] writes it.
    ///
    /// # Errors
    /// When the root does not exist or holds no skills, a skill cannot be digested (under
    /// `pin`), or the root's path is not UTF-8.
    pub fn trust_root(
        &mut self,
        root: &Path,
        policy: Option<TrustPolicy>,
    ) -> Result<TrustedRoot, TrustError> {
        let canonical = fs_err::canonicalize(root).map_err(|_| TrustError::RootMissing {
            path: root.to_path_buf(),
        })?;
        if canonical.to_str().is_none() {
            return Err(TrustError::PathNotUtf8 { path: canonical });
        }
        let policy = policy
            .or_else(|| self.roots.get(&canonical).map(|entry| entry.policy))
            .unwrap_or_default();
        let catalog = SkillCatalog::load(&CatalogOptions {
            roots: vec![SkillRoot::explicit(&canonical)],
            ..CatalogOptions::default()
        })?;
        if catalog.is_empty() {
            return Err(TrustError::NoSkills { path: canonical });
        }
        let mut skills = BTreeMap::new();
        for skill in catalog.skills() {
            match (skill_digest(skill), policy) {
                (Ok(digest), _) => {
                    skills.insert(skill_key(skill), digest);
                }
                (Err(error), TrustPolicy::Pin) => return Err(error),
                (Err(error), TrustPolicy::Follow) => {
                    tracing::warn!(%error, "recorded without a digest (policy `follow`)");
                }
            }
        }
        let entry = TrustEntry {
            policy,
            trusted_at_ms: now_ms(),
            skills,
        };
        self.roots.insert(canonical.clone(), entry.clone());
        Ok(TrustedRoot {
            root: canonical,
            entry,
        })
    }

    /// Forget a trusted root, named by any path that resolves to it (or, when it no longer
    /// exists, by its recorded path).
    ///
    /// # Errors
    /// [`TrustError::UnknownRoot`] when it is not recorded.
    pub fn untrust_root(&mut self, root: &Path) -> Result<TrustedRoot, TrustError> {
        let candidates = [
            fs_err::canonicalize(root).ok(),
            std::path::absolute(root).ok(),
        ];
        for candidate in candidates.into_iter().flatten() {
            if let Some(entry) = self.roots.remove(&candidate) {
                return Ok(TrustedRoot {
                    root: candidate,
                    entry,
                });
            }
        }
        Err(TrustError::UnknownRoot {
            path: root.to_path_buf(),
        })
    }
}

/// A skill's key in its root's record: its folder relative to the root, `/`-separated.
fn skill_key(skill: &Skill) -> String {
    match skill.directory.strip_prefix(&skill.root) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative
            .components()
            .map(|component| component.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        _ => WHOLE_ROOT_SKILL_KEY.to_owned(),
    }
}

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

/// What running a skill's code needs ([`TrustGate::requirement`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustRequirement {
    /// It may run as its files are (its root is not gated, or trusted with `follow`).
    AsItIs,
    /// It may run only as the files the user trusted (policy `pin`).
    Pinned(PinnedSkill),
    /// It may not run.
    Refused(Untrusted),
}

/// A skill whose root was trusted with `pin`: its files must have this digest to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedSkill {
    /// The digest recorded when the root was trusted (`sha256:<hex>`).
    pub digest: String,
    /// The skill (`name` or `name@version`).
    pub skill: String,
    /// The root's canonical path.
    pub root: PathBuf,
    /// For an installed skill, the lock that records its files (see [`InstalledSkill`]).
    pub installed_lock: Option<PathBuf>,
}

impl PinnedSkill {
    /// The refusal of this skill because its files are not the trusted ones: for an installed
    /// skill, naming the files that differ from its lock.
    #[must_use]
    pub fn changed(&self, skill: &Skill) -> Untrusted {
        let Some(lock) = &self.installed_lock else {
            return self.refusal(UntrustedReason::Changed);
        };
        let changes = installed_changes(skill, lock);
        self.refusal(UntrustedReason::InstalledChanged {
            folder: skill.directory.clone(),
            lock: lock.clone(),
            changes,
        })
    }

    /// The refusal of this skill for `reason` (its files changed, or cannot be read).
    #[must_use]
    pub fn refusal(&self, reason: UntrustedReason) -> Untrusted {
        Untrusted {
            skill: self.skill.clone(),
            root: self.root.clone(),
            reason,
        }
    }

    /// Check that the skill's files, digested now, are the ones trusted; the refusal when
    /// they changed or cannot be read.
    ///
    /// # Errors
    /// [`UntrustedReason::Changed`] or [`UntrustedReason::Unverifiable`] in the refusal.
    pub fn verify(&self, skill: &Skill) -> Result<(), Untrusted> {
        match skill_digest(skill) {
            Ok(digest) if digest == self.digest => Ok(()),
            Ok(_) => Err(self.changed(skill)),
            Err(error) => Err(self.refusal(UntrustedReason::Unverifiable(error.to_string()))),
        }
    }
}

/// What the executor asks before running a skill's code. The default gate trusts everything
/// (library users, explicit roots); [`TrustGate::for_roots`] makes one that holds back the
/// project-level roots until the user trusts them. The trust file is read at each
/// [`TrustGate::verdict`], so `skillbox trust` and `untrust` take effect in a running server
/// too; a listing reads it once ([`TrustGate::read_store`]) and asks
/// [`TrustGate::verdict_with`] for each skill.
#[derive(Debug, Clone, Default)]
pub struct TrustGate {
    store_path: Option<PathBuf>,
    gated: Vec<GatedRoot>,
    /// Whether skills of every root are checked against the install records (a gate over a
    /// catalog's roots); the default gate trusts everything.
    checks_installs: bool,
}

#[derive(Debug, Clone)]
struct GatedRoot {
    /// As the catalog names it (and so as its skills' `root`).
    path: PathBuf,
    canonical: PathBuf,
}

impl TrustGate {
    /// A gate over a catalog's roots: skills under a project-level default root need trust
    /// recorded in the trust file at `store_path` (none known: never trusted). A root that
    /// resolves to one named earlier is skipped, as the catalog skips it.
    #[must_use]
    pub fn for_roots(roots: &[SkillRoot], store_path: Option<PathBuf>) -> TrustGate {
        let mut seen: Vec<PathBuf> = Vec::new();
        let mut gated = Vec::new();
        for root in roots {
            let Ok(canonical) = fs_err::canonicalize(&root.path) else {
                continue;
            };
            if seen.contains(&canonical) {
                continue;
            }
            seen.push(canonical.clone());
            if root.origin == RootOrigin::Project {
                gated.push(GatedRoot {
                    path: root.path.clone(),
                    canonical,
                });
            }
        }
        TrustGate {
            checks_installs: store_path.is_some(),
            store_path,
            gated,
        }
    }

    /// Whether the skill needs checking at all: its root needs trust, or it may be an
    /// installed skill, which runs only as installed whatever its root.
    #[must_use]
    pub fn is_gated(&self, skill: &Skill) -> bool {
        self.checks_installs || self.gated_root(skill).is_some()
    }

    /// Whether the skill's code may run now, reading the trust file afresh. Under `pin` this
    /// digests the skill's files.
    #[must_use]
    pub fn verdict(&self, skill: &Skill) -> TrustVerdict {
        if !self.is_gated(skill) {
            return TrustVerdict::Trusted;
        }
        self.verdict_with(&self.read_store(), skill)
    }

    /// The trust file, read once for judging many skills with [`TrustGate::verdict_with`];
    /// `Ok(None)` when no trust file is known or no root is gated (nothing is read then).
    ///
    /// # Errors
    /// As [`TrustStore::load`]; [`TrustGate::verdict_with`] turns the error into an
    /// `unverifiable` verdict for every gated skill.
    pub fn read_store(&self) -> Result<Option<TrustStore>, TrustError> {
        match &self.store_path {
            Some(store_path) if self.checks_installs || !self.gated.is_empty() => {
                TrustStore::load(store_path).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Whether the skill's code may run, as [`TrustGate::verdict`] answers it, against a trust
    /// file already read with [`TrustGate::read_store`]. Under `pin` this digests the skill's
    /// files.
    #[must_use]
    pub fn verdict_with(
        &self,
        store: &Result<Option<TrustStore>, TrustError>,
        skill: &Skill,
    ) -> TrustVerdict {
        match self.requirement_with(store, skill) {
            TrustRequirement::AsItIs => TrustVerdict::Trusted,
            TrustRequirement::Refused(refusal) => TrustVerdict::Untrusted(refusal),
            TrustRequirement::Pinned(pin) => match pin.verify(skill) {
                Ok(()) => TrustVerdict::Trusted,
                Err(refusal) => TrustVerdict::Untrusted(refusal),
            },
        }
    }

    /// The verdict a listing shows for a skill, against a trust file already read: `None` for
    /// a skill that needs no trust (its root is not gated and it was not installed).
    #[must_use]
    pub fn listed_verdict(
        &self,
        store: &Result<Option<TrustStore>, TrustError>,
        skill: &Skill,
    ) -> Option<TrustVerdict> {
        let installed =
            matches!(store, Ok(Some(store)) if installed_record(store, skill).is_some());
        (installed || self.gated_root(skill).is_some()).then(|| self.verdict_with(store, skill))
    }

    /// What running the skill's code needs, reading the trust file afresh but digesting
    /// nothing: for a runner that checks a pinned skill's files itself, as it copies the files
    /// it will run (see [`crate::skill_store`]), so the files checked are the files run.
    #[must_use]
    pub fn requirement(&self, skill: &Skill) -> TrustRequirement {
        if !self.is_gated(skill) {
            return TrustRequirement::AsItIs;
        }
        self.requirement_with(&self.read_store(), skill)
    }

    /// [`TrustGate::requirement`] against a trust file already read.
    #[must_use]
    pub fn requirement_with(
        &self,
        store: &Result<Option<TrustStore>, TrustError>,
        skill: &Skill,
    ) -> TrustRequirement {
        let gated = self.gated_root(skill);
        if gated.is_none() && !self.checks_installs {
            return TrustRequirement::AsItIs;
        }
        let root = || {
            gated.map_or_else(
                || fs_err::canonicalize(&skill.root).unwrap_or_else(|_| skill.root.clone()),
                |gated| gated.canonical.clone(),
            )
        };
        let untrusted = |reason| {
            TrustRequirement::Refused(Untrusted {
                skill: skill.id.to_string(),
                root: root(),
                reason,
            })
        };
        let store = match store {
            Ok(store) => store.as_ref(),
            Err(error) => return untrusted(UntrustedReason::Unverifiable(error.to_string())),
        };
        if let Some(record) = store.and_then(|store| installed_record(store, skill)) {
            return TrustRequirement::Pinned(PinnedSkill {
                digest: record.digest.clone(),
                skill: skill.id.to_string(),
                root: root(),
                installed_lock: Some(record.lock.clone()),
            });
        }
        let Some(gated) = gated else {
            return TrustRequirement::AsItIs;
        };
        let Some(store) = store else {
            return untrusted(UntrustedReason::NeverTrusted);
        };
        let Some(entry) = store.get(&gated.canonical) else {
            return untrusted(UntrustedReason::NeverTrusted);
        };
        if entry.policy == TrustPolicy::Follow {
            return TrustRequirement::AsItIs;
        }
        match entry.skills.get(&skill_key(skill)) {
            Some(digest) => TrustRequirement::Pinned(PinnedSkill {
                digest: digest.clone(),
                skill: skill.id.to_string(),
                root: gated.canonical.clone(),
                installed_lock: None,
            }),
            None => untrusted(UntrustedReason::AddedSince),
        }
    }

    fn gated_root(&self, skill: &Skill) -> Option<&GatedRoot> {
        self.gated.iter().find(|gated| gated.path == skill.root)
    }
}

/// The install record of a skill's folder, if it is an installed skill (found by its canonical
/// path, so a link to it in another agent's folder is the same skill). Archived skills are
/// never installed folders.
fn installed_record<'store>(
    store: &'store TrustStore,
    skill: &Skill,
) -> Option<&'store InstalledSkill> {
    if store.installed.is_empty()
        || !matches!(skill.source, crate::source::SkillSource::Directory(_))
    {
        return None;
    }
    let canonical = fs_err::canonicalize(&skill.directory).ok()?;
    store.installed(&canonical)
}

/// The changes of an installed skill's folder against its lock, as one line; a plain
/// statement when the lock or the folder cannot be read.
fn installed_changes(skill: &Skill, lock: &Path) -> String {
    let name = skill
        .directory
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.as_str();
    let locked = crate::install_lock::SkillLock::load(lock)
        .ok()
        .flatten()
        .and_then(|mut lock| lock.skills.remove(name));
    let found = digest::folder_inventory_at(&skill.directory);
    match (locked, found) {
        (Some(locked), Ok(found)) => {
            crate::install_lock::describe_changes(&locked.changes(&found), 3)
        }
        (None, _) => format!("the lock no longer records `{name}`"),
        (_, Err(error)) => error.to_string(),
    }
}

/// A path as one shell word, for a command the person pastes.
fn shell_word(path: &Path) -> String {
    crate::shell_words::printable_shell_word(&path.to_string_lossy())
}

/// `O_NOFOLLOW`, so that a link planted at the lock's name is refused rather than followed.
fn libc_nofollow() -> i32 {
    i32::try_from(rustix::fs::OFlags::NOFOLLOW.bits()).unwrap_or(0)
}

fn io_error(error: std::io::Error) -> TrustError {
    TrustError::Io(error.to_string())
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn local_sources_are_confirmed_per_lock_and_cover_the_folders_inside() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join(TRUST_FILE_NAME);
        let mut store = TrustStore::load(&path).unwrap();
        let lock = Path::new("/work/p/skillbox.lock");
        store
            .confirm_local_source(lock, Path::new("/shared/skills"))
            .unwrap();
        store.save().unwrap();
        let store = TrustStore::load(&path).unwrap();
        assert!(store.local_source_confirmed(lock, Path::new("/shared/skills")));
        assert!(store.local_source_confirmed(lock, Path::new("/shared/skills/pdf")));
        assert!(!store.local_source_confirmed(lock, Path::new("/shared")));
        assert!(!store.local_source_confirmed(lock, Path::new("/shared/skills-other")));
        // Another project (a clone elsewhere) has no confirmation of its own.
        let clone = Path::new("/work/clone/skillbox.lock");
        assert!(!store.local_source_confirmed(clone, Path::new("/shared/skills")));
    }

    struct Project {
        _temp: tempfile::TempDir,
        directory: PathBuf,
        store_path: PathBuf,
    }

    impl Project {
        fn new() -> Project {
            let temp = tempfile::tempdir().unwrap();
            let directory = fs_err::canonicalize(temp.path()).unwrap().join("project");
            for name in ["alpha", "beta"] {
                let skill = directory.join(".claude/skills").join(name);
                std::fs::create_dir_all(skill.join("scripts")).unwrap();
                std::fs::write(
                    skill.join("SKILL.md"),
                    format!("---\nname: {name}\ndescription: Does {name}.\n---\nBody.\n"),
                )
                .unwrap();
                std::fs::write(skill.join("scripts/run.py"), "print(1)\n").unwrap();
            }
            let store_path = temp.path().join("config/trust.json");
            Project {
                _temp: temp,
                directory,
                store_path,
            }
        }

        fn root(&self) -> PathBuf {
            self.directory.join(".claude/skills")
        }

        fn roots(&self) -> Vec<SkillRoot> {
            SkillRoot::defaults(&self.directory, None)
        }

        fn catalog(&self) -> SkillCatalog {
            SkillCatalog::load(&CatalogOptions {
                roots: self.roots(),
                ..CatalogOptions::default()
            })
            .unwrap()
        }

        fn gate(&self) -> TrustGate {
            TrustGate::for_roots(&self.roots(), Some(self.store_path.clone()))
        }

        /// Each skill's label, as a listing finds them: the trust file read once.
        fn labels(&self) -> Vec<(String, &'static str)> {
            let catalog = self.catalog();
            let gate = self.gate();
            let store = gate.read_store();
            catalog
                .skills()
                .iter()
                .map(|skill| {
                    let label = gate.verdict_with(&store, skill).label();
                    assert_eq!(gate.verdict(skill).label(), label, "{}", skill.name());
                    (skill.name().to_owned(), label)
                })
                .collect()
        }

        fn trust(&self, policy: Option<TrustPolicy>) -> TrustedRoot {
            let mut store = TrustStore::load(&self.store_path).unwrap();
            let trusted = store.trust_root(&self.root(), policy).unwrap();
            store.save().unwrap();
            trusted
        }
    }

    fn labels(pairs: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
        pairs
            .iter()
            .map(|(name, label)| ((*name).to_owned(), *label))
            .collect()
    }

    #[test]
    fn project_roots_need_trust_and_pin_notices_changes() {
        let project = Project::new();
        assert_eq!(
            project.labels(),
            labels(&[("alpha", "untrusted"), ("beta", "untrusted")])
        );

        let trusted = project.trust(None);
        assert_eq!(trusted.root, project.root());
        assert_eq!(trusted.entry.policy, TrustPolicy::Pin);
        assert_eq!(
            trusted.entry.skills.keys().collect::<Vec<_>>(),
            vec!["alpha", "beta"]
        );
        assert_eq!(
            project.labels(),
            labels(&[("alpha", "trusted"), ("beta", "trusted")])
        );

        std::fs::write(project.root().join("alpha/scripts/run.py"), "print(2)\n").unwrap();
        let gamma = project.root().join("gamma");
        std::fs::create_dir_all(&gamma).unwrap();
        std::fs::write(
            gamma.join("SKILL.md"),
            "---\nname: gamma\ndescription: New.\n---\n",
        )
        .unwrap();
        assert_eq!(
            project.labels(),
            labels(&[("alpha", "changed"), ("beta", "trusted"), ("gamma", "new")])
        );

        // Re-trusting without a policy keeps the recorded one; `follow` stops pinning.
        project.trust(None);
        let all_trusted = labels(&[
            ("alpha", "trusted"),
            ("beta", "trusted"),
            ("gamma", "trusted"),
        ]);
        assert_eq!(project.labels(), all_trusted);
        assert_eq!(
            project.trust(Some(TrustPolicy::Follow)).entry.policy,
            TrustPolicy::Follow
        );
        std::fs::write(project.root().join("beta/scripts/run.py"), "print(3)\n").unwrap();
        assert_eq!(project.trust(None).entry.policy, TrustPolicy::Follow);
        std::fs::write(project.root().join("beta/scripts/run.py"), "print(4)\n").unwrap();
        assert_eq!(project.labels(), all_trusted);

        let mut store = TrustStore::load(&project.store_path).unwrap();
        store.untrust_root(&project.root()).unwrap();
        store.save().unwrap();
        assert_eq!(project.labels()[0].1, "untrusted");
    }

    #[test]
    fn a_listing_judges_every_skill_by_one_reading_of_the_trust_file() {
        let project = Project::new();
        project.trust(None);
        let catalog = project.catalog();
        let gate = project.gate();
        let store = gate.read_store();
        // Later changes to the file are not seen by verdicts against the earlier reading.
        std::fs::write(&project.store_path, "{").unwrap();
        for skill in catalog.skills() {
            assert_eq!(gate.verdict_with(&store, skill), TrustVerdict::Trusted);
            assert_eq!(gate.verdict(skill).label(), "unverifiable");
        }
        // A gate over roots none of which is gated still reads the file: installed skills
        // run only as installed whatever their root.
        let explicit = TrustGate::for_roots(
            &[SkillRoot::explicit(project.root())],
            Some(project.store_path.clone()),
        );
        assert!(explicit.read_store().is_err());
        // The default gate (library users) reads nothing.
        assert!(matches!(TrustGate::default().read_store(), Ok(None)));
    }

    #[test]
    fn installed_skills_run_only_as_installed_whatever_their_root() {
        let project = Project::new();
        let roots = vec![SkillRoot::explicit(project.root())];
        let catalog = SkillCatalog::load(&CatalogOptions {
            roots: roots.clone(),
            ..CatalogOptions::default()
        })
        .unwrap();
        let alpha = catalog.get("alpha").unwrap();
        let inventory = digest::folder_inventory_at(&alpha.directory).unwrap();
        let lock_path = project.directory.join("skillbox.lock");
        let mut lock = crate::install_lock::SkillLock::new();
        lock.skills.insert(
            "alpha".to_owned(),
            crate::install_lock::LockedSkill {
                source: "./x".to_owned(),
                kind: crate::install_lock::SourceKind::Path,
                path: String::new(),
                reference: None,
                revision: None,
                digest: inventory.digest.clone(),
                files: inventory
                    .files
                    .iter()
                    .map(|(path, file)| (path.clone(), file.into()))
                    .collect(),
                links: BTreeMap::new(),
                requires: Vec::new(),
                agents: Vec::new(),
                copies: false,
            },
        );
        std::fs::write(&lock_path, lock.to_text()).unwrap();
        TrustStore::update(&project.store_path, |store| {
            store
                .record_installed(&alpha.directory, &inventory.digest, &lock_path)
                .map(|_| ())
        })
        .unwrap();
        let gate = TrustGate::for_roots(&roots, Some(project.store_path.clone()));
        let store = gate.read_store();
        assert_eq!(
            gate.listed_verdict(&store, alpha),
            Some(TrustVerdict::Trusted)
        );
        let beta = catalog.get("beta").unwrap();
        assert_eq!(gate.listed_verdict(&store, beta), None);
        assert_eq!(gate.verdict(beta), TrustVerdict::Trusted);

        std::fs::write(alpha.directory.join("scripts/run.py"), "print(2)\n").unwrap();
        let TrustVerdict::Untrusted(refusal) = gate.verdict(alpha) else {
            panic!("a changed installed skill is trusted");
        };
        assert_eq!(TrustVerdict::Untrusted(refusal.clone()).label(), "modified");
        let text = refusal.to_string();
        assert!(text.contains("`scripts/run.py` changed"), "{text}");
        assert!(text.contains("skillbox verify"), "{text}");
    }

    #[test]
    fn explicit_environment_and_user_roots_are_trusted() {
        let project = Project::new();
        for origin in [
            RootOrigin::Explicit,
            RootOrigin::Environment,
            RootOrigin::User,
        ] {
            let roots = vec![SkillRoot {
                path: project.root(),
                origin,
            }];
            let catalog = SkillCatalog::load(&CatalogOptions {
                roots: roots.clone(),
                ..CatalogOptions::default()
            })
            .unwrap();
            let gate = TrustGate::for_roots(&roots, Some(project.store_path.clone()));
            let store = gate.read_store();
            for skill in catalog.skills() {
                assert_eq!(gate.listed_verdict(&store, skill), None);
                assert_eq!(gate.verdict(skill), TrustVerdict::Trusted);
            }
        }
        // The same folder reached first as a user root is not held back as a project root.
        let mut roots = vec![SkillRoot {
            path: project.root(),
            origin: RootOrigin::User,
        }];
        roots.extend(project.roots());
        let gate = TrustGate::for_roots(&roots, Some(project.store_path.clone()));
        assert!(gate.gated.is_empty());
    }

    #[test]
    fn a_trust_file_others_could_change_is_not_believed() {
        let project = Project::new();
        project.trust(None);
        let set_mode = |path: &Path, mode: u32| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        let folder = project.store_path.parent().unwrap().to_path_buf();
        assert!(TrustStore::load(&project.store_path).is_ok());
        set_mode(&project.store_path, 0o666);
        let error = TrustStore::load(&project.store_path).unwrap_err();
        assert!(matches!(error, TrustError::NotPrivate { .. }), "{error}");
        assert!(error.to_string().contains("mode 666"), "{error}");
        set_mode(&project.store_path, 0o600);
        set_mode(&folder, 0o777);
        let error = TrustStore::load(&project.store_path).unwrap_err();
        assert!(matches!(error, TrustError::NotPrivate { .. }), "{error}");
        set_mode(&folder, 0o700);
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&project.store_path, Some(4242), None).unwrap();
            let error = TrustStore::load(&project.store_path).unwrap_err();
            assert!(error.to_string().contains("belongs to uid 4242"), "{error}");
        }
    }

    #[test]
    fn the_trust_file_is_private_and_a_corrupt_one_is_named() {
        let project = Project::new();
        project.trust(None);
        let folder_mode = std::fs::metadata(project.store_path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        let file_mode = std::fs::metadata(&project.store_path)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!((folder_mode & 0o777, file_mode & 0o777), (0o700, 0o600));

        let original = fs_err::read_to_string(&project.store_path).unwrap();
        for (edited, expected) in [
            ("{".to_owned(), "EOF while parsing"),
            (
                original.replace("\"version\": 1", "\"version\": 7"),
                "`version` is 7",
            ),
            (
                original.replace("\"pin\"", "\"sometimes\""),
                "unknown variant",
            ),
            (original.replace("sha256:", "md5:"), "is not `sha256:`"),
            (
                original.replace("\"alpha\"", "\"../alpha\""),
                "skill key `../alpha`",
            ),
            (
                original.replace("\"policy\"", "\"extra\": 1, \"policy\""),
                "unknown field",
            ),
        ] {
            std::fs::write(&project.store_path, &edited).unwrap();
            let error = TrustStore::load(&project.store_path)
                .unwrap_err()
                .to_string();
            assert!(error.contains("trust file `"), "{error}");
            assert!(error.contains(expected), "{expected}: {error}");
            // The gate refuses rather than treating the file as empty.
            let catalog = project.catalog();
            match project.gate().verdict(&catalog.skills()[0]) {
                TrustVerdict::Untrusted(Untrusted {
                    reason: UntrustedReason::Unverifiable(detail),
                    ..
                }) => assert!(detail.contains(expected), "{detail}"),
                other => panic!("{other:?}"),
            }
            // Nothing rewrote it.
            assert_eq!(fs_err::read_to_string(&project.store_path).unwrap(), edited);
        }
    }

    #[test]
    fn trusting_needs_an_existing_root_with_skills_and_untrusting_a_known_one() {
        let project = Project::new();
        let mut store = TrustStore::load(&project.store_path).unwrap();
        let missing = project.directory.join("nope");
        assert!(matches!(
            store.trust_root(&missing, None),
            Err(TrustError::RootMissing { .. })
        ));
        let empty = project.directory.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        assert!(matches!(
            store.trust_root(&empty, None),
            Err(TrustError::NoSkills { .. })
        ));
        assert!(matches!(
            store.untrust_root(&empty),
            Err(TrustError::UnknownRoot { .. })
        ));
        // A root that is gone can still be untrusted by its recorded path.
        store.trust_root(&project.root(), None).unwrap();
        std::fs::remove_dir_all(project.root()).unwrap();
        assert_eq!(
            store.untrust_root(&project.root()).unwrap().root,
            project.root()
        );
    }

    #[test]
    fn refusals_name_the_skill_the_root_the_reason_and_the_command() {
        let refusal = |reason| {
            Untrusted {
                skill: "hello".to_owned(),
                root: PathBuf::from("/work/my project/.claude/skills"),
                reason,
            }
            .to_string()
        };
        insta::assert_snapshot!(
            [
                refusal(UntrustedReason::NeverTrusted),
                refusal(UntrustedReason::Changed),
                refusal(UntrustedReason::AddedSince),
                refusal(UntrustedReason::Unverifiable("why".to_owned())),
            ]
            .join("\n\n")
        );
        assert_eq!(shell_word(Path::new("/a/b-c/.d")), "/a/b-c/.d");
        assert_eq!(shell_word(Path::new("/it's")), "\"/it's\"");
    }
}
