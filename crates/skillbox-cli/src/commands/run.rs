//! `skillbox run`: run a script of a skill in the sandbox, streaming its output.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use skillbox_core::printable::printable;
use skillbox_exec::RunOptions;
use skillbox_exec::output::StreamKind;

use crate::arguments::{GlobalOptions, RunArguments};
use crate::output::print_json;
use crate::setup::{self, Setup};
use crate::{EXIT_PROBLEMS, EXIT_USAGE};

/// `skillbox run`.
pub fn run(global: &GlobalOptions, arguments: &RunArguments) -> anyhow::Result<ExitCode> {
    let catalog = Setup::new(global, &arguments.roots)?.catalog()?;
    let executor = setup::executor::executor(global, catalog.roots())?;
    let runtime = setup::runtime()?;
    let timeout = arguments.timeout_ms.map(Duration::from_millis);
    // Human output streams the script's own output as it comes; `--json` prints the result only.
    let (live_output, receiver) = if arguments.json {
        (None, None)
    } else {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        (Some(sender), Some(receiver))
    };
    let result = runtime.block_on(async {
        let printer = receiver.map(|receiver| tokio::spawn(print_live_output(receiver)));
        let result = executor
            .run(
                &catalog,
                &arguments.skill,
                &arguments.script,
                &arguments.args,
                RunOptions {
                    timeout,
                    live_output,
                },
            )
            .await;
        if let Some(printer) = printer {
            let _ = printer.await;
        }
        result
    });
    if arguments.json {
        print_json(&result)?;
        return Ok(if result.success {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(EXIT_PROBLEMS)
        });
    }
    // A script that exited non-zero has said why on stderr already; anything else is ours to say.
    if let (Some(error), Some(error_type)) = (&result.error, result.error_type)
        && (result.exit_code.is_none() || error_type != skillbox_exec::ErrorType::ExecutionFailed)
    {
        // The message may quote what the skill wrote (an archive entry's name, a script path).
        eprintln!("error[{error_type}]: {}", printable(error));
    }
    let code = match (result.exit_code, result.error_type) {
        (Some(code), _) => u8::try_from(code).unwrap_or(u8::MAX),
        (None, Some(skillbox_exec::ErrorType::InvalidArgs)) => EXIT_USAGE,
        (None, _) => EXIT_PROBLEMS,
    };
    Ok(ExitCode::from(code))
}

/// Copies a run's output to ours as it comes, until the run ends or our side is closed.
async fn print_live_output(
    mut receiver: tokio::sync::mpsc::UnboundedReceiver<(StreamKind, Vec<u8>)>,
) {
    while let Some((kind, chunk)) = receiver.recv().await {
        let written = match kind {
            StreamKind::Stdout => std::io::stdout()
                .lock()
                .write_all(&chunk)
                .and_then(|()| std::io::stdout().flush()),
            StreamKind::Stderr => std::io::stderr().lock().write_all(&chunk),
        };
        if written.is_err() {
            break;
        }
    }
}
