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

use std::borrow::Cow;
use std::ops::Range;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::blob_location::RemoteLocation;

/// Default number of bytes `read_blob` returns.
pub const DEFAULT_READ_BYTES: u64 = 2_000;
/// Most bytes one `read_blob` returns, whatever is asked.
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;
/// Longest `kind` (a MIME type) accepted, in bytes. Real types are far shorter; the kind is
/// stored in the blob's metadata and repeated in every `read_blob` answer, so an unbounded one
/// would let a tiny request ask for a huge answer.
pub const MAX_KIND_BYTES: usize = 255;
/// Largest metadata record read, in bytes (records are a few hundred bytes).
const MAX_META_BYTES: u64 = 64 * 1024;
/// Bytes per part when a blob is uploaded in parts.
const UPLOAD_CHUNK: usize = 8 * 1024 * 1024;
/// Bytes read at a time when a blob is stored from a reader.
const READ_CHUNK: usize = 1024 * 1024;
/// Default time a blob is kept.
pub const DEFAULT_BLOB_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// How long bytes without a commit record are kept before a sweep removes them: they may
/// belong to an upload in progress, on this replica or another.
pub const DEFAULT_ORPHAN_GRACE: Duration = Duration::from_secs(60 * 60);
/// How long a reachability check of an object store may take at start-up.
const ACCESS_CHECK_TIMEOUT: Duration = Duration::from_secs(20);
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

fn now_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis())
        .unwrap_or(0)
}

fn storage(error: impl std::fmt::Display) -> BlobError {
    BlobError::Storage(error.to_string())
}

/// The object key for an id, or `None` for ids that are not ours (no path tricks possible).
fn key(blob_id: &str) -> Option<String> {
    object_key(blob_id.strip_prefix("blob:")?)
}

/// The object key for the part of an id after `blob:` (as object names hold it): 32 hex
/// digits, lower-cased; `None` for anything else.
fn object_key(id: &str) -> Option<String> {
    (id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit())).then(|| id.to_ascii_lowercase())
}

impl BlobStore {
    /// A store in a local folder (created if needed), writing durably. The folder is private
    /// to the runtime's user; folders and files an older version left readable by others are
    /// made private.
    ///
    /// # Errors
    /// When the folder cannot be created or used.
    pub fn local(directory: &Path, ttl: Duration) -> Result<Self, BlobError> {
        refuse_foreign_entries(directory)?;
        for folder in [
            directory.to_path_buf(),
            directory.join("data"),
            directory.join("meta"),
        ] {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(PRIVATE_DIR_MODE)
                .create(&folder)
                .map_err(|error| storage(format!("`{}`: {error}", folder.display())))?;
        }
        make_private(directory)
            .map_err(|error| storage(format!("cannot make the blob store private: {error}")))?;
        let store = object_store::local::LocalFileSystem::new_with_prefix(directory)
            .map_err(storage)?
            .with_fsync(true);
        Ok(BlobStore {
            store: Arc::new(store),
            ttl,
            orphan_grace: DEFAULT_ORPHAN_GRACE,
            local_root: Some(directory.to_path_buf()),
            remote: None,
        })
    }

    /// A store in a bucket of an object store, configured from the environment (see
    /// [`crate::blob_location`]). Nothing is sent yet: [`BlobStore::check_access`] says whether
    /// the bucket can be reached.
    ///
    /// # Errors
    /// A configuration the object store refuses, named with what to set.
    pub fn remote(location: &RemoteLocation, ttl: Duration) -> Result<Self, BlobError> {
        // Variables that are not Unicode are skipped (`std::env::vars` would panic on them).
        let environment: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
            .collect();
        Self::remote_in(location, ttl, &environment)
    }

