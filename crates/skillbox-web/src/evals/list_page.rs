//! `/evals`: the runs `skillbox eval` wrote, newest first, each with its skills' headline figures.

use std::sync::Arc;

use askama::Template;
use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use skillbox_eval::EvalReport;
use skillbox_eval::report::{SkillEvalReport, WITH_SKILL, WITHOUT_SKILL};

use crate::auth::Visitor;
use crate::eval_files::{EvalFileError, EvalsFolder, MAX_REPORT_BYTES};
use crate::pages::{Layout, render};
use crate::{WebError, WebState};

use super::format::*;
use super::*;

/// One skill's headline figures in the list.
pub(super) struct SkillHeadline {
    name: String,
    precision: String,
    recall: String,
    accuracy: String,
    with_skill: String,
    without_skill: String,
}

impl SkillHeadline {
    fn of(skill: &SkillEvalReport) -> Self {
        let triggers = skill.triggers.as_ref();
        let pass_rate = |configuration: &str| {
            skill
                .tasks
                .as_ref()
                .and_then(|tasks| tasks.summary.get(configuration))
                .map_or_else(
                    || NO_FIGURE.to_owned(),
                    |summary| percent(summary.pass_rate.mean),
                )
        };
        SkillHeadline {
            name: skill.name.clone(),
            precision: mean_percent(triggers.and_then(|triggers| triggers.precision.as_ref())),
            recall: mean_percent(triggers.and_then(|triggers| triggers.recall.as_ref())),
            accuracy: mean_percent(triggers.and_then(|triggers| triggers.accuracy.as_ref())),
            with_skill: pass_rate(WITH_SKILL),
            without_skill: pass_rate(WITHOUT_SKILL),
        }
    }
}

/// One run in the list: its figures, or why it has none.
pub(super) struct EvalRunRow {
    id: String,
    /// Its page; none for a link (refused).
    link: Option<String>,
    started: String,
    model: String,
    repeat: String,
    /// The first [`MAX_LISTED_SKILLS_PER_RUN`] skills.
    skills: Vec<SkillHeadline>,
    /// Skills past them, not listed.
    more_skills: usize,
    /// Why the run shows no figures.
    problem: Option<String>,
    /// The problem's badge: `unreadable`, or `not summarised` for a report past the list's
    /// budget.
    pub(super) badge: &'static str,
}

impl EvalRunRow {
    fn unreadable(id: &str, link: Option<String>, problem: String) -> Self {
        EvalRunRow {
            id: id.to_owned(),
            badge: "unreadable",
            link,
            started: String::new(),
            model: String::new(),
            repeat: String::new(),
            skills: Vec::new(),
            more_skills: 0,
            problem: Some(problem),
        }
    }

    fn of(id: &str, report: &EvalReport) -> Self {
        EvalRunRow {
            id: id.to_owned(),
            link: Some(run_link(id)),
            started: shown_time(&report.started),
            model: report.model.model.clone(),
            repeat: report.repeat.to_string(),
            skills: report
                .skills
                .iter()
                .take(MAX_LISTED_SKILLS_PER_RUN)
                .map(SkillHeadline::of)
                .collect(),
            more_skills: report
                .skills
                .len()
                .saturating_sub(MAX_LISTED_SKILLS_PER_RUN),
            problem: None,
            badge: "",
        }
    }
}

#[derive(Template)]
#[template(path = "evals.html")]
pub(super) struct EvalsPage {
    layout: Layout,
    folder: String,
    runs: Vec<EvalRunRow>,
    /// Runs past [`MAX_LISTED_EVAL_RUNS`], not listed.
    more: usize,
    /// The folder held too many entries to look at all.
    scan_cut: bool,
    /// Why the folder could not be read at all.
    problem: Option<String>,
}

/// The list's rows, read from `folder` (file I/O: on a blocking thread).
pub(super) fn list_rows(folder: &EvalsFolder) -> (Vec<EvalRunRow>, usize, bool, Option<String>) {
    let listing = match folder.list() {
        Ok(listing) => listing,
        Err(error) => return (Vec::new(), 0, false, Some(error.to_string())),
    };
    let more = listing.runs.len().saturating_sub(MAX_LISTED_EVAL_RUNS);
    let mut budget = MAX_LIST_REPORT_BYTES;
    let rows = listing
        .runs
        .iter()
        .take(MAX_LISTED_EVAL_RUNS)
        .map(|entry| {
            let id = entry.id.as_str();
            if entry.link {
                return EvalRunRow::unreadable(
                    id,
                    None,
                    EvalFileError::Link(id.to_owned()).to_string(),
                );
            }
            match folder.read_report(id, &mut budget) {
                Ok(report) => EvalRunRow::of(id, &report),
                Err(EvalFileError::TooLarge { bytes, .. }) if bytes <= MAX_REPORT_BYTES => {
                    EvalRunRow {
                        badge: "not summarised",
                        ..EvalRunRow::unreadable(
                            id,
                            Some(run_link(id)),
                            format!(
                                "this list reads at most {} MiB of reports; open the run",
                                MAX_LIST_REPORT_BYTES / (1024 * 1024)
                            ),
                        )
                    }
                }
                Err(error) => EvalRunRow::unreadable(id, Some(run_link(id)), error.to_string()),
            }
        })
        .collect();
    (rows, more, listing.cut, None)
}

/// `GET /evals`.
pub(crate) async fn evals_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
) -> Result<Response, WebError> {
    let folder = state.evals.clone();
    on_eval_place(&state, move || {
        let (runs, more, scan_cut, problem) = list_rows(&folder);
        render(
            &EvalsPage {
                layout: Layout::for_visitor(&visitor, "evals", "Evals".into()),
                folder: folder.path().display().to_string(),
                runs,
                more,
                scan_cut,
                problem,
            },
            StatusCode::OK,
        )
    })
    .await
}

// ---------------------------------------------------------------- one run
