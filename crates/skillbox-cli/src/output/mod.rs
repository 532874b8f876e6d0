//! Printing helpers: JSON to stdout, aligned text that fits the terminal, diagnostics to stderr.

pub mod agent_events;
pub mod author_report;
pub mod eval_report;
pub mod install_report;

use std::io::Write;

use serde::Serialize;
use skillbox_core::Diagnostic;
use skillbox_trust::TrustError;
use skillbox_trust::{TrustGate, TrustStore};

/// Write a value as pretty JSON and a newline to stdout.
pub fn print_json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let mut stdout = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut stdout, value)?;
    writeln!(stdout)?;
    stdout.flush()?;
    Ok(())
}

/// Write text to stdout, returning (not panicking on) errors such as a closed pipe.
pub fn print_text(text: &str) -> anyhow::Result<()> {
    print_bytes(text.as_bytes())
}

/// Write bytes (text already encoded, such as a JSON report) to stdout, as [`print_text`].
pub fn print_bytes(bytes: &[u8]) -> anyhow::Result<()> {
    let mut stdout = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    stdout.write_all(bytes)?;
    stdout.flush()?;
    Ok(())
}

/// Terminal width from `COLUMNS`, or 100.
pub fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|value| value.parse::<usize>().ok())
        .filter(|width| *width >= 40)
        .unwrap_or(100)
}

/// Cut text to `width` characters, ending with `…` when cut. The text must already be printable
/// (one line, escaped): [`table`] escapes every cell first.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Render rows as left-aligned columns; the last column takes what width is left.
pub fn table(header: &[&str], rows: &[Vec<String>], width: usize) -> String {
    let columns = header.len();
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|cell| skillbox_core::printable::printable_line(cell))
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|cell| cell.chars().count()).collect();
    for row in &rows {
        for (index, cell) in row.iter().enumerate().take(columns - 1) {
            widths[index] = widths[index].max(cell.chars().count());
        }
    }
    let used: usize = widths[..columns - 1].iter().map(|w| w + 2).sum();
    let last_width = width.saturating_sub(used).max(20);
    let mut text = String::new();
    let mut push_row = |cells: Vec<String>| {
        let mut line = String::new();
        for (index, cell) in cells.iter().enumerate() {
            if index + 1 == columns {
                line.push_str(&fit(cell, last_width));
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[index] - cell.chars().count() + 2));
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    };
    push_row(header.iter().map(|cell| (*cell).to_owned()).collect());
    for row in rows {
        push_row(row);
    }
    text
}

/// A byte count for people: `512 B`, `1.5 KiB`, `2.0 MiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Print diagnostics to stderr, one block each.
pub fn eprint_diagnostics(diagnostics: &[Diagnostic]) {
    let mut stderr = std::io::stderr().lock();
    for diagnostic in diagnostics {
        let _ = writeln!(stderr, "{diagnostic}");
    }
}

/// Indent every line of a block by `spaces`.
pub fn indent(text: &str, spaces: usize) -> String {
    let pad = " ".repeat(spaces);
    text.lines()
        .map(|line| format!("{pad}{line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// How `show` marks one skill's trust: as [`trust_mark_with`], reading the trust file only when
/// the skill's root needs trust.
pub fn trust_mark(gate: &TrustGate, skill: &skillbox_core::Skill) -> Option<TrustMark> {
    if !gate.is_gated(skill) {
        return None;
    }
    trust_mark_with(gate, &gate.read_store(), skill)
}

/// How a listing marks a skill's trust, against the trust file read once for the listing
/// ([`TrustGate::read_store`]): nothing for skills whose root needs none, else the verdict's
/// label and, when untrusted, the command that trusts the root.
pub fn trust_mark_with(
    gate: &TrustGate,
    store: &Result<Option<TrustStore>, TrustError>,
    skill: &skillbox_core::Skill,
) -> Option<TrustMark> {
    let verdict = gate.listed_verdict(store, skill)?;
    Some(TrustMark {
        label: verdict.label(),
        command: match verdict {
            skillbox_trust::TrustVerdict::Trusted => None,
            skillbox_trust::TrustVerdict::Untrusted(untrusted) => Some(untrusted.trust_command()),
        },
    })
}

/// A skill's trust as `list` and `show` print it.
#[derive(Debug, Clone)]
pub struct TrustMark {
    /// `trusted`, `untrusted`, `changed`, `new` or `unverifiable`.
    pub label: &'static str,
    /// The command that trusts the skill's root, when it is not trusted.
    pub command: Option<String>,
}