    /// [`BlobStore::remote`] configured from `environment` (`(name, value)` pairs, such as
    /// `AWS_ENDPOINT_URL`) instead of the process's environment.
    ///
    /// # Errors
    /// As [`BlobStore::remote`].
    pub fn remote_in(
        location: &RemoteLocation,
        ttl: Duration,
        environment: &[(String, String)],
    ) -> Result<Self, BlobError> {
        let (store, prefix) = location.open(environment)?;
        let store: Arc<dyn ObjectStore> = if prefix.is_empty() {
            store
        } else {
            Arc::new(object_store::prefix::PrefixStore::new(
                store,
                StorePath::from(prefix),
            ))
        };
        Ok(BlobStore {
            store,
            ttl,
            orphan_grace: DEFAULT_ORPHAN_GRACE,
            local_root: None,
            remote: Some(location.clone()),
        })
    }

    /// A store over any object store.
    #[must_use]
    pub fn new(store: Arc<dyn ObjectStore>, ttl: Duration) -> Self {
        BlobStore {
            store,
            ttl,
            orphan_grace: DEFAULT_ORPHAN_GRACE,
            local_root: None,
            remote: None,
        }
    }

    /// The same store with another orphan grace period (by default
    /// [`DEFAULT_ORPHAN_GRACE`]): bytes without a record are removed once older than `grace`,
    /// and a create taking longer than a quarter of it fails instead of committing. Tests
    /// shorten it; replicas sharing a bucket must use the same.
    #[must_use]
    pub fn with_orphan_grace(self, grace: Duration) -> Self {
        BlobStore {
            orphan_grace: grace,
            ..self
        }
    }

    /// Where the blobs are, as it may be shown: the folder, or the bucket's URL (which never
    /// holds credentials).
    #[must_use]
    pub fn shown_location(&self) -> String {
        match (&self.remote, &self.local_root) {
            (Some(remote), _) => remote.to_string(),
            (None, Some(root)) => root.display().to_string(),
            (None, None) => "an object store".to_owned(),
        }
    }

