//! `allowed-tools` as a bound that holds against a hostile model. With
//! `--enforce-allowed-tools` (and always in a sub-agent whose fork skill names them), a call
//! passes only when every restricted skill loaded since the person last chose one allows it:
//! a load may narrow the bound (the intersection), never widen it; a skill without
//! `allowed-tools` leaves it as it is. Only the person sets it anew, by invoking a skill
//! (`/name`). A response's calls are checked in order, so a `load_skill` counts for the calls
//! after it in the same response.

use skillbox_core::Skill;
use skillbox_tools::{CallStatus, SkillSession, ToolOutcome};

/// The restrictions in force: one per restricted skill loaded since the person last chose a
/// skill. `load_skill` always passes (the model may still read another skill's instructions).
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolBound {
    enforced: bool,
    /// One session per restricted skill, made active in it: a call passes when each permits it.
    limits: Vec<SkillSession>,
}

impl ToolBound {
    /// An empty bound; `enforced` says whether loads restrict at all.
    pub(crate) fn new(enforced: bool) -> Self {
        ToolBound {
            enforced,
            limits: Vec::new(),
        }
    }

    /// `skill` was loaded: its `allowed-tools`, when it names any, narrow the bound.
    pub(crate) fn narrow(&mut self, skill: &Skill) {
        let allowed = &skill.properties.allowed_tools;
        if !self.enforced || allowed.is_empty() {
            return;
        }
        let known = self.limits.iter().any(|limit| {
            limit.active_skill() == Some(skill.name()) && limit.allowed_tools() == Some(allowed)
        });
        if !known {
            let mut limit = SkillSession::new(true);
            limit.activate(skill);
            self.limits.push(limit);
        }
    }

    /// The person invoked `skill`: the bound starts again from it.
    pub(crate) fn restart(&mut self, skill: &Skill) {
        self.limits.clear();
        self.narrow(skill);
    }

    /// This bound and `other`'s together (a sub-agent keeps its parent's and adds its own).
    pub(crate) fn joined(&self, other: &ToolBound) -> ToolBound {
        let mut joined = ToolBound::new(true);
        joined.limits = self.limits.clone();
        joined.limits.extend(other.limits.iter().cloned());
        joined
    }

    /// The answer to a call of `tool` the bound refuses, naming the skill whose
    /// `allowed-tools` refuse it and what they bind (`holder`); `None` when it may be called.
    pub(crate) fn refusal(&self, tool: &str, holder: &str) -> Option<ToolOutcome> {
        let limit = self.limits.iter().find(|limit| !limit.permits(tool))?;
        Some(ToolOutcome::with_status(
            CallStatus::Denied,
            format!(
                "the tool `{tool}` is not in the allowed-tools of `{}` ({}), which bound {holder}; loading another skill does not lift them",
                limit.active_skill().unwrap_or_default(),
                limit.allowed_tools().unwrap_or_default().join(", ")
            ),
        ))
    }
}
