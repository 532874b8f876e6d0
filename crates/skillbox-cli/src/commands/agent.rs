//! `skillbox ask` and `skillbox chat`: a model using the skills, through the agent loop of
//! skillbox-agent. The answer streams to stdout; tool activity goes to stderr (a spinner on a
//! terminal, plain lines otherwise); `--json` prints the events as JSON lines instead.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use serde::Deserialize;
use skillbox_agent::{
    Agent, AgentEvent, AgentOptions, ApiKey, Approval, ApprovalDecision, ApprovalMode,
    ApprovalRequest, Conversation, HttpModelClient, SkillSource, TranscriptStore, TurnEnd,
    TurnInput, WireFormat,
};

use crate::arguments::{
    AgentArguments, AskArguments, ChatArguments, GlobalOptions, ModelArguments,
};

/// Exit code when the model was still calling tools after `--max-rounds`.
const EXIT_MAX_ROUNDS: u8 = 3;
/// Exit code when the person cancelled the turn (Ctrl-C), as shells report SIGINT.
const EXIT_CANCELLED: u8 = 130;
/// Characters of a tool result shown on stderr.
const MAX_SHOWN_RESULT_CHARS: usize = 160;

const OPENROUTER_BASE_URL: &str = "https://openrouter.ai/api/v1";
const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";

/// The `[agent]` section of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct AgentConfig {
    provider: Option<String>,
    model: Option<String>,
    base_url: Option<String>,
    api_key_env: Option<String>,
    max_rounds: Option<u32>,
    max_output_tokens: Option<u32>,
    temperature: Option<f32>,
    system: Option<String>,
    approve: Option<String>,
    tools_on_load: Option<bool>,
    enforce_allowed_tools: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    agent: AgentConfig,
}

/// The config file: `$SKILLBOX_CONFIG`, else `config.toml` in the user's config folder. A
/// missing default file is no config; a missing named file is an error.
fn read_config() -> anyhow::Result<AgentConfig> {
    let (path, named) = match std::env::var_os("SKILLBOX_CONFIG") {
        Some(path) => (PathBuf::from(path), true),
        None => match dirs::config_dir() {
            Some(folder) => (folder.join("skillbox").join("config.toml"), false),
            None => return Ok(AgentConfig::default()),
        },
    };
    let text = match fs_err::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if !named && error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(AgentConfig::default());
        }
        Err(error) => return Err(error.into()),
    };
    let config: ConfigFile = toml::from_str(&text)
        .with_context(|| format!("{}: not a skillbox config file", path.display()))?;
    Ok(config.agent)
}

/// Where the model is and how to ask it.
#[derive(Debug)]
struct ModelSettings {
    format: WireFormat,
    base_url: String,
    model: String,
    key: Option<ApiKey>,
}

fn key_from(name: &str) -> Option<ApiKey> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
        .map(|value| ApiKey {
            value: value.trim().to_owned(),
            source: name.to_owned(),
        })
}

/// The hosted APIs known by name, and every other server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Host {
    OpenRouter,
    OpenAi,
    Anthropic,
    /// A local or self-hosted server (llama.cpp, vLLM, Ollama, a proxy).
    Other,
}

impl Host {
    /// The host a base URL connects to.
    fn of(base_url: &str) -> Host {
        Host::named(&skillbox_agent::url_host(base_url).unwrap_or_default())
    }

    fn named(host: &str) -> Host {
        if host == "openrouter.ai" || host.ends_with(".openrouter.ai") {
            Host::OpenRouter
        } else if host == "api.openai.com" {
            Host::OpenAi
        } else if host == "anthropic.com" || host.ends_with(".anthropic.com") {
            Host::Anthropic
        } else {
            Host::Other
        }
    }

