//! Reading a blob: its metadata record, a sample of its bytes (one ranged read of only the
//! bytes returned), or all of them as a stream.

use std::borrow::Cow;
use std::ops::Range;

use bytes::Bytes;
use object_store::ObjectStoreExt;
use object_store::path::Path as StorePath;

use super::ids::key;
use super::{BlobError, BlobMeta, BlobStore, storage};

/// Default number of bytes `read_blob` returns.
pub const DEFAULT_READ_BYTES: u64 = 2_000;
/// Most bytes one `read_blob` returns, whatever is asked.
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;
/// Largest metadata record read, in bytes (records are a few hundred bytes).
const MAX_META_BYTES: u64 = 64 * 1024;
/// How `read_blob` samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// The first bytes.
    Head,
    /// The last bytes.
    Tail,
    /// Everything (capped at [`MAX_READ_BYTES`]).
    Full,
}

impl ReadMode {
    /// Parse the protocol's mode names.
    ///
    /// # Errors
    /// For anything but `sample_head`, `sample_tail`, `full`.
    pub fn parse(mode: Option<&str>) -> Result<Self, BlobError> {
        match mode {
            None | Some("sample_head") => Ok(ReadMode::Head),
            Some("sample_tail") => Ok(ReadMode::Tail),
            Some("full") => Ok(ReadMode::Full),
            Some(other) => Err(BlobError::Invalid(format!(
                "parameter `mode` must be \"sample_head\", \"sample_tail\" or \"full\", not \"{other}\""
            ))),
        }
    }

    /// The bytes a read in this mode returns of a blob of `size` bytes: at most `max_bytes`
    /// (by default [`DEFAULT_READ_BYTES`] for samples, everything for `full`), never more than
    /// [`MAX_READ_BYTES`].
    #[must_use]
    pub fn range(self, size: u64, max_bytes: Option<u64>) -> Range<u64> {
        let wanted = match self {
            ReadMode::Full => max_bytes.unwrap_or(MAX_READ_BYTES),
            _ => max_bytes.unwrap_or(DEFAULT_READ_BYTES),
        }
        .min(MAX_READ_BYTES);
        match self {
            ReadMode::Head | ReadMode::Full => 0..wanted.min(size),
            ReadMode::Tail => size.saturating_sub(wanted)..size,
        }
    }
}

/// Part of a blob, as [`BlobStore::read_range`] read it: the bytes, and where they are in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobSample {
    /// The blob's metadata.
    pub meta: BlobMeta,
    /// Where the bytes start in the blob.
    pub offset: u64,
    /// Whether they are less than the whole blob.
    pub truncated: bool,
    /// The bytes.
    pub bytes: Bytes,
}

impl BlobSample {
    /// The bytes as text, when they are text: UTF-8, or a sample of text whose ends cut a
    /// character (the cut characters become U+FFFD). `None` for binary bytes.
    #[must_use]
    pub fn text(&self) -> Option<Cow<'_, str>> {
        match std::str::from_utf8(&self.bytes) {
            Ok(text) => Some(Cow::Borrowed(text)),
            Err(_) if self.truncated && !looks_binary(&self.bytes) => {
                Some(String::from_utf8_lossy(&self.bytes))
            }
            Err(_) => None,
        }
    }
}

impl BlobStore {
    /// A blob's metadata.
    ///
    /// # Errors
    /// [`BlobError::NotFound`] for unknown or malformed ids.
    pub async fn meta(&self, blob_id: &str) -> Result<BlobMeta, BlobError> {
        let id = key(blob_id).ok_or_else(|| BlobError::NotFound(blob_id.to_owned()))?;
        let record = match self
            .store
            .get(&StorePath::from(format!("meta/{id}.json")))
            .await
        {
            // A record is a few hundred bytes; a larger one was not written by this version
            // (kinds were not bounded before) and is not read into every answer.
            Ok(result) if result.meta.size > MAX_META_BYTES => {
                return Err(storage(format!(
                    "the metadata of `{blob_id}` is {} bytes, more than the {MAX_META_BYTES} a record may have; the blob cannot be read",
                    result.meta.size
                )));
            }
            Ok(result) => result.bytes().await.map_err(storage)?,
            Err(object_store::Error::NotFound { .. }) => {
                return Err(BlobError::NotFound(blob_id.to_owned()));
            }
            Err(error) => return Err(storage(error)),
        };
        serde_json::from_slice(&record).map_err(storage)
    }

    /// Read the bytes `range` (as [`ReadMode::range`] gives it) of the blob `meta` describes,
    /// fetching only those.
    ///
    /// # Errors
    /// Unknown blob, or storage failure.
    pub async fn read_range(
        &self,
        meta: &BlobMeta,
        range: Range<u64>,
    ) -> Result<BlobSample, BlobError> {
        let id = key(&meta.blob_id).ok_or_else(|| BlobError::NotFound(meta.blob_id.clone()))?;
        let size = meta.size_bytes;
        let range = range.start.min(size)..range.end.min(size);
        let bytes = if range.is_empty() {
            Bytes::new()
        } else {
            match self
                .store
                .get_range(&StorePath::from(format!("data/{id}")), range.clone())
                .await
            {
                Ok(bytes) => bytes,
                // The expiry sweep removed it after its metadata was read.
                Err(object_store::Error::NotFound { .. }) => {
                    return Err(BlobError::NotFound(meta.blob_id.clone()));
                }
                Err(error) => return Err(storage(error)),
            }
        };
        crate::metrics::blob_bytes_read(bytes.len() as u64);
        Ok(BlobSample {
            meta: meta.clone(),
            offset: range.start,
            truncated: (range.end - range.start) < size,
            bytes,
        })
    }

    /// The bytes of the blob `meta` describes, as a stream of chunks: for downloads, which
    /// must not hold a whole blob in memory.
    ///
    /// # Errors
    /// Unknown blob (swept since its metadata was read), or storage failure.
    pub async fn stream(
        &self,
        meta: &BlobMeta,
    ) -> Result<futures_util::stream::BoxStream<'static, Result<Bytes, BlobError>>, BlobError> {
        use futures_util::{StreamExt, TryStreamExt};
        let id = key(&meta.blob_id).ok_or_else(|| BlobError::NotFound(meta.blob_id.clone()))?;
        match self.store.get(&StorePath::from(format!("data/{id}"))).await {
            Ok(result) => Ok(result
                .into_stream()
                .inspect_ok(|chunk| crate::metrics::blob_bytes_read(chunk.len() as u64))
                .map_err(storage)
                .boxed()),
            Err(object_store::Error::NotFound { .. }) => {
                Err(BlobError::NotFound(meta.blob_id.clone()))
            }
            Err(error) => Err(storage(error)),
        }
    }
}

fn looks_binary(bytes: &[u8]) -> bool {
    bytes.contains(&0)
}

#[cfg(test)]
#[path = "reading_tests.rs"]
pub(super) mod tests;
