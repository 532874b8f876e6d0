//! Shares of a byte budget that blob reads take from before they fetch anything: a request of
//! a few hundred bytes can ask for a 16 MiB answer, so a door answering many callers at once
//! bounds what its answers may hold together. The JSON-RPC server and the MCP door take from one
//! budget (the server's large-body budget).

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::{ReadBudget, ServiceError};

/// Bytes of blob reads one request (or batch) may return without taking from the budget, as a
/// body of this size may be received without it: the usual small samples never touch it.
pub const FREE_READ_BYTES: u64 = 1024 * 1024;
/// The busy error for a request the large-body budget cannot cover now.
pub fn budget_spent(what: &str, budget_bytes: usize) -> ServiceError {
    ServiceError::busy(format!(
        "the server is busy: {what} share a budget of {budget_bytes} bytes, which other requests hold now; retry in a moment"
    ))
}

/// The share of the large-body budget one exchange holds for its answer.
#[derive(Debug)]
pub struct BudgetShare {
    budget: Arc<Semaphore>,
    budget_bytes: usize,
    /// What may still be read without taking from the budget.
    free_bytes: u64,
    permits: Option<OwnedSemaphorePermit>,
}

impl BudgetShare {
    /// An empty share of `budget` (whose size is `budget_bytes`).
    pub fn new(budget: &Arc<Semaphore>, budget_bytes: usize) -> Self {
        BudgetShare {
            budget: Arc::clone(budget),
            budget_bytes,
            free_bytes: FREE_READ_BYTES,
            permits: None,
        }
    }
}

impl ReadBudget for BudgetShare {
    /// Cover `bytes` more of blob reads: from what is still free, then from the budget, at once
    /// or not at all.
    ///
    /// # Errors
    /// Busy (-32000 with `retry_after_ms`) when the budget cannot cover them now.
    fn take(&mut self, bytes: u64) -> Result<(), ServiceError> {
        let free = bytes.min(self.free_bytes);
        let bytes = bytes - free;
        if bytes == 0 {
            self.free_bytes -= free;
            return Ok(());
        }
        let refused = || {
            tracing::warn!(bytes, "blob read refused: the large-body budget is spent");
            budget_spent(
                "large request bodies and the bytes blob reads return",
                self.budget_bytes,
            )
        };
        let count = u32::try_from(bytes).map_err(|_| refused())?;
        let taken = Arc::clone(&self.budget)
            .try_acquire_many_owned(count)
            .map_err(|_| refused())?;
        match &mut self.permits {
            Some(permits) => permits.merge(taken),
            None => self.permits = Some(taken),
        }
        self.free_bytes -= free;
        Ok(())
    }
}
