//! Opening a store: a local folder (private to the runtime's user), a bucket of an object
//! store configured from the environment, or any [`ObjectStore`]; and the start-up check that
//! it answers.

use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use object_store::ObjectStore;
use object_store::path::Path as StorePath;

use super::local_folder::{make_private, refuse_foreign_entries};
use super::{BlobError, BlobStore, DEFAULT_ORPHAN_GRACE, PRIVATE_DIR_MODE, storage};
use crate::blob_location::RemoteLocation;

/// How long a reachability check of an object store may take at start-up.
const ACCESS_CHECK_TIMEOUT: Duration = Duration::from_secs(20);

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
}
