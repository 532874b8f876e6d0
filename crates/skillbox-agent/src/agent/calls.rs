//! How one round's calls are answered: each is checked, in order, against what this turn
//! allows (offered to the model, a JSON object, not repeated too often, within the
//! sub-agent's scope and the `allowed-tools` bound as the calls before it left it), then run
//! through the door policy every door uses (which asks the approval hook and takes the run
//! queue), concurrently, results in call order.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use skillbox_core::Skill;
use skillbox_tools::door;
use skillbox_tools::registry;
use skillbox_tools::{
    Approval, ApprovalDecision, ApprovalRequest, Arguments, CallContext, CallIntent, CallStatus,
    Offer, SkillsProvider, ToolEffect, ToolOutcome, Unbudgeted,
};

use super::bound::ToolBound;
use super::fork::{Scope, is_fork};
use super::turn::{Emit, Round};
use super::{Agent, Conversation, MAX_CALLS_PER_ROUND, MAX_FORK_DEPTH, MAX_IDENTICAL_CALLS};
use crate::conversation::{ToolCall, ToolResult};
use crate::events::AgentEvent;

/// How a call of one round is answered.
pub(super) enum Plan {
    /// With this outcome, without running anything.
    Answer(ToolOutcome),
    /// Through the door policy, with the model's argument text.
    Run,
    /// By a sub-agent running this skill, held to `bound` (the parent's, as the calls before
    /// this one left it).
    Fork {
        skill: Arc<Skill>,
        arguments: Option<String>,
        bound: ToolBound,
    },
}

/// How often each call (tool and arguments, key order ignored) was made in a turn. Calls are
/// kept as hashes (keyed anew for every turn): a turn of large arguments must not keep a copy
/// of each.
#[derive(Debug, Default)]
pub(super) struct IdenticalCalls {
    keys: RandomState,
    seen: HashMap<u64, u32>,
}

impl IdenticalCalls {
    /// Count one more call of `name` with `arguments`; returns how many there were in all.
    fn count(&mut self, name: &str, arguments: &Value) -> u32 {
        let key = self.keys.hash_one((name, canonical_json(arguments)));
        let seen = self.seen.entry(key).or_insert(0);
        *seen += 1;
        *seen
    }
}

/// The agent's approval hook, reporting a denial on the turn's events as it happens.
struct ReportingApproval<'a> {
    inner: &'a dyn Approval,
    emit: Emit<'a>,
    call: &'a ToolCall,
}

#[async_trait::async_trait]
impl Approval for ReportingApproval<'_> {
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalDecision {
        let decision = self.inner.decide(request).await;
        if let ApprovalDecision::Deny { reason } = &decision {
            (self.emit)(AgentEvent::ApprovalDenied {
                id: self.call.id.clone(),
                name: self.call.name.clone(),
                reason: reason.clone(),
            });
        }
        decision
    }
}

