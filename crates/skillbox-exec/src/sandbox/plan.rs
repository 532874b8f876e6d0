//! The [`SandboxPlan`]: everything the helper needs to set up one execution, passed to it as
//! JSON, and the exit codes by which the helper says it could not.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::cgroups;
use super::layers::SandboxLayers;
use super::policy::ResourceLimits;
use super::root_layout::RootLayout;

/// The prefix the program's environment carries on its way through the helper: the helper is
/// started with `PATH` and these variables only, and gives the program each without the prefix.
/// So no variable meant for the program (a skill's `LD_PRELOAD`, `GCONV_PATH`, `MALLOC_…` or
/// `SKILLBOX_LOG`) acts on the helper, which runs with the runtime's rights before it confines
/// itself; secrets stay out of its command line.
pub const PROGRAM_ENVIRONMENT_PREFIX: &str = "SKILLBOX_PROGRAM_ENV_";

/// Exit code the helper uses when it could not set the sandbox up (nothing ran).
pub const HELPER_SETUP_FAILED: i32 = 125;
/// Exit code the helper uses when the program could not be executed.
pub const HELPER_EXEC_FAILED: i32 = 127;

/// Everything the helper needs to set up one execution; passed to it as JSON. A field the
/// helper does not know is refused: a helper older than its runtime must fail, never run a
/// program without a setting it cannot read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxPlan {
    /// Layers to apply.
    pub layers: SandboxLayers,
    /// Whether the network stays reachable (no network namespace, no TCP or socket rules).
    pub network: bool,
    /// The writable workspace; the working directory unless `working_directory` says another.
    pub workspace: PathBuf,
    /// Where the program starts, when not the workspace (a skill's MCP server starts in its
    /// skill's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_directory: Option<PathBuf>,
    /// Extra read-only (and executable) paths: the skill folder, the interpreter's prefix.
    pub readable: Vec<PathBuf>,
    /// Extra writable paths.
    pub writable: Vec<PathBuf>,
    /// Resource limits.
    pub limits: ResourceLimits,
    /// uid and gid to drop to when `layers.uid_drop`.
    pub uid: u32,
    /// See `uid`.
    pub gid: u32,
    /// Limits of the run's own control group, when the host gives each run one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<cgroups::GroupLimits>,
    /// A random token the helper puts in its own error lines, so the runtime can tell them
    /// from look-alike lines a program prints.
    #[serde(default)]
    pub setup_token: String,
    /// The prefix the program's environment carries in the helper's
    /// ([`PROGRAM_ENVIRONMENT_PREFIX`]); empty: the helper's environment is the program's. A
    /// helper older than this field refuses the plan rather than pass the prefixed names on.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub program_environment_prefix: String,
    /// Build a minimal root for the program (needs `layers.namespaces`); `None` keeps the
    /// host's file tree (narrowed by Landlock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<RootLayout>,
}
