//! `tools.json` (Skill Tools spec, seed 000 section 5): typed tool declarations whose handlers are
//! scripts inside the skill. Each declaration becomes a [`ToolDefinition`] with one JSON Schema
//! for its arguments, the single source every provider format is rendered from.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::diagnostic::{Diagnostic, DiagnosticCode, TextPosition};

/// File name of the Skill Tools manifest at a skill's root.
pub const TOOLS_MANIFEST_FILE: &str = "tools.json";

/// The parameter types the Skill Tools spec allows (`integer` is accepted as well, being the
/// JSON Schema refinement of `number` that models handle well).
pub const PARAMETER_TYPES: &[&str] = &["string", "number", "integer", "boolean", "object", "array"];

/// One tool declared in `tools.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// Tool name, `^[a-z][a-z0-9_]*$`.
    pub name: String,
    /// What the tool does, shown to the model.
    pub description: String,
    /// Handler path relative to the skill folder; `None` means the tool is a stub that tells the
    /// model to load the skill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// The arguments as one JSON Schema object (`type: object`, `properties`, `required`).
    pub input_schema: Value,
    /// Where the declaration starts in `tools.json`.
    #[serde(skip)]
    pub position: Option<TextPosition>,
}

impl ToolDefinition {
    /// Names of the parameters the caller must give.
    #[must_use]
    pub fn required_parameters(&self) -> Vec<&str> {
        self.input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

/// Whether `name` is a valid tool name (`^[a-z][a-z0-9_]*$`).
#[must_use]
pub fn is_valid_tool_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Parse a `tools.json` text. Tools that cannot be used safely (no name, bad name, duplicate,
/// malformed parameters) are left out with an error; everything else loads. Diagnostics carry
/// no file; the caller adds it.
#[must_use]
pub fn parse_tools_manifest(text: &str) -> (Vec<ToolDefinition>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let document: Value = match serde_json::from_str(text) {
        Ok(document) => document,
        Err(error) => {
            diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::ToolsManifestInvalid,
                    format!("`tools.json` is not valid JSON: {error}"),
                )
                .at(Some(TextPosition {
                    line: error.line() as u64,
                    // serde_json counts columns from 0 before a line's first character.
                    column: (error.column() as u64).max(1),
                }))
                .with_hint("fix the JSON syntax (trailing commas and comments are not allowed)"),
            );
            return (Vec::new(), diagnostics);
        }
    };
    let Value::Array(entries) = document else {
        diagnostics.push(
            Diagnostic::error(
                DiagnosticCode::ToolsManifestInvalid,
                "`tools.json` must be a JSON array of tool declarations",
            )
            .with_hint("wrap the declaration in `[ … ]`, even for a single tool"),
        );
        return (Vec::new(), diagnostics);
    };
    let mut tools: Vec<ToolDefinition> = Vec::with_capacity(entries.len());
    let element_offsets = top_level_element_offsets(text);
    for (index, entry) in entries.iter().enumerate() {
        let first_new = diagnostics.len();
        let mut outcome = parse_tool(index, entry, &mut diagnostics);
        if let Some(offset) = element_offsets.get(index) {
            let position = crate::manifest::position_of(text, *offset);
            if let Some(tool) = &mut outcome {
                tool.position = Some(position);
            }
            for diagnostic in &mut diagnostics[first_new..] {
                if diagnostic.line.is_none() {
                    diagnostic.line = Some(position.line);
                    diagnostic.column = Some(position.column);
                }
            }
        }
        match outcome {
            Some(tool) if tools.iter().any(|existing| existing.name == tool.name) => {
                let position = element_offsets
                    .get(index)
                    .map(|offset| crate::manifest::position_of(text, *offset));
                diagnostics.push(
                    Diagnostic::error(
                        DiagnosticCode::ToolNameDuplicate,
                        format!(
                            "tool `{}` (tools[{index}]) is declared twice in `tools.json`; the first declaration is used",
                            tool.name
                        ),
                    )
                    .at(position)
                    .for_field(format!("tools[{index}].name"))
                    .with_hint("give every tool in a manifest its own name"),
                );
            }
            Some(tool) => tools.push(tool),
            None => {}
        }
    }
    (tools, diagnostics)
}

/// Byte offsets where each element of a top-level JSON array starts, so that diagnostics about
/// `tools[i]` can point at its line. Only called on text that already parsed as JSON.
fn top_level_element_offsets(text: &str) -> Vec<usize> {
    let mut offsets = Vec::new();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut expecting_element = false;
    for (offset, byte) in text.bytes().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if expecting_element && !byte.is_ascii_whitespace() && byte != b']' {
            offsets.push(offset);
            expecting_element = false;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                expecting_element = depth == 1 && byte == b'[';
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expecting_element = true,
            _ => {}
        }
    }
    offsets
}