    /// Check that the store answers: list the first records. For start-up, so that a
    /// misconfigured bucket is reported at once rather than at the first blob.
    ///
    /// # Errors
    /// [`BlobError::Storage`] naming the location and what to set, when the store fails or
    /// does not answer within 20 seconds.
    pub async fn check_access(&self) -> Result<(), BlobError> {
        use futures_util::StreamExt;
        let hint = self
            .remote
            .as_ref()
            .map_or("check the folder", RemoteLocation::settings_hint);
        let probe = async {
            let prefix = StorePath::from("meta");
            let mut listing = self.store.list(Some(&prefix));
            listing.next().await.transpose().map(|_| ())
        };
        let failure = match tokio::time::timeout(ACCESS_CHECK_TIMEOUT, probe).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(error)) => error.to_string(),
            Err(_) => format!("no answer within {ACCESS_CHECK_TIMEOUT:?}"),
        };
        Err(storage(format!(
            "cannot use the blob store `{}` (--blob-store): {failure}; {hint}",
            self.shown_location()
        )))
    }

    /// Store content. `encoding` is `None`/`"utf-8"` for text, `"base64"` for binary.
    ///
    /// # Errors
    /// Invalid base64, or storage failure.
    pub async fn create<'a>(
        &self,
        content: impl Into<Cow<'a, str>>,
        kind: &str,
        encoding: Option<&str>,
    ) -> Result<BlobMeta, BlobError> {
        check_kind(kind)?;
        let content = content.into();
        let bytes = match encoding {
            None | Some("utf-8" | "utf8" | "text") => match content {
                Cow::Borrowed(text) => Bytes::copy_from_slice(text.as_bytes()),
                Cow::Owned(text) => Bytes::from(text.into_bytes()),
            },
            Some("base64") => Bytes::from(
                base64::engine::general_purpose::STANDARD
                    .decode(content.trim())
                    .map_err(|error| {
                        BlobError::Invalid(format!(
                            "parameter `content` is not valid base64: {error}"
                        ))
                    })?,
            ),
            Some(other) => {
                return Err(BlobError::Invalid(format!(
                    "parameter `encoding` must be \"utf-8\" or \"base64\", not \"{other}\""
                )));
            }
        };
        self.create_bytes(bytes, kind).await
    }

    /// Store bytes as a new blob.
    ///
    /// # Errors
    /// Storage failure.
    pub async fn create_bytes(&self, bytes: Bytes, kind: &str) -> Result<BlobMeta, BlobError> {
        let started = Instant::now();
        let id = uuid::Uuid::new_v4().simple().to_string();
        let size_bytes = bytes.len() as u64;
        self.store
            .put(
                &StorePath::from(format!("data/{id}")),
                PutPayload::from(bytes),
            )
            .await
            .map_err(storage)?;
        self.make_file_private(&format!("data/{id}")).await?;
        self.commit(id, kind, size_bytes, started).await
    }

    /// Store what a reader yields as a new blob, in chunks: memory stays a few MiB however
    /// large the content (up to `max_bytes`).
    ///
    /// # Errors
    /// Read or storage failure, or more than `max_bytes` bytes.
    pub async fn create_from_reader(
        &self,
        mut reader: impl tokio::io::AsyncRead + Unpin,
        kind: &str,
        max_bytes: u64,
    ) -> Result<BlobMeta, BlobError> {
        use tokio::io::AsyncReadExt;
        let started = Instant::now();
        let id = uuid::Uuid::new_v4().simple().to_string();
        let upload = self
            .store
            .put_multipart(&StorePath::from(format!("data/{id}")))
            .await
            .map_err(storage)?;
        let mut writer = object_store::WriteMultipart::new_with_chunk_size(upload, UPLOAD_CHUNK);
        let mut buffer = vec![0u8; READ_CHUNK];
        let mut size_bytes: u64 = 0;
        let outcome: Result<(), BlobError> = async {
            loop {
                let read = reader.read(&mut buffer).await.map_err(storage)?;
                if read == 0 {
                    return Ok(());
                }
                size_bytes += read as u64;
                if size_bytes > max_bytes {
                    return Err(BlobError::Invalid(format!(
                        "the content is larger than {max_bytes} bytes"
                    )));
                }
                writer.wait_for_capacity(2).await.map_err(storage)?;
                writer.write(&buffer[..read]);
            }
        }
        .await;
        if let Err(error) = outcome {
            let _ = writer.abort().await;
            return Err(error);
        }
        writer.finish().await.map_err(storage)?;
        self.make_file_private(&format!("data/{id}")).await?;
        self.commit(id, kind, size_bytes, started).await
    }

    /// Write the metadata object, the commit record: only then is the blob visible. An upload
    /// that began more than a quarter of the orphan grace period ago is not committed: a sweep
    /// (on any replica) may already count its bytes as orphaned.
    async fn commit(
        &self,
        id: String,
        kind: &str,
        size_bytes: u64,
        started: Instant,
    ) -> Result<BlobMeta, BlobError> {
        let deadline = self.orphan_grace / 4;
        if started.elapsed() > deadline {
            return Err(storage(format!(
                "storing {size_bytes} bytes took longer than {deadline:?}; the blob was not kept (the expiry sweep may already remove its bytes), so try again"
            )));
        }
        let meta = BlobMeta {
            blob_id: format!("blob:{id}"),
            kind: kind.to_owned(),
            size_bytes,
            created_ms: now_ms(),
        };
        let record = serde_json::to_vec(&meta).map_err(storage)?;
        self.store
            .put(
                &StorePath::from(format!("meta/{id}.json")),
                PutPayload::from(record),
            )
            .await
            .map_err(storage)?;
        self.make_file_private(&format!("meta/{id}.json")).await?;
        crate::metrics::blob_bytes_written(size_bytes);
        Ok(meta)
    }

    /// Give a file the store just wrote mode 0600, on a blocking thread (like the store's own
    /// writes). The object store creates files with the umask's mode, but always inside the
    /// store's 0700 folders, so no one else could open it meanwhile.
    async fn make_file_private(&self, key: &str) -> Result<(), BlobError> {
        let Some(root) = &self.local_root else {
            return Ok(());
        };
        let path = root.join(key);
        tokio::task::spawn_blocking(move || {
            fs_err::set_permissions(&path, std::fs::Permissions::from_mode(PRIVATE_FILE_MODE))
        })
        .await
        .map_err(storage)?
        .map_err(storage)
    }

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
    pub async fn read_range(&self, meta: &BlobMeta, range: Range<u64>) -> Result<Value, BlobError> {
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
        let truncated = (range.end - range.start) < size;
        let mut result = json!({
            "blob_id": meta.blob_id,
            "kind": meta.kind,
            "size_bytes": size,
            "offset": range.start,
            "truncated": truncated,
        });
        match std::str::from_utf8(&bytes) {
            Ok(text) => {
                result["encoding"] = json!("utf-8");
                result["preview"] = json!(text);
            }
            // A sample may cut a character at either end; keep it text when only the edges are cut.
            Err(_) if truncated && !looks_binary(&bytes) => {
                result["encoding"] = json!("utf-8");
                result["preview"] = json!(String::from_utf8_lossy(&bytes));
            }
            Err(_) => {
                result["encoding"] = json!("base64");
                result["preview"] = json!(base64::engine::general_purpose::STANDARD.encode(&bytes));
            }
        }
        Ok(result)
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

    /// Copy the blob `meta` describes (as [`BlobStore::meta`] read it) into `folder` for one
    /// run, as a file its sandbox user may read (mode 0644) under a name no one can guess. The
    /// store's own files stay private. Locally the copy is made in the kernel
    /// (`copy_file_range`); other stores download the blob.
    ///
    /// # Errors
    /// Unknown blob (swept since its metadata was read), or storage failure.
    pub async fn copy_for_run(&self, meta: &BlobMeta, folder: &Path) -> Result<PathBuf, BlobError> {
        let blob_id = &meta.blob_id;
        let id = key(blob_id).ok_or_else(|| BlobError::NotFound(blob_id.clone()))?;
        let destination = folder.join(uuid::Uuid::new_v4().simple().to_string());
        let target = destination.clone();
        // `Ok(false)`: the expiry sweep removed the bytes after the metadata was read.
        let copied = if let Some(root) = &self.local_root {
            let source = root.join("data").join(&id);
            tokio::task::spawn_blocking(move || {
                let mut reader = match fs_err::File::open(&source) {
                    Ok(reader) => reader.into_parts().0,
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                        return Ok(false);
                    }
                    Err(error) => return Err(error),
                };
                std::io::copy(&mut reader, &mut create_run_input(&target)?)
                    .map(|_| true)
                    .map_err(|error| {
                        std::io::Error::new(
                            error.kind(),
                            format!("copying `{}`: {error}", source.display()),
                        )
                    })
            })
            .await
            .unwrap_or_else(|error| Err(std::io::Error::other(error)))
        } else {
            // Streamed to the file chunk by chunk: an input blob may be hundreds of MiB.
            let fetched = self.store.get(&StorePath::from(format!("data/{id}"))).await;
            match fetched {
                Ok(result) => download(result, target).await,
                Err(object_store::Error::NotFound { .. }) => Ok(false),
                Err(error) => return Err(storage(error)),
            }
        };
        let copied =
            copied.map_err(|error| storage(format!("`{}`: {error}", destination.display())))?;
        if !copied {
            return Err(BlobError::NotFound(blob_id.clone()));
        }
        crate::metrics::blob_bytes_read(meta.size_bytes);
        Ok(destination)
    }

    /// Remove blobs older than the time to keep them, and orphaned bytes without metadata
    /// older than the orphan grace period; locally also the staged files of uploads a killed
    /// server left. Several replicas may sweep the same bucket at once: what another removed
    /// first is skipped, and an object whose state is uncertain (a failed request) is left for
    /// a later sweep. Returns how many deletes of blobs and orphans succeeded (on S3, where a
    /// delete of a missing key succeeds, an object another replica removed first counts too).
    ///
    /// # Errors
    /// Storage failure while listing.
    pub async fn sweep(&self) -> Result<usize, BlobError> {
        use futures_util::StreamExt;
        let now = now_ms();
        let age = |object: &object_store::ObjectMeta| {
            Duration::from_millis(
                u64::try_from(now.saturating_sub(
                    u128::try_from(object.last_modified.timestamp_millis()).unwrap_or(0),
                ))
                .unwrap_or(u64::MAX),
            )
        };
        let mut removed = 0;
        // Blobs whose record this sweep saw and kept: their bytes are committed, no need to
        // ask the store again (one request per blob per sweep on every replica).
        let mut committed = std::collections::HashSet::new();
        let meta_prefix = StorePath::from("meta");
        let mut records = self.store.list(Some(&meta_prefix));
        while let Some(record) = records.next().await {
            let record = record.map_err(storage)?;
            let Some(id) = record
                .location
                .filename()
                .and_then(|name| name.strip_suffix(".json"))
                .and_then(object_key)
            else {
                continue;
            };
            if age(&record) <= self.ttl {
                committed.insert(id);
                continue;
            }
            // The record first: from then on no reader finds the blob, and the bytes follow.
            // Bytes left by a sweep stopped in between are orphans, removed later.
            if self.remove(&record.location).await {
                removed += 1;
                self.remove(&StorePath::from(format!("data/{id}"))).await;
            }
        }
        let data_prefix = StorePath::from("data");
        let mut contents = self.store.list(Some(&data_prefix));
        while let Some(data) = contents.next().await {
            let data = data.map_err(storage)?;
            let Some(id) = data.location.filename().and_then(object_key) else {
                continue;
            };
            if age(&data) <= self.orphan_grace || committed.contains(&id) {
                continue;
            }
            match self
                .store
                .head(&StorePath::from(format!("meta/{id}.json")))
                .await
            {
                Ok(_) => {}
                Err(object_store::Error::NotFound { .. }) => {
                    if self.remove(&data.location).await {
                        removed += 1;
                    }
                }
                // Unsure whether it is committed: never remove a blob's bytes on a guess.
                Err(error) => {
                    tracing::warn!(%error, blob = %id, "cannot tell whether bytes in the blob store are committed; left for a later sweep")
                }
            }
        }
        if let Some(root) = &self.local_root {
            let data = root.join("data");
            let grace = self.orphan_grace;
            removed += tokio::task::spawn_blocking(move || remove_stale_staged_files(&data, grace))
                .await
                .map_err(storage)?;
        }
        Ok(removed)
    }

    /// Delete an object for the sweep: `true` when the delete succeeded, `false` when the
    /// local store found it already gone or the delete failed (logged; a later sweep tries
    /// again). S3 answers a delete of a missing key with success too, so on a bucket two
    /// replicas sweeping at once may both count the same object.
    async fn remove(&self, location: &StorePath) -> bool {
        match self.store.delete(location).await {
            Ok(()) => true,
            Err(object_store::Error::NotFound { .. }) => false,
            Err(error) => {
                tracing::warn!(%error, object = %location, "cannot remove an expired object from the blob store; left for a later sweep");
                false
            }
        }
    }
}

