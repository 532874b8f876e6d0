//! The install operations: `add`, `install`, `update`, `remove`, `outdated`, `verify`.
//!
//! Every change follows one order, so that a process killed at any point leaves a state the
//! next `install` completes: fetch and validate into private staging folders (nothing visible
//! changes); store each skill's tree read-only under its digest; write the manifest and the
//! lock (each renamed into place whole), which now say what should be installed; put each
//! skill folder in place (built beside it and renamed over it whole); record trust by digest.
//! `install` then only has to make the folders match the lock, taking trees from the store (no
//! network) or, when the store lost them, fetching the locked revision again. A lock on the
//! project (`.agents/.skillbox-install.lock`) keeps two installs from interleaving.

mod add;
mod fetching;
mod install;
mod outdated;
mod placement;
mod remove;
mod requirements;
mod servers;
mod storing;
mod trust_records;
mod update;
mod verify;

use add::not_in_source;
use requirements::with_requirements;
use servers::ServerResolution;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use rustix::fs::FileType;
use serde::Serialize;
use skillbox_core::ServerTransport;
use skillbox_core::catalog::{CatalogOptions, SkillCatalog, SkillRoot};
use skillbox_trust::TrustStore;
use skillbox_trust::digest::{FolderInventory, folder_inventory_at};
use skillbox_trust::lockfile::{FileChange, LockedFile, LockedSkill, SkillLock, SourceKind};
use skillbox_trust::store::SkillStore;

use crate::agents::{agent, agent_folder};
use crate::discover::{FoundSkill, find_skills, find_skills_with};
use crate::error::InstallError;
use crate::fetch::git::{GitSource, TreeOutline, fetch_tree, folder_digest, write_folder};
use crate::fetch::http::Http;
use crate::fetch::origin::AllowedHosts;
use crate::fetch::unpack::{ArchiveFormat, unpack};
use crate::fetch::well_known::{fetch_index, fetch_skill};
use crate::folder_handle::{FolderHandle, copy_folder};
use crate::limits::InstallLimits;
use crate::progress::Progress;
use crate::project_manifest::{Manifest, ManifestEntry, write_atomically};
use crate::scope::InstallScope;
use crate::source::{Location, SourceSpec, WELL_KNOWN_PATH};

pub use skillbox_trust::store::CACHE_DIRECTORY_ENVIRONMENT_VARIABLE;

/// What the folders an install builds beside the install folder are called.
const STAGING_PREFIX: &str = ".skillbox-staging-";
/// The file (beside the install folder) locked while an operation changes the install.
const PROJECT_LOCK_NAME: &str = ".skillbox-install.lock";

/// What `skillbox add` is asked.
#[derive(Debug, Clone, Default)]
pub struct AddRequest {
    /// The SOURCE.
    pub source: String,
    /// Skills to take from it (all it holds when it holds one).
    pub skills: Vec<String>,
    /// Take every skill it holds.
    pub all: bool,
    /// Agents whose folders also show the skills.
    pub agents: Vec<String>,
    /// Copies rather than links in those folders.
    pub copy: bool,
}

/// One skill an operation installed, updated, removed or checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillOutcome {
    /// Its name (its install folder's name).
    pub name: String,
    /// What happened.
    pub action: Action,
    /// Its install folder.
    pub folder: PathBuf,
    /// The source.
    pub source: String,
    /// The resolved revision (a commit, an artifact digest), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The tree digest installed (or found).
    pub digest: String,
    /// The digest before, for an update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_digest: Option<String>,
    /// How its files differ from the lock (`verify`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FileChange>,
}

/// What happened to a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Newly installed.
    Added,
    /// Its files changed to a new version.
    Updated,
    /// Already as wanted.
    Unchanged,
    /// Put back to what the lock says.
    Restored,
    /// Removed.
    Removed,
    /// A newer version exists (`outdated`).
    Outdated,
    /// Its files differ from the lock (`verify`).
    Modified,
    /// Its folder is gone (`verify`).
    Missing,
}

impl Action {
    /// The action as a word.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Added => "added",
            Action::Updated => "updated",
            Action::Unchanged => "unchanged",
            Action::Restored => "restored",
            Action::Removed => "removed",
            Action::Outdated => "outdated",
            Action::Modified => "modified",
            Action::Missing => "missing",
        }
    }
}

/// What an operation did, for printing and `--json`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The manifest.
    pub manifest: PathBuf,
    /// The lock.
    pub lock: PathBuf,
    /// One entry per skill concerned.
    pub skills: Vec<SkillOutcome>,
    /// Things worth knowing (submodules skipped, agents that already see the install folder).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Report {
    /// Whether any skill is outdated, modified or missing (`outdated`, `verify` exit 1).
    #[must_use]
    pub fn found_problems(&self) -> bool {
        self.skills.iter().any(|skill| {
            matches!(
                skill.action,
                Action::Outdated | Action::Modified | Action::Missing
            )
        })
    }
}

