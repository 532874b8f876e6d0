//! Where an install goes: a project (its manifest, lock and `.agents/skills/`) or the user's
//! own skills folder (`--global`).

use std::path::{Path, PathBuf};

use skillbox_core::install_lock::LOCK_FILE_NAME;

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
    /// or `skillbox.lock`, else `start` itself.
    #[must_use]
    pub fn project(start: &Path) -> InstallScope {
        let start = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
        let base = start
            .ancestors()
            .find(|folder| {
                folder.join(MANIFEST_FILE_NAME).is_file() || folder.join(LOCK_FILE_NAME).is_file()
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
