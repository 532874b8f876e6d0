//! Copies of blobs for runs: a run executes as another user, so it gets its own readable copy
//! of each blob it reads, while the store's files stay private.

use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use object_store::ObjectStoreExt;
use object_store::path::Path as StorePath;

use super::ids::key;
use super::{BlobError, BlobMeta, BlobStore, storage};

impl BlobStore {
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

#[cfg(test)]
#[path = "run_inputs_tests.rs"]
mod tests;
