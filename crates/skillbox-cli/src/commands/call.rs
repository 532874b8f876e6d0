//! `skillbox call`: answer any tool a model can call, through the library facade
//! (`skillbox::Provider`) and so the door policy, and print what the model would receive.

use std::process::ExitCode;

use serde_json::Value;
use skillbox_core::printable::{printable, printable_block};

use crate::arguments::{CallArguments, GlobalOptions};
use crate::output::print_json;
use crate::setup::Setup;
use crate::setup::provider::{open_data_dir, provider, provider_with_services};
use crate::{EXIT_PROBLEMS, EXIT_USAGE};

/// `skillbox call`: every tool goes through the facade's `call` (the door policy, offered every
/// tool, as the `cli` door), so this prints what a model would receive (escaped for the terminal). The run and blob tools are answered
/// with the services of the data folder `skillbox serve` uses by default (`--data-dir`).
pub fn run(global: &GlobalOptions, arguments: &CallArguments) -> anyhow::Result<ExitCode> {
    let parsed: Value = match serde_json::from_str(&arguments.args) {
        Ok(value) => value,
        Err(error) => {
            print_json(&serde_json::json!({
                "error": format!("`--args` is not valid JSON ({error}); pass an object such as '{{\"text\": \"hello\"}}'")
            }))?;
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    // Only the run and blob tools need the data folder: the others never create it.
    let setup = Setup::new(global, &arguments.roots)?
        .with_run_timeout(arguments.timeout_ms.map(std::time::Duration::from_millis));
    let provider = provider(&setup)?;
    let needs_services = skillbox_tools::registry::lookup(
        &provider,
        skillbox_tools::Offer::Everything,
        &arguments.tool,
    )
    .is_some_and(|tool| tool.facts().needs_services);
    // Only the run and blob tools need the data folder: the others never create it.
    let provider = if needs_services {
        let (_, data) = open_data_dir(arguments.data_dir.as_deref())?;
        provider_with_services(&setup, &data)?
    } else {
        provider
    };
    for warning in provider.warnings() {
        eprintln!("warning: {}", printable(warning));
    }
    let outcome = skillbox::Provider::over(provider)
        .with_offer(skillbox::ToolOffer::Everything)
        .with_door(skillbox::Door::Cli)
        .call_blocking(&arguments.tool, &parsed);
    // What the model would receive, with what could drive a terminal (a body's or a script's
    // escape sequences) made visible.
    let mut text = printable_block(&outcome.text()).into_owned();
    text.push('\n');
    crate::output::print_text(&text)?;
    Ok(if outcome.is_error() {
        ExitCode::from(EXIT_PROBLEMS)
    } else {
        ExitCode::SUCCESS
    })
}
