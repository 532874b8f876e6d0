//! Answers that depend only on the catalog snapshot (`list_skills` pages, `describe_skill`
//! below `full`), rendered once per provider and shared by every call that asks the same. A
//! reload builds a new provider, and with it an empty store, so nothing is ever stale. The
//! store is bounded in bytes: past the bound, answers are rendered per call as before.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::outcome::{Rendered, ToolOutcome};

/// Bytes of rendered answers one snapshot keeps at most (roughly, as [`Rendered::size`]
/// counts them). Keys are bounded by the size of the calls' params.
pub const MAX_SNAPSHOT_ANSWER_BYTES: usize = 32 * 1024 * 1024;

/// The rendered answers of one snapshot.
#[derive(Debug, Default)]
pub(crate) struct SnapshotAnswers {
    answers: RwLock<Answers>,
}

#[derive(Debug, Default)]
struct Answers {
    by_key: HashMap<String, Arc<Rendered>>,
    bytes: usize,
}

impl SnapshotAnswers {
    /// The answer kept under `key`, or the one `render` makes, kept for the next call when
    /// there is room. A failure is answered and never kept.
    pub(crate) fn get_or_render(
        &self,
        key: String,
        render: impl FnOnce() -> Result<Value, ToolOutcome>,
    ) -> ToolOutcome {
        if let Ok(answers) = self.answers.read()
            && let Some(answer) = answers.by_key.get(&key)
        {
            return ToolOutcome::rendered(Arc::clone(answer));
        }
        let answer = match render() {
            Ok(value) => Arc::new(Rendered::new(value)),
            Err(outcome) => return outcome,
        };
        if let Ok(mut answers) = self.answers.write() {
            let size = answer.size() + key.len();
            if answers.bytes + size <= MAX_SNAPSHOT_ANSWER_BYTES
                && !answers.by_key.contains_key(&key)
            {
                answers.bytes += size;
                answers.by_key.insert(key, Arc::clone(&answer));
            }
        }
        ToolOutcome::rendered(answer)
    }
}
