//! How `skillbox eval` looks: a progress bar on a terminal's stderr, then a summary per skill
//! (trigger figures with their spread and misfires, task pass rates with and without the
//! skill, the description tuning's diff), and the thresholds a CI run missed.

use std::io::IsTerminal;
use std::path::Path;

use skillbox_core::printable::{printable, printable_line, printable_path};
use skillbox_eval::report::{
    Stat, TaskReport, TriggerReport, WITH_SKILL, WITHOUT_SKILL, named_skills,
};
use skillbox_eval::{EvalReport, Progress};

/// A bar on stderr when it is a terminal.
pub fn progress_bar() -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} {prefix:.bold} [{bar:30}] {pos}/{len} {wide_msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}

/// Show one progress event: on the bar, or as a line on a plain stderr for stages.
pub fn show_progress(bar: Option<&indicatif::ProgressBar>, event: &Progress) {
    match (bar, event) {
        (Some(bar), Progress::Planned(total)) => bar.set_length(*total),
        (Some(bar), Progress::Stage(stage)) => bar.set_prefix(printable_line(stage)),
        (Some(bar), Progress::Step(step)) => {
            bar.inc(1);
            bar.set_message(printable_line(step).chars().take(60).collect::<String>());
        }
        (None, Progress::Stage(stage)) => eprintln!("{}…", printable_line(stage)),
        (None, _) => {}
    }
}

/// The report as JSON on stdout.
pub fn print_json(report: &EvalReport) -> anyhow::Result<()> {
    super::print_json(report)
}

/// The summary on stdout.
pub fn print_summary(report: &EvalReport, output: &Path) -> anyhow::Result<()> {
    super::print_text(&summary_text(report, output))
}

fn stat(value: Option<&Stat>) -> String {
    match value {
        Some(stat) if stat.stddev > 0.0 => format!("{:.2} ± {:.2}", stat.mean, stat.stddev),
        Some(stat) => format!("{:.2}", stat.mean),
        None => "n/a".to_owned(),
    }
}

fn quoted(text: &str) -> String {
    let flat = printable_line(text);
    let mut short: String = flat.chars().take(70).collect();
    if short.len() < flat.len() {
        short.push('…');
    }
    format!("\"{short}\"")
}

fn trigger_lines(triggers: &TriggerReport, repeat: u32, out: &mut Vec<String>) {
    let confusion = &triggers.confusion;
    out.push(format!(
        "  triggers     {} queries × {repeat}   precision {}   recall {}   accuracy {}",
        triggers.queries.len(),
        stat(triggers.precision.as_ref()),
        stat(triggers.recall.as_ref()),
        stat(triggers.accuracy.as_ref()),
    ));
    out.push(format!(
        "               {} true positive · {} false positive · {} true negative · {} false negative{}",
        confusion.true_positive,
        confusion.false_positive,
        confusion.true_negative,
        confusion.false_negative,
        if triggers.errors > 0 {
            format!(" · {} runs failed", triggers.errors)
        } else {
            String::new()
        }
    ));
    for query in triggers.queries.iter().filter(|query| query.misfire) {
        out.push(format!(
            "               misfire: {} {} (triggered {:.0}%; named: {})",
            if query.should_trigger {
                "should trigger"
            } else {
                "should not"
            },
            quoted(&query.query),
            query.trigger_rate * 100.0,
            printable_line(&named_skills(&query.runs)),
        ));
    }
}

fn task_lines(tasks: &TaskReport, out: &mut Vec<String>) {
    let evals: std::collections::BTreeSet<String> =
        tasks.runs.iter().map(|run| run.eval_name.clone()).collect();
    let with = tasks
        .summary
        .get(WITH_SKILL)
        .map(|summary| &summary.pass_rate);
    let without = tasks
        .summary
        .get(WITHOUT_SKILL)
        .map(|summary| &summary.pass_rate);
    let mut line = format!(
        "  tasks        {} evals   pass rate with the skill {}",
        evals.len(),
        stat(with)
    );
    if without.is_some() {
        line.push_str(&format!("   without {}", stat(without)));
    }
    if let Some(delta) = tasks
        .delta
        .as_ref()
        .and_then(|delta| delta.get("pass_rate"))
    {
        line.push_str(&format!("   delta {delta}"));
    }
    out.push(line);
    let judged = tasks
        .runs
        .iter()
        .flat_map(|run| &run.expectations)
        .filter(|graded| graded.graded_by.starts_with("judge:"))
        .count();
    if judged > 0 {
        out.push(format!(
            "               {judged} gradings by the judge model (sentences); the rest by checks"
        ));
    }
    for run in tasks
        .runs
        .iter()
        .filter(|run| run.configuration == WITH_SKILL)
    {
        for graded in run.expectations.iter().filter(|graded| !graded.passed) {
            out.push(format!(
                "               failed: {} #{}: {} ({})",
                printable_line(&run.eval_name),
                run.run_number,
                printable_line(&graded.text),
                printable_line(&graded.evidence)
                    .chars()
                    .take(100)
                    .collect::<String>()
            ));
        }
    }
}

