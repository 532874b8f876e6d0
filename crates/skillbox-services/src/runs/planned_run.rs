//! A [`PlannedRun`] running once it has its place in the run queue: a Python run (an action
//! skill's export or model-written code, with its input blobs copied for it) or a `tools.json`
//! tool call, each answered with a Run object and remembered for the runs page.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use skillbox_core::{Skill, ToolDefinition};
use skillbox_exec::executor::python_run::{PythonRun, PythonTarget, RunFailure};
use skillbox_exec::{ErrorType, Executor, RunOptions, SkillCopy};

use super::input_blobs::copy_input_blobs;
use super::run_object::{run_json, run_object};
use crate::Services;
use crate::blobs::BlobMeta;
use crate::error::ServiceError;

/// A run or tool call whose parameters, skills and blobs were checked: run it once it has
/// its place in the run queue.
pub struct PlannedRun {
    pub(super) services: Services,
    pub(super) executor: Arc<Executor>,
    pub(super) method: &'static str,
    pub(super) skill_name: Option<String>,
    pub(super) label: String,
    pub(super) timeout: Duration,
    pub(super) work: RunWork,
}

impl std::fmt::Debug for PlannedRun {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("PlannedRun")
            .field("method", &self.method)
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

/// What a planned run does.
pub(super) enum RunWork {
    /// A Python run: an action skill's export, or model-written code.
    Python {
        /// The action skill whose export runs, and which copy of its name it is.
        export: Option<(Arc<Skill>, SkillCopy)>,
        code: Option<(String, String)>,
        args: Value,
        mount_skills: Vec<Arc<Skill>>,
        blobs: Vec<BlobMeta>,
    },
    /// A `tools.json` tool.
    Tool {
        skill: Arc<Skill>,
        /// Which copy of its name the skill is.
        copy: SkillCopy,
        tool: ToolDefinition,
        arguments: Value,
    },
}

impl PlannedRun {
    /// Copy the inputs, run, store `out/` files as blobs, and answer with the Run object (a
    /// failing skill is a Run with `status: "failed"`). Remembered for the runs page.
    ///
    /// # Errors
    /// When the input blobs could not be copied for the run (a storage failure).
    pub async fn run(self) -> Result<Value, ServiceError> {
        let PlannedRun {
            services,
            executor,
            method,
            skill_name,
            label,
            timeout,
            work,
        } = self;
        let run = match work {
            RunWork::Python {
                export,
                code,
                args,
                mount_skills,
                blobs,
            } => {
                let copy = export
                    .as_ref()
                    .map_or(SkillCopy::InEffect, |(_, copy)| *copy);
                let target = match (&export, code) {
                    (Some((skill, _)), _) => PythonTarget::Export(skill),
                    (None, Some((code, entrypoint))) => PythonTarget::Code { code, entrypoint },
                    (None, None) => PythonTarget::Code {
                        code: String::new(),
                        entrypoint: "main".to_owned(),
                    },
                };
                run_python(
                    &services,
                    &executor,
                    &label,
                    (target, copy),
                    args,
                    &mount_skills,
                    &blobs,
                    timeout,
                )
                .await?
            }
            RunWork::Tool {
                skill,
                copy,
                tool,
                arguments,
            } => execute_tool(&executor, (&skill, copy), &tool, &label, arguments, timeout).await,
        };
        services.remember_run(method, skill_name.as_deref(), &run);
        Ok(run)
    }
}

/// Copy the input blobs, run, and answer with the Run. The caller holds its place in the run
/// queue; nothing was copied before it had one, so callers the queue refuses cost no disk.
#[allow(clippy::too_many_arguments)]
async fn run_python(
    services: &Services,
    executor: &Executor,
    label: &str,
    (target, copy): (PythonTarget<'_>, SkillCopy),
    args: Value,
    mount_skills: &[Arc<Skill>],
    blobs: &[BlobMeta],
    timeout: Duration,
) -> Result<Value, ServiceError> {
    let mut input_blobs = copy_input_blobs(services, blobs).await?;
    let outcome = executor
        .run_python(PythonRun {
            target,
            args,
            mount_skills: mount_skills.iter().map(AsRef::as_ref).collect(),
            input_blobs: std::mem::take(&mut input_blobs.files),
            timeout,
            copy,
        })
        .await;
    let run = run_object(services, label, outcome).await;
    input_blobs.remove().await;
    Ok(run)
}

/// Call a `tools.json` tool and answer with the Run.
async fn execute_tool(
    executor: &Executor,
    (skill, copy): (&Skill, SkillCopy),
    tool: &ToolDefinition,
    label: &str,
    arguments: Value,
    timeout: Duration,
) -> Value {
    let started = Instant::now();
    let result = executor
        .call_tool_as(
            skill,
            copy,
            tool,
            arguments,
            RunOptions {
                timeout: Some(timeout),
                live_output: None,
            },
        )
        .await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let label = format!("{label} tool `{}`", tool.name);
    let outcome = match result.error_type {
        None => Ok(result.value),
        Some(error_type) => {
            let message = result
                .value
                .get("error")
                .map(|error| match error {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_else(|| result.value.to_string());
            let error_type = match error_type {
                ErrorType::ExecutionTimeout => "Timeout".to_owned(),
                other => other.as_str().to_owned(),
            };
            Err(RunFailure {
                error_type,
                message,
            })
        }
    };
    run_json(
        &label,
        &outcome,
        duration_ms,
        String::new(),
        Vec::new(),
        executor.sandbox_level(),
    )
}
