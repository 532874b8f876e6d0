//! Planning a run: an `execute_skill` or `run_code` call checked (its parameters, the skills it
//! names, its tool, its input blobs) into a [`PlannedRun`] without running or copying anything.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use skillbox_core::{Skill, SkillKind, ToolDefinition};
use skillbox_exec::executor::python_run::is_python_identifier;

use super::input_blobs::check_input_blobs;
use super::limits::{MAX_CODE_BYTES, MAX_RUN_TIMEOUT};
use super::planned_run::{PlannedRun, RunWork};
use crate::error::ServiceError;
use crate::protocol::{ExecuteSkillParams, RunCodeParams};
use crate::{RunContext, Services};

impl Services {
    /// Check an `execute_skill` call: the skill that `context` finds by name (a `skill.toml`
    /// action with a `[runtime]`, or a `tools.json` skill), its tool, its input blobs. Nothing
    /// runs and nothing is copied: the caller takes a place in the run queue, then runs the
    /// plan ([`PlannedRun::run`]).
    ///
    /// # Errors
    /// Bad parameters, an unknown skill, version, blob or tool, an instruction skill
    /// ([`ServiceError::InvalidParams`]).
    pub async fn plan_execute_skill(
        &self,
        context: &dyn RunContext,
        params: ExecuteSkillParams,
    ) -> Result<PlannedRun, ServiceError> {
        let name = params.name.0;
        let version = params.version.map(|version| version.0);
        let args = Value::Object(params.args.unwrap_or_default().0);
        let blob_ids = params.input_blobs.unwrap_or_default().0;
        let timeout = params
            .timeout_ms
            .map_or_else(|| default_timeout(context), |timeout| timeout.0);
        let skill = find_skill(context, &name, version.as_deref())?;
        // A secret granted to the name goes only to the copy the name gives without a
        // version: another copy (another version, a copy in an earlier, less trusted root)
        // runs without it. Asked whatever the lookup was, so no way of naming a copy skips it.
        let copy = context.copy_of(&skill);
        let label = match skill.id.version.as_ref() {
            Some(version) => format!("`{name}` {version}"),
            None => format!("`{name}`"),
        };
        let run = |work: RunWork| PlannedRun {
            services: self.clone(),
            executor: Arc::clone(context.executor()),
            method: crate::protocol::EXECUTE_SKILL,
            skill_name: Some(name.clone()),
            label: label.clone(),
            timeout,
            work,
        };
        if skill
            .manifest
            .as_ref()
            .is_some_and(|manifest| manifest.runtime.is_some())
            && skill.kind() == SkillKind::Action
        {
            let blobs = check_input_blobs(self, &blob_ids).await?;
            return Ok(run(RunWork::Python {
                export: Some((skill, copy)),
                code: None,
                args,
                mount_skills: Vec::new(),
                blobs,
            }));
        }
        if !skill.tools.is_empty() {
            let (tool, arguments) = tool_call(&skill, args, &blob_ids)?;
            return Ok(run(RunWork::Tool {
                skill,
                copy,
                tool,
                arguments,
            }));
        }
        if skill.kind() == SkillKind::Action {
            return Err(ServiceError::invalid_params(format!(
                "skill `{name}` is an action skill without a [runtime] section in its skill.toml (language, entrypoint, export), so there is nothing to execute; its author must add one"
            )));
        }
        Err(ServiceError::invalid_params(format!(
            "skill `{name}` is an instruction skill: it cannot be executed; read it with describe_skill (detail \"full\") or read_skill_file and follow it"
        )))
    }

