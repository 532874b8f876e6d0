//! The fields of a `SKILL.md` frontmatter, interpreted: which ones skillbox knows, their types,
//! and the agentskills rules for `name`, `description` and `compatibility`.
//!
//! Every field is also available verbatim (as JSON) from [`SkillProperties::raw`], so front
//! doors such as MCP can pass the frontmatter through unchanged.

use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use serde::Serialize;
use unicode_normalization::UnicodeNormalization;

use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::names::describe_characters;
use crate::printable::printable;
use crate::yaml::{YamlNode, YamlValue};

/// Longest skill name the agentskills spec allows, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest description the agentskills spec allows, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Longest compatibility note the agentskills spec allows, in characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// The six fields the agentskills spec (and `skills-ref`) allows.
pub const SPEC_FIELDS: &[&str] = &[
    "name",
    "description",
    "license",
    "allowed-tools",
    "metadata",
    "compatibility",
];

/// How a known field's value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldKind {
    Text,
    Flag,
    /// A space- or comma-separated string, or a YAML list of strings.
    Words,
    Mapping,
    Files,
    /// Kept as given (structured values skillbox passes on but does not interpret).
    Structured,
}

/// Fields outside the agentskills six that skillbox knows, with who defines them.
const EXTENSION_FIELDS: &[(&str, FieldKind)] = &[
    // seed 003 (cross-platform and execution-context extensions)
    ("disable-model-invocation", FieldKind::Flag),
    ("user-invocable", FieldKind::Flag),
    ("argument-hint", FieldKind::Text),
    ("model", FieldKind::Text),
    ("context", FieldKind::Text),
    ("agent", FieldKind::Text),
    // seed 004
    ("toolsets", FieldKind::Words),
    ("files", FieldKind::Files),
    // common informational fields
    ("version", FieldKind::Text),
    ("author", FieldKind::Text),
    // Claude Code
    ("when_to_use", FieldKind::Text),
    ("arguments", FieldKind::Words),
    ("effort", FieldKind::Text),
    ("hooks", FieldKind::Structured),
    ("paths", FieldKind::Words),
    ("shell", FieldKind::Text),
    ("disallowed-tools", FieldKind::Words),
    // Hermes
    ("platforms", FieldKind::Words),
    ("required_environment_variables", FieldKind::Structured),
    ("required_credential_files", FieldKind::Structured),
    // Skills Protocol SKILL.md
    ("short_description", FieldKind::Text),
    ("tags", FieldKind::Words),
    // skillbox: what a skill needs (issue 27)
    ("mcp-servers", FieldKind::Structured),
    ("requires", FieldKind::Words),
];

fn spec_field_kind(field: &str) -> Option<FieldKind> {
    match field {
        "name" | "description" | "license" | "compatibility" => Some(FieldKind::Text),
        "metadata" => Some(FieldKind::Mapping),
        "allowed-tools" => Some(FieldKind::Words),
        _ => None,
    }
}

fn field_kind(field: &str) -> Option<FieldKind> {
    spec_field_kind(field).or_else(|| {
        EXTENSION_FIELDS
            .iter()
            .find(|(name, _)| *name == field)
            .map(|(_, kind)| *kind)
    })
}

/// Whether skillbox knows a frontmatter field (spec or extension).
#[must_use]
pub fn is_known_field(field: &str) -> bool {
    field_kind(field).is_some()
}

/// One `files:` entry (seed 004): a bundled file advertised to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileReference {
    /// Path relative to the skill folder.
    pub path: String,
    /// When the model should load it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The interpreted frontmatter of one `SKILL.md`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SkillProperties {
    /// `name`, trimmed (absent when missing or not text).
    pub name: Option<String>,
    /// `description`, trimmed.
    pub description: Option<String>,
    /// `license`.
    pub license: Option<String>,
    /// `compatibility`.
    pub compatibility: Option<String>,
    /// `metadata`: scalar values as their source text (`1.0` stays `"1.0"`), nested values as JSON.
    pub metadata: IndexMap<String, serde_json::Value>,
    /// `allowed-tools`, split into tool patterns.
    pub allowed_tools: Vec<String>,
    /// `disable-model-invocation`: only a person may invoke the skill.
    pub disable_model_invocation: bool,
    /// `user-invocable`: whether the skill shows in user-facing listings.
    pub user_invocable: bool,
    /// `argument-hint`.
    pub argument_hint: Option<String>,
    /// `model`: model override while the skill is active.
    pub model: Option<String>,
    /// `context` (`fork` runs the skill in a subagent).
    pub context: Option<String>,
    /// `agent`: subagent type for `context: fork`.
    pub agent: Option<String>,
    /// `toolsets` (seed 004).
    pub toolsets: Vec<String>,
    /// `files` (seed 004).
    pub files: Vec<FileReference>,
    /// `version` as written.
    pub version: Option<String>,
    /// `short_description` (Skills Protocol SKILL.md).
    pub short_description: Option<String>,
    /// `tags`.
    pub tags: Vec<String>,
    /// Environment variables the skill declares it needs (`required_environment_variables`,
    /// as names or `{name: …}` entries). The runtime passes only these secrets through.
    pub declared_secrets: Vec<String>,
    /// MCP servers the skill needs (`mcp-servers`, and a `.mcp.json` beside it, merged by the
    /// loader).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<crate::skill_servers::ServerDeclaration>,
    /// Skills loaded with this one (`requires`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    /// Every field as written: see [`SkillProperties::raw`].
    #[serde(rename = "raw", serialize_with = "serialize_raw")]
    raw: RawFields,
}

