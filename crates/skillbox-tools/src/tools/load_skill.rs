//! `load_skill` (seed 002): a skill's instructions, its arguments substituted (and its
//! `` !`command` `` lines run when the operator turned preprocessing on), with the listing of
//! what it offers; or the list of skills.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use skillbox_core::Skill;

use super::skill_name::{OptionalSkillName, SkillParameter};
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

/// Its parameters. None is required (`list_skills` needs no skill), and the schema says so
/// with an empty `required`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("required" = []))]
pub struct LoadSkillParams {
    /// The skill, by any name models give it.
    #[serde(flatten)]
    skill: OptionalSkillName<LoadSkillName>,
    /// Arguments for the skill, as a person would type them after its name
    #[serde(default)]
    #[schemars(with = "String")]
    arguments: Option<Value>,
    /// List the available skills instead of loading one
    #[serde(default)]
    #[schemars(with = "bool")]
    list_skills: Option<Value>,
}

/// `load_skill`'s `skill`.
#[derive(Debug)]
pub struct LoadSkillName;

impl SkillParameter for LoadSkillName {
    const PROPERTY: &'static str = "skill";
    const DESCRIPTION: &'static str = "Name of the skill to load";
}

/// What `load_skill` answers: a skill's instructions as text, or the list of skills. Either,
/// so it offers no output schema.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum LoadSkillResult {
    /// The skill's instructions, then those of the skills it requires.
    Instructions(String),
    /// Every skill a model may see (`list_skills: true`).
    Skills(SkillListResult),
}

/// `{skills: [...]}`: every skill a model may see.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SkillListResult {
    /// The skills, by name.
    skills: Vec<ListedSkill>,
}

/// A skill a model may load.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListedSkill {
    /// Its name.
    name: String,
    /// What it does and when to use it.
    description: String,
    /// What to pass it as `arguments`, when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    argument_hint: Option<String>,
}

impl LoadSkillParams {
    /// The skill named, by any of the names models use for it.
    #[must_use]
    pub fn skill(&self) -> Option<&str> {
        self.skill.as_deref()
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
    type Result = LoadSkillResult;

    fn specialise(&self, provider: &SkillsProvider, skills: Option<&[&str]>, schema: &mut Value) {
        match skills {
            Some(names) => name_skills(schema, names),
            None => {
                let skills = provider.model_skills();
                let names: Vec<&str> = skills.iter().map(|skill| skill.name()).collect();
                name_skills(schema, &names);
            }
        }
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
            let Some(name) = params.skill() else {
                return Err(ToolOutcome::invalid_params(
                    "`load_skill` needs the parameter `skill` (the skill's name)",
                ));
            };
            let skill = super::model_skill(provider, name, None)?;
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
        Ok(text) => ToolOutcome::answer(&LoadSkillResult::Instructions(text)),
        Err(message) => ToolOutcome::failed(message),
    }
}

/// Every skill a model may see.
fn list(provider: &SkillsProvider) -> ToolOutcome {
    let skills = provider
        .model_skills()
        .iter()
        .map(|skill| ListedSkill {
            name: skill.name().to_owned(),
            description: skill.description.clone(),
            argument_hint: skill.properties.argument_hint.clone(),
        })
        .collect();
    ToolOutcome::answer(&LoadSkillResult::Skills(SkillListResult { skills }))
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
