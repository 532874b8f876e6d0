//! The tool provider a command answers from (the catalog, the executor and, for the run and
//! blob tools, the services over the data folder), and the data folder itself.

use std::sync::Arc;

use skillbox_tools::{FindSkillsOffer, PromptBudget, ProviderOptions, SkillsProvider};

use super::Setup;
use crate::arguments::GlobalOptions;

/// The provider over the global roots with the executor the options describe.
pub fn provider(setup: &Setup<'_>) -> anyhow::Result<SkillsProvider> {
    provider_over(setup.global, setup.catalog()?, None, setup.run_timeout)
}

pub(crate) fn provider_options(
    global: &GlobalOptions,
    options: ProviderOptions,
) -> ProviderOptions {
    ProviderOptions {
        preprocess_commands: global.execution.preprocess_commands,
        // clap accepts only the names `parse` knows.
        find_skills: FindSkillsOffer::parse(&global.find_skills).unwrap_or_default(),
        ..options
    }
}

/// The options of a provider that talks to models: the skills section of their prompt within
/// `--max-prompt-chars`.
pub(crate) fn model_provider_options(global: &GlobalOptions) -> ProviderOptions {
    provider_options(
        global,
        ProviderOptions {
            prompt_budget: PromptBudget {
                max_chars: (global.max_prompt_chars > 0).then_some(global.max_prompt_chars),
                max_tokens: None,
            },
            ..ProviderOptions::default()
        },
    )
}

/// The provider over the global roots answering the run and blob tools too, with the services
/// of `data` (see [`provider_over`]).
pub fn provider_with_services(
    setup: &Setup<'_>,
    data: &skillbox_services::DataDir,
) -> anyhow::Result<SkillsProvider> {
    provider_over(
        setup.global,
        setup.catalog()?,
        Some(data),
        setup.run_timeout,
    )
}

/// The provider a server door answers from (`serve`, `mcp`): the catalog `options` describe
/// (folders that could not be loaded reported on stderr), over [`provider_over`].
pub fn served_provider(
    global: &GlobalOptions,
    options: &skillbox_core::CatalogOptions,
    data: Option<&skillbox_services::DataDir>,
) -> anyhow::Result<SkillsProvider> {
    let catalog = skillbox_core::SkillCatalog::load(options)?;
    for skipped in catalog.skipped() {
        crate::output::eprint_diagnostics(&skipped.diagnostics);
    }
    for warning in super::executor::contested_grants(&global.execution, &catalog) {
        tracing::warn!("{warning}");
    }
    provider_over(global, catalog, data, None)
}

/// The provider over `catalog` with the executor the global options describe, and with `data`,
/// the run and blob services over it, the executor's runtime folder beside them (runs' output
/// files are copied there before they become blobs: on the data folder's disk, not in a small
/// /run), and its time limit `run_timeout` when one is given.
fn provider_over(
    global: &GlobalOptions,
    catalog: skillbox_core::SkillCatalog,
    data: Option<&skillbox_services::DataDir>,
    run_timeout: Option<std::time::Duration>,
) -> anyhow::Result<SkillsProvider> {
    let catalog = Arc::new(catalog);
    let executor = Arc::new(super::executor::executor_in(
        global,
        catalog.roots(),
        data.map(skillbox_services::DataDir::runtime),
        run_timeout,
    )?);
    let provider = SkillsProvider::new(catalog, executor, model_provider_options(global));
    Ok(match data {
        Some(data) => provider.with_services(Arc::new(skillbox_services::Services::new(
            data,
            skillbox_services::RunLimits::default(),
        ))),
        None => provider,
    })
}

/// Open the data folder of blobs and runs: `given` (`--data-dir`), or by default `skillbox/`
/// in the user's data folder. Returns the path as given too, for messages.
pub fn open_data_dir(
    given: Option<&std::path::Path>,
) -> anyhow::Result<(std::path::PathBuf, skillbox_services::DataDir)> {
    open_data_dir_with(given, None)
}

/// [`open_data_dir`] with the blob store at `blobs` (`serve --blob-store`) when one is given.
pub(crate) fn open_data_dir_with(
    given: Option<&std::path::Path>,
    blobs: Option<&skillbox_services::BlobLocation>,
) -> anyhow::Result<(std::path::PathBuf, skillbox_services::DataDir)> {
    let data_dir = match given {
        Some(directory) => directory.to_path_buf(),
        None => dirs::data_dir()
            .ok_or_else(|| anyhow::anyhow!("no user data folder is known here; pass --data-dir"))?
            .join("skillbox"),
    };
    let data = skillbox_services::DataDir::open_with(
        &data_dir,
        skillbox_services::blobs::DEFAULT_BLOB_TTL,
        blobs,
    )?;
    Ok((data_dir, data))
}

/// A provider for commands that only render (`prompt`, `tools`): they never run code, so the
/// executor is built without probing the sandbox.
pub(crate) fn rendering_provider(
    setup: &Setup<'_>,
    options: ProviderOptions,
) -> anyhow::Result<SkillsProvider> {
    let global = setup.global;
    let catalog = Arc::new(setup.catalog()?);
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
