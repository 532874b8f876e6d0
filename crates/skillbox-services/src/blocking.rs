//! The blocking pool: work that touches the disk (skill files, transcripts, the audit log)
//! runs on tokio's blocking threads, never on the few async threads, with a bounded number at
//! once and a time budget. A read held up by a stalled file system (a FIFO, a hung mount) is
//! given up after the budget while the server goes on answering; its thread still holds its
//! place until it returns, so stuck reads take at most [`MAX_BLOCKING_IN_FLIGHT`] threads.
//! Every door shares one pool.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

/// Pieces of blocking work in flight at once.
pub const MAX_BLOCKING_IN_FLIGHT: usize = 32;
/// Longest a piece of blocking work may take, waiting for its place included.
pub const DEFAULT_BLOCKING_BUDGET: Duration = Duration::from_secs(10);

/// Why blocking work gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BlockingError {
    /// It did not finish (or start) within the budget.
    #[error("did not finish within {} ms", budget.as_millis())]
    OverBudget {
        /// The budget.
        budget: Duration,
    },
    /// The work panicked or the runtime is shutting down.
    #[error("the work stopped: {0}")]
    Stopped(String),
}

/// Places for blocking work, and how long each may take. Clones share the places.
#[derive(Debug, Clone)]
pub struct BlockingPool {
    places: Arc<Semaphore>,
    budget: Duration,
}

impl Default for BlockingPool {
    fn default() -> Self {
        BlockingPool::new(MAX_BLOCKING_IN_FLIGHT, DEFAULT_BLOCKING_BUDGET)
    }
}

impl BlockingPool {
    /// A pool of `places` (at least one) with this budget per piece of work.
    #[must_use]
    pub fn new(places: usize, budget: Duration) -> Self {
        BlockingPool {
            places: Arc::new(Semaphore::new(places.max(1))),
            budget,
        }
    }

    /// The time budget of one piece of work.
    #[must_use]
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Run `work` on a blocking thread once a place is free, within the budget.
    ///
    /// # Errors
    /// [`BlockingError::OverBudget`] when no place came free, or the work did not finish,
    /// within the budget; [`BlockingError::Stopped`] when it panicked.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, BlockingError> {
        let over_budget = || BlockingError::OverBudget {
            budget: self.budget,
        };
        let deadline = tokio::time::Instant::now() + self.budget;
        let place = tokio::time::timeout_at(deadline, Arc::clone(&self.places).acquire_owned())
            .await
            .map_err(|_| over_budget())?
            .map_err(|_| BlockingError::Stopped("the pool is closed".to_owned()))?;
        let task = tokio::task::spawn_blocking(move || {
            let _place = place;
            work()
        });
        match tokio::time::timeout_at(deadline, task).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(error)) => Err(BlockingError::Stopped(error.to_string())),
            Err(_) => {
                tracing::warn!(
                    budget_ms = self.budget.as_millis(),
                    "blocking work was given up after its budget"
                );
                Err(over_budget())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_past_its_budget_is_given_up_and_its_place_held() {
        let pool = BlockingPool::new(1, Duration::from_millis(50));
        let (release, held) = std::sync::mpsc::channel::<()>();
        let stuck = pool
            .run(move || {
                let _ = held.recv();
            })
            .await;
        assert!(matches!(stuck, Err(BlockingError::OverBudget { .. })));
        // The stuck work still holds the only place: the next waits and is given up too.
        assert!(matches!(
            pool.run(|| 1).await,
            Err(BlockingError::OverBudget { .. })
        ));
        release.send(()).unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(pool.run(|| 2).await, Ok(2));
    }
}
