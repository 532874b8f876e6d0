//! Printing what `add`, `install`, `update`, `remove`, `outdated` and `verify` did, and their
//! progress bars (stderr, only on a terminal).

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;

use skillbox_core::printable::{printable_line, printable_path};
use skillbox_install::operations::{Action, Report};
use skillbox_install::{Progress, ProgressEvent};

use crate::output::{print_json, print_text};

/// Print a report as text (one line per skill, changes indented, notes on stderr) or JSON.
pub fn print_report(report: &Report, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(report);
    }
    let mut text = String::new();
    if report.skills.is_empty() {
        text.push_str("nothing installed\n");
    }
    for skill in &report.skills {
        let digest = short_digest(&skill.digest);
        let line = match skill.action {
            Action::Outdated => format!(
                "{:<9} {}  {} -> {}  {}",
                skill.action.as_str(),
                skill.name,
                skill
                    .previous_digest
                    .as_deref()
                    .map(short_digest)
                    .unwrap_or_default(),
                digest,
                printable_line(&skill.source)
            ),
            Action::Updated => format!(
                "{:<9} {}  {} -> {}  {}",
                skill.action.as_str(),
                skill.name,
                skill
                    .previous_digest
                    .as_deref()
                    .map(short_digest)
                    .unwrap_or_default(),
                digest,
                printable_path(&skill.folder)
            ),
            _ => format!(
                "{:<9} {}  {}  {}",
                skill.action.as_str(),
                skill.name,
                digest,
                printable_path(&skill.folder)
            ),
        };
        text.push_str(&line);
        text.push('\n');
        for change in &skill.changes {
            text.push_str(&format!(
                "            {} {}\n",
                change.change.as_str(),
                printable_line(&change.path)
            ));
        }
    }
    print_text(&text)?;
    for note in &report.notes {
        eprintln!("note: {}", printable_line(note));
    }
    Ok(())
}

/// `sha256:` and the first 12 hex digits.
fn short_digest(digest: &str) -> String {
    digest.get(..19).unwrap_or(digest).to_owned()
}

/// Progress bars on stderr when it is a terminal; nothing otherwise.
pub fn progress_bars() -> Progress {
    if !std::io::stderr().is_terminal() {
        return Progress::default();
    }
    let bars = indicatif::MultiProgress::with_draw_target(indicatif::ProgressDrawTarget::stderr());
    let open: Mutex<HashMap<u64, indicatif::ProgressBar>> = Mutex::new(HashMap::new());
    Progress::to(move |event| {
        let Ok(mut open) = open.lock() else {
            return;
        };
        match event {
            ProgressEvent::Started { id, label, total } => {
                let bar = match total {
                    Some(total) => {
                        let bar = indicatif::ProgressBar::new(total);
                        if let Ok(style) = indicatif::ProgressStyle::with_template(
                            "{msg} {bar:30} {binary_bytes}/{binary_total_bytes}",
                        ) {
                            bar.set_style(style);
                        }
                        bar
                    }
                    None => {
                        let bar = indicatif::ProgressBar::new_spinner();
                        bar.enable_steady_tick(std::time::Duration::from_millis(120));
                        bar
                    }
                };
                bar.set_message(printable_line(&label));
                open.insert(id, bars.add(bar));
            }
            ProgressEvent::Advanced { id, bytes } => {
                if let Some(bar) = open.get(&id) {
                    bar.inc(bytes);
                }
            }
            ProgressEvent::Finished { id } => {
                if let Some(bar) = open.remove(&id) {
                    bar.finish_and_clear();
                }
            }
        }
    })
}
