//! The package servers of the skills an operation installs (issue 37): each `npx`/`uvx`
//! server a skill declares is installed ahead into the store and recorded in the lock beside
//! the skill; the trust file records the tree each may run from. `add` keeps what the lock
//! already holds for an unchanged declaration, `update` resolves again, `install` installs
//! what the lock holds (and, unless `--frozen`, resolves what it lacks).

use super::*;
use skillbox_trust::package_servers::{LockedServer, declaration_fingerprint};

use crate::package_servers::{PackageTools, provision, restore};

/// How an operation treats the servers a lock already records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ServerResolution {
    /// Install what the lock holds for an unchanged declaration; resolve the rest.
    KeepLocked,
    /// Install only what the lock holds; a server it lacks is an error.
    Frozen,
    /// Resolve every server again (newest versions the declarations allow).
    Refresh,
}

impl Installer {
    /// The package servers of the skill in `folder` (named `name`), installed: from the
    /// store, fetched again as `locked` says, or resolved anew, per `resolution`. Declarations
    /// skillbox cannot install ahead are noted, not refused (the skill works without them).
    pub(super) fn provision_servers(
        &self,
        name: &str,
        folder: &Path,
        locked: &BTreeMap<String, LockedServer>,
        resolution: ServerResolution,
        notes: &mut Vec<String>,
    ) -> Result<BTreeMap<String, LockedServer>, InstallError> {
        self.provision_declared(name, declared_servers(folder), locked, resolution, notes)
    }

    /// [`Installer::provision_servers`] of declarations already read. What each server needs
    /// is decided first, in declaration order (a lock that does not match, `--frozen` without
    /// a record); then the installs run side by side, each with its registry's tool in its own
    /// staging folder (the store takes trees from several processes at once), and the first
    /// failure in declaration order is the one reported.
    fn provision_declared(
        &self,
        name: &str,
        declarations: Vec<DeclaredServer>,
        locked: &BTreeMap<String, LockedServer>,
        resolution: ServerResolution,
        notes: &mut Vec<String>,
    ) -> Result<BTreeMap<String, LockedServer>, InstallError> {
        let mut servers = BTreeMap::new();
        if declarations.iter().all(|(_, package)| package.is_none()) {
            return Ok(servers);
        }
        let store = self.store()?;
        let tools = PackageTools::from_path();
        let mut jobs = Vec::new();
        for (declaration, package) in declarations {
            let Some(package) = package else {
                continue;
            };
            let package = match package {
                Ok(package) => package,
                Err(why) => {
                    notes.push(format!(
                        "server `{}` of `{name}` is not installed ahead: {why}; it cannot start in the sandbox",
                        declaration.name
                    ));
                    continue;
                }
            };
            let ServerTransport::Stdio { command, args, .. } = &declaration.transport else {
                continue;
            };
            let fingerprint = declaration_fingerprint(command, args);
            let kept = locked
                .get(&declaration.name)
                .filter(|server| server.declaration == fingerprint)
                .filter(|_| resolution != ServerResolution::Refresh);
            let job = match kept {
                Some(server) => {
                    if let Some(problem) = locked_against_declaration(server, &package) {
                        return Err(self.locked_server_error(name, &declaration.name, problem));
                    }
                    ServerJob::Restore(server)
                }
                None if resolution == ServerResolution::Frozen => {
                    return Err(InstallError::Frozen {
                        message: format!(
                            "`--frozen`: `{}` records no package for server `{}` of skill `{name}` ({}); run `skillbox install` without `--frozen` and commit the lock",
                            self.scope.lock.display(),
                            declaration.name,
                            package.requirement()
                        ),
                    });
                }
                None => ServerJob::Provision { fingerprint },
            };
            jobs.push((declaration.name.clone(), package, job));
        }
        let tasks: Vec<_> = jobs
            .iter()
            .map(|(server, package, _)| {
                self.progress.start(
                    &format!(
                        "server `{server}` ({} {})",
                        package.registry, package.package
                    ),
                    None,
                )
            })
            .collect();
        let (tools, store, staging) = (&tools, &store, self.cache.as_path());
        let outcomes: Vec<Result<LockedServer, String>> = std::thread::scope(|scope| {
            let running: Vec<_> = jobs
                .iter()
                .map(|(_, package, job)| {
                    scope.spawn(move || match job {
                        ServerJob::Restore(server) => restore(tools, store, staging, server)
                            .map(|_| LockedServer::clone(server))
                            .map_err(|error| error.message),
                        ServerJob::Provision { fingerprint } => {
                            provision(tools, store, staging, package, fingerprint.clone())
                                .map_err(|error| error.message)
                        }
                    })
                })
                .collect();
            running
                .into_iter()
                .map(|install| {
                    install
                        .join()
                        .unwrap_or_else(|_| Err("the install stopped unexpectedly".to_owned()))
                })
                .collect()
        });
        for (((server_name, package, job), outcome), task) in
            jobs.into_iter().zip(outcomes).zip(tasks)
        {
            let server = match (&job, outcome) {
                (_, Ok(server)) => server,
                (ServerJob::Restore(_), Err(message)) => {
                    return Err(self.locked_server_error(name, &server_name, message));
                }
                (ServerJob::Provision { .. }, Err(message)) => {
                    return Err(InstallError::PackageServer {
                        skill: name.to_owned(),
                        server: server_name,
                        message,
                    });
                }
            };
            if matches!(job, ServerJob::Provision { .. }) && !package.pinned() {
                notes.push(format!(
                    "server `{server_name}` of `{name}` asks for {} without a version: {} is pinned in the lock (`skillbox update {name}` takes a newer one)",
                    package.package, server.version
                ));
            }
            task.finish();
            servers.insert(server_name, server);
        }
        Ok(servers)
    }