    /// The variable holding the key this host's API wants.
    fn key_variable(self) -> &'static str {
        match self {
            Host::OpenRouter => "OPENROUTER_API_KEY",
            Host::OpenAi => "OPENAI_API_KEY",
            Host::Anthropic => "ANTHROPIC_API_KEY",
            Host::Other => "SKILLBOX_API_KEY",
        }
    }

    fn default_model(self, format: WireFormat) -> &'static str {
        match (self, format) {
            (Host::OpenRouter, WireFormat::Anthropic) => "anthropic/claude-sonnet-4.5",
            (Host::OpenRouter, _) => "openai/gpt-4o-mini",
            (Host::OpenAi, _) => "gpt-4o-mini",
            (Host::Anthropic, _) => "claude-sonnet-4-5",
            // Local servers (llama.cpp, vLLM, Ollama) serve the model they were started with.
            (Host::Other, _) => "default",
        }
    }
}

/// Which hosted APIs have a key in the environment: they pick the API and the server when
/// neither is named.
struct HostedKeys {
    openrouter: bool,
    openai: bool,
    anthropic: bool,
}

impl HostedKeys {
    fn from_environment() -> Self {
        let set = |host: Host| key_from(host.key_variable()).is_some();
        HostedKeys {
            openrouter: set(Host::OpenRouter),
            openai: set(Host::OpenAi),
            anthropic: set(Host::Anthropic),
        }
    }

    fn default_base_url(&self, format: WireFormat) -> &'static str {
        match format {
            WireFormat::Anthropic if self.openrouter && !self.anthropic => OPENROUTER_BASE_URL,
            WireFormat::Anthropic => ANTHROPIC_BASE_URL,
            WireFormat::Responses | WireFormat::Chat if self.openrouter || !self.openai => {
                OPENROUTER_BASE_URL
            }
            WireFormat::Responses | WireFormat::Chat => OPENAI_BASE_URL,
        }
    }
}

fn resolve_settings(
    arguments: &ModelArguments,
    config: &AgentConfig,
) -> anyhow::Result<ModelSettings> {
    let keys = HostedKeys::from_environment();
    let base_url = arguments
        .base_url
        .clone()
        .or_else(|| config.base_url.clone());
    let format = match arguments.provider.as_deref().or(config.provider.as_deref()) {
        Some(name) => WireFormat::parse(name).with_context(|| {
            format!("--provider: `{name}` is not an API; use responses, chat or anthropic")
        })?,
        // An explicit server is most likely OpenAI-compatible (llama.cpp, vLLM, Ollama).
        None if base_url.is_some() => WireFormat::Chat,
        None if keys.openrouter || keys.openai => WireFormat::Responses,
        None if keys.anthropic => WireFormat::Anthropic,
        None => bail!(
            "no model to ask: set OPENROUTER_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY, or point --base-url at a local OpenAI-compatible server (the README's \"A local model\" shows one)"
        ),
    };
    let base_url = base_url.unwrap_or_else(|| keys.default_base_url(format).to_owned());
    let host = Host::of(&base_url);
    let variable = arguments
        .api_key_env
        .clone()
        .or_else(|| config.api_key_env.clone())
        .unwrap_or_else(|| host.key_variable().to_owned());
    let key = key_from(&variable);
    if key.is_none() && host != Host::Other {
        bail!(
            "{variable} is not set: {base_url} needs an API key; set {variable}, or point --base-url at a local server"
        );
    }
    let model = arguments
        .model
        .clone()
        .or_else(|| config.model.clone())
        .unwrap_or_else(|| host.default_model(format).to_owned());
    Ok(ModelSettings {
        format,
        base_url,
        model,
        key,
    })
}

/// Asks on the terminal before code runs. Calls of one round run concurrently, so questions
/// wait for each other: one at a time on the terminal.
struct TerminalApproval {
    progress: Option<indicatif::MultiProgress>,
    asking: tokio::sync::Mutex<()>,
}

