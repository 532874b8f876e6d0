//! Which model `ask`, `chat` and the web app's chat talk to, and how: the flags, the
//! environment and the config file (`$SKILLBOX_CONFIG`, default `~/.config/skillbox/config.toml`,
//! section `[agent]`) resolved once, and the agent, transcripts and approval built from them.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use serde::Deserialize;
use skillbox_agent::{
    Agent, AgentOptions, ApiKey, ApprovalMode, Conversation, HttpModelClient, ProviderSource,
    TranscriptStore, WireFormat,
};

use super::Setup;
use crate::arguments::{AgentArguments, ModelArguments};
use crate::output::agent_events::TerminalApproval;

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
pub(crate) struct ModelSettings {
    pub(crate) format: WireFormat,
    pub(crate) base_url: String,
    pub(crate) model: String,
    pub(crate) key: Option<ApiKey>,
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

/// What `eval` asks: the model settings, the agent options and the approval policy for code in
/// task runs (`ask` on a terminal is refused: an eval runs unattended).
pub(crate) fn eval_setup(
    arguments: &ModelArguments,
) -> anyhow::Result<(ModelSettings, AgentOptions, ApprovalMode, HttpModelClient)> {
    let config = read_config()?;
    let settings = resolve_settings(arguments, &config)?;
    let approval = configured_approval(arguments, &config)?;
    if approval == ApprovalMode::Ask {
        bail!(
            "--approve ask: an eval runs unattended; use `allow` (the default: code runs in the sandbox) or `deny`"
        );
    }
    let client = HttpModelClient::new(settings.format, &settings.base_url, settings.key.clone())
        .with_context(|| "--base-url".to_owned())?;
    let options = agent_options(arguments, &config, &settings.model)?;
    Ok((settings, options, approval, client))
}

/// What `ask` and `chat` set up before a turn: the agent, the model settings, the transcript
/// folder and the approval policy.
pub(crate) struct AgentSetup {
    pub(crate) agent: Agent,
    pub(crate) settings: ModelSettings,
    pub(crate) transcripts: Option<TranscriptStore>,
    choice: ApprovalMode,
}

pub(crate) fn set_up(setup: &Setup<'_>, arguments: &AgentArguments) -> anyhow::Result<AgentSetup> {
    let config = read_config()?;
    let settings = resolve_settings(&arguments.model, &config)?;
    let choice = approval_choice(arguments, &config)?;
    let client = HttpModelClient::new(settings.format, &settings.base_url, settings.key.clone())
        .with_context(|| "--base-url".to_owned())?;
    let provider = super::provider::provider(setup)?;
    let options = agent_options(&arguments.model, &config, &settings.model)?;
    let policy = skillbox_tools::DoorPolicy::default()
        .with_server_pool(super::executor::server_pool(&setup.global.execution));
    let agent = Agent::new(
        ProviderSource::Fixed(Arc::new(provider)),
        Arc::new(client),
        options,
    )
    .with_policy(Arc::new(policy), skillbox_tools::Door::Agent);
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

pub(crate) fn transcript_store(
    data_dir: Option<&std::path::Path>,
) -> anyhow::Result<TranscriptStore> {
    let folder = match data_dir {
        Some(folder) => folder.to_path_buf(),
        None => dirs::data_dir()
            .context("no user data folder is known here; pass --data-dir or --no-transcript")?
            .join("skillbox"),
    };
    Ok(TranscriptStore::new(folder.join("transcripts")))
}

impl AgentSetup {
    /// The conversation to talk in: resumed, or new (saved when transcripts are on, from the
    /// model's first answer: a turn that fails before it leaves no file).
    pub(crate) fn conversation(&self, resume: Option<&str>) -> anyhow::Result<Conversation> {
        let Some(store) = &self.transcripts else {
            return Ok(self.agent.conversation(None));
        };
        if let Some(id) = resume {
            let (transcript, messages) = store.resume(id)?;
            return Ok(self.agent.resume(Some(transcript), messages));
        }
        let transcript = store.begin(
            self.settings.format,
            &self.settings.model,
            &skillbox_agent::shown_url(&self.settings.base_url),
        )?;
        Ok(self.agent.conversation(Some(transcript)))
    }

    /// Where the conversation was saved and how to continue it, when it was saved.
    pub(crate) fn saved_note(&self, conversation: &Conversation) -> Option<String> {
        conversation.is_saved().then(|| {
            let id = conversation.id();
            format!("conversation {id} saved; continue it with: skillbox chat --resume {id}")
        })
    }

    pub(crate) fn agent_for(&self, progress: Option<&indicatif::MultiProgress>) -> Agent {
        match self.choice.policy() {
            Some(policy) => self.agent.clone().with_approval(Arc::new(policy)),
            None => self
                .agent
                .clone()
                .with_approval(Arc::new(TerminalApproval::new(progress.cloned()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
