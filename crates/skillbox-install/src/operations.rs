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

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use rustix::fs::FileType;
use serde::Serialize;
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
use crate::manifest::{Manifest, ManifestEntry, write_atomically};
use crate::progress::Progress;
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
    /// Installed folders and their digests, to record in the trust file.
    pending_trust: std::sync::Mutex<Vec<(PathBuf, String)>>,
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

    fn http(&self) -> Result<&Http, InstallError> {
        if let Some(http) = self.http.get() {
            return Ok(http);
        }
        let http = Http::new(self.allowed_hosts.clone(), self.limits.network_timeout)?;
        Ok(self.http.get_or_init(|| http))
    }

    fn store(&self) -> Result<SkillStore, InstallError> {
        fs_err::create_dir_all(&self.cache)
            .map_err(|error| InstallError::io("create", &self.cache, error))?;
        Ok(SkillStore::open(&self.cache.join("store"))?)
    }

    fn staging(&self) -> Result<tempfile::TempDir, InstallError> {
        let folder = self.cache.join("staging");
        fs_err::create_dir_all(&folder)
            .map_err(|error| InstallError::io("create", &folder, error))?;
        tempfile::Builder::new()
            .prefix("fetch-")
            .tempdir_in(&folder)
            .map_err(|error| InstallError::io("create", &folder, error))
    }

    fn report(&self) -> Report {
        Report {
            manifest: self.scope.manifest.clone(),
            lock: self.scope.lock.clone(),
            ..Report::default()
        }
    }

    /// The project's exclusive lock, held while an operation changes the install.
    fn lock_project(&self) -> Result<std::fs::File, InstallError> {
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
    fn install_handles(&self) -> Result<(FolderHandle, FolderHandle), InstallError> {
        let parent = FolderHandle::open_in(&self.scope, &self.scope.staging_parent())?;
        let name = self
            .scope
            .install_folder
            .file_name()
            .unwrap_or_else(|| OsStr::new("skills"));
        let install = parent.child(name, true)?;
        Ok((parent, install))
    }

    /// `skillbox add`: fetch SOURCE, choose its skills, install them and record them.
    ///
    /// # Errors
    /// Any [`InstallError`]; nothing visible changes unless every chosen skill fetched and
    /// validated.
    pub fn add(&self, request: &AddRequest) -> Result<Report, InstallError> {
        self.check_agent_folders(&request.agents)?;
        let spec = SourceSpec::parse(&request.source, &self.scope.base)?;
        if request.skills.is_empty() && !request.all {
            self.choose_from_index(&spec)?;
        }
        let fetched = self.fetch(&spec, &request.skills)?;
        let _guard = self.lock_project()?;
        let mut lock = SkillLock::load(&self.scope.lock)?.unwrap_or_default();
        let mut notes = fetched.notes;
        let mut required_by = BTreeMap::new();
        let chosen = choose(fetched.skills, &request.skills, request.all, &spec.text).and_then(
            |(chosen, rest)| {
                with_requirements(
                    chosen,
                    rest,
                    &lock,
                    &spec.text,
                    &mut notes,
                    &mut required_by,
                )
            },
        )?;
        self.check_takeovers(&chosen, request, &required_by, &lock, &spec.text)?;
        let chosen = chosen
            .into_iter()
            .map(|prepared| self.complete(prepared))
            .collect::<Result<Vec<_>, _>>()?;
        let mut manifest = Manifest::load(&self.scope.manifest)?;
        lock.version = skillbox_trust::lockfile::LOCK_FORMAT_VERSION;
        let mut report = self.report();
        report.notes = notes;
        let mut placed = Vec::new();
        for prepared in chosen {
            let entry = ManifestEntry {
                source: spec.text.clone(),
                path: manifest_path(&prepared),
                reference: spec.reference.clone(),
                agents: request.agents.clone(),
                copy: request.copy,
            };
            let (locked, tree) = self.store_prepared(&prepared, &entry)?;
            let name = prepared.found.name.clone();
            let previous = lock.skills.get(&name).map(|old| old.digest.clone());
            self.check_free(&name, &locked, previous.is_some())?;
            manifest.set(&name, entry);
            lock.skills.insert(name.clone(), locked.clone());
            placed.push((name, locked, tree, previous));
        }
        manifest.save()?;
        write_atomically(&self.scope.lock, lock.to_text().as_bytes())?;
        // The person named this source: `install`, `update` and `outdated` may read it for
        // this project from now on.
        if let Some(Some(real)) = crate::local_source::outside_project(&self.scope, &spec)
            && let Ok(mut pending) = self.pending_sources.lock()
        {
            pending.push(real);
        }
        for (name, locked, tree, previous) in placed {
            let folder = self.place(&name, &locked, &tree, &mut report.notes)?;
            let action = match &previous {
                None => Action::Added,
                Some(digest) if *digest == locked.digest => Action::Unchanged,
                Some(_) => Action::Updated,
            };
            report
                .skills
                .push(outcome(&name, action, folder, &locked, previous));
        }
        self.flush_trust()?;
        Ok(report)
    }

    /// For a discovery index listing several skills, none of them chosen: the refusal listing
    /// them, read from the index alone (no skill is downloaded to be listed).
    fn choose_from_index(&self, spec: &SourceSpec) -> Result<(), InstallError> {
        let url = match &spec.location {
            Location::WellKnown(url) => url.clone(),
            Location::Site(site) => format!(
                "{}/{WELL_KNOWN_PATH}/index.json",
                site.trim_end_matches('/')
            ),
            _ => return Ok(()),
        };
        match fetch_index(self.http()?, &url, &self.progress)? {
            Some(index) if index.skills.len() > 1 => Err(choose_listing(
                &spec.text,
                index
                    .skills
                    .iter()
                    .map(|skill| (skill.name.as_str(), skill.description.as_str())),
            )),
            _ => Ok(()),
        }
    }

    /// `skillbox install`: make the install folder exactly what the lock says, locking what
    /// the manifest wants and the lock lacks first (unless `frozen`, which refuses any change
    /// to the lock).
    ///
    /// # Errors
    /// [`InstallError::Frozen`] naming each difference under `frozen`; any other error.
    pub fn install(&self, frozen: bool) -> Result<Report, InstallError> {
        let _guard = self.lock_project()?;
        let manifest = Manifest::load(&self.scope.manifest)?;
        let lock_on_disk = SkillLock::load(&self.scope.lock)?;
        if !manifest.exists() && lock_on_disk.is_none() {
            return Err(InstallError::NotFound {
                message: format!(
                    "neither `{}` nor `{}` exists; `skillbox add SOURCE` starts one",
                    self.scope.manifest.display(),
                    self.scope.lock.display()
                ),
            });
        }
        let mut lock = lock_on_disk.clone().unwrap_or_else(SkillLock::new);
        let mut report = self.report();
        for (name, entry) in manifest.entries() {
            self.check_named_source(name, &entry.source, &self.scope.manifest)?;
        }
        if manifest.exists() {
            let differences = differences(&manifest, &lock);
            if frozen && !differences.is_empty() {
                return Err(InstallError::Frozen {
                    message: format!(
                        "`--frozen`: `{}` and `{}` disagree: {}; run `skillbox install` without `--frozen` and commit the lock",
                        self.scope.manifest.display(),
                        self.scope.lock.display(),
                        differences.join("; ")
                    ),
                });
            }
            lock.skills
                .retain(|name, _| manifest.entries().contains_key(name));
            for (name, entry) in manifest.entries() {
                let agrees = lock
                    .skills
                    .get(name)
                    .is_some_and(|locked| agrees(entry, locked));
                if agrees {
                    if let Some(locked) = lock.skills.get_mut(name) {
                        locked.agents.clone_from(&entry.agents);
                        locked.copies = entry.copy;
                    }
                    continue;
                }
                let spec = SourceSpec::parse(&entry.source, &self.scope.base)?
                    .with_reference(entry.reference.clone());
                let prepared = self.fetch_one(&spec, &entry.path, name)?;
                let (locked, _) = self.store_prepared(&prepared, entry)?;
                let was_locked = lock_on_disk
                    .as_ref()
                    .is_some_and(|on_disk| on_disk.skills.contains_key(name));
                self.check_free(name, &locked, was_locked)?;
                lock.skills.insert(name.clone(), locked);
            }
            if Some(&lock) != lock_on_disk.as_ref() {
                write_atomically(&self.scope.lock, lock.to_text().as_bytes())?;
            }
        }
        // Whatever the lock says: an entry kept from it is read as a source again (or taken
        // from the store by its digest) only when the person could have chosen it.
        for (name, locked) in &lock.skills {
            self.check_named_source(name, &locked.source, &self.scope.lock)?;
            self.check_agent_folders(&locked.agents)?;
        }
        self.remove_unlocked(&lock, &mut report)?;
        for (name, locked) in &lock.skills {
            let (action, folder) = self.restore(name, locked, &mut report.notes)?;
            report
                .skills
                .push(outcome(name, action, folder, locked, None));
        }
        self.flush_trust()?;
        Ok(report)
    }

    /// `skillbox update [NAME]...`: fetch each skill's source again (all when no names) and
    /// install what it holds now.
    ///
    /// # Errors
    /// [`InstallError::NotInstalled`] for a name not in the lock; any other error.
    pub fn update(&self, names: &[String]) -> Result<Report, InstallError> {
        let _guard = self.lock_project()?;
        let manifest = Manifest::load(&self.scope.manifest)?;
        let mut lock = self.existing_lock()?;
        let names = self.named(&lock, names)?;
        let mut report = self.report();
        let mut placed = Vec::new();
        for name in names {
            let Some(old) = lock.skills.get(&name).cloned() else {
                continue;
            };
            let entry = manifest
                .entries()
                .get(&name)
                .cloned()
                .unwrap_or_else(|| entry_from_lock(&old));
            self.check_named_source(&name, &old.source, &self.scope.lock)?;
            self.check_named_source(&name, &entry.source, &self.scope.manifest)?;
            let spec = SourceSpec::parse(&entry.source, &self.scope.base)?
                .with_reference(entry.reference.clone());
            let prepared = self.fetch_one(&spec, &old.path, &name)?;
            let (locked, tree) = self.store_prepared(&prepared, &entry)?;
            lock.skills.insert(name.clone(), locked.clone());
            placed.push((name, locked, tree, old.digest));
        }
        write_atomically(&self.scope.lock, lock.to_text().as_bytes())?;
        for (name, locked, tree, previous) in placed {
            let folder = self.place(&name, &locked, &tree, &mut report.notes)?;
            let action = if previous == locked.digest {
                Action::Unchanged
            } else {
                Action::Updated
            };
            report
                .skills
                .push(outcome(&name, action, folder, &locked, Some(previous)));
        }
        self.flush_trust()?;
        Ok(report)
    }

    /// `skillbox remove NAME...`: remove the skills' folders (and their links or copies in
    /// other agents' folders), manifest and lock entries, and trust records.
    ///
    /// # Errors
    /// [`InstallError::NotInstalled`] for a name not in the lock (nothing is removed then).
    pub fn remove(&self, names: &[String]) -> Result<Report, InstallError> {
        if names.is_empty() {
            return Err(InstallError::Usage {
                message: "name the skills to remove".to_owned(),
            });
        }
        let _guard = self.lock_project()?;
        let mut manifest = Manifest::load(&self.scope.manifest)?;
        let mut lock = self.existing_lock()?;
        let names = self.named(&lock, names)?;
        let mut report = self.report();
        let mut removed = Vec::new();
        for name in &names {
            if let Some(locked) = lock.skills.remove(name) {
                manifest.remove(name);
                removed.push((name.clone(), locked));
            }
        }
        if manifest.exists() {
            manifest.save()?;
        }
        write_atomically(&self.scope.lock, lock.to_text().as_bytes())?;
        for (name, locked) in removed {
            let folder = self.scope.install_folder.join(&name);
            self.remove_placed(&name, &locked)?;
            report
                .skills
                .push(outcome(&name, Action::Removed, folder, &locked, None));
        }
        Ok(report)
    }

    /// `skillbox outdated`: fetch each skill's source again and report those whose files
    /// would change; nothing is installed.
    ///
    /// # Errors
    /// Any fetch error.
    pub fn outdated(&self) -> Result<Report, InstallError> {
        crate::guard::check_project(&self.scope)?;
        let manifest = Manifest::load(&self.scope.manifest)?;
        let lock = self.existing_lock()?;
        let mut report = self.report();
        for (name, locked) in &lock.skills {
            let entry = manifest
                .entries()
                .get(name)
                .cloned()
                .unwrap_or_else(|| entry_from_lock(locked));
            self.check_named_source(name, &locked.source, &self.scope.lock)?;
            self.check_named_source(name, &entry.source, &self.scope.manifest)?;
            let spec = SourceSpec::parse(&entry.source, &self.scope.base)?
                .with_reference(entry.reference.clone());
            let prepared = self.fetch_one(&spec, &locked.path, name)?;
            let inventory = folder_inventory_at(&prepared.found.folder)
                .map_err(|error| InstallError::refused(spec.text.clone(), error.to_string()))?;
            let action = if inventory.digest == locked.digest {
                Action::Unchanged
            } else {
                Action::Outdated
            };
            let mut skill = outcome(
                name,
                action,
                self.scope.install_folder.join(name),
                locked,
                None,
            );
            if action == Action::Outdated {
                skill.previous_digest = Some(locked.digest.clone());
                skill.digest = inventory.digest;
                skill.revision = prepared.revision;
            }
            report.skills.push(skill);
        }
        Ok(report)
    }

    /// `skillbox verify`: compare every installed skill's files with the lock, naming each
    /// changed, added or missing file.
    ///
    /// # Errors
    /// When the lock cannot be read.
    pub fn verify(&self) -> Result<Report, InstallError> {
        let lock = self.existing_lock()?;
        let mut report = self.report();
        for (name, locked) in &lock.skills {
            let folder = self.scope.install_folder.join(name);
            let (action, changes) = match folder_inventory_at(&folder) {
                Err(_) if !folder.exists() => (Action::Missing, Vec::new()),
                Err(error) => {
                    report.notes.push(error.to_string());
                    (Action::Modified, Vec::new())
                }
                Ok(found) if found.digest == locked.digest => (Action::Unchanged, Vec::new()),
                Ok(found) => (Action::Modified, locked.changes(&found)),
            };
            let mut skill = outcome(name, action, folder, locked, None);
            skill.changes = changes;
            report.skills.push(skill);
            for agent_name in &locked.agents {
                let Ok(agent) = agent(agent_name) else {
                    continue;
                };
                let Some(agent_folder) = agent_folder(agent, &self.scope) else {
                    continue;
                };
                let shown = agent_folder.join(name);
                let fine = if locked.copies {
                    folder_inventory_at(&shown).is_ok_and(|found| found.digest == locked.digest)
                } else {
                    fs_err::read_link(&shown)
                        .is_ok_and(|target| target == self.relative_link(&agent_folder, name))
                };
                if !fine {
                    let mut skill = outcome(name, Action::Modified, shown.clone(), locked, None);
                    skill.changes.push(FileChange {
                        path: shown.display().to_string(),
                        change: skillbox_trust::lockfile::ChangeKind::Changed,
                    });
                    report.skills.push(skill);
                }
            }
        }
        Ok(report)
    }

    /// Refuse a local source outside the project that entry `name` of the project's manifest
    /// or lock (`named_in`) names, unless the person confirmed it with `skillbox add`
    /// ([`crate::local_source`]).
    fn check_named_source(
        &self,
        name: &str,
        source: &str,
        named_in: &Path,
    ) -> Result<(), InstallError> {
        if self.scope.global {
            return Ok(());
        }
        let spec = SourceSpec::parse(source, &self.scope.base)?;
        let trust = self
            .trust_file
            .as_deref()
            .and_then(|trust_file| self.trust_snapshot(trust_file));
        crate::local_source::check_named_source(&self.scope, trust, &spec, name, named_in)
    }

    /// Refuse to install a skill the person did not name (one a chosen skill requires, or one
    /// taken with `--all` or as a source's only skill) under a name the user already has in
    /// another root (`~/.claude/skills`, a project root): installed here it would take that
    /// name over, and with it every grant given to the name (`--secret VAR:NAME`,
    /// `--allow-network-for NAME`). Skills this lock installed already are updates.
    fn check_takeovers(
        &self,
        chosen: &[Prepared],
        request: &AddRequest,
        required_by: &BTreeMap<String, String>,
        lock: &SkillLock,
        source_text: &str,
    ) -> Result<(), InstallError> {
        let unnamed: Vec<&str> = chosen
            .iter()
            .map(|prepared| prepared.found.name.as_str())
            .filter(|name| {
                !request.skills.iter().any(|named| named == name)
                    && !lock.skills.contains_key(*name)
            })
            .collect();
        if unnamed.is_empty() {
            return Ok(());
        }
        // The very folder being installed (a user's skill added by its path) is no other copy.
        let installing: Vec<PathBuf> = chosen
            .iter()
            .filter_map(|prepared| fs_err::canonicalize(&prepared.found.folder).ok())
            .collect();
        let Some((name, folder)) = self.copy_elsewhere(&unnamed, &installing) else {
            return Ok(());
        };
        let why = match required_by.get(&name) {
            Some(needer) => format!("which `{needer}` requires"),
            None if request.all => "taken with `--all`".to_owned(),
            None => "the skill it holds".to_owned(),
        };
        let names: Vec<String> = chosen
            .iter()
            .map(|prepared| format!("--skill {}", prepared.found.name))
            .collect();
        Err(InstallError::refused(
            source_text,
            format!(
                "it would install its own skill `{name}` ({why}) in `{}`, where it would take over your skill `{name}` at `{}`: models would be shown it instead of yours, and a grant given to `{name}` (`--secret VAR:{name}`, `--allow-network-for {name}`) would go to it. Nothing was installed. To keep yours, leave this source out; to replace yours in this {} anyway, name every skill: `skillbox add {source_text} {}`",
                self.scope.install_folder.display(),
                folder.display(),
                if self.scope.global {
                    "scope"
                } else {
                    "project"
                },
                names.join(" ")
            ),
        ))
    }

    /// The first of `names` that a skill root other than the install folder holds (the roots
    /// a catalog of this project reads: `SKILLBOX_ROOTS`, else the user's and the project's),
    /// with its folder; copies in the `installing` folders do not count.
    fn copy_elsewhere(&self, names: &[&str], installing: &[PathBuf]) -> Option<(String, PathBuf)> {
        let install_folder = fs_err::canonicalize(&self.scope.install_folder).ok();
        let is_install_folder = |path: &Path| {
            path == self.scope.install_folder
                || install_folder.is_some() && fs_err::canonicalize(path).ok() == install_folder
        };
        let roots: Vec<SkillRoot> = SkillRoot::from_environment_or_defaults(&self.scope.base)
            .into_iter()
            .filter(|root| !is_install_folder(&root.path))
            .collect();
        let catalog = match SkillCatalog::load(&CatalogOptions {
            roots,
            ..CatalogOptions::default()
        }) {
            Ok(catalog) => catalog,
            Err(error) => {
                tracing::warn!(%error, "the skill roots could not be read to look for skills of the same name");
                return None;
            }
        };
        catalog
            .skills()
            .iter()
            .chain(catalog.shadowed())
            .filter(|skill| names.contains(&skill.name()))
            .find_map(|skill| {
                let real = fs_err::canonicalize(&skill.directory)
                    .unwrap_or_else(|_| skill.directory.clone());
                let here = install_folder
                    .as_ref()
                    .is_some_and(|folder| real.starts_with(folder));
                (!here && !installing.contains(&real)).then(|| (skill.name().to_owned(), real))
            })
    }

    fn existing_lock(&self) -> Result<SkillLock, InstallError> {
        crate::guard::check_project(&self.scope)?;
        SkillLock::load(&self.scope.lock)?.ok_or_else(|| InstallError::NotFound {
            message: format!(
                "`{}` does not exist; `skillbox add SOURCE` installs a skill and writes it",
                self.scope.lock.display()
            ),
        })
    }

    /// The names asked for, each in the lock; all of them when none are.
    fn named(&self, lock: &SkillLock, names: &[String]) -> Result<Vec<String>, InstallError> {
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

    /// Fetch a source (once per operation: later asks for the same source and reference get
    /// the same tree) into a staging folder.
    fn fetch_tree(
        &self,
        spec: &SourceSpec,
        wanted: &[String],
    ) -> Result<Rc<FetchedTree>, InstallError> {
        let key = format!(
            "{}\0{}\0{}",
            spec.text,
            spec.reference.as_deref().unwrap_or_default(),
            wanted.join(",")
        );
        if let Some(tree) = self.fetched.borrow().get(&key) {
            return Ok(Rc::clone(tree));
        }
        let tree = Rc::new(self.fetch_tree_now(spec, wanted)?);
        self.fetched.borrow_mut().insert(key, Rc::clone(&tree));
        Ok(tree)
    }

    fn fetch_tree_now(
        &self,
        spec: &SourceSpec,
        wanted: &[String],
    ) -> Result<FetchedTree, InstallError> {
        match &spec.location {
            Location::Path(path) => {
                let metadata = fs_err::metadata(path).map_err(|error| {
                    InstallError::fetch(&spec.text, format!("it cannot be read ({error})"))
                })?;
                if metadata.is_dir() {
                    return Ok(FetchedTree::plain(
                        path.clone(),
                        SourceKind::Path,
                        None,
                        None,
                    ));
                }
                let bytes = read_bounded(path, self.limits.max_download_bytes)?;
                let revision = crate::fetch::http::sha256_digest(&bytes);
                self.unpacked(
                    spec,
                    &bytes,
                    &path.to_string_lossy(),
                    SourceKind::Path,
                    revision,
                )
            }
            Location::Archive(url) => {
                let bytes = self.http()?.get_existing(
                    url,
                    self.limits.max_download_bytes,
                    &self.progress,
                )?;
                let revision = crate::fetch::http::sha256_digest(&bytes);
                self.unpacked(spec, &bytes, url, SourceKind::Archive, revision)
            }
            Location::Git(url) => self.fetch_git(spec, url),
            Location::WellKnown(url) => {
                let index = fetch_index(self.http()?, url, &self.progress)?.ok_or_else(|| {
                    InstallError::NotFound {
                        message: format!("there is no discovery index at `{url}`"),
                    }
                })?;
                self.fetch_from_index(spec, &index, wanted)
            }
            Location::Site(site) => {
                let index_url = format!(
                    "{}/{WELL_KNOWN_PATH}/index.json",
                    site.trim_end_matches('/')
                );
                match fetch_index(self.http()?, &index_url, &self.progress)? {
                    Some(index) => self.fetch_from_index(spec, &index, wanted),
                    None => self.fetch_git(spec, site),
                }
            }
        }
    }

    /// Fetch a source and find all its skills (only the `wanted` ones for an index, whose
    /// listing needs no download).
    fn fetch(&self, spec: &SourceSpec, wanted: &[String]) -> Result<Fetched, InstallError> {
        let tree = self.fetch_tree(spec, wanted)?;
        let skills = self.skills_in(&tree, spec, "")?;
        Ok(Fetched {
            skills,
            notes: tree.notes.clone(),
        })
    }

    /// The skills of a fetched tree below `relative` (a path inside the tree).
    fn skills_in(
        &self,
        tree: &Rc<FetchedTree>,
        spec: &SourceSpec,
        relative: &str,
    ) -> Result<Vec<Prepared>, InstallError> {
        let start = if relative.is_empty() {
            tree.root.clone()
        } else {
            tree.root.join(relative)
        };
        let mut found = find_skills_with(&start, &tree.root, &spec.text, tree.git.is_none())?;
        let mut prepared = Vec::with_capacity(found.len());
        for skill in found.drain(..) {
            let (spec, revision) = match &tree.index_skills {
                Some(index) => {
                    let Some((index_url, revision)) = index.get(&skill.name) else {
                        continue;
                    };
                    (
                        SourceSpec {
                            location: Location::WellKnown(index_url.clone()),
                            ..spec.clone()
                        },
                        revision.clone(),
                    )
                }
                None => (spec.clone(), tree.revision.clone()),
            };
            let mut skill = skill;
            skill.path_in_source = join_path(&tree.prefix, &skill.path_in_source);
            prepared.push(Prepared {
                found: skill,
                kind: tree.kind,
                spec,
                revision,
                staging_guard: tree.staging.clone(),
                outline_of: tree.git.as_ref().map(|_| Rc::clone(tree)),
                in_store: false,
            });
        }
        Ok(prepared)
    }

    /// A chosen skill with all its files: one found in a git source's outline gets its folder
    /// written whole (beside the outline) and validated; others are complete already.
    fn complete(&self, prepared: Prepared) -> Result<Prepared, InstallError> {
        let Some(tree) = prepared.outline_of.clone() else {
            return Ok(prepared);
        };
        let Some(git) = &tree.git else {
            return Ok(prepared);
        };
        // A tree the store holds already needs no copy: its digest is told from the
        // repository's objects, and the stored tree is validated as a fetched one is.
        let stored = folder_digest(
            &git.repository,
            &git.revision,
            &prepared.found.path_in_source,
            &self.limits,
        )
        .and_then(|digest| self.store().ok()?.existing(&digest));
        if let Some(stored) = stored {
            let base = stored
                .parent()
                .map_or_else(|| stored.clone(), Path::to_path_buf);
            let found = find_skills(&stored, &base, &prepared.spec.text)?;
            if let Some(found) = found
                .into_iter()
                .find(|found| found.name == prepared.found.name && found.folder == stored)
            {
                return Ok(Prepared {
                    found: FoundSkill {
                        path_in_source: prepared.found.path_in_source.clone(),
                        ..found
                    },
                    outline_of: None,
                    in_store: true,
                    ..prepared
                });
            }
        }
        let number = self
            .completed
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let base = tree.root.with_file_name(format!("whole-{number}"));
        let folder = base.join("skill");
        fs_err::create_dir_all(&folder)
            .map_err(|error| InstallError::io("create", &folder, error))?;
        write_folder(
            &git.repository,
            &git.revision,
            &prepared.found.path_in_source,
            &folder,
            &git.url,
            &self.limits,
        )?;
        let found = find_skills(&folder, &base, &prepared.spec.text)?;
        let Some(found) = found
            .into_iter()
            .find(|found| found.name == prepared.found.name && found.folder == folder)
        else {
            return Err(InstallError::NotFound {
                message: format!(
                    "`{}` at `{}` is not the skill `{}` its SKILL.md names",
                    prepared.spec.text, prepared.found.path_in_source, prepared.found.name
                ),
            });
        };
        Ok(Prepared {
            found: FoundSkill {
                path_in_source: prepared.found.path_in_source.clone(),
                ..found
            },
            outline_of: None,
            ..prepared
        })
    }

    fn fetch_git(&self, spec: &SourceSpec, url: &str) -> Result<FetchedTree, InstallError> {
        let staging = self.staging()?;
        let root = staging.path().join("tree");
        fs_err::create_dir(&root).map_err(|error| InstallError::io("create", &root, error))?;
        let source = GitSource {
            url,
            reference: spec.reference.as_deref(),
            subpath: &spec.subpath,
            outline: TreeOutline::SkillFilesOnly,
        };
        let fetched = fetch_tree(&source, staging.path(), &root, &self.limits, &self.progress)?;
        let notes = fetched
            .skipped_submodules
            .iter()
            .map(|path| {
                format!(
                    "`{}` in `{}` is a submodule; submodules are not installed",
                    join_path(&spec.subpath, path),
                    spec.text
                )
            })
            .collect();
        Ok(FetchedTree {
            root,
            prefix: spec.subpath.clone(),
            kind: SourceKind::Git,
            git: (fetched.outline == TreeOutline::SkillFilesOnly).then(|| FetchedRepository {
                url: url.to_owned(),
                repository: fetched.repository,
                revision: fetched.revision.clone(),
            }),
            revision: Some(fetched.revision),
            index_skills: None,
            notes,
            staging: Some(Arc::new(staging)),
        })
    }

    fn unpacked(
        &self,
        spec: &SourceSpec,
        bytes: &[u8],
        name: &str,
        kind: SourceKind,
        revision: String,
    ) -> Result<FetchedTree, InstallError> {
        let format = ArchiveFormat::detect(name, bytes).ok_or_else(|| {
            InstallError::refused(
                &spec.text,
                "it is neither a folder, a zip (.zip, .skill) nor a .tar.gz archive",
            )
        })?;
        let staging = self.staging()?;
        let root = staging.path().join("tree");
        fs_err::create_dir(&root).map_err(|error| InstallError::io("create", &root, error))?;
        unpack(bytes, format, &root, &spec.text, &self.limits)?;
        Ok(FetchedTree::plain(
            root,
            kind,
            Some(revision),
            Some(staging),
        ))
    }

    fn fetch_from_index(
        &self,
        spec: &SourceSpec,
        index: &crate::fetch::well_known::Index,
        wanted: &[String],
    ) -> Result<FetchedTree, InstallError> {
        let listed: Vec<&crate::fetch::well_known::IndexSkill> = if wanted.is_empty() {
            index.skills.iter().collect()
        } else {
            for name in wanted {
                if !index.skills.iter().any(|skill| skill.name == *name) {
                    return Err(not_in_source(
                        name,
                        &spec.text,
                        index
                            .skills
                            .iter()
                            .map(|skill| (skill.name.as_str(), skill.description.as_str())),
                    ));
                }
            }
            index
                .skills
                .iter()
                .filter(|skill| wanted.contains(&skill.name))
                .collect()
        };
        if listed.is_empty() {
            return Err(InstallError::NotFound {
                message: format!("the index `{}` lists no skills", index.url),
            });
        }
        let staging = self.staging()?;
        let mut skills = BTreeMap::new();
        for skill in listed {
            let revision = fetch_skill(
                self.http()?,
                index,
                skill,
                staging.path(),
                &self.limits,
                &self.progress,
            )?;
            let folder = staging.path().join(&skill.name);
            let found = find_skills(&folder, staging.path(), &spec.text)?;
            if found.len() != 1 || found[0].name != skill.name {
                return Err(InstallError::refused(
                    index.url.as_str(),
                    format!(
                        "the artifact of `{}` holds {} skill(s), not the one skill it names",
                        skill.name,
                        found.len()
                    ),
                ));
            }
            skills.insert(skill.name.clone(), (index.url.to_string(), revision));
        }
        Ok(FetchedTree {
            root: staging.path().to_path_buf(),
            prefix: String::new(),
            kind: SourceKind::WellKnown,
            revision: None,
            index_skills: Some(skills),
            git: None,
            notes: Vec::new(),
            staging: Some(Arc::new(staging)),
        })
    }

    /// Fetch `spec` and return its skill at `path` (as the lock or manifest names it), which
    /// must be called `name`. Only that folder of the source is looked at, so another skill
    /// of the same source that does not validate is no obstacle.
    fn fetch_one(
        &self,
        spec: &SourceSpec,
        path: &str,
        name: &str,
    ) -> Result<Prepared, InstallError> {
        crate::guard::check_source_path(path).map_err(|message| InstallError::BadSource {
            source_text: spec.text.clone(),
            message,
        })?;
        let wanted = vec![name.to_owned()];
        let wanted = if matches!(spec.location, Location::WellKnown(_) | Location::Site(_)) {
            wanted.as_slice()
        } else {
            &[]
        };
        let tree = self.fetch_tree(spec, wanted)?;
        let relative = if tree.index_skills.is_some() {
            name.to_owned()
        } else if path.is_empty() {
            String::new()
        } else if tree.prefix.is_empty() {
            path.to_owned()
        } else {
            path.strip_prefix(&format!("{}/", tree.prefix))
                .map(str::to_owned)
                .or_else(|| (path == tree.prefix).then(String::new))
                .unwrap_or_else(|| path.to_owned())
        };
        let missing = || InstallError::NotFound {
            message: format!(
                "`{}` no longer holds skill `{name}`{}",
                spec.text,
                if path.is_empty() {
                    String::new()
                } else {
                    format!(" at `{path}`")
                }
            ),
        };
        if !relative.is_empty() && !tree.root.join(&relative).is_dir() {
            return Err(missing());
        }
        let mut matching: Vec<Prepared> = self
            .skills_in(&tree, spec, &relative)?
            .into_iter()
            .filter(|prepared| prepared.found.name == name)
            .collect();
        self.complete(matching.pop().ok_or_else(missing)?)
    }

    /// Put a prepared skill's folder in the store: moved in when it is in a staging folder of
    /// ours (fetched), copied (and hashed as copied) when it is the user's; its inventory
    /// and stored tree.
    fn store_folder(
        &self,
        prepared: &Prepared,
    ) -> Result<(FolderInventory, PathBuf), InstallError> {
        // Links are checked before anything is stored: the store holds no tree a lock could
        // name later that an install would refuse now.
        crate::discover::check_folder_links(
            &prepared.found.folder,
            &prepared.found.name,
            &prepared.spec.text,
        )?;
        let store = self.store()?;
        if prepared.in_store {
            let inventory = folder_inventory_at(&prepared.found.folder).map_err(|error| {
                InstallError::refused(prepared.spec.text.clone(), error.to_string())
            })?;
            return Ok((inventory, prepared.found.folder.clone()));
        }
        if prepared.staging_guard.is_some() {
            return Ok(store.adopt_folder(&prepared.found.folder)?);
        }
        let (digest, tree) = store.insert_folder(&prepared.found.folder)?;
        let inventory = folder_inventory_at(&tree).map_err(|error| {
            InstallError::refused(prepared.spec.text.clone(), error.to_string())
        })?;
        if inventory.digest != digest {
            return Err(InstallError::refused(
                prepared.spec.text.clone(),
                format!(
                    "the stored tree digests to `{}`, not `{digest}`",
                    inventory.digest
                ),
            ));
        }
        Ok((inventory, tree))
    }

    /// Store a prepared skill's tree; its lock entry and stored tree.
    fn store_prepared(
        &self,
        prepared: &Prepared,
        entry: &ManifestEntry,
    ) -> Result<(LockedSkill, PathBuf), InstallError> {
        let (inventory, tree) = self.store_folder(prepared)?;
        let digest = inventory.digest.clone();
        self.check_skill_limits(&prepared.found.name, &prepared.spec.text, &inventory)?;
        crate::discover::check_links(&inventory, &prepared.found.name, &prepared.spec.text)?;
        let locked = LockedSkill {
            source: entry.source.clone(),
            kind: prepared.kind,
            path: prepared.found.path_in_source.clone(),
            reference: entry.reference.clone(),
            revision: prepared.revision.clone(),
            digest,
            files: inventory
                .files
                .iter()
                .map(|(path, file)| (path.clone(), LockedFile::from(file)))
                .collect(),
            links: inventory.links.clone(),
            requires: prepared.found.requires.clone(),
            agents: entry.agents.clone(),
            copies: entry.copy,
        };
        Ok((locked, tree))
    }

    fn check_skill_limits(
        &self,
        name: &str,
        source_text: &str,
        inventory: &FolderInventory,
    ) -> Result<(), InstallError> {
        let bytes: u64 = inventory.files.values().map(|file| file.size).sum();
        let files = inventory.files.len() + inventory.links.len();
        if files > self.limits.max_files_per_skill || bytes > self.limits.max_bytes_per_skill {
            return Err(InstallError::refused(
                source_text,
                format!(
                    "skill `{name}` holds {files} files and {bytes} bytes; the limits are {} files and {} bytes per skill (raise them with `--max-files` and `--max-bytes`)",
                    self.limits.max_files_per_skill, self.limits.max_bytes_per_skill
                ),
            ));
        }
        Ok(())
    }

    /// Make the install folder of `name` hold the locked files: unchanged when it already
    /// does, else from the store, else fetched again at the locked revision.
    fn restore(
        &self,
        name: &str,
        locked: &LockedSkill,
        notes: &mut Vec<String>,
    ) -> Result<(Action, PathBuf), InstallError> {
        let folder = self.scope.install_folder.join(name);
        // Files already in place are kept only when they are known: recorded as installed here
        // with this digest, or in the store (fetched from a source before). Files a repository
        // (or anyone who can write the project) put there, with a lock edited to match, are
        // not: the locked source is fetched, and must hold them.
        let in_place = !crate::guard::is_link(&folder)
            && folder_inventory_at(&folder).is_ok_and(|found| found.digest == locked.digest)
            && (self.recorded_as(&folder, &locked.digest)
                || self.store()?.existing(&locked.digest).is_some());
        if in_place {
            crate::discover::check_folder_links(&folder, name, &locked.source)?;
            self.show_in_agents(name, locked, notes)?;
            self.record_trust(&folder, locked)?;
            return Ok((Action::Unchanged, folder));
        }
        let store = self.store()?;
        let tree = match store.existing(&locked.digest) {
            Some(tree) => {
                crate::discover::check_folder_links(&tree, name, &locked.source)?;
                tree
            }
            None => {
                let spec = SourceSpec::parse(&locked.source, &self.scope.base)?.with_reference(
                    locked
                        .revision
                        .clone()
                        .filter(|_| locked.kind == SourceKind::Git)
                        .or_else(|| locked.reference.clone()),
                );
                let prepared = self.fetch_one(&spec, &locked.path, name)?;
                let (inventory, tree) = self.store_folder(&prepared)?;
                let digest = inventory.digest;
                if digest != locked.digest {
                    // A folder of this machine's digest is never printed: a lock that named
                    // the user's own skill could read it back from the message.
                    let now = if locked.kind == SourceKind::Path {
                        "holds other files".to_owned()
                    } else {
                        format!("now digests to `{digest}`")
                    };
                    return Err(InstallError::refused(
                        locked.source.clone(),
                        format!(
                            "skill `{name}` {now}, not the locked `{}`; the source changed since it was locked (`skillbox update {name}` takes the new files)",
                            locked.digest
                        ),
                    ));
                }
                tree
            }
        };
        let folder = self.place(name, locked, &tree, notes)?;
        Ok((Action::Restored, folder))
    }

    /// Put a stored tree in the install folder as `name`, show it in the agents' folders and
    /// record its trust.
    fn place(
        &self,
        name: &str,
        locked: &LockedSkill,
        tree: &Path,
        notes: &mut Vec<String>,
    ) -> Result<PathBuf, InstallError> {
        let folder = self.scope.install_folder.join(name);
        let (parent, install) = self.install_handles()?;
        let source = FolderHandle::open_path(tree)?;
        materialize(&source, &install, OsStr::new(name), &parent)?;
        self.show_in_agents(name, locked, notes)?;
        self.record_trust(&folder, locked)?;
        Ok(folder)
    }

    fn relative_link(&self, agent_folder: &Path, name: &str) -> PathBuf {
        relative_path(agent_folder, &self.scope.install_folder.join(name))
    }

    fn show_in_agents(
        &self,
        name: &str,
        locked: &LockedSkill,
        notes: &mut Vec<String>,
    ) -> Result<(), InstallError> {
        let entry = OsStr::new(name);
        for agent_name in &locked.agents {
            let agent = agent(agent_name)?;
            let Some(agent_folder) = agent_folder(agent, &self.scope) else {
                notes.push(format!(
                    "{agent_name} reads `{}` already",
                    self.scope.install_folder.display()
                ));
                continue;
            };
            crate::guard::check_agent_folder(&self.scope, &agent_folder)?;
            let shown = agent_folder.join(name);
            let agents = FolderHandle::open_in(&self.scope, &agent_folder)?;
            let target = self.relative_link(&agent_folder, name);
            match agents.kind(entry) {
                Some(FileType::Symlink) => {
                    let current = agents.read_link(entry);
                    if !locked.copies && current.as_deref() == Some(target.as_path()) {
                        continue;
                    }
                    if current.as_deref() != Some(target.as_path()) {
                        return Err(conflict(&shown, agent_name));
                    }
                    agents.remove_file(entry)?;
                }
                Some(_) => {
                    if !self.is_our_copy(&shown) {
                        return Err(conflict(&shown, agent_name));
                    }
                    if !locked.copies {
                        agents.remove_tree(entry)?;
                    }
                }
                None => {}
            }
            if locked.copies {
                let (_, install) = self.install_handles()?;
                let source = install.child(entry, false)?;
                materialize(&source, &agents, entry, &agents)?;
                self.record_trust(&shown, locked)?;
            } else {
                agents.symlink(&target, entry)?;
            }
        }
        Ok(())
    }

    /// Refuse unknown agents, and agents' folders in the project that are links (before
    /// anything is written).
    fn check_agent_folders(&self, agents: &[String]) -> Result<(), InstallError> {
        for name in agents {
            if let Some(folder) = agent_folder(agent(name)?, &self.scope) {
                crate::guard::check_agent_folder(&self.scope, &folder)?;
            }
        }
        Ok(())
    }

    /// Whether the trust file records `folder` as installed by this scope's lock with `digest`.
    fn recorded_as(&self, folder: &Path, digest: &str) -> bool {
        let Some(trust_file) = &self.trust_file else {
            return false;
        };
        let (Some(store), Ok(canonical)) = (
            self.trust_snapshot(trust_file),
            fs_err::canonicalize(folder),
        ) else {
            return false;
        };
        store
            .installed(&canonical)
            .is_some_and(|record| record.lock == self.scope.lock && record.digest == digest)
    }

    /// Refuse to replace the folder `name` of the install folder when this scope's lock did
    /// not install it (a skill the user wrote, a folder the repository ships), unless it holds
    /// exactly the files to install already.
    fn check_free(
        &self,
        name: &str,
        locked: &LockedSkill,
        was_locked: bool,
    ) -> Result<(), InstallError> {
        let folder = self.scope.install_folder.join(name);
        if was_locked || fs_err::symlink_metadata(&folder).is_err() {
            return Ok(());
        }
        // Ours: installed here and unchanged since (a record alone may be left from a project
        // deleted before), or already the very files to install.
        let ours = !crate::guard::is_link(&folder)
            && folder_inventory_at(&folder).is_ok_and(|found| {
                found.digest == locked.digest || self.recorded_as(&folder, &found.digest)
            });
        if ours {
            return Ok(());
        }
        Err(InstallError::refused(
            folder.display().to_string(),
            format!(
                "it exists and was not installed by `{}`, so skill `{name}` does not replace it; move it away first",
                self.scope.lock.display()
            ),
        ))
    }

    /// The trust file as it was when this operation first read it (records written by this
    /// operation go in at its end, [`Installer::flush_trust`]); `None` when it cannot be read.
    fn trust_snapshot(&self, trust_file: &Path) -> Option<&TrustStore> {
        self.trust_snapshot
            .get_or_init(|| TrustStore::load(trust_file).ok())
            .as_ref()
    }

    /// Whether a folder is a copy this scope's lock installed (recorded in the trust file).
    fn is_our_copy(&self, folder: &Path) -> bool {
        let Some(trust_file) = &self.trust_file else {
            return false;
        };
        let (Some(store), Ok(canonical)) = (
            self.trust_snapshot(trust_file),
            fs_err::canonicalize(folder),
        ) else {
            return false;
        };
        store
            .installed(&canonical)
            .is_some_and(|record| record.lock == self.scope.lock)
    }

    /// Note that `folder` now holds the files of `locked`: recorded in the trust file by
    /// [`Installer::flush_trust`], once per operation.
    fn record_trust(&self, folder: &Path, locked: &LockedSkill) -> Result<(), InstallError> {
        if self.trust_file.is_some()
            && let Ok(mut pending) = self.pending_trust.lock()
        {
            pending.push((folder.to_path_buf(), locked.digest.clone()));
        }
        Ok(())
    }

    /// Write the trust records noted during this operation in one update of the trust file,
    /// dropping records of installed folders that no longer exist.
    fn flush_trust(&self) -> Result<(), InstallError> {
        let Some(trust_file) = &self.trust_file else {
            return Ok(());
        };
        let pending = match self.pending_trust.lock() {
            Ok(mut pending) => std::mem::take(&mut *pending),
            Err(_) => return Ok(()),
        };
        let sources = match self.pending_sources.lock() {
            Ok(mut sources) => std::mem::take(&mut *sources),
            Err(_) => Vec::new(),
        };
        if pending.is_empty() && sources.is_empty() {
            return Ok(());
        }
        let lock =
            std::path::absolute(&self.scope.lock).unwrap_or_else(|_| self.scope.lock.clone());
        TrustStore::update(trust_file, |store| {
            store.forget_missing_installed();
            for (folder, digest) in &pending {
                store.record_installed(folder, digest, &lock)?;
            }
            for source in &sources {
                store.confirm_local_source(&lock, source)?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Remove folders this lock installed earlier that it no longer holds.
    fn remove_unlocked(&self, lock: &SkillLock, report: &mut Report) -> Result<(), InstallError> {
        let Some(trust_file) = &self.trust_file else {
            return Ok(());
        };
        let Ok(store) = TrustStore::load(trust_file) else {
            return Ok(());
        };
        let lock_path =
            std::path::absolute(&self.scope.lock).unwrap_or_else(|_| self.scope.lock.clone());
        let install_folder = fs_err::canonicalize(&self.scope.install_folder).ok();
        let stale: Vec<(PathBuf, String)> = store
            .installed_skills()
            .filter(|(_, record)| record.lock == lock_path)
            .filter_map(|(folder, record)| {
                let name = folder.file_name()?.to_string_lossy().into_owned();
                let in_install_folder = install_folder.as_deref() == folder.parent();
                (in_install_folder && !lock.skills.contains_key(&name))
                    .then(|| (folder.to_path_buf(), record.digest.clone()))
            })
            .collect();
        for (folder, digest) in stale {
            // Only the files installed are removed: a folder changed since (the user's edits,
            // another folder put there) is left in place, and no longer recorded.
            let as_installed = !crate::guard::is_link(&folder)
                && folder_inventory_at(&folder).is_ok_and(|found| found.digest == digest);
            if folder.exists() && !as_installed {
                TrustStore::update(trust_file, |store| Ok(store.forget_installed(&folder)))?;
                report.notes.push(format!(
                    "`{}` is no longer locked, but its files changed since they were installed, so it is left in place; delete it if it is not wanted",
                    folder.display()
                ));
                continue;
            }
            if let Some(name) = folder.file_name() {
                let (_, install) = self.install_handles()?;
                install.remove_tree(name)?;
            }
            TrustStore::update(trust_file, |store| Ok(store.forget_installed(&folder)))?;
            report.skills.push(SkillOutcome {
                name: folder
                    .file_name()
                    .map(|name| name.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                action: Action::Removed,
                folder,
                source: String::new(),
                revision: None,
                digest,
                previous_digest: None,
                changes: Vec::new(),
            });
        }
        Ok(())
    }

    fn remove_placed(&self, name: &str, locked: &LockedSkill) -> Result<(), InstallError> {
        let folder = self.scope.install_folder.join(name);
        let entry = OsStr::new(name);
        let mut forget = Vec::new();
        for agent_name in &locked.agents {
            let Ok(agent) = agent(agent_name) else {
                continue;
            };
            let Some(agent_folder) = agent_folder(agent, &self.scope) else {
                continue;
            };
            let Ok(Some(agents)) = FolderHandle::open_existing_in(&self.scope, &agent_folder)
            else {
                continue;
            };
            let shown = agent_folder.join(name);
            match agents.kind(entry) {
                Some(FileType::Symlink)
                    if agents.read_link(entry).as_deref()
                        == Some(self.relative_link(&agent_folder, name).as_path()) =>
                {
                    agents.remove_file(entry)?;
                }
                Some(FileType::Directory) if self.is_our_copy(&shown) => {
                    if let Ok(canonical) = fs_err::canonicalize(&shown) {
                        forget.push(canonical);
                    }
                    agents.remove_tree(entry)?;
                }
                _ => {}
            }
        }
        if let Ok(canonical) = fs_err::canonicalize(&folder) {
            forget.push(canonical);
        }
        if let Some(install) =
            FolderHandle::open_existing_in(&self.scope, &self.scope.install_folder)?
        {
            install.remove_tree(entry)?;
        }
        if let Some(trust_file) = &self.trust_file {
            TrustStore::update(trust_file, |store| {
                for folder in &forget {
                    store.forget_installed(folder);
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}

fn conflict(path: &Path, agent: &str) -> InstallError {
    InstallError::refused(
        path.display().to_string(),
        format!(
            "it exists and was not installed by skillbox, so `--agent {agent}` leaves it alone; move it away first"
        ),
    )
}

/// At most this many skills are listed when a source holds more to choose from.
const MAX_LISTED_SKILLS: usize = 50;

/// The refusal listing the skills of a source that holds several, none of them chosen.
fn choose_listing<'a>(
    source_text: &str,
    skills: impl ExactSizeIterator<Item = (&'a str, &'a str)>,
) -> InstallError {
    let count = skills.len();
    let mut listing: Vec<String> = skills
        .take(MAX_LISTED_SKILLS)
        .map(|(name, description)| format!("  {name}  {}", first_line(description)))
        .collect();
    if count > MAX_LISTED_SKILLS {
        listing.push(format!("  and {} more", count - MAX_LISTED_SKILLS));
    }
    InstallError::Usage {
        message: format!(
            "`{source_text}` holds {count} skills; choose with `--skill NAME` (repeatable) or take them all with `--all`:\n{}",
            listing.join("\n")
        ),
    }
}

/// Choose the skills to install from those a source holds.
/// The skills chosen from a source, and the rest of it (where required skills are found).
fn choose(
    skills: Vec<Prepared>,
    wanted: &[String],
    all: bool,
    source_text: &str,
) -> Result<(Vec<Prepared>, Vec<Prepared>), InstallError> {
    if !wanted.is_empty() {
        for name in wanted {
            if !skills.iter().any(|prepared| prepared.found.name == *name) {
                return Err(not_in_source(
                    name,
                    source_text,
                    skills.iter().map(|prepared| {
                        (
                            prepared.found.name.as_str(),
                            prepared.found.description.as_str(),
                        )
                    }),
                ));
            }
        }
        return Ok(skills
            .into_iter()
            .partition(|prepared| wanted.contains(&prepared.found.name)));
    }
    if skills.len() == 1 || all {
        return Ok((skills, Vec::new()));
    }
    Err(choose_listing(
        source_text,
        skills.iter().map(|prepared| {
            (
                prepared.found.name.as_str(),
                prepared.found.description.as_str(),
            )
        }),
    ))
}

/// `chosen` and the skills they require (`requires`, transitively): each found among the
/// chosen, taken from the `rest` of the source (said in `notes`), or installed already (in
/// `lock`).
///
/// # Errors
/// [`InstallError::NotFound`] for a required skill none of those holds, naming who needs it;
/// [`InstallError::Refused`] for skills that require each other in a cycle.
fn with_requirements(
    mut chosen: Vec<Prepared>,
    mut rest: Vec<Prepared>,
    lock: &SkillLock,
    source_text: &str,
    notes: &mut Vec<String>,
    required_by: &mut BTreeMap<String, String>,
) -> Result<Vec<Prepared>, InstallError> {
    let mut next = 0;
    while next < chosen.len() {
        let needer = chosen[next].found.name.clone();
        let requires = chosen[next].found.requires.clone();
        next += 1;
        for name in requires {
            if chosen.iter().any(|prepared| prepared.found.name == name) {
                continue;
            }
            if let Some(position) = rest.iter().position(|prepared| prepared.found.name == name) {
                notes.push(format!("also adding `{name}`, which `{needer}` requires"));
                required_by.insert(name.clone(), needer.clone());
                chosen.push(rest.swap_remove(position));
                continue;
            }
            if lock.skills.contains_key(&name) {
                continue;
            }
            return Err(InstallError::NotFound {
                message: format!(
                    "`{needer}` requires the skill `{name}`, which `{source_text}` does not hold and which is not installed; add `{name}` first (`skillbox add SOURCE --skill {name}`), then `{needer}`"
                ),
            });
        }
    }
    let graph: BTreeMap<String, Vec<String>> = lock
        .skills
        .iter()
        .map(|(name, locked)| (name.clone(), locked.requires.clone()))
        .chain(
            chosen
                .iter()
                .map(|prepared| (prepared.found.name.clone(), prepared.found.requires.clone())),
        )
        .collect();
    for prepared in &chosen {
        if let Some(cycle) = requirement_cycle(&graph, &prepared.found.name) {
            return Err(InstallError::refused(
                source_text,
                format!(
                    "its skills require each other in a cycle ({}); a skill cannot need itself: remove one `requires` entry",
                    cycle.join(" -> ")
                ),
            ));
        }
    }
    Ok(chosen)
}

/// A path of `requires` from `start` back to itself, if there is one.
fn requirement_cycle(graph: &BTreeMap<String, Vec<String>>, start: &str) -> Option<Vec<String>> {
    let mut path = vec![start.to_owned()];
    let mut seen = BTreeSet::new();
    fn walk(
        graph: &BTreeMap<String, Vec<String>>,
        start: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        let current = path.last().cloned().unwrap_or_default();
        for next in graph.get(&current).into_iter().flatten() {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    walk(graph, start, &mut path, &mut seen).then_some(path)
}

fn not_in_source<'a>(
    name: &str,
    source_text: &str,
    available: impl Iterator<Item = (&'a str, &'a str)>,
) -> InstallError {
    let mut names: Vec<&str> = available.map(|(name, _)| name).collect();
    let count = names.len();
    names.truncate(MAX_LISTED_SKILLS);
    let more = if count > MAX_LISTED_SKILLS {
        format!(" and {} more", count - MAX_LISTED_SKILLS)
    } else {
        String::new()
    };
    InstallError::NotFound {
        message: format!(
            "`{source_text}` has no skill `{name}`; it holds: {}{more}",
            names.join(", ")
        ),
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > 80 {
        let short: String = line.chars().take(77).collect();
        format!("{short}...")
    } else {
        line.to_owned()
    }
}

/// The manifest's `path` of a prepared skill: its folder inside the source, beyond the
/// sub-path the SOURCE text already names.
fn manifest_path(prepared: &Prepared) -> String {
    if prepared.kind == SourceKind::WellKnown {
        return String::new();
    }
    let subpath = &prepared.spec.subpath;
    let path = &prepared.found.path_in_source;
    if path == subpath {
        String::new()
    } else {
        path.clone()
    }
}

/// Whether a lock entry was made from this manifest entry.
fn agrees(entry: &ManifestEntry, locked: &LockedSkill) -> bool {
    entry.source == locked.source
        && entry.reference == locked.reference
        && (entry.path.is_empty() || entry.path == locked.path)
}

/// How the manifest and the lock disagree, one line per skill.
fn differences(manifest: &Manifest, lock: &SkillLock) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, entry) in manifest.entries() {
        match lock.skills.get(name) {
            None => lines.push(format!("`{name}` is wanted but not locked")),
            Some(locked) if !agrees(entry, locked) => {
                lines.push(format!(
                    "`{name}` is wanted from `{}` but locked from `{}`",
                    entry.source, locked.source
                ));
            }
            Some(_) => {}
        }
    }
    for name in lock.skills.keys() {
        if !manifest.entries().contains_key(name) {
            lines.push(format!("`{name}` is locked but no longer wanted"));
        }
    }
    lines
}

fn entry_from_lock(locked: &LockedSkill) -> ManifestEntry {
    ManifestEntry {
        source: locked.source.clone(),
        path: locked.path.clone(),
        reference: locked.reference.clone(),
        agents: locked.agents.clone(),
        copy: locked.copies,
    }
}

fn outcome(
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

fn join_path(base: &str, relative: &str) -> String {
    match (base.is_empty(), relative.is_empty()) {
        (true, _) => relative.to_owned(),
        (_, true) => base.to_owned(),
        _ => format!("{base}/{relative}"),
    }
}

fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, InstallError> {
    let file = skillbox_core::source::open_regular_file(path)
        .map_err(|error| InstallError::fetch(path.display().to_string(), error))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, limit + 1), &mut bytes)
        .map_err(|error| InstallError::io("read", path, error))?;
    if bytes.len() as u64 > limit {
        return Err(InstallError::refused(
            path.display().to_string(),
            format!("it is larger than {limit} bytes"),
        ));
    }
    Ok(bytes)
}

/// `to` relative to the folder `from` (both absolute).
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<_> = from.components().collect();
    let to_parts: Vec<_> = to.components().collect();
    let common = from
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for part in &to_parts[common..] {
        path.push(part.as_os_str());
    }
    path
}

/// Copy the folder `source` into `into` as `name` (replacing what is there) through a folder
/// built in a staging folder of `staging_in` and renamed into place whole; every write and
/// rename is made through the folders' handles ([`FolderHandle`]).
fn materialize(
    source: &FolderHandle,
    into: &FolderHandle,
    name: &OsStr,
    staging_in: &FolderHandle,
) -> Result<(), InstallError> {
    let staging = staging_in.staging(STAGING_PREFIX)?;
    let built = OsStr::new("skill");
    copy_folder(source, staging.folder(), built)?;
    if into.kind(name).is_some() {
        into.rename(name, staging.folder(), OsStr::new("old"))?;
    }
    staging.folder().rename(built, into, name)?;
    // Dropping the staging folder removes it, with the old folder.
    drop(staging);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_links_climb_to_the_install_folder() {
        assert_eq!(
            relative_path(
                Path::new("/p/.claude/skills"),
                Path::new("/p/.agents/skills/pdf")
            ),
            PathBuf::from("../../.agents/skills/pdf")
        );
    }
}
