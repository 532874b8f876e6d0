//! `skillbox list`: the skills in effect, one row per version.

use std::process::ExitCode;

use serde::{Serialize, Serializer};
use skillbox_core::{Severity, SkillCatalog, SkillSummary, ValidationMode};

use crate::arguments::{GlobalOptions, ListArguments};
use crate::output::{
    TrustMark, eprint_diagnostics, print_json, print_text, table, terminal_width, trust_mark_with,
};
use crate::setup::{Setup, trust_gate};

/// One row of the listing: the skill's summary and, for skills under a project folder, whether
/// their code may run (in JSON, the mark's label).
#[derive(Serialize)]
struct ListedSkill {
    #[serde(flatten)]
    summary: SkillSummary,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_trust_label"
    )]
    trust: Option<TrustMark>,
}

fn serialize_trust_label<S: Serializer>(
    trust: &Option<TrustMark>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    trust.as_ref().map(|mark| mark.label).serialize(serializer)
}

/// Run the command.
pub fn run(global: &GlobalOptions, arguments: &ListArguments) -> anyhow::Result<ExitCode> {
    let catalog = Setup::new(global, &arguments.roots)?.catalog_with(
        &arguments.include,
        &arguments.exclude,
        ValidationMode::Lenient,
    )?;
    let gate = trust_gate(catalog.roots());
    // One reading of the trust file serves every row.
    let store = gate.read_store();
    let summaries: Vec<ListedSkill> = catalog
        .skills()
        .iter()
        .map(|skill| ListedSkill {
            summary: skill.summary(catalog.is_latest(skill)),
            trust: trust_mark_with(&gate, &store, skill),
        })
        .collect();
    // The trust column appears only when some skill's code would be refused.
    let show_trust = summaries.iter().any(|listed| {
        listed
            .trust
            .as_ref()
            .is_some_and(|mark| mark.command.is_some())
    });
    if arguments.json {
        print_json(&summaries)?;
    } else {
        let rows: Vec<Vec<String>> = summaries
            .iter()
            .map(|ListedSkill { summary, trust }| {
                let mut invocation = Vec::new();
                if summary.model_invocable {
                    invocation.push("model");
                }
                if summary.user_invocable {
                    invocation.push("user");
                }
                let mut row = vec![
                    summary.name.clone(),
                    summary.version.clone().unwrap_or_else(|| "-".to_owned()),
                    summary.kind.to_string(),
                    summary.tools.len().to_string(),
                    if invocation.is_empty() {
                        "-".to_owned()
                    } else {
                        invocation.join(",")
                    },
                ];
                if show_trust {
                    row.push(
                        trust
                            .as_ref()
                            .map_or("trusted", |mark| mark.label)
                            .to_owned(),
                    );
                }
                row.push(summary.description.clone());
                row
            })
            .collect();
        let mut header = vec!["NAME", "VERSION", "KIND", "TOOLS", "INVOKE"];
        if show_trust {
            header.push("TRUST");
        }
        header.push("DESCRIPTION");
        if rows.is_empty() {
            print_text("no skills found\n")?;
        } else {
            print_text(&table(&header, &rows, terminal_width()))?;
        }
        if show_trust {
            eprintln!(
                "skills not trusted run no code; `skillbox trust` trusts the project's skill folders"
            );
        }
    }
    report_problems(&catalog);
    Ok(ExitCode::SUCCESS)
}

/// Catalog-level problems (skipped skills, shadowing, limits) go to stderr in full; per-skill
/// problems as a count with a pointer to `validate`.
fn report_problems(catalog: &SkillCatalog) {
    eprint_diagnostics(catalog.diagnostics());
    for skipped in catalog.skipped() {
        eprint_diagnostics(&skipped.diagnostics);
    }
    // Every copy counts, the shadowed ones too: each says which copy is in effect and why.
    let (errors, warnings) = catalog
        .skills()
        .iter()
        .chain(catalog.shadowed())
        .flat_map(|skill| &skill.diagnostics)
        .fold((0, 0), |(errors, warnings), diagnostic| {
            match diagnostic.severity {
                Severity::Error => (errors + 1, warnings),
                Severity::Warning => (errors, warnings + 1),
                Severity::Info => (errors, warnings),
            }
        });
    if errors + warnings > 0 {
        eprintln!(
            "{errors} error(s) and {warnings} warning(s) in these skills; run `skillbox validate` for details"
        );
    }
}
