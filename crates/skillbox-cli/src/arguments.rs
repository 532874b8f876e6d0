//! Command-line arguments (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Discover, validate and inspect Agent Skills.
#[derive(Debug, Parser)]
#[command(name = "skillbox", version, about, long_about = None)]
pub struct Arguments {
    /// Options every command takes.
    #[command(flatten)]
    pub global: GlobalOptions,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options shared by all commands.
#[derive(Debug, Args)]
pub struct GlobalOptions {
    /// A skill root (folder of skills, one skill folder, a SKILL.md, or a .zip/.skill archive).
    /// Repeatable; later roots override earlier ones. Replaces `SKILLBOX_ROOTS` and the defaults.
    #[arg(long = "root", value_name = "DIR", global = true)]
    pub roots: Vec<PathBuf>,
    /// More log output on stderr (-v info, -vv debug). `SKILLBOX_LOG` sets a filter directly.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the skills found under the roots.
    List(ListArguments),
    /// Check skills against the agentskills spec and skillbox's formats.
    Validate(ValidateArguments),
    /// Show one skill: metadata, tools, resources, diagnostics and body.
    Show(ShowArguments),
}

/// `skillbox list`.
#[derive(Debug, Args)]
pub struct ListArguments {
    /// Roots to list (added after any --root).
    #[arg(id = "list_roots", value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// Print a JSON array, one object per skill version.
    #[arg(long)]
    pub json: bool,
    /// Only skills whose name matches this glob (repeatable).
    #[arg(long, value_name = "NAME")]
    pub include: Vec<String>,
    /// Leave out skills whose name matches this glob (repeatable).
    #[arg(long, value_name = "NAME")]
    pub exclude: Vec<String>,
}

/// `skillbox validate`.
#[derive(Debug, Args)]
pub struct ValidateArguments {
    /// Skill folders, SKILL.md files, archives, or roots holding many skills.
    #[arg(id = "validate_paths", value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Apply the agentskills spec exactly as skills-ref does (only its six fields).
    #[arg(long)]
    pub strict: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `skillbox show`.
#[derive(Debug, Args)]
pub struct ShowArguments {
    /// The skill's name (or dotted id).
    pub name: String,
    /// A specific version (default: the latest by semver).
    #[arg(long = "version", id = "skill_version", value_name = "VERSION")]
    pub version: Option<String>,
    /// Print everything as JSON.
    #[arg(long)]
    pub json: bool,
}