/// Write what an object store returns for a blob into a new run input file at `target`, chunk
/// by chunk. `Ok(true)` once written, `Ok(false)` when the blob vanished meanwhile.
async fn download(result: object_store::GetResult, target: PathBuf) -> std::io::Result<bool> {
    use futures_util::StreamExt;
    use tokio::io::AsyncWriteExt;
    let file = tokio::task::spawn_blocking(move || create_run_input(&target))
        .await
        .map_err(std::io::Error::other)??;
    let mut file = tokio::fs::File::from_std(file);
    let mut chunks = result.into_stream();
    while let Some(chunk) = chunks.next().await {
        match chunk {
            Ok(bytes) => file.write_all(&bytes).await?,
            Err(object_store::Error::NotFound { .. }) => return Ok(false),
            Err(error) => return Err(std::io::Error::other(error)),
        }
    }
    file.flush().await?;
    Ok(true)
}

/// Remove the staged files (`<id>#<digits>`) that uploads of a killed server left in a local
/// store's `data/` folder, once older than `grace`: the local object store stages each upload
/// beside its destination and leaves those files out of listings, so nothing else would ever
/// remove them. Returns how many were removed.
fn remove_stale_staged_files(data: &Path, grace: Duration) -> usize {
    let Ok(entries) = fs_err::read_dir(data) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let staged = name
            .to_str()
            .and_then(|name| name.split_once('#'))
            .is_some_and(|(id, suffix)| {
                object_key(id).is_some()
                    && !suffix.is_empty()
                    && suffix.bytes().all(|byte| byte.is_ascii_digit())
            });
        let old = entry
            .metadata()
            .and_then(|metadata| metadata.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|elapsed| elapsed > grace);
        if staged && old {
            match fs_err::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                Err(error) => {
                    tracing::warn!(%error, "cannot remove a staged upload a killed server left")
                }
            }
        }
    }
    removed
}

