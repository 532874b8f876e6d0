//! `read_blob` (Skills Protocol): a preview (or all) of a blob. The bytes a read returns are
//! taken from the caller's answer budget before they are fetched.

use std::sync::Arc;

use serde_json::{Value, json};
use skillbox_services::ReadBlobParams;

use crate::outcome::ToolOutcome;
use crate::provider::SkillsProvider;
use crate::registry::{
    Annotations, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles, RunsCode, Tool,
    ToolFacts,
};

/// `read_blob`.
#[derive(Debug, Clone, Copy)]
pub struct ReadBlob;

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

    fn specialise(&self, _provider: &SkillsProvider, _skills: Option<&[&str]>, schema: &mut Value) {
        schema["required"] = json!(["blob_id"]);
    }

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: ReadBlobParams,
    ) -> PrepareFuture<'a> {
        Box::pin(async move {
            let services = Arc::clone(super::services(provider, Self::NAME)?);
            Ok(Prepared::asynchronous(move |budget| {
                Box::pin(async move {
                    ToolOutcome::from_service(services.read_blob(params, budget).await)
                })
            }))
        })
    }
}
