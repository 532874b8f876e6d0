//! A conversation's skill state (seed 003): which skill is active, its `allowed-tools` (enforced
//! only when the operator opts in; `load_skill` is never blocked, so the model can always
//! switch skills), and its `model` override, which an agent loop reads before each step.

use crate::outcome::{CallStatus, ToolOutcome};
use crate::registry;

/// Skill state of one agent conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSession {
    enforce_allowed_tools: bool,
    active_skill: Option<String>,
    allowed_tools: Option<Vec<String>>,
    model_override: Option<String>,
}

impl SkillSession {
    /// A new session; `enforce_allowed_tools` turns on refusal of tools outside the active
    /// skill's `allowed-tools`.
    #[must_use]
    pub fn new(enforce_allowed_tools: bool) -> Self {
        SkillSession {
            enforce_allowed_tools,
            ..SkillSession::default()
        }
    }

    /// The skill loaded last.
    #[must_use]
    pub fn active_skill(&self) -> Option<&str> {
        self.active_skill.as_deref()
    }

    /// The active skill's `allowed-tools`, when it declares any.
    #[must_use]
    pub fn allowed_tools(&self) -> Option<&[String]> {
        self.allowed_tools.as_deref()
    }

    /// The active skill's `model` override, for the agent loop.
    #[must_use]
    pub fn model_override(&self) -> Option<&str> {
        self.model_override.as_deref()
    }

    /// Whether `tool` may be called now.
    #[must_use]
    pub fn permits(&self, tool: &str) -> bool {
        if !self.enforce_allowed_tools || registry::loads_skills(tool) {
            return true;
        }
        match &self.allowed_tools {
            None => true,
            Some(patterns) => patterns.iter().any(|pattern| tool_matches(pattern, tool)),
        }
    }

    /// The answer to a call of `tool` this session does not permit (outside the active
    /// skill's `allowed-tools`, when enforced); `None` when it may be called.
    #[must_use]
    pub fn refusal(&self, tool: &str) -> Option<ToolOutcome> {
        if self.permits(tool) {
            return None;
        }
        let skill = self.active_skill.as_deref().unwrap_or_default();
        let allowed = self.allowed_tools.as_deref().unwrap_or_default().join(", ");
        Some(ToolOutcome::with_status(
            CallStatus::Denied,
            format!(
                "the tool `{tool}` is not in the allowed-tools of the active skill `{skill}` ({allowed}); load another skill with load_skill to switch"
            ),
        ))
    }

    /// Make `skill` the active skill (it was loaded): its `allowed-tools` and `model` override
    /// apply from now on, and a skill without them clears the previous one's.
    pub fn activate(&mut self, skill: &skillbox_core::Skill) {
        self.active_skill = Some(skill.name().to_owned());
        self.allowed_tools = (!skill.properties.allowed_tools.is_empty())
            .then(|| skill.properties.allowed_tools.clone());
        self.model_override = skill.properties.model.clone();
    }

    /// Forget the active skill's `model` override (a turn ended: the override holds for the
    /// rest of the turn that loaded the skill only).
    pub fn clear_model_override(&mut self) {
        self.model_override = None;
    }
}

/// `allowed-tools` patterns name tools, optionally with an argument filter in parentheses
/// (`Bash(git:*)`); the tool part must equal the tool's name.
fn tool_matches(pattern: &str, tool: &str) -> bool {
    let name = pattern.split('(').next().unwrap_or(pattern).trim();
    name == tool || name == "*"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert!(tool_matches("use_skill", "use_skill"));
        assert!(tool_matches("Bash(git:*)", "Bash"));
        assert!(!tool_matches("Read", "use_skill"));
        let mut session = SkillSession::new(true);
        assert!(session.permits("use_skill"));
        session.allowed_tools = Some(vec!["read_skill_file".into()]);
        assert!(!session.permits("use_skill"));
        assert!(session.permits("load_skill"));
        assert!(SkillSession::new(false).permits("anything"));
    }
}
