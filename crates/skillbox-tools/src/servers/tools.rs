//! A server's tools as offered (`server__tool`, checked and bounded), and its answers as the
//! model receives them.

use std::collections::BTreeSet;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use super::pool::SkillServer;
use super::{
    MAX_DESCRIPTION_CHARS, MAX_RESULT_CHARS, MAX_SCHEMA_BYTES, MAX_TOOL_DEFINITION_BYTES,
    NAME_SEPARATOR,
};
use crate::outcome::{CallStatus, ToolOutcome};
use crate::registry::{ApprovalSubject, PrepareFuture, Prepared};
use crate::tool_spec::ToolSpec;
use skillbox_services::params::{Arguments, decode};

/// Longest tool name providers take.
pub(super) const MAX_OFFERED_NAME_CHARS: usize = 64;

/// One tool of a server, as offered.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTool {
    /// `server__tool`, in the characters every provider takes.
    pub offered_name: String,
    /// The server's own name for it.
    pub tool_name: String,
    /// What it does, saying whose it is.
    pub description: String,
    /// Its input schema.
    pub schema: Value,
}

impl ServerTool {
    /// Its definition for a model.
    #[must_use]
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.offered_name.clone(),
            description: self.description.clone(),
            parameters: self.schema.clone(),
        }
    }
}

/// The tools a server listed as offered, and the ones left out with why.
pub(super) fn offered_tools(
    server: &str,
    listed: Vec<rmcp::model::Tool>,
) -> (Vec<ServerTool>, Vec<String>) {
    let mut tools = Vec::new();
    let mut skipped = Vec::new();
    let mut names = BTreeSet::new();
    let mut definition_bytes = 0_usize;
    for tool in listed {
        let own = tool.name.to_string();
        let shown = shown_name(&own);
        let offered = offered_name(&format!("{server}{NAME_SEPARATOR}{own}"));
        if offered.chars().count() > MAX_OFFERED_NAME_CHARS {
            skipped.push(format!(
                "`{shown}`: its name makes `{server}{NAME_SEPARATOR}…` longer than {MAX_OFFERED_NAME_CHARS} characters"
            ));
            continue;
        }
        if !names.insert(offered.clone()) {
            skipped.push(format!(
                "`{shown}`: another of its tools is offered as `{offered}`"
            ));
            continue;
        }
        let schema = Value::Object((*tool.input_schema).clone());
        let schema_bytes = serde_json::to_vec(&schema).map_or(usize::MAX, |bytes| bytes.len());
        if schema_bytes > MAX_SCHEMA_BYTES {
            skipped.push(format!(
                "`{shown}`: its input schema is {schema_bytes} bytes, more than {MAX_SCHEMA_BYTES}"
            ));
            continue;
        }
        let said = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .unwrap_or_default();
        let said: String = said.chars().take(MAX_DESCRIPTION_CHARS).collect();
        // Every tool offered is sent with every request to the model: a server's together are
        // bounded as a skill's own tools manifest is.
        let bytes = schema_bytes + said.len() + offered.len();
        if definition_bytes + bytes > MAX_TOOL_DEFINITION_BYTES {
            skipped.push(format!(
                "`{shown}`: the server's tools offered before it take most of the {MAX_TOOL_DEFINITION_BYTES} bytes of definitions one server may have"
            ));
            continue;
        }
        definition_bytes += bytes;
        tools.push(ServerTool {
            offered_name: offered,
            tool_name: own,
            description: format!("[MCP server `{server}`] {said}")
                .trim_end()
                .to_owned(),
            schema,
        });
    }
    (tools, skipped)
}

/// `name` in the characters every provider takes (the others made `_`).
fn offered_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name a server tool offered as `offered` goes by when servers of other skills share
/// its server's name: `skill__server__tool`.
pub(super) fn qualified_name(skill: &str, offered: &str) -> String {
    offered_name(&format!("{skill}{NAME_SEPARATOR}{offered}"))
}

