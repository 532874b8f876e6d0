//! The eval pages: the runs `skillbox eval` wrote under the data folder's `evals/` (newest
//! first, with each skill's headline figures), one run in full (per skill: triggers as a
//! confusion table and each query's outcome, task pass rates with and without the skill as a
//! chart, each task run's graded expectations, the description tuning), and each run's
//! transcript.
//!
//! Everything in a report was written by a model or for one (queries, answers, evidence,
//! proposed descriptions): it is data, escaped by the templates like skill content. Files
//! are read by [`crate::eval_files`], which never follows a link and bounds every read.

mod format;
mod list_page;
mod run_page;
mod transcript_page;

use std::sync::Arc;

pub(crate) use list_page::evals_page;
pub(crate) use run_page::eval_run_page;
pub(crate) use transcript_page::eval_transcript_page;

use crate::eval_files::EvalFileError;
use crate::{WebError, WebState, on_blocking_thread};
/// Eval runs the list shows (the newest).
pub const MAX_LISTED_EVAL_RUNS: usize = 200;
/// Skills of one run the list shows; the run's page shows them all. A report may name any
/// number: a row per skill had made one 3 MiB report a list of 60 MB.
pub const MAX_LISTED_SKILLS_PER_RUN: usize = 20;
/// Bytes of reports the list reads in all to summarise its runs; runs past it are listed
/// without their figures (a run's own page reads its report whole).
pub const MAX_LIST_REPORT_BYTES: u64 = 64 * 1024 * 1024;
/// Characters of one text shown on the run and transcript pages (an answer, a tool result);
/// the rest is cut, and the page says so.
pub const MAX_SHOWN_TEXT_CHARS: usize = 64 * 1024;
/// What a missing figure shows.
pub(super) const NO_FIGURE: &str = "–";
/// Eval pages read and rendered at once; others wait for a place (within the blocking pool's
/// budget), then are told to try again. A report is read whole and model-written: 14 MiB of
/// small JSON values (an eval's id may be any JSON) held 620 MB while read, and 24 views at
/// once had held 7.6 GB and most of the blocking pool every door shares. The work is the
/// processor's, so more at once would not answer sooner.
pub const MAX_EVAL_PAGES_AT_ONCE: usize = 2;
/// What a client is told when every place for eval pages stayed taken.
const BUSY_WITH_EVALS: &str = "the server is busy showing other eval pages; try again in a moment";

/// Run `read` (an eval page's reading and rendering) on the blocking pool once one of the
/// [`MAX_EVAL_PAGES_AT_ONCE`] places is free. The place goes with the work, so it is held until
/// the work ends even when the request was given up.
pub(super) async fn on_eval_place<T: Send + 'static>(
    state: &WebState,
    read: impl FnOnce() -> T + Send + 'static,
) -> Result<T, WebError> {
    let wait = state.policy.blocking().budget();
    let place = tokio::time::timeout(wait, Arc::clone(&state.eval_pages).acquire_owned())
        .await
        .map_err(|_| WebError::Busy(BUSY_WITH_EVALS.into()))?
        .map_err(|_| WebError::Internal("the eval pages are closed".into()))?;
    on_blocking_thread(state, move || {
        let _place = place;
        read()
    })
    .await
}

/// The page's error for a run (or transcript) that cannot be shown: 404 when it is not
/// there, 422 when it is there but cannot be read.
pub(super) fn run_error(run: &str, error: &EvalFileError) -> WebError {
    if error.is_missing() {
        WebError::NotFound(format!(
            "nothing to show: {error} in the evals folder; /evals lists the runs"
        ))
    } else {
        WebError::Unreadable(format!(
            "the eval run `{run}` cannot be shown: {error}. /evals lists the runs"
        ))
    }
}

#[cfg(test)]
mod tests;
