//! Diagnostics: what loading or validating a skill found wrong, where, and what to do about it.
//!
//! Every problem the catalog reports is a [`Diagnostic`] with a severity, a stable machine-readable
//! [`DiagnosticCode`], the file (and line and column when the problem comes from the file's text),
//! a message that names the field, and a hint. Loading never stops at the first problem: callers
//! collect diagnostics and keep going.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; never makes a skill invalid.
    Info,
    /// The skill loads and works, but something is off (unknown field, shadowed skill).
    Warning,
    /// The skill breaks a rule of its format; `validate` fails.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

macro_rules! diagnostic_codes {
    ($($(#[$doc:meta])* $variant:ident => $code:literal,)*) => {
        /// A stable identifier for each kind of problem, safe to match on in scripts and CI.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum DiagnosticCode {
            $($(#[$doc])* $variant,)*
        }

        impl DiagnosticCode {
            /// The code as printed and serialized, e.g. `name-too-long`.
            #[must_use]
            pub fn as_str(self) -> &'static str {
                match self {
                    $(DiagnosticCode::$variant => $code,)*
                }
            }

            /// Every code, in declaration order (used by docs and tests).
            pub const ALL: &'static [DiagnosticCode] = &[$(DiagnosticCode::$variant,)*];
        }
    };
}

diagnostic_codes! {
    /// A path given to the catalog does not exist or cannot be read.
    PathUnreadable => "path-unreadable",
    /// A folder was expected to hold a `SKILL.md` and does not.
    SkillMdMissing => "skill-md-missing",
    /// A file is not valid UTF-8.
    EncodingInvalid => "encoding-invalid",
    /// `SKILL.md` does not start with a `---` line.
    FrontmatterMissing => "frontmatter-missing",
    /// The opening `---` has no closing `---` line.
    FrontmatterUnclosed => "frontmatter-unclosed",
    /// The frontmatter is larger than the catalog reads.
    FrontmatterTooLarge => "frontmatter-too-large",
    /// The frontmatter is not valid YAML.
    YamlInvalid => "yaml-invalid",
    /// The frontmatter is valid YAML but not a mapping of fields.
    FrontmatterNotMapping => "frontmatter-not-mapping",
    /// A required field is absent.
    FieldMissing => "field-missing",
    /// A field has the wrong type (a list where a string belongs, for example).
    FieldType => "field-type",
    /// A field that must not be empty is empty.
    FieldEmpty => "field-empty",
    /// A field outside the set the format knows (warning) or allows in strict mode (error).
    FieldUnknown => "field-unknown",
    /// A skill name longer than 64 characters.
    NameTooLong => "name-too-long",
    /// A skill name with upper-case letters.
    NameNotLowercase => "name-not-lowercase",
    /// A skill name starting or ending with a hyphen.
    NameHyphenEdge => "name-hyphen-edge",
    /// A skill name with `--`.
    NameConsecutiveHyphens => "name-consecutive-hyphens",
    /// A skill name with characters other than letters, digits and hyphens.
    NameInvalidCharacters => "name-invalid-characters",
    /// The skill name differs from its folder's name.
    NameDirectoryMismatch => "name-directory-mismatch",
    /// The skill name looks like another skill's (the same Unicode TR39 confusable skeleton).
    NameConfusable => "name-confusable",
    /// A description longer than 1024 characters.
    DescriptionTooLong => "description-too-long",
    /// A compatibility note longer than 500 characters.
    CompatibilityTooLong => "compatibility-too-long",
    /// A `files:` entry that is malformed, escapes the skill, or does not exist.
    FilesEntryInvalid => "files-entry-invalid",
    /// `tools.json` cannot be used as a whole (not JSON, not an array, too large).
    ToolsManifestInvalid => "tools-manifest-invalid",
    /// One tool in `tools.json` is malformed and was skipped or partly ignored.
    ToolInvalid => "tool-invalid",
    /// Two tools in one `tools.json` share a name.
    ToolNameDuplicate => "tool-name-duplicate",
    /// A tool takes the name of a built-in or Skills Protocol tool and is never offered.
    ToolNameReserved => "tool-name-reserved",
    /// Another skill's tool owns the name (see `tool_names`), so this tool is not offered.
    ToolNameTaken => "tool-name-taken",
    /// A tool's handler script is missing or escapes the skill folder.
    ToolScriptInvalid => "tool-script-invalid",
    /// `skill.toml` cannot be read as a Skills Protocol manifest.
    ManifestInvalid => "manifest-invalid",
    /// A `skill.toml` field breaks the Skills Protocol rules.
    ManifestField => "manifest-field",
    /// The skill uses a name reserved for the runtime's built-in skills and is not loaded.
    NameReserved => "name-reserved",
    /// Another copy of the skill's name is in effect over this one, or this one over another
    /// (a later root wins for a name; build metadata does not make a version).
    SkillShadowed => "skill-shadowed",
    /// Discovery stopped descending because of a depth or directory limit.
    DiscoveryLimit => "discovery-limit",
    /// Discovery met a symlink loop or an unreadable entry and skipped it.
    DiscoverySkipped => "discovery-skipped",
    /// A `.zip` / `.skill` archive is malformed, unsafe or too large.
    ArchiveInvalid => "archive-invalid",
    /// A file is larger than the catalog reads; what was read is used.
    FileTooLarge => "file-too-large",
    /// A reload found the skill broken (being edited, say), so its last good copy is kept.
    SkillKeptLastGood => "skill-kept-last-good",
    /// An MCP server the skill declares (`mcp-servers`, `.mcp.json`) is malformed or unsafe.
    ServerDeclarationInvalid => "server-declaration-invalid",
    /// A declared server is a package from npm or PyPI (`npx`, `uvx`): what `add` installs
    /// ahead, and whether its version is pinned.
    ServerPackage => "server-package",
    /// `requires` names a skill that is not there, the skill itself, or closes a cycle.
    RequiresInvalid => "requires-invalid",
}

impl fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for DiagnosticCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// One problem found while loading or validating skills.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// How serious it is.
    pub severity: Severity,
    /// Stable identifier of the kind of problem.
    pub code: DiagnosticCode,
    /// What is wrong, naming the field or file.
    pub message: String,
    /// The file the problem is in, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// 1-based line in `file`, when the problem comes from its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// 1-based column in `file`, when the problem comes from its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    /// The frontmatter or manifest field concerned, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Diagnostic {
    /// A new diagnostic with no location, field or hint yet.
    pub fn new(severity: Severity, code: DiagnosticCode, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            code,
            message: message.into(),
            file: None,
            line: None,
            column: None,
            field: None,
            hint: None,
        }
    }

    /// Shorthand for an error-level diagnostic.
    pub fn error(code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, message)
    }

    /// Shorthand for an info-level diagnostic.
    pub fn info(code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self::new(Severity::Info, code, message)
    }

    /// Shorthand for a warning-level diagnostic.
    pub fn warning(code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, message)
    }

    /// Attach the file the problem is in.
    #[must_use]
    pub fn in_file(mut self, file: impl AsRef<Path>) -> Self {
        self.file = Some(file.as_ref().to_path_buf());
        self
    }

    /// Attach a 1-based line and column.
    #[must_use]
    pub fn at(mut self, position: Option<TextPosition>) -> Self {
        if let Some(position) = position {
            self.line = Some(position.line);
            self.column = Some(position.column);
        }
        self
    }

    /// Attach the field concerned.
    #[must_use]
    pub fn for_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Attach a hint saying what to do.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Change the severity (strict mode turns some warnings into errors).
    #[must_use]
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Whether this diagnostic makes a skill invalid.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    /// `error[name-too-long]: path/SKILL.md:2:7: message` followed by an indented hint line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Paths and messages quote what skills wrote: escaped, so they cannot drive a terminal.
        use crate::printable::{printable, printable_path};
        write!(f, "{}[{}]", self.severity, self.code)?;
        if let Some(file) = &self.file {
            write!(f, " {}", printable_path(file))?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
                if let Some(column) = self.column {
                    write!(f, ":{column}")?;
                }
            }
        }
        write!(f, ": {}", printable(&self.message))?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {}", printable(hint))?;
        }
        Ok(())
    }
}

/// A 1-based line and column in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TextPosition {
    /// 1-based line.
    pub line: u64,
    /// 1-based column, counted in characters.
    pub column: u64,
}

/// Whether any diagnostic in the list is an error.
#[must_use]
pub fn has_errors(diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().any(Diagnostic::is_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for code in DiagnosticCode::ALL {
            let text = code.as_str();
            assert!(seen.insert(text), "duplicate code {text}");
            assert!(
                text.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{text} is not kebab-case"
            );
        }
    }

    #[test]
    fn display_names_location_and_hint() {
        let diagnostic = Diagnostic::error(DiagnosticCode::NameTooLong, "field `name` is too long")
            .in_file("skills/x/SKILL.md")
            .at(Some(TextPosition { line: 2, column: 7 }))
            .with_hint("shorten it");
        assert_eq!(
            diagnostic.to_string(),
            "error[name-too-long] skills/x/SKILL.md:2:7: field `name` is too long\n  hint: shorten it"
        );
    }
}
