//! The blob store: large content kept out of the conversation, referenced as `blob:<id>`.
//!
//! It is built on the `object_store` crate: a local folder (the default, under the data folder)
//! or a bucket of an object store shared by several replicas (`--blob-store s3://bucket/prefix`,
//! see [`crate::blob_location`]). The same guarantees hold on both:
//!
//! - **An acknowledged blob is whole, for every reader.** Each blob is two objects: its bytes
//!   (`data/<id>`), then a small metadata object (`meta/<id>.json`), the commit record. The
//!   record is written only once the bytes are complete, and a create answers only after the
//!   record is written, so any replica that finds the record finds all the bytes.
//! - **A partial upload is never visible.** Locally each object is staged, fsynced and renamed;
//!   on an object store the bytes go up in one PUT or in a multipart upload, which the store
//!   shows only once it is completed. A writer killed midway leaves either nothing visible or
//!   bytes without a record, which no id resolves to.
//! - **Reads fetch only what they return**: a sample is one ranged read (`get_range`), so the
//!   tail of a 1 GiB blob costs one request for its last bytes.
//! - **Expiry may run on every replica at once.** [`BlobStore::sweep`] removes records older
//!   than the time to keep blobs, then their bytes; an object another replica removed first
//!   is fine (a local store reports it not found, S3 a successful delete), and any other
//!   failure leaves the object for a later sweep. Bytes
//!   without a record are removed only when older than the orphan grace period (an hour),
//!   and a create gives up rather than write its record after a quarter of that period, so a
//!   sweep never removes the bytes of an upload that is still going to commit, whichever
//!   replica runs it. Locally the sweep also removes the staged files of uploads a killed
//!   server left; on an object store the parts of such uploads are invisible and are
//!   removed by the bucket's lifecycle rule (`AbortIncompleteMultipartUpload`, see
//!   docs/deploy.md).
//!
//! A local store is private to the runtime's user: its folders are created 0700 and every file
//! is made 0600 as soon as it is written (inside folders no one else can enter). Runs, which
//! execute as other users, get their own copies of the blobs they read ([`BlobStore::copy_for_run`]).
//!
//! The code is by concept: [`backends`] opens a store (a local folder or a bucket), [`ids`]
//! maps blob ids to object keys, [`writing`] stores blobs, [`reading`] reads a blob's
//! metadata and samples of its bytes, [`run_inputs`] copies blobs for runs, [`sweep`] expires
//! them, and [`local_folder`] keeps a local store's folder private and its own.

mod backends;
mod ids;
mod local_folder;
mod reading;
mod run_inputs;
mod sweep;
mod writing;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use object_store::ObjectStore;
use serde::{Deserialize, Serialize};

use crate::blob_location::RemoteLocation;

pub(crate) use local_folder::refuse_foreign_entries;
pub use reading::{BlobSample, DEFAULT_READ_BYTES, MAX_READ_BYTES, ReadMode};
pub use writing::MAX_KIND_BYTES;

/// Default time a blob is kept.
pub const DEFAULT_BLOB_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// How long bytes without a commit record are kept before a sweep removes them: they may
/// belong to an upload in progress, on this replica or another.
pub const DEFAULT_ORPHAN_GRACE: Duration = Duration::from_secs(60 * 60);
/// Mode of the store's folders: the runtime's user only.
pub const PRIVATE_DIR_MODE: u32 = 0o700;
/// Mode of the store's files: the runtime's user only.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// A blob store failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BlobError {
    /// The id is malformed or names no blob.
    #[error("no blob `{0}`; create one with create_blob and pass the id it returns")]
    NotFound(String),
    /// The request is malformed (bad encoding, bad mode).
    #[error("{0}")]
    Invalid(String),
    /// Storage failed.
    #[error("blob storage failed: {0}")]
    Storage(String),
}

/// What is recorded about a blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlobMeta {
    /// `blob:<id>`.
    pub blob_id: String,
    /// MIME type given at creation.
    pub kind: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Milliseconds since the Unix epoch.
    pub created_ms: u128,
}

/// Blobs on an object store.
#[derive(Debug, Clone)]
pub struct BlobStore {
    store: Arc<dyn ObjectStore>,
    ttl: Duration,
    /// How old bytes without a record must be before a sweep removes them; a create refuses to
    /// commit after a quarter of it (see the module's documentation).
    orphan_grace: Duration,
    /// The folder of a local store.
    local_root: Option<PathBuf>,
    /// The bucket of a remote store, for messages.
    remote: Option<RemoteLocation>,
}

pub(super) fn now_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis())
        .unwrap_or(0)
}

pub(super) fn storage(error: impl std::fmt::Display) -> BlobError {
    BlobError::Storage(error.to_string())
}
