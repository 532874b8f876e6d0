//! The rows the catalog pages share: a skill as the list and its own page show it, and a
//! diagnostic with its location.

use skillbox_core::{Diagnostic, Skill};

use crate::pages::encode_component;

/// One row of the list.
pub(super) struct SkillRow {
    pub(super) name: String,
    pub(super) version: Option<String>,
    pub(super) title: Option<String>,
    pub(super) description: String,
    pub(super) kind: String,
    pub(super) namespace: String,
    pub(super) format: &'static str,
    pub(super) model_invocable: bool,
    pub(super) user_invocable: bool,
    pub(super) tools: usize,
    pub(super) errors: usize,
    pub(super) warnings: usize,
    pub(super) versions: usize,
}

impl SkillRow {
    pub(super) fn of(skill: &Skill, versions: usize) -> Self {
        let errors = skill
            .diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.is_error())
            .count();
        SkillRow {
            name: skill.name().to_owned(),
            version: skill.version_label(),
            title: skill.title.clone(),
            description: skill.description.clone(),
            kind: skill.kind().to_string(),
            namespace: skill.namespace().to_owned(),
            format: format_label(skill),
            model_invocable: skill.model_invocable(),
            user_invocable: skill.user_invocable(),
            tools: skill.tools.len(),
            errors,
            warnings: skill.diagnostics.len() - errors,
            versions,
        }
    }

    pub(super) fn link(&self) -> String {
        format!("/skills/{}", encode_component(&self.name))
    }
}

fn format_label(skill: &Skill) -> &'static str {
    match skill.format {
        skillbox_core::SkillFormat::AgentSkill => "SKILL.md",
        skillbox_core::SkillFormat::SkillsProtocol => "skill.toml",
    }
}

/// A diagnostic as the pages show it.
pub(super) struct DiagnosticRow {
    pub(super) severity: String,
    pub(super) code: String,
    pub(super) location: String,
    pub(super) message: String,
    pub(super) hint: Option<String>,
}

impl DiagnosticRow {
    pub(super) fn of(diagnostic: &Diagnostic, base: Option<&std::path::Path>) -> Self {
        let file = diagnostic.file.as_ref().map(|file| {
            base.and_then(|base| file.strip_prefix(base).ok())
                .unwrap_or(file)
                .display()
                .to_string()
        });
        let location = match (file, diagnostic.line, diagnostic.column) {
            (Some(file), Some(line), Some(column)) => format!("{file}:{line}:{column}"),
            (Some(file), Some(line), None) => format!("{file}:{line}"),
            (Some(file), None, _) => file,
            (None, _, _) => String::new(),
        };
        DiagnosticRow {
            severity: diagnostic.severity.to_string(),
            code: diagnostic.code.as_str().to_owned(),
            location,
            message: diagnostic.message.clone(),
            hint: diagnostic.hint.clone(),
        }
    }
}