/// A skill fetched and validated, ready to store.
struct Prepared {
    found: FoundSkill,
    kind: SourceKind,
    spec: SourceSpec,
    revision: Option<String>,
    /// The staging folder holding `found.folder`, removed when the last skill of it is dropped.
    staging_guard: Option<Arc<tempfile::TempDir>>,
    /// The fetched git tree whose outline `found` was read from: [`Installer::complete`]
    /// writes the folder whole before it is stored.
    outline_of: Option<Rc<FetchedTree>>,
    /// `found.folder` is a tree of the store already (never moved or removed).
    in_store: bool,
}

/// A fetched source's files in a staging folder.
struct FetchedTree {
    /// The folder holding what was fetched (the source's `prefix`).
    root: PathBuf,
    /// The folder of the source `root` holds (a git sub-path), `/`-separated.
    prefix: String,
    kind: SourceKind,
    /// The revision of the whole source (a commit, an archive's digest).
    revision: Option<String>,
    /// For an index: each skill fetched, with the index URL and its own revision.
    index_skills: Option<BTreeMap<String, (String, Option<String>)>>,
    /// For git: the fetched repository, whose `root` holds only the skills' `SKILL.md` files
    /// until a chosen skill's folder is written whole ([`Installer::complete`]).
    git: Option<FetchedRepository>,
    notes: Vec<String>,
    staging: Option<Arc<tempfile::TempDir>>,
}

/// A git repository fetched for an operation.
struct FetchedRepository {
    url: String,
    repository: gix::ThreadSafeRepository,
    revision: String,
}

impl FetchedTree {
    fn plain(
        root: PathBuf,
        kind: SourceKind,
        revision: Option<String>,
        staging: Option<tempfile::TempDir>,
    ) -> FetchedTree {
        FetchedTree {
            root,
            prefix: String::new(),
            kind,
            revision,
            index_skills: None,
            git: None,
            notes: Vec::new(),
            staging: staging.map(Arc::new),
        }
    }
}

/// A folder an operation put in place, to record in the trust file at its end.
#[derive(Debug)]
struct PendingTrust {
    folder: PathBuf,
    digest: String,
    servers: BTreeMap<String, skillbox_trust::package_servers::ProvisionedServer>,
}

/// A fetched source's skills, and notes about it.
struct Fetched {
    skills: Vec<Prepared>,
    notes: Vec<String>,
}