fn tool_error(index: usize, field: &str, message: String, hint: &str) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::ToolInvalid, message)
        .for_field(format!("tools[{index}]{field}"))
        .with_hint(hint)
}

fn parse_tool(
    index: usize,
    entry: &Value,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ToolDefinition> {
    let Value::Object(entry) = entry else {
        diagnostics.push(tool_error(
            index,
            "",
            format!("tools[{index}] must be an object with `name` and `description`; it was skipped"),
            "write each tool as `{\"name\": …, \"description\": …, \"script\": …, \"parameters\": {…}}`",
        ));
        return None;
    };
    let name = match entry.get("name") {
        Some(Value::String(name)) if is_valid_tool_name(name) => name.clone(),
        Some(Value::String(name)) => {
            diagnostics.push(tool_error(
                index,
                ".name",
                format!("tool name `{name}` (tools[{index}]) must match `^[a-z][a-z0-9_]*$`; the tool was skipped"),
                "use lowercase letters, digits and underscores, starting with a letter (e.g. `count_words`)",
            ));
            return None;
        }
        _ => {
            diagnostics.push(tool_error(
                index,
                ".name",
                format!("tools[{index}] has no string `name`; the tool was skipped"),
                "add `\"name\": \"tool_name\"`",
            ));
            return None;
        }
    };
    let description = match entry.get("description") {
        Some(Value::String(description)) if !description.trim().is_empty() => description.clone(),
        _ => {
            diagnostics.push(tool_error(
                index,
                ".description",
                format!("tool `{name}` has no `description`; the tool was skipped"),
                "add a `description` saying what the tool does; the model sees it",
            ));
            return None;
        }
    };
    let script = match entry.get("script") {
        None | Some(Value::Null) => None,
        Some(Value::String(script)) if !script.trim().is_empty() => Some(script.trim().to_owned()),
        Some(_) => {
            diagnostics.push(tool_error(
                index,
                ".script",
                format!("tool `{name}`: `script` must be a path relative to the skill folder; the tool was skipped"),
                "write `\"script\": \"scripts/<tool_name>.js\"`",
            ));
            return None;
        }
    };
    for key in entry.keys() {
        if !matches!(
            key.as_str(),
            "name" | "description" | "script" | "parameters"
        ) {
            diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::ToolInvalid,
                    format!("tool `{name}` has unknown key `{key}`, which is ignored"),
                )
                .for_field(format!("tools[{index}].{key}"))
                .with_hint(
                    "tool declarations have `name`, `description`, `script` and `parameters`",
                ),
            );
        }
    }
    let input_schema = parameters_schema(index, &name, entry.get("parameters"), diagnostics)?;
    Some(ToolDefinition {
        name,
        description,
        script,
        input_schema,
        position: None,
    })
}