/// A server's name for a tool as messages show it: its first 80 characters, control
/// characters spelled as escapes (a name is the server's to choose, and must not start a line
/// of its own in the model's text or a sequence on a terminal).
pub(super) fn shown_name(name: &str) -> String {
    name.chars()
        .take(80)
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// A server's answer as the model receives it: the text of its content (other kinds named),
/// or its structured content, cut at [`MAX_RESULT_CHARS`].
pub(super) fn result_outcome(result: CallToolResult) -> ToolOutcome {
    let mut parts: Vec<String> = result.content.iter().map(describe_block).collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let mut text = parts.join("\n");
    let total = text.chars().count();
    if total > MAX_RESULT_CHARS {
        text = text.chars().take(MAX_RESULT_CHARS).collect();
        text.push_str(&format!(
            "\n[cut: the server answered {total} characters; {MAX_RESULT_CHARS} are shown]"
        ));
    }
    if result.is_error == Some(true) {
        ToolOutcome::with_status(CallStatus::Failed, text)
    } else {
        ToolOutcome::ok(Value::String(text))
    }
}

fn describe_block(block: &ContentBlock) -> String {
    if let ContentBlock::Text(text) = block {
        return text.text.clone();
    }
    let value = serde_json::to_value(block).unwrap_or_default();
    let field = |name: &str| value.get(name).and_then(Value::as_str).unwrap_or_default();
    match field("type") {
        "resource" => match value.pointer("/resource/text").and_then(Value::as_str) {
            Some(text) => text.to_owned(),
            None => format!(
                "[resource {}]",
                value
                    .pointer("/resource/uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            ),
        },
        "resource_link" => format!("[link {}]", field("uri")),
        kind => format!(
            "[{kind} {}, {} characters of base64]",
            field("mimeType"),
            field("data").len()
        ),
    }
}

/// Check a call's arguments (a JSON object; the server checks them against its schema) and
/// return the call: approved first, in the run queue, like every tool that runs code.
pub(crate) fn prepare_call<'a>(
    server: &'a Arc<SkillServer>,
    tool: &'a ServerTool,
    arguments: Arguments<'a>,
) -> PrepareFuture<'a> {
    let arguments = match decode::<Map<String, Value>>(&tool.offered_name, arguments) {
        Ok(arguments) => arguments,
        Err(error) => {
            return Box::pin(std::future::ready(Err(ToolOutcome::invalid_params(
                error.0,
            ))));
        }
    };
    // The arguments go to the approval hook whole, beside this summary (see `approval.rs`).
    let subject = ApprovalSubject {
        skill: Some(server.skill_name().to_owned()),
        summary: Some(format!(
            "call `{}` of the MCP server `{}` (skill `{}`)",
            shown_name(&tool.tool_name),
            server.name(),
            server.skill_name(),
        )),
    };
    let server = Arc::clone(server);
    let name = tool.tool_name.clone();
    Box::pin(std::future::ready(Ok(Prepared::runs_code(
        subject,
        Box::pin(async move { server.call(&name, arguments).await }),
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tools_name_is_shown_without_control_characters() {
        assert_eq!(shown_name("plain"), "plain");
        assert_eq!(shown_name("new\nline\u{1b}[31m"), "new\\nline\\u{1b}[31m");
        assert_eq!(shown_name(&"l".repeat(100)).len(), 80);
    }

    #[test]
    fn one_servers_tools_are_bounded_together() {
        let tool = |index: usize| {
            let schema = serde_json::json!({"type": "object", "description": "w".repeat(30_000)});
            let Value::Object(schema) = schema else {
                unreachable!()
            };
            rmcp::model::Tool::new(format!("w{index}"), "a tool", Arc::new(schema))
        };
        let (tools, skipped) = offered_tools("wide", (0..120).map(tool).collect());
        let bytes: usize = tools
            .iter()
            .map(|tool| serde_json::to_vec(&tool.schema).unwrap().len() + tool.description.len())
            .sum();
        assert!(bytes <= MAX_TOOL_DEFINITION_BYTES, "{bytes}");
        assert_eq!(tools.len() + skipped.len(), 120);
        assert!(skipped[0].contains("bytes of definitions"), "{skipped:?}");
    }
}
