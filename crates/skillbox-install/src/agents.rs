//! Other agents' skills folders: `--agent NAME` makes an installed skill visible there too,
//! as a link to the installed folder (or a copy, with `--copy`).

use std::path::PathBuf;

use crate::error::InstallError;
use crate::scope::{INSTALL_FOLDER, InstallScope};

/// A known agent and its skills folder, relative to the project (and to the home folder for
/// the user's scope).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownAgent {
    /// The name `--agent` takes.
    pub name: &'static str,
    /// Its skills folder in a project.
    pub project_folder: &'static str,
    /// Its skills folder under the home folder.
    pub user_folder: &'static str,
}

/// The agents known. Those whose folder is `.agents/skills` already see every install.
pub const AGENTS: &[KnownAgent] = &[
    KnownAgent {
        name: "claude",
        project_folder: ".claude/skills",
        user_folder: ".claude/skills",
    },
    KnownAgent {
        name: "codex",
        project_folder: INSTALL_FOLDER,
        user_folder: INSTALL_FOLDER,
    },
    KnownAgent {
        name: "cursor",
        project_folder: INSTALL_FOLDER,
        user_folder: INSTALL_FOLDER,
    },
    KnownAgent {
        name: "copilot",
        project_folder: INSTALL_FOLDER,
        user_folder: INSTALL_FOLDER,
    },
    KnownAgent {
        name: "gemini",
        project_folder: INSTALL_FOLDER,
        user_folder: INSTALL_FOLDER,
    },
    KnownAgent {
        name: "goose",
        project_folder: INSTALL_FOLDER,
        user_folder: INSTALL_FOLDER,
    },
    KnownAgent {
        name: "opencode",
        project_folder: INSTALL_FOLDER,
        user_folder: INSTALL_FOLDER,
    },
    KnownAgent {
        name: "amp",
        project_folder: INSTALL_FOLDER,
        user_folder: INSTALL_FOLDER,
    },
    KnownAgent {
        name: "windsurf",
        project_folder: ".windsurf/skills",
        user_folder: ".codeium/windsurf/skills",
    },
    KnownAgent {
        name: "roo",
        project_folder: ".roo/skills",
        user_folder: ".roo/skills",
    },
    KnownAgent {
        name: "kiro",
        project_folder: ".kiro/skills",
        user_folder: ".kiro/skills",
    },
    KnownAgent {
        name: "trae",
        project_folder: ".trae/skills",
        user_folder: ".trae/skills",
    },
];

/// The agent called `name`.
///
/// # Errors
/// [`InstallError::Usage`] listing the known names.
pub fn agent(name: &str) -> Result<&'static KnownAgent, InstallError> {
    AGENTS
        .iter()
        .find(|agent| agent.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = AGENTS.iter().map(|agent| agent.name).collect();
            InstallError::Usage {
                message: format!(
                    "`--agent {name}` is not a known agent; known: {}",
                    known.join(", ")
                ),
            }
        })
}

/// The agent's skills folder in a scope, or `None` when it is the install folder itself.
#[must_use]
pub fn agent_folder(agent: &KnownAgent, scope: &InstallScope) -> Option<PathBuf> {
    let relative = if scope.global {
        agent.user_folder
    } else {
        agent.project_folder
    };
    let folder = scope.base.join(relative);
    (folder != scope.install_folder).then_some(folder)
}
