//! [`SkillProperties`], the interpreted frontmatter of one `SKILL.md`, and its verbatim
//! fields: every field as written, as JSON, built only when first asked for.

use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use serde::Serialize;

use crate::yaml::{YamlNode, YamlValue};

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
    pub(super) raw: RawFields,
}

/// The verbatim fields of a frontmatter, built when first asked for: from the fields at hand
/// ([`super::interpret`]), or from the frontmatter's YAML text, which a catalog of thousands of skills
/// keeps instead of a JSON copy of every field that is rarely read.
#[derive(Clone, Default)]
pub(super) struct RawFields {
    pub(super) yaml: Option<Arc<str>>,
    pub(super) fields: OnceLock<IndexMap<String, serde_json::Value>>,
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
pub(super) fn raw_fields(
    fields: &IndexMap<String, YamlNode>,
) -> IndexMap<String, serde_json::Value> {
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
pub(super) fn metadata_values(
    entries: &IndexMap<String, YamlNode>,
) -> IndexMap<String, serde_json::Value> {
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
