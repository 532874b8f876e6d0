//! `skillbox prompt` and `skillbox tools`: what a model is shown, from the same provider that
//! answers `skillbox call`.

use std::process::ExitCode;
use std::sync::Arc;

use skillbox_tools::{
    FindSkillsOffer, PromptBudget, PromptFormat, ProviderOptions, SkillsProvider, ToolFormat,
    ToolProfile, render_tools,
};

use crate::arguments::{GlobalOptions, PromptArguments, ServeArguments, ToolsArguments};
use crate::output::{print_json, print_text};

/// The provider over the global roots with the executor the options describe.
pub fn provider(global: &GlobalOptions) -> anyhow::Result<SkillsProvider> {
    provider_over(global, super::default_catalog(global)?, None)
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
fn model_provider_options(global: &GlobalOptions) -> ProviderOptions {
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
    global: &GlobalOptions,
    data: &skillbox_services::DataDir,
) -> anyhow::Result<SkillsProvider> {
    provider_over(global, super::default_catalog(global)?, Some(data))
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
    provider_over(global, catalog, data)
}

/// The provider over `catalog` with the executor the global options describe, and with `data`,
/// the run and blob services over it, the executor's runtime folder beside them (runs' output
/// files are copied there before they become blobs: on the data folder's disk, not in a small
/// /run).
fn provider_over(
    global: &GlobalOptions,
    catalog: skillbox_core::SkillCatalog,
    data: Option<&skillbox_services::DataDir>,
) -> anyhow::Result<SkillsProvider> {
    let catalog = Arc::new(catalog);
    let executor = Arc::new(super::execute::executor_in(
        global,
        catalog.roots(),
        data.map(skillbox_services::DataDir::runtime),
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
fn open_data_dir_with(
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
    let provider = rendering_provider(global, model_provider_options(global))?;
    for warning in provider.warnings() {
        eprintln!("warning: {}", skillbox_core::printable::printable(warning));
    }
    print_json(&render_tools(
        &skillbox_tools::registry::specs(&provider, skillbox_tools::Offer::Profile(profile)),
        format,
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// `skillbox serve`.
pub fn serve(global: &GlobalOptions, arguments: &ServeArguments) -> anyhow::Result<ExitCode> {
    let token_in_arguments = std::env::args_os().any(|argument| {
        argument == "--token" || argument.to_string_lossy().starts_with("--token=")
    });
    if token_in_arguments {
        // A command line can be read by every local user (`ps`, /proc/PID/cmdline); the
        // environment only by the same user.
        eprintln!(
            "warning: --token on the command line is visible to every user of this machine (ps); set SKILLBOX_TOKEN in the environment instead"
        );
    }
    skillbox_server::check_listen(arguments.listen, arguments.token.as_deref())?;
    // Parsed here rather than by clap, whose errors repeat the value (a URL someone may have
    // put credentials in).
    let blob_location = arguments
        .blob_store
        .as_deref()
        .map(skillbox_services::BlobLocation::parse)
        .transpose()?;
    let (data_dir, data) =
        open_data_dir_with(arguments.data_dir.as_deref(), blob_location.as_ref())?;
    // The built-in skills (the protocol guide) come from a root of their own; the catalog
    // refuses their reserved names from any other root, so no root can shadow them. Its path
    // and the runtime folder's are built from the folder `DataDir` checked, links resolved:
    // the path given could lead elsewhere by the time they are used.
    let builtin =
        skillbox_tools::builtin_skills::write_builtin_skills(&data.builtin()).map_err(|error| {
            anyhow::anyhow!(
                "cannot write the built-in skills under `{}`: {error}",
                data_dir.display()
            )
        })?;
    let mut roots = super::roots(global, &arguments.roots)?;
    roots.push(skillbox_core::SkillRoot::builtin(builtin));
    let catalog_options = skillbox_core::CatalogOptions {
        roots,
        mode: skillbox_core::ValidationMode::Lenient,
        ..skillbox_core::CatalogOptions::default()
    };
    let provider = Arc::new(served_provider(global, &catalog_options, Some(&data))?);
    let defaults = skillbox_server::RunLimits::default();
    let max_concurrent = arguments
        .max_runs
        .map_or(defaults.max_concurrent, usize::from);
    let limits = skillbox_server::RunLimits {
        max_concurrent,
        max_queued: arguments
            .max_queued_runs
            .map_or(max_concurrent * 4, usize::from),
        ..defaults
    };
    let mut state = skillbox_server::AppState::new(provider, &data, arguments.token.clone())
        .with_run_limits(limits)
        .with_allowed_hosts(arguments.allowed_hosts.clone());
    if let Some(timeout_ms) = arguments.header_read_timeout_ms {
        state = state.with_header_read_timeout(std::time::Duration::from_millis(timeout_ms));
    }
    raise_open_files_limit();
    let runtime = super::execute::runtime()?;
    if let Some(skillbox_services::BlobLocation::Remote(_)) = blob_location {
        // A bucket that cannot be reached is reported now, not at the first blob.
        runtime.block_on(data.blobs().check_access())?;
    }
    let blobs_shown = data.blobs().shown_location();
    let mcp_profile = ToolProfile::parse(&arguments.mcp_profile).unwrap_or(ToolProfile::Skills);
    let chat = super::agent::web_chat_setup(&arguments.chat, &arguments.also_model, &data_dir)?;
    runtime.block_on(async {
        let state = state.with_web(chat)?.with_mcp(
            mcp_profile,
            arguments
                .max_mcp_sessions
                .map_or(skillbox_mcp::DEFAULT_MAX_SESSIONS, usize::from),
        );
        let _watcher = if arguments.no_watch {
            None
        } else {
            Some(skillbox_tools::watch_roots(
                Arc::clone(state.live()),
                catalog_options,
            )?)
        };
        let listener = skillbox_server::bind(arguments.listen, state.token()).await?;
        let address = listener
            .local_addr()
            .map_err(|error| anyhow::anyhow!("cannot read the bound address: {error}"))?;
        // The one line a person (or a test using port 0) needs: where to send requests.
        eprintln!(
            "skillbox: serving the Skills Protocol at http://{address}/rpc and MCP at http://{address}/mcp (blobs in {blobs_shown}); the web app is at http://{address}/"
        );
        skillbox_server::serve_listener(listener, state).await;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Let the server hold as many connections as the system allows: raise the soft limit of open
/// files to the hard one. Every connection takes a descriptor, and at the usual soft limit of
/// 1024 a thousand idle keep-alive connections from one local program left no room for anyone
/// else (accept fails). Runs are unaffected: the sandbox sets its own limit.
fn raise_open_files_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => {
            if let Err(error) = setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
                tracing::warn!(%error, soft, hard, "cannot raise the limit of open files; the server may run out of connections early");
            }
        }
        Ok(_) => {}
        Err(error) => tracing::warn!(%error, "cannot read the limit of open files"),
    }
}