impl Agent {
    /// Answer one round's calls: check each (offered, repeated, in scope, allowed), run them
    /// concurrently through the door policy (which decodes their arguments, asks the approval
    /// hook and takes the run queue), and return the results in the order of the calls.
    /// `None` when the turn was cancelled meanwhile.
    pub(super) async fn answer_calls(
        &self,
        provider: &Arc<SkillsProvider>,
        conversation: &mut Conversation,
        calls: &[ToolCall],
        offered: &BTreeSet<String>,
        round: &mut Round<'_>,
    ) -> Option<Vec<ToolResult>> {
        let emit = round.emit;
        // What each call does: a call naming a skill is that skill's load_skill.
        let effective: Vec<ToolCall> = calls
            .iter()
            .map(|call| {
                skill_called_by_name(provider, call, offered, round.scope)
                    .unwrap_or_else(|| call.clone())
            })
            .collect();
        let mut plans = Vec::with_capacity(calls.len());
        // The bound as the calls before each one leave it: a load earlier in this response
        // counts (whether or not it then succeeds), so no call runs outside it.
        let mut bound = conversation.bound.clone();
        for (position, (call, effective)) in calls.iter().zip(&effective).enumerate() {
            emit(AgentEvent::ToolCallStarted {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: serde_json::from_str::<Value>(&call.arguments)
                    .unwrap_or_else(|_| Value::String(call.arguments.clone())),
            });
            if position >= MAX_CALLS_PER_ROUND {
                plans.push(Plan::Answer(ToolOutcome::with_status(
                    CallStatus::Denied,
                    format!(
                        "not run: one response may make at most {MAX_CALLS_PER_ROUND} tool calls"
                    ),
                )));
                continue;
            }
            let intent = registry::intent_of(
                provider,
                &effective.name,
                Arguments::Text(&effective.arguments),
            );
            let plan = self
                .plan(provider, &bound, call, effective, &intent, offered, round)
                .await;
            if let Some(ToolEffect::LoadsSkill(loaded)) = &intent.effect
                && !(is_fork(&loaded.skill) && round.scope.depth < MAX_FORK_DEPTH)
            {
                bound.narrow(&loaded.skill);
            }
            plans.push(plan);
        }
        let scope = round.scope;
        let cancel = round.cancel;
        let servers = Arc::clone(&conversation.servers);
        let servers = &*servers;
        let runs =
            calls
                .iter()
                .zip(&effective)
                .zip(plans)
                .map(|((call, effective), plan)| async move {
                    let started = Instant::now();
                    let outcome = match plan {
                        Plan::Answer(outcome) => outcome,
                        Plan::Run => {
                            let approval = ReportingApproval {
                                inner: self.approval.as_ref(),
                                emit,
                                call,
                            };
                            let mut budget = Unbudgeted;
                            self.policy
                                .call(
                                    provider,
                                    &effective.name,
                                    Arguments::Text(&effective.arguments),
                                    CallContext::new(self.door, Offer::Named(offered), &mut budget)
                                        .with_approval(&approval)
                                        .with_servers(servers),
                                )
                                .await
                        }
                        Plan::Fork {
                            skill,
                            arguments,
                            bound,
                        } => {
                            self.fork(
                                provider,
                                &skill,
                                arguments.as_deref(),
                                scope,
                                &bound,
                                emit,
                                cancel,
                            )
                            .await
                        }
                    };
                    let result = ToolResult {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        content: outcome.text(),
                        is_error: outcome.is_error(),
                    };
                    emit(AgentEvent::ToolCallFinished {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        result: result.content.clone(),
                        is_error: result.is_error,
                        duration_ms: u64::try_from(started.elapsed().as_millis())
                            .unwrap_or(u64::MAX),
                    });
                    (result, outcome.effect)
                });
        let answered = tokio::select! {
            answered = futures_util::future::join_all(runs) => answered,
            () = cancel.cancelled() => return None,
        };
        let mut results = Vec::with_capacity(answered.len());
        let mut loaded_skills = Vec::new();
        for (result, effect) in answered {
            // A sub-agent's answer carries no effect: a fork skill never becomes the parent's
            // active skill.
            if let Some(ToolEffect::LoadsSkill(loaded)) = effect {
                loaded_skills.push(loaded.skill);
            }
            results.push(result);
        }
        for skill in loaded_skills {
            conversation.activate(&skill);
            if let Some(model) = &skill.properties.model
                && *model != round.model
            {
                round.model.clone_from(model);
                emit(AgentEvent::ModelChanged {
                    model: model.clone(),
                    skill: skill.name().to_owned(),
                });
            }
        }
        Some(results)
    }

