//! `skillbox new` and `skillbox pack`: writing a skill skeleton, and packing a skill (or
//! publishing a folder of skills). Each is one call into `skillbox-author`; the results are
//! printed by `output::author_report`.

use std::process::ExitCode;

use skillbox_author::{
    AuthorError, NewSkillRequest, PackOptions, ScriptLanguage, SkeletonFormat, pack_skill,
    publish_index,
};

use crate::arguments::{self, NewArguments, PackArguments, SkillFormatArgument};
use crate::output::author_report;
use crate::output::eprint_diagnostics;
use crate::{EXIT_PROBLEMS, EXIT_USAGE};

/// The runtime's own tool names, which a skill's tool may not take.
fn reserved_tool_names() -> Vec<String> {
    skillbox_tools::registry::reserved_names()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// `skillbox new`.
pub fn new_skill(arguments: &NewArguments) -> anyhow::Result<ExitCode> {
    let request = NewSkillRequest {
        name: arguments.name.clone(),
        parent: arguments.path.clone().unwrap_or_default(),
        language: match arguments.script {
            arguments::ScriptLanguage::Python => ScriptLanguage::Python,
            arguments::ScriptLanguage::Node => ScriptLanguage::Node,
            arguments::ScriptLanguage::Bash => ScriptLanguage::Bash,
        },
        format: match arguments.format {
            SkillFormatArgument::AgentSkill => SkeletonFormat::AgentSkill,
            SkillFormatArgument::SkillTools => SkeletonFormat::SkillTools,
            SkillFormatArgument::Protocol => SkeletonFormat::Protocol,
        },
        tools: arguments.tools,
        reserved_tool_names: reserved_tool_names(),
    };
    let created = skillbox_author::new_skill(&request)?;
    author_report::print_new(&created, arguments.path.as_deref(), arguments.json)?;
    Ok(ExitCode::SUCCESS)
}

/// `skillbox pack`.
pub fn pack(arguments: &PackArguments) -> anyhow::Result<ExitCode> {
    let options = PackOptions {
        reserved_tool_names: reserved_tool_names(),
        ..PackOptions::default()
    };
    let outcome = if arguments.index {
        let Some(output) = &arguments.output else {
            eprintln!(
                "error: `pack --index` needs `-o DIR`, the folder that receives `.well-known/agent-skills/`"
            );
            return Ok(ExitCode::from(EXIT_USAGE));
        };
        publish_index(&arguments.path, output, &options)
            .map(|report| author_report::print_index(&report, arguments.json))
    } else {
        pack_skill(&arguments.path, arguments.output.as_deref(), &options)
            .map(|report| author_report::print_pack(&report, arguments.json))
    };
    match outcome {
        Ok(printed) => {
            printed?;
            Ok(ExitCode::SUCCESS)
        }
        Err(error @ (AuthorError::InvalidSkill { .. } | AuthorError::InvalidSkills { .. })) => {
            let diagnostics: Vec<_> = error.diagnostics().into_iter().cloned().collect();
            eprint_diagnostics(&diagnostics);
            eprintln!(
                "error: {}",
                skillbox_core::printable::printable_block(&error.to_string())
            );
            Ok(ExitCode::from(EXIT_PROBLEMS))
        }
        Err(error) => Err(error.into()),
    }
}