    /// A locked server that cannot be installed as the lock says, with where it is recorded.
    fn locked_server_error(&self, skill: &str, server: &str, message: String) -> InstallError {
        InstallError::PackageServer {
            skill: skill.to_owned(),
            server: server.to_owned(),
            message: format!(
                "{message} (`{}`, `skills.{skill}.servers.{server}`); restore the lock from version control, or run `skillbox update {skill}` to install it anew",
                self.scope.lock.display(),
            ),
        }
    }
}

/// What one declared server needs: the tree the lock records, or a resolution anew.
enum ServerJob<'lock> {
    Restore(&'lock LockedServer),
    Provision { fingerprint: String },
}

/// Why a lock's record of a server cannot be what its declaration asks for, if it cannot: the
/// registry and package must be the declared ones, the version asked the same, and a pinned
/// version exactly it. (Within an open range the lock chooses, as npm's and pip's locks do.)
fn locked_against_declaration(
    locked: &LockedServer,
    package: &skillbox_core::package_server::PackageServer,
) -> Option<String> {
    let same_name = |a: &str, b: &str| {
        let fold = |name: &str| name.to_ascii_lowercase().replace(['_', '.'], "-");
        fold(a) == fold(b)
    };
    if locked.registry != package.registry.as_str() || !same_name(&locked.package, &package.package)
    {
        return Some(format!(
            "the lock records {} `{}`, but the skill declares {} `{}`",
            locked.registry, locked.package, package.registry, package.package
        ));
    }
    if locked.requested != package.requested {
        return Some(format!(
            "the lock records `{}` as asked for, but the skill asks for `{}`",
            locked.requested.as_deref().unwrap_or("(any version)"),
            package.requested.as_deref().unwrap_or("(any version)")
        ));
    }
    let pinned = package
        .pinned()
        .then_some(())
        .and(package.requested.as_deref());
    let exact = pinned.map(|requested| requested.trim_start_matches("=="));
    match exact {
        Some(version) if version != locked.version => Some(format!(
            "the lock records version {}, but the skill pins {version}",
            locked.version
        )),
        _ => None,
    }
}

