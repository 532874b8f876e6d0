//! Putting a stored tree in place: the install folder's copy (built beside it and renamed in
//! whole, through folder handles), the agents' links or copies, and the check that a folder in
//! the way is ours to replace.

use super::*;

impl Installer {
    /// Make the install folder of `name` hold the locked files: unchanged when it already
    /// does, else from the store, else fetched again at the locked revision.
    pub(super) fn restore(
        &self,
        name: &str,
        locked: &LockedSkill,
        notes: &mut Vec<String>,
    ) -> Result<(Action, PathBuf), InstallError> {
        let folder = self.scope.install_folder.join(name);
        // Files already in place are kept only when they are known: recorded as installed here
        // with this digest, or in the store (fetched from a source before). Files a repository
        // (or anyone who can write the project) put there, with a lock edited to match, are
        // not: the locked source is fetched, and must hold them.
        let in_place = !crate::guard::is_link(&folder)
            && folder_inventory_at(&folder).is_ok_and(|found| found.digest == locked.digest)
            && (self.recorded_as(&folder, &locked.digest)
                || self.store()?.existing(&locked.digest).is_some());
        if in_place {
            crate::discover::check_folder_links(&folder, name, &locked.source)?;
            self.show_in_agents(name, locked, notes)?;
            self.record_trust(&folder, locked)?;
            return Ok((Action::Unchanged, folder));
        }
        let store = self.store()?;
        let tree = match store.existing(&locked.digest) {
            Some(tree) => {
                crate::discover::check_folder_links(&tree, name, &locked.source)?;
                tree
            }
            None => {
                let spec = SourceSpec::parse(&locked.source, &self.scope.base)?.with_reference(
                    locked
                        .revision
                        .clone()
                        .filter(|_| locked.kind == SourceKind::Git)
                        .or_else(|| locked.reference.clone()),
                );
                let prepared = self.fetch_one(&spec, &locked.path, name)?;
                let (inventory, tree) = self.store_folder(&prepared)?;
                let digest = inventory.digest;
                if digest != locked.digest {
                    // A folder of this machine's digest is never printed: a lock that named
                    // the user's own skill could read it back from the message.
                    let now = if locked.kind == SourceKind::Path {
                        "holds other files".to_owned()
                    } else {
                        format!("now digests to `{digest}`")
                    };
                    return Err(InstallError::refused(
                        locked.source.clone(),
                        format!(
                            "skill `{name}` {now}, not the locked `{}`; the source changed since it was locked (`skillbox update {name}` takes the new files)",
                            locked.digest
                        ),
                    ));
                }
                tree
            }
        };
        let folder = self.place(name, locked, &tree, notes)?;
        Ok((Action::Restored, folder))
    }

    /// Put a stored tree in the install folder as `name`, show it in the agents' folders and
    /// record its trust.
    pub(super) fn place(
        &self,
        name: &str,
        locked: &LockedSkill,
        tree: &Path,
        notes: &mut Vec<String>,
    ) -> Result<PathBuf, InstallError> {
        let folder = self.scope.install_folder.join(name);
        let (parent, install) = self.install_handles()?;
        let source = FolderHandle::open_path(tree)?;
        materialize(&source, &install, OsStr::new(name), &parent)?;
        self.show_in_agents(name, locked, notes)?;
        self.record_trust(&folder, locked)?;
        Ok(folder)
    }

    pub(super) fn relative_link(&self, agent_folder: &Path, name: &str) -> PathBuf {
        relative_path(agent_folder, &self.scope.install_folder.join(name))
    }

