//! `skillbox verify`: compare every installed skill's files (and its agents' links or copies)
//! with the lock, naming each changed, added or missing file.

use super::*;

impl Installer {
    /// `skillbox verify`: compare every installed skill's files with the lock, naming each
    /// changed, added or missing file, and each package server's stored tree with its
    /// locked digest.
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
            for (server, installed) in &locked.servers {
                report
                    .skills
                    .push(self.verify_server(name, server, installed, locked)?);
            }
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

    /// A package server's stored tree against its locked digest, naming each changed file
    /// (from the listing kept when it was stored). Reported as `SKILL:SERVER`.
    fn verify_server(
        &self,
        name: &str,
        server: &str,
        installed: &skillbox_trust::package_servers::LockedServer,
        locked: &LockedSkill,
    ) -> Result<SkillOutcome, InstallError> {
        let store = self.store()?;
        let tree = store.tree_path(&installed.digest).unwrap_or_default();
        let (action, changes) = match folder_inventory_at(&tree) {
            Err(_) if !tree.exists() => (Action::Missing, Vec::new()),
            Err(error) => (
                Action::Modified,
                vec![FileChange {
                    path: error.to_string(),
                    change: skillbox_trust::lockfile::ChangeKind::Changed,
                }],
            ),
            Ok(found) if found.digest == installed.digest => (Action::Unchanged, Vec::new()),
            Ok(found) => {
                let listing = crate::package_servers::read_listing(&tree).unwrap_or_default();
                (
                    Action::Modified,
                    skillbox_trust::lockfile::changes_between(
                        &listing.files,
                        &listing.links,
                        &found,
                    ),
                )
            }
        };
        let mut outcome = outcome(&format!("{name}:{server}"), action, tree, locked, None);
        outcome.digest.clone_from(&installed.digest);
        outcome.changes = changes;
        Ok(outcome)
    }
}
