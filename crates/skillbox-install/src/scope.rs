//! Where an install goes: a project (its manifest, lock and `.agents/skills/`) or the user's
//! own skills folder (`--global`).

use std::path::{Path, PathBuf};

use skillbox_trust::lockfile::LOCK_FILE_NAME;

use crate::error::InstallError;

/// The manifest's file name.
pub const MANIFEST_FILE_NAME: &str = "skillbox.toml";
/// The folder (under the project, or the home folder for `--global`) skills are installed in;
/// Codex, Cursor, Copilot, Goose, OpenCode, Gemini and skillbox read it.
pub const INSTALL_FOLDER: &str = ".agents/skills";

/// The files and folders of one install scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallScope {
    /// The project folder (the home folder for the user's scope).
    pub base: PathBuf,
    /// `skillbox.toml`.
    pub manifest: PathBuf,
    /// `skillbox.lock`.
    pub lock: PathBuf,
    /// Where skills are installed.
    pub install_folder: PathBuf,
    /// Whether this is the user's scope.
    pub global: bool,
}

impl InstallScope {
    /// The project holding `start`: the nearest folder at or above it with a `skillbox.toml`
    /// or `skillbox.lock`, else `start` itself. Above `start`, only files of the user's own
    /// (or root's) count: a `skillbox.lock` another user left in a shared folder (`/tmp`)
    /// does not make that folder the project of everyone working below it.
    #[must_use]
    pub fn project(start: &Path) -> InstallScope {
        let start = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
        let base = start
            .ancestors()
            .find(|folder| {
                [MANIFEST_FILE_NAME, LOCK_FILE_NAME].iter().any(|name| {
                    let file = folder.join(name);
                    file.is_file() && (*folder == start || owned_by_us(&file))
                })
            })
            .unwrap_or(&start)
            .to_path_buf();
        InstallScope {
            manifest: base.join(MANIFEST_FILE_NAME),
            lock: base.join(LOCK_FILE_NAME),
            install_folder: base.join(INSTALL_FOLDER),
            base,
            global: false,
        }
    }

    /// The user's scope: skills in `~/.agents/skills`, manifest and lock in `~/.agents/`.
    ///
    /// # Errors
    /// [`InstallError::Usage`] when no home folder is known.
    pub fn global() -> Result<InstallScope, InstallError> {
        let home = std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(PathBuf::from)
            .ok_or_else(|| InstallError::Usage {
                message: "`--global` needs a home folder; set `HOME`".to_owned(),
            })?;
        let agents = home.join(".agents");
        Ok(InstallScope {
            manifest: agents.join(MANIFEST_FILE_NAME),
            lock: agents.join(LOCK_FILE_NAME),
            install_folder: home.join(INSTALL_FOLDER),
            base: home,
            global: true,
        })
    }

    /// The folder holding the install folder (`.agents/`), where staging happens.
    #[must_use]
    pub fn staging_parent(&self) -> PathBuf {
        self.install_folder
            .parent()
            .map_or_else(|| self.base.clone(), Path::to_path_buf)
    }
}

/// Whether a file (and the folder holding it) belongs to the user running this, or to root.
fn owned_by_us(file: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let us = rustix::process::geteuid().as_raw();
    let ours = |path: &Path| {
        fs_err::metadata(path).is_ok_and(|metadata| metadata.uid() == us || metadata.uid() == 0)
    };
    ours(file) && file.parent().is_some_and(ours)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_above_the_start_counts_only_when_it_is_ours() {
        let temp = tempfile::tempdir().unwrap();
        let start = temp.path().join("work/here");
        std::fs::create_dir_all(&start).unwrap();
        let planted = temp.path().join(LOCK_FILE_NAME);
        std::fs::write(&planted, "{}").unwrap();
        assert_eq!(InstallScope::project(&start).base, temp.path());
        // Another user's lock (only root can give a file away).
        if std::os::unix::fs::chown(&planted, Some(4242), None).is_ok() {
            assert_eq!(InstallScope::project(&start).base, start);
            // In the folder itself it is the project, whoever wrote it.
            assert_eq!(InstallScope::project(temp.path()).base, temp.path());
        }
    }
}
