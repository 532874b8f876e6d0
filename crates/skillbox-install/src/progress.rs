//! Progress of fetches, reported to whoever shows it (the CLI draws bars on a terminal).

use std::sync::Arc;

/// What happened to one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgressEvent {
    /// A task started: its id, what it is, and its size in bytes when known.
    Started {
        /// The task.
        id: u64,
        /// What it is (`download https://…`, `git fetch https://…`).
        label: String,
        /// Bytes expected, when known.
        total: Option<u64>,
    },
    /// Bytes arrived.
    Advanced {
        /// The task.
        id: u64,
        /// How many more.
        bytes: u64,
    },
    /// The task ended.
    Finished {
        /// The task.
        id: u64,
    },
}

/// Where progress goes; the default drops it.
#[derive(Clone, Default)]
pub struct Progress {
    sink: Option<Arc<dyn Fn(ProgressEvent) + Send + Sync>>,
    next: Arc<std::sync::atomic::AtomicU64>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Progress")
            .field("reported", &self.sink.is_some())
            .finish()
    }
}

impl Progress {
    /// Progress sent to `sink`.
    #[must_use]
    pub fn to(sink: impl Fn(ProgressEvent) + Send + Sync + 'static) -> Progress {
        Progress {
            sink: Some(Arc::new(sink)),
            next: Arc::default(),
        }
    }

    /// Start a task.
    pub(crate) fn start(&self, label: &str, total: Option<u64>) -> ProgressTask {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some(sink) = &self.sink {
            sink(ProgressEvent::Started {
                id,
                label: label.to_owned(),
                total,
            });
        }
        ProgressTask {
            id,
            sink: self.sink.clone(),
        }
    }
}

/// One task's handle; it reports its end when dropped.
pub(crate) struct ProgressTask {
    id: u64,
    sink: Option<Arc<dyn Fn(ProgressEvent) + Send + Sync>>,
}

impl ProgressTask {
    /// Bytes arrived.
    pub(crate) fn advance(&self, bytes: u64) {
        if let Some(sink) = &self.sink {
            sink(ProgressEvent::Advanced { id: self.id, bytes });
        }
    }

    /// The task ended.
    pub(crate) fn finish(self) {}
}

impl Drop for ProgressTask {
    fn drop(&mut self) {
        if let Some(sink) = &self.sink {
            sink(ProgressEvent::Finished { id: self.id });
        }
    }
}
