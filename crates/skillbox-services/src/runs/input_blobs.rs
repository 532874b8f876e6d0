//! A run's input blobs: checked when the run is planned (each exists, together within the
//! run's input bytes), copied into a folder of the run's own when it runs, and removed with it.

use skillbox_exec::executor::python_run::InputBlob;

use crate::Services;
use crate::blobs::{BlobError, BlobMeta};
use crate::error::ServiceError;

/// The input blobs of one run: its own copies, in a folder of its own under
/// `<data-dir>/run-inputs/` that is removed with the run.
pub(super) struct RunInputs {
    pub(super) files: Vec<InputBlob>,
    folder: Option<std::path::PathBuf>,
}

impl RunInputs {
    /// Remove the copies (up to [`MAX_INPUT_BLOBS`] files of [`DEFAULT_MAX_INPUT_BYTES`] in
    /// all) on a blocking thread, and wait until they are gone: the run's answer comes after.
    /// A request cancelled meanwhile leaves the removal running to its end.
    pub(super) async fn remove(mut self) {
        let Some(folder) = self.folder.take() else {
            return;
        };
        if let Err(error) = tokio::task::spawn_blocking(move || remove_input_copies(&folder)).await
        {
            tracing::warn!(%error, "cannot remove a run's input copies");
        }
    }
}

/// When a run ends early (an error, a cancelled request), its copies are removed in place:
/// [`RunInputs::remove`] is the usual way, off the async threads.
impl Drop for RunInputs {
    fn drop(&mut self) {
        if let Some(folder) = self.folder.take() {
            remove_input_copies(&folder);
        }
    }
}

fn remove_input_copies(folder: &std::path::Path) {
    if let Err(error) = fs_err::remove_dir_all(folder) {
        tracing::warn!(%error, "cannot remove a run's input copies");
    }
}

/// The metadata of a run's distinct input blobs, after checking that each exists and that
/// together they are within the run's input bytes.
///
/// # Errors
/// -32602 naming `input_blobs`.
pub(super) async fn check_input_blobs(
    services: &Services,
    blob_ids: &[String],
) -> Result<Vec<BlobMeta>, ServiceError> {
    let limit = services.max_input_bytes;
    let mut distinct: Vec<BlobMeta> = Vec::with_capacity(blob_ids.len());
    let mut total: u64 = 0;
    for blob_id in blob_ids {
        if distinct
            .iter()
            .any(|seen| seen.blob_id.eq_ignore_ascii_case(blob_id))
        {
            continue;
        }
        let meta = services
            .blobs
            .meta(blob_id)
            .await
            .map_err(input_blob_error)?;
        total = total.saturating_add(meta.size_bytes);
        distinct.push(meta);
    }
    if total > limit {
        return Err(ServiceError::invalid_params(format!(
            "parameter `input_blobs`: the blobs hold {total} bytes in all, and one run may read at most {limit} (each run gets its own copy); pass fewer or smaller blobs"
        )));
    }
    Ok(distinct)
}

fn input_blob_error(error: BlobError) -> ServiceError {
    match error {
        BlobError::NotFound(_) => {
            ServiceError::invalid_params(format!("parameter `input_blobs`: {error}"))
        }
        other => ServiceError::internal_failure("copying the input blobs failed", &other),
    }
}

/// Copy a run's input blobs (distinct, already checked) into a folder of its own.
pub(super) async fn copy_input_blobs(
    services: &Services,
    blobs: &[BlobMeta],
) -> Result<RunInputs, ServiceError> {
    let mut inputs = RunInputs {
        files: Vec::with_capacity(blobs.len()),
        folder: None,
    };
    if blobs.is_empty() {
        return Ok(inputs);
    }
    let folder = services
        .run_inputs
        .join(uuid::Uuid::new_v4().simple().to_string());
    let created = folder.clone();
    tokio::task::spawn_blocking(move || crate::data_dir::create_pass_through_dir(&created))
        .await
        .unwrap_or_else(|error| Err(BlobError::Storage(error.to_string())))
        .map_err(|error| {
            ServiceError::internal_failure("copying the input blobs failed", &error)
        })?;
    inputs.folder = Some(folder.clone());
    for meta in blobs {
        let path = services
            .blobs
            .copy_for_run(meta, &folder)
            .await
            .map_err(input_blob_error)?;
        // The store writes ids in lower case, whatever case the caller used.
        inputs.files.push(InputBlob {
            blob_id: meta.blob_id.clone(),
            path,
        });
    }
    Ok(inputs)
}
