//! Hot reload: a [`LiveProvider`] holds the provider in effect and swaps it whole when the
//! catalog is reloaded, so a request that took the current provider answers from one snapshot
//! however long it runs, and the next request sees the new one. [`watch_roots`] reloads on
//! file changes under the catalog's roots (debounced), keeping the last good copy of a skill
//! broken mid-edit ([`SkillCatalog::reload`]), and every front door can follow the changes
//! through [`LiveProvider::subscribe`].

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use arc_swap::ArcSwap;
use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, new_debouncer};
use skillbox_core::{CatalogOptions, SkillCatalog};
use tokio::sync::{broadcast, mpsc};

use crate::provider::{ProviderError, SkillsProvider};

/// How long the files under the roots must be quiet before a reload: an editor's save (write,
/// rename, chmod) is one change, and the reload follows the last write by about this much.
pub const SETTLE_DELAY: Duration = Duration::from_millis(40);
/// Least time between the starts of two reloads: files changed without pause (a generator
/// writing skills, a checkout) cost a reload per this much at most, their changes gathered,
/// instead of one per settled write (126 full reloads in 6 s of 500 skills before).
pub const MIN_RELOAD_GAP: Duration = Duration::from_millis(250);
/// How often the debouncer looks for settled changes.
const DEBOUNCE_TICK: Duration = Duration::from_millis(10);
/// Changes a slow subscriber may fall behind by before it is told it lagged (it then treats
/// everything as changed).
const CHANGE_BACKLOG: usize = 64;

/// One reload that took effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogChange {
    /// Counts reloads from 1.
    pub generation: u64,
    /// The files whose change caused it (absolute, as the watcher reported them); empty when
    /// the reload was asked for without a file event.
    pub changed_paths: Vec<PathBuf>,
    /// The skills models could see before and cannot now (removed, renamed, hidden), by name.
    pub dropped: Vec<String>,
    /// The folders the new catalog could not load a skill from, each with the first reason.
    pub not_loaded: Vec<(PathBuf, String)>,
}

/// The provider in effect, swapped whole by reloads.
#[derive(Debug)]
pub struct LiveProvider {
    current: ArcSwap<SkillsProvider>,
    generation: AtomicU64,
    /// Reloads ([`LiveProvider::reload`]) that took effect, and those that failed.
    reloads_succeeded: AtomicU64,
    reloads_failed: AtomicU64,
    changes: broadcast::Sender<CatalogChange>,
}

/// How many catalog reloads were tried, by how they ended ([`LiveProvider::reloads`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReloadCounts {
    /// Reloads that took effect.
    pub succeeded: u64,
    /// Reloads that failed (the catalog in effect stayed).
    pub failed: u64,
}

impl LiveProvider {
    /// Serve `provider` until the first reload.
    #[must_use]
    pub fn new(provider: SkillsProvider) -> Arc<Self> {
        // The search index is built on a thread of its own, so that the first `find_skills`
        // finds it ready; a call before that waits for it.
        let catalog = Arc::clone(provider.catalog());
        let warming = std::thread::Builder::new()
            .name("search-index".to_owned())
            .spawn(move || {
                catalog.search_index();
            });
        if let Err(error) = warming {
            tracing::warn!("cannot build the search index ahead of use: {error}");
        }
        Arc::new(LiveProvider {
            current: ArcSwap::from_pointee(provider),
            generation: AtomicU64::new(0),
            reloads_succeeded: AtomicU64::new(0),
            reloads_failed: AtomicU64::new(0),
            changes: broadcast::channel(CHANGE_BACKLOG).0,
        })
    }

    /// The provider in effect now. Hold it for the whole of one request.
    #[must_use]
    pub fn current(&self) -> Arc<SkillsProvider> {
        self.current.load_full()
    }

    /// How many reloads have taken effect.
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// How many reloads were tried and how they ended (a reload is a new look at the roots;
    /// [`LiveProvider::replace`] alone is not counted).
    #[must_use]
    pub fn reloads(&self) -> ReloadCounts {
        ReloadCounts {
            succeeded: self.reloads_succeeded.load(Ordering::Relaxed),
            failed: self.reloads_failed.load(Ordering::Relaxed),
        }
    }

    /// Follow the reloads from now on.
    #[must_use]
    pub fn subscribe(&self) -> broadcast::Receiver<CatalogChange> {
        self.changes.subscribe()
    }

    /// Load the catalog again with `options` and put a provider over it in effect (the same
    /// executor, options and defined tools), keeping the last good copy of skills that broke.
    ///
    /// # Errors
    /// When the catalog cannot be loaded at all (an explicit root is gone, say); the provider
    /// in effect stays.
    pub fn reload(
        &self,
        options: &CatalogOptions,
        changed_paths: Vec<PathBuf>,
    ) -> Result<CatalogChange, ProviderError> {
        let previous = self.current();
        let catalog = match SkillCatalog::reload(options, previous.catalog()) {
            Ok(catalog) => catalog,
            Err(error) => {
                self.reloads_failed.fetch_add(1, Ordering::Relaxed);
                return Err(error.into());
            }
        };
        self.reloads_succeeded.fetch_add(1, Ordering::Relaxed);
        // Built here, off the request path, before the new catalog takes effect.
        catalog.search_index();
        Ok(self.replace(previous.with_catalog(Arc::new(catalog)), changed_paths))
    }

