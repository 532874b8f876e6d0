//! The skills a skill requires (`requires`), as one load brings them in: the loaded skill's
//! instructions come with theirs, and their MCP servers start with its own.

use std::sync::Arc;

use skillbox_core::Skill;

use super::SkillsProvider;

/// Skills one load brings in at most (the loaded skill and those it requires, transitively).
pub const MAX_REQUIRED_SKILLS: usize = 16;

impl SkillsProvider {
    /// `skill` and the skills it requires (`requires`), transitively, each once, in the order
    /// they are first named; a name the catalog does not hold is skipped (`validate` reports it),
    /// and so is a skill models may not load (`disable-model-invocation`).
    #[must_use]
    pub fn with_requirements(&self, skill: &Arc<Skill>) -> Vec<Arc<Skill>> {
        let mut found = vec![Arc::clone(skill)];
        let mut next = 0;
        while next < found.len() && found.len() < MAX_REQUIRED_SKILLS {
            let requires = found[next].properties.requires.clone();
            next += 1;
            for name in requires {
                if found.len() >= MAX_REQUIRED_SKILLS {
                    break;
                }
                if found.iter().any(|known| known.name() == name) {
                    continue;
                }
                // A skill only a person may start is never brought in by another's `requires`:
                // that would let a model load it, and start its servers, through a neighbour.
                if let Some(required) = self.catalog().get(&name)
                    && required.model_invocable()
                {
                    found.push(Arc::clone(required));
                }
            }
        }
        found
    }
}
