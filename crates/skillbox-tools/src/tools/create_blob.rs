//! `create_blob` (Skills Protocol): store content as a blob and answer its id. The content
//! may be tens of MiB: `/rpc` hands the policy the request's raw params, and the content stays
//! borrowed from the body while it is decoded and stored.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use skillbox_services::CreateBlobParams;

use crate::outcome::ToolOutcome;
use crate::provider::SkillsProvider;
use crate::registry::{
    Annotations, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles, RunsCode, Tool,
    ToolFacts,
};

/// `create_blob`.
#[derive(Debug, Clone, Copy)]
pub struct CreateBlob;

/// The blob stored.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CreateBlobResult {
    /// Its id (`blob:` and 32 hex digits), for `read_blob`, `input_blobs` and `blob:` references.
    blob_id: String,
    /// Its size in bytes.
    size_bytes: u64,
}

impl Tool for CreateBlob {
    const NAME: &'static str = skillbox_services::protocol::CREATE_BLOB;
    const DESCRIPTION: &'static str = "Store large content as a blob and return its ID.";
    const FACTS: ToolFacts = ToolFacts {
        profiles: Profiles::PROTOCOL,
        runs_code: RunsCode::Never,
        reads_files: ReadsFiles::Never,
        mutating: false,
        loads_skills: false,
        needs_services: true,
        params_size: ParamsSize::Body,
        annotations: Annotations::ACTS,
    };
    type Params<'a> = CreateBlobParams<'a>;
    type Result = CreateBlobResult;

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: CreateBlobParams<'a>,
    ) -> PrepareFuture<'a> {
        Box::pin(async move {
            let services = Arc::clone(super::services(provider, Self::NAME)?);
            Ok(Prepared::asynchronous(move |_budget| {
                Box::pin(async move {
                    match services.create_blob_with(params).await {
                        Ok(meta) => ToolOutcome::answer(&CreateBlobResult {
                            blob_id: meta.blob_id,
                            size_bytes: meta.size_bytes,
                        }),
                        Err(error) => ToolOutcome::from_service(Err(error)),
                    }
                })
            }))
        })
    }
}
