//! How the eval pages show figures, times, texts and links: one rule for every page.

use skillbox_eval::report::{Stat, WITH_SKILL, WITHOUT_SKILL};

use crate::eval_files::is_transcript_id;
use crate::pages::encode_component;

use super::{MAX_SHOWN_TEXT_CHARS, NO_FIGURE};

/// `value` (a share, 0 to 1) as a whole percentage.
pub(super) fn percent(value: f64) -> String {
    if value.is_finite() {
        format!("{:.0}%", value * 100.0)
    } else {
        NO_FIGURE.to_owned()
    }
}

/// A share's mean, or the dash.
pub(super) fn mean_percent(stat: Option<&Stat>) -> String {
    stat.map_or_else(|| NO_FIGURE.to_owned(), |stat| percent(stat.mean))
}

/// A share's mean ± standard deviation over repeats, or the dash.
pub(super) fn spread_percent(stat: Option<&Stat>) -> String {
    stat.map_or_else(
        || NO_FIGURE.to_owned(),
        |stat| format!("{} ± {}", percent(stat.mean), percent(stat.stddev)),
    )
}

/// A share's range over repeats, or nothing.
pub(super) fn range_percent(stat: Option<&Stat>) -> String {
    stat.map_or_else(String::new, |stat| {
        format!("min {}, max {}", percent(stat.min), percent(stat.max))
    })
}

/// An RFC 3339 time as `2025-01-02 10:11:12 UTC` (fractions of a second dropped); anything
/// else as it is.
pub(super) fn shown_time(text: &str) -> String {
    let bytes = text.as_bytes();
    if text.ends_with('Z') && bytes.len() >= 20 && bytes[10] == b'T' && text.is_char_boundary(19) {
        format!("{} {} UTC", &text[..10], &text[11..19])
    } else {
        text.to_owned()
    }
}

/// Milliseconds as seconds (`12.3 s`) or minutes (`4 min 05 s`).
pub(super) fn shown_duration(milliseconds: u64) -> String {
    let seconds = milliseconds / 1000;
    if seconds >= 60 {
        format!("{} min {:02} s", seconds / 60, seconds % 60)
    } else {
        format!("{seconds}.{} s", (milliseconds % 1000) / 100)
    }
}

/// `text`, cut at [`MAX_SHOWN_TEXT_CHARS`] characters with a note of what was left out.
pub(super) fn shown_text(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN_TEXT_CHARS) {
        None => text.to_owned(),
        Some((end, _)) => format!(
            "{}\n… (cut here: {} more characters)",
            &text[..end],
            text[end..].chars().count()
        ),
    }
}

/// The address of a run's page.
pub(super) fn run_link(run: &str) -> String {
    format!("/evals/{}", encode_component(run))
}

/// The address of a transcript of run `run`, when `id` is a transcript id.
pub(super) fn transcript_link(run: &str, id: Option<&str>) -> Option<String> {
    id.filter(|id| is_transcript_id(id))
        .map(|id| format!("{}/transcripts/{id}", run_link(run)))
}

/// Who graded an expectation, as the page says it: `check` needs no model; a judge is named.
pub(super) fn grader_label(graded_by: &str) -> (String, bool) {
    match graded_by.strip_prefix("judge:") {
        Some(model) => (format!("judged by model {model}"), true),
        None if graded_by == "check" => ("check (no model)".to_owned(), false),
        None => (graded_by.to_owned(), false),
    }
}

/// A configuration's name as the page says it.
pub(super) fn configuration_label(configuration: &str) -> String {
    match configuration {
        WITH_SKILL => "with the skill".to_owned(),
        WITHOUT_SKILL => "without the skill".to_owned(),
        other => other.to_owned(),
    }
}

// ---------------------------------------------------------------- the list
