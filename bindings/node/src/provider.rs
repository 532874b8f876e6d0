//! `openProvider` and `NativeProvider`: skill roots opened with seed 002's options and the
//! command line's, answering tool calls as promises on the addon's async runtime.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::{Error, Result, Status};
use napi_derive::napi;
use serde_json::Value;
use skillbox::{Door, FindSkillsOffer, Options, ToolFormat, TrustRule};

use crate::approval::{ApprovalCallback, NodeApproval};

/// A secret given to the skills that declare it: every one, or those named.
#[napi(object)]
pub struct SecretGrant {
    /// The value.
    pub value: String,
    /// The skills it may go to; all that declare it when absent.
    pub skills: Option<Vec<String>>,
}

/// The options of `createSkillsProvider`, in camelCase (see the package's README).
#[napi(object, object_to_js = false)]
pub struct ProviderOptions {
    /// Keep only skills whose name matches one of these globs.
    pub include: Option<Vec<String>>,
    /// Leave out skills whose name matches one of these globs.
    pub exclude: Option<Vec<String>>,
    /// A script's time limit in milliseconds (30000).
    pub timeout: Option<f64>,
    /// Bytes kept of each output stream (20480).
    pub max_output: Option<f64>,
    /// Every run's working folder; a fresh private one per run when absent.
    pub cwd: Option<String>,
    /// `best-effort` (the default), `required` or `off`.
    pub sandbox: Option<String>,
    /// The `skillbox-sandbox` binary (the package passes the one it carries).
    pub sandbox_helper: Option<String>,
    /// Let every skill's scripts use the network.
    pub allow_network: Option<bool>,
    /// Let these skills' scripts use the network.
    pub allow_network_for: Option<Vec<String>>,
    /// Secrets by variable name.
    pub secrets: Option<HashMap<String, SecretGrant>>,
    /// Variables of this process passed through to scripts.
    pub pass_env: Option<Vec<String>>,
    /// The package's wrapper around the user's `onApproval`.
    pub on_approval: Option<ApprovalCallback>,
    /// `roots` (the command line's rule, the default) or `all`.
    pub trust: Option<String>,
    /// `auto` (the default), `always` or `never`.
    pub find_skills: Option<String>,
    /// Most characters of the prompt's skill list.
    pub max_prompt_chars: Option<f64>,
    /// A file to append a line per run to.
    pub audit_log: Option<String>,
    /// The runtime's private folder.
    pub runtime_dir: Option<String>,
    /// Calls that run code at once.
    pub max_runs: Option<f64>,
}

/// Skill roots opened for a model.
#[napi]
pub struct NativeProvider {
    inner: skillbox::Provider,
}

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidArg, message)
}

