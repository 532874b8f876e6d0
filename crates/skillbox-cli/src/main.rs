//! The `skillbox` command: argument parsing and printing around the skillbox libraries. Every
//! command calls one library function; this crate only decides how results look.

mod arguments;
mod commands;
mod output;
mod setup;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::arguments::{Arguments, Command};

// Loading a catalog makes many small allocations on every core. glibc grows per-thread arenas
// with a storm of mprotect calls and page faults there, and mimalloc returns freed pages to the
// kernel so eagerly that they fault back in (24% of the time in kernel page clearing, measured);
// jemalloc does neither and keeps peak memory lowest (53 MiB vs 65-72 MiB for 10,000 skills).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Exit code for "the command ran and found problems" (invalid skills).
pub const EXIT_PROBLEMS: u8 = 1;
/// Exit code for usage errors and I/O failures.
pub const EXIT_USAGE: u8 = 2;

/// The hidden first argument that makes this binary act as its own sandbox helper.
pub const SANDBOX_HELPER_ARGUMENT: &str = "__sandbox";

fn main() -> ExitCode {
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if raw.get(1).is_some_and(|arg| arg == SANDBOX_HELPER_ARGUMENT) {
        let code = skillbox_exec::sandbox::helper::run(&raw[2..]);
        return ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX));
    }
    let arguments = match Arguments::try_parse() {
        Ok(arguments) => arguments,
        Err(error) => {
            let code = if error.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = error.print();
            return ExitCode::from(code);
        }
    };
    init_tracing(arguments.global.verbose);
    let result = match &arguments.command {
        Command::List(list) => commands::list::run(&arguments.global, list),
        Command::Validate(validate) => commands::validate::run(&arguments.global, validate),
        Command::Show(show) => commands::show::run(&arguments.global, show),
        Command::Find(find) => commands::find::run(&arguments.global, find),
        Command::Run(run) => commands::run::run(&arguments.global, run),
        Command::Call(call) => commands::call::run(&arguments.global, call),
        Command::Doctor(doctor) => commands::doctor::run(&arguments.global, doctor),
        Command::Prompt(prompt) => commands::prompt::run(&arguments.global, prompt),
        Command::Tools(tools) => commands::tools::run(&arguments.global, tools),
        Command::Serve(serve) => commands::serve::run(&arguments.global, serve),
        Command::Mcp(mcp) => commands::mcp::run(&arguments.global, mcp),
        Command::Ask(ask) => commands::ask::run(&arguments.global, ask),
        Command::Chat(chat) => commands::chat::run(&arguments.global, chat),
        Command::Trust(trust) => commands::trust::trust(&arguments.global, trust),
        Command::Untrust(untrust) => commands::trust::untrust(untrust),
        Command::Add(add) => commands::install::add(add),
        Command::Install(install) => commands::install::install(install),
        Command::Update(update) => commands::install::update(update),
        Command::Remove(remove) => commands::install::remove(remove),
        Command::Outdated(outdated) => commands::install::outdated(outdated),
        Command::Verify(scope) => commands::install::verify(scope),
        Command::Prepare(prepare) => commands::install::prepare(&arguments.global, prepare),
        Command::New(new) => commands::author::new_skill(new),
        Command::Pack(pack) => commands::author::pack(pack),
        Command::Eval(eval) => commands::eval::run(&arguments.global, eval),
    };
    match result {
        Ok(code) => code,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            let mut stderr = std::io::stderr().lock();
            // Errors may quote paths and values a skill wrote.
            let shown =
                |text: String| skillbox_core::printable::printable_block(&text).into_owned();
            let _ = writeln!(stderr, "error: {}", shown(error.to_string()));
            for cause in error.chain().skip(1) {
                let _ = writeln!(stderr, "  caused by: {}", shown(cause.to_string()));
            }
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn,rmcp=error",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("SKILLBOX_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
