//! What the loop needs of a model: one call per round, streamed. [`crate::http`] implements it
//! over HTTP for the three wire formats; tests implement it with scripted answers.

use crate::model::{ModelError, ModelEvent, ModelRequest, ModelResponse};
use crate::wire::WireFormat;

/// A model behind some API. The loop calls it once per round.
#[async_trait::async_trait]
pub trait ModelClient: Send + Sync {
    /// The wire format spoken (decides how replayed items are reused).
    fn format(&self) -> WireFormat;

    /// Send one request and stream the answer, reporting text pieces and retries to
    /// `events` as they happen.
    ///
    /// # Errors
    /// A [`ModelError`] once retries are spent or when retrying cannot help.
    async fn respond(
        &self,
        request: &ModelRequest<'_>,
        events: &mut (dyn FnMut(ModelEvent) + Send),
    ) -> Result<ModelResponse, ModelError>;
}
