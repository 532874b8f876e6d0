//! `skillbox serve`: the Skills Protocol at `/rpc`, MCP at `/mcp`, the web app at `/` and
//! `/metrics`, over the catalog, reloaded as its files change.

use std::process::ExitCode;
use std::sync::Arc;

use skillbox_tools::ToolProfile;

use crate::arguments::{GlobalOptions, ServeArguments};
use crate::setup::provider::{open_data_dir_with, served_provider};
use crate::setup::{self, Setup};

/// `skillbox serve`.
pub fn run(global: &GlobalOptions, arguments: &ServeArguments) -> anyhow::Result<ExitCode> {
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
    let mut catalog_options = Setup::new(global, &arguments.roots)?.served_catalog_options();
    catalog_options
        .roots
        .push(skillbox_core::SkillRoot::builtin(builtin));
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
        .with_server_config(setup::executor::server_pool(&global.execution).config())
        .with_allowed_hosts(arguments.allowed_hosts.clone());
    if let Some(timeout_ms) = arguments.header_read_timeout_ms {
        state = state.with_header_read_timeout(std::time::Duration::from_millis(timeout_ms));
    }
    raise_open_files_limit();
    let runtime = setup::runtime()?;
    if let Some(skillbox_services::BlobLocation::Remote(_)) = blob_location {
        // A bucket that cannot be reached is reported now, not at the first blob.
        runtime.block_on(data.blobs().check_access())?;
    }
    let blobs_shown = data.blobs().shown_location();
    let mcp_profile = ToolProfile::parse(&arguments.mcp_profile).unwrap_or(ToolProfile::Skills);
    let chat = setup::model::web_chat_setup(&arguments.chat, &arguments.also_model, &data_dir)?;
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