fn parameters_schema(
    index: usize,
    tool: &str,
    parameters: Option<&Value>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Value> {
    let parameters = match parameters {
        None | Some(Value::Null) => &Map::new(),
        Some(Value::Object(parameters)) => parameters,
        Some(_) => {
            diagnostics.push(tool_error(
                index,
                ".parameters",
                format!("tool `{tool}`: `parameters` must be an object mapping names to definitions; the tool was skipped"),
                "write `\"parameters\": {\"text\": {\"type\": \"string\", \"description\": \"…\"}}`",
            ));
            return None;
        }
    };
    let mut properties = IndexMap::new();
    let mut required = Vec::new();
    let mut usable = true;
    for (parameter, definition) in parameters {
        let field = format!(".parameters.{parameter}");
        let Value::Object(definition) = definition else {
            diagnostics.push(tool_error(
                index,
                &field,
                format!("tool `{tool}`: parameter `{parameter}` must be an object with `type` and `description`"),
                "write `{\"type\": \"string\", \"description\": \"…\"}`",
            ));
            usable = false;
            continue;
        };
        let kind = definition.get("type").and_then(Value::as_str);
        match kind {
            Some(kind) if PARAMETER_TYPES.contains(&kind) => {}
            _ => {
                diagnostics.push(tool_error(
                    index,
                    &format!("{field}.type"),
                    format!(
                        "tool `{tool}`: parameter `{parameter}` needs a `type` of {}",
                        PARAMETER_TYPES.join(", ")
                    ),
                    "set `type` to one of the JSON Schema types listed",
                ));
                usable = false;
                continue;
            }
        }
        if !matches!(definition.get("description"), Some(Value::String(text)) if !text.trim().is_empty())
        {
            diagnostics.push(tool_error(
                index,
                &format!("{field}.description"),
                format!("tool `{tool}`: parameter `{parameter}` has no `description`"),
                "describe the parameter; the model fills it from this text",
            ));
        }
        if let Some(allowed) = definition.get("enum")
            && !matches!(allowed, Value::Array(values) if !values.is_empty())
        {
            diagnostics.push(tool_error(
                index,
                &format!("{field}.enum"),
                format!(
                    "tool `{tool}`: `enum` of parameter `{parameter}` must be a non-empty array"
                ),
                "list the allowed values, e.g. `\"enum\": [\"a\", \"b\"]`",
            ));
            usable = false;
            continue;
        }
        let optional = match definition.get("optional") {
            None => false,
            Some(Value::Bool(optional)) => *optional,
            Some(_) => {
                diagnostics.push(tool_error(
                    index,
                    &format!("{field}.optional"),
                    format!("tool `{tool}`: `optional` of parameter `{parameter}` must be `true` or `false`"),
                    "write `\"optional\": true`",
                ));
                usable = false;
                continue;
            }
        };
        if !optional {
            required.push(Value::String(parameter.clone()));
        }
        // Everything but our own `optional` flag is JSON Schema and passes through.
        let schema: Map<String, Value> = definition
            .iter()
            .filter(|(key, _)| key.as_str() != "optional")
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        properties.insert(parameter.clone(), Value::Object(schema));
    }
    if !usable {
        diagnostics.push(tool_error(
            index,
            ".parameters",
            format!("tool `{tool}` was skipped because some parameters are malformed"),
            "fix the parameter definitions named above",
        ));
        return None;
    }
    Some(json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn codes(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
        diagnostics.iter().map(|d| d.code.as_str()).collect()
    }

    #[test]
    fn reference_example_becomes_schema() {
        let (tools, diagnostics) = parse_tools_manifest(
            r#"[{"name": "count_words", "description": "Count words", "script": "scripts/count_words.js",
                "parameters": {"text": {"type": "string", "description": "Text"},
                               "unit": {"type": "string", "description": "Unit", "enum": ["words", "chars"], "optional": true}}}]"#,
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(tools.len(), 1);
        assert_eq!(
            tools[0].input_schema,
            json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "Text"},
                    "unit": {"type": "string", "description": "Unit", "enum": ["words", "chars"]}
                },
                "required": ["text"],
                "additionalProperties": false
            })
        );
        assert_eq!(tools[0].required_parameters(), vec!["text"]);
    }

    #[test]
    fn no_parameters_means_empty_object_schema() {
        let (tools, _) = parse_tools_manifest(r#"[{"name": "ping", "description": "Ping"}]"#);
        assert_eq!(tools[0].input_schema["properties"], json!({}));
        assert_eq!(tools[0].script, None);
    }

    #[test]
    fn manifest_level_errors() {
        let (_, diagnostics) = parse_tools_manifest("{\"name\": \"x\"}");
        assert_eq!(codes(&diagnostics), vec!["tools-manifest-invalid"]);
        let (_, diagnostics) = parse_tools_manifest("[\n{\"name\": \"x\",}\n]");
        assert_eq!(codes(&diagnostics), vec!["tools-manifest-invalid"]);
        assert_eq!(diagnostics[0].line, Some(2));
    }

    #[test]
    fn bad_tools_are_skipped_good_ones_kept() {
        let (tools, diagnostics) = parse_tools_manifest(
            r#"[{"name": "Bad-Name", "description": "x"},
                {"description": "no name"},
                {"name": "ok", "description": "fine"},
                {"name": "ok", "description": "again"},
                {"name": "typed", "description": "t", "parameters": {"n": {"type": "float", "description": "n"}}},
                "not an object"]"#,
        );
        assert_eq!(
            tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            vec!["ok"]
        );
        assert_eq!(
            codes(&diagnostics),
            vec![
                "tool-invalid",
                "tool-invalid",
                "tool-name-duplicate",
                "tool-invalid",
                "tool-invalid",
                "tool-invalid"
            ]
        );
    }

    #[test]
    fn diagnostics_point_at_the_tool() {
        let (_, diagnostics) = parse_tools_manifest(
            "[\n  {\"name\": \"ok\", \"description\": \"a, [b] {c} \\\"d\"},\n  {\"name\": \"Bad\", \"description\": \"x\"}\n]",
        );
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        assert_eq!(
            (diagnostics[0].line, diagnostics[0].column),
            (Some(3), Some(3))
        );
    }

    #[test]
    fn tool_names() {
        assert!(is_valid_tool_name("count_words2"));
        assert!(!is_valid_tool_name("2count"));
        assert!(!is_valid_tool_name("count-words"));
        assert!(!is_valid_tool_name(""));
    }
}