/// The summary text (what [`print_summary`] prints).
#[must_use]
pub fn summary_text(report: &EvalReport, output: &Path) -> String {
    let mut out = Vec::new();
    for skill in &report.skills {
        out.push(printable_line(&skill.name));
        if let Some(triggers) = &skill.triggers {
            trigger_lines(triggers, report.repeat, &mut out);
        }
        if let Some(tasks) = &skill.tasks {
            task_lines(tasks, &mut out);
        }
        if let Some(description) = &skill.description {
            let scored = description
                .candidates
                .iter()
                .filter(|candidate| candidate.rejected.is_none())
                .count();
            let before = description
                .original_holdout_accuracy
                .map_or_else(|| "n/a".to_owned(), |accuracy| format!("{accuracy:.2}"));
            match &description.best {
                Some(best) => {
                    let after = description
                        .candidates
                        .iter()
                        .find(|candidate| &candidate.description == best)
                        .and_then(|candidate| candidate.holdout_accuracy)
                        .map_or_else(|| "n/a".to_owned(), |accuracy| format!("{accuracy:.2}"));
                    out.push(format!(
                        "  description  held-out accuracy {before} → {after} (best of {scored} scored on {} held-out queries); {}",
                        description.holdout_queries.len(),
                        if description.written { "written into the skill" } else { "run again with --write to apply it" }
                    ));
                    if let Some(diff) = &description.diff {
                        for line in diff.lines() {
                            out.push(format!("               {}", printable(line)));
                        }
                    }
                }
                None => out.push(format!(
                    "  description  no rewrite beat the current one on {} held-out queries (accuracy {before}; {scored} scored)",
                    description.holdout_queries.len()
                )),
            }
            for candidate in description
                .candidates
                .iter()
                .filter(|candidate| candidate.rejected.is_some())
            {
                out.push(format!(
                    "               proposal not scored: {}",
                    printable_line(candidate.rejected.as_deref().unwrap_or_default())
                ));
            }
        }
        out.push(String::new());
    }
    let cache = &report.cache;
    out.push(format!(
        "model   {} · {} at {} (judge {})",
        printable_line(&report.model.model),
        report.model.format,
        printable_line(&report.model.endpoint),
        printable_line(&report.model.judge)
    ));
    out.push(format!(
        "asked   {} model requests, {} answered from the cache · {:.1} s",
        cache.hits + cache.misses,
        cache.hits,
        std::time::Duration::from_millis(report.duration_ms).as_secs_f64()
    ));
    out.push(format!(
        "report  {}",
        printable_path(&output.join(skillbox_eval::report::REPORT_FILE))
    ));
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// The thresholds `report` misses, one line each.
#[must_use]
pub fn missed_thresholds(
    report: &EvalReport,
    min_recall: Option<f64>,
    min_precision: Option<f64>,
    min_pass_rate: Option<f64>,
) -> Vec<String> {
    let mut missed = Vec::new();
    for skill in &report.skills {
        if let Some(triggers) = &skill.triggers {
            let checks = [
                (
                    "recall",
                    "--min-recall",
                    min_recall,
                    triggers.recall.map(|stat| stat.mean),
                ),
                (
                    "precision",
                    "--min-precision",
                    min_precision,
                    // A skill that never triggered has no precision: it fails a minimum.
                    Some(triggers.precision.map_or(0.0, |stat| stat.mean)),
                ),
            ];
            for (figure, flag, minimum, value) in checks {
                if let (Some(minimum), Some(value)) = (minimum, value)
                    && value < minimum
                {
                    missed.push(format!(
                        "`{}`: trigger {figure} {value:.2} is below {flag} {minimum}",
                        printable_line(&skill.name)
                    ));
                }
            }
        }
        if let (Some(minimum), Some(tasks)) = (min_pass_rate, &skill.tasks)
            && let Some(rate) = tasks.pass_rate()
            && rate < minimum
        {
            missed.push(format!(
                "`{}`: task pass rate with the skill {rate:.2} is below --min-pass-rate {minimum}",
                printable_line(&skill.name)
            ));
        }
    }
    missed
}

/// The first failure, when every run of `report` failed (the model unreachable, a key
/// refused): the figures then say nothing about the skills. Escaped for a terminal: a model
/// server writes it.
#[must_use]
pub fn every_run_failed(report: &EvalReport) -> Option<String> {
    let mut failures = Vec::new();
    let mut runs = 0usize;
    for skill in &report.skills {
        for query in skill.triggers.iter().flat_map(|triggers| &triggers.queries) {
            for run in &query.runs {
                runs += 1;
                failures.extend(run.error.clone());
            }
        }
        for run in skill.tasks.iter().flat_map(|tasks| &tasks.runs) {
            runs += 1;
            failures.extend(run.run.error.clone());
        }
    }
    (runs > 0 && failures.len() == runs).then(|| printable_line(&failures.swap_remove(0)))
}
