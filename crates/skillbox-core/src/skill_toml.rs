//! `skill.toml`, the Skills Protocol manifest: a dotted id, a semver version, the kind (action or
//! instruction), how to run it, and what it may use. When present it gives the skill's identity;
//! the `SKILL.md` `name` is then only a display title.

use std::fmt;

use serde::Serialize;

use crate::diagnostic::{Diagnostic, DiagnosticCode, TextPosition};
use crate::properties::is_environment_name;

/// File name of the Skills Protocol manifest.
pub const SKILL_MANIFEST_FILE: &str = "skill.toml";

/// Whether a skill can run or only informs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SkillKind {
    /// Has a runtime entrypoint and can be executed.
    Action,
    /// Context only; cannot be executed.
    Instruction,
}

impl fmt::Display for SkillKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SkillKind::Action => "action",
            SkillKind::Instruction => "instruction",
        })
    }
}

/// `[runtime]`: how an action skill runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuntimeSpec {
    /// Language of the entrypoint (`python` is the one the protocol's MVP defines).
    pub language: String,
    /// Entrypoint path relative to the skill folder.
    pub entrypoint: String,
    /// Function in the entrypoint called with `args`.
    pub export: String,
}

/// `[permissions]`: what the skill may use at run time.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Permissions {
    /// Environment variable names the runtime injects when the operator provides them.
    pub secrets: Vec<String>,
    /// `network`, as given (a boolean or a list of allowed domains); `None` means no network.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<serde_json::Value>,
}

/// A parsed `skill.toml`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillManifest {
    /// Dotted id, e.g. `salesforce.leads.sync`.
    pub name: String,
    /// Semantic version.
    pub version: semver::Version,
    /// One-line description.
    pub description: String,
    /// Action or instruction.
    pub kind: SkillKind,
    /// How it runs (action skills).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimeSpec>,
    /// What it may use.
    pub permissions: Permissions,
    /// The whole manifest as JSON, for `describe_skill`.
    pub raw: serde_json::Value,
}

impl SkillManifest {
    /// The first dotted segment (`salesforce` for `salesforce.leads.sync`).
    #[must_use]
    pub fn namespace(&self) -> &str {
        self.name.split('.').next().unwrap_or(&self.name)
    }
}

/// Whether `name` is a valid Skills Protocol id: lowercase ASCII letters and digits in
/// non-empty dot-separated segments.
#[must_use]
pub fn is_valid_dotted_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|segment| {
            !segment.is_empty()
                && segment
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// Parse a `skill.toml` text. Returns the manifest when its identity (name, version) is usable,
/// plus every problem found. Diagnostics carry no file; the caller adds it.
#[must_use]
pub fn parse_skill_manifest(text: &str) -> (Option<SkillManifest>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let table: toml::Table = match toml::from_str(text) {
        Ok(table) => table,
        Err(error) => {
            let position = error.span().map(|span| position_of(text, span.start));
            diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::ManifestInvalid,
                    format!("`skill.toml` is not valid TOML: {}", error.message()),
                )
                .at(position)
                .with_hint("fix the TOML syntax; strings need double quotes"),
            );
            return (None, diagnostics);
        }
    };
    let mut reader = ManifestReader {
        text,
        table: &table,
        diagnostics: &mut diagnostics,
    };
    let name = reader.required_string("name", "a dotted id such as `acme.reports.build`");
    let version_text = reader.required_string("version", "a semantic version such as `1.0.0`");
    let description = reader.required_string("description", "one line saying what the skill does");
    let kind_text = reader.required_string("kind", "`action` or `instruction`");

    let name = name.filter(|name| {
        let valid = is_valid_dotted_name(name);
        if !valid {
            reader.field_error(
                "name",
                format!(
                    "`name` `{name}` must be lowercase letters and digits in dot-separated segments"
                ),
                "use an id like `acme.reports.build`",
            );
        }
        valid
    });
    let version = version_text.and_then(|text| match semver::Version::parse(&text) {
        Ok(version) => Some(version),
        Err(error) => {
            reader.field_error(
                "version",
                format!("`version` `{text}` is not a semantic version: {error}"),
                "write MAJOR.MINOR.PATCH, e.g. `1.2.0`",
            );
            None
        }
    });
    let kind = kind_text.and_then(|text| match text.as_str() {
        "action" => Some(SkillKind::Action),
        "instruction" => Some(SkillKind::Instruction),
        other => {
            reader.field_error(
                "kind",
                format!("`kind` must be `action` or `instruction`, not `{other}`"),
                "set `kind = \"action\"` for runnable skills, `\"instruction\"` otherwise",
            );
            None
        }
    });
    let runtime = reader.runtime(kind);
    let permissions = reader.permissions();
    for key in table.keys() {
        if !matches!(
            key.as_str(),
            "name"
                | "version"
                | "description"
                | "kind"
                | "runtime"
                | "permissions"
                | "metadata"
                | "inputs"
                | "input_schema"
        ) {
            let position = key_position(text, key);
            diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::ManifestField,
                    format!("unknown `skill.toml` key `{key}` (kept)"),
                )
                .at(position)
                .for_field(key.clone())
                .with_hint("check the spelling against the Skills Protocol manifest fields"),
            );
        }
    }
    let raw = serde_json::to_value(&table).unwrap_or(serde_json::Value::Null);
    let manifest = match (name, version, kind) {
        (Some(name), Some(version), Some(kind)) => Some(SkillManifest {
            name,
            version,
            description: description.unwrap_or_default(),
            kind,
            runtime,
            permissions,
            raw,
        }),
        _ => None,
    };
    (manifest, diagnostics)
}

