//! [`Session`]: one conversation over a [`Provider`]. It keeps the active skill (the one
//! loaded last), its `allowed-tools` (refused outside them when enforced; `load_skill` is
//! never refused, so the model can always switch), its `model` override for an agent loop,
//! and the skill servers the conversation holds: a loaded skill's MCP servers start, and
//! their tools are offered and answered until the session ends.

use std::sync::Mutex;

use serde_json::Value;
use skillbox_tools::registry;
use skillbox_tools::{
    Arguments, ServerHolds, SkillSession, ToolEffect, ToolFormat, ToolOutcome, render_tools,
};

use crate::provider::{Provider, block_on};

/// A conversation's skill state and servers. Dropped, its servers stop (unless another
/// session holds them too).
#[derive(Debug)]
pub struct Session {
    provider: Provider,
    servers: ServerHolds,
    state: Mutex<SkillSession>,
}

impl Session {
    pub(crate) fn new(provider: Provider, enforce_allowed_tools: bool) -> Self {
        Session {
            provider,
            servers: ServerHolds::new(),
            state: Mutex::new(SkillSession::new(enforce_allowed_tools)),
        }
    }

    /// Answer `name(arguments)` within the conversation, as [`Provider::call`] does, after
    /// checking the active skill's `allowed-tools` (when enforced); a load makes its skill
    /// the active one.
    pub async fn call(&self, name: &str, arguments: &Value) -> ToolOutcome {
        self.call_with(name, Arguments::from(arguments)).await
    }

    /// [`Session::call`] with the arguments in whatever shape the caller holds (see
    /// [`Provider::call_with`]).
    pub async fn call_with(&self, name: &str, arguments: Arguments<'_>) -> ToolOutcome {
        if let Some(refusal) = self.state().as_ref().and_then(|state| state.refusal(name)) {
            return refusal;
        }
        let outcome = self
            .provider
            .call_within(name, arguments, Some(&self.servers))
            .await;
        if let Some(ToolEffect::LoadsSkill(loaded)) = &outcome.effect
            && let Ok(mut state) = self.state.lock()
        {
            state.activate(&loaded.skill);
        }
        outcome
    }

    /// [`Session::call`] for a caller without an async runtime (see
    /// [`Provider::call_blocking`]).
    #[must_use]
    pub fn call_blocking(&self, name: &str, arguments: &Value) -> ToolOutcome {
        block_on(self.call(name, arguments))
    }

    /// [`Session::call_with`] for a caller without an async runtime.
    #[must_use]
    pub fn call_blocking_with(&self, name: &str, arguments: Arguments<'_>) -> ToolOutcome {
        block_on(self.call_with(name, arguments))
    }

    /// The tools offered now, in a provider's format: the provider's, with the tools of the
    /// servers the loaded skills started.
    #[must_use]
    pub fn tools(&self, format: ToolFormat) -> Value {
        let provider = self.provider.skills_provider();
        let offer = self.provider.tool_offer();
        let base = registry::specs(provider, offer);
        let held = registry::held_server_tools(offer, &self.servers)
            .iter()
            .map(|tool| tool.spec(provider))
            .collect();
        let tools = registry::with_held_server_tools(&base, held, |spec| spec.name.as_str());
        render_tools(&tools, format)
    }

    /// The skill loaded last.
    #[must_use]
    pub fn active_skill(&self) -> Option<String> {
        self.state()
            .and_then(|state| state.active_skill().map(str::to_owned))
    }

    /// The active skill's `allowed-tools`, when it declares any.
    #[must_use]
    pub fn allowed_tools(&self) -> Option<Vec<String>> {
        self.state()
            .and_then(|state| state.allowed_tools().map(<[String]>::to_vec))
    }

    /// The active skill's `model` override, for an agent loop choosing its next model.
    #[must_use]
    pub fn model_override(&self) -> Option<String> {
        self.state()
            .and_then(|state| state.model_override().map(str::to_owned))
    }

    fn state(&self) -> Option<SkillSession> {
        self.state.lock().ok().map(|state| state.clone())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.servers.release();
    }
}
