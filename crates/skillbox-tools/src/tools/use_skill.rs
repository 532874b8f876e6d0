//! `use_skill` (seed 002): run a script from a skill's folder in the sandbox. Every failure
//! says its kind (`errorType`: `SkillNotFound`, `ScriptNotFound`, `ScriptNotAllowed`,
//! `InvalidArgs`, `ExecutionTimeout`, `ExecutionFailed`, and skillbox's own), so a caller can
//! tell a missing skill from a script that failed.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use skillbox_exec::{ErrorType, RunOptions};
use skillbox_services::RunContext as _;

use crate::effect::CallIntent;
use crate::outcome::ToolOutcome;
use crate::provider::SkillsProvider;
use crate::registry::{
    Annotations, ApprovalSubject, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles,
    RunsCode, Tool, ToolFacts,
};

/// `use_skill`.
#[derive(Debug, Clone, Copy)]
pub struct UseSkill;

/// Its parameters.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UseSkillParams {
    /// Name of the skill
    #[serde(default)]
    skill: Option<String>,
    /// Script to run: a path inside the skill (e.g. "scripts/report.py") or a file name in its root or scripts/ folder
    #[serde(default)]
    script: Option<String>,
    /// Arguments passed to the script as separate items (e.g. ["channels", "list"])
    #[serde(default)]
    args: ScriptArguments,
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

/// A script's arguments: strings, numbers and booleans as their text; a single string is one
/// argument.
#[derive(Debug, Default)]
pub struct ScriptArguments(Vec<String>);

impl<'de> Deserialize<'de> for ScriptArguments {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let items = match Value::deserialize(deserializer)? {
            Value::Null => return Ok(ScriptArguments::default()),
            Value::String(single) => return Ok(ScriptArguments(vec![single])),
            Value::Array(items) => items,
            _ => {
                return Err(serde::de::Error::custom("must be an array of strings"));
            }
        };
        let mut arguments = Vec::with_capacity(items.len());
        for (index, item) in items.into_iter().enumerate() {
            match item {
                Value::String(text) => arguments.push(text),
                Value::Number(number) => arguments.push(number.to_string()),
                Value::Bool(flag) => arguments.push(flag.to_string()),
                _ => {
                    return Err(serde::de::Error::custom(format!(
                        "[{index}] must be a string"
                    )));
                }
            }
        }
        Ok(ScriptArguments(arguments))
    }
}

impl JsonSchema for ScriptArguments {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ScriptArguments".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "array", "items": { "type": "string" } })
    }
}

impl UseSkillParams {
    fn skill(&self) -> Option<&str> {
        super::first_skill_name([
            self.skill.as_deref(),
            self.skill_name.as_deref(),
            self.skill_name_camel.as_deref(),
            self.name.as_deref(),
        ])
    }
}

impl Tool for UseSkill {
    const NAME: &'static str = "use_skill";
    const DESCRIPTION: &'static str = "Run a script from a skill folder. The skill's instructions say which scripts to call and with what arguments.";
    const FACTS: ToolFacts = ToolFacts {
        profiles: Profiles::SKILLS,
        runs_code: RunsCode::Always,
        reads_files: ReadsFiles::Never,
        mutating: false,
        loads_skills: false,
        needs_services: false,
        params_size: ParamsSize::Run,
        annotations: Annotations::ACTS,
    };
    type Params<'a> = UseSkillParams;
    const TYPES_FAILURES: bool = true;

    fn specialise(&self, _provider: &SkillsProvider, _skills: Option<&[&str]>, schema: &mut Value) {
        schema["required"] = serde_json::json!(["skill", "script"]);
    }

    fn intent(&self, _provider: &SkillsProvider, params: &UseSkillParams) -> CallIntent {
        CallIntent {
            skill: params.skill().map(str::to_owned),
            effect: None,
        }
    }

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: UseSkillParams,
    ) -> PrepareFuture<'a> {
        Box::pin(async move {
            let Some(skill_name) = params.skill() else {
                return Err(ToolOutcome::invalid_params(
                    "`use_skill` needs the parameter `skill` (the skill's name)",
                )
                .with_error_type(ErrorType::InvalidArgs));
            };
            let Some(script) = params.script.clone() else {
                return Err(ToolOutcome::invalid_params(
                    "`use_skill` needs the parameter `script` (e.g. \"scripts/run.py\")",
                )
                .with_error_type(ErrorType::InvalidArgs));
            };
            let skill = super::model_skill(provider, skill_name, None)
                .map_err(|miss| miss.with_error_type(ErrorType::SkillNotFound))?;
            let ScriptArguments(arguments) = params.args;
            let subject = ApprovalSubject {
                skill: Some(skill.name().to_owned()),
                summary: Some(format!("run `{script}` of skill `{}`", skill.name())),
            };
            let provider = Arc::clone(provider);
            Ok(Prepared::runs_code(
                subject,
                Box::pin(async move {
                    let copy = provider.copy_of(&skill);
                    let result = provider
                        .executor()
                        .run_script_as(&skill, copy, &script, &arguments, RunOptions::default())
                        .await;
                    let content = serde_json::to_value(&result).unwrap_or(Value::Null);
                    if result.success {
                        ToolOutcome::ok(content)
                    } else {
                        ToolOutcome::failed_with(content)
                    }
                }),
            ))
        })
    }
}
