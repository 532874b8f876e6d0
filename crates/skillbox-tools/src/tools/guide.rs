//! `load_skills_protocol_guide` (Skills Protocol): the guide to the protocol's tools, shipped
//! as the built-in instruction skill `skills.protocol.guide`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::outcome::ToolOutcome;
use crate::provider::{PROTOCOL_GUIDE, SkillsProvider};
use crate::registry::{
    Annotations, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles, RunsCode, Tool,
    ToolFacts,
};

/// `load_skills_protocol_guide`.
#[derive(Debug, Clone, Copy)]
pub struct ProtocolGuide;

/// It takes no parameters (any given are ignored).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoParams {}

/// The guide.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ProtocolGuideResult {
    /// The guide, in Markdown.
    content: &'static str,
}

impl Tool for ProtocolGuide {
    const NAME: &'static str = "load_skills_protocol_guide";
    const DESCRIPTION: &'static str = "Load the Skills Protocol Guide to learn how to use these tools. Call this first if you haven't read the guide yet.";
    const FACTS: ToolFacts = ToolFacts {
        profiles: Profiles::PROTOCOL,
        runs_code: RunsCode::Never,
        reads_files: ReadsFiles::Never,
        mutating: false,
        loads_skills: false,
        needs_services: false,
        params_size: ParamsSize::Small,
        annotations: Annotations::READ_ONLY,
    };
    type Params<'a> = NoParams;
    type Result = ProtocolGuideResult;

    fn prepare<'a>(
        &'a self,
        _provider: &'a Arc<SkillsProvider>,
        _params: NoParams,
    ) -> PrepareFuture<'a> {
        Box::pin(std::future::ready(Ok(Prepared::answered(
            ToolOutcome::answer(&ProtocolGuideResult {
                content: PROTOCOL_GUIDE,
            }),
        ))))
    }
}
