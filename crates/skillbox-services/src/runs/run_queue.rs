//! The run queue: [`RunGate`] lets [`RunLimits::max_concurrent`] runs execute at once and
//! [`RunLimits::max_queued`] wait for a turn; past that a caller gets the busy error at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::limits::RunLimits;
use crate::error::ServiceError;

/// The bounded run queue: a semaphore for the runs executing, a counter for those waiting.
#[derive(Debug)]
pub struct RunGate {
    limits: RunLimits,
    running: Arc<Semaphore>,
    waiting: AtomicUsize,
}

impl RunGate {
    /// A gate with these limits (at least one run at a time).
    #[must_use]
    pub fn new(limits: RunLimits) -> Self {
        let limits = RunLimits {
            max_concurrent: limits.max_concurrent.max(1),
            ..limits
        };
        RunGate {
            running: Arc::new(Semaphore::new(limits.max_concurrent)),
            waiting: AtomicUsize::new(0),
            limits,
        }
    }

    /// The limits in force.
    #[must_use]
    pub fn limits(&self) -> RunLimits {
        self.limits
    }

    /// Runs executing now.
    #[must_use]
    pub fn running(&self) -> usize {
        self.limits
            .max_concurrent
            .saturating_sub(self.running.available_permits())
    }

    /// Runs waiting for a turn now (a caller being refused is not one, even for the moment it
    /// is counted while it learns the queue is full).
    #[must_use]
    pub fn queued(&self) -> usize {
        self.waiting
            .load(Ordering::SeqCst)
            .min(self.limits.max_queued)
    }

    /// Wait for a turn, or fail at once with the busy error when the queue is full.
    pub async fn enter(&self) -> Result<OwnedSemaphorePermit, ServiceError> {
        if let Ok(permit) = Arc::clone(&self.running).try_acquire_owned() {
            return Ok(permit);
        }
        let queued = self.waiting.fetch_add(1, Ordering::SeqCst);
        let _leave = WaitingGuard(&self.waiting);
        if queued >= self.limits.max_queued {
            crate::metrics::run_rejected();
            return Err(ServiceError::busy(format!(
                "the server is busy: {} runs are executing and {} are waiting; retry in a moment",
                self.limits.max_concurrent, self.limits.max_queued
            )));
        }
        Arc::clone(&self.running)
            .acquire_owned()
            .await
            .map_err(|_| ServiceError::internal("the run queue is closed (the server is stopping)"))
    }
}

struct WaitingGuard<'a>(&'a AtomicUsize);

impl Drop for WaitingGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
