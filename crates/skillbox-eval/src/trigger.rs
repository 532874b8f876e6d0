//! One trigger query: the person's request goes to the agent with the whole catalog offered,
//! as `ask` offers it; the outcome is the skill the model named first, if any.
//!
//! The decision is read from the model's responses, not from the turn's events: a
//! [`TriggerProbe`] between the agent and the model notes the first call that names a skill
//! and answers every later round itself, so the turn ends there without another request (a
//! cancel racing the agent's next request could not promise that). Code never runs: the
//! approval hook denies it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use skillbox_agent::{
    Agent, AgentEvent, Conversation, ModelClient, ModelError, ModelEvent, ModelRequest,
    ModelResponse, StopReason, TurnInput, Usage, WireFormat,
};
use skillbox_tools::SkillsProvider;

use crate::calls::skill_named_by_call;

/// Model calls a trigger query may take: calls that name no skill (`find_skills`) let the
/// turn go on to the next round.
pub const TRIGGER_MAX_ROUNDS: u32 = 3;
/// What the probe answers once a skill was named.
const STOPPED: &str = "[skillbox eval: the turn stops once the model has named a skill]";

/// What one trigger query did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggerRun {
    /// The skill the model named first (loaded, or called a tool of), if any.
    pub triggered: Option<String>,
    /// The tools it called, in order, up to and including the one that named a skill.
    pub calls: Vec<String>,
    /// Why the run failed (the model could not be reached, say); the query then counts as not
    /// triggered and the report says so.
    pub error: Option<String>,
    /// Model calls made.
    pub rounds: u32,
    /// Wall time.
    pub duration_ms: u64,
    /// The transcript's id, when saved.
    pub transcript: Option<String>,
}

#[derive(Debug, Default)]
struct ProbeState {
    triggered: Option<String>,
    calls: Vec<String>,
    rounds: u32,
}

/// A model client that notes the first call naming a skill and then ends the turn.
pub struct TriggerProbe {
    inner: Arc<dyn ModelClient>,
    provider: Arc<SkillsProvider>,
    state: Mutex<ProbeState>,
}

impl std::fmt::Debug for TriggerProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TriggerProbe").finish_non_exhaustive()
    }
}

impl TriggerProbe {
    /// A probe over `inner`, naming skills of `provider`.
    #[must_use]
    pub fn new(inner: Arc<dyn ModelClient>, provider: Arc<SkillsProvider>) -> Self {
        TriggerProbe {
            inner,
            provider,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ProbeState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait::async_trait]
impl ModelClient for TriggerProbe {
    fn format(&self) -> WireFormat {
        self.inner.format()
    }

    async fn respond(
        &self,
        request: &ModelRequest<'_>,
        events: &mut (dyn FnMut(ModelEvent) + Send),
    ) -> Result<ModelResponse, ModelError> {
        if self.state().triggered.is_some() {
            return Ok(ModelResponse {
                content: STOPPED.to_owned(),
                tool_calls: Vec::new(),
                stop: StopReason::Completed,
                usage: Usage::default(),
                replay: None,
            });
        }
        let response = self.inner.respond(request, events).await?;
        let mut state = self.state();
        state.rounds += 1;
        for call in &response.tool_calls {
            let arguments = serde_json::from_str(&call.arguments)
                .unwrap_or_else(|_| serde_json::Value::String(call.arguments.clone()));
            state.calls.push(call.name.clone());
            if let Some(skill) = skill_named_by_call(&self.provider, &call.name, &arguments) {
                state.triggered = Some(skill);
                break;
            }
        }
        Ok(response)
    }
}

/// Run `query` through `agent`, whose model client is `probe`, in `conversation`, for at most
/// `timeout`.
pub async fn run_trigger_query(
    agent: &Agent,
    probe: &TriggerProbe,
    conversation: Conversation,
    query: &str,
    timeout: Duration,
) -> TriggerRun {
    let started = Instant::now();
    let transcript = Some(conversation.id().to_owned());
    let mut turn = agent.run(conversation, TurnInput::Prompt(query.to_owned()));
    let cancel = turn.canceller();
    let mut error = None;
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            event = turn.next_event() => match event {
                Some(AgentEvent::Error { message }) => error = Some(message),
                Some(_) => {}
                None => break,
            },
            () = &mut deadline, if !cancel.is_cancelled() => {
                error = Some(format!("no decision within {} s (--run-timeout)", timeout.as_secs()));
                cancel.cancel();
            }
        }
    }
    let saved = turn
        .finish()
        .await
        .is_ok_and(|conversation| conversation.is_saved());
    let state = probe.state();
    TriggerRun {
        error: if state.triggered.is_some() {
            None
        } else {
            error
        },
        triggered: state.triggered.clone(),
        calls: state.calls.clone(),
        rounds: state.rounds,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        transcript: transcript.filter(|_| saved),
    }
}