/// The verbatim fields of a frontmatter, built when first asked for: from the fields at hand
/// ([`interpret`]), or from the frontmatter's YAML text, which a catalog of thousands of skills
/// keeps instead of a JSON copy of every field that is rarely read.
#[derive(Clone, Default)]
struct RawFields {
    yaml: Option<Arc<str>>,
    fields: OnceLock<IndexMap<String, serde_json::Value>>,
}

impl RawFields {
    fn get(&self) -> &IndexMap<String, serde_json::Value> {
        self.fields.get_or_init(|| {
            let parsed = self
                .yaml
                .as_deref()
                .and_then(|yaml| crate::yaml::parse_document(yaml, 0).ok());
            match parsed.map(|document| document.value) {
                Some(YamlValue::Mapping(fields)) => raw_fields(&fields),
                _ => IndexMap::new(),
            }
        })
    }
}

impl PartialEq for RawFields {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl std::fmt::Debug for RawFields {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(formatter)
    }
}

fn serialize_raw<S: serde::Serializer>(raw: &RawFields, serializer: S) -> Result<S::Ok, S::Error> {
    raw.get().serialize(serializer)
}

impl SkillProperties {
    /// Every field as written, in file order, as JSON, so front doors such as MCP can pass the
    /// frontmatter through. Nothing is re-typed: a number JSON would spell differently is its
    /// source text, and `metadata` is shown as [`Self::metadata`] reads it.
    #[must_use]
    pub fn raw(&self) -> &IndexMap<String, serde_json::Value> {
        self.raw.get()
    }
}

/// The verbatim JSON of every field.
fn raw_fields(fields: &IndexMap<String, YamlNode>) -> IndexMap<String, serde_json::Value> {
    fields
        .iter()
        .map(|(key, node)| {
            let value = match (key.as_str(), &node.value) {
                ("metadata", YamlValue::Mapping(entries)) => {
                    serde_json::Value::Object(metadata_values(entries).into_iter().collect())
                }
                _ => node.to_json(),
            };
            (key.clone(), value)
        })
        .collect()
}

/// `metadata` values as read: scalars as their source text, nested values as JSON.
fn metadata_values(entries: &IndexMap<String, YamlNode>) -> IndexMap<String, serde_json::Value> {
    entries
        .iter()
        .map(|(key, value)| {
            let value = match value.scalar_text() {
                Some(text) => serde_json::Value::String(text),
                None => value.to_json(),
            };
            (key.clone(), value)
        })
        .collect()
}

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
fn find_field<'a>(fields: &'a IndexMap<String, YamlNode>, name: &str) -> Option<&'a YamlNode> {
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

