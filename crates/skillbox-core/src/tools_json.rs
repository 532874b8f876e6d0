//! `tools.json` (Skill Tools spec, seed 000 section 5): typed tool declarations whose handlers are
//! scripts inside the skill. Each declaration becomes a [`ToolDefinition`] with one JSON Schema
//! for its arguments, the single source every provider format is rendered from.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Value, json};

use jsonschema::paths::LocationSegment;

use crate::diagnostic::{Diagnostic, DiagnosticCode, Severity, TextPosition};
use crate::json_locate::{JsonStep, array_element_offsets, locate};
use crate::names::describe_characters;
use crate::printable::printable;

/// File name of the Skill Tools manifest at a skill's root.
pub const TOOLS_MANIFEST_FILE: &str = "tools.json";

/// The parameter types the Skill Tools spec allows (`integer` is accepted as well, being the
/// JSON Schema refinement of `number` that models handle well).
pub const PARAMETER_TYPES: &[&str] = &["string", "number", "integer", "boolean", "object", "array"];

/// Most tools loaded from one `tools.json`: OpenAI accepts at most 128 tools in one request.
pub const MAX_TOOLS_PER_MANIFEST: usize = 128;

/// Longest tool name every target accepts (OpenAI, Anthropic and Gemini: 64; MCP: 128).
pub const MAX_TOOL_NAME_CHARS: usize = 64;

/// Longest parameter or nested property name (Anthropic's rule for property keys,
/// `^[a-zA-Z0-9_.-]{1,64}$`, the strictest of the targets).
pub const MAX_PARAMETER_NAME_CHARS: usize = 64;

/// Most diagnostics of one `tools.json` given the line and column of the field they name. Each
/// location scans the text, so a hostile manifest with a problem in each of thousands of
/// parameters would take time quadratic in its size; later diagnostics get their tool's
/// position.
const MAX_LOCATED_DIAGNOSTICS: usize = 100;

