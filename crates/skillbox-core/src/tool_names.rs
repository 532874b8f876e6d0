//! Tool-name ownership: which skill's `tools.json` tool answers when a model calls a name. A
//! model sees one flat list of tool names, so each name has exactly one owner, decided here once
//! for every caller (the LLM provider that offers and answers tools, and `skillbox validate`
//! that warns about clashes):
//!
//! 1. The built-in tools' names belong to the runtime: the tool registry (`skillbox-tools`)
//!    passes them in as `reserved`. A `tools.json` tool with one of them is never offered: the
//!    built-in would answer it anyway.
//! 2. Only the skills a model sees take part ([`Skill::visible_to_model`], copies in effect).
//! 3. Between skills, the one from the later root owns the name, as for skills themselves;
//!    within one root, the skill whose folder comes first in path order owns it, as for two
//!    copies of one skill name.
//!
//! Every tool that loses its name is reported as a [`ToolRefusal`] naming both parties.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use crate::catalog::SkillCatalog;
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::report::ValidationReport;
use crate::skill::Skill;
use crate::tools_json::{TOOLS_MANIFEST_FILE, ToolDefinition};

/// Why a skill's tool is not offered under its name.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum RefusalReason {
    /// The name is a built-in or protocol tool's.
    Reserved,
    /// Another skill owns the name.
    Taken {
        /// The skill whose tool answers to the name.
        owner: Arc<Skill>,
    },
}

/// A `tools.json` tool that is not offered because its name belongs to someone else.
#[derive(Debug, Clone)]
pub struct ToolRefusal {
    /// The skill that declares the tool.
    pub skill: Arc<Skill>,
    /// The tool as declared.
    pub tool: ToolDefinition,
    /// Who owns the name instead.
    pub reason: RefusalReason,
}

impl ToolRefusal {
    /// One sentence naming the tool, both parties and the rule that decided.
    #[must_use]
    pub fn message(&self) -> String {
        let (tool, skill) = (&self.tool.name, self.skill.name());
        match &self.reason {
            RefusalReason::Reserved => format!(
                "tool `{tool}` of skill `{skill}` is not offered: `{tool}` is the name of a built-in tool, and the built-in always answers to it"
            ),
            RefusalReason::Taken { owner } if owner.root_index != self.skill.root_index => {
                format!(
                    "tool `{tool}` of skill `{skill}` (root `{}`) is not offered: skill `{}` declares a tool of that name too, and its root `{}` comes later (a later root wins)",
                    self.skill.root.display(),
                    owner.name(),
                    owner.root.display()
                )
            }
            RefusalReason::Taken { owner } => format!(
                "tool `{tool}` of skill `{skill}` is not offered: skill `{}` in the same root declares a tool of that name too, and its folder `{}` comes before `{}` in path order",
                owner.name(),
                owner.directory.display(),
                self.skill.directory.display()
            ),
        }
    }

    /// The refusal as a warning on the skill's `tools.json`, at the tool's declaration.
    #[must_use]
    pub fn diagnostic(&self) -> Diagnostic {
        let (code, hint) = match self.reason {
            RefusalReason::Reserved => (
                DiagnosticCode::ToolNameReserved,
                "rename the tool; built-in and Skills Protocol tool names cannot be declared",
            ),
            RefusalReason::Taken { .. } => (
                DiagnosticCode::ToolNameTaken,
                "rename one of the tools; a tool name must be unique among the skills a model sees",
            ),
        };
        Diagnostic::warning(code, self.message())
            .in_file(self.skill.directory.join(TOOLS_MANIFEST_FILE))
            .at(self.tool.position)
            .with_hint(hint)
    }
}

/// Who owns each tool name, and which tools lost theirs.
#[derive(Debug, Clone, Default)]
pub struct ToolOwnership {
    owners: BTreeMap<String, (Arc<Skill>, ToolDefinition)>,
    refusals: Vec<ToolRefusal>,
}

impl ToolOwnership {
    /// Decide the owners among `skills` by the rules of this module, `reserved` being the
    /// built-in tools' names (the caller chooses which skills take part; see
    /// [`ToolOwnership::for_model`]).
    #[must_use]
    pub fn resolve<'a>(
        skills: impl IntoIterator<Item = &'a Arc<Skill>>,
        reserved: &[&str],
    ) -> Self {
        let mut skills: Vec<&Arc<Skill>> = skills
            .into_iter()
            .filter(|skill| !skill.tools.is_empty())
            .collect();
        skills.sort_by(|a, b| {
            (Reverse(a.root_index), &a.directory, a.name()).cmp(&(
                Reverse(b.root_index),
                &b.directory,
                b.name(),
            ))
        });
        let mut ownership = ToolOwnership::default();
        for skill in skills {
            for tool in &skill.tools {
                let reason = if reserved.contains(&tool.name.as_str()) {
                    RefusalReason::Reserved
                } else if let Some((owner, _)) = ownership.owners.get(&tool.name) {
                    RefusalReason::Taken {
                        owner: Arc::clone(owner),
                    }
                } else {
                    ownership
                        .owners
                        .insert(tool.name.clone(), (Arc::clone(skill), tool.clone()));
                    continue;
                };
                ownership.refusals.push(ToolRefusal {
                    skill: Arc::clone(skill),
                    tool: tool.clone(),
                    reason,
                });
            }
        }
        ownership
    }

    /// The owners among the skills a model sees: the copy in effect of each name, when
    /// [`Skill::visible_to_model`].
    #[must_use]
    pub fn for_model(catalog: &SkillCatalog, reserved: &[&str]) -> Self {
        Self::resolve(catalog.latest_visible_to_model(), reserved)
    }

    /// The skill and tool that answer to `name`.
    #[must_use]
    pub fn owner(&self, name: &str) -> Option<&(Arc<Skill>, ToolDefinition)> {
        self.owners.get(name)
    }

    /// Every owned tool, by name.
    pub fn owned(&self) -> impl Iterator<Item = &(Arc<Skill>, ToolDefinition)> {
        self.owners.values()
    }

    /// Whether `skill`'s tool `name` is the one that answers to its name.
    #[must_use]
    pub fn owns(&self, skill: &Skill, name: &str) -> bool {
        self.owners
            .get(name)
            .is_some_and(|(owner, _)| std::ptr::eq(owner.as_ref(), skill))
    }

    /// The tools that lost their names, in the order they were decided.
    #[must_use]
    pub fn refusals(&self) -> &[ToolRefusal] {
        &self.refusals
    }

    /// Add each refusal to the report, as a warning on the skill that declares the tool.
    pub fn add_to_report(&self, report: &mut ValidationReport) {
        let index_by_path: HashMap<PathBuf, usize> = report
            .skills
            .iter()
            .enumerate()
            .map(|(index, entry)| (entry.path.clone(), index))
            .collect();
        for refusal in &self.refusals {
            // A refusal is always a warning.
            let diagnostic = refusal.diagnostic();
            report.warnings += 1;
            match index_by_path.get(&refusal.skill.directory) {
                Some(index) => report.skills[*index].diagnostics.push(diagnostic),
                None => report.diagnostics.push(diagnostic),
            }
        }
    }
}