/// A whole number option read as JavaScript gave it (a double): refused unless it is whole and
/// from `minimum` to `maximum` (napi's `u32` would wrap -1 to 4294967295 and NaN to 0).
fn whole_number(name: &str, value: f64, minimum: u64, maximum: u64) -> Result<u64> {
    let whole = value.is_finite() && value.fract() == 0.0;
    #[allow(clippy::cast_precision_loss)]
    let in_range = value >= minimum as f64 && value <= maximum as f64;
    if !(whole && in_range) {
        return Err(invalid(format!(
            "`{name}` must be a whole number from {minimum} to {maximum}, not {value}"
        )));
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(value as u64)
}

/// [`whole_number`] as a count or size in memory.
fn whole_size(name: &str, value: f64, minimum: u64, maximum: u64) -> Result<usize> {
    whole_number(name, value, minimum, maximum)
        .map(|whole| usize::try_from(whole).unwrap_or(usize::MAX))
}

fn options_from(roots: Vec<String>, given: ProviderOptions) -> Result<Options> {
    let mut options = Options::new(roots)
        .include(given.include.unwrap_or_default())
        .exclude(given.exclude.unwrap_or_default())
        .allow_network(given.allow_network.unwrap_or(false))
        .allow_network_for(given.allow_network_for.unwrap_or_default())
        .pass_env(given.pass_env.unwrap_or_default())
        .door(Door::Node);
    if let Some(timeout) = given.timeout {
        let milliseconds = whole_number("timeout", timeout, 1, 24 * 60 * 60 * 1000)?;
        options = options.timeout(Duration::from_millis(milliseconds));
    }
    if let Some(bytes) = given.max_output {
        options = options.max_output_bytes(whole_size("maxOutput", bytes, 1, 64 * 1024 * 1024)?);
    }
    if let Some(folder) = given.cwd {
        options = options.working_directory(folder);
    }
    if let Some(mode) = given.sandbox {
        options = options.sandbox(skillbox::parse_sandbox_mode(&mode).ok_or_else(|| {
            invalid(format!(
                "`sandbox` must be \"best-effort\", \"required\" or \"off\", not {mode:?}"
            ))
        })?);
    }
    if let Some(helper) = given.sandbox_helper {
        options = options.sandbox_helper(helper);
    }
    for (name, grant) in given.secrets.unwrap_or_default() {
        let skills = grant
            .skills
            .map(|skills| skills.into_iter().collect::<BTreeSet<_>>());
        options = options.secret(name, grant.value, skills);
    }
    if let Some(callback) = given.on_approval {
        options = options.approval(Arc::new(NodeApproval::new(callback)));
    }
    if let Some(rule) = given.trust {
        options = options.trust(TrustRule::parse(&rule).ok_or_else(|| {
            invalid(format!(
                "`trust` must be \"roots\" or \"all\", not {rule:?}"
            ))
        })?);
    }
    if let Some(offer) = given.find_skills {
        options = options.find_skills(FindSkillsOffer::parse(&offer).ok_or_else(|| {
            invalid(format!(
                "`findSkills` must be \"auto\", \"always\" or \"never\", not {offer:?}"
            ))
        })?);
    }
    if let Some(chars) = given.max_prompt_chars {
        options =
            options.max_prompt_chars(whole_size("maxPromptChars", chars, 1, u64::from(u32::MAX))?);
    }
    if let Some(file) = given.audit_log {
        options = options.audit_log(file);
    }
    if let Some(folder) = given.runtime_dir {
        options = options.runtime_directory(folder);
    }
    if let Some(runs) = given.max_runs {
        options = options.max_runs(whole_size("maxRuns", runs, 1, 4096)?);
    }
    Ok(options)
}

/// Open `roots` (folders of skills, lowest precedence first).
#[napi]
pub async fn open_provider(
    roots: Vec<String>,
    options: Option<ProviderOptions>,
) -> Result<NativeProvider> {
    let options = options_from(
        roots,
        options.unwrap_or(ProviderOptions {
            include: None,
            exclude: None,
            timeout: None,
            max_output: None,
            cwd: None,
            sandbox: None,
            sandbox_helper: None,
            allow_network: None,
            allow_network_for: None,
            secrets: None,
            pass_env: None,
            on_approval: None,
            trust: None,
            find_skills: None,
            max_prompt_chars: None,
            audit_log: None,
            runtime_dir: None,
            max_runs: None,
        }),
    )?;
    // Loading the catalog and probing the sandbox read files: off the async threads.
    let opened = tokio::task::spawn_blocking(move || skillbox::Provider::open(options))
        .await
        .map_err(|error| Error::from_reason(format!("opening the skills stopped: {error}")))?;
    opened
        .map(|inner| NativeProvider { inner })
        .map_err(|error| Error::from_reason(error.to_string()))
}

#[napi]
impl NativeProvider {
    /// The system-prompt section listing the skills.
    #[napi(getter)]
    pub fn system_prompt(&self) -> String {
        self.inner.system_prompt().to_owned()
    }

    /// The names of the skills a model may see, sorted.
    #[napi(getter)]
    pub fn skill_names(&self) -> Vec<String> {
        self.inner.skill_names()
    }

    /// What was found wrong while opening.
    #[napi(getter)]
    pub fn warnings(&self) -> Vec<String> {
        self.inner.warnings().to_vec()
    }

    /// The tool definitions in `format`: `responses`, `openai`, `anthropic`, `gemini`, `mcp`.
    #[napi]
    pub fn tools_for(&self, format: String) -> Result<Value> {
        let parsed = ToolFormat::parse(&format).ok_or_else(|| {
            invalid(format!(
                "unknown tool format {format:?}; use one of \"responses\", \"openai\" (Chat Completions), \"anthropic\", \"gemini\", \"mcp\""
            ))
        })?;
        Ok(self.inner.tools(parsed))
    }

    /// Answer a tool call: what seed 002's `handleToolCall` answers, failures included.
    #[napi]
    pub async fn handle_tool_call(&self, name: String, args: Option<Value>) -> Value {
        let arguments = args.unwrap_or_else(|| Value::Object(serde_json::Map::new()));
        self.inner
            .call(&name, &arguments)
            .await
            .content
            .into_value()
    }
}
