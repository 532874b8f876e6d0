//! Interpreting a frontmatter: each known field read into [`SkillProperties`], unknown fields
//! warned about (lenient) or refused (strict), and the spec's rules for the required `name` and
//! `description` and the length of `description` and `compatibility`.

use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;

use super::field_catalog::{SPEC_FIELDS, is_known_field, spec_field_kind};
use super::field_reader::FieldReader;
use super::name_rules::name_problems;
use super::skill_properties::{RawFields, SkillProperties, raw_fields};
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::yaml::{YamlNode, YamlValue};

/// Longest description the agentskills spec allows, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Longest compatibility note the agentskills spec allows, in characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// What the frontmatter is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValidationMode {
    /// Known extension fields accepted, unknown fields are warnings.
    #[default]
    Lenient,
    /// The agentskills spec exactly as `skills-ref` applies it: only the six spec fields.
    Strict,
}

/// Facts about where the frontmatter lives that some rules need.
#[derive(Debug, Clone, Copy)]
pub struct PropertiesContext<'a> {
    /// The skill folder's own name (for the name/folder rule); `None` to skip that rule.
    pub directory_name: Option<&'a str>,
    /// The skill has a `skill.toml`: its SKILL.md `name` is a display title and the id and
    /// description come from the manifest.
    pub has_skill_manifest: bool,
    /// Lenient or strict.
    pub mode: ValidationMode,
}

/// Interpret frontmatter fields, returning the properties and the problems found. Diagnostics
/// carry line and column but no file; the caller adds it.
#[must_use]
pub fn interpret(
    fields: &IndexMap<String, YamlNode>,
    context: PropertiesContext<'_>,
) -> (SkillProperties, Vec<Diagnostic>) {
    let raw = RawFields {
        yaml: None,
        fields: OnceLock::from(raw_fields(fields)),
    };
    interpret_fields(fields, raw, context)
}

/// [`interpret`] for fields parsed from `yaml`: the verbatim fields are built from that text
/// when first asked for, not now.
pub(crate) fn interpret_parsed(
    fields: &IndexMap<String, YamlNode>,
    yaml: Arc<str>,
    context: PropertiesContext<'_>,
) -> (SkillProperties, Vec<Diagnostic>) {
    let raw = RawFields {
        yaml: Some(yaml),
        fields: OnceLock::new(),
    };
    interpret_fields(fields, raw, context)
}

