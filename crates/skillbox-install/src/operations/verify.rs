//! `skillbox verify`: compare every installed skill's files (and its agents' links or copies)
//! with the lock, naming each changed, added or missing file.

use super::*;

impl Installer {
    /// `skillbox verify`: compare every installed skill's files with the lock, naming each
    /// changed, added or missing file.
    ///
    /// # Errors
    /// When the lock cannot be read.
    pub fn verify(&self) -> Result<Report, InstallError> {
        let lock = self.existing_lock()?;
        let mut report = self.report();
        for (name, locked) in &lock.skills {
            let folder = self.scope.install_folder.join(name);
            let (action, changes) = match folder_inventory_at(&folder) {
                Err(_) if !folder.exists() => (Action::Missing, Vec::new()),
                Err(error) => {
                    report.notes.push(error.to_string());
                    (Action::Modified, Vec::new())
                }
                Ok(found) if found.digest == locked.digest => (Action::Unchanged, Vec::new()),
                Ok(found) => (Action::Modified, locked.changes(&found)),
            };
            let mut skill = outcome(name, action, folder, locked, None);
            skill.changes = changes;
            report.skills.push(skill);
            for agent_name in &locked.agents {
                let Ok(agent) = agent(agent_name) else {
                    continue;
                };
                let Some(agent_folder) = agent_folder(agent, &self.scope) else {
                    continue;
                };
                let shown = agent_folder.join(name);
                let fine = if locked.copies {
                    folder_inventory_at(&shown).is_ok_and(|found| found.digest == locked.digest)
                } else {
                    fs_err::read_link(&shown)
                        .is_ok_and(|target| target == self.relative_link(&agent_folder, name))
                };
                if !fine {
                    let mut skill = outcome(name, Action::Modified, shown.clone(), locked, None);
                    skill.changes.push(FileChange {
                        path: shown.display().to_string(),
                        change: skillbox_trust::lockfile::ChangeKind::Changed,
                    });
                    report.skills.push(skill);
                }
            }
        }
        Ok(report)
    }
}