#[async_trait::async_trait]
impl Approval for TerminalApproval {
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalDecision {
        // One line: a model's arguments must not draw lines of their own around the question.
        let summary = skillbox_core::printable::printable_line(&request.summary());
        let progress = self.progress.clone();
        let _asking = self.asking.lock().await;
        let answer = tokio::task::spawn_blocking(move || {
            let ask = || -> std::io::Result<String> {
                let mut terminal = fs_err::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open("/dev/tty")?;
                write!(terminal, "allow: {summary}? [y/N] ")?;
                terminal.flush()?;
                let mut line = String::new();
                std::io::BufRead::read_line(&mut std::io::BufReader::new(terminal), &mut line)?;
                Ok(line)
            };
            match &progress {
                Some(progress) => progress.suspend(ask),
                None => ask(),
            }
        })
        .await;
        match answer {
            Ok(Ok(line)) if matches!(line.trim(), "y" | "Y" | "yes" | "Yes") => {
                ApprovalDecision::Approve
            }
            Ok(Ok(_)) => ApprovalDecision::Deny {
                reason: "the user said no".to_owned(),
            },
            _ => ApprovalDecision::Deny {
                reason: "there is no terminal to ask on".to_owned(),
            },
        }
    }
}

fn approval_choice(
    arguments: &AgentArguments,
    config: &AgentConfig,
) -> anyhow::Result<ApprovalMode> {
    if arguments.confirm {
        return Ok(ApprovalMode::Ask);
    }
    configured_approval(&arguments.model, config)
}

/// The policy `--approve` or the config file name (default: allow).
fn configured_approval(
    arguments: &ModelArguments,
    config: &AgentConfig,
) -> anyhow::Result<ApprovalMode> {
    let name = arguments
        .approve
        .as_deref()
        .or(config.approve.as_deref())
        .unwrap_or("allow");
    ApprovalMode::parse(name)
        .with_context(|| format!("--approve: `{name}` is not a policy; use allow, deny or ask"))
}

/// The agent's options from the flags and the config file.
fn agent_options(
    arguments: &ModelArguments,
    config: &AgentConfig,
    model: &str,
) -> anyhow::Result<AgentOptions> {
    let mut options = AgentOptions::new(model);
    if let Some(rounds) = arguments.max_rounds.or(config.max_rounds) {
        if rounds == 0 {
            bail!("--max-rounds: give at least 1");
        }
        options.max_rounds = rounds;
    }
    if let Some(tokens) = arguments.max_output_tokens.or(config.max_output_tokens) {
        options.max_output_tokens = tokens.max(1);
    }
    options.temperature = arguments.temperature.or(config.temperature);
    if let Some(system) = arguments.system.clone().or(config.system.clone()) {
        options.base_prompt = system;
    }
    options.tools_on_load = arguments.tools_on_load || config.tools_on_load.unwrap_or(false);
    options.enforce_allowed_tools =
        arguments.enforce_allowed_tools || config.enforce_allowed_tools.unwrap_or(false);
    Ok(options)
}

/// The web app's chat: the model the flags, the environment and the config file name (and
/// `also_models` on the same server), the agent options and approval policy, conversations
/// saved under `data_dir`. With nothing configured, the page says how to configure a model;
/// a model that was asked for but cannot be set up is an error.
pub fn web_chat_setup(
    arguments: &ModelArguments,
    also_models: &[String],
    data_dir: &std::path::Path,
) -> anyhow::Result<skillbox_web::ChatSetup> {
    let config = read_config()?;
    let approval = configured_approval(arguments, &config)?;
    let transcripts = Some(TranscriptStore::new(data_dir.join("transcripts")));
    let asked = arguments.provider.is_some()
        || arguments.model.is_some()
        || arguments.base_url.is_some()
        || config.base_url.is_some()
        || config.model.is_some();
    let settings = match resolve_settings(arguments, &config) {
        Ok(settings) => settings,
        Err(error) if !asked => {
            return Ok(skillbox_web::ChatSetup {
                models: Vec::new(),
                options: AgentOptions::new("none"),
                approval,
                transcripts,
                unavailable: Some(format!(
                    "Chat has no model: {error}. Then start `skillbox serve` again."
                )),
            });
        }
        Err(error) => return Err(error),
    };
    let client: Arc<dyn skillbox_agent::ModelClient> = Arc::new(
        HttpModelClient::new(settings.format, &settings.base_url, settings.key.clone())
            .with_context(|| "--base-url".to_owned())?,
    );
    let endpoint = skillbox_agent::shown_url(&settings.base_url);
    let options = agent_options(arguments, &config, &settings.model)?;
    let mut names = vec![settings.model.clone()];
    names.extend(also_models.iter().filter(|name| !name.is_empty()).cloned());
    names.dedup();
    let models = names
        .into_iter()
        .map(|model| skillbox_web::ChatModel {
            label: format!("{model} · {} at {endpoint}", settings.format.name()),
            model,
            format: settings.format,
            endpoint: endpoint.clone(),
            client: Arc::clone(&client),
        })
        .collect();
    Ok(skillbox_web::ChatSetup {
        models,
        options,
        approval,
        transcripts,
        unavailable: None,
    })
}

