//! `skillbox install`: make the install folder exactly what the lock says, locking first what
//! the manifest wants and the lock lacks (never under `--frozen`).

use super::*;

impl Installer {
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
        let mut placed = Vec::new();
        for (name, locked) in &lock.skills {
            let (action, folder) = self.restore(name, locked, &mut report.notes)?;
            placed.push((name.clone(), folder.clone()));
            report
                .skills
                .push(outcome(name, action, folder, locked, None));
        }
        // The skills' package servers, from the placed folders (verified against the lock):
        // what the lock holds is installed as locked; what it lacks is resolved and locked
        // now, never under `--frozen`.
        let resolution = if frozen {
            ServerResolution::Frozen
        } else {
            ServerResolution::KeepLocked
        };
        let lock_before_servers = lock.clone();
        for (name, folder) in &placed {
            let Some(locked) = lock.skills.get_mut(name) else {
                continue;
            };
            locked.servers = self.provision_servers(
                name,
                folder,
                &locked.servers,
                resolution,
                &mut report.notes,
            )?;
            self.record_trust(folder, locked)?;
        }
        if lock != lock_before_servers {
            if frozen {
                return Err(InstallError::Frozen {
                    message: format!(
                        "`--frozen`: `{}` records package servers its skills no longer declare; run `skillbox install` without `--frozen` and commit the lock",
                        self.scope.lock.display()
                    ),
                });
            }
            write_atomically(&self.scope.lock, lock.to_text().as_bytes())?;
        }
        self.flush_trust()?;
        Ok(report)
    }
}

/// Whether a lock entry was made from this manifest entry.
pub(super) fn agrees(entry: &ManifestEntry, locked: &LockedSkill) -> bool {
    entry.source == locked.source
        && entry.reference == locked.reference
        && (entry.path.is_empty() || entry.path == locked.path)
}

/// How the manifest and the lock disagree, one line per skill.
pub(super) fn differences(manifest: &Manifest, lock: &SkillLock) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn entry(source: &str, path: &str) -> ManifestEntry {
        ManifestEntry {
            source: source.to_owned(),
            path: path.to_owned(),
            reference: None,
            agents: Vec::new(),
            copy: false,
        }
    }

    fn locked(source: &str, path: &str) -> LockedSkill {
        LockedSkill {
            source: source.to_owned(),
            kind: SourceKind::Git,
            path: path.to_owned(),
            reference: None,
            revision: Some("0".repeat(40)),
            digest: format!("sha256:{}", "0".repeat(64)),
            files: BTreeMap::new(),
            links: BTreeMap::new(),
            requires: Vec::new(),
            agents: Vec::new(),
            copies: false,
            servers: BTreeMap::new(),
        }
    }

    #[test]
    fn a_lock_entry_agrees_with_the_manifest_entry_it_was_made_from() {
        let wanted = entry("https://example.org/skills.git", "skills/pdf");
        assert!(agrees(
            &wanted,
            &locked("https://example.org/skills.git", "skills/pdf")
        ));
        // A manifest entry without a path takes the locked skill wherever it was found.
        assert!(agrees(
            &entry("https://example.org/skills.git", ""),
            &locked("https://example.org/skills.git", "skills/pdf")
        ));
        assert!(!agrees(
            &wanted,
            &locked("https://example.org/other.git", "skills/pdf")
        ));
        assert!(!agrees(
            &wanted,
            &locked("https://example.org/skills.git", "pdf")
        ));
        let pinned = ManifestEntry {
            reference: Some("v2".to_owned()),
            ..wanted.clone()
        };
        assert!(!agrees(
            &pinned,
            &locked("https://example.org/skills.git", "skills/pdf")
        ));
    }

    #[test]
    fn each_difference_of_manifest_and_lock_is_one_line() {
        let temp = tempfile::tempdir().unwrap();
        let mut manifest = Manifest::load(&temp.path().join("skillbox.toml")).unwrap();
        manifest.set("pdf", entry("https://example.org/skills.git", "pdf"));
        manifest.set("csv", entry("https://example.org/new.git", "csv"));
        manifest.set("docx", entry("https://example.org/skills.git", "docx"));
        let mut lock = SkillLock::new();
        lock.skills.insert(
            "pdf".to_owned(),
            locked("https://example.org/skills.git", "pdf"),
        );
        lock.skills.insert(
            "csv".to_owned(),
            locked("https://example.org/old.git", "csv"),
        );
        lock.skills.insert(
            "gone".to_owned(),
            locked("https://example.org/skills.git", "gone"),
        );
        assert_eq!(
            differences(&manifest, &lock),
            [
                "`csv` is wanted from `https://example.org/new.git` but locked from `https://example.org/old.git`",
                "`docx` is wanted but not locked",
                "`gone` is locked but no longer wanted",
            ]
        );
    }
}
