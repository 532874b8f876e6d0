//! `skillbox outdated`: fetch each skill's source again and report those whose files would
//! change, and ask the registries for each package server's newest allowed version; nothing
//! is installed.

use super::*;

impl Installer {
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
        let tools = crate::package_servers::PackageTools::from_path();
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
            for (server, installed) in &locked.servers {
                let newest = crate::package_servers::newest_version(&tools, &self.cache, installed)
                    .map_err(|error| InstallError::PackageServer {
                        skill: name.clone(),
                        server: server.clone(),
                        message: error.message,
                    })?;
                let action = if newest == installed.version {
                    Action::Unchanged
                } else {
                    report.notes.push(format!(
                        "server `{server}` of `{name}`: {} {} is locked, {newest} is out (`skillbox update {name}` takes it)",
                        installed.package, installed.version
                    ));
                    Action::Outdated
                };
                let mut row = outcome(
                    &format!("{name}:{server}"),
                    action,
                    self.store()?
                        .tree_path(&installed.digest)
                        .unwrap_or_default(),
                    locked,
                    None,
                );
                row.source = format!("{} {}", installed.registry, installed.package);
                row.revision = Some(installed.version.clone());
                row.digest.clone_from(&installed.digest);
                report.skills.push(row);
            }
        }
        Ok(report)
    }
}