struct ManifestReader<'a> {
    text: &'a str,
    table: &'a toml::Table,
    diagnostics: &'a mut Vec<Diagnostic>,
}

impl ManifestReader<'_> {
    fn field_error(&mut self, field: &str, message: String, hint: &str) {
        let last = field.rsplit('.').next().unwrap_or(field);
        self.diagnostics.push(
            Diagnostic::error(DiagnosticCode::ManifestField, message)
                .at(key_position(self.text, last))
                .for_field(field)
                .with_hint(hint),
        );
    }

    fn required_string(&mut self, field: &str, what: &str) -> Option<String> {
        match self.table.get(field) {
            Some(toml::Value::String(value)) if !value.trim().is_empty() => {
                Some(value.trim().to_owned())
            }
            Some(_) => {
                self.field_error(
                    field,
                    format!("`{field}` must be a non-empty string"),
                    &format!("set `{field}` to {what}"),
                );
                None
            }
            None => {
                self.diagnostics.push(
                    Diagnostic::error(
                        DiagnosticCode::ManifestField,
                        format!("`skill.toml` is missing required key `{field}`"),
                    )
                    .for_field(field)
                    .with_hint(format!("add `{field} = …`: {what}")),
                );
                None
            }
        }
    }

    fn runtime(&mut self, kind: Option<SkillKind>) -> Option<RuntimeSpec> {
        let section = match self.table.get("runtime") {
            None => {
                if kind == Some(SkillKind::Action) {
                    self.diagnostics.push(
                        Diagnostic::error(
                            DiagnosticCode::ManifestField,
                            "action skill has no `[runtime]` section",
                        )
                        .for_field("runtime")
                        .with_hint("add `[runtime]` with `language = \"python\"`, `entrypoint = \"code/main.py\"`, `export = \"main\"`"),
                    );
                }
                return None;
            }
            Some(toml::Value::Table(section)) => section,
            Some(_) => {
                self.field_error(
                    "runtime",
                    "`runtime` must be a table".to_owned(),
                    "write it as a `[runtime]` section",
                );
                return None;
            }
        };
        let mut text_of = |key: &str, what: &str| match section.get(key) {
            Some(toml::Value::String(value)) if !value.trim().is_empty() => {
                Some(value.trim().to_owned())
            }
            _ => {
                self.field_error(
                    &format!("runtime.{key}"),
                    format!("`[runtime]` needs a string `{key}`"),
                    what,
                );
                None
            }
        };
        let language = text_of("language", "set `language = \"python\"`");
        let entrypoint = text_of(
            "entrypoint",
            "set `entrypoint` to a path inside the skill, e.g. `code/main.py`",
        );
        let export = text_of(
            "export",
            "set `export` to the function called with `args`, e.g. `main`",
        );
        if let Some(language) = &language
            && language != "python"
        {
            self.diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::ManifestField,
                    format!(
                        "runtime language `{language}` is not one skillbox runs (it runs `python`)"
                    ),
                )
                .at(key_position(self.text, "language"))
                .for_field("runtime.language")
                .with_hint("use `language = \"python\"`"),
            );
        }
        if let Some(entrypoint) = &entrypoint
            && !is_contained_relative_path(entrypoint)
        {
            self.field_error(
                "runtime.entrypoint",
                format!(
                    "`entrypoint` `{entrypoint}` must be a relative path inside the skill folder"
                ),
                "remove leading `/` and any `..`",
            );
            return None;
        }
        if kind == Some(SkillKind::Instruction) {
            self.diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::ManifestField,
                    "instruction skill has a `[runtime]` section, which is ignored",
                )
                .for_field("runtime")
                .with_hint("set `kind = \"action\"` if the skill is meant to run"),
            );
        }
        Some(RuntimeSpec {
            language: language?,
            entrypoint: entrypoint?,
            export: export?,
        })
    }

    fn permissions(&mut self) -> Permissions {
        let Some(section) = self.table.get("permissions") else {
            return Permissions::default();
        };
        let toml::Value::Table(section) = section else {
            self.field_error(
                "permissions",
                "`permissions` must be a table".to_owned(),
                "write it as a `[permissions]` section",
            );
            return Permissions::default();
        };
        let mut secrets = Vec::new();
        match section.get("secrets") {
            None => {}
            Some(toml::Value::Array(items)) => {
                for item in items {
                    match item.as_str() {
                        Some(name) if is_environment_name(name) => secrets.push(name.to_owned()),
                        _ => self.field_error(
                            "permissions.secrets",
                            format!("`permissions.secrets` entry `{item}` is not an environment variable name"),
                            "list names like `API_TOKEN`",
                        ),
                    }
                }
            }
            Some(_) => self.field_error(
                "permissions.secrets",
                "`permissions.secrets` must be a list of environment variable names".to_owned(),
                "write `secrets = [\"API_TOKEN\"]`",
            ),
        }
        let network = section
            .get("network")
            .and_then(|value| serde_json::to_value(value).ok());
        Permissions { secrets, network }
    }
}

