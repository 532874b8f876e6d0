//! What a library caller sets when opening skill roots: seed 002's options (`include`,
//! `exclude`, `timeout`, `maxOutput`, `cwd`) and what the command line offers around a call
//! (the sandbox mode and its helper, network grants, secrets, passed variables, the approval
//! hook, the trust rule, when `find_skills` is offered, the prompt budget, the audit log).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use skillbox_exec::SandboxMode;
use skillbox_exec::executor::Secret;
use skillbox_tools::{Approval, FindSkillsOffer};

/// A script's time limit when none is set (seed 002's 30 s).
pub const DEFAULT_TIMEOUT_MS: u64 = skillbox_exec::executor::DEFAULT_TIMEOUT_MS;
/// Bytes kept of each output stream when no cap is set (seed 002's 20 KB).
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = skillbox_exec::executor::DEFAULT_MAX_OUTPUT_BYTES;

/// Which tools a provider offers and answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolOffer {
    /// What a model in an agent is offered: `load_skill`, `use_skill`, `read_skill_file`,
    /// `find_skills` when offered, the skills' `tools.json` tools, and the tools of the skill
    /// servers a session holds.
    #[default]
    Skills,
    /// Every tool the provider answers, of the skills profile and the Skills Protocol alike
    /// (`skillbox call`).
    Everything,
}

/// Which skills' code may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TrustRule {
    /// The command line's rule: skills from project-level default roots run code once trusted
    /// in the user's trust file (`skillbox trust`), and installed skills only as installed.
    /// Roots a caller names itself are its choice, and run.
    #[default]
    Roots,
    /// Every skill's code may run.
    All,
}

impl TrustRule {
    /// Parse `roots` or `all`.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "roots" => Some(TrustRule::Roots),
            "all" => Some(TrustRule::All),
            _ => None,
        }
    }
}

/// Parse a sandbox mode as the command line spells it: `best-effort`, `required` or `off`.
#[must_use]
pub fn parse_sandbox_mode(name: &str) -> Option<SandboxMode> {
    match name {
        "best-effort" => Some(SandboxMode::BestEffort),
        "required" => Some(SandboxMode::Required),
        "off" => Some(SandboxMode::Off),
        _ => None,
    }
}

/// How to open skill roots ([`crate::Provider::open`]). Built with [`Options::new`] and the
/// methods that set one thing each; every option has the command line's default.
#[derive(Clone)]
pub struct Options {
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) include: Vec<String>,
    pub(crate) exclude: Vec<String>,
    pub(crate) timeout: Duration,
    pub(crate) max_output_bytes: usize,
    pub(crate) working_directory: Option<PathBuf>,
    pub(crate) sandbox: SandboxMode,
    pub(crate) sandbox_helper: Option<PathBuf>,
    pub(crate) network: bool,
    pub(crate) network_skills: Vec<String>,
    pub(crate) secrets: BTreeMap<String, Secret>,
    pub(crate) pass_env: Vec<String>,
    pub(crate) approval: Option<Arc<dyn Approval>>,
    pub(crate) trust: TrustRule,
    pub(crate) find_skills: FindSkillsOffer,
    pub(crate) max_prompt_chars: Option<usize>,
    pub(crate) audit_log: Option<PathBuf>,
    pub(crate) runtime_directory: Option<PathBuf>,
    pub(crate) offer: ToolOffer,
    pub(crate) door: skillbox_tools::Door,
    pub(crate) max_runs: Option<usize>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Options")
            .field("roots", &self.roots)
            .field("include", &self.include)
            .field("exclude", &self.exclude)
            .field("timeout", &self.timeout)
            .field("max_output_bytes", &self.max_output_bytes)
            .field("sandbox", &self.sandbox)
            .field("approval", &self.approval.is_some())
            .finish_non_exhaustive()
    }
}

impl Options {
    /// Open `roots` (folders of skills, lowest precedence first: a later root's skill of the
    /// same name wins), with every other option at its default.
    #[must_use]
    pub fn new<P: Into<PathBuf>>(roots: impl IntoIterator<Item = P>) -> Self {
        Options {
            roots: roots.into_iter().map(Into::into).collect(),
            include: Vec::new(),
            exclude: Vec::new(),
            timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            working_directory: None,
            sandbox: SandboxMode::BestEffort,
            sandbox_helper: None,
            network: false,
            network_skills: Vec::new(),
            secrets: BTreeMap::new(),
            pass_env: Vec::new(),
            approval: None,
            trust: TrustRule::Roots,
            find_skills: FindSkillsOffer::Auto,
            max_prompt_chars: None,
            audit_log: None,
            runtime_directory: None,
            offer: ToolOffer::Skills,
            door: skillbox_tools::Door::Library,
            max_runs: None,
        }
    }

