//! Which skill a model's tool call names: the one rule trigger evals and the
//! `skill_loaded` check share.

use serde_json::Value;
use skillbox_tools::{Arguments, SkillsProvider, registry};

/// The skill a call of `tool` with `arguments` names: `load_skill`, `use_skill` or
/// `read_skill_file` of it, one of its `tools.json` tools, or a call named after the skill
/// itself (small models call `greeting(...)` for the skill `greeting`). `None` for calls that
/// name no skill (`find_skills`, `list_skills`, a listing).
#[must_use]
pub fn skill_named_by_call(
    provider: &SkillsProvider,
    tool: &str,
    arguments: &Value,
) -> Option<String> {
    let text = match arguments {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    if let Some(name) = registry::intent_of(provider, tool, Arguments::Text(&text)).skill {
        // A name no skill answers to fails, and the model may try again: not a decision.
        return provider
            .find_model_skill(&name, None)
            .ok()
            .map(|skill| skill.name().to_owned());
    }
    if let Some((skill, _)) = provider.skill_tool(tool) {
        return Some(skill.name().to_owned());
    }
    provider
        .find_model_skill(tool, None)
        .ok()
        .map(|skill| skill.name().to_owned())
}

/// Whether a call of `tool` loads a skill's instructions (a tool whose calls load skills, or
/// the skill's name called as a tool).
#[must_use]
pub fn loads_skill(provider: &SkillsProvider, tool: &str) -> bool {
    registry::loads_skills(tool)
        || (provider.skill_tool(tool).is_none() && provider.find_model_skill(tool, None).is_ok())
}
