//! `skillbox update`: fetch each skill's source again and install what it holds now.

use super::*;

impl Installer {
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
            let (mut locked, tree) = self.store_prepared(&prepared, &entry)?;
            locked.servers = self.provision_servers(
                &name,
                &tree,
                &old.servers,
                ServerResolution::Refresh,
                &mut report.notes,
            )?;
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
}
