//! The trust file (`trust.json` in the user's config folder): the project roots the user
//! trusted, with the digest of each skill's files at that moment and the policy that says
//! what the trust covers later; the skill folders `skillbox add` and `install` put in place;
//! and the folders of this machine the user named to `skillbox add` for a project.
//!
//! The file is the user's own: one another user could write is not believed
//! ([`TrustError::NotPrivate`]), and it is replaced whole, never written through a link.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use fs_err::os::unix::fs::OpenOptionsExt as _;
use serde::{Deserialize, Serialize};

use skillbox_core::Skill;
use skillbox_core::catalog::{CatalogOptions, SkillCatalog, SkillRoot};
use skillbox_core::source::contained_relative_path;

use crate::digest::{self, skill_digest};
use crate::error::{TrustError, io_error};
use crate::ownership::path_ownership_problem;
use crate::package_servers::{ProvisionedServer, ProvisionedServers};

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
    /// Per canonical skill folder: the package servers installed for it, by server name (see
    /// [`crate::package_servers`]).
    #[serde(
        default,
        rename = "packageServers",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    package_servers: ProvisionedServers,
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
    pub(crate) installed: BTreeMap<PathBuf, InstalledSkill>,
    local_sources: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
    package_servers: ProvisionedServers,
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
                    package_servers: BTreeMap::new(),
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
        for (folder, servers) in &file.package_servers {
            if !Path::new(folder).is_absolute() {
                return Err(corrupt(format!(
                    "package servers of `{folder}`: the folder is not an absolute path"
                )));
            }
            for (name, server) in servers {
                let problem = (!digest::is_digest(&server.digest))
                    .then(|| "its digest is not a tree digest".to_owned())
                    .or_else(|| server.entry.problem());
                if let Some(problem) = problem {
                    return Err(corrupt(format!(
                        "package server `{name}` of `{folder}`: {problem}"
                    )));
                }
            }
        }
        Ok(TrustStore {
            path: path.to_path_buf(),
            roots,
            installed,
            local_sources,
            package_servers: file.package_servers,
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
            package_servers: self.package_servers.clone(),
        };
        let mut text = serde_json::to_vec_pretty(&file)
            .map_err(|error| TrustError::Io(format!("cannot encode the trust file: {error}")))?;
        text.push(b'\n');
        crate::safe_write::write_file_atomically(
            &self.path,
            &text,
            crate::safe_write::WriteOptions::PRIVATE,
        )
        .map_err(io_error)?;
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
    /// moved), and their package servers; returns how many.
    pub fn forget_missing_installed(&mut self) -> usize {
        let before = self.installed.len();
        self.installed.retain(|folder, _| folder.exists());
        self.package_servers
            .retain(|folder, _| Path::new(folder).exists());
        before - self.installed.len()
    }

    /// The package server `server` installed for the skill folder at `canonical_folder`.
    #[must_use]
    pub fn provisioned_server(
        &self,
        canonical_folder: &Path,
        server: &str,
    ) -> Option<&ProvisionedServer> {
        self.package_servers
            .get(canonical_folder.to_str()?)?
            .get(server)
    }

    /// Record the package servers installed for the skill folder at `folder` (replacing what
    /// was recorded for it). In memory only: [`TrustStore::save`] writes it.
    ///
    /// # Errors
    /// When the folder does not exist, or its path is not UTF-8.
    pub fn record_provisioned_servers(
        &mut self,
        folder: &Path,
        servers: BTreeMap<String, ProvisionedServer>,
    ) -> Result<(), TrustError> {
        let canonical = fs_err::canonicalize(folder).map_err(|_| TrustError::RootMissing {
            path: folder.to_path_buf(),
        })?;
        let key = canonical
            .to_str()
            .ok_or_else(|| TrustError::PathNotUtf8 {
                path: canonical.clone(),
            })?
            .to_owned();
        if servers.is_empty() {
            self.package_servers.remove(&key);
        } else {
            self.package_servers.insert(key, servers);
        }
        Ok(())
    }

    /// Forget the install record of a skill folder, named by its canonical path (the folder
    /// may be gone already). Returns whether there was one.
    pub fn forget_installed(&mut self, canonical_folder: &Path) -> bool {
        if let Some(key) = canonical_folder.to_str() {
            self.package_servers.remove(key);
        }
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
pub(crate) fn skill_key(skill: &Skill) -> String {
    match skill.directory.strip_prefix(&skill.root) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative
            .components()
            .map(|component| component.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        _ => WHOLE_ROOT_SKILL_KEY.to_owned(),
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// `O_NOFOLLOW`, so that a link planted at the lock's name is refused rather than followed.
fn libc_nofollow() -> i32 {
    i32::try_from(rustix::fs::OFlags::NOFOLLOW.bits()).unwrap_or(0)
}
