//! The JSON Schema of a built-in tool's result ([`crate::registry::Tool::Result`]), derived
//! from its type: offered to MCP clients as the tool's `outputSchema` when the result is an
//! object of a fixed shape. A result that is text, or text or an object (`load_skill`), or JSON
//! the tool does not shape itself, has none: MCP asks that every result of a tool with an
//! output schema be structured content matching it.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};
use skillbox_services::params::KEYWORD_ORDER;

/// The output schema of results of type `R`: its JSON Schema as it serializes (draft
/// 2020-12, every subschema inline, no `$schema`, `title` or `format`, the keywords in the
/// order parameters' schemas have them), or `None` when `R` is not always an object. A member
/// left out when it has no value (`skip_serializing_if`) is not required, and is never `null`.
#[must_use]
pub fn output_schema_of<R: JsonSchema>() -> Option<Value> {
    let generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .with(|settings| {
            settings.meta_schema = None;
            settings.inline_subschemas = true;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<R>().to_value();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    normalise(&mut schema);
    if let Value::Object(root) = &mut schema {
        // The type's own doc comment is about the Rust type; its members say what they hold.
        root.remove("description");
    }
    Some(schema)
}

/// Remove what only Rust readers need (type names as `title`, Rust's integer formats such as
/// `uint64`), drop `null` from members that are left out rather than null, and order the
/// keywords, at every level.
fn normalise(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            for dropped in ["$schema", "title", "format"] {
                object.remove(dropped);
            }
            never_null_when_optional(object);
            for (keyword, value) in object.iter_mut() {
                // Under `properties` the keys are member names, which may be any word.
                if keyword == "properties" {
                    if let Value::Object(properties) = value {
                        properties.values_mut().for_each(normalise);
                    }
                } else {
                    normalise(value);
                }
            }
            let mut ordered = Map::new();
            for keyword in KEYWORD_ORDER {
                if let Some(value) = object.remove(keyword) {
                    ordered.insert(keyword.to_owned(), value);
                }
            }
            ordered.append(object);
            *object = ordered;
        }
        Value::Array(items) => items.iter_mut().for_each(normalise),
        _ => {}
    }
}

/// A member a result leaves out when it has none is not required; it is never `null`, so its
/// type does not say it may be.
fn never_null_when_optional(object: &mut Map<String, Value>) {
    let required: Vec<String> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let Some(Value::Object(properties)) = object.get_mut("properties") else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        if required.contains(name) {
            continue;
        }
        if let Some(Value::Array(types)) = property.get_mut("type") {
            types.retain(|kind| kind != "null");
            if types.len() == 1 {
                let only = types.remove(0);
                property["type"] = only;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde::Serialize;
    use serde_json::json;

    use super::*;

    /// A result.
    #[derive(Serialize, JsonSchema)]
    struct Answer {
        /// How many.
        count: u64,
        /// A note, when there is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// Named `title`, as a member may be.
        title: Option<String>,
    }

    #[test]
    fn an_object_result_has_a_schema_and_any_other_none() {
        assert_eq!(
            output_schema_of::<Answer>().map(|schema| schema.to_string()),
            Some(
                json!({
                    "type": "object",
                    "properties": {
                        "count": {"type": "integer", "minimum": 0, "description": "How many."},
                        "note": {"type": "string", "description": "A note, when there is one."},
                        "title": {"type": ["string", "null"], "description": "Named `title`, as a member may be."}
                    },
                    "required": ["count", "title"]
                })
                .to_string()
            )
        );
        assert_eq!(output_schema_of::<String>(), None);
        assert_eq!(output_schema_of::<Value>(), None);
    }
}