/// Whether `path` is relative, non-empty and never climbs out with `..`.
#[must_use]
pub fn is_contained_relative_path(path: &str) -> bool {
    let path = std::path::Path::new(path);
    !path.as_os_str().is_empty()
        && path.components().all(|component| {
            matches!(
                component,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
}

/// 1-based line and column of a byte offset.
#[must_use]
pub fn position_of(text: &str, offset: usize) -> TextPosition {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() as u64 + 1;
    let line_start = before.rfind('\n').map_or(0, |index| index + 1);
    TextPosition {
        line,
        column: before[line_start..].chars().count() as u64 + 1,
    }
}

/// Where `key = …` first appears at the start of a line.
fn key_position(text: &str, key: &str) -> Option<TextPosition> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(key)
            && rest.trim_start().starts_with('=')
        {
            let indent = line.len() - trimmed.len();
            return Some(position_of(text, offset + indent));
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = r#"
name = "salesforce.leads.sync"
version = "0.1.0"
description = "Sync leads."
kind = "action"

[runtime]
language = "python"
entrypoint = "code/main.py"
export = "main"

[permissions]
secrets = ["SALESFORCE_API_KEY"]
network = ["api.salesforce.com"]
"#;

    #[test]
    fn parses_valid_manifest() {
        let (manifest, diagnostics) = parse_skill_manifest(VALID);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let manifest = manifest.unwrap();
        assert_eq!(manifest.namespace(), "salesforce");
        assert_eq!(manifest.version, semver::Version::new(0, 1, 0));
        assert_eq!(manifest.permissions.secrets, vec!["SALESFORCE_API_KEY"]);
        assert_eq!(manifest.runtime.unwrap().export, "main");
    }

    #[test]
    fn reports_each_bad_field_with_position() {
        let (manifest, diagnostics) = parse_skill_manifest(
            "name = \"Bad.Name\"\nversion = \"1.0\"\ndescription = \"x\"\nkind = \"tool\"\n",
        );
        assert!(manifest.is_none());
        let fields: Vec<_> = diagnostics
            .iter()
            .map(|d| d.field.as_deref().unwrap_or(""))
            .collect();
        assert_eq!(fields, vec!["name", "version", "kind"]);
        assert_eq!(diagnostics[1].line, Some(2));
    }

    #[test]
    fn action_without_runtime_is_an_error_and_escapes_are_refused() {
        let (_, diagnostics) = parse_skill_manifest(
            "name = \"a.b\"\nversion = \"1.0.0\"\ndescription = \"x\"\nkind = \"action\"\n",
        );
        assert_eq!(diagnostics[0].field.as_deref(), Some("runtime"));
        let (manifest, diagnostics) = parse_skill_manifest(
            "name = \"a.b\"\nversion = \"1.0.0\"\ndescription = \"x\"\nkind = \"action\"\n[runtime]\nlanguage = \"python\"\nentrypoint = \"../x.py\"\nexport = \"main\"\n",
        );
        assert!(manifest.unwrap().runtime.is_none());
        assert_eq!(diagnostics[0].field.as_deref(), Some("runtime.entrypoint"));
    }

    #[test]
    fn syntax_error_has_position() {
        let (_, diagnostics) = parse_skill_manifest("name = \"a.b\"\nversion = 1.0.0\n");
        assert_eq!(diagnostics[0].code, DiagnosticCode::ManifestInvalid);
        assert_eq!(diagnostics[0].line, Some(2));
    }

    #[test]
    fn dotted_names() {
        assert!(is_valid_dotted_name("skills.protocol.guide"));
        assert!(is_valid_dotted_name("tool2"));
        assert!(!is_valid_dotted_name("a..b"));
        assert!(!is_valid_dotted_name(".a"));
        assert!(!is_valid_dotted_name("a-b.c"));
    }
}
