//! `skillbox validate`: check skills and say exactly what is wrong and where.

use std::process::ExitCode;

use skillbox_core::{Severity, ValidationMode, ValidationReport};

use skillbox_core::printable::{printable_line, printable_path};

use crate::arguments::{GlobalOptions, ValidateArguments};
use crate::output::{indent, print_bytes, print_text};
use crate::setup::Setup;
use crate::{EXIT_PROBLEMS, EXIT_USAGE};

/// Run the command.
pub fn run(global: &GlobalOptions, arguments: &ValidateArguments) -> anyhow::Result<ExitCode> {
    let setup = Setup::new(global, &arguments.paths)?;
    for root in &setup.roots {
        if root.origin == skillbox_core::RootOrigin::Explicit && !root.path.exists() {
            eprintln!(
                "error: `{}` does not exist; name a skill folder, a SKILL.md, an archive, or a folder of skills",
                root.path.display()
            );
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    }
    let mode = if arguments.spec_only {
        ValidationMode::Strict
    } else {
        ValidationMode::Lenient
    };
    let catalog = setup.catalog_with(&[], &[], mode)?;
    let mut report = ValidationReport::from_catalog(&catalog);
    // The tool-name clashes, decided as the LLM provider decides them.
    skillbox_core::tool_names::ToolOwnership::for_model(
        &catalog,
        &skillbox_tools::registry::reserved_names(),
    )
    .add_to_report(&mut report);
    if report.checked == 0 {
        let places: Vec<String> = setup
            .roots
            .iter()
            .map(|root| format!("`{}`", root.path.display()))
            .collect();
        report.diagnostics.push(
            skillbox_core::Diagnostic::error(
                skillbox_core::DiagnosticCode::SkillMdMissing,
                format!("no skills found under {}", places.join(", ")),
            )
            .with_hint(
                "a skill is a folder with a `SKILL.md`; name that folder or the folder holding it",
            ),
        );
        report.valid = false;
    }
    if arguments.strict {
        report.treat_warnings_as_errors();
    }
    if arguments.json {
        let mut json = report.to_json_pretty()?;
        json.push(b'\n');
        print_bytes(&json)?;
    } else {
        print_text(&render(&report))?;
    }
    let code = if report.valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_PROBLEMS)
    };
    // The process ends next: freeing every skill one allocation at a time would cost several
    // percent of a large validation for memory the exit returns anyway.
    std::mem::forget(report);
    std::mem::forget(catalog);
    Ok(code)
}

fn render(report: &ValidationReport) -> String {
    let mut text = String::new();
    for skill in &report.skills {
        let status = if skill.valid { "ok     " } else { "invalid" };
        // Paths, names and versions quote what skills wrote: escaped, one line each.
        let label = match (&skill.name, &skill.version) {
            (Some(name), Some(version)) => {
                format!(" ({} {})", printable_line(name), printable_line(version))
            }
            (Some(name), None) => format!(" ({})", printable_line(name)),
            _ => String::new(),
        };
        text.push_str(&format!(
            "{status} {}{label}\n",
            printable_path(&skill.path)
        ));
        for diagnostic in &skill.diagnostics {
            text.push_str(&indent(&diagnostic.to_string(), 8));
            text.push('\n');
        }
    }
    for diagnostic in &report.diagnostics {
        text.push_str(&diagnostic.to_string());
        text.push('\n');
    }
    let errors = report
        .skills
        .iter()
        .flat_map(|skill| &skill.diagnostics)
        .chain(&report.diagnostics)
        .filter(|diagnostic| diagnostic.severity == Severity::Error)
        .count();
    text.push_str(&format!(
        "{} skill(s) checked: {} valid, {} invalid; {errors} error(s), {} warning(s)\n",
        report.checked,
        report.checked - report.invalid,
        report.invalid,
        report.warnings
    ));
    text
}
