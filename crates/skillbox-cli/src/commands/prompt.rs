//! `skillbox prompt`: the system-prompt section a model is shown, from the same provider that
//! answers `skillbox call`.

use std::process::ExitCode;

use skillbox_tools::{PromptBudget, PromptFormat, ProviderOptions};

use crate::arguments::{GlobalOptions, PromptArguments};
use crate::output::print_text;
use crate::setup::Setup;
use crate::setup::provider::rendering_provider;

/// `skillbox prompt`.
pub fn run(global: &GlobalOptions, arguments: &PromptArguments) -> anyhow::Result<ExitCode> {
    let format = PromptFormat::parse(&arguments.format)
        .ok_or_else(|| anyhow::anyhow!("unknown prompt format `{}`", arguments.format))?;
    let provider = rendering_provider(
        &Setup::new(global, &arguments.roots)?,
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
