//! Installing a skill's package servers ahead (issue 37, `docs/design/package-servers.md`):
//! the npm or PyPI package a declaration's `npx`/`uvx` line names, resolved to exact versions
//! with the integrity of every package fetched, installed with the registry's own tool
//! (`npm` with install scripts off; `pip` with wheels only and hashes required) into a private
//! staging folder, then moved into the store under its tree digest. What is recorded
//! ([`LockedServer`]) is enough to install exactly the same tree again (`install --frozen`),
//! which must digest the same or nothing is used.
//!
//! The registry tools run as the user, outside the sandbox, but run no package code: npm's
//! install scripts are off, pip installs wheels only (an sdist would run its build). The user's
//! own registry settings (`~/.npmrc`, `pip.conf`, `npm_config_registry`, `PIP_INDEX_URL`) are
//! honoured; a project's are not read (the tools run in the staging folder).

mod npm;
mod pypi;
mod tool_run;

use std::path::{Path, PathBuf};
use std::time::Duration;

use skillbox_core::package_server::{PackageRegistry, PackageServer};
use skillbox_trust::package_servers::{LockedServer, ServerEntry};
use skillbox_trust::store::SkillStore;

pub(crate) use tool_run::find_on_path;

/// How long one registry tool may run (a resolve, an install).
pub const PACKAGE_TOOL_TIMEOUT: Duration = Duration::from_secs(600);
/// Packages one server's tree may hold.
pub const MAX_PACKAGES_PER_SERVER: usize = 2_000;

/// Why a package server could not be installed.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct PackageError {
    /// What failed, naming the package, the tool and what it said.
    pub message: String,
}

impl PackageError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        PackageError {
            message: message.into(),
        }
    }
}

/// The registry tools an install runs, found on `PATH`.
#[derive(Debug, Clone, Default)]
pub struct PackageTools {
    /// `npm` (for npm packages).
    pub npm: Option<PathBuf>,
    /// `python3` (for PyPI packages, through its `pip`): the interpreter servers run with.
    pub python: Option<PathBuf>,
}

impl PackageTools {
    /// `npm` and `python3` as `PATH` finds them (`SKILLBOX_NPM` and `SKILLBOX_PYTHON` name
    /// others).
    #[must_use]
    pub fn from_path() -> PackageTools {
        let named = |variable: &str, program: &str| {
            std::env::var_os(variable)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
                .or_else(|| find_on_path(program))
        };
        PackageTools {
            npm: named("SKILLBOX_NPM", "npm"),
            python: named("SKILLBOX_PYTHON", "python3"),
        }
    }

    fn tool(&self, registry: PackageRegistry) -> Result<&Path, PackageError> {
        let (found, name) = match registry {
            PackageRegistry::Npm => (&self.npm, "npm"),
            PackageRegistry::Pypi => (&self.python, "python3"),
        };
        found.as_deref().ok_or_else(|| {
            PackageError::new(format!(
                "`{name}` is not on PATH; install it to install {registry} package servers"
            ))
        })
    }
}

/// Resolve `server` (the newest version its declaration allows), install it into the store
/// and say what was installed. `declaration` is the declaration's fingerprint.
///
/// # Errors
/// The registry tool's failure (with what it said), a package without integrity, a program
/// the package does not have, a tree past the store's limits.
pub fn provision(
    tools: &PackageTools,
    store: &SkillStore,
    staging_parent: &Path,
    server: &PackageServer,
    declaration: String,
) -> Result<LockedServer, PackageError> {
    let tool = tools.tool(server.registry)?;
    let staging = staging(staging_parent)?;
    let tree = staging.path().join("tree");
    let installed = match server.registry {
        PackageRegistry::Npm => npm::resolve_and_install(tool, &tree, server)?,
        PackageRegistry::Pypi => pypi::resolve_and_install(tool, &tree, server)?,
    };
    let (digest, _) = adopt(store, &tree)?;
    Ok(LockedServer {
        registry: server.registry.as_str().to_owned(),
        package: server.package.clone(),
        requested: server.requested.clone(),
        version: installed.version,
        digest,
        entry: installed.entry,
        declaration,
        packages: installed.packages,
        npm_lock: installed.npm_lock,
    })
}

