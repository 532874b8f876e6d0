//! A skill's own tool: a `tools.json` entry, or a tool made with `define_tool`. Its schema is
//! data (the author's), so its arguments are checked against it by the executor, in the
//! sandboxed call; here they only need to be a JSON object.

use std::sync::Arc;

use serde_json::{Map, Value};
use skillbox_core::{Skill, ToolDefinition};
use skillbox_exec::{ErrorType, RunOptions};

use crate::outcome::{CallStatus, ToolOutcome};
use crate::provider::SkillsProvider;
use crate::registry::{ApprovalSubject, PrepareFuture, Prepared};
use skillbox_services::params::{Arguments, decode};

/// Check that the arguments are an object, and return the call of the tool's handler.
pub(crate) fn prepare<'a>(
    provider: &'a Arc<SkillsProvider>,
    skill: &'a Arc<Skill>,
    tool: &'a ToolDefinition,
    arguments: Arguments<'a>,
) -> PrepareFuture<'a> {
    let arguments = match decode::<Map<String, Value>>(&tool.name, arguments) {
        Ok(arguments) => Value::Object(arguments),
        Err(error) => {
            return Box::pin(std::future::ready(Err(ToolOutcome::invalid_params(
                error.0,
            ))));
        }
    };
    let provider = Arc::clone(provider);
    let skill = Arc::clone(skill);
    let tool = tool.clone();
    Box::pin(std::future::ready(Ok(Prepared::runs_code(
        ApprovalSubject::skill(&skill),
        Box::pin(async move {
            let copy = skillbox_exec::SkillCopy::in_catalog(provider.catalog(), &skill);
            let result = provider
                .executor()
                .call_tool_as(&skill, copy, &tool, arguments, RunOptions::default())
                .await;
            let status = match result.error_type {
                None => CallStatus::Ok,
                Some(ErrorType::InvalidArgs) => CallStatus::InvalidParams,
                Some(_) => CallStatus::Failed,
            };
            ToolOutcome {
                content: result.value.into(),
                status,
                effect: None,
            }
        }),
    ))))
}