/// Check a `kind` given by a client: a MIME type, at most [`MAX_KIND_BYTES`] of printable
/// ASCII (parameters such as `; charset=utf-8` included).
fn check_kind(kind: &str) -> Result<(), BlobError> {
    let expected = "a MIME type such as \"text/plain\" or \"application/json\"";
    if kind.trim().is_empty() {
        return Err(BlobError::Invalid(format!(
            "parameter `kind` is empty; it must be {expected}"
        )));
    }
    if kind.len() > MAX_KIND_BYTES {
        return Err(BlobError::Invalid(format!(
            "parameter `kind` is {} bytes; it must be {expected}, at most {MAX_KIND_BYTES} bytes",
            kind.len()
        )));
    }
    if !kind.bytes().all(|byte| (b' '..=b'~').contains(&byte)) {
        return Err(BlobError::Invalid(format!(
            "parameter `kind` holds characters other than printable ASCII; it must be {expected}"
        )));
    }
    Ok(())
}

/// Create a run's input copy: readable by everyone whatever the umask (the folder it is in
/// cannot be listed, and its name cannot be guessed).
fn create_run_input(path: &Path) -> std::io::Result<std::fs::File> {
    let mode = crate::data_dir::RUN_INPUT_FILE_MODE;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    Ok(file)
}

