//! `execute_skill` (Skills Protocol): run a `skill.toml` action's export, or a tool of a
//! `tools.json` skill, in an ephemeral sandbox. Planned by the run services (parameters,
//! skill, tool and input blobs checked), admitted to the run queue by the door policy, then
//! run by the services.

use std::sync::Arc;

use serde_json::Value;
use skillbox_services::ExecuteSkillParams;

use crate::outcome::ToolOutcome;
use crate::provider::SkillsProvider;
use crate::registry::{
    Annotations, ApprovalSubject, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles,
    RunsCode, Tool, ToolFacts,
};

/// `execute_skill`.
#[derive(Debug, Clone, Copy)]
pub struct ExecuteSkill;

impl Tool for ExecuteSkill {
    const NAME: &'static str = skillbox_services::protocol::EXECUTE_SKILL;
    const DESCRIPTION: &'static str = "Execute a skill's entrypoint in an ephemeral sandbox.";
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
    type Params<'a> = ExecuteSkillParams;
    /// The Run object the run services build as JSON (`runs.rs`): not typed yet, so it
    /// offers no output schema.
    type Result = Value;

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: ExecuteSkillParams,
    ) -> PrepareFuture<'a> {
        Box::pin(async move {
            let services = super::services(provider, Self::NAME)?;
            let skill = Some(params.name.0.clone());
            let planned = services
                .plan_execute_skill(provider.as_ref(), params)
                .await
                .map_err(|error| ToolOutcome::from_service(Err(error)))?;
            let subject = ApprovalSubject {
                skill,
                summary: None,
            };
            Ok(Prepared::runs_code(
                subject,
                Box::pin(async move { ToolOutcome::from_service(planned.run().await) }),
            ))
        })
    }
}
