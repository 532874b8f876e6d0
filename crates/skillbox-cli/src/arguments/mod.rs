//! Command-line arguments (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

mod install;

pub use install::{
    AddArguments, FetchArguments, InstallArguments, InstallScopeArguments, OutdatedArguments,
    PrepareArguments, RemoveArguments, UpdateArguments,
};

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
    /// Repeatable; later roots override earlier ones. Every command also takes roots after its
    /// own arguments (`find` only with this flag). Replaces `SKILLBOX_ROOTS` and the defaults.
    #[arg(short = 'r', long = "root", value_name = "DIR", global = true)]
    pub roots: Vec<PathBuf>,
    /// More log output on stderr (-v info, -vv debug). `SKILLBOX_LOG` sets a filter directly.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Execution options (used by commands that run code).
    #[command(flatten)]
    pub execution: ExecutionOptions,
    /// Most characters of the skills section of the system prompt that models get (`serve`,
    /// `mcp`, `ask`, `chat`, `tools`). Descriptions are shortened first, then skills left out;
    /// models find those with `find_skills`. 0: no limit.
    #[arg(
        long,
        value_name = "N",
        default_value_t = DEFAULT_MAX_PROMPT_CHARS,
        env = "SKILLBOX_MAX_PROMPT_CHARS",
        global = true
    )]
    pub max_prompt_chars: usize,
    /// When models are offered `find_skills`: `auto` (when the prompt leaves skills out),
    /// `always` or `never`.
    #[arg(long, default_value = "auto", value_parser = ["auto", "always", "never"], global = true)]
    pub find_skills: String,
}

/// Default of `--max-prompt-chars`: about 4,000 tokens, 2% of a 200,000-token context.
pub const DEFAULT_MAX_PROMPT_CHARS: usize = 16_000;

/// How commands that run skill code run it.
#[derive(Debug, Args)]
pub struct ExecutionOptions {
    /// Sandbox mode: `required` refuses to run without every layer, `best-effort` uses what
    /// the host has (with a warning), `off` runs with the runtime's privileges.
    #[arg(
        long,
        value_enum,
        default_value = "best-effort",
        env = "SKILLBOX_SANDBOX",
        global = true
    )]
    pub sandbox: SandboxModeArgument,
    /// Let every skill's scripts use the network (off by default).
    #[arg(long, global = true)]
    pub allow_network: bool,
    /// Let this skill's scripts use the network (repeatable).
    #[arg(long, value_name = "SKILL", global = true)]
    pub allow_network_for: Vec<String>,
    /// Append one JSON line per execution to this file.
    #[arg(long, value_name = "FILE", env = "SKILLBOX_AUDIT_LOG", global = true)]
    pub audit_log: Option<PathBuf>,
    /// Pass this environment variable to skills that declare it as a secret (repeatable).
    /// `NAME:SKILL[,SKILL...]` gives it only to the named skills (when they declare it).
    #[arg(long = "secret", value_name = "NAME[:SKILLS]", global = true)]
    pub secrets: Vec<String>,
    /// Pass this environment variable through to every script (repeatable).
    #[arg(long = "pass-env", value_name = "NAME", global = true)]
    pub pass_env: Vec<String>,
    /// Run every script in this folder instead of a fresh workspace.
    #[arg(long, value_name = "DIR", global = true)]
    pub workdir: Option<PathBuf>,
    /// Spawn tool handlers per call instead of keeping warm workers.
    #[arg(long, global = true)]
    pub no_warm_workers: bool,
    /// Run `` !`command` `` patterns (in the sandbox) when a skill body is loaded.
    #[arg(long, global = true)]
    pub preprocess_commands: bool,
    /// Seconds a skill's MCP server may take to start (answer `initialize` and `tools/list`)
    /// when its skill is loaded; one that takes longer is reported to the model as unavailable.
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=600), global = true)]
    pub server_start_timeout: u64,
    /// Seconds a skill's MCP server may stay unused before it is stopped (its next call starts
    /// it again).
    #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400), global = true)]
    pub server_idle_timeout: u64,
    /// Most skill MCP servers running as processes at once; a load past it reports the server
    /// as unavailable.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1024), global = true)]
    pub max_servers: u64,
}

