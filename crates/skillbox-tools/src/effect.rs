//! What a tool call concerns and changes beyond its answer. A built-in tool says it from its
//! typed parameters ([`crate::registry::Tool::intent`]), before anything runs; the door policy
//! attaches the effect to the outcome of a call that succeeded. Whoever keeps state around
//! calls acts on the effect, never on a tool's name: the door policy starts a loaded skill's
//! MCP servers, a conversation makes it the active skill, an agent narrows what the rest of a
//! response may call and runs a `context: fork` skill as a sub-agent, an MCP session tells its
//! client the tools changed, and evals note which skill a model chose.

use std::sync::Arc;

use skillbox_core::Skill;

/// What a call of a tool concerns and would change, told from its arguments alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallIntent {
    /// The skill the call names (`load_skill`, `use_skill`, `read_skill_file`), as given: a
    /// name the catalog may not hold (checked against a sub-agent's scope before the call).
    pub skill: Option<String>,
    /// What the call changes when it succeeds.
    pub effect: Option<ToolEffect>,
}

/// What a successful call changed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ToolEffect {
    /// A skill's instructions were loaded (and those of the skills it requires).
    LoadsSkill(LoadedSkill),
    /// The tools offered changed (`define_tool`, `remove_tool`).
    ChangesTools,
}

impl PartialEq for ToolEffect {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ToolEffect::LoadsSkill(one), ToolEffect::LoadsSkill(other)) => one == other,
            (ToolEffect::ChangesTools, ToolEffect::ChangesTools) => true,
            _ => false,
        }
    }
}

impl ToolEffect {
    /// The skill loaded, when this effect loads one.
    #[must_use]
    pub fn loaded_skill(&self) -> Option<&LoadedSkill> {
        match self {
            ToolEffect::LoadsSkill(loaded) => Some(loaded),
            ToolEffect::ChangesTools => None,
        }
    }
}

/// A skill a call loads: the one named, and the skills it requires, transitively
/// ([`crate::SkillsProvider::with_requirements`]).
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    /// The skill named.
    pub skill: Arc<Skill>,
    /// It and the skills it requires, each once, in the order first named: whose servers
    /// start, and whose instructions come with its own.
    pub with_requirements: Vec<Arc<Skill>>,
}

impl PartialEq for LoadedSkill {
    fn eq(&self, other: &Self) -> bool {
        // The same copy: its identity and its folder (two roots may hold one name).
        let same = |one: &Arc<Skill>, other: &Arc<Skill>| {
            one.id == other.id && one.directory == other.directory
        };
        same(&self.skill, &other.skill)
            && self.with_requirements.len() == other.with_requirements.len()
            && self
                .with_requirements
                .iter()
                .zip(&other.with_requirements)
                .all(|(one, other)| same(one, other))
    }
}

impl LoadedSkill {
    /// `skill` as one load brings it in, with the skills it requires from `provider`.
    #[must_use]
    pub fn new(provider: &crate::SkillsProvider, skill: Arc<Skill>) -> Self {
        LoadedSkill {
            with_requirements: provider.with_requirements(&skill),
            skill,
        }
    }

    /// Whether any of the skills loaded declares MCP servers (which then start).
    #[must_use]
    pub fn declares_servers(&self) -> bool {
        self.with_requirements
            .iter()
            .any(|skill| !skill.properties.mcp_servers.is_empty())
    }
}