/// The stored tree of a locked server: the store's when it holds it (no network), else
/// installed again exactly as locked, which must digest as locked (else nothing is stored).
///
/// # Errors
/// A lock that cannot be installed again (fetched bytes not matching an integrity, another
/// version, another tree), or the tool's failure.
pub fn restore(
    tools: &PackageTools,
    store: &SkillStore,
    staging_parent: &Path,
    locked: &LockedServer,
) -> Result<PathBuf, PackageError> {
    if let Some(tree) = store.existing(&locked.digest) {
        return Ok(tree);
    }
    let registry = match locked.registry.as_str() {
        "npm" => PackageRegistry::Npm,
        "pypi" => PackageRegistry::Pypi,
        other => {
            return Err(PackageError::new(format!(
                "registry `{other}` is not known"
            )));
        }
    };
    let tool = tools.tool(registry)?;
    let staging = staging(staging_parent)?;
    let tree = staging.path().join("tree");
    match registry {
        PackageRegistry::Npm => npm::install_locked(tool, &tree, locked)?,
        PackageRegistry::Pypi => pypi::install_locked(tool, &tree, locked)?,
    }
    let found = skillbox_trust::digest::folder_inventory_at(&tree)
        .map_err(|error| PackageError::new(format!("the installed tree: {error}")))?;
    if found.digest != locked.digest {
        return Err(PackageError::new(format!(
            "{} {}@{} installed again digests to `{}`, not the locked `{}`; nothing was stored (`skillbox update` installs it anew)",
            locked.registry, locked.package, locked.version, found.digest, locked.digest
        )));
    }
    Ok(adopt(store, &tree)?.1)
}

/// The newest version of a locked server's package that its declaration allows (what
/// `update` would install), asked of the registry.
///
/// # Errors
/// The registry tool's failure.
pub fn newest_version(
    tools: &PackageTools,
    staging_parent: &Path,
    locked: &LockedServer,
) -> Result<String, PackageError> {
    let staging = staging(staging_parent)?;
    match locked.registry.as_str() {
        "npm" => npm::newest_version(
            tools.tool(PackageRegistry::Npm)?,
            staging.path(),
            &locked.package,
            locked.requested.as_deref(),
        ),
        "pypi" => pypi::newest_version(
            tools.tool(PackageRegistry::Pypi)?,
            staging.path(),
            &format!(
                "{}{}",
                locked.package,
                locked.requested.as_deref().unwrap_or("")
            ),
        ),
        other => Err(PackageError::new(format!(
            "registry `{other}` is not known"
        ))),
    }
}

/// What one registry's installer put in a tree.
pub(crate) struct Installed {
    pub version: String,
    pub entry: ServerEntry,
    pub packages: Vec<skillbox_trust::package_servers::LockedPackage>,
    pub npm_lock: Option<serde_json::Value>,
}

/// A private folder for one install beside the store (the same file system, so the tree is
/// moved in, not copied).
fn staging(parent: &Path) -> Result<tempfile::TempDir, PackageError> {
    fs_err::create_dir_all(parent)
        .map_err(|error| PackageError::new(format!("cannot create the staging folder: {error}")))?;
    tempfile::Builder::new()
        .prefix(".package-server-")
        .tempdir_in(parent)
        .map_err(|error| {
            PackageError::new(format!(
                "cannot create a staging folder in `{}`: {error}",
                parent.display()
            ))
        })
}

fn adopt(store: &SkillStore, tree: &Path) -> Result<(String, PathBuf), PackageError> {
    let (inventory, path) = store
        .adopt_folder(tree)
        .map_err(|error| PackageError::new(format!("cannot store the package tree: {error}")))?;
    save_listing(&path, &inventory);
    Ok((inventory.digest, path))
}

/// The file listing of a stored package tree (beside the store's trees): what `verify`
/// compares a tree with to name the file that changed.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TreeListing {
    /// Regular files by path.
    pub files: std::collections::BTreeMap<String, skillbox_trust::lockfile::LockedFile>,
    /// Links by path, with their targets.
    pub links: std::collections::BTreeMap<String, String>,
}

/// Where the listing of the tree at `tree` (`<store>/sha256/<hex>`) is kept:
/// `<store>/listings/<hex>.json`.
fn listing_path(tree: &Path) -> Option<PathBuf> {
    let hex = tree.file_name()?.to_str()?;
    Some(
        tree.parent()?
            .parent()?
            .join("listings")
            .join(format!("{hex}.json")),
    )
}

/// The listing of the stored tree at `tree`, when one was kept.
#[must_use]
pub fn read_listing(tree: &Path) -> Option<TreeListing> {
    let text = fs_err::read_to_string(listing_path(tree)?).ok()?;
    serde_json::from_str(&text).ok()
}

fn save_listing(tree: &Path, inventory: &skillbox_trust::digest::FolderInventory) {
    let Some(path) = listing_path(tree) else {
        return;
    };
    let listing = TreeListing {
        files: inventory
            .files
            .iter()
            .map(|(path, file)| {
                (
                    path.clone(),
                    skillbox_trust::lockfile::LockedFile::from(file),
                )
            })
            .collect(),
        links: inventory.links.clone(),
    };
    let written = path
        .parent()
        .map(fs_err::create_dir_all)
        .transpose()
        .and_then(|_| fs_err::write(&path, serde_json::to_vec(&listing).unwrap_or_default()));
    if let Err(error) = written {
        tracing::debug!(%error, "the listing of a package tree was not kept");
    }
}