/// What `ask` and `chat` set up before a turn: the agent, the model settings, the transcript
/// folder and the approval policy.
struct AgentSetup {
    agent: Agent,
    settings: ModelSettings,
    transcripts: Option<TranscriptStore>,
    choice: ApprovalMode,
}

fn set_up(global: &GlobalOptions, arguments: &AgentArguments) -> anyhow::Result<AgentSetup> {
    let config = read_config()?;
    let settings = resolve_settings(&arguments.model, &config)?;
    let choice = approval_choice(arguments, &config)?;
    let client = HttpModelClient::new(settings.format, &settings.base_url, settings.key.clone())
        .with_context(|| "--base-url".to_owned())?;
    let provider = super::surface::provider(global)?;
    let options = agent_options(&arguments.model, &config, &settings.model)?;
    let agent = Agent::new(
        SkillSource::Fixed(Arc::new(provider)),
        Arc::new(client),
        options,
    );
    let transcripts = if arguments.no_transcript {
        if arguments.resume.is_some() {
            bail!("--resume needs transcripts; drop --no-transcript");
        }
        None
    } else {
        Some(transcript_store(arguments.data_dir.as_deref())?)
    };
    Ok(AgentSetup {
        agent,
        settings,
        transcripts,
        choice,
    })
}

fn transcript_store(data_dir: Option<&std::path::Path>) -> anyhow::Result<TranscriptStore> {
    let folder = match data_dir {
        Some(folder) => folder.to_path_buf(),
        None => dirs::data_dir()
            .context("no user data folder is known here; pass --data-dir or --no-transcript")?
            .join("skillbox"),
    };
    Ok(TranscriptStore::new(folder.join("transcripts")))
}

impl AgentSetup {
    /// The conversation to talk in: resumed, or new (saved when transcripts are on).
    fn conversation(&self, resume: Option<&str>) -> anyhow::Result<Conversation> {
        let Some(store) = &self.transcripts else {
            return Ok(self.agent.conversation(None));
        };
        if let Some(id) = resume {
            let (transcript, messages) = store.resume(id)?;
            return Ok(self.agent.resume(Some(transcript), messages));
        }
        let transcript = store.create(
            self.settings.format,
            &self.settings.model,
            &skillbox_agent::shown_url(&self.settings.base_url),
        )?;
        Ok(self.agent.conversation(Some(transcript)))
    }

    /// Where the conversation was saved and how to continue it, when transcripts are on.
    fn saved_note(&self, conversation: &Conversation) -> Option<String> {
        self.transcripts.as_ref().map(|_| {
            let id = conversation.id();
            format!("conversation {id} saved; continue it with: skillbox chat --resume {id}")
        })
    }

    fn agent_for(&self, progress: Option<&indicatif::MultiProgress>) -> Agent {
        match self.choice.policy() {
            Some(policy) => self.agent.clone().with_approval(Arc::new(policy)),
            None => self.agent.clone().with_approval(Arc::new(TerminalApproval {
                progress: progress.cloned(),
                asking: tokio::sync::Mutex::new(()),
            })),
        }
    }
}

