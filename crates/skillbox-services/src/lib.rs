//! skillbox-services: the run and blob services of the Skills Protocol (`execute_skill`,
//! `run_code`, `create_blob`, `read_blob`), below every door. The data folder, the blob store,
//! the bounded run queue and the Run objects live here, so the JSON-RPC server, the LLM tool
//! dispatcher and `skillbox call` answer these tools with the same code.
//!
//! The services know no wire: parameters come as typed structs ([`protocol`]) the door policy
//! decoded, answers go back as typed values (a blob's metadata, a [`BlobSample`]) or, for runs,
//! as the Run object's JSON, and failures as a [`ServiceError`] each door maps to its own
//! terms. Which skills a
//! run may use is the caller's to say ([`RunContext`]): the services never decide visibility.

pub mod blob_location;
pub mod blobs;
pub mod blocking;
pub mod budget;
pub mod credentials;
pub mod data_dir;
pub mod error;
pub mod metrics;
pub mod params;
pub mod protocol;
pub mod runs;
pub mod tls;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use skillbox_core::Skill;
use skillbox_exec::{Executor, SkillCopy};

pub use blob_location::BlobLocation;
pub use blobs::{BlobError, BlobMeta, BlobSample, BlobStore, ReadMode};
pub use blocking::BlockingPool;
pub use budget::BudgetShare;
pub use data_dir::DataDir;
pub use error::{RETRY_AFTER_MS, ServiceError};
pub use protocol::{CreateBlobParams, ExecuteSkillParams, ReadBlobParams, RunCodeParams};
pub use runs::{PlannedRun, RunGate, RunLimits};

/// What a run needs from its caller: the skills a protocol client may name, and the executor
/// that runs them.
pub trait RunContext: Sync {
    /// The skill a protocol client may use under this name (and version text, when given).
    /// A skill hidden from models must be answered exactly as a name the catalog does not
    /// hold, so that no answer tells the two apart.
    ///
    /// # Errors
    /// The message for the caller: what was not found and what may help find it.
    fn find_skill(&self, name: &str, version: Option<&str>) -> Result<Arc<Skill>, String>;

    /// Which copy of its name `skill` (as [`RunContext::find_skill`] gave it) is: the one in
    /// effect (the name without a version gives it: the latest root's), or another. Secrets
    /// the operator granted to the name reach only the copy in effect; another version asked
    /// for by number (a copy in an earlier, less trusted root, say) runs without them.
    fn copy_of(&self, skill: &Arc<Skill>) -> SkillCopy;

    /// The executor that runs the skills' code.
    fn executor(&self) -> &Arc<Executor>;
}

/// What blob reads may return: each read takes the bytes it will return before fetching them.
pub trait ReadBudget: Send {
    /// Take `bytes` more, at once or not at all.
    ///
    /// # Errors
    /// Usually [`ServiceError::Busy`], when the budget cannot cover them now.
    fn take(&mut self, bytes: u64) -> Result<(), ServiceError>;
}

/// No budget: reads are bounded by [`blobs::MAX_READ_BYTES`] alone. For callers that answer
/// one call at a time (a model's tool call, `skillbox call`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Unbudgeted;

impl ReadBudget for Unbudgeted {
    fn take(&mut self, _bytes: u64) -> Result<(), ServiceError> {
        Ok(())
    }
}

/// The run and blob services over one data folder: the blob store and the folder where runs
/// get their input copies. Clones share the store. The run queue is the door policy's: a run
/// is planned here, admitted there, and run here.
#[derive(Debug, Clone)]
pub struct Services {
    blobs: BlobStore,
    /// Bytes of input blobs one run may read in all ([`RunLimits::max_input_bytes`]).
    max_input_bytes: u64,
    run_inputs: PathBuf,
    /// The data folder itself (`skillbox eval` writes its reports in `evals/` there).
    data_folder: PathBuf,
    /// The last [`MAX_RECENT_RUNS`] Run objects, newest last, for the web app's runs page.
    recent: Arc<std::sync::Mutex<std::collections::VecDeque<Value>>>,
}

/// Run objects [`Services::recent_runs`] keeps.
pub const MAX_RECENT_RUNS: usize = 200;

impl Services {
    /// The services of an opened data folder; runs read at most `limits.max_input_bytes` of
    /// input blobs each.
    #[must_use]
    pub fn new(data: &DataDir, limits: RunLimits) -> Self {
        Services {
            blobs: data.blobs().clone(),
            max_input_bytes: limits.max_input_bytes,
            run_inputs: data.run_inputs().to_path_buf(),
            data_folder: data.root().to_path_buf(),
            recent: Arc::default(),
        }
    }

