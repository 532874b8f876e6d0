//! `run_code` (Skills Protocol): run model-written Python in a sandbox with skills and blobs
//! mounted. Planned by the run services, admitted to the run queue by the door policy, then
//! run by the services.

use std::sync::Arc;

use serde_json::Value;
use skillbox_services::RunCodeParams;

use crate::outcome::ToolOutcome;
use crate::provider::SkillsProvider;
use crate::registry::{
    Annotations, ApprovalSubject, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles,
    RunsCode, Tool, ToolFacts,
};

/// `run_code`.
#[derive(Debug, Clone, Copy)]
pub struct RunCode;

impl Tool for RunCode {
    const NAME: &'static str = skillbox_services::protocol::RUN_CODE;
    const DESCRIPTION: &'static str =
        "Execute LLM-written code in a sandbox with specified skills and blobs mounted.";
    const FACTS: ToolFacts = ToolFacts {
        profiles: Profiles::PROTOCOL,
        runs_code: RunsCode::Always,
        reads_files: ReadsFiles::Never,
        mutating: false,
        loads_skills: false,
        needs_services: true,
        params_size: ParamsSize::Run,
        annotations: Annotations::ACTS,
    };
    type Params<'a> = RunCodeParams;
    /// The Run object the run services build as JSON (`runs.rs`): not typed yet, so it
    /// offers no output schema.
    type Result = Value;

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: RunCodeParams,
    ) -> PrepareFuture<'a> {
        Box::pin(async move {
            let services = super::services(provider, Self::NAME)?;
            let planned = services
                .plan_run_code(provider.as_ref(), params)
                .await
                .map_err(|error| ToolOutcome::from_service(Err(error)))?;
            Ok(Prepared::runs_code(
                ApprovalSubject::default(),
                Box::pin(async move { ToolOutcome::from_service(planned.run().await) }),
            ))
        })
    }
}
