//! `load_skill` (seed 002): a skill's instructions, its arguments substituted (and its
//! `` !`command` `` lines run when the operator turned preprocessing on), with the listing of
//! what it offers; or the list of skills.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use skillbox_core::Skill;

use crate::effect::{CallIntent, LoadedSkill, ToolEffect};
use crate::outcome::ToolOutcome;
use crate::provider::SkillsProvider;
use crate::registry::{
    Annotations, ApprovalSubject, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles,
    RunsCode, Tool, ToolFacts,
};

/// Skill names listed in the schema's `enum` at most; past that the schema says only `string`.
pub const MAX_ENUM_SKILL_NAMES: usize = 200;

/// `load_skill`.
#[derive(Debug, Clone, Copy)]
pub struct LoadSkill;

/// Its parameters.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LoadSkillParams {
    /// Name of the skill to load
    #[serde(default)]
    skill: Option<String>,
    /// Arguments for the skill, as a person would type them after its name
    #[serde(default)]
    #[schemars(with = "String")]
    arguments: Option<Value>,
    /// List the available skills instead of loading one
    #[serde(default)]
    #[schemars(with = "bool")]
    list_skills: Option<Value>,
    #[serde(default)]
    #[schemars(skip)]
    skill_name: Option<String>,
    #[serde(default, rename = "skillName")]
    #[schemars(skip)]
    skill_name_camel: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    name: Option<String>,
}

impl LoadSkillParams {
    /// The skill named, by any of the names models use for it.
    #[must_use]
    pub fn skill(&self) -> Option<&str> {
        super::first_skill_name([
            self.skill.as_deref(),
            self.skill_name.as_deref(),
            self.skill_name_camel.as_deref(),
            self.name.as_deref(),
        ])
    }

    /// Whether the call asks for the list of skills instead.
    fn lists_skills(&self) -> bool {
        match &self.list_skills {
            Some(Value::Bool(flag)) => *flag || self.skill().is_none(),
            Some(_) => self.skill().is_none(),
            None => false,
        }
    }

    /// The arguments as the text a person would type: a list is joined with spaces.
    #[must_use]
    pub fn arguments_text(&self) -> Option<String> {
        match &self.arguments {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .map_or_else(|| item.to_string(), str::to_owned)
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Some(Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        }
    }
}

impl Tool for LoadSkill {
    const NAME: &'static str = "load_skill";
    const DESCRIPTION: &'static str = "Load the full instructions of a skill. Call this before using a skill for the first time. Pass `arguments` when the skill takes them; pass `list_skills: true` (and no skill) to list every skill.";
    const FACTS: ToolFacts = ToolFacts {
        profiles: Profiles::SKILLS,
        runs_code: RunsCode::WhenCommandsRun,
        reads_files: ReadsFiles::Always,
        mutating: false,
        loads_skills: true,
        needs_services: false,
        params_size: ParamsSize::Small,
        annotations: Annotations::READ_ONLY,
    };
    type Params<'a> = LoadSkillParams;

    fn specialise(&self, provider: &SkillsProvider, skills: Option<&[&str]>, schema: &mut Value) {
        match skills {
            Some(names) => name_skills(schema, names),
            None => {
                let skills = provider.model_skills();
                let names: Vec<&str> = skills.iter().map(|skill| skill.name()).collect();
                name_skills(schema, &names);
            }
        }
        schema["required"] = json!([]);
    }

    fn intent(&self, provider: &SkillsProvider, params: &LoadSkillParams) -> CallIntent {
        let skill = params.skill().map(str::to_owned);
        let effect = (!params.lists_skills())
            .then(|| params.skill())
            .flatten()
            .and_then(|name| provider.find_model_skill(name, None).ok())
            .map(|skill| ToolEffect::LoadsSkill(LoadedSkill::new(provider, skill)));
        CallIntent { skill, effect }
    }

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: LoadSkillParams,
    ) -> PrepareFuture<'a> {
        Box::pin(async move {
            if params.lists_skills() {
                return Ok(Prepared::answered(list(provider)));
            }
            let skill = super::named_skill(provider, Self::NAME, params.skill(), None)?;
            let arguments = params.arguments_text();
            if provider.runs_commands_on_load() {
                let provider = Arc::clone(provider);
                let subject = ApprovalSubject::skill(&skill);
                return Ok(Prepared::runs_code(
                    subject,
                    Box::pin(async move {
                        let text = provider
                            .skill_instructions(&skill, arguments.as_deref())
                            .await;
                        answer(with_required_instructions(&provider, &skill, text))
                    }),
                ));
            }
            let provider = Arc::clone(provider);
            Ok(Prepared::reads_files(
                "reading the skill's instructions",
                move || {
                    let text = provider.instructions_without_commands(&skill, arguments.as_deref());
                    answer(with_required_instructions(&provider, &skill, text))
                },
            ))
        })
    }
}

/// The arguments of a call loading `skill` with `arguments` ([`crate::registry::loading_arguments`]).
pub(crate) fn arguments_loading(skill: &str, arguments: Option<String>) -> Value {
    let mut load = json!({ "skill": skill });
    if let Some(arguments) = arguments {
        load["arguments"] = Value::String(arguments);
    }
    load
}

/// List `names` as the values `skill` may take, when there are a few (a sub-agent's share of
/// the catalog, or the whole of a small one); otherwise the schema says only `string`.
pub fn name_skills(schema: &mut Value, names: &[&str]) {
    let Some(Value::Object(skill)) = schema.pointer_mut("/properties/skill") else {
        return;
    };
    skill.remove("enum");
    if !names.is_empty() && names.len() <= MAX_ENUM_SKILL_NAMES {
        skill.insert("enum".to_owned(), json!(names));
    }
}

fn answer(instructions: Result<String, String>) -> ToolOutcome {
    match instructions {
        Ok(text) => ToolOutcome::ok(Value::String(text)),
        Err(message) => ToolOutcome::failed(message),
    }
}

/// `{skills: [{name, description, argument_hint?}]}` of every skill a model may see.
fn list(provider: &SkillsProvider) -> ToolOutcome {
    let skills: Vec<Value> = provider
        .model_skills()
        .iter()
        .map(|skill| {
            let mut entry = json!({ "name": skill.name(), "description": skill.description });
            if let Some(hint) = &skill.properties.argument_hint {
                entry["argument_hint"] = json!(hint);
            }
            entry
        })
        .collect();
    ToolOutcome::ok(json!({ "skills": skills }))
}

/// The instructions of the skills `skill` requires, each under its own heading, after the
/// skill's own `text`.
fn with_required_instructions(
    provider: &SkillsProvider,
    skill: &Arc<Skill>,
    text: Result<String, String>,
) -> Result<String, String> {
    let mut text = text?;
    for required in provider.with_requirements(skill).iter().skip(1) {
        match provider.instructions_without_commands(required, None) {
            Ok(instructions) => text.push_str(&format!(
                "\n\n---\n\n# Skill `{}` (required by `{}`)\n\n{instructions}",
                required.name(),
                skill.name()
            )),
            Err(message) => text.push_str(&format!(
                "\n\n---\n\nThe required skill `{}` could not be loaded: {message}",
                required.name()
            )),
        }
    }
    Ok(text)
}