/// The agentskills name rules, as skills-ref applies them: NFKC-normalised, at most 64
/// characters, lowercase, letters/digits/hyphens, no hyphen at either end or doubled, and equal
/// to the folder name. Returns diagnostics without position.
#[must_use]
pub fn name_problems(name: &str, directory_name: Option<&str>) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    let normalized = nfkc(name.trim());
    let count = normalized.chars().count();
    if count > MAX_NAME_CHARS {
        problems.push(
            Diagnostic::error(
                DiagnosticCode::NameTooLong,
                format!(
                    "skill name `{normalized}` is {count} characters; the limit is {MAX_NAME_CHARS}"
                ),
            )
            .with_hint("shorten the name (and rename the folder to match)"),
        );
    }
    if normalized != normalized.to_lowercase() {
        problems.push(
            Diagnostic::error(
                DiagnosticCode::NameNotLowercase,
                format!("skill name `{normalized}` must be lowercase"),
            )
            .with_hint(format!("use `{}`", normalized.to_lowercase())),
        );
    }
    if normalized.starts_with('-') || normalized.ends_with('-') {
        problems.push(
            Diagnostic::error(
                DiagnosticCode::NameHyphenEdge,
                format!("skill name `{normalized}` must not start or end with a hyphen"),
            )
            .with_hint(format!("use `{}`", normalized.trim_matches('-'))),
        );
    }
    if normalized.contains("--") {
        problems.push(
            Diagnostic::error(
                DiagnosticCode::NameConsecutiveHyphens,
                format!("skill name `{normalized}` must not contain `--`"),
            )
            .with_hint("use single hyphens between words"),
        );
    }
    let allowed = |c: char| c.is_alphanumeric() || c == '-';
    if !normalized.chars().all(allowed) {
        // Characters no one can see are named by code point; the name is quoted escaped.
        let hint = if crate::names::is_safe_skill_name(&normalized) {
            "replace spaces, underscores and dots with hyphens"
        } else {
            "remove the characters named: such a skill is never offered to a model or run"
        };
        problems.push(
            Diagnostic::error(
                DiagnosticCode::NameInvalidCharacters,
                format!(
                    "skill name `{}` contains {}; only letters, digits and hyphens are allowed",
                    printable(&normalized),
                    describe_characters(&normalized, |c| !allowed(c))
                ),
            )
            .with_hint(hint),
        );
    }
    if let Some(directory) = directory_name {
        let directory_normalized = nfkc(directory);
        if directory_normalized != normalized {
            problems.push(
                Diagnostic::error(
                    DiagnosticCode::NameDirectoryMismatch,
                    format!(
                        "skill name `{normalized}` does not match its folder name `{directory}`"
                    ),
                )
                .with_hint("rename the folder or change `name` so they are the same"),
            );
        }
    }
    problems
}

/// NFKC normalisation, skipped for ASCII text (which it leaves unchanged).
#[must_use]
pub fn nfkc(text: &str) -> String {
    if text.is_ascii() {
        text.to_owned()
    } else {
        text.nfkc().collect()
    }
}

