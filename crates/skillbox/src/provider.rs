//! [`Provider`]: seed 002's `createSkillsProvider` as a Rust value. It holds one catalog
//! snapshot, its executor and one door policy, renders the system prompt and the tool
//! definitions, and answers tool calls through `DoorPolicy::call`, the one way every door
//! takes to the executor.

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot, ValidationMode};
use skillbox_exec::{Executor, ExecutorConfig, HelperCommand, SandboxPolicy, WorkerPoolConfig};
use skillbox_services::RunLimits;
use skillbox_tools::{
    Approval, Arguments, CallContext, CallStatus, Door, DoorPolicy, Offer, PromptBudget,
    PromptFormat, ProviderOptions, SkillsProvider, ToolFormat, ToolOutcome, ToolProfile,
    Unbudgeted, render_tools,
};
use skillbox_trust::{TrustGate, TrustStore};

use crate::error::OpenError;
use crate::options::{Options, ToolOffer, TrustRule};
use crate::session::Session;
use crate::shared_runtime::shared_runtime;

/// Skill roots opened for a model: the system prompt, the tool definitions, and the answer to
/// each tool call. Clones share everything (the catalog, the executor, the run queue).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let skills_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills");
/// use skillbox::{Options, Provider, SandboxMode, ToolFormat};
///
/// // The sandbox helper is found beside the executable; doc tests have none, and run no code.
/// let skills = Provider::open(
///     Options::new([skills_dir])
///         .include(["text-tools"])
///         .sandbox(SandboxMode::Off),
/// )?;
/// assert_eq!(skills.skill_names(), ["text-tools"]);
/// assert!(skills.system_prompt().contains("### text-tools"));
/// let tools = skills.tools(ToolFormat::Responses);
/// assert_eq!(tools[0]["name"], "load_skill");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Provider {
    provider: Arc<SkillsProvider>,
    policy: DoorPolicy,
    approval: Option<Arc<dyn Approval>>,
    offer: ToolOffer,
    door: Door,
    system_prompt: Arc<OnceLock<String>>,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Provider")
            .field("provider", &self.provider)
            .field("offer", &self.offer)
            .field("door", &self.door)
            .finish_non_exhaustive()
    }
}

impl Provider {
    /// Open the roots `options` names: load the catalog, set up the executor and its sandbox.
    ///
    /// # Errors
    /// When no root is given, a root is missing, a filter is not a valid glob, the sandbox
    /// helper is missing, the sandbox policy cannot be met on this host, or the working folder
    /// overlaps a root.
    pub fn open(options: Options) -> Result<Self, OpenError> {
        if options.roots.is_empty() {
            return Err(OpenError::NoRoots);
        }
        let roots: Vec<SkillRoot> = options
            .roots
            .iter()
            .map(|root| SkillRoot::explicit(root.clone()))
            .collect();
        let catalog = SkillCatalog::load(&CatalogOptions {
            roots: roots.clone(),
            include: options.include.clone(),
            exclude: options.exclude.clone(),
            mode: ValidationMode::Lenient,
            ..CatalogOptions::default()
        })?;
        if let Some(folder) = &options.working_directory
            && !folder.is_dir()
        {
            return Err(OpenError::WorkingDirectory(folder.clone()));
        }
        let helper = match &options.sandbox_helper {
            Some(program) if !program.is_file() => {
                return Err(OpenError::MissingHelper(program.clone()));
            }
            Some(program) => Some(
                skillbox_exec::sandbox::trusted_named_helper(program)
                    .ok_or_else(|| OpenError::UntrustedHelper(program.clone()))?,
            ),
            None => HelperCommand::beside_current_executable(),
        };
        let trust = match options.trust {
            TrustRule::Roots => TrustGate::for_roots(&roots, TrustStore::default_path().ok()),
            TrustRule::All => TrustGate::default(),
        };
        let mut config = ExecutorConfig {
            helper,
            policy: SandboxPolicy {
                mode: options.sandbox,
                network: options.network,
                network_skills: options.network_skills.clone(),
                ..SandboxPolicy::default()
            },
            timeout: options.timeout,
            max_output_bytes: options.max_output_bytes,
            working_directory: options.working_directory.clone(),
            environment_allowlist: options.pass_env.clone(),
            secrets: options.secrets.clone(),
            audit_log: options.audit_log.clone(),
            workers: WorkerPoolConfig::default(),
            trust,
            ..ExecutorConfig::default()
        };
        if let Some(folder) = &options.runtime_directory {
            config.workspace_root.clone_from(folder);
        }
        let executor = Executor::new(config)?;
        executor.check_working_directory(options.roots.iter().map(std::path::PathBuf::as_path))?;
        let provider_options = ProviderOptions {
            find_skills: options.find_skills,
            prompt_budget: PromptBudget {
                max_chars: options.max_prompt_chars,
                max_tokens: None,
            },
            ..ProviderOptions::default()
        };
        let provider = SkillsProvider::new(Arc::new(catalog), Arc::new(executor), provider_options);
        let mut opened = Provider::over(provider)
            .with_offer(options.offer)
            .with_door(options.door);
        opened.approval = options.approval;
        if let Some(runs) = options.max_runs {
            opened.policy = DoorPolicy::new(RunLimits {
                max_concurrent: runs,
                max_queued: runs.saturating_mul(4),
                ..RunLimits::default()
            });
        }
        Ok(opened)
    }