    /// How to answer one call: what this turn refuses is answered here; the rest goes to the
    /// door policy (which answers unknown tools and bad arguments with the text every door
    /// gives), or to a sub-agent for a `context: fork` skill, once approved.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn plan(
        &self,
        provider: &SkillsProvider,
        bound: &ToolBound,
        call: &ToolCall,
        effective: &ToolCall,
        intent: &CallIntent,
        offered: &BTreeSet<String>,
        round: &mut Round<'_>,
    ) -> Plan {
        let name = effective.name.as_str();
        if !offered.contains(name) {
            if let Some((owner, _)) = provider.skill_tool(name)
                && round.scope.allows(owner.name())
            {
                return Plan::Answer(ToolOutcome::invalid_params(format!(
                    "the tool `{name}` comes with the skill `{}`: call load_skill with {{\"skill\": \"{}\"}} first",
                    owner.name(),
                    owner.name()
                )));
            }
            // Not a tool here: the door policy says so, listing the tools offered.
            return Plan::Run;
        }
        if let Ok(parsed) = serde_json::from_str::<Value>(&effective.arguments) {
            let seen = round.identical.count(name, &parsed);
            if seen >= MAX_IDENTICAL_CALLS {
                return Plan::Answer(ToolOutcome::with_status(
                    CallStatus::Denied,
                    format!(
                        "you already called `{name}` with these same arguments {} times in this turn, and the results are above; do not call it again: use those results, change the arguments, or answer the user",
                        seen - 1
                    ),
                ));
            }
        }
        if let Some(skill) = &intent.skill
            && !round.scope.allows(skill)
        {
            return Plan::Answer(ToolOutcome::invalid_params(format!(
                "no skill named `{skill}` is available here"
            )));
        }
        if let Some(refusal) = round.scope.bound.refusal(name, "this sub-agent") {
            return Plan::Answer(refusal);
        }
        let holder = if round.scope.depth > 0 {
            "this sub-agent"
        } else {
            "this conversation until the person invokes a skill (/name)"
        };
        if let Some(refusal) = bound.refusal(name, holder) {
            return Plan::Answer(refusal);
        }
        if round.scope.depth < MAX_FORK_DEPTH
            && let Some(ToolEffect::LoadsSkill(loaded)) = &intent.effect
            && is_fork(&loaded.skill)
        {
            let skill = Arc::clone(&loaded.skill);
            // A sub-agent runs code on the model's behalf (and the skill's commands, when they
            // run): the person is asked first, as for any call that runs code.
            let approval = ReportingApproval {
                inner: self.approval.as_ref(),
                emit: round.emit,
                call,
            };
            let request = ApprovalRequest {
                tool: name.to_owned(),
                skill: Some(skill.name().to_owned()),
                arguments: serde_json::from_str(&effective.arguments)
                    .unwrap_or_else(|_| Value::String(effective.arguments.clone())),
                summary: format!(
                    "start a sub-agent running the skill `{}` (context: fork)",
                    skill.name()
                ),
            };
            if let ApprovalDecision::Deny { reason } = approval.decide(&request).await {
                return Plan::Answer(door::denied(&reason));
            }
            let raw = serde_json::from_str::<Value>(&effective.arguments)
                .ok()
                .and_then(|arguments| arguments.get("arguments").cloned())
                .map(|value| match value {
                    Value::String(text) => text,
                    other => other.to_string(),
                });
            return Plan::Fork {
                skill,
                arguments: raw,
                bound: bound.clone(),
            };
        }
        Plan::Run
    }
}

/// A call that names a skill instead of a tool (small models call `greeting("Ada")` for the
/// skill `greeting`: measured with Qwen2.5-Coder-1.5B) is that skill's `load_skill`, with the
/// call's arguments as the skill's arguments. Only for skills the scope shows the model, and
/// only when no tool has the name.
fn skill_called_by_name(
    provider: &SkillsProvider,
    call: &ToolCall,
    offered: &BTreeSet<String>,
    scope: &Scope,
) -> Option<ToolCall> {
    let loader = registry::skill_loader();
    if offered.contains(&call.name) || !offered.contains(loader) || !scope.allows(&call.name) {
        return None;
    }
    let skill = provider.find_model_skill(&call.name, None).ok()?;
    let arguments = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(Value::Object(map)) if map.is_empty() => None,
        Ok(Value::Object(map)) => Some(match map.get("arguments") {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => Value::Object(map).to_string(),
        }),
        Ok(Value::String(text)) => Some(text),
        Ok(Value::Null) => None,
        Ok(other) => Some(other.to_string()),
        Err(_) if call.arguments.trim().is_empty() => None,
        Err(_) => Some(call.arguments.clone()),
    };
    Some(ToolCall {
        id: call.id.clone(),
        name: loader.to_owned(),
        arguments: registry::loading_arguments(skill.name(), arguments).to_string(),
        item_id: None,
    })
}

/// JSON with object keys sorted at every level, so equal arguments compare equal whatever
/// order the model wrote them in.
pub(super) fn canonical_json(value: &Value) -> String {
    pub(super) fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let ordered: BTreeMap<&String, Value> = map
                    .iter()
                    .map(|(key, value)| (key, sorted(value)))
                    .collect();
                Value::Object(
                    ordered
                        .into_iter()
                        .map(|(key, value)| (key.clone(), value))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}
