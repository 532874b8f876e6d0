//! `skillbox list`: the skills in effect, one row per version.

use std::process::ExitCode;

use skillbox_core::{Severity, SkillCatalog, ValidationMode};

use crate::arguments::{GlobalOptions, ListArguments};
use crate::output::{eprint_diagnostics, print_json, print_text, table, terminal_width};

/// Run the command.
pub fn run(global: &GlobalOptions, arguments: &ListArguments) -> anyhow::Result<ExitCode> {
    let roots = super::roots(global, &arguments.roots)?;
    let catalog = super::load_catalog(
        roots,
        &arguments.include,
        &arguments.exclude,
        ValidationMode::Lenient,
    )?;
    let summaries: Vec<_> = catalog
        .skills()
        .iter()
        .map(|skill| skill.summary(catalog.is_latest(skill)))
        .collect();
    if arguments.json {
        print_json(&summaries)?;
    } else {
        let rows: Vec<Vec<String>> = summaries
            .iter()
            .map(|summary| {
                let mut invocation = Vec::new();
                if summary.model_invocable {
                    invocation.push("model");
                }
                if summary.user_invocable {
                    invocation.push("user");
                }
                vec![
                    summary.name.clone(),
                    summary.version.clone().unwrap_or_else(|| "-".to_owned()),
                    summary.kind.to_string(),
                    summary.tools.len().to_string(),
                    if invocation.is_empty() {
                        "-".to_owned()
                    } else {
                        invocation.join(",")
                    },
                    summary.description.clone(),
                ]
            })
            .collect();
        if rows.is_empty() {
            print_text("no skills found\n")?;
        } else {
            print_text(&table(
                &["NAME", "VERSION", "KIND", "TOOLS", "INVOKE", "DESCRIPTION"],
                &rows,
                terminal_width(),
            ))?;
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
    let (errors, warnings) = catalog
        .skills()
        .iter()
        .flat_map(|skill| &skill.diagnostics)
        .filter(|diagnostic| diagnostic.code != skillbox_core::DiagnosticCode::SkillShadowed)
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
