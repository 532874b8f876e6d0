//! Tool definitions: one [`ToolSpec`] per tool, written once, rendered into each provider's
//! wire shape (OpenAI Chat Completions, Responses, Anthropic, Gemini, MCP).

use serde::Serialize;
use serde_json::{Map, Value, json};

/// One tool: name, description, and its parameters as a JSON Schema object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments (`type: object`).
    pub parameters: Value,
}

/// The wire shapes tools can be rendered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFormat {
    /// OpenAI (and OpenRouter) Chat Completions: `{type: function, function: {…}}`.
    OpenAi,
    /// OpenAI / OpenRouter Responses API: flat `{type: function, name, …}`.
    Responses,
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
    /// Google Gemini: one `{functionDeclarations: […]}` entry with OpenAPI-subset schemas.
    Gemini,
    /// MCP `tools/list` entries: `{name, description, inputSchema}`.
    Mcp,
}

impl ToolFormat {
    /// Parse a format name as used on the command line.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "openai" => Some(ToolFormat::OpenAi),
            "responses" => Some(ToolFormat::Responses),
            "anthropic" => Some(ToolFormat::Anthropic),
            "gemini" => Some(ToolFormat::Gemini),
            "mcp" => Some(ToolFormat::Mcp),
            _ => None,
        }
    }
}

/// Schema keywords Gemini's function declarations accept (an OpenAPI 3.0 subset).
const GEMINI_SCHEMA_KEYS: &[&str] = &[
    "type",
    "description",
    "enum",
    "properties",
    "required",
    "items",
    "format",
    "nullable",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
];

/// Render tools in a provider's shape: the value to put in the request's `tools` field.
#[must_use]
pub fn render_tools(tools: &[ToolSpec], format: ToolFormat) -> Value {
    match format {
        ToolFormat::OpenAi => Value::Array(
            tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": tool.parameters,
                        }
                    })
                })
                .collect(),
        ),
        ToolFormat::Responses => Value::Array(
            tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    })
                })
                .collect(),
        ),
        ToolFormat::Anthropic => Value::Array(
            tools
                .iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.parameters,
                    })
                })
                .collect(),
        ),
        ToolFormat::Gemini => json!([{
            "functionDeclarations": tools
                .iter()
                .map(|tool| {
                    let mut declaration = json!({ "name": tool.name, "description": tool.description });
                    let has_properties = tool.parameters["properties"].as_object().is_some_and(|p| !p.is_empty());
                    if has_properties {
                        declaration["parameters"] = gemini_schema(&tool.parameters);
                    }
                    declaration
                })
                .collect::<Vec<_>>()
        }]),
        ToolFormat::Mcp => Value::Array(
            tools
                .iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "inputSchema": tool.parameters,
                    })
                })
                .collect(),
        ),
    }
}

/// Keep only the schema keywords Gemini accepts, recursively; `default` values are folded into
/// the description so the model still learns them.
fn gemini_schema(schema: &Value) -> Value {
    let Value::Object(object) = schema else {
        return schema.clone();
    };
    let mut kept = Map::new();
    for (key, value) in object {
        if !GEMINI_SCHEMA_KEYS.contains(&key.as_str()) {
            continue;
        }
        let value = match key.as_str() {
            "properties" => Value::Object(
                value
                    .as_object()
                    .map(|properties| {
                        properties
                            .iter()
                            .map(|(name, schema)| (name.clone(), gemini_schema(schema)))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            "items" => gemini_schema(value),
            _ => value.clone(),
        };
        kept.insert(key.clone(), value);
    }
    if let Some(default) = object.get("default") {
        let description = kept.get("description").and_then(Value::as_str).map_or_else(
            || format!("Default: {default}."),
            |text| format!("{text} (default: {default})"),
        );
        kept.insert("description".to_owned(), Value::String(description));
    }
    Value::Object(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ToolSpec {
        ToolSpec {
            name: "demo".into(),
            description: "Demo tool".into(),
            parameters: json!({
                "type": "object",
                "properties": {"n": {"type": "integer", "default": 5, "description": "Count"}},
                "required": [],
                "additionalProperties": false
            }),
        }
    }

    #[test]
    fn gemini_drops_unsupported_keywords_and_keeps_defaults_as_text() {
        let rendered = render_tools(&[spec()], ToolFormat::Gemini);
        let parameters = &rendered[0]["functionDeclarations"][0]["parameters"];
        assert!(parameters.get("additionalProperties").is_none());
        assert_eq!(
            parameters["properties"]["n"]["description"],
            "Count (default: 5)"
        );
        assert!(parameters["properties"]["n"].get("default").is_none());
    }

    #[test]
    fn each_format_has_its_own_shape() {
        let tools = [spec()];
        assert_eq!(
            render_tools(&tools, ToolFormat::OpenAi)[0]["function"]["name"],
            "demo"
        );
        assert_eq!(
            render_tools(&tools, ToolFormat::Responses)[0]["name"],
            "demo"
        );
        assert_eq!(
            render_tools(&tools, ToolFormat::Anthropic)[0]["input_schema"]["type"],
            "object"
        );
        assert_eq!(
            render_tools(&tools, ToolFormat::Mcp)[0]["inputSchema"]["type"],
            "object"
        );
    }
}