/// The entries a local store's folder holds: its bytes and its commit records.
const LOCAL_STORE_ENTRIES: &[&str] = &["data", "meta"];

/// Refuse a folder holding anything the store did not make: the store makes every file under
/// its folder private, so a folder given by mistake (`--blob-store file:///etc`) would have
/// had every file in it made unreadable to everyone else. `data/` and `meta/` must be real
/// folders (not links) holding only objects named as the store names them: a folder of
/// someone's files that happens to be called `data` is not the store's either.
pub(crate) fn refuse_foreign_entries(directory: &Path) -> Result<(), BlobError> {
    let entries = match fs_err::read_dir(directory) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(storage(error)),
    };
    let foreign = |name: &str| {
        BlobError::Storage(format!(
            "`{}` holds `{name}`, which the blob store did not make; the store makes everything in its folder private, so it needs a new or empty folder, or one it made: pass a --blob-store file:///… of its own",
            directory.display(),
        ))
    };
    for entry in entries {
        let entry = entry.map_err(storage)?;
        let name = entry.file_name();
        let Some(folder) = LOCAL_STORE_ENTRIES.iter().find(|ours| name == **ours) else {
            return Err(foreign(&name.to_string_lossy()));
        };
        // `DirEntry::file_type` does not follow links.
        if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            return Err(foreign(&format!("{folder} (not a folder)")));
        }
        for object in fs_err::read_dir(entry.path()).map_err(storage)? {
            let object = object.map_err(storage)?;
            let object_name = object.file_name();
            let ours = object.file_type().is_ok_and(|kind| kind.is_file())
                && object_name
                    .to_str()
                    .is_some_and(|object_name| named_by_the_store(folder, object_name));
            if !ours {
                return Err(foreign(&format!(
                    "{folder}/{}",
                    object_name.to_string_lossy()
                )));
            }
        }
    }
    Ok(())
}

/// Whether `name` in the store's `folder` (`data` or `meta`) is a name the store gives: a
/// blob's key (with `.json` in `meta`), or a staged upload of one (`<name>#<digits>`).
fn named_by_the_store(folder: &str, name: &str) -> bool {
    let name = match name.split_once('#') {
        Some((object, suffix))
            if !suffix.is_empty() && suffix.bytes().all(|byte| byte.is_ascii_digit()) =>
        {
            object
        }
        Some(_) => return false,
        None => name,
    };
    let id = if folder == "meta" {
        name.strip_suffix(".json")
    } else {
        Some(name)
    };
    id.and_then(object_key).is_some()
}

