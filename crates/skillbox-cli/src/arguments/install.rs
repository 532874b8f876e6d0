//! The arguments of the commands that get skills: `add`, `install`, `update`, `remove`,
//! `outdated` and `verify`, and where they work.

use std::path::PathBuf;

use clap::Args;

/// Where `add`, `install`, `update`, `remove`, `outdated` and `verify` work.
#[derive(Debug, Args)]
pub struct InstallScopeArguments {
    /// The user's skills (`~/.agents/skills`, lock in `~/.agents/`) instead of the project's.
    #[arg(short, long)]
    pub global: bool,
    /// The project folder (default: the nearest folder with a `skillbox.toml` or
    /// `skillbox.lock` at or above the current one, else the current one).
    #[arg(long, value_name = "DIR", conflicts_with = "global")]
    pub project: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// How `add`, `install`, `update` and `outdated` reach the network.
#[derive(Debug, Args)]
pub struct FetchArguments {
    /// Also download from this host (repeatable). An index's artifacts, and every redirect,
    /// otherwise stay on the origin (scheme, host, port) where the download started. `HOST`
    /// alone means its scheme's default port.
    #[arg(long = "allow-host", value_name = "HOST[:PORT]")]
    pub allow_hosts: Vec<skillbox_install::fetch::origin::AllowedHost>,
    /// Longest a server may take to accept a connection, and a git server (`git://`, ssh) to
    /// send its next bytes while a fetch waits for them.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = skillbox_install::limits::DEFAULT_NETWORK_TIMEOUT_SECONDS,
        value_parser = clap::value_parser!(u64).range(1..=86_400)
    )]
    pub network_timeout: u64,
}

/// `skillbox outdated`.
#[derive(Debug, Args)]
pub struct OutdatedArguments {
    /// How to reach the sources.
    #[command(flatten)]
    pub fetch: FetchArguments,
    /// Where.
    #[command(flatten)]
    pub scope: InstallScopeArguments,
}

/// `skillbox add`.
#[derive(Debug, Args)]
pub struct AddArguments {
    /// A folder or archive here, a git URL (`https`, `ssh`, `git`, `file`; `.git/sub/path`,
    /// `@tag`, `@sha` or `#ref`), `owner/repo[/path][@ref]` (on `SKILLBOX_FORGE`, default
    /// GitHub), an archive URL (`.zip`, `.skill`, `.tar.gz`), or a site publishing
    /// `.well-known/agent-skills/`. Tokens come from git credential helpers or
    /// `SKILLBOX_TOKEN_<HOST>[_<PORT>]` (`GITHUB_TOKEN` for GitHub), sent only to that
    /// origin, and only when it asks for one.
    #[arg(value_name = "SOURCE")]
    pub source: String,
    /// The skill to take when the source holds several (repeatable).
    #[arg(short, long = "skill", value_name = "NAME")]
    pub skills: Vec<String>,
    /// Take every skill the source holds.
    #[arg(long, conflicts_with = "skills")]
    pub all: bool,
    /// Also show the skills in this agent's own skills folder (repeatable): claude, codex,
    /// cursor, copilot, gemini, goose, opencode, amp, windsurf, roo, kiro, trae.
    #[arg(short, long = "agent", value_name = "NAME")]
    pub agents: Vec<String>,
    /// Copies in the agents' folders instead of links.
    #[arg(long, conflicts_with = "link")]
    pub copy: bool,
    /// Links in the agents' folders (the default).
    #[arg(long)]
    pub link: bool,
    /// Answer yes to everything (skillbox asks nothing; accepted for scripts).
    #[arg(short, long)]
    pub yes: bool,
    /// Most files one skill may hold.
    #[arg(long, value_name = "N", default_value_t = 512)]
    pub max_files: usize,
    /// Most bytes one skill's files may hold.
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_bytes: u64,
    /// How to reach the source.
    #[command(flatten)]
    pub fetch: FetchArguments,
    /// Where to install.
    #[command(flatten)]
    pub scope: InstallScopeArguments,
}

/// `skillbox install`.
#[derive(Debug, Args)]
pub struct InstallArguments {
    /// Fail when `skillbox.toml` and `skillbox.lock` disagree or the lock would change (CI).
    #[arg(long)]
    pub frozen: bool,
    /// How to reach the sources.
    #[command(flatten)]
    pub fetch: FetchArguments,
    /// Where to install.
    #[command(flatten)]
    pub scope: InstallScopeArguments,
}

/// `skillbox prepare`.
#[derive(Debug, Args)]
pub struct PrepareArguments {
    /// Folders of skills (added after any --root); default: the roots skillbox reads here.
    #[arg(id = "prepare_roots", value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// Resolve every package again (the newest versions the declarations allow), even when
    /// one is installed.
    #[arg(long)]
    pub refresh: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `skillbox update`.
#[derive(Debug, Args)]
pub struct UpdateArguments {
    /// Skills to update (all when none).
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// How to reach the sources.
    #[command(flatten)]
    pub fetch: FetchArguments,
    /// Where.
    #[command(flatten)]
    pub scope: InstallScopeArguments,
}

/// `skillbox remove`.
#[derive(Debug, Args)]
pub struct RemoveArguments {
    /// Skills to remove.
    #[arg(value_name = "NAME", required = true)]
    pub names: Vec<String>,
    /// Where.
    #[command(flatten)]
    pub scope: InstallScopeArguments,
}