/// Prints a turn's events: the answer on stdout, activity on stderr.
struct Printer {
    json: bool,
    /// The terminal's progress area (only when stderr is a terminal and not `--json`).
    progress: Option<indicatif::MultiProgress>,
    /// The spinner while something runs.
    spinner: Option<indicatif::ProgressBar>,
    /// The model asked, for the spinner's message.
    model: String,
    answer_open: bool,
}

impl Printer {
    fn new(json: bool) -> Self {
        let progress = (!json && std::io::stderr().is_terminal()).then(|| {
            indicatif::MultiProgress::with_draw_target(indicatif::ProgressDrawTarget::stderr())
        });
        Printer {
            json,
            progress,
            spinner: None,
            model: String::new(),
            answer_open: false,
        }
    }

    fn status(&self, line: &str) {
        let line = skillbox_core::printable::printable_block(line).into_owned();
        let printed = self
            .progress
            .as_ref()
            .is_some_and(|progress| progress.println(&line).is_ok());
        if !printed {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }

    fn working(&mut self, message: &str) {
        let Some(progress) = &self.progress else {
            return;
        };
        let spinner = self.spinner.get_or_insert_with(|| {
            let spinner = progress.add(indicatif::ProgressBar::new_spinner());
            spinner.enable_steady_tick(std::time::Duration::from_millis(120));
            spinner
        });
        // The model names tools and skills name models: escape what a terminal would obey.
        spinner.set_message(skillbox_core::printable::printable_line(message));
    }

    fn idle(&mut self) {
        if let (Some(progress), Some(spinner)) = (&self.progress, self.spinner.take()) {
            spinner.finish_and_clear();
            progress.remove(&spinner);
        }
    }

    fn close_answer(&mut self) -> std::io::Result<()> {
        if self.answer_open {
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout)?;
            stdout.flush()?;
            self.answer_open = false;
        }
        Ok(())
    }

    /// Print one event; returns how the turn ended when this is the last one.
    fn event(&mut self, event: &AgentEvent, depth: usize) -> std::io::Result<Option<TurnEnd>> {
        if self.json {
            let mut stdout = std::io::stdout().lock();
            serde_json::to_writer(&mut stdout, event)?;
            writeln!(stdout)?;
            stdout.flush()?;
            return Ok(match event {
                AgentEvent::Final { end, .. } => Some(*end),
                _ => None,
            });
        }
        let indent = "  ".repeat(depth);
        match event {
            AgentEvent::TurnStarted { model, .. } => {
                if depth > 0 {
                    self.status(&format!("{indent}sub-agent started ({model})"));
                } else {
                    model.clone_into(&mut self.model);
                }
                self.working(&format!("asking {model}"));
            }
            AgentEvent::SkillInvoked { skill, .. } => {
                self.status(&format!("{indent}skill /{skill}"));
            }
            AgentEvent::TextDelta { text } => {
                if depth == 0 {
                    self.idle();
                    let mut stdout = std::io::stdout().lock();
                    stdout.write_all(skillbox_core::printable::printable_block(text).as_bytes())?;
                    stdout.flush()?;
                    self.answer_open = true;
                }
            }
            AgentEvent::Retry {
                attempt,
                reason,
                delay_ms,
            } => self.status(&format!(
                "{indent}retry {attempt} in {:.1} s: {reason}",
                *delay_ms as f64 / 1000.0
            )),
            AgentEvent::ToolCallStarted {
                name, arguments, ..
            } => {
                self.close_answer()?;
                self.status(&format!("{indent}→ {name} {}", compact(arguments)));
                self.working(&format!("running {name}"));
            }
            AgentEvent::ApprovalDenied { name, reason, .. } => {
                self.status(&format!("{indent}✗ {name} not allowed: {reason}"));
            }
            AgentEvent::ToolCallFinished {
                name,
                result,
                is_error,
                duration_ms,
                ..
            } => {
                let mark = if *is_error { "✗" } else { "←" };
                self.status(&format!(
                    "{indent}{mark} {name} ({duration_ms} ms) {}",
                    shorten(result)
                ));
                let message = format!("asking {}", self.model);
                self.working(&message);
            }
            AgentEvent::ModelChanged { model, skill } => {
                if depth == 0 {
                    model.clone_into(&mut self.model);
                }
                self.status(&format!("{indent}model {model} (asked by skill `{skill}`)"));
            }
            AgentEvent::Usage { .. } => {}
            AgentEvent::Fork { event, .. } => {
                self.event(event, depth + 1)?;
            }
            AgentEvent::Error { message } => {
                if depth == 0 {
                    self.idle();
                    self.close_answer()?;
                }
                self.status(&format!("{indent}error: {message}"));
            }
            AgentEvent::Final {
                text,
                end,
                rounds,
                usage,
            } => {
                if depth > 0 {
                    self.status(&format!("{indent}sub-agent done ({rounds} rounds)"));
                    return Ok(None);
                }
                self.idle();
                self.close_answer()?;
                match end {
                    TurnEnd::MaxRounds => self.status(text),
                    TurnEnd::Cancelled => self.status("cancelled"),
                    TurnEnd::Answered | TurnEnd::Failed => {}
                }
                self.status(&format!(
                    "({rounds} rounds, {} tokens in, {} out)",
                    usage.input_tokens, usage.output_tokens
                ));
                return Ok(Some(*end));
            }
        }
        Ok(None)
    }
}

