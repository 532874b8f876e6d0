//! `read_blob` (Skills Protocol): a preview (or all) of a blob. The bytes a read returns are
//! taken from the caller's answer budget before they are fetched. The store reads a sample of
//! bytes ([`BlobSample`]); this tool shapes it for the wire: text as it is, other bytes as
//! base64.

use std::sync::Arc;

use base64::Engine;
use schemars::JsonSchema;
use serde::Serialize;
use skillbox_services::{BlobSample, ReadBlobParams};

use crate::outcome::ToolOutcome;
use crate::provider::SkillsProvider;
use crate::registry::{
    Annotations, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles, RunsCode, Tool,
    ToolFacts,
};

/// `read_blob`.
#[derive(Debug, Clone, Copy)]
pub struct ReadBlob;

/// A preview (or all) of a blob.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadBlobResult {
    /// The blob's id.
    blob_id: String,
    /// Its MIME type, as given when it was created.
    kind: String,
    /// Its whole size in bytes.
    size_bytes: u64,
    /// Where the preview starts in the blob, in bytes.
    offset: u64,
    /// Whether the preview is less than the whole blob.
    truncated: bool,
    /// How `preview` holds the bytes: `utf-8` text, or `base64` for bytes that are not text.
    #[schemars(schema_with = "preview_encodings")]
    encoding: &'static str,
    /// The bytes read.
    preview: String,
}

fn preview_encodings(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": ["utf-8", "base64"] })
}

impl From<BlobSample> for ReadBlobResult {
    fn from(sample: BlobSample) -> Self {
        let (encoding, preview) = match sample.text() {
            Some(text) => ("utf-8", text.into_owned()),
            None => (
                "base64",
                base64::engine::general_purpose::STANDARD.encode(&sample.bytes),
            ),
        };
        let BlobSample {
            meta,
            offset,
            truncated,
            ..
        } = sample;
        ReadBlobResult {
            blob_id: meta.blob_id,
            kind: meta.kind,
            size_bytes: meta.size_bytes,
            offset,
            truncated,
            encoding,
            preview,
        }
    }
}

impl Tool for ReadBlob {
    const NAME: &'static str = skillbox_services::protocol::READ_BLOB;
    const DESCRIPTION: &'static str =
        "Retrieve a preview of blob content. Full reads discouraged for large blobs.";
    const FACTS: ToolFacts = ToolFacts {
        profiles: Profiles::PROTOCOL,
        runs_code: RunsCode::Never,
        reads_files: ReadsFiles::Never,
        mutating: false,
        loads_skills: false,
        needs_services: true,
        params_size: ParamsSize::Small,
        annotations: Annotations::READ_ONLY,
    };
    type Params<'a> = ReadBlobParams;
    type Result = ReadBlobResult;

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: ReadBlobParams,
    ) -> PrepareFuture<'a> {
        Box::pin(async move {
            let services = Arc::clone(super::services(provider, Self::NAME)?);
            Ok(Prepared::asynchronous(move |budget| {
                Box::pin(async move {
                    match services.read_blob(params, budget).await {
                        Ok(sample) => ToolOutcome::answer(&ReadBlobResult::from(sample)),
                        Err(error) => ToolOutcome::from_service(Err(error)),
                    }
                })
            }))
        })
    }
}