    /// Check a `run_code` call: the language, the code, the skills `context` finds to mount,
    /// the input blobs. Nothing runs and nothing is copied until [`PlannedRun::run`].
    ///
    /// # Errors
    /// Bad parameters, an unsupported language, unknown skills or blobs
    /// ([`ServiceError::InvalidParams`]).
    pub async fn plan_run_code(
        &self,
        context: &dyn RunContext,
        params: RunCodeParams,
    ) -> Result<PlannedRun, ServiceError> {
        let language = params.language.0;
        if !language.eq_ignore_ascii_case("python") {
            return Err(ServiceError::invalid_params(format!(
                "parameter `language` must be \"python\" (the only language run_code supports), not \"{language}\""
            )));
        }
        let code = params.code.0;
        if code.len() > MAX_CODE_BYTES {
            return Err(ServiceError::invalid_params(format!(
                "parameter `code` is {} bytes; at most {MAX_CODE_BYTES} are accepted (put data in a blob)",
                code.len()
            )));
        }
        let entrypoint = params
            .entrypoint
            .map_or_else(|| "main".to_owned(), |entrypoint| entrypoint.0);
        if !is_python_identifier(&entrypoint) {
            return Err(ServiceError::invalid_params(format!(
                "parameter `entrypoint` must be a Python function name, not `{entrypoint}`"
            )));
        }
        let args = Value::Object(params.args.unwrap_or_default().0);
        let skill_names = params.mount_skills.unwrap_or_default().0;
        let blob_ids = params.input_blobs.unwrap_or_default().0;
        let timeout = params
            .limits
            .and_then(|limits| limits.timeout_ms)
            .map_or_else(|| default_timeout(context), |timeout| timeout.0);
        let mut mount_skills = Vec::with_capacity(skill_names.len());
        for name in &skill_names {
            mount_skills.push(find_skill(context, name, None)?);
        }
        let blobs = check_input_blobs(self, &blob_ids).await?;
        Ok(PlannedRun {
            services: self.clone(),
            executor: Arc::clone(context.executor()),
            method: crate::protocol::RUN_CODE,
            skill_name: None,
            label: "the code".to_owned(),
            timeout,
            work: RunWork::Python {
                export: None,
                code: Some((code, entrypoint)),
                args,
                mount_skills,
                blobs,
            },
        })
    }
}

/// The wall-clock limit of a run whose parameters set none: the executor's (30 s unless its
/// owner set another, as `skillbox call --timeout-ms` does), at most [`MAX_RUN_TIMEOUT`].
fn default_timeout(context: &dyn RunContext) -> Duration {
    context.executor().config().timeout.min(MAX_RUN_TIMEOUT)
}

/// `execute_skill` on a `tools.json` skill: `args` is `{"tool": NAME, "arguments": {...}}`.
fn tool_call(
    skill: &Skill,
    mut args: Value,
    blob_ids: &[String],
) -> Result<(ToolDefinition, Value), ServiceError> {
    let tool_names = || {
        skill
            .tools
            .iter()
            .map(|tool| tool.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !blob_ids.is_empty() {
        return Err(ServiceError::invalid_params(format!(
            "skill `{}` is a tools.json skill: its tools take their input in `args.arguments`, so `input_blobs` cannot be mounted; use run_code to work on blobs",
            skill.name()
        )));
    }
    let Some(object) = args.as_object_mut() else {
        return Err(ServiceError::invalid_params(
            "parameter `args` must be an object",
        ));
    };
    if let Some(unknown) = object
        .keys()
        .find(|key| !matches!(key.as_str(), "tool" | "arguments"))
    {
        return Err(ServiceError::invalid_params(format!(
            "parameter `args.{unknown}` is not expected: skill `{}` is a tools.json skill, so `args` is {{\"tool\": NAME, \"arguments\": {{...}}}} (tools: {})",
            skill.name(),
            tool_names()
        )));
    }
    let tool_name = match object.get("tool") {
        Some(Value::String(tool)) => tool.clone(),
        _ => {
            return Err(ServiceError::invalid_params(format!(
                "parameter `args.tool` must name the tool to call: skill `{}` is a tools.json skill (tools: {})",
                skill.name(),
                tool_names()
            )));
        }
    };
    let Some(tool) = skill.tools.iter().find(|tool| tool.name == tool_name) else {
        return Err(ServiceError::invalid_params(format!(
            "skill `{}` has no tool `{tool_name}`; its tools are: {}",
            skill.name(),
            tool_names()
        )));
    };
    let arguments = match object.remove("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(arguments)) => Value::Object(arguments),
        Some(_) => {
            return Err(ServiceError::invalid_params(
                "parameter `args.arguments` must be an object of the tool's parameters",
            ));
        }
    };
    Ok((tool.clone(), arguments))
}

/// A skill the caller lets protocol clients use; the caller words the miss (a hidden skill is
/// answered exactly as a name the catalog does not hold, hints included).
fn find_skill(
    context: &dyn RunContext,
    name: &str,
    version: Option<&str>,
) -> Result<Arc<Skill>, ServiceError> {
    context
        .find_skill(name, version)
        .map_err(ServiceError::InvalidParams)
}