/// `--sandbox` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SandboxModeArgument {
    /// Refuse to run without every layer.
    Required,
    /// Use what the host has.
    BestEffort,
    /// No sandbox.
    Off,
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
    /// Search the skills for a task, as a model does with `find_skills`.
    Find(FindArguments),
    /// Run a script of a skill in the sandbox.
    Run(RunArguments),
    /// Call a tool and print what the model would receive.
    Call(CallArguments),
    /// Report what the sandbox can do on this host.
    Doctor(DoctorArguments),
    /// Print the system-prompt section that lists the skills for a model.
    Prompt(PromptArguments),
    /// Print the tool definitions in a provider's format.
    Tools(ToolsArguments),
    /// Serve the Skills Protocol (JSON-RPC 2.0 at POST /rpc).
    Serve(ServeArguments),
    /// Serve the skills over MCP on stdin and stdout (for MCP clients that start a command).
    Mcp(McpArguments),
    /// Ask a model one question; it may load and run skills to answer.
    Ask(AskArguments),
    /// Talk with a model that can load and run skills (line editing, history, `/name args`).
    Chat(ChatArguments),
    /// Let the code of a project's skill folders run (or list the trusted folders).
    Trust(TrustArguments),
    /// Stop trusting a skill folder: its skills' code no longer runs.
    Untrust(UntrustArguments),
    /// Install skills from a folder, git repository, archive, `.well-known` index or plugin
    /// into the project's `.agents/skills` (recorded in `skillbox.toml` and `skillbox.lock`).
    Add(AddArguments),
    /// Make the installed skills exactly what `skillbox.lock` says (locking what
    /// `skillbox.toml` adds first, unless `--frozen`).
    Install(InstallArguments),
    /// Fetch installed skills' sources again and install what they hold now.
    Update(UpdateArguments),
    /// Remove installed skills (their folders, links, manifest and lock entries).
    Remove(RemoveArguments),
    /// List installed skills whose source now holds other files (exit 1 when any).
    Outdated(OutdatedArguments),
    /// Check installed skills' files against `skillbox.lock`, naming each changed, added or
    /// missing file (exit 1 when any).
    Verify(InstallScopeArguments),
    /// Install ahead the npm and PyPI servers (`npx`, `uvx`) of skills no lock installed (a
    /// trusted project folder, your own folders), so they run offline in the sandbox.
    Prepare(PrepareArguments),
    /// Create a skill skeleton that validates as written: instructions to fill in, an example
    /// script or tool, and eval files.
    New(NewArguments),
    /// Validate a skill and write it as a reproducible `.skill` archive (or, with `--index`, a
    /// folder of skills as a `.well-known/agent-skills/` index with its artifacts).
    Pack(PackArguments),
    /// Test skills on a model: does each trigger when it should (`evals/triggers.json`), and
    /// does it make answers better (`evals/evals.json`)?
    Eval(EvalArguments),
}