    /// A provider answering from `provider`, built by the caller (the command line builds its
    /// own, with the run and blob services of a data folder): offered the skills profile,
    /// counted as the `library` door, without an approval hook.
    #[must_use]
    pub fn over(provider: SkillsProvider) -> Self {
        Provider {
            provider: Arc::new(provider),
            policy: DoorPolicy::default(),
            approval: None,
            offer: ToolOffer::Skills,
            door: Door::Library,
            system_prompt: Arc::default(),
        }
    }

    /// The same provider offering and answering `offer`.
    #[must_use]
    pub fn with_offer(mut self, offer: ToolOffer) -> Self {
        self.offer = offer;
        self
    }

    /// The same provider counting its calls under `door`.
    #[must_use]
    pub fn with_door(mut self, door: Door) -> Self {
        self.door = door;
        self
    }

    /// The same provider asking `approval` before calls that run code.
    #[must_use]
    pub fn with_approval(mut self, approval: Arc<dyn Approval>) -> Self {
        self.approval = Some(approval);
        self
    }

    /// The system-prompt section listing the skills (seed 002's markdown), rendered once.
    #[must_use]
    pub fn system_prompt(&self) -> &str {
        self.system_prompt
            .get_or_init(|| self.provider.system_prompt(PromptFormat::Markdown))
    }

    /// The system-prompt section in another format (`<available_skills>` XML, JSON).
    #[must_use]
    pub fn system_prompt_in(&self, format: PromptFormat) -> String {
        self.provider.system_prompt(format)
    }

    /// The definitions of the tools offered, in a provider's format: an array of tools (one
    /// object holding `functionDeclarations` for Gemini).
    #[must_use]
    pub fn tools(&self, format: ToolFormat) -> Value {
        render_tools(
            &skillbox_tools::registry::specs(&self.provider, self.tool_offer()),
            format,
        )
    }

    /// The names of the skills a model may see, sorted.
    #[must_use]
    pub fn skill_names(&self) -> Vec<String> {
        self.provider
            .model_skills()
            .iter()
            .map(|skill| skill.name().to_owned())
            .collect()
    }

    /// What was found wrong while opening (a `tools.json` tool another owns the name of).
    #[must_use]
    pub fn warnings(&self) -> &[String] {
        self.provider.warnings()
    }

    /// The tool provider underneath, for what this facade does not cover.
    #[must_use]
    pub fn skills_provider(&self) -> &Arc<SkillsProvider> {
        &self.provider
    }

    /// Answer the tool call `name(arguments)` through the door policy. The outcome's content
    /// is what seed 002's `handleToolCall` answers: `load_skill` the instructions as a
    /// string, `use_skill` `{success, stdout, stderr, exitCode, error, errorType}`, every other
    /// tool what it answers at every door; a failure is an answer too, for the model to read.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let skills_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills");
    /// use serde_json::json;
    /// use skillbox::{Options, Provider, SandboxMode};
    ///
    /// // Doc tests have no sandbox helper beside them; nothing below runs code.
    /// let skills = Provider::open(Options::new([skills_dir]).sandbox(SandboxMode::Off))?;
    /// let answer = skills.call("use_skill", &json!({"skill": "nope", "script": "x.py"})).await;
    /// assert!(answer.is_error());
    /// assert_eq!(answer.content["errorType"], "SkillNotFound");
    /// let instructions = skills.call("load_skill", &json!({"skill": "text-tools"})).await;
    /// assert!(instructions.text().contains("# Text tools"));
    /// # Ok(()) }
    /// ```
    pub async fn call(&self, name: &str, arguments: &Value) -> ToolOutcome {
        self.call_within(name, Arguments::from(arguments), None)
            .await
    }

