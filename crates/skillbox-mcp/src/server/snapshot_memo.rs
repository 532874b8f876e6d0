//! Answers rendered once per catalog snapshot (`tools/list`, `skills/list` pages) and shared by
//! every session until a reload brings another provider. Bounded in entries: past the bound an
//! answer is rendered per request, as it would be without the memo.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use skillbox_tools::SkillsProvider;

/// Most answers one snapshot keeps (each a page of at most [`super::SKILLS_PER_PAGE`] skills,
/// or the tool list).
const MAX_ANSWERS: usize = 256;

/// The provider a snapshot's answers were rendered for, and the answers by key.
type RenderedFor<K, V> = (Arc<SkillsProvider>, HashMap<K, Arc<V>>);

/// The answers of the snapshot they were rendered for. The provider is held, so its address
/// cannot be reused by another while it is compared.
pub(super) struct SnapshotMemo<K, V> {
    kept: Mutex<Option<RenderedFor<K, V>>>,
}

impl<K, V> Default for SnapshotMemo<K, V> {
    fn default() -> Self {
        SnapshotMemo {
            kept: Mutex::new(None),
        }
    }
}

impl<K: Eq + Hash, V> SnapshotMemo<K, V> {
    /// The answer kept for `key` in `provider`'s snapshot.
    pub(super) fn get(&self, provider: &Arc<SkillsProvider>, key: &K) -> Option<Arc<V>> {
        let kept = self.kept.lock().ok()?;
        let (rendered_for, answers) = kept.as_ref()?;
        if !Arc::ptr_eq(rendered_for, provider) {
            return None;
        }
        answers.get(key).map(Arc::clone)
    }

    /// Whether an answer kept for `provider`'s snapshot satisfies `test`.
    pub(super) fn any(&self, provider: &Arc<SkillsProvider>, test: impl Fn(&V) -> bool) -> bool {
        let Ok(kept) = self.kept.lock() else {
            return false;
        };
        kept.as_ref().is_some_and(|(rendered_for, answers)| {
            Arc::ptr_eq(rendered_for, provider) && answers.values().any(|answer| test(answer))
        })
    }

    /// Keep `answer` for `key` in `provider`'s snapshot (forgetting an older snapshot's), when
    /// there is room; returns it shared.
    pub(super) fn keep(&self, provider: &Arc<SkillsProvider>, key: K, answer: V) -> Arc<V> {
        let answer = Arc::new(answer);
        if let Ok(mut kept) = self.kept.lock() {
            let current = matches!(
                kept.as_ref(),
                Some((rendered_for, _)) if Arc::ptr_eq(rendered_for, provider)
            );
            if !current {
                *kept = Some((Arc::clone(provider), HashMap::new()));
            }
            if let Some((_, answers)) = kept.as_mut()
                && answers.len() < MAX_ANSWERS
            {
                answers.insert(key, Arc::clone(&answer));
            }
        }
        answer
    }
}