    /// Put `provider` in effect and tell the subscribers.
    pub fn replace(&self, provider: SkillsProvider, changed_paths: Vec<PathBuf>) -> CatalogChange {
        let visible = |provider: &SkillsProvider| -> BTreeSet<String> {
            provider
                .model_skills()
                .iter()
                .map(|skill| skill.name().to_owned())
                .collect()
        };
        let before = visible(&self.current());
        let after = visible(&provider);
        let not_loaded = provider
            .catalog()
            .skipped()
            .iter()
            .map(|skipped| {
                let reason = skipped
                    .diagnostics
                    .first()
                    .map(|diagnostic| diagnostic.message.clone())
                    .unwrap_or_default();
                (skipped.path.clone(), reason)
            })
            .collect();
        self.current.store(Arc::new(provider));
        let change = CatalogChange {
            generation: self.generation.fetch_add(1, Ordering::SeqCst) + 1,
            changed_paths,
            dropped: before.difference(&after).cloned().collect(),
            not_loaded,
        };
        // No subscribers is fine: nobody is connected.
        let _ = self.changes.send(change.clone());
        change
    }
}

/// Errors starting the watcher.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The operating system's file watcher could not be set up.
    #[error(
        "cannot start watching the skill roots for changes: {0} (start with --no-watch to serve without hot reload)"
    )]
    Start(notify::Error),
    /// A root could not be watched.
    #[error(
        "cannot watch `{path}` for changes: {source} (start with --no-watch to serve without hot reload)"
    )]
    Watch {
        /// The root.
        path: PathBuf,
        /// Why.
        source: notify::Error,
    },
}

/// Stops watching when dropped.
pub struct RootWatcher {
    _debouncer: notify_debouncer_full::Debouncer<
        notify::RecommendedWatcher,
        notify_debouncer_full::RecommendedCache,
    >,
    reloader: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for RootWatcher {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("RootWatcher")
            .finish_non_exhaustive()
    }
}

impl Drop for RootWatcher {
    fn drop(&mut self) {
        self.reloader.abort();
    }
}

/// Reload `live` whenever files under the roots of `options` change and then settle for
/// [`SETTLE_DELAY`]. Roots that do not exist are not watched. Reloads run on a blocking thread,
/// one at a time; changes that arrive during one are gathered into the next. Must be called
/// inside a tokio runtime.
///
/// # Errors
/// When the watcher cannot be set up or a root cannot be watched (out of inotify watches, say).
pub fn watch_roots(
    live: Arc<LiveProvider>,
    options: CatalogOptions,
) -> Result<RootWatcher, WatchError> {
    let (sender, mut receiver) = mpsc::unbounded_channel::<Vec<PathBuf>>();
    let mut debouncer = new_debouncer(
        SETTLE_DELAY,
        Some(DEBOUNCE_TICK),
        move |result: DebounceEventResult| match result {
            Ok(events) => {
                // An overflowed event queue asks for a rescan with no paths: reload anyway, so
                // the changes it lost are not left unseen until the next one.
                let rescan = events.iter().any(|event| event.need_rescan());
                let paths: Vec<PathBuf> = events
                    .into_iter()
                    .filter(|event| !event.kind.is_access())
                    .flat_map(|event| event.event.paths)
                    .collect();
                if rescan || !paths.is_empty() {
                    let _ = sender.send(paths);
                }
            }
            Err(errors) => {
                for error in errors {
                    tracing::warn!(%error, "file watcher error; changes may be missed until the next one");
                }
            }
        },
    )
    .map_err(WatchError::Start)?;
    for root in &options.roots {
        if !root.path.is_dir() {
            continue;
        }
        debouncer
            .watch(&root.path, RecursiveMode::Recursive)
            .map_err(|source| WatchError::Watch {
                path: root.path.clone(),
                source,
            })?;
    }
    let options = Arc::new(options);
    let reloader = tokio::spawn(async move {
        let mut last_reload: Option<tokio::time::Instant> = None;
        while let Some(mut paths) = receiver.recv().await {
            if let Some(last) = last_reload {
                tokio::time::sleep_until(last + MIN_RELOAD_GAP).await;
            }
            while let Ok(more) = receiver.try_recv() {
                paths.extend(more);
            }
            last_reload = Some(tokio::time::Instant::now());
            paths.sort();
            paths.dedup();
            let live = Arc::clone(&live);
            let options = Arc::clone(&options);
            let outcome = tokio::task::spawn_blocking(move || live.reload(&options, paths)).await;
            match outcome {
                Ok(Ok(change)) => tracing::info!(
                    generation = change.generation,
                    files = change.changed_paths.len(),
                    "skills reloaded"
                ),
                Ok(Err(error)) => {
                    tracing::warn!(%error, "reload failed; the skills loaded before are still served");
                }
                Err(error) => tracing::error!(%error, "reload stopped"),
            }
        }
    });
    Ok(RootWatcher {
        _debouncer: debouncer,
        reloader,
    })
}
