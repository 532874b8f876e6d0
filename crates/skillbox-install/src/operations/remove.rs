//! `skillbox remove`, and the removal of folders this lock installed earlier and no longer
//! holds: only the files installed are removed, never a folder changed since.

use super::*;

impl Installer {
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

    /// Remove folders this lock installed earlier that it no longer holds.
    pub(super) fn remove_unlocked(
        &self,
        lock: &SkillLock,
        report: &mut Report,
    ) -> Result<(), InstallError> {
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

    pub(super) fn remove_placed(
        &self,
        name: &str,
        locked: &LockedSkill,
    ) -> Result<(), InstallError> {
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