    /// Keep only the skills whose name matches one of these globs (all when none).
    #[must_use]
    pub fn include<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.include = names.into_iter().map(Into::into).collect();
        self
    }

    /// Leave out the skills whose name matches one of these globs.
    #[must_use]
    pub fn exclude<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.exclude = names.into_iter().map(Into::into).collect();
        self
    }

    /// A script's wall-clock limit; past it the run is killed (`ExecutionTimeout`).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Bytes kept of each of a run's output streams; the rest is cut with "[output truncated]".
    #[must_use]
    pub fn max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// The working folder of every run (seed 002's `cwd`). By default each run gets a fresh
    /// private folder; a folder given here must lie outside every skill root.
    #[must_use]
    pub fn working_directory(mut self, folder: impl Into<PathBuf>) -> Self {
        self.working_directory = Some(folder.into());
        self
    }

    /// How hard to insist on the sandbox: every layer the host has ([`SandboxMode::BestEffort`],
    /// the default), every layer or nothing runs ([`SandboxMode::Required`]), or none.
    #[must_use]
    pub fn sandbox(mut self, mode: SandboxMode) -> Self {
        self.sandbox = mode;
        self
    }

    /// The sandbox helper binary (`skillbox-sandbox`). By default the one beside the current
    /// executable; a program whose executable is an interpreter (Python, Node) names its own.
    #[must_use]
    pub fn sandbox_helper(mut self, program: impl Into<PathBuf>) -> Self {
        self.sandbox_helper = Some(program.into());
        self
    }

    /// Let every skill's scripts use the network (off by default).
    #[must_use]
    pub fn allow_network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// Let the scripts of these skills use the network.
    #[must_use]
    pub fn allow_network_for<S: Into<String>>(
        mut self,
        skills: impl IntoIterator<Item = S>,
    ) -> Self {
        self.network_skills = skills.into_iter().map(Into::into).collect();
        self
    }

    /// Give the secret `name` with `value` to the skills that declare it: every one when
    /// `skills` is `None`, else only those named.
    #[must_use]
    pub fn secret(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
        skills: Option<BTreeSet<String>>,
    ) -> Self {
        self.secrets.insert(
            name.into(),
            Secret {
                value: value.into(),
                skills,
            },
        );
        self
    }

    /// Pass these variables of this process's environment through to scripts (e.g. `TZ`).
    #[must_use]
    pub fn pass_env<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.pass_env = names.into_iter().map(Into::into).collect();
        self
    }

    /// Ask `approval` before every call that runs code or starts a skill's server; a denial
    /// is answered to the model as `ScriptNotAllowed`.
    #[must_use]
    pub fn approval(mut self, approval: Arc<dyn Approval>) -> Self {
        self.approval = Some(approval);
        self
    }

    /// Which skills' code may run ([`TrustRule::Roots`] by default).
    #[must_use]
    pub fn trust(mut self, rule: TrustRule) -> Self {
        self.trust = rule;
        self
    }

    /// When `find_skills` is offered: by default when the prompt budget leaves skills out.
    #[must_use]
    pub fn find_skills(mut self, offer: FindSkillsOffer) -> Self {
        self.find_skills = offer;
        self
    }

    /// The most characters the system prompt's skill list takes; skills past it are reached
    /// with `find_skills` (or `list_skills`).
    #[must_use]
    pub fn max_prompt_chars(mut self, chars: usize) -> Self {
        self.max_prompt_chars = Some(chars);
        self
    }

    /// Append a line per run to this file.
    #[must_use]
    pub fn audit_log(mut self, file: impl Into<PathBuf>) -> Self {
        self.audit_log = Some(file.into());
        self
    }

    /// The runtime's private folder (bootstraps, unpacked archives, run folders). By default
    /// the runtime folder the command line uses.
    #[must_use]
    pub fn runtime_directory(mut self, folder: impl Into<PathBuf>) -> Self {
        self.runtime_directory = Some(folder.into());
        self
    }

    /// Which tools are offered and answered ([`ToolOffer::Skills`] by default).
    #[must_use]
    pub fn offer(mut self, offer: ToolOffer) -> Self {
        self.offer = offer;
        self
    }

    /// The door calls are counted and logged under (`library` by default; each binding
    /// names its own).
    #[must_use]
    pub fn door(mut self, door: skillbox_tools::Door) -> Self {
        self.door = door;
        self
    }

    /// How many calls that run code run at once; more wait in the queue (four times as many),
    /// then are answered `Busy`. By default as many as the machine has cores.
    #[must_use]
    pub fn max_runs(mut self, runs: usize) -> Self {
        self.max_runs = Some(runs.max(1));
        self
    }
}