struct FieldReader {
    diagnostics: Vec<Diagnostic>,
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
    fn text(&mut self, fields: &IndexMap<String, YamlNode>, field: &str) -> Option<String> {
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

    fn flag(&mut self, fields: &IndexMap<String, YamlNode>, field: &str, default: bool) -> bool {
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
    fn words(&mut self, fields: &IndexMap<String, YamlNode>, field: &str) -> Vec<String> {
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

    fn metadata(
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

    fn files(&mut self, fields: &IndexMap<String, YamlNode>) -> Vec<FileReference> {
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

    fn declared_secrets(&mut self, fields: &IndexMap<String, YamlNode>) -> Vec<String> {
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

/// Whether `name` is a portable environment variable name.
#[must_use]
pub fn is_environment_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;
    use crate::frontmatter::parse_head;

    fn run(
        source: &str,
        directory: &str,
        mode: ValidationMode,
    ) -> (SkillProperties, Vec<Diagnostic>) {
        let parsed = parse_head(source.as_bytes(), false, 100_000).unwrap();
        interpret(
            &parsed.fields,
            PropertiesContext {
                directory_name: Some(directory),
                has_skill_manifest: false,
                mode,
            },
        )
    }

    fn codes(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
        diagnostics.iter().map(|d| d.code.as_str()).collect()
    }

    #[test]
    fn raw_fields_rebuilt_from_the_yaml_equal_those_built_from_the_fields() {
        let source = "---\nname: pdf\ndescription: Fill forms.\nversion: 1.10\nmetadata:\n  build: 007\n  nested: [1.50, x]\nhooks: {a: [1, 2]}\nflag: true\n# a comment\nempty:\n---\nbody\n";
        let parsed = parse_head(source.as_bytes(), false, 100_000).unwrap();
        let context = PropertiesContext {
            directory_name: Some("pdf"),
            has_skill_manifest: false,
            mode: ValidationMode::Lenient,
        };
        let (eager, _) = interpret(&parsed.fields, context);
        let (lazy, _) = interpret_parsed(&parsed.fields, Arc::clone(&parsed.yaml), context);
        assert_eq!(lazy.raw(), eager.raw());
        assert_eq!(
            serde_json::Value::Object(eager.raw().clone().into_iter().collect()),
            serde_json::json!({
                "name": "pdf",
                "description": "Fill forms.",
                "version": "1.10",
                "metadata": {"build": "007", "nested": ["1.50", "x"]},
                "hooks": {"a": [1, 2]},
                "flag": true,
                "empty": null,
            })
        );
    }

    #[test]
    fn valid_skill_has_no_diagnostics() {
        let (properties, diagnostics) = run(
            "---\nname: pdf-tools\ndescription: Fill PDFs.\nmetadata:\n  version: 1.0\n  author: me\n---\n",
            "pdf-tools",
            ValidationMode::Strict,
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(properties.metadata["version"], serde_json::json!("1.0"));
    }

    #[test]
    fn name_rules() {
        let cases = [
            (
                "Bad-Name",
                vec!["name-not-lowercase", "name-directory-mismatch"],
            ),
            ("-bad", vec!["name-hyphen-edge", "name-directory-mismatch"]),
            (
                "a--b",
                vec!["name-consecutive-hyphens", "name-directory-mismatch"],
            ),
            (
                "a_b",
                vec!["name-invalid-characters", "name-directory-mismatch"],
            ),
            ("other", vec!["name-directory-mismatch"]),
        ];
        for (name, expected) in cases {
            let problems = name_problems(name, Some("dir"));
            assert_eq!(codes(&problems), expected, "{name}");
        }
        let long = "a".repeat(65);
        assert_eq!(
            codes(&name_problems(&long, Some(&long))),
            vec!["name-too-long"]
        );
        assert!(name_problems("技能", Some("技能")).is_empty());
        assert!(name_problems("навык", Some("навык")).is_empty());
        assert_eq!(
            codes(&name_problems("НАВЫК", Some("НАВЫК"))),
            vec!["name-not-lowercase"]
        );
        // NFKC: a decomposed `é` in the folder name matches a composed one in the field.
        assert!(name_problems("caf\u{e9}", Some("cafe\u{301}")).is_empty());
    }

    #[test]
    fn lengths_are_counted_in_characters() {
        let description = "é".repeat(1024);
        let source = format!("---\nname: x\ndescription: {description}\n---\n");
        let (_, diagnostics) = run(&source, "x", ValidationMode::Strict);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let source = format!("---\nname: x\ndescription: {description}é\n---\n");
        let (_, diagnostics) = run(&source, "x", ValidationMode::Strict);
        assert_eq!(codes(&diagnostics), vec!["description-too-long"]);
    }

    #[test]
    fn extension_fields_warn_only_when_unknown_and_fail_strict() {
        let source = "---\nname: x\ndescription: d\ndisable-model-invocation: true\nfavourite-colour: blue\n---\n";
        let (properties, diagnostics) = run(source, "x", ValidationMode::Lenient);
        assert!(properties.disable_model_invocation);
        assert_eq!(codes(&diagnostics), vec!["field-unknown"]);
        assert_eq!(diagnostics[0].severity, Severity::Warning);
        assert_eq!(
            (diagnostics[0].line, diagnostics[0].column),
            (Some(5), Some(1))
        );
        let (_, diagnostics) = run(source, "x", ValidationMode::Strict);
        assert_eq!(codes(&diagnostics), vec!["field-unknown"]);
        assert_eq!(diagnostics[0].severity, Severity::Error);
    }

    #[test]
    fn allowed_tools_string_or_list() {
        let (properties, _) = run(
            "---\nname: x\ndescription: d\nallowed-tools: Bash(git add:*) Read, Grep\n---\n",
            "x",
            ValidationMode::Lenient,
        );
        assert_eq!(
            properties.allowed_tools,
            vec!["Bash(git add:*)", "Read", "Grep"]
        );
        let (properties, _) = run(
            "---\nname: x\ndescription: d\nallowed-tools: [Read, Grep]\n---\n",
            "x",
            ValidationMode::Lenient,
        );
        assert_eq!(properties.allowed_tools, vec!["Read", "Grep"]);
    }

    #[test]
    fn files_and_secrets() {
        let (properties, diagnostics) = run(
            "---\nname: x\ndescription: d\nfiles:\n  - path: a.md\n    description: A\n  - path: b.md\nrequired_environment_variables:\n  - API_TOKEN\n  - name: OTHER_KEY\n    prompt: key?\n---\n",
            "x",
            ValidationMode::Lenient,
        );
        assert_eq!(properties.files.len(), 2);
        assert_eq!(codes(&diagnostics), vec!["files-entry-invalid"]);
        assert_eq!(properties.declared_secrets, vec!["API_TOKEN", "OTHER_KEY"]);
    }

    #[test]
    fn missing_fields() {
        let (_, diagnostics) = run("---\nlicense: MIT\n---\n", "x", ValidationMode::Lenient);
        assert_eq!(codes(&diagnostics), vec!["field-missing", "field-missing"]);
        let (_, diagnostics) = run(
            "---\nname: ''\ndescription: d\n---\n",
            "x",
            ValidationMode::Lenient,
        );
        assert_eq!(codes(&diagnostics), vec!["field-empty"]);
    }

    #[test]
    fn wrong_types_are_named() {
        let (_, diagnostics) = run(
            "---\nname: x\ndescription: [a, b]\nuser-invocable: maybe\n---\n",
            "x",
            ValidationMode::Lenient,
        );
        assert_eq!(codes(&diagnostics), vec!["field-type", "field-type"]);
        assert_eq!(diagnostics[0].field.as_deref(), Some("description"));
        assert_eq!(diagnostics[1].field.as_deref(), Some("user-invocable"));
    }
}
