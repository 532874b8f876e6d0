//! Storing a blob: its bytes first (staged and renamed locally, one PUT or a multipart upload
//! on an object store), then its metadata record, the commit that makes it visible.

use std::borrow::Cow;
use std::os::unix::fs::PermissionsExt;
use std::time::Instant;

use base64::Engine;
use bytes::Bytes;
use object_store::path::Path as StorePath;
use object_store::{ObjectStoreExt, PutPayload};

use super::{BlobError, BlobMeta, BlobStore, PRIVATE_FILE_MODE, now_ms, storage};

/// Longest `kind` (a MIME type) accepted, in bytes. Real types are far shorter; the kind is
/// stored in the blob's metadata and repeated in every `read_blob` answer, so an unbounded one
/// would let a tiny request ask for a huge answer.
pub const MAX_KIND_BYTES: usize = 255;
/// Bytes per part when a blob is uploaded in parts.
const UPLOAD_CHUNK: usize = 8 * 1024 * 1024;
/// Bytes read at a time when a blob is stored from a reader.
const READ_CHUNK: usize = 1024 * 1024;
impl BlobStore {
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
