//! `use_skill` (seed 002): run a script from a skill's folder in the sandbox. Every failure
//! says its kind (`errorType`: `SkillNotFound`, `ScriptNotFound`, `ScriptNotAllowed`,
//! `InvalidArgs`, `ExecutionTimeout`, `ExecutionFailed`, and skillbox's own), so a caller can
//! tell a missing skill from a script that failed: parameters that do not decode are
//! `InvalidArgs`, typed by the door policy ([`Tool::TYPES_FAILURES`]). The result, success or
//! failure, is seed 002's `SkillExecutionResult` ([`UseSkillResult`]).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use skillbox_exec::{ErrorType, RunOptions, SandboxLevel, ScriptResult};
use skillbox_services::RunContext as _;

use super::skill_name::{SkillName, SkillParameter};
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
    /// The skill, by any name models give it.
    #[serde(flatten)]
    skill: SkillName<UseSkillName>,
    /// Script to run: a path inside the skill (e.g. "scripts/report.py") or a file name in its root or scripts/ folder
    script: String,
    /// Arguments passed to the script as separate items (e.g. ["channels", "list"])
    #[serde(default)]
    args: ScriptArguments,
}

/// `use_skill`'s `skill`.
#[derive(Debug)]
pub struct UseSkillName;

impl SkillParameter for UseSkillName {
    const PROPERTY: &'static str = "skill";
    const DESCRIPTION: &'static str = "Name of the skill";
}

/// What a run of a script answers (seed 002's `SkillExecutionResult`), whether it succeeded
/// or not: a failure says what went wrong and its kind.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UseSkillResult {
    /// Whether the script exited with code 0.
    success: bool,
    /// What it printed to stdout (capped; "[output truncated]" ends a cut output).
    stdout: String,
    /// What it printed to stderr (capped likewise).
    stderr: String,
    /// Its exit code, when it ran to an exit.
    exit_code: Option<i32>,
    /// What went wrong, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The kind of failure (`SkillNotFound`, `ScriptNotFound`, `ScriptNotAllowed`,
    /// `InvalidArgs`, `ExecutionTimeout`, `ExecutionFailed`, …), when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    error_type: Option<ErrorType>,
    /// How long it ran, in milliseconds.
    duration_ms: u64,
    /// The sandbox level it ran at.
    #[schemars(schema_with = "sandbox_levels")]
    sandbox: SandboxLevel,
}

fn sandbox_levels(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": ["none", "partial", "full"] })
}

impl From<ScriptResult> for UseSkillResult {
    fn from(result: ScriptResult) -> Self {
        let ScriptResult {
            success,
            stdout,
            stderr,
            exit_code,
            error,
            error_type,
            duration_ms,
            sandbox,
        } = result;
        UseSkillResult {
            success,
            stdout,
            stderr,
            exit_code,
            error,
            error_type,
            duration_ms,
            sandbox,
        }
    }
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
    type Result = UseSkillResult;
    const TYPES_FAILURES: bool = true;

    fn intent(&self, _provider: &SkillsProvider, params: &UseSkillParams) -> CallIntent {
        CallIntent {
            skill: Some(params.skill.as_str().to_owned()),
            effect: None,
        }
    }

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: UseSkillParams,
    ) -> PrepareFuture<'a> {
        Box::pin(async move {
            let UseSkillParams {
                skill,
                script,
                args: ScriptArguments(arguments),
            } = params;
            let skill = super::model_skill(provider, skill.as_str(), None)
                .map_err(|miss| miss.with_error_type(ErrorType::SkillNotFound))?;
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
                    let success = result.success;
                    match ToolOutcome::answer_value(&UseSkillResult::from(result)) {
                        Ok(content) if success => ToolOutcome::ok(content),
                        Ok(content) => ToolOutcome::failed_with(content),
                        Err(failure) => failure,
                    }
                }),
            ))
        })
    }
}