/// `skillbox trust`.
#[derive(Debug, Args)]
pub struct TrustArguments {
    /// Folders to trust (added after any --root); default: the project skill folders under the
    /// current directory (`skills/`, `.opencode/skills/`, `.claude/skills/`, `.agents/skills/`).
    #[arg(id = "trust_roots", value_name = "ROOT", conflicts_with = "list")]
    pub roots: Vec<PathBuf>,
    /// `pin`: a skill changed or added later needs trusting again; `follow`: trust whatever the
    /// folder holds later. Default: the folder's recorded policy, else `pin`.
    #[arg(long, value_enum, value_name = "POLICY", conflicts_with = "list")]
    pub trust_policy: Option<TrustPolicyArgument>,
    /// List the trusted folders instead.
    #[arg(long)]
    pub list: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `--trust-policy` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TrustPolicyArgument {
    /// Only the skills as they are now.
    Pin,
    /// Whatever the folder holds later.
    Follow,
}

/// `skillbox untrust`.
#[derive(Debug, Args)]
pub struct UntrustArguments {
    /// The trusted folders to forget (as `skillbox trust --list` shows them, or any path to them).
    #[arg(id = "untrust_roots", value_name = "ROOT", required = true)]
    pub roots: Vec<PathBuf>,
}

/// `skillbox serve`.
#[derive(Debug, Args)]
pub struct ServeArguments {
    /// Skill roots (added after any --root).
    #[arg(id = "serve_roots", value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// Address to listen on; anything but loopback needs a token.
    #[arg(long, default_value = "127.0.0.1:7878", value_name = "ADDR")]
    pub listen: std::net::SocketAddr,
    /// Where blobs are kept (default: the user's data folder, `skillbox/`).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Keep blobs here instead of under --data-dir: `file:///folder`, or a bucket shared by
    /// several replicas, `s3://bucket/prefix`, configured by the AWS environment
    /// (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY); `gs://` and
    /// `az://` are accepted too, untested. Never put credentials in the URL.
    #[arg(
        long,
        env = "SKILLBOX_BLOB_STORE",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub blob_store: Option<String>,
    /// Require `Authorization: Bearer TOKEN` on every request.
    #[arg(
        long,
        env = "SKILLBOX_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub token: Option<String>,
    /// Runs (`execute_skill`, `run_code`) executing at once (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub max_runs: Option<u16>,
    /// Runs waiting for a turn; past this, callers get a "busy, retry" error (default: four
    /// times --max-runs).
    #[arg(long, value_name = "N")]
    pub max_queued_runs: Option<u16>,
    /// Also answer requests addressed to this host name, and from web pages served from it
    /// (repeatable). Without a token only localhost, 127.0.0.1 and [::1] are answered, against
    /// DNS rebinding; with a token any name is, unless names are given here.
    #[arg(
        long = "allowed-host",
        env = "SKILLBOX_ALLOWED_HOSTS",
        value_delimiter = ',',
        value_name = "NAME",
        value_parser = skillbox_server::access::allowed_host_name
    )]
    pub allowed_hosts: Vec<String>,
    /// Close connections whose request line and headers take longer than this to arrive (also
    /// how long an idle keep-alive connection stays open; default 15000).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub header_read_timeout_ms: Option<u64>,
    /// The tools `/mcp` offers: `skills` (load_skill, use_skill, read_skill_file and every
    /// tools.json tool) or `protocol` (the eight Skills Protocol tools).
    #[arg(long, default_value = "skills", value_parser = ["skills", "protocol"])]
    pub mcp_profile: String,
    /// MCP sessions `/mcp` keeps open at once (and as many 2026-07-28 subscription streams);
    /// a new one past this is refused until one ends (default 1024).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub max_mcp_sessions: Option<u16>,
    /// Do not reload the skills when their files change.
    #[arg(long)]
    pub no_watch: bool,
    /// The model the web app's chat page asks (as `skillbox ask` takes it).
    #[command(flatten, next_help_heading = "Chat in the web app")]
    pub chat: ModelArguments,
    /// Another model the chat page offers, on the same server as --model (repeatable).
    #[arg(long, value_name = "MODEL", help_heading = "Chat in the web app")]
    pub also_model: Vec<String>,
}