    pub(super) fn show_in_agents(
        &self,
        name: &str,
        locked: &LockedSkill,
        notes: &mut Vec<String>,
    ) -> Result<(), InstallError> {
        let entry = OsStr::new(name);
        for agent_name in &locked.agents {
            let agent = agent(agent_name)?;
            let Some(agent_folder) = agent_folder(agent, &self.scope) else {
                notes.push(format!(
                    "{agent_name} reads `{}` already",
                    self.scope.install_folder.display()
                ));
                continue;
            };
            crate::guard::check_agent_folder(&self.scope, &agent_folder)?;
            let shown = agent_folder.join(name);
            let agents = FolderHandle::open_in(&self.scope, &agent_folder)?;
            let target = self.relative_link(&agent_folder, name);
            match agents.kind(entry) {
                Some(FileType::Symlink) => {
                    let current = agents.read_link(entry);
                    if !locked.copies && current.as_deref() == Some(target.as_path()) {
                        continue;
                    }
                    if current.as_deref() != Some(target.as_path()) {
                        return Err(conflict(&shown, agent_name));
                    }
                    agents.remove_file(entry)?;
                }
                Some(_) => {
                    if !self.is_our_copy(&shown) {
                        return Err(conflict(&shown, agent_name));
                    }
                    if !locked.copies {
                        agents.remove_tree(entry)?;
                    }
                }
                None => {}
            }
            if locked.copies {
                let (_, install) = self.install_handles()?;
                let source = install.child(entry, false)?;
                materialize(&source, &agents, entry, &agents)?;
                self.record_trust(&shown, locked)?;
            } else {
                agents.symlink(&target, entry)?;
            }
        }
        Ok(())
    }

    /// Refuse unknown agents, and agents' folders in the project that are links (before
    /// anything is written).
    pub(super) fn check_agent_folders(&self, agents: &[String]) -> Result<(), InstallError> {
        for name in agents {
            if let Some(folder) = agent_folder(agent(name)?, &self.scope) {
                crate::guard::check_agent_folder(&self.scope, &folder)?;
            }
        }
        Ok(())
    }

    /// Refuse to replace the folder `name` of the install folder when this scope's lock did
    /// not install it (a skill the user wrote, a folder the repository ships), unless it holds
    /// exactly the files to install already.
    pub(super) fn check_free(
        &self,
        name: &str,
        locked: &LockedSkill,
        was_locked: bool,
    ) -> Result<(), InstallError> {
        let folder = self.scope.install_folder.join(name);
        if was_locked || fs_err::symlink_metadata(&folder).is_err() {
            return Ok(());
        }
        // Ours: installed here and unchanged since (a record alone may be left from a project
        // deleted before), or already the very files to install.
        let ours = !crate::guard::is_link(&folder)
            && folder_inventory_at(&folder).is_ok_and(|found| {
                found.digest == locked.digest || self.recorded_as(&folder, &found.digest)
            });
        if ours {
            return Ok(());
        }
        Err(InstallError::refused(
            folder.display().to_string(),
            format!(
                "it exists and was not installed by `{}`, so skill `{name}` does not replace it; move it away first",
                self.scope.lock.display()
            ),
        ))
    }
}

pub(super) fn conflict(path: &Path, agent: &str) -> InstallError {
    InstallError::refused(
        path.display().to_string(),
        format!(
            "it exists and was not installed by skillbox, so `--agent {agent}` leaves it alone; move it away first"
        ),
    )
}

/// `to` relative to the folder `from` (both absolute).
pub(super) fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<_> = from.components().collect();
    let to_parts: Vec<_> = to.components().collect();
    let common = from
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for part in &to_parts[common..] {
        path.push(part.as_os_str());
    }
    path
}

/// Copy the folder `source` into `into` as `name` (replacing what is there) through a folder
/// built in a staging folder of `staging_in` and renamed into place whole; every write and
/// rename is made through the folders' handles ([`FolderHandle`]).
pub(super) fn materialize(
    source: &FolderHandle,
    into: &FolderHandle,
    name: &OsStr,
    staging_in: &FolderHandle,
) -> Result<(), InstallError> {
    let staging = staging_in.staging(STAGING_PREFIX)?;
    let built = OsStr::new("skill");
    copy_folder(source, staging.folder(), built)?;
    if into.kind(name).is_some() {
        into.rename(name, staging.folder(), OsStr::new("old"))?;
    }
    staging.folder().rename(built, into, name)?;
    // Dropping the staging folder removes it, with the old folder.
    drop(staging);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_links_climb_to_the_install_folder() {
        assert_eq!(
            relative_path(
                Path::new("/p/.claude/skills"),
                Path::new("/p/.agents/skills/pdf")
            ),
            PathBuf::from("../../.agents/skills/pdf")
        );
    }
}
