//! Printing what `new`, `pack` and `pack --index` wrote: short aligned lines for people, the
//! reports as they are for `--json`. Warnings go to stderr.

use std::path::Path;

use serde::Serialize;
use skillbox_author::publish::ArtifactKind;
use skillbox_author::{IndexReport, NewSkill, PackReport, SkeletonFormat};
use skillbox_core::printable::{printable_line, printable_path};

use crate::output::{eprint_diagnostics, human_bytes, print_json, print_text};

/// The text the next steps try the example on.
const SAMPLE_TEXT: &str = "one two three";

/// What `new --json` prints: the new skill and the commands to go on with.
#[derive(Serialize)]
struct NewOutput<'a> {
    #[serde(flatten)]
    skill: &'a NewSkill,
    next_steps: Vec<String>,
}

/// Print the files `new` wrote and what to do next; `parent` is the `--path` given.
pub fn print_new(created: &NewSkill, parent: Option<&Path>, json: bool) -> anyhow::Result<()> {
    let steps = next_steps(created, parent);
    if json {
        return print_json(&NewOutput {
            skill: created,
            next_steps: steps.into_iter().map(|(_, command)| command).collect(),
        });
    }
    let mut text = format!(
        "created {}/ ({}, {})\n",
        printable_path(&created.directory),
        created.format.label(),
        created.language.label()
    );
    let width = created
        .files
        .iter()
        .map(|file| file.path.chars().count())
        .max()
        .unwrap_or(0);
    for file in &created.files {
        let executable = if file.executable { " (executable)" } else { "" };
        text.push_str(&format!(
            "  {:<width$}  {}{executable}\n",
            file.path, file.purpose
        ));
    }
    text.push_str("\nnext:\n");
    for (label, command) in &steps {
        text.push_str(&format!("  {label:<6} {command}\n"));
    }
    print_text(&text)
}

/// The commands that check, try, test and pack a new skill, each after a one-word label.
fn next_steps(created: &NewSkill, parent: Option<&Path>) -> Vec<(&'static str, String)> {
    let folder =
        skillbox_core::shell_words::printable_shell_word(&created.directory.display().to_string());
    let root = skillbox_core::shell_words::printable_shell_word(
        &parent.map_or_else(|| ".".to_owned(), |path| path.display().to_string()),
    );
    let try_it = match (&created.tool, created.format) {
        (_, SkeletonFormat::Protocol) => format!(
            "skillbox call execute_skill {root} --args '{{\"name\": \"{}\", \"args\": {{\"text\": \"{SAMPLE_TEXT}\"}}}}'",
            created.name
        ),
        (Some(tool), _) => {
            format!("skillbox call {tool} {root} --args '{{\"text\": \"{SAMPLE_TEXT}\"}}'")
        }
        (None, _) => format!(
            "skillbox run {} {} {root} -- {SAMPLE_TEXT}",
            created.name,
            created.language.script_path()
        ),
    };
    vec![
        ("check", format!("skillbox validate {folder}")),
        ("try", try_it),
        ("test", format!("skillbox eval {folder}")),
        ("share", format!("skillbox pack {folder}")),
    ]
}

/// What was left out of a skill, one line: the paths are the author's folder names.
fn printable_left_out(left_out: &[String]) -> String {
    let shown: Vec<String> = left_out.iter().map(|path| printable_line(path)).collect();
    shown.join(", ")
}

/// Print what `pack` wrote; warnings go to stderr first.
pub fn print_pack(report: &PackReport, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(report);
    }
    eprint_diagnostics(&report.warnings);
    let mut rows = vec![
        ("archive", printable_path(&report.archive)),
        ("skill", printable_line(&report.name)),
        ("files", report.files.to_string()),
        (
            "size",
            format!(
                "{} ({} bytes)",
                human_bytes(report.size_bytes),
                report.size_bytes
            ),
        ),
        ("digest", report.digest.clone()),
    ];
    if !report.left_out.is_empty() {
        rows.push(("left out", printable_left_out(&report.left_out)));
    }
    let mut text = String::new();
    for (label, value) in rows {
        text.push_str(&format!("{label:<9} {value}\n"));
    }
    print_text(&text)
}

/// Print what `pack --index` wrote: one aligned row per skill, then what was passed over;
/// warnings go to stderr first.
pub fn print_index(report: &IndexReport, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(report);
    }
    for skill in &report.skills {
        eprint_diagnostics(&skill.warnings);
    }
    let mut text = format!(
        "published {} skill(s) in {}\n",
        report.skills.len(),
        printable_path(&report.index)
    );
    let rows: Vec<[String; 6]> = report
        .skills
        .iter()
        .map(|skill| {
            [
                printable_line(&skill.name),
                match skill.kind {
                    ArtifactKind::SkillMd => "skill-md".to_owned(),
                    ArtifactKind::Archive => "archive".to_owned(),
                },
                printable_line(&skill.url),
                format!("{} file(s)", skill.files),
                human_bytes(skill.size_bytes),
                skill.digest.clone(),
            ]
        })
        .collect();
    let mut widths = [0usize; 6];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for row in &rows {
        let mut line = String::new();
        for (cell, width) in row.iter().zip(widths) {
            line.push_str(&format!("  {cell:<width$}"));
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    for skill in &report.skills {
        if !skill.left_out.is_empty() {
            text.push_str(&format!(
                "left out from {}: {}\n",
                printable_line(&skill.name),
                printable_left_out(&skill.left_out)
            ));
        }
    }
    for skipped in &report.skipped {
        text.push_str(&format!(
            "skipped {}: {}\n",
            printable_path(&skipped.path),
            skipped.reason
        ));
    }
    print_text(&text)
}