/// Make a folder tree the runtime's user's alone: folders 0700, files 0600 (links are left
/// alone; the store never makes any).
fn make_private(folder: &Path) -> std::io::Result<()> {
    let set = |path: &Path, metadata: &std::fs::Metadata, mode: u32| {
        if metadata.permissions().mode() & 0o7777 == mode {
            return Ok(());
        }
        fs_err::set_permissions(path, std::fs::Permissions::from_mode(mode))
    };
    set(folder, &fs_err::symlink_metadata(folder)?, PRIVATE_DIR_MODE)?;
    for entry in fs_err::read_dir(folder)? {
        let entry = entry?;
        let path = entry.path();
        let metadata = fs_err::symlink_metadata(&path)?;
        if metadata.is_dir() {
            make_private(&path)?;
        } else if metadata.is_file() {
            set(&path, &metadata, PRIVATE_FILE_MODE)?;
        }
    }
    Ok(())
}

fn looks_binary(bytes: &[u8]) -> bool {
    bytes.contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_holding_what_the_store_did_not_make_is_refused_and_left_alone() {
        let folder = tempfile::tempdir().unwrap();
        let notes = folder.path().join("notes.txt");
        fs_err::write(&notes, "keep me").unwrap();
        fs_err::set_permissions(&notes, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = BlobStore::local(folder.path(), DEFAULT_BLOB_TTL)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("holds `notes.txt`"), "{error}");
        assert!(error.contains("--blob-store"), "{error}");
        let mode = fs_err::metadata(&notes).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o644, "the file was touched");
        assert!(!folder.path().join("data").exists());
        // A new folder, and one the store made, are fine.
        let fresh = folder.path().join("fresh");
        BlobStore::local(&fresh, DEFAULT_BLOB_TTL).unwrap();
        BlobStore::local(&fresh, DEFAULT_BLOB_TTL).unwrap();
    }

    /// A read as `read_blob` makes it: the metadata, then only the bytes returned.
    async fn read(
        store: &BlobStore,
        blob_id: &str,
        mode: ReadMode,
        max_bytes: Option<u64>,
    ) -> Result<Value, BlobError> {
        let meta = store.meta(blob_id).await?;
        store
            .read_range(&meta, mode.range(meta.size_bytes, max_bytes))
            .await
    }

    #[tokio::test]
    async fn create_and_read_head_tail_full_and_binary() {
        let folder = tempfile::tempdir().unwrap();
        let store = BlobStore::local(folder.path(), DEFAULT_BLOB_TTL).unwrap();
        let meta = store
            .create("hello world", "text/plain", None)
            .await
            .unwrap();
        assert_eq!(meta.size_bytes, 11);
        let head = read(&store, &meta.blob_id, ReadMode::Head, Some(5))
            .await
            .unwrap();
        assert_eq!(
            (head["preview"].as_str(), head["truncated"].as_bool()),
            (Some("hello"), Some(true))
        );
        let tail = read(&store, &meta.blob_id, ReadMode::Tail, Some(5))
            .await
            .unwrap();
        assert_eq!(
            (tail["preview"].as_str(), tail["offset"].as_u64()),
            (Some("world"), Some(6))
        );
        let full = read(&store, &meta.blob_id, ReadMode::Full, None)
            .await
            .unwrap();
        assert_eq!(
            (full["preview"].as_str(), full["truncated"].as_bool()),
            (Some("hello world"), Some(false))
        );
        let binary = store
            .create("AAEC/w==", "application/octet-stream", Some("base64"))
            .await
            .unwrap();
        let binary_read = read(&store, &binary.blob_id, ReadMode::Full, None)
            .await
            .unwrap();
        assert_eq!(
            (
                binary_read["encoding"].as_str(),
                binary_read["preview"].as_str()
            ),
            (Some("base64"), Some("AAEC/w=="))
        );
        for bad in ["blob:nope", "../etc/passwd", "blob:../../x"] {
            assert!(matches!(
                read(&store, bad, ReadMode::Head, None).await,
                Err(BlobError::NotFound(_))
            ));
        }
        assert!(matches!(
            store.create("%%%", "x", Some("base64")).await,
            Err(BlobError::Invalid(_))
        ));
    }

    #[tokio::test]
    async fn kinds_are_short_mime_types_and_oversized_records_are_not_read() {
        let folder = tempfile::tempdir().unwrap();
        let store = BlobStore::local(folder.path(), DEFAULT_BLOB_TTL).unwrap();
        for kind in ["", "a\u{1}b", &"k".repeat(MAX_KIND_BYTES + 1)] {
            assert!(matches!(
                store.create("x", kind, None).await,
                Err(BlobError::Invalid(message)) if message.contains("`kind`")
            ));
        }
        let meta = store
            .create("x", "text/plain; charset=utf-8", None)
            .await
            .unwrap();
        // A record an older version wrote with a huge kind is refused, not read into answers.
        let id = meta.blob_id.strip_prefix("blob:").unwrap();
        let huge = serde_json::to_vec(&BlobMeta {
            kind: "k".repeat(1024 * 1024),
            ..meta.clone()
        })
        .unwrap();
        std::fs::write(folder.path().join(format!("meta/{id}.json")), huge).unwrap();
        assert!(matches!(
            read(&store, &meta.blob_id, ReadMode::Head, None).await,
            Err(BlobError::Storage(message)) if message.contains("more than the 65536")
        ));
    }

    #[tokio::test]
    async fn the_store_is_private_and_runs_get_readable_copies() {
        let folder = tempfile::tempdir().unwrap();
        let root = folder.path().join("blobs");
        let store = BlobStore::local(&root, DEFAULT_BLOB_TTL).unwrap();
        let meta = store.create("private", "text/plain", None).await.unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let id = meta.blob_id.strip_prefix("blob:").unwrap();
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(&root.join("data").join(id)), 0o600);
        assert_eq!(mode(&root.join("meta").join(format!("{id}.json"))), 0o600);
        let copies = folder.path().join("copies");
        std::fs::create_dir(&copies).unwrap();
        let copy = store.copy_for_run(&meta, &copies).await.unwrap();
        assert_eq!(mode(&copy), 0o644);
        assert_eq!(fs_err::read_to_string(&copy).unwrap(), "private");
        assert!(matches!(
            store.meta("blob:00000000000000000000000000000000").await,
            Err(BlobError::NotFound(_))
        ));
        // Swept after its metadata was read.
        fs_err::remove_file(root.join("data").join(id)).unwrap();
        assert!(matches!(
            store.copy_for_run(&meta, &copies).await,
            Err(BlobError::NotFound(_))
        ));
    }

    #[tokio::test]
    async fn the_sweep_removes_staged_uploads_a_killed_server_left() {
        let folder = tempfile::tempdir().unwrap();
        let store = BlobStore::local(folder.path(), DEFAULT_BLOB_TTL).unwrap();
        let kept = store.create("kept", "text/plain", None).await.unwrap();
        let data = folder.path().join("data");
        let (old, fresh, other) = (
            data.join(format!("{}#3", "ab".repeat(16))),
            data.join(format!("{}#4", "cd".repeat(16))),
            data.join("notes#5"),
        );
        for path in [&old, &fresh, &other] {
            fs_err::write(path, "part of an upload").unwrap();
        }
        let long_ago = std::time::SystemTime::now() - 2 * DEFAULT_ORPHAN_GRACE;
        for path in [&old, &other] {
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        }
        assert_eq!(store.sweep().await.unwrap(), 1);
        assert!(!old.exists(), "a killed upload's staged file was kept");
        assert!(fresh.exists(), "an upload in progress was removed");
        assert!(
            other.exists(),
            "a file that is not a staged upload was removed"
        );
        let full = read(&store, &kept.blob_id, ReadMode::Full, None)
            .await
            .unwrap();
        assert_eq!(full["preview"], "kept");
    }
}
