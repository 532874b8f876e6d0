//! What an install records about a skill's package servers (issue 37,
//! `docs/design/package-servers.md`): the package tree it put in the store, how it starts, and
//! the declaration it was installed for. Two records, as for skills: the lock's
//! ([`LockedServer`], in `skillbox.lock`: every package fetched with its integrity, enough for
//! `install --frozen` to fetch exactly those again) and the user's ([`ProvisionedServer`], in
//! the trust file: the tree digest the server may run from). A server starts only from a tree
//! the user's record names, whatever a cloned lock says.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How a stored package tree starts its server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum ServerEntry {
    /// A Node script, run with the `node` skillbox uses.
    Node {
        /// The script, relative to the tree (`node_modules/pkg/dist/index.js`).
        script: String,
    },
    /// A Python console script's function, run with the `python3` skillbox uses, the tree
    /// first on `sys.path`.
    Python {
        /// The module to import (`mcp_server_time`).
        module: String,
        /// The function to call (`main`, or `Class.method`).
        function: String,
        /// The `major.minor` of the interpreter it was installed for (wheels are built per
        /// version).
        python: String,
    },
}

impl ServerEntry {
    /// Why this entry cannot be trusted as read from a file, if it cannot: a script that
    /// leaves the tree, a module or function that is not a dotted name.
    #[must_use]
    pub fn problem(&self) -> Option<String> {
        let dotted = |text: &str| {
            !text.is_empty()
                && text.split('.').all(|part| {
                    !part.is_empty()
                        && !part.starts_with(|c: char| c.is_ascii_digit())
                        && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                })
        };
        match self {
            ServerEntry::Node { script } => {
                let contained = skillbox_core::source::contained_relative_path(script)
                    .is_ok_and(|clean| clean == *script);
                (!contained).then(|| format!("script `{script}` is not a path inside the tree"))
            }
            ServerEntry::Python {
                module,
                function,
                python,
            } => {
                if !dotted(module) || !dotted(function) {
                    Some(format!(
                        "`{module}:{function}` is not a module and function"
                    ))
                } else if !python
                    .split('.')
                    .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
                {
                    Some(format!("python `{python}` is not a `major.minor` version"))
                } else {
                    None
                }
            }
        }
    }
}

/// The user's record of one package server provisioned for a skill folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProvisionedServer {
    /// `npm` or `pypi`.
    pub registry: String,
    /// The package.
    pub package: String,
    /// The exact version installed.
    pub version: String,
    /// The tree digest of what was installed (`sha256:<hex>`), in the store.
    pub digest: String,
    /// How it starts.
    pub entry: ServerEntry,
    /// [`declaration_fingerprint`] of the declaration it was installed for: a declaration
    /// changed since (another package, another version) runs nothing until installed again.
    pub declaration: String,
}

/// One package fetched for a package server, as the lock lists it for review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LockedPackage {
    /// Its name.
    pub name: String,
    /// Its exact version.
    pub version: String,
    /// Where it was fetched from, when the registry's tool records it (npm may leave it out
    /// for its default registry: the name and version name it there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    /// Its integrity as the registry states it: `sha512-<base64>` (npm), `sha256:<hex>`
    /// (PyPI), checked when it is fetched again.
    pub integrity: String,
}

/// The lock's record of one package server of a locked skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LockedServer {
    /// `npm` or `pypi`.
    pub registry: String,
    /// The package.
    pub package: String,
    /// The version or range the declaration asks for, when it asks one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    /// The exact version installed.
    pub version: String,
    /// The tree digest of what was installed.
    pub digest: String,
    /// How it starts.
    pub entry: ServerEntry,
    /// [`declaration_fingerprint`] of the declaration.
    pub declaration: String,
    /// Every package fetched, with its integrity.
    pub packages: Vec<LockedPackage>,
    /// npm's own lock of the tree (`package-lock.json`'s `packages`), from which `npm ci`
    /// installs exactly it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub npm_lock: Option<serde_json::Value>,
}

impl LockedServer {
    /// The user's record of the same installation.
    #[must_use]
    pub fn provisioned(&self) -> ProvisionedServer {
        ProvisionedServer {
            registry: self.registry.clone(),
            package: self.package.clone(),
            version: self.version.clone(),
            digest: self.digest.clone(),
            entry: self.entry.clone(),
            declaration: self.declaration.clone(),
        }
    }

    /// Why this record cannot be used as read from a lock, if it cannot.
    #[must_use]
    pub fn problem(&self) -> Option<String> {
        if !matches!(self.registry.as_str(), "npm" | "pypi") {
            return Some(format!(
                "registry `{}` is not `npm` or `pypi`",
                self.registry
            ));
        }
        if !crate::digest::is_digest(&self.digest) {
            return Some("`digest` is not a `sha256:<64 hex>` digest".to_owned());
        }
        if self.packages.is_empty() {
            return Some("`packages` is empty".to_owned());
        }
        self.entry.problem()
    }
}

/// A fingerprint of a stdio declaration (command and arguments as declared): what the
/// records compare to know the declaration is the one installed.
#[must_use]
pub fn declaration_fingerprint(command: &str, args: &[String]) -> String {
    let mut hasher = Sha256::new();
    for word in std::iter::once(command).chain(args.iter().map(String::as_str)) {
        hasher.update((word.len() as u64).to_le_bytes());
        hasher.update(word.as_bytes());
    }
    format!(
        "{}{}",
        crate::digest::DIGEST_PREFIX,
        hex::encode(hasher.finalize())
    )
}

/// The provisioned servers of skill folders, by canonical folder then server name.
pub type ProvisionedServers = BTreeMap<String, BTreeMap<String, ProvisionedServer>>;
