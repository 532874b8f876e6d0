//! `skillbox mcp`: the skills over MCP on stdin and stdout, reloaded as their files change.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use skillbox_mcp::McpOptions;
use skillbox_tools::{LiveProvider, ToolProfile, watch_roots};

use crate::arguments::{GlobalOptions, McpArguments};
use crate::setup::provider::{open_data_dir, served_provider};
use crate::setup::{self, Setup};

/// How long the end of a session waits for work still running (a tool call the client did not
/// wait for) before the process exits.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// `skillbox mcp`.
pub fn run(global: &GlobalOptions, arguments: &McpArguments) -> anyhow::Result<ExitCode> {
    let profile = ToolProfile::parse(&arguments.profile).ok_or_else(|| {
        anyhow::anyhow!(
            "unknown profile `{}`; use `skills` or `protocol`",
            arguments.profile
        )
    })?;
    let options = Setup::new(global, &arguments.roots)?.served_catalog_options();
    // The protocol profile's runs and blobs need the data folder (as `serve` and `call` use
    // it); the skills profile never opens it.
    let data = match profile {
        ToolProfile::Protocol => Some(open_data_dir(arguments.data_dir.as_deref())?.1),
        ToolProfile::Skills => None,
    };
    let provider = served_provider(global, &options, data.as_ref())?;
    let runtime = setup::runtime()?;
    let outcome = runtime.block_on(async {
        let live = LiveProvider::new(provider);
        let _watcher = if arguments.no_watch {
            None
        } else {
            Some(watch_roots(Arc::clone(&live), options)?)
        };
        tracing::info!(
            skills = live.current().catalog().len(),
            "serving MCP on stdio"
        );
        skillbox_mcp::serve_stdio(
            live,
            McpOptions {
                profile,
                policy: Arc::new(
                    skillbox_tools::DoorPolicy::default()
                        .with_server_pool(setup::executor::server_pool(&global.execution)),
                ),
                ..McpOptions::default()
            },
        )
        .await?;
        anyhow::Ok(())
    });
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    outcome?;
    Ok(ExitCode::SUCCESS)
}
