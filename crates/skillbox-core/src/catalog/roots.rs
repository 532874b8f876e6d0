//! Where skills are discovered: a [`SkillRoot`] and where it came from ([`RootOrigin`]), the
//! default roots of a project and a user, `SKILLBOX_ROOTS`, and the names only the runtime's
//! own root may use.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// Environment variable holding colon-separated skill roots; replaces the default roots.
pub const ROOTS_ENVIRONMENT_VARIABLE: &str = "SKILLBOX_ROOTS";

/// Project-level default roots, relative to the working directory, lowest precedence first.
pub const PROJECT_DEFAULT_ROOTS: &[&str] = &[
    "skills",
    ".opencode/skills",
    ".claude/skills",
    ".agents/skills",
];

/// User-level default roots, relative to the home directory, lowest precedence first. They sit
/// below every project root.
pub const USER_DEFAULT_ROOTS: &[&str] = &[".claude/skills", ".agents/skills"];

/// The name of the Skills Protocol guide, the instruction skill every runtime ships.
pub const PROTOCOL_GUIDE_SKILL_NAME: &str = "skills.protocol.guide";

/// Skill names only a [`RootOrigin::Builtin`] root may use. A skill from any other root with one
/// of these names is refused: otherwise a root could replace what the runtime itself answers
/// (a later root wins for a name, and any version can be asked for).
pub const RESERVED_SKILL_NAMES: &[&str] = &[PROTOCOL_GUIDE_SKILL_NAME];

/// Where a root came from; default roots that do not exist are passed over quietly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RootOrigin {
    /// Named on the command line or by the library caller.
    Explicit,
    /// From `SKILLBOX_ROOTS`.
    Environment,
    /// A project-level default.
    Project,
    /// A user-level default.
    User,
    /// The runtime's own skills (the protocol guide): the only root whose skills may use the
    /// [`RESERVED_SKILL_NAMES`].
    Builtin,
}

/// One place skills are discovered under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillRoot {
    /// A folder of skills, a single skill folder, a `SKILL.md`, or a skill archive.
    pub path: PathBuf,
    /// Where it came from.
    pub origin: RootOrigin,
}

impl SkillRoot {
    /// An explicitly named root.
    pub fn explicit(path: impl Into<PathBuf>) -> Self {
        SkillRoot {
            path: path.into(),
            origin: RootOrigin::Explicit,
        }
    }

    /// The root holding the runtime's built-in skills.
    pub fn builtin(path: impl Into<PathBuf>) -> Self {
        SkillRoot {
            path: path.into(),
            origin: RootOrigin::Builtin,
        }
    }

    /// The default roots, lowest precedence first: the user-level ones under `home`, then the
    /// project-level ones under `working_directory` (seed 000 order: later overrides earlier).
    #[must_use]
    pub fn defaults(working_directory: &Path, home: Option<&Path>) -> Vec<SkillRoot> {
        let user = home.into_iter().flat_map(|home| {
            USER_DEFAULT_ROOTS.iter().map(move |relative| SkillRoot {
                path: home.join(relative),
                origin: RootOrigin::User,
            })
        });
        let project = PROJECT_DEFAULT_ROOTS.iter().map(|relative| SkillRoot {
            path: working_directory.join(relative),
            origin: RootOrigin::Project,
        });
        user.chain(project).collect()
    }

    /// Roots from a colon-separated list (the `SKILLBOX_ROOTS` format); empty parts are ignored.
    #[must_use]
    pub fn from_path_list(list: &str) -> Vec<SkillRoot> {
        list.split(':')
            .filter(|part| !part.trim().is_empty())
            .map(|part| SkillRoot {
                path: PathBuf::from(part.trim()),
                origin: RootOrigin::Environment,
            })
            .collect()
    }

    /// The roots to use when a caller names none: `SKILLBOX_ROOTS` when set, else the defaults.
    #[must_use]
    pub fn from_environment_or_defaults(working_directory: &Path) -> Vec<SkillRoot> {
        match std::env::var(ROOTS_ENVIRONMENT_VARIABLE) {
            Ok(list) if !list.trim().is_empty() => Self::from_path_list(&list),
            _ => Self::defaults(working_directory, dirs::home_dir().as_deref()),
        }
    }
}
