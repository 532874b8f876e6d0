//! The built-in tools, one file each: their parameters, facts and handlers. [`ALL`] is the
//! registry's list, in the order models are offered them: the skills profile's tools, then the
//! Skills Protocol's, in the seed's order.

use std::sync::Arc;

use skillbox_core::Skill;

use crate::outcome::ToolOutcome;
use crate::provider::SkillsProvider;
use crate::registry::BuiltinTool;

pub mod create_blob;
pub mod define_tool;
pub mod describe_skill;
pub mod execute_skill;
pub mod find_skills;
pub mod guide;
pub mod list_skills;
pub mod load_skill;
pub mod read_blob;
pub mod read_skill_file;
pub mod run_code;
pub mod skill_name;
pub mod skill_tool;
pub mod use_skill;

/// Every built-in tool, in the order models are offered them.
pub(crate) static ALL: [&(dyn BuiltinTool + 'static); 14] = [
    &load_skill::LoadSkill,
    &use_skill::UseSkill,
    &read_skill_file::ReadSkillFile,
    &find_skills::FindSkills,
    &define_tool::DefineTool,
    &define_tool::RemoveTool,
    &list_skills::ListSkills,
    &describe_skill::DescribeSkill,
    &read_skill_file::ProtocolReadSkillFile,
    &execute_skill::ExecuteSkill,
    &run_code::RunCode,
    &create_blob::CreateBlob,
    &read_blob::ReadBlob,
    &guide::ProtocolGuide,
];

/// The skill a model may see under `name` (and version), or the answer for a miss worded for
/// a model: a close name when there is one, else how to list the skills.
pub(crate) fn model_skill(
    provider: &SkillsProvider,
    name: &str,
    version: Option<&str>,
) -> Result<Arc<Skill>, ToolOutcome> {
    provider.lookup_model_skill(name, version).map_err(|miss| {
        ToolOutcome::invalid_params(match miss.closest {
            Some(close) => format!("no skill named `{name}`; did you mean `{close}`?"),
            None => format!(
                "no skill named `{name}`; call load_skill with {{\"list_skills\": true}} to see the skills"
            ),
        })
    })
}

/// The run and blob services, or the answer saying this provider has none.
pub(crate) fn services<'a>(
    provider: &'a SkillsProvider,
    tool: &str,
) -> Result<&'a Arc<skillbox_services::Services>, ToolOutcome> {
    provider.services().ok_or_else(|| {
        ToolOutcome::with_status(
            crate::outcome::CallStatus::Internal,
            format!(
                "`{tool}` needs the run and blob services (a data folder for blobs and run inputs), and this provider was built without them: `skillbox serve` and `skillbox call` have them; a library caller adds them with `SkillsProvider::with_services`"
            ),
        )
    })
}