/// `skillbox mcp`.
#[derive(Debug, Args)]
pub struct McpArguments {
    /// Skill roots (added after any --root).
    #[arg(id = "mcp_roots", value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// `skills`: load_skill, use_skill, read_skill_file and every tools.json tool; `protocol`:
    /// the eight Skills Protocol tools.
    #[arg(long, default_value = "skills", value_parser = ["skills", "protocol"])]
    pub profile: String,
    /// Do not reload the skills when their files change.
    #[arg(long)]
    pub no_watch: bool,
    /// Where the protocol profile keeps blobs and run files (default: as `serve`, `skillbox/`
    /// in the user's data folder).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

/// `skillbox prompt`.
#[derive(Debug, Args)]
pub struct PromptArguments {
    /// Skill roots (added after any --root).
    #[arg(id = "prompt_roots", value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// `markdown`, `xml` (as skills-ref to-prompt) or `json`.
    #[arg(long, default_value = "markdown", value_parser = ["markdown", "xml", "json"])]
    pub format: String,
    /// Keep the section within this many characters.
    #[arg(long, value_name = "N")]
    pub max_chars: Option<usize>,
    /// Keep the section within about this many tokens (characters / 4).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<usize>,
}

/// `skillbox tools`.
#[derive(Debug, Args)]
pub struct ToolsArguments {
    /// Skill roots (added after any --root).
    #[arg(id = "tools_roots", value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// `openai`, `responses`, `anthropic`, `gemini` or `mcp`.
    #[arg(long, default_value = "openai", value_parser = ["openai", "responses", "anthropic", "gemini", "mcp"])]
    pub format: String,
    /// `skills` (load_skill, use_skill, read_skill_file and tools.json tools) or `protocol` (the 8 Skills Protocol tools).
    #[arg(long, default_value = "skills", value_parser = ["skills", "protocol"])]
    pub profile: String,
}

/// `skillbox run`.
#[derive(Debug, Args)]
pub struct RunArguments {
    /// The skill.
    pub skill: String,
    /// The script: a path inside the skill, or a file name at its root or in `scripts/`.
    pub script: String,
    /// Skill roots (added after any --root).
    #[arg(id = "run_roots", value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// Arguments passed to the script as they are (after `--`).
    #[arg(last = true, value_name = "ARG")]
    pub args: Vec<String>,
    /// Print the result object as JSON instead of streaming the output.
    #[arg(long)]
    pub json: bool,
    /// Time limit in milliseconds (default 30000).
    #[arg(long, value_name = "N")]
    pub timeout_ms: Option<u64>,
}

/// `skillbox call`.
#[derive(Debug, Args)]
pub struct CallArguments {
    /// The tool's name.
    pub tool: String,
    /// Skill roots (added after any --root).
    #[arg(id = "call_roots", value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// The arguments as a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub args: String,
    /// Where blobs are kept, for `execute_skill`, `run_code`, `create_blob` and `read_blob`
    /// (default: as for `skillbox serve`, the user's data folder, `skillbox/`).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Time limit in milliseconds (default 30000) of the code the call runs: a `use_skill`
    /// script, a `tools.json` handler, the commands a `load_skill` runs, and `execute_skill` or
    /// `run_code` when their arguments set no `timeout_ms` (at most 240000 for those).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: Option<u64>,
}

/// `skillbox doctor`.
#[derive(Debug, Args)]
pub struct DoctorArguments {
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
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
    /// Count warnings as errors: exit 1 when anything warns (every check still applies).
    #[arg(long)]
    pub strict: bool,
    /// Check only the agentskills spec, exactly as the reference implementation skills-ref
    /// does: its six frontmatter fields and name rules, and none of skillbox's own checks
    /// (`tools.json`, `skill.toml`, extension fields).
    #[arg(long, visible_alias = "as-skills-ref")]
    pub spec_only: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `skillbox find`.
#[derive(Debug, Args)]
pub struct FindArguments {
    /// Words that describe the task (several words may be given without quotes).
    #[arg(value_name = "QUERY", required = true, num_args = 1..)]
    pub query: Vec<String>,
    /// Most skills to show (1 to 50).
    #[arg(long, value_name = "N", default_value_t = skillbox_core::search::DEFAULT_SEARCH_LIMIT)]
    pub limit: usize,
    /// Also find the skills hidden from models (`disable-model-invocation`).
    #[arg(long)]
    pub all: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `skillbox show`.
#[derive(Debug, Args)]
pub struct ShowArguments {
    /// The skill's name (or dotted id).
    pub name: String,
    /// Skill roots (added after any --root).
    #[arg(id = "show_roots", value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// A specific version (default: the copy in effect: the latest root holding the name, its highest version).
    #[arg(long = "version", id = "skill_version", value_name = "VERSION")]
    pub version: Option<String>,
    /// Print everything as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Which model to ask and how: shared by `ask`, `chat` and the web app of `serve`. Flags win
/// over the environment, which wins over the config file (`$SKILLBOX_CONFIG`, default
/// `~/.config/skillbox/config.toml`, section `[agent]`).
#[derive(Debug, Args)]
pub struct ModelArguments {
    /// The API spoken: `responses` (OpenRouter/OpenAI Responses API), `chat` (Chat
    /// Completions: OpenAI and every OpenAI-compatible server) or `anthropic` (Messages).
    /// Default: `chat` with a --base-url, else by the API key set.
    #[arg(long, value_name = "API", env = "SKILLBOX_PROVIDER")]
    pub provider: Option<String>,
    /// The model's name (default: one per known host).
    #[arg(long, value_name = "MODEL", env = "SKILLBOX_MODEL")]
    pub model: Option<String>,
    /// The API's base URL (`http://127.0.0.1:8080/v1` for a local server).
    #[arg(long, value_name = "URL", env = "SKILLBOX_BASE_URL")]
    pub base_url: Option<String>,
    /// The environment variable holding the API key (default: by host, e.g.
    /// `OPENROUTER_API_KEY`; `SKILLBOX_API_KEY` for other hosts).
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Model calls per turn at most (default 10).
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,
    /// Tokens per model call at most (default 4096).
    #[arg(long, value_name = "N")]
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature.
    #[arg(long, value_name = "T")]
    pub temperature: Option<f32>,
    /// The base system prompt (the skills section follows it).
    #[arg(long, value_name = "TEXT")]
    pub system: Option<String>,
    /// Before code runs (use_skill, a tool handler, define_tool): `allow`, `deny`, or `ask`
    /// (on the terminal; in the web app, an approval card) (default: allow).
    #[arg(long, value_name = "POLICY")]
    pub approve: Option<String>,
    /// Offer a skill's tools.json tools only after it is loaded.
    #[arg(long)]
    pub tools_on_load: bool,
    /// Refuse tool calls outside the active skill's allowed-tools.
    #[arg(long)]
    pub enforce_allowed_tools: bool,
}

/// `ask` and `chat`'s options: the model, and where conversations are kept.
#[derive(Debug, Args)]
pub struct AgentArguments {
    /// Which model, and how it runs.
    #[command(flatten)]
    pub model: ModelArguments,
    /// Ask on the terminal before any code runs (same as --approve ask).
    #[arg(long, conflicts_with = "approve")]
    pub confirm: bool,
    /// Where transcripts are kept (default: the user's data folder, `skillbox/`).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Do not save a transcript.
    #[arg(long)]
    pub no_transcript: bool,
    /// Continue a saved conversation (its id, or the start of it).
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
}

/// `skillbox ask`.
#[derive(Debug, Args)]
pub struct AskArguments {
    /// What to ask (`/name args` invokes a skill).
    pub prompt: String,
    /// Skill roots (added after any --root).
    #[arg(id = "ask_roots", value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// Model options.
    #[command(flatten)]
    pub agent: AgentArguments,
    /// Print the events as JSON lines on stdout instead of the answer.
    #[arg(long)]
    pub json: bool,
}

/// `skillbox chat`.
#[derive(Debug, Args)]
pub struct ChatArguments {
    /// Skill roots (added after any --root).
    #[arg(id = "chat_roots", value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// Model options.
    #[command(flatten)]
    pub agent: AgentArguments,
    /// List the saved conversations and exit.
    #[arg(long)]
    pub list: bool,
    /// With --list, print JSON.
    #[arg(long, requires = "list")]
    pub json: bool,
}

/// `skillbox new`.
#[derive(Debug, Args)]
pub struct NewArguments {
    /// The skill's name (lowercase letters, digits and hyphens): the folder's name too.
    pub name: String,
    /// The folder the skill folder is made in (default: the current one).
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Give the skill a `tools.json` tool with a working handler.
    #[arg(long)]
    pub tools: bool,
    /// The language of the example script or handler.
    #[arg(long, value_enum, default_value = "python")]
    pub script: ScriptLanguage,
    /// The skill's format: a plain Agent Skill, one with typed tools (`tools.json`), or a
    /// Skills Protocol manifest (`skill.toml`).
    #[arg(long, value_enum, default_value = "agent-skill")]
    pub format: SkillFormatArgument,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `--script` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScriptLanguage {
    /// Python 3.
    Python,
    /// Node.js.
    Node,
    /// Bash.
    Bash,
}

/// `--format` values of `new`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SkillFormatArgument {
    /// `SKILL.md` with scripts (the agentskills.io format).
    AgentSkill,
    /// `SKILL.md` with typed tools in `tools.json`.
    SkillTools,
    /// A Skills Protocol manifest (`skill.toml`) beside `SKILL.md`.
    Protocol,
}

/// `skillbox pack`.
#[derive(Debug, Args)]
pub struct PackArguments {
    /// The skill folder (or, with --index, the folder of skill folders).
    pub path: PathBuf,
    /// Where to write: the archive (default: `NAME.skill` in the current folder), or with
    /// --index the folder that receives `.well-known/agent-skills/`.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Publish a folder of skills as a discovery index (`.well-known/agent-skills/index.json`
    /// and one artifact per skill) under --output.
    #[arg(long)]
    pub index: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `skillbox eval`.
#[derive(Debug, Args)]
pub struct EvalArguments {
    /// The skills to test: skill folders, or names of skills under the roots (default: every
    /// skill under the roots that has an `evals/` folder).
    #[arg(value_name = "PATH|NAME")]
    pub targets: Vec<String>,
    /// Another root of skills offered beside the tested ones, as neighbours the model must
    /// tell apart (repeatable).
    #[arg(long, value_name = "DIR")]
    pub distractors: Vec<PathBuf>,
    /// Which model, and how it runs.
    #[command(flatten)]
    pub model: ModelArguments,
    /// The model that grades free-text expectations (default: the tested model).
    #[arg(long, value_name = "MODEL")]
    pub judge_model: Option<String>,
    /// Run every query and task this many times (the report gives mean and spread).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: u32,
    /// Model requests in flight at once.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub jobs: usize,
    /// The longest one query or task may take, in seconds (a model that never answers is
    /// reported as such, and the run goes on).
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub run_timeout: u64,
    /// Also run each task without the skill, to measure what the skill adds.
    #[arg(long)]
    pub baseline: bool,
    /// Run only the trigger evals.
    #[arg(long, conflicts_with = "tasks_only")]
    pub triggers_only: bool,
    /// Run only the task evals.
    #[arg(long)]
    pub tasks_only: bool,
    /// Propose description rewrites and keep the one that triggers best on held-out queries.
    #[arg(long, conflicts_with = "tasks_only")]
    pub improve_description: bool,
    /// Rewrites proposed by --improve-description.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 3,
        requires = "improve_description"
    )]
    pub candidates: u32,
    /// With --improve-description, write the best description into SKILL.md.
    #[arg(long, requires = "improve_description")]
    pub write: bool,
    /// Ask the model again instead of answering from the response cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Exit 1 when a skill's trigger recall is below this (0 to 1).
    #[arg(long, value_name = "F")]
    pub min_recall: Option<f64>,
    /// Exit 1 when a skill's trigger precision is below this (0 to 1).
    #[arg(long, value_name = "F")]
    pub min_precision: Option<f64>,
    /// Exit 1 when a skill's task pass rate (with the skill) is below this (0 to 1).
    #[arg(long, value_name = "F")]
    pub min_pass_rate: Option<f64>,
    /// Where reports, `benchmark.json` and transcripts are written (default: a new folder
    /// under the data folder's `evals/`, which `skillbox serve` shows at /evals).
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// The data folder (default: the user's data folder, `skillbox/`).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write a JUnit XML report here (one test case per query and task).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}