    /// [`Provider::call`] with the arguments in whatever shape the caller holds: a value, or a
    /// model's argument text as it came (decoded once by the door policy, which answers text
    /// that is not a JSON object with the same message at every door).
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let skills_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills");
    /// use skillbox::{Arguments, Options, Provider, SandboxMode};
    ///
    /// let skills = Provider::open(Options::new([skills_dir]).sandbox(SandboxMode::Off))?;
    /// let text = r#"{"skill": "text-tools"}"#;
    /// let loaded = skills.call_blocking_with("load_skill", Arguments::Text(text));
    /// assert!(loaded.text().contains("# Text tools"));
    /// let broken = skills.call_blocking_with("load_skill", Arguments::Text("{skill"));
    /// assert!(broken.text().contains("not valid JSON"));
    /// # Ok(()) }
    /// ```
    pub async fn call_with(&self, name: &str, arguments: Arguments<'_>) -> ToolOutcome {
        self.call_within(name, arguments, None).await
    }

    /// [`Provider::call`] for a caller without an async runtime: the call runs on the
    /// process's shared runtime ([`crate::shared_runtime`]), from any number of threads at
    /// once. On a thread that drives an async runtime it answers an error saying to await
    /// [`Provider::call`] instead (blocking there could stall that runtime).
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let skills_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills");
    /// use serde_json::json;
    /// use skillbox::{Options, Provider, SandboxMode};
    ///
    /// let skills = Provider::open(Options::new([skills_dir]).sandbox(SandboxMode::Off))?;
    /// let file = skills.call_blocking("read_skill_file", &json!({"skill": "text-tools", "path": "tools.json"}));
    /// assert!(file.text().contains("count_words"));
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn call_blocking(&self, name: &str, arguments: &Value) -> ToolOutcome {
        block_on(self.call(name, arguments))
    }

    /// [`Provider::call_with`] for a caller without an async runtime.
    #[must_use]
    pub fn call_blocking_with(&self, name: &str, arguments: Arguments<'_>) -> ToolOutcome {
        block_on(self.call_with(name, arguments))
    }

    /// A conversation over this provider: its active skill, the skill servers it holds
    /// (their tools become callable once the skill is loaded), and, when
    /// `enforce_allowed_tools`, the active skill's `allowed-tools`.
    #[must_use]
    pub fn session(&self, enforce_allowed_tools: bool) -> Session {
        Session::new(self.clone(), enforce_allowed_tools)
    }

    /// The call through the door policy, within a conversation's servers when it has some.
    pub(crate) async fn call_within(
        &self,
        name: &str,
        arguments: Arguments<'_>,
        servers: Option<&skillbox_tools::ServerHolds>,
    ) -> ToolOutcome {
        let mut budget = Unbudgeted;
        let mut context = CallContext::new(self.door, self.tool_offer(), &mut budget);
        if let Some(approval) = &self.approval {
            context = context.with_approval(approval.as_ref());
        }
        if let Some(servers) = servers {
            context = context.with_servers(servers);
        }
        self.policy
            .call(&self.provider, name, arguments, context)
            .await
    }

    pub(crate) fn tool_offer(&self) -> Offer<'static> {
        match self.offer {
            ToolOffer::Skills => Offer::Profile(ToolProfile::Skills),
            ToolOffer::Everything => Offer::Everything,
        }
    }
}

/// Run `call` to its end on the shared runtime, or answer why it cannot be.
pub(crate) fn block_on(call: impl std::future::Future<Output = ToolOutcome>) -> ToolOutcome {
    if tokio::runtime::Handle::try_current().is_ok() {
        return ToolOutcome::with_status(
            CallStatus::Internal,
            "a blocking call was made on a thread that drives an async runtime; await the async call instead",
        );
    }
    match shared_runtime() {
        Ok(runtime) => runtime.block_on(call),
        Err(error) => ToolOutcome::with_status(
            CallStatus::Internal,
            format!("the runtime that answers calls could not start: {error}"),
        ),
    }
}