/// JSON Schema keywords whose value is one subschema, checked for nested property names and
/// types.
const SUBSCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// JSON Schema keywords whose value is an array of subschemas.
const SUBSCHEMA_LIST_KEYWORDS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// JSON Schema keywords whose value maps names to subschemas.
const SUBSCHEMA_MAP_KEYWORDS: &[&str] = &[
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];

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
    let element_offsets = array_element_offsets(text);
    if entries.len() > MAX_TOOLS_PER_MANIFEST {
        let position = element_offsets
            .get(MAX_TOOLS_PER_MANIFEST)
            .map(|offset| crate::skill_toml::position_of(text, *offset));
        diagnostics.push(
            Diagnostic::error(
                DiagnosticCode::ToolsManifestInvalid,
                format!(
                    "`tools.json` declares {} tools; only the first {MAX_TOOLS_PER_MANIFEST} are loaded (OpenAI accepts at most {MAX_TOOLS_PER_MANIFEST} in one request)",
                    entries.len()
                ),
            )
            .at(position)
            .for_field(format!("tools[{MAX_TOOLS_PER_MANIFEST}]"))
            .with_hint("split the tools among several skills, or drop the ones a model does not need"),
        );
    }
    let mut tools: Vec<ToolDefinition> =
        Vec::with_capacity(entries.len().min(MAX_TOOLS_PER_MANIFEST));
    let locations_left = std::cell::Cell::new(MAX_LOCATED_DIAGNOSTICS);
    for (index, entry) in entries.iter().enumerate().take(MAX_TOOLS_PER_MANIFEST) {
        let first_new = diagnostics.len();
        let place = ToolPlace {
            text,
            index,
            offset: element_offsets.get(index).copied(),
            locations_left: &locations_left,
        };
        let mut outcome = parse_tool(&place, entry, &mut diagnostics);
        if let Some(offset) = element_offsets.get(index) {
            let position = crate::skill_toml::position_of(text, *offset);
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
                    .map(|offset| crate::skill_toml::position_of(text, *offset));
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

/// Which tool of which `tools.json` text is being read, for diagnostics that point at a field.
struct ToolPlace<'t> {
    text: &'t str,
    index: usize,
    /// Where the tool's declaration starts in the text.
    offset: Option<usize>,
    /// Field locations the manifest may still look up ([`MAX_LOCATED_DIAGNOSTICS`]).
    locations_left: &'t std::cell::Cell<usize>,
}

impl ToolPlace<'_> {
    /// An error about the value at `path` inside this tool: its field (`tools[3].parameters.n`)
    /// and its line and column.
    fn error(&self, path: &[JsonStep<'_>], message: String, hint: &str) -> Diagnostic {
        self.diagnostic(Severity::Error, path, message, hint)
    }

    /// A warning about the value at `path` inside this tool, as [`ToolPlace::error`].
    fn warning(&self, path: &[JsonStep<'_>], message: String, hint: &str) -> Diagnostic {
        self.diagnostic(Severity::Warning, path, message, hint)
    }

    fn diagnostic(
        &self,
        severity: Severity,
        path: &[JsonStep<'_>],
        message: String,
        hint: &str,
    ) -> Diagnostic {
        let mut field = format!("tools[{}]", self.index);
        for step in path {
            match step {
                JsonStep::Key(key) => {
                    field.push('.');
                    field.push_str(key);
                }
                JsonStep::Index(index) => field.push_str(&format!("[{index}]")),
            }
        }
        let left = self.locations_left.get();
        self.locations_left.set(left.saturating_sub(1));
        let position = self
            .offset
            .filter(|_| left > 0)
            .and_then(|offset| locate(self.text, offset, path))
            .map(|offset| crate::skill_toml::position_of(self.text, offset));
        Diagnostic::new(severity, DiagnosticCode::ToolInvalid, message)
            .for_field(field)
            .at(position)
            .with_hint(hint)
    }
}

/// Why a parameter or property name is refused by some target, or `None` when every target
/// accepts it (`^[a-zA-Z0-9_.-]{1,64}$`).
fn parameter_name_problem(name: &str) -> Option<String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    let count = name.chars().count();
    if name.is_empty() {
        Some("is empty".to_owned())
    } else if !name.chars().all(allowed) {
        Some(format!(
            "contains {}",
            describe_characters(name, |c| !allowed(c))
        ))
    } else if count > MAX_PARAMETER_NAME_CHARS {
        Some(format!(
            "is {count} characters; providers accept at most {MAX_PARAMETER_NAME_CHARS}"
        ))
    } else {
        None
    }
}

fn parse_tool(
    place: &ToolPlace<'_>,
    entry: &Value,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ToolDefinition> {
    let index = place.index;
    let Value::Object(entry) = entry else {
        diagnostics.push(place.error(
            &[],
            format!("tools[{index}] must be an object with `name` and `description`; it was skipped"),
            "write each tool as `{\"name\": …, \"description\": …, \"script\": …, \"parameters\": {…}}`",
        ));
        return None;
    };
    let name_path = [JsonStep::Key("name")];
    let name = match entry.get("name") {
        Some(Value::String(name)) if !is_valid_tool_name(name) => {
            diagnostics.push(place.error(
                &name_path,
                format!("tool name `{}` (tools[{index}]) must match `^[a-z][a-z0-9_]*$`; the tool was skipped", printable(name)),
                "use lowercase letters, digits and underscores, starting with a letter (e.g. `count_words`)",
            ));
            return None;
        }
        Some(Value::String(name)) if name.chars().count() > MAX_TOOL_NAME_CHARS => {
            diagnostics.push(place.error(
                &name_path,
                format!(
                    "tool name `{name}` (tools[{index}]) is {} characters; providers accept at most {MAX_TOOL_NAME_CHARS}; the tool was skipped",
                    name.chars().count()
                ),
                "shorten the name",
            ));
            return None;
        }
        Some(Value::String(name)) => name.clone(),
        _ => {
            diagnostics.push(place.error(
                &name_path,
                format!("tools[{index}] has no string `name`; the tool was skipped"),
                "add `\"name\": \"tool_name\"`",
            ));
            return None;
        }
    };
    let description = match entry.get("description") {
        Some(Value::String(description)) if !description.trim().is_empty() => description.clone(),
        _ => {
            diagnostics.push(place.error(
                &[JsonStep::Key("description")],
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
            diagnostics.push(place.error(
                &[JsonStep::Key("script")],
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
            diagnostics.push(place.warning(
                &[JsonStep::Key(key)],
                format!(
                    "tool `{name}` has unknown key `{}`, which is ignored",
                    printable(key)
                ),
                "tool declarations have `name`, `description`, `script` and `parameters`",
            ));
        }
    }
    let input_schema = parameters_schema(place, &name, entry.get("parameters"), diagnostics)?;
    Some(ToolDefinition {
        name,
        description,
        script,
        input_schema,
        position: None,
    })
}

fn parameters_schema(
    place: &ToolPlace<'_>,
    tool: &str,
    parameters: Option<&Value>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Value> {
    let parameters = match parameters {
        None | Some(Value::Null) => &Map::new(),
        Some(Value::Object(parameters)) => parameters,
        Some(_) => {
            diagnostics.push(place.error(
                &[JsonStep::Key("parameters")],
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
        let path = [JsonStep::Key("parameters"), JsonStep::Key(parameter)];
        let at = |key: &'static str| [path[0], path[1], JsonStep::Key(key)];
        let shown = printable(parameter);
        if let Some(problem) = parameter_name_problem(parameter) {
            diagnostics.push(place.error(
                &path,
                format!("tool `{tool}`: parameter name `{shown}` {problem}"),
                "name parameters with ASCII letters, digits, `_`, `.` and `-` (at most 64): every provider accepts those",
            ));
            usable = false;
            continue;
        }
        let Value::Object(definition) = definition else {
            diagnostics.push(place.error(
                &path,
                format!("tool `{tool}`: parameter `{shown}` must be an object with `type` and `description`"),
                "write `{\"type\": \"string\", \"description\": \"…\"}`",
            ));
            usable = false;
            continue;
        };
        let kind = definition.get("type").and_then(Value::as_str);
        match kind {
            Some(kind) if PARAMETER_TYPES.contains(&kind) => {}
            _ => {
                diagnostics.push(place.error(
                    &at("type"),
                    format!(
                        "tool `{tool}`: parameter `{shown}` needs a `type` of {}",
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
            diagnostics.push(place.error(
                &at("description"),
                format!("tool `{tool}`: parameter `{shown}` has no `description`"),
                "describe the parameter; the model fills it from this text",
            ));
        }
        if let Some(allowed) = definition.get("enum")
            && !matches!(allowed, Value::Array(values) if !values.is_empty())
        {
            diagnostics.push(place.error(
                &at("enum"),
                format!("tool `{tool}`: `enum` of parameter `{shown}` must be a non-empty array"),
                "list the allowed values, e.g. `\"enum\": [\"a\", \"b\"]`",
            ));
            usable = false;
            continue;
        }
        let optional = match definition.get("optional") {
            None => false,
            Some(Value::Bool(optional)) => *optional,
            Some(_) => {
                diagnostics.push(place.error(
                    &at("optional"),
                    format!(
                        "tool `{tool}`: `optional` of parameter `{shown}` must be `true` or `false`"
                    ),
                    "write `\"optional\": true`",
                ));
                usable = false;
                continue;
            }
        };
        // Everything but our own `optional` flag is JSON Schema and passes through, once every
        // target would accept it.
        let schema: Map<String, Value> = definition
            .iter()
            .filter(|(key, _)| key.as_str() != "optional")
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        let schema = Value::Object(schema);
        let first_problem = diagnostics.len();
        // A definition of only the keywords checked above needs no meta-schema (most of them;
        // the meta-schema costs microseconds per parameter).
        let only_checked_keywords = definition.iter().all(|(key, value)| match key.as_str() {
            "type" | "enum" | "optional" => true,
            "description" => value.is_string(),
            _ => false,
        });
        if !only_checked_keywords {
            check_against_meta_schema(place, tool, &path, &schema, diagnostics);
        }
        if diagnostics.len() == first_problem {
            check_nested_schema(place, tool, &mut path.to_vec(), &schema, diagnostics);
        }
        if diagnostics.len() > first_problem {
            usable = false;
            continue;
        }
        if !optional {
            required.push(Value::String(parameter.clone()));
        }
        properties.insert(parameter.clone(), schema);
    }
    if !usable {
        diagnostics.push(place.error(
            &[JsonStep::Key("parameters")],
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

/// Errors for a parameter's schema that is not valid JSON Schema (draft 2020-12 meta-schema):
/// `"minimum": "abc"`, `"items": 5`. Each points at the keyword.
fn check_against_meta_schema(
    place: &ToolPlace<'_>,
    tool: &str,
    path: &[JsonStep<'_>],
    schema: &Value,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let validator = jsonschema::draft202012::meta::validator();
    for error in validator.iter_errors(schema) {
        let segments: Vec<String> = error
            .instance_path()
            .iter()
            .map(|segment| match segment {
                LocationSegment::Property(key) => key.into_owned(),
                LocationSegment::Index(index) => index.to_string(),
            })
            .collect();
        let mut full_path = path.to_vec();
        let mut keyword_path = String::new();
        for (segment, text) in error.instance_path().iter().zip(&segments) {
            full_path.push(match segment {
                LocationSegment::Property(_) => JsonStep::Key(text),
                LocationSegment::Index(index) => JsonStep::Index(index),
            });
            if !keyword_path.is_empty() {
                keyword_path.push('.');
            }
            keyword_path.push_str(text);
        }
        let parameter = match path.last() {
            Some(JsonStep::Key(key)) => printable(key).into_owned(),
            _ => String::new(),
        };
        diagnostics.push(place.error(
            &full_path,
            format!(
                "tool `{tool}`: parameter `{parameter}`: `{}` is not valid JSON Schema: {}",
                printable(&keyword_path),
                printable(&error.masked().to_string())
            ),
            "fix the keyword's value (JSON Schema draft 2020-12); providers refuse such a schema",
        ));
    }
}

/// Errors for nested property names and `type`s that some target refuses: property names as
/// for parameters ([`parameter_name_problem`]), and `type` as one string of
/// [`PARAMETER_TYPES`] (Gemini takes no type lists). `path` leads to `schema`.
fn check_nested_schema<'a>(
    place: &ToolPlace<'_>,
    tool: &str,
    path: &mut Vec<JsonStep<'a>>,
    schema: &'a Value,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Value::Object(schema) = schema else {
        return;
    };
    if let Some(kind) = schema.get("type")
        && !matches!(kind, Value::String(kind) if PARAMETER_TYPES.contains(&kind.as_str()))
    {
        path.push(JsonStep::Key("type"));
        diagnostics.push(place.error(
            path,
            format!(
                "tool `{tool}`: `type` must be a single string, one of {} (Gemini takes no type lists)",
                PARAMETER_TYPES.join(", ")
            ),
            "write one type; for a value that may be missing, leave it out of `required` instead of adding `null`",
        ));
        path.pop();
    }
    for (keyword, value) in schema {
        path.push(JsonStep::Key(keyword));
        match value {
            Value::Object(members) if keyword == "properties" => {
                for (property, subschema) in members {
                    path.push(JsonStep::Key(property));
                    if let Some(problem) = parameter_name_problem(property) {
                        diagnostics.push(place.error(
                            path,
                            format!(
                                "tool `{tool}`: property name `{}` {problem}",
                                printable(property)
                            ),
                            "name properties with ASCII letters, digits, `_`, `.` and `-` (at most 64): every provider accepts those",
                        ));
                    }
                    check_nested_schema(place, tool, path, subschema, diagnostics);
                    path.pop();
                }
            }
            Value::Object(members) if SUBSCHEMA_MAP_KEYWORDS.contains(&keyword.as_str()) => {
                for (member, subschema) in members {
                    path.push(JsonStep::Key(member));
                    check_nested_schema(place, tool, path, subschema, diagnostics);
                    path.pop();
                }
            }
            Value::Array(items) if SUBSCHEMA_LIST_KEYWORDS.contains(&keyword.as_str()) => {
                for (index, subschema) in items.iter().enumerate() {
                    path.push(JsonStep::Index(index));
                    check_nested_schema(place, tool, path, subschema, diagnostics);
                    path.pop();
                }
            }
            _ if SUBSCHEMA_KEYWORDS.contains(&keyword.as_str()) => {
                check_nested_schema(place, tool, path, value, diagnostics);
            }
            _ => {}
        }
        path.pop();
    }
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
    fn diagnostics_point_at_the_field() {
        let (_, diagnostics) = parse_tools_manifest(
            "[\n  {\"name\": \"ok\", \"description\": \"a, [b] {c} \\\"d\"},\n  {\"name\": \"Bad\", \"description\": \"x\"}\n]",
        );
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        // At the `name` key of the second tool.
        assert_eq!(
            (diagnostics[0].line, diagnostics[0].column),
            (Some(3), Some(4))
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
