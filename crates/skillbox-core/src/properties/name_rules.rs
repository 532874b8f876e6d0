//! The name rules: what a skill name may be (as skills-ref applies the agentskills spec), the
//! NFKC normalisation names are compared under, and what makes a portable environment
//! variable name.

use unicode_normalization::UnicodeNormalization;

use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::names::describe_characters;
use crate::printable::printable;

/// Longest skill name the agentskills spec allows, in characters.
pub const MAX_NAME_CHARS: usize = 64;

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

/// Whether `name` is a portable environment variable name.
#[must_use]
pub fn is_environment_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
