//! Every model response an eval receives, kept under the digest of the request that asked for
//! it: a re-run with the same inputs asks the model nothing and gets the same answers, so
//! results are reproducible and CI pays for a model only when a skill, a query or the model
//! changed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::Serialize;
use sha2::{Digest, Sha256};
use skillbox_agent::{
    ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse, WireFormat,
};
use skillbox_tools::ToolSpec;

/// The cache's folder under the user's cache folder.
pub const RESPONSE_CACHE_FOLDER: &str = "eval-responses";
/// Version of the key's layout: a change here is a new key for every request.
const KEY_VERSION: u32 = 1;
/// Largest cached response read back.
const MAX_CACHED_RESPONSE_BYTES: u64 = 64 * 1024 * 1024;

/// Where responses are kept, and whether they are read.
#[derive(Debug, Clone)]
pub struct ResponseCache {
    folder: PathBuf,
    /// Answer from the cache (false with `--no-cache`: ask again, and keep the new answer).
    read: bool,
    counters: Arc<CacheCounters>,
}

/// What a run asked of the model and of the cache.
#[derive(Debug, Default)]
struct CacheCounters {
    hits: AtomicU64,
    misses: AtomicU64,
    /// Time spent waiting for the model (misses only), in microseconds.
    model_micros: AtomicU64,
}

/// A snapshot of [`CacheCounters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CacheUse {
    /// Requests answered from the cache.
    pub hits: u64,
    /// Requests sent to the model.
    pub misses: u64,
    /// Milliseconds spent waiting for the model.
    pub model_ms: u64,
}

impl ResponseCache {
    /// A cache in `folder`; `read` false asks the model every time (and refreshes the cache).
    #[must_use]
    pub fn new(folder: impl Into<PathBuf>, read: bool) -> Self {
        ResponseCache {
            folder: folder.into(),
            read,
            counters: Arc::default(),
        }
    }

    /// The folder.
    #[must_use]
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Hits, misses and model time so far.
    #[must_use]
    pub fn usage(&self) -> CacheUse {
        CacheUse {
            hits: self.counters.hits.load(Ordering::Relaxed),
            misses: self.counters.misses.load(Ordering::Relaxed),
            model_ms: self.counters.model_micros.load(Ordering::Relaxed) / 1000,
        }
    }

    fn path_of(&self, key: &str) -> PathBuf {
        self.folder.join(format!("{key}.json"))
    }

    fn load(&self, key: &str) -> Option<ModelResponse> {
        use std::io::Read;
        if !self.read {
            return None;
        }
        let path = self.path_of(key);
        let file = skillbox_core::source::open_regular_file(&path).ok()?;
        let mut text = Vec::new();
        file.take(MAX_CACHED_RESPONSE_BYTES)
            .read_to_end(&mut text)
            .ok()?;
        match serde_json::from_slice(&text) {
            Ok(response) => Some(response),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "unreadable cached response; asking the model again");
                None
            }
        }
    }

    fn store(&self, key: &str, response: &ModelResponse) {
        let result = serde_json::to_vec(response)
            .map_err(|error| error.to_string())
            .and_then(|bytes| {
                crate::report::write_atomically(&self.path_of(key), &bytes)
                    .map_err(|error| error.to_string())
            });
        if let Err(error) = result {
            tracing::warn!(folder = %self.folder.display(), %error, "cannot keep a model response in the eval cache");
        }
    }
}

/// The parts of a request its answer depends on, hashed into the cache key.
#[derive(Serialize)]
struct RequestKey<'a> {
    version: u32,
    format: &'a str,
    endpoint: &'a str,
    model: &'a str,
    system: &'a str,
    messages: &'a [skillbox_agent::Message],
    tools: &'a [ToolSpec],
    max_output_tokens: u32,
    temperature: Option<f32>,
    sample: u32,
}

/// The cache key of `request` sent to `endpoint` for sample `sample`.
#[must_use]
pub fn request_key(
    format: WireFormat,
    endpoint: &str,
    request: &ModelRequest<'_>,
    sample: u32,
) -> String {
    let key = RequestKey {
        version: KEY_VERSION,
        format: format.name(),
        endpoint,
        model: request.model,
        system: request.system,
        messages: request.messages,
        tools: request.tools,
        max_output_tokens: request.max_output_tokens,
        temperature: request.temperature,
        sample,
    };
    let mut hasher = Sha256::new();
    // Serializing these types cannot fail (strings, numbers and maps with string keys).
    if let Ok(bytes) = serde_json::to_vec(&key) {
        hasher.update(&bytes);
    }
    hex::encode(hasher.finalize())
}

/// A model client answering from a [`ResponseCache`] when it can, and asking `inner` (and
/// keeping the answer) when it cannot. `sample` tells repeats of the same request apart.
pub struct CachedModel {
    inner: Arc<dyn ModelClient>,
    endpoint: String,
    cache: ResponseCache,
    sample: u32,
}

impl std::fmt::Debug for CachedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedModel")
            .field("endpoint", &self.endpoint)
            .field("sample", &self.sample)
            .finish_non_exhaustive()
    }
}

impl CachedModel {
    /// `inner` at `endpoint` (part of the key: the same model name on two servers is two
    /// models), answering from `cache` as sample `sample`.
    #[must_use]
    pub fn new(
        inner: Arc<dyn ModelClient>,
        endpoint: impl Into<String>,
        cache: ResponseCache,
        sample: u32,
    ) -> Self {
        CachedModel {
            inner,
            endpoint: endpoint.into(),
            cache,
            sample,
        }
    }
}

#[async_trait::async_trait]
impl ModelClient for CachedModel {
    fn format(&self) -> WireFormat {
        self.inner.format()
    }

    async fn respond(
        &self,
        request: &ModelRequest<'_>,
        events: &mut (dyn FnMut(ModelEvent) + Send),
    ) -> Result<ModelResponse, ModelError> {
        let key = request_key(self.inner.format(), &self.endpoint, request, self.sample);
        if let Some(response) = self.cache.load(&key) {
            self.cache.counters.hits.fetch_add(1, Ordering::Relaxed);
            if !response.content.is_empty() {
                events(ModelEvent::TextDelta(response.content.clone()));
            }
            return Ok(response);
        }
        self.cache.counters.misses.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let result = self.inner.respond(request, events).await;
        let waited = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.cache
            .counters
            .model_micros
            .fetch_add(waited, Ordering::Relaxed);
        // Only finished answers are kept: an answer cut at the token limit is kept too (it is
        // what the model says to this request), a failure never is.
        if let Ok(response) = &result {
            self.cache.store(&key, response);
        }
        result
    }
}