/// A declared server and the package it runs, if it runs one (`Err`: a launcher line that
/// cannot be installed ahead).
type DeclaredServer = (
    skillbox_core::ServerDeclaration,
    Option<Result<skillbox_core::package_server::PackageServer, String>>,
);

/// The servers the skill in `folder` declares, each with the package it runs, if any.
fn declared_servers(folder: &Path) -> Vec<DeclaredServer> {
    let Ok(catalog) = SkillCatalog::load(&CatalogOptions {
        roots: vec![SkillRoot::explicit(folder)],
        ..CatalogOptions::default()
    }) else {
        return Vec::new();
    };
    catalog
        .skills()
        .first()
        .map(|skill| {
            skill
                .properties
                .mcp_servers
                .iter()
                .map(|declaration| (declaration.clone(), declaration.package()))
                .collect()
        })
        .unwrap_or_default()
}

impl Installer {
    /// `skillbox prepare`: install ahead the package servers of skill folders no lock
    /// installed (a trusted project folder, a folder of the user's), recording in the trust
    /// file the tree each may run from. A server whose record still matches its declaration
    /// and whose tree the store holds is kept (no network) unless `refresh`.
    ///
    /// # Errors
    /// A server that cannot be installed; the trust file cannot be written.
    pub fn prepare(
        &self,
        skills: &[(String, PathBuf)],
        refresh: bool,
    ) -> Result<Report, InstallError> {
        let mut report = self.report();
        let store = self.store()?;
        let records = self
            .trust_file
            .as_deref()
            .and_then(|file| TrustStore::load(file).ok());
        let mut prepared = Vec::new();
        for (name, folder) in skills {
            let canonical = fs_err::canonicalize(folder)
                .map_err(|error| InstallError::io("read", folder.clone(), error))?;
            // What the trust file records and the store still holds stands for a locked
            // server: `provision_servers` keeps it without the network.
            let declarations = declared_servers(folder);
            let known: BTreeMap<String, LockedServer> = declarations
                .iter()
                .filter_map(|(declaration, package)| {
                    // The record holds no `requested`: its fingerprint matching is the
                    // declaration asking the same.
                    let requested = package.as_ref()?.as_ref().ok()?.requested.clone();
                    let record = records
                        .as_ref()?
                        .provisioned_server(&canonical, &declaration.name)?;
                    store.existing(&record.digest)?;
                    Some((
                        declaration.name.clone(),
                        LockedServer {
                            registry: record.registry.clone(),
                            package: record.package.clone(),
                            requested,
                            version: record.version.clone(),
                            digest: record.digest.clone(),
                            entry: record.entry.clone(),
                            declaration: record.declaration.clone(),
                            packages: Vec::new(),
                            npm_lock: None,
                        },
                    ))
                })
                .collect();
            let resolution = if refresh {
                ServerResolution::Refresh
            } else {
                ServerResolution::KeepLocked
            };
            let servers =
                self.provision_declared(name, declarations, &known, resolution, &mut report.notes)?;
            for (server, installed) in &servers {
                let unchanged = known
                    .get(server)
                    .is_some_and(|known| known.digest == installed.digest);
                report.skills.push(SkillOutcome {
                    name: format!("{name}:{server}"),
                    action: if unchanged {
                        Action::Unchanged
                    } else {
                        Action::Added
                    },
                    folder: store.tree_path(&installed.digest).unwrap_or_default(),
                    source: format!(
                        "{} {}@{}",
                        installed.registry, installed.package, installed.version
                    ),
                    revision: None,
                    digest: installed.digest.clone(),
                    previous_digest: None,
                    changes: Vec::new(),
                });
            }
            prepared.push((
                canonical,
                servers
                    .iter()
                    .map(|(server, installed)| (server.clone(), installed.provisioned()))
                    .collect::<BTreeMap<_, _>>(),
            ));
        }
        if let Some(trust_file) = &self.trust_file {
            TrustStore::update(trust_file, |store| {
                for (folder, servers) in &prepared {
                    store.record_provisioned_servers(folder, servers.clone())?;
                }
                Ok(())
            })?;
        }
        Ok(report)
    }
}
