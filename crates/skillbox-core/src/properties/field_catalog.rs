//! The field catalog: the six fields of the agentskills spec and the extension fields skillbox
//! knows from other clients and seeds, each with how its value is read. A field outside the
//! catalog is unknown: a warning in lenient mode, an error in strict mode.

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
pub(super) enum FieldKind {
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

pub(super) fn spec_field_kind(field: &str) -> Option<FieldKind> {
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
