//! `skillbox tools`: the tool definitions a model is offered, in a provider's format.

use std::process::ExitCode;

use skillbox_tools::{ToolFormat, ToolProfile, render_tools};

use crate::arguments::{GlobalOptions, ToolsArguments};
use crate::output::print_json;
use crate::setup::Setup;
use crate::setup::provider::{model_provider_options, rendering_provider};

/// `skillbox tools`.
pub fn run(global: &GlobalOptions, arguments: &ToolsArguments) -> anyhow::Result<ExitCode> {
    let format = ToolFormat::parse(&arguments.format)
        .ok_or_else(|| anyhow::anyhow!("unknown tool format `{}`", arguments.format))?;
    let profile = ToolProfile::parse(&arguments.profile)
        .ok_or_else(|| anyhow::anyhow!("unknown profile `{}`", arguments.profile))?;
    let provider = rendering_provider(
        &Setup::new(global, &arguments.roots)?,
        model_provider_options(global),
    )?;
    for warning in provider.warnings() {
        eprintln!("warning: {}", skillbox_core::printable::printable(warning));
    }
    print_json(&render_tools(
        &skillbox_tools::registry::specs(&provider, skillbox_tools::Offer::Profile(profile)),
        format,
    ))?;
    Ok(ExitCode::SUCCESS)
}