/// Installs into one scope, with one store and one trust file.
#[derive(Debug)]
pub struct Installer {
    scope: InstallScope,
    cache: PathBuf,
    trust_file: Option<PathBuf>,
    limits: InstallLimits,
    allowed_hosts: AllowedHosts,
    progress: Progress,
    http: std::sync::OnceLock<Http>,
    /// Sources fetched during this operation, by source, reference and skills asked for.
    fetched: std::cell::RefCell<BTreeMap<String, Rc<FetchedTree>>>,
    /// Installed folders, their digests and package servers, to record in the trust file.
    pending_trust: std::sync::Mutex<Vec<PendingTrust>>,
    /// Local sources outside the project the person named to `add`, to record in the trust
    /// file ([`TrustStore::confirm_local_source`]).
    pending_sources: std::sync::Mutex<Vec<PathBuf>>,
    /// The trust file, read once per operation.
    trust_snapshot: std::sync::OnceLock<Option<TrustStore>>,
    /// How many skill folders were written whole from git this operation (names their folders).
    completed: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for FetchedTree {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("FetchedTree")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Http {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Http")
    }
}

impl Installer {
    /// An installer for `scope`, keeping trees in the cache folder (`SKILLBOX_CACHE_DIR`, else
    /// `skillbox/` in the user's cache folder) and trust records in the user's trust file.
    ///
    /// # Errors
    /// [`InstallError::Usage`] when no cache folder is known.
    pub fn new(scope: InstallScope) -> Result<Installer, InstallError> {
        // Git over HTTPS builds its own client: the TLS provider must be in place first.
        skillbox_services::tls::install_crypto_provider();
        let cache = skillbox_trust::store::cache_folder().ok_or_else(|| InstallError::Usage {
            message: format!(
                "no cache folder is known; set `{CACHE_DIRECTORY_ENVIRONMENT_VARIABLE}`"
            ),
        })?;
        Ok(Installer {
            scope,
            cache,
            trust_file: TrustStore::default_path().ok(),
            limits: InstallLimits::default(),
            allowed_hosts: AllowedHosts::default(),
            progress: Progress::default(),
            http: std::sync::OnceLock::new(),
            fetched: std::cell::RefCell::default(),
            pending_trust: std::sync::Mutex::default(),
            pending_sources: std::sync::Mutex::default(),
            trust_snapshot: std::sync::OnceLock::new(),
            completed: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Use these limits.
    #[must_use]
    pub fn with_limits(mut self, limits: InstallLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Also download from these hosts: an index's artifacts and redirects otherwise stay on
    /// the origin the source names.
    #[must_use]
    pub fn with_allowed_hosts(mut self, allowed_hosts: AllowedHosts) -> Self {
        self.allowed_hosts = allowed_hosts;
        self
    }

    /// Report progress here.
    #[must_use]
    pub fn with_progress(mut self, progress: Progress) -> Self {
        self.progress = progress;
        self
    }

    /// Record trust in this file instead of the user's.
    #[must_use]
    pub fn with_trust_file(mut self, trust_file: Option<PathBuf>) -> Self {
        self.trust_file = trust_file;
        self
    }

    /// The scope.
    #[must_use]
    pub fn scope(&self) -> &InstallScope {
        &self.scope
    }

    pub(super) fn http(&self) -> Result<&Http, InstallError> {
        if let Some(http) = self.http.get() {
            return Ok(http);
        }
        let http = Http::new(self.allowed_hosts.clone(), self.limits.network_timeout)?;
        Ok(self.http.get_or_init(|| http))
    }

    pub(super) fn store(&self) -> Result<SkillStore, InstallError> {
        fs_err::create_dir_all(&self.cache)
            .map_err(|error| InstallError::io("create", &self.cache, error))?;
        Ok(SkillStore::open(&self.cache.join("store"))?)
    }

    pub(super) fn staging(&self) -> Result<tempfile::TempDir, InstallError> {
        let folder = self.cache.join("staging");
        fs_err::create_dir_all(&folder)
            .map_err(|error| InstallError::io("create", &folder, error))?;
        tempfile::Builder::new()
            .prefix("fetch-")
            .tempdir_in(&folder)
            .map_err(|error| InstallError::io("create", &folder, error))
    }

    pub(super) fn report(&self) -> Report {
        Report {
            manifest: self.scope.manifest.clone(),
            lock: self.scope.lock.clone(),
            ..Report::default()
        }
    }

    /// The project's exclusive lock, held while an operation changes the install.
    pub(super) fn lock_project(&self) -> Result<std::fs::File, InstallError> {
        crate::guard::check_project(&self.scope)?;
        let folder = FolderHandle::open_in(&self.scope, &self.scope.staging_parent())?;
        let path = folder.path().join(PROJECT_LOCK_NAME);
        // Never through a link a repository planted at the name (it would create its target).
        let file = rustix::fs::openat(
            &folder,
            PROJECT_LOCK_NAME,
            rustix::fs::OFlags::WRONLY
                | rustix::fs::OFlags::CREATE
                | rustix::fs::OFlags::NOFOLLOW
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::from_raw_mode(0o644),
        )
        .map(std::fs::File::from)
        .map_err(|error| InstallError::io("open", &path, std::io::Error::from(error)))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|error| InstallError::io("lock", &path, std::io::Error::from(error)))?;
        // Folders a killed install was building: no other install runs now.
        for name in folder.names().unwrap_or_default() {
            if name.to_string_lossy().starts_with(STAGING_PREFIX) {
                let _ = folder.remove_tree(&name);
            }
        }
        Ok(file)
    }

    /// The folder holding the install folder (where staging happens) and the install folder,
    /// open (and created when missing).
    pub(super) fn install_handles(&self) -> Result<(FolderHandle, FolderHandle), InstallError> {
        let parent = FolderHandle::open_in(&self.scope, &self.scope.staging_parent())?;
        let name = self
            .scope
            .install_folder
            .file_name()
            .unwrap_or_else(|| OsStr::new("skills"));
        let install = parent.child(name, true)?;
        Ok((parent, install))
    }

    pub(super) fn existing_lock(&self) -> Result<SkillLock, InstallError> {
        crate::guard::check_project(&self.scope)?;
        SkillLock::load(&self.scope.lock)?.ok_or_else(|| InstallError::NotFound {
            message: format!(
                "`{}` does not exist; `skillbox add SOURCE` installs a skill and writes it",
                self.scope.lock.display()
            ),
        })
    }

    /// The names asked for, each in the lock; all of them when none are.
    pub(super) fn named(
        &self,
        lock: &SkillLock,
        names: &[String],
    ) -> Result<Vec<String>, InstallError> {
        if names.is_empty() {
            return Ok(lock.skills.keys().cloned().collect());
        }
        for name in names {
            if !lock.skills.contains_key(name) {
                return Err(InstallError::NotInstalled {
                    name: name.clone(),
                    lock: self.scope.lock.clone(),
                });
            }
        }
        Ok(names.to_vec())
    }
}

pub(super) fn entry_from_lock(locked: &LockedSkill) -> ManifestEntry {
    ManifestEntry {
        source: locked.source.clone(),
        path: locked.path.clone(),
        reference: locked.reference.clone(),
        agents: locked.agents.clone(),
        copy: locked.copies,
    }
}

pub(super) fn outcome(
    name: &str,
    action: Action,
    folder: PathBuf,
    locked: &LockedSkill,
    previous_digest: Option<String>,
) -> SkillOutcome {
    SkillOutcome {
        name: name.to_owned(),
        action,
        folder,
        source: locked.source.clone(),
        revision: locked.revision.clone(),
        digest: locked.digest.clone(),
        previous_digest: previous_digest.filter(|previous| *previous != locked.digest),
        changes: Vec::new(),
    }
}
