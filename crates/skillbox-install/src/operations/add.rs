//! `skillbox add`: fetch a SOURCE, choose its skills (and the skills they require), refuse
//! names that would take over a skill the user already has, and install them.

use super::*;

impl Installer {
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
            let (mut locked, tree) = self.store_prepared(&prepared, &entry)?;
            let name = prepared.found.name.clone();
            let locked_servers = lock
                .skills
                .get(&name)
                .map(|old| old.servers.clone())
                .unwrap_or_default();
            locked.servers = self.provision_servers(
                &name,
                &tree,
                &locked_servers,
                ServerResolution::KeepLocked,
                &mut report.notes,
            )?;
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
    pub(super) fn choose_from_index(&self, spec: &SourceSpec) -> Result<(), InstallError> {
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

    /// Refuse a local source outside the project that entry `name` of the project's manifest
    /// or lock (`named_in`) names, unless the person confirmed it with `skillbox add`
    /// ([`crate::local_source`]).
    pub(super) fn check_named_source(
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
    pub(super) fn check_takeovers(
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
    pub(super) fn copy_elsewhere(
        &self,
        names: &[&str],
        installing: &[PathBuf],
    ) -> Option<(String, PathBuf)> {
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
}

/// At most this many skills are listed when a source holds more to choose from.
pub(super) const MAX_LISTED_SKILLS: usize = 50;

/// The refusal listing the skills of a source that holds several, none of them chosen.
pub(super) fn choose_listing<'a>(
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
pub(super) fn choose(
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

pub(super) fn not_in_source<'a>(
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

pub(super) fn first_line(text: &str) -> String {
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
pub(super) fn manifest_path(prepared: &Prepared) -> String {
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