fn interpret_fields(
    fields: &IndexMap<String, YamlNode>,
    raw: RawFields,
    context: PropertiesContext<'_>,
) -> (SkillProperties, Vec<Diagnostic>) {
    let mut reader = FieldReader {
        diagnostics: Vec::new(),
    };
    let strict = context.mode == ValidationMode::Strict;
    let mut properties = SkillProperties {
        user_invocable: true,
        raw,
        ..SkillProperties::default()
    };

    let mut unexpected = Vec::new();
    for (key, node) in fields {
        let known = if strict {
            spec_field_kind(key).is_some()
        } else {
            is_known_field(key)
        };
        if !known {
            unexpected.push(key.as_str());
            if !strict {
                reader.diagnostics.push(
                    Diagnostic::warning(
                        DiagnosticCode::FieldUnknown,
                        format!("unknown frontmatter field `{key}` (kept and passed through)"),
                    )
                    .at(node.field_position())
                    .for_field(key.clone())
                    .with_hint("check the spelling; skillbox knows the agentskills fields and the extensions listed in its README"),
                );
            }
        }
    }
    if strict && !unexpected.is_empty() {
        unexpected.sort_unstable();
        let first = fields
            .get(unexpected[0])
            .and_then(|node| node.field_position());
        reader.diagnostics.push(
            Diagnostic::error(
                DiagnosticCode::FieldUnknown,
                format!(
                    "unexpected fields in frontmatter: {}; the agentskills spec allows only {}",
                    unexpected
                        .iter()
                        .map(|field| format!("`{field}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    SPEC_FIELDS
                        .iter()
                        .map(|field| format!("`{field}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .at(first)
            .for_field(unexpected.join(","))
            .with_hint(
                "move client-specific settings under `metadata:`, or validate without --spec-only",
            ),
        );
    }

    let title_only = context.has_skill_manifest && !strict;
    properties.name = reader.text(fields, "name");
    properties.description = reader.text(fields, "description");
    match (&properties.name, find_field(fields, "name")) {
        (None, None) if !title_only => reader.diagnostics.push(
            Diagnostic::error(
                DiagnosticCode::FieldMissing,
                "missing required field `name`",
            )
            .for_field("name")
            .with_hint(match context.directory_name {
                Some(directory) => format!("add `name: {directory}` to the frontmatter"),
                None => "add `name: <skill-name>` to the frontmatter".to_owned(),
            }),
        ),
        (Some(name), Some(node)) if !title_only => {
            for diagnostic in name_problems(name, context.directory_name) {
                reader
                    .diagnostics
                    .push(diagnostic.at(node.field_position()).for_field("name"));
            }
        }
        (None, Some(node))
            if !title_only
                && !matches!(node.value, YamlValue::Sequence(_) | YamlValue::Mapping(_)) =>
        {
            reader.diagnostics.push(empty_field("name", node));
        }
        _ => {}
    }
    match (&properties.description, find_field(fields, "description")) {
        (None, None) if !context.has_skill_manifest => reader.diagnostics.push(
            Diagnostic::error(
                DiagnosticCode::FieldMissing,
                "missing required field `description`",
            )
            .for_field("description")
            .with_hint("add `description: <what the skill does and when to use it>`; the model picks skills by this text"),
        ),
        (Some(description), Some(node)) => {
            let count = description.chars().count();
            if count > MAX_DESCRIPTION_CHARS {
                reader.diagnostics.push(
                    Diagnostic::error(
                        DiagnosticCode::DescriptionTooLong,
                        format!(
                            "field `description` is {count} characters; the limit is {MAX_DESCRIPTION_CHARS}"
                        ),
                    )
                    .at(node.field_position())
                    .for_field("description")
                    .with_hint("shorten it to what the skill does and when to use it; details belong in the body"),
                );
            }
        }
        (None, Some(node)) if !matches!(node.value, YamlValue::Sequence(_) | YamlValue::Mapping(_)) => {
            reader.diagnostics.push(empty_field("description", node));
        }
        _ => {}
    }

    properties.license = reader.text(fields, "license");
    properties.compatibility = reader.text(fields, "compatibility");
    if let (Some(compatibility), Some(node)) = (
        &properties.compatibility,
        find_field(fields, "compatibility"),
    ) {
        let count = compatibility.chars().count();
        if count > MAX_COMPATIBILITY_CHARS {
            reader.diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::CompatibilityTooLong,
                    format!(
                        "field `compatibility` is {count} characters; the limit is {MAX_COMPATIBILITY_CHARS}"
                    ),
                )
                .at(node.field_position())
                .for_field("compatibility")
                .with_hint("state only the environment requirements (runtime versions, network, OS)"),
            );
        }
    }
    properties.metadata = reader.metadata(fields);
    properties.allowed_tools = reader.words(fields, "allowed-tools");
    if strict {
        return (properties, reader.diagnostics);
    }

    properties.disable_model_invocation = reader.flag(fields, "disable-model-invocation", false);
    properties.user_invocable = reader.flag(fields, "user-invocable", true);
    properties.argument_hint = reader.text(fields, "argument-hint");
    properties.model = reader.text(fields, "model");
    properties.context = reader.text(fields, "context");
    properties.agent = reader.text(fields, "agent");
    properties.toolsets = reader.words(fields, "toolsets");
    properties.files = reader.files(fields);
    properties.version = reader.text(fields, "version");
    properties.short_description = reader.text(fields, "short_description");
    properties.tags = reader.words(fields, "tags");
    for field in ["when_to_use", "effort", "shell", "author"] {
        reader.text(fields, field);
    }
    for field in ["arguments", "paths", "disallowed-tools", "platforms"] {
        reader.words(fields, field);
    }
    properties.declared_secrets = reader.declared_secrets(fields);
    if let Some(node) = find_field(fields, "mcp-servers") {
        properties.mcp_servers =
            crate::skill_servers::from_frontmatter(node, &mut reader.diagnostics);
    }
    for name in reader.words(fields, "requires") {
        match crate::names::unsafe_name_reason(&name) {
            None => properties.requires.push(name),
            Some(problem) => reader.diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::RequiresInvalid,
                    format!("`requires` entry `{name}` is not a skill name: {problem}"),
                )
                .at(find_field(fields, "requires").and_then(YamlNode::field_position))
                .for_field("requires")
                .with_hint("list the names of the skills this one needs"),
            ),
        }
    }
    (properties, reader.diagnostics)
}

/// Maps up to this many fields are searched key by key: hashing a key costs more than
/// comparing it with a frontmatter's handful of keys.
const LINEAR_LOOKUP_FIELDS: usize = 16;

/// The field named `name`, if present.
pub(super) fn find_field<'a>(
    fields: &'a IndexMap<String, YamlNode>,
    name: &str,
) -> Option<&'a YamlNode> {
    if fields.len() <= LINEAR_LOOKUP_FIELDS {
        fields
            .iter()
            .find_map(|(key, node)| (key == name).then_some(node))
    } else {
        fields.get(name)
    }
}

fn empty_field(field: &str, node: &YamlNode) -> Diagnostic {
    Diagnostic::error(
        DiagnosticCode::FieldEmpty,
        format!("field `{field}` must be a non-empty string"),
    )
    .at(node.field_position())
    .for_field(field)
    .with_hint(format!("give `{field}` a value"))
}
