//! Expiry: records older than the time to keep blobs go, then their bytes; bytes without a
//! record go once older than the orphan grace period; locally, the staged files of uploads a
//! killed server left. Safe to run on every replica at once.

use std::path::Path;
use std::time::Duration;

use object_store::ObjectStoreExt;
use object_store::path::Path as StorePath;

use super::ids::object_key;
use super::{BlobError, BlobStore, now_ms, storage};

impl BlobStore {
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

#[cfg(test)]
#[path = "sweep_tests.rs"]
mod tests;