    /// The same store and input folder, runs reading at most `limits.max_input_bytes` of
    /// inputs each; the recent runs are kept.
    #[must_use]
    pub fn new_like(services: &Services, limits: RunLimits) -> Self {
        Services {
            max_input_bytes: limits.max_input_bytes,
            ..services.clone()
        }
    }

    /// The blob store.
    #[must_use]
    pub fn blobs(&self) -> &BlobStore {
        &self.blobs
    }

    /// The last Run objects `execute_skill` and `run_code` answered, newest first (at most
    /// [`MAX_RECENT_RUNS`], kept in memory only), each as `{finished_ms, method, skill, run}`.
    #[must_use]
    pub fn recent_runs(&self) -> Vec<Value> {
        self.recent
            .lock()
            .map(|recent| recent.iter().rev().cloned().collect())
            .unwrap_or_default()
    }

    /// Remember a Run object for [`Services::recent_runs`], with when it ended, the method
    /// and what it ran: `{finished_ms, method, skill, run}`; and time it for the metrics.
    pub(crate) fn remember_run(&self, method: &str, skill: Option<&str>, run: &Value) {
        crate::metrics::run_finished(run);
        let entry = json!({
            "finished_ms": u64::try_from(skillbox_exec::audit::now_ms()).unwrap_or(u64::MAX),
            "method": method,
            "skill": skill,
            "run": run,
        });
        if let Ok(mut recent) = self.recent.lock() {
            if recent.len() >= MAX_RECENT_RUNS {
                recent.pop_front();
            }
            recent.push_back(entry);
        }
    }

    /// The data folder the services were made over.
    #[must_use]
    pub fn data_folder(&self) -> &Path {
        &self.data_folder
    }

    /// Where each run's copies of its input blobs are made (`<data-dir>/run-inputs`).
    #[must_use]
    pub fn run_inputs(&self) -> &Path {
        &self.run_inputs
    }

    /// `create_blob`: store `content` (text, or base64 when `encoding` says so) and answer
    /// the new blob's metadata. The content is taken as a string, not as a JSON object, so a
    /// door may read tens of MiB of it straight from a request body.
    ///
    /// # Errors
    /// A bad `kind` or `encoding`, content that is not base64, or storage failure.
    pub async fn create_blob(
        &self,
        content: Cow<'_, str>,
        kind: &str,
        encoding: Option<&str>,
    ) -> Result<BlobMeta, ServiceError> {
        self.blobs
            .create(content, kind, encoding)
            .await
            .map_err(blob_error)
    }

    /// `create_blob {content, kind, encoding?}` from its decoded parameters.
    ///
    /// # Errors
    /// As [`Services::create_blob`].
    pub async fn create_blob_with(
        &self,
        params: CreateBlobParams<'_>,
    ) -> Result<BlobMeta, ServiceError> {
        let encoding = params.encoding.map(|encoding| encoding.0);
        self.create_blob(params.content.0, &params.kind.0, encoding.as_deref())
            .await
    }

    /// `read_blob {blob_id, mode?, max_bytes?}`: the blob's metadata first, then the bytes
    /// the read returns are taken from `budget`, and only then fetched.
    ///
    /// # Errors
    /// Bad parameters, an unknown blob, a spent budget, or storage failure.
    pub async fn read_blob(
        &self,
        params: ReadBlobParams,
        budget: &mut dyn ReadBudget,
    ) -> Result<BlobSample, ServiceError> {
        let mode = ReadMode::parse(params.mode.as_deref()).map_err(blob_error)?;
        let max_bytes = params.max_bytes.map(|bytes| bytes.0);
        let meta = self.blobs.meta(&params.blob_id).await.map_err(blob_error)?;
        let range = mode.range(meta.size_bytes, max_bytes);
        budget.take(range.end - range.start)?;
        self.blobs
            .read_range(&meta, range)
            .await
            .map_err(blob_error)
    }
}

/// A blob store failure as the caller sees it: its own mistakes named, storage details logged.
fn blob_error(error: BlobError) -> ServiceError {
    match error {
        BlobError::NotFound(_) | BlobError::Invalid(_) => {
            ServiceError::invalid_params(error.to_string())
        }
        BlobError::Storage(_) => ServiceError::internal_failure("blob storage failed", &error),
    }
}
