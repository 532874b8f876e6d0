//! Storing a fetched skill's tree in the content-addressed store, read-only under its digest,
//! and making its lock entry; the per-skill limits are checked here.

use super::*;

impl Installer {
    /// Put a prepared skill's folder in the store: moved in when it is in a staging folder of
    /// ours (fetched), copied (and hashed as copied) when it is the user's; its inventory
    /// and stored tree.
    pub(super) fn store_folder(
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
    pub(super) fn store_prepared(
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
            servers: BTreeMap::new(),
        };
        Ok((locked, tree))
    }

    pub(super) fn check_skill_limits(
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
}
