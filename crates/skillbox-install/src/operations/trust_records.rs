//! What this install records in the user's trust file: each folder it put in place with its
//! digest (written once, at the end of the operation), and whether a folder is one it
//! recorded.

use super::*;
use skillbox_trust::trust_file::InstalledSkill;

impl Installer {
    /// Whether the trust file records `folder` as installed by this scope's lock with `digest`.
    pub(super) fn recorded_as(&self, folder: &Path, digest: &str) -> bool {
        self.our_record(folder)
            .is_some_and(|record| record.digest == digest)
    }

    /// The trust file's record of `folder` when this scope's lock installed it.
    fn our_record(&self, folder: &Path) -> Option<&InstalledSkill> {
        let store = self.trust_snapshot(self.trust_file.as_deref()?)?;
        let canonical = fs_err::canonicalize(folder).ok()?;
        store
            .installed(&canonical)
            .filter(|record| record.lock == self.scope.lock)
    }

    /// The trust file as it was when this operation first read it (records written by this
    /// operation go in at its end, [`Installer::flush_trust`]); `None` when it cannot be read.
    pub(super) fn trust_snapshot(&self, trust_file: &Path) -> Option<&TrustStore> {
        self.trust_snapshot
            .get_or_init(|| TrustStore::load(trust_file).ok())
            .as_ref()
    }

    /// Whether a folder is a copy this scope's lock installed (recorded in the trust file).
    pub(super) fn is_our_copy(&self, folder: &Path) -> bool {
        self.our_record(folder).is_some()
    }

    /// Note that `folder` now holds the files of `locked` and may run its package servers
    /// from their stored trees: recorded in the trust file by
    /// [`Installer::flush_trust`], once per operation.
    pub(super) fn record_trust(
        &self,
        folder: &Path,
        locked: &LockedSkill,
    ) -> Result<(), InstallError> {
        if self.trust_file.is_some()
            && let Ok(mut pending) = self.pending_trust.lock()
        {
            pending.push(PendingTrust {
                folder: folder.to_path_buf(),
                digest: locked.digest.clone(),
                servers: locked
                    .servers
                    .iter()
                    .map(|(name, server)| (name.clone(), server.provisioned()))
                    .collect(),
            });
        }
        Ok(())
    }

    /// Write the trust records noted during this operation in one update of the trust file,
    /// dropping records of installed folders that no longer exist.
    pub(super) fn flush_trust(&self) -> Result<(), InstallError> {
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
            for pending in &pending {
                store.record_installed(&pending.folder, &pending.digest, &lock)?;
                store.record_provisioned_servers(&pending.folder, pending.servers.clone())?;
            }
            for source in &sources {
                store.confirm_local_source(&lock, source)?;
            }
            Ok(())
        })?;
        Ok(())
    }
}
