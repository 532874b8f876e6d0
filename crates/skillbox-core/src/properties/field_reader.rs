//! Reading one frontmatter field as the kind it is (text, flag, words, mapping, `files`
//! entries, environment names), with a diagnostic naming the field and what it must be when
//! its value is of another type.

use indexmap::IndexMap;

use super::interpret::find_field;
use super::name_rules::is_environment_name;
use super::skill_properties::{FileReference, metadata_values};
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::yaml::{YamlNode, YamlValue};

pub(super) struct FieldReader {
    pub(super) diagnostics: Vec<Diagnostic>,
}

impl FieldReader {
    fn wrong_type(&mut self, field: &str, node: &YamlNode, expected: &str) {
        self.diagnostics.push(
            Diagnostic::error(
                DiagnosticCode::FieldType,
                format!(
                    "field `{field}` must be {expected}, found a {}",
                    node.type_name()
                ),
            )
            .at(node.field_position())
            .for_field(field)
            .with_hint(format!("write `{field}` as {expected}")),
        );
    }

    /// A text field: strings as they are; numbers and booleans as their source text (as
    /// skills-ref reads them); empty or null as absent.
    pub(super) fn text(
        &mut self,
        fields: &IndexMap<String, YamlNode>,
        field: &str,
    ) -> Option<String> {
        let node = find_field(fields, field)?;
        match node.scalar_text() {
            Some(text) if matches!(node.value, YamlValue::Null) => {
                let _ = text;
                None
            }
            Some(text) => {
                let trimmed = text.trim();
                (!trimmed.is_empty()).then(|| trimmed.to_owned())
            }
            None => {
                self.wrong_type(field, node, "a string");
                None
            }
        }
    }

    pub(super) fn flag(
        &mut self,
        fields: &IndexMap<String, YamlNode>,
        field: &str,
        default: bool,
    ) -> bool {
        let Some(node) = find_field(fields, field) else {
            return default;
        };
        match &node.value {
            YamlValue::Bool(value) => *value,
            YamlValue::Null => default,
            YamlValue::String(text) if text.eq_ignore_ascii_case("true") => true,
            YamlValue::String(text) if text.eq_ignore_ascii_case("false") => false,
            _ => {
                self.wrong_type(field, node, "`true` or `false`");
                default
            }
        }
    }

    /// Space/comma-separated text or a list of strings.
    pub(super) fn words(
        &mut self,
        fields: &IndexMap<String, YamlNode>,
        field: &str,
    ) -> Vec<String> {
        let Some(node) = find_field(fields, field) else {
            return Vec::new();
        };
        match &node.value {
            YamlValue::Null => Vec::new(),
            YamlValue::Sequence(items) => {
                let mut words = Vec::with_capacity(items.len());
                for item in items {
                    match item.scalar_text() {
                        Some(text) if !text.trim().is_empty() => words.push(text.trim().to_owned()),
                        Some(_) => {}
                        None => self.wrong_type(field, item, "a list of strings"),
                    }
                }
                words
            }
            YamlValue::Mapping(_) => {
                self.wrong_type(field, node, "a space-separated string or a list of strings");
                Vec::new()
            }
            _ => node
                .scalar_text()
                .map(|text| split_words(&text))
                .unwrap_or_default(),
        }
    }

    pub(super) fn metadata(
        &mut self,
        fields: &IndexMap<String, YamlNode>,
    ) -> IndexMap<String, serde_json::Value> {
        let Some(node) = find_field(fields, "metadata") else {
            return IndexMap::new();
        };
        match &node.value {
            YamlValue::Mapping(entries) => metadata_values(entries),
            YamlValue::Null => IndexMap::new(),
            _ => {
                self.wrong_type("metadata", node, "a mapping of keys to values");
                IndexMap::new()
            }
        }
    }

    pub(super) fn files(&mut self, fields: &IndexMap<String, YamlNode>) -> Vec<FileReference> {
        let Some(node) = find_field(fields, "files") else {
            return Vec::new();
        };
        let items = match &node.value {
            YamlValue::Sequence(items) => items,
            YamlValue::Null => return Vec::new(),
            _ => {
                self.wrong_type("files", node, "a list of `{path, description}` entries");
                return Vec::new();
            }
        };
        let mut files = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let entry = match &item.value {
                YamlValue::Mapping(entry) => entry,
                YamlValue::String(path) => {
                    files.push(FileReference {
                        path: path.clone(),
                        description: None,
                    });
                    continue;
                }
                _ => {
                    self.wrong_type(
                        &format!("files[{index}]"),
                        item,
                        "a `{path, description}` entry",
                    );
                    continue;
                }
            };
            let path = entry.get("path").and_then(YamlNode::scalar_text);
            let description = entry
                .get("description")
                .and_then(YamlNode::scalar_text)
                .filter(|text| !text.trim().is_empty());
            match path {
                Some(path) if !path.trim().is_empty() => {
                    if description.is_none() {
                        self.diagnostics.push(
                            Diagnostic::warning(
                                DiagnosticCode::FilesEntryInvalid,
                                format!("`files[{index}]` (`{path}`) has no `description`"),
                            )
                            .at(item.field_position())
                            .for_field(format!("files[{index}].description"))
                            .with_hint("say when the model should load this file"),
                        );
                    }
                    files.push(FileReference {
                        path: path.trim().to_owned(),
                        description: description.map(|text| text.trim().to_owned()),
                    });
                }
                _ => self.diagnostics.push(
                    Diagnostic::error(
                        DiagnosticCode::FilesEntryInvalid,
                        format!("`files[{index}]` has no `path`"),
                    )
                    .at(item.field_position())
                    .for_field(format!("files[{index}].path"))
                    .with_hint("give the file's path relative to the skill folder"),
                ),
            }
        }
        files
    }

    pub(super) fn declared_secrets(&mut self, fields: &IndexMap<String, YamlNode>) -> Vec<String> {
        let Some(node) = find_field(fields, "required_environment_variables") else {
            return Vec::new();
        };
        let YamlValue::Sequence(items) = &node.value else {
            if !matches!(node.value, YamlValue::Null) {
                self.wrong_type(
                    "required_environment_variables",
                    node,
                    "a list of names or `{name: …}` entries",
                );
            }
            return Vec::new();
        };
        let mut names = Vec::new();
        for item in items {
            let name = match &item.value {
                YamlValue::String(name) => Some(name.clone()),
                YamlValue::Mapping(entry) => entry.get("name").and_then(YamlNode::scalar_text),
                _ => None,
            };
            match name {
                Some(name) if is_environment_name(&name) => names.push(name),
                _ => self.diagnostics.push(
                    Diagnostic::error(
                        DiagnosticCode::FieldType,
                        "each `required_environment_variables` entry must be an environment variable name or `{name: NAME}`",
                    )
                    .at(item.field_position())
                    .for_field("required_environment_variables")
                    .with_hint("use names like `API_TOKEN` (letters, digits, underscores)"),
                ),
            }
        }
        names
    }
}

/// Split `allowed-tools`-style text on spaces and commas, keeping parenthesised groups such as
/// `Bash(git add:*)` whole.
#[must_use]
pub fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            c if depth == 0 && (c.is_whitespace() || c == ',') => {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}