fn compact(value: &serde_json::Value) -> String {
    let text = match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    shorten(&text)
}

fn shorten(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > MAX_SHOWN_RESULT_CHARS {
        let mut cut: String = flat.chars().take(MAX_SHOWN_RESULT_CHARS).collect();
        cut.push('…');
        cut
    } else {
        flat
    }
}

/// Run one turn, printing as it goes; Ctrl-C cancels it (a second one quits).
async fn drive_turn(
    agent: &Agent,
    conversation: Conversation,
    input: TurnInput,
    printer: &mut Printer,
) -> anyhow::Result<(Conversation, TurnEnd)> {
    let mut turn = agent.run(conversation, input);
    let cancel = turn.canceller();
    let mut end = TurnEnd::Failed;
    let mut interrupted = false;
    loop {
        tokio::select! {
            event = turn.next_event() => {
                let Some(event) = event else { break };
                if let Some(last) = printer.event(&event, 0)? {
                    end = last;
                }
            }
            _ = tokio::signal::ctrl_c() => {
                if interrupted {
                    std::process::exit(i32::from(EXIT_CANCELLED));
                }
                interrupted = true;
                cancel.cancel();
            }
        }
    }
    let conversation = turn.finish().await.context("the turn failed")?;
    Ok((conversation, end))
}

fn exit_code(end: TurnEnd) -> ExitCode {
    match end {
        TurnEnd::Answered => ExitCode::SUCCESS,
        TurnEnd::MaxRounds => ExitCode::from(EXIT_MAX_ROUNDS),
        TurnEnd::Cancelled => ExitCode::from(EXIT_CANCELLED),
        TurnEnd::Failed => ExitCode::from(crate::EXIT_PROBLEMS),
    }
}

/// `skillbox ask`.
pub fn ask(global: &GlobalOptions, arguments: &AskArguments) -> anyhow::Result<ExitCode> {
    let setup = set_up(global, &arguments.agent)?;
    let input = setup
        .agent
        .read_input(&arguments.prompt)
        .map_err(anyhow::Error::msg)?;
    let runtime = super::execute::runtime()?;
    runtime.block_on(async {
        let conversation = setup.conversation(arguments.agent.resume.as_deref())?;
        let mut printer = Printer::new(arguments.json);
        let agent = setup.agent_for(printer.progress.as_ref());
        let (conversation, end) = drive_turn(&agent, conversation, input, &mut printer).await?;
        if !arguments.json
            && let Some(note) = setup.saved_note(&conversation)
        {
            printer.status(&note);
        }
        Ok(exit_code(end))
    })
}

