//! `skillbox prompt` and `skillbox tools`: what a model is shown, from the same provider that
//! answers `skillbox call`.

use std::process::ExitCode;
use std::sync::Arc;

use skillbox_llm::{
    PromptBudget, PromptFormat, ProviderOptions, SkillsProvider, ToolFormat, ToolProfile,
    render_tools,
};

use crate::arguments::{GlobalOptions, PromptArguments, ToolsArguments};
use crate::output::{print_json, print_text};

/// The provider over the global roots with the executor the options describe.
pub fn provider(global: &GlobalOptions) -> anyhow::Result<SkillsProvider> {
    provider_with(global, ProviderOptions::default())
}

fn provider_options(global: &GlobalOptions, options: ProviderOptions) -> ProviderOptions {
    ProviderOptions {
        preprocess_commands: global.execution.preprocess_commands,
        ..options
    }
}

fn provider_with(
    global: &GlobalOptions,
    options: ProviderOptions,
) -> anyhow::Result<SkillsProvider> {
    let catalog = Arc::new(super::default_catalog(global)?);
    let executor = Arc::new(super::execute::executor(global)?);
    Ok(SkillsProvider::new(
        catalog,
        executor,
        provider_options(global, options),
    ))
}

/// A provider for commands that only render (`prompt`, `tools`): they never run code, so the
/// executor is built without probing the sandbox.
fn rendering_provider(
    global: &GlobalOptions,
    options: ProviderOptions,
) -> anyhow::Result<SkillsProvider> {
    let catalog = Arc::new(super::default_catalog(global)?);
    let executor = skillbox_exec::Executor::new(skillbox_exec::ExecutorConfig {
        helper: None,
        policy: skillbox_exec::SandboxPolicy {
            mode: skillbox_exec::SandboxMode::Off,
            ..skillbox_exec::SandboxPolicy::default()
        },
        ..skillbox_exec::ExecutorConfig::default()
    })
    .map_err(|error| anyhow::anyhow!("{error}"))?;
    Ok(SkillsProvider::new(
        catalog,
        Arc::new(executor),
        provider_options(global, options),
    ))
}

/// `skillbox prompt`.
pub fn prompt(global: &GlobalOptions, arguments: &PromptArguments) -> anyhow::Result<ExitCode> {
    let format = PromptFormat::parse(&arguments.format)
        .ok_or_else(|| anyhow::anyhow!("unknown prompt format `{}`", arguments.format))?;
    let provider = rendering_provider(
        global,
        ProviderOptions {
            prompt_budget: PromptBudget {
                max_chars: arguments.max_chars,
                max_tokens: arguments.max_tokens,
            },
            ..ProviderOptions::default()
        },
    )?;
    let mut text = provider.system_prompt(format);
    text.push('\n');
    print_text(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `skillbox tools`.
pub fn tools(global: &GlobalOptions, arguments: &ToolsArguments) -> anyhow::Result<ExitCode> {
    let format = ToolFormat::parse(&arguments.format)
        .ok_or_else(|| anyhow::anyhow!("unknown tool format `{}`", arguments.format))?;
    let profile = ToolProfile::parse(&arguments.profile)
        .ok_or_else(|| anyhow::anyhow!("unknown profile `{}`", arguments.profile))?;
    let provider = rendering_provider(global, ProviderOptions::default())?;
    for warning in provider.warnings() {
        eprintln!("warning: {warning}");
    }
    print_json(&render_tools(&provider.tools(profile), format))?;
    Ok(ExitCode::SUCCESS)
}