/// Completion of `/name` for the skills a person may invoke, and the chat's own commands.
struct SkillCompleter {
    names: Vec<String>,
}

impl rustyline::completion::Completer for SkillCompleter {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        position: usize,
        _context: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let typed = &line[..position];
        if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
            return Ok((position, Vec::new()));
        }
        let candidates = self
            .names
            .iter()
            .filter(|name| name.starts_with(&typed[1..]))
            .map(|name| format!("/{name}"))
            .collect();
        Ok((0, candidates))
    }
}

impl rustyline::hint::Hinter for SkillCompleter {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for SkillCompleter {}
impl rustyline::validate::Validator for SkillCompleter {}
impl rustyline::Helper for SkillCompleter {}

const CHAT_COMMANDS: &[(&str, &str)] = &[
    ("skills", "list the skills you can invoke with /name args"),
    ("new", "start a new conversation"),
    ("help", "show these commands"),
    ("exit", "leave (Ctrl-D does too)"),
];

/// `chat --list`: reads the transcripts alone, so it needs no model, key or skills.
fn list_conversations(arguments: &AgentArguments, json: bool) -> anyhow::Result<ExitCode> {
    if arguments.no_transcript {
        bail!("--list reads transcripts; drop --no-transcript");
    }
    let summaries = transcript_store(arguments.data_dir.as_deref())?.list()?;
    if json {
        crate::output::print_json(&summaries)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut stdout = std::io::stdout().lock();
    for summary in summaries {
        writeln!(
            stdout,
            "{}  {:>4} messages  {}  {}",
            summary.header.id,
            summary.messages,
            summary.header.model,
            skillbox_core::printable::printable_line(&summary.first_prompt)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `skillbox chat`.
pub fn chat(global: &GlobalOptions, arguments: &ChatArguments) -> anyhow::Result<ExitCode> {
    if arguments.list {
        return list_conversations(&arguments.agent, arguments.json);
    }
    let setup = set_up(global, &arguments.agent)?;
    let provider = setup.agent.provider();
    let mut names: Vec<String> = provider
        .catalog()
        .skills()
        .iter()
        .filter(|skill| skill.user_invocable())
        .map(|skill| skill.name().to_owned())
        .collect();
    names.extend(CHAT_COMMANDS.iter().map(|(name, _)| (*name).to_owned()));
    names.sort();
    names.dedup();
    let mut editor = rustyline::Editor::<SkillCompleter, rustyline::history::DefaultHistory>::new()
        .context("cannot set up line editing")?;
    editor.set_helper(Some(SkillCompleter { names }));
    // The history holds what people typed: kept beside the transcripts, never through a link.
    let history = setup
        .transcripts
        .as_ref()
        .map(|store| store.directory().join("chat-history.txt"))
        .filter(|path| {
            !fs_err::symlink_metadata(path).is_ok_and(|metadata| metadata.file_type().is_symlink())
        });
    if let Some(history) = &history {
        let _ = editor.load_history(history);
    }
    let runtime = super::execute::runtime()?;
    let mut conversation = setup.conversation(arguments.agent.resume.as_deref())?;
    let mut stderr = std::io::stderr();
    writeln!(
        stderr,
        "skillbox chat: {} via {} ({}); /help for commands, Ctrl-D to leave",
        setup.settings.model,
        skillbox_agent::shown_url(&setup.settings.base_url),
        setup.settings.format.name()
    )?;
    if arguments.agent.resume.is_some() {
        writeln!(
            stderr,
            "resumed conversation {} ({} messages)",
            conversation.id(),
            conversation.messages().len()
        )?;
    }
    loop {
        let line = match editor.readline("you> ") {
            Ok(line) => line,
            Err(rustyline::error::ReadlineError::Interrupted) => continue,
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(error) => return Err(error).context("cannot read the terminal"),
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(text);
        match text {
            "/exit" | "/quit" => break,
            "/help" => {
                for (name, help) in CHAT_COMMANDS {
                    writeln!(stderr, "  /{name:<8} {help}")?;
                }
                writeln!(stderr, "  /NAME ARGS invoke a skill (Tab completes names)")?;
                continue;
            }
            "/skills" => {
                print_invocable_skills(&provider)?;
                continue;
            }
            "/new" => {
                conversation = setup.conversation(None)?;
                writeln!(stderr, "new conversation {}", conversation.id())?;
                continue;
            }
            _ => {}
        }
        let input = match setup.agent.read_input(text) {
            Ok(input) => input,
            Err(message) => {
                writeln!(stderr, "{message}")?;
                continue;
            }
        };
        let mut printer = Printer::new(false);
        let agent = setup.agent_for(printer.progress.as_ref());
        let (next, _) = runtime.block_on(drive_turn(&agent, conversation, input, &mut printer))?;
        conversation = next;
    }
    if let Some(history) = &history {
        let _ = editor.save_history(history);
    }
    if let Some(note) = setup.saved_note(&conversation) {
        writeln!(stderr, "{note}")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_invocable_skills(provider: &skillbox_tools::SkillsProvider) -> std::io::Result<()> {
    let mut stderr = std::io::stderr().lock();
    for skill in provider
        .catalog()
        .skills()
        .iter()
        .filter(|skill| skill.user_invocable())
    {
        let hint = skill.properties.argument_hint.as_deref().unwrap_or("");
        writeln!(
            stderr,
            "  /{} {}  {}",
            skill.name(),
            skillbox_core::printable::printable_line(hint),
            skillbox_core::printable::printable_line(&skill.description)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spinner_shows_hostile_names_escaped() {
        let mut printer = Printer {
            json: false,
            progress: Some(indicatif::MultiProgress::with_draw_target(
                indicatif::ProgressDrawTarget::hidden(),
            )),
            spinner: None,
            model: String::new(),
            answer_open: false,
        };
        let hostile = "\u{1b}]0;title\u{7}\u{1b}[2Jtool";
        let message = |printer: &Printer| printer.spinner.as_ref().expect("spinner").message();
        printer
            .event(
                &AgentEvent::ToolCallStarted {
                    id: "call_1".to_owned(),
                    name: hostile.to_owned(),
                    arguments: serde_json::json!({}),
                },
                0,
            )
            .expect("printed");
        assert!(
            !message(&printer).contains('\u{1b}'),
            "{:?}",
            message(&printer)
        );
        printer
            .event(
                &AgentEvent::TurnStarted {
                    conversation: "c".to_owned(),
                    model: hostile.to_owned(),
                },
                0,
            )
            .expect("printed");
        assert!(
            !message(&printer).contains('\u{1b}'),
            "{:?}",
            message(&printer)
        );
    }

    #[test]
    fn hosts_pick_their_key_variable() {
        let variable = |url: &str| Host::of(url).key_variable();
        assert_eq!(
            variable("https://openrouter.ai/api/v1"),
            "OPENROUTER_API_KEY"
        );
        assert_eq!(
            skillbox_agent::url_host("http://user@127.0.0.1:8080/v1").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(
            skillbox_agent::url_host("http://[::1]:8080/v1").as_deref(),
            Some("::1")
        );
        assert_eq!(
            variable("http://user@127.0.0.1:8080/v1"),
            "SKILLBOX_API_KEY"
        );
        assert_eq!(
            variable("https://api.anthropic.com/v1"),
            "ANTHROPIC_API_KEY"
        );
        // A look-alike host or a URL whose text names a hosted API elsewhere gets no hosted key.
        assert_eq!(variable("https://evilanthropic.com/v1"), "SKILLBOX_API_KEY");
        assert_eq!(
            variable("http://127.0.0.1:9\\@api.openai.com/v1"),
            "SKILLBOX_API_KEY"
        );
    }
}
