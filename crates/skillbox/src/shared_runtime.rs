//! The one async runtime a process's blocking callers share ([`crate::Provider::call_blocking`],
//! the bindings' calls): built on first use, never shut down, so skill servers and warm
//! workers started by one call stay reachable from the next.

use std::sync::OnceLock;

/// Worker threads of the shared runtime: the work of a call is in the sandboxed processes
/// and the blocking pool, not on these threads.
pub const SHARED_RUNTIME_WORKERS: usize = 2;

/// The process's shared runtime, built on first use.
///
/// # Errors
/// When the runtime cannot be built (the process may start no more threads), or when this
/// process is a child forked after the runtime was built: the child's copy has none of the
/// runtime's threads, and a call in it would wait forever.
pub fn shared_runtime() -> Result<&'static tokio::runtime::Runtime, std::io::Error> {
    static RUNTIME: OnceLock<(tokio::runtime::Runtime, u32)> = OnceLock::new();
    let built = match RUNTIME.get() {
        Some(built) => built,
        None => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(SHARED_RUNTIME_WORKERS)
                .thread_name("skillbox")
                .enable_all()
                .build()?;
            // Two first callers may race: the loser's runtime is dropped unused.
            RUNTIME.get_or_init(|| (runtime, std::process::id()))
        }
    };
    let (runtime, built_in) = built;
    if *built_in != std::process::id() {
        return Err(std::io::Error::other(format!(
            "skillbox was first used in process {built_in}, and this is a child forked from it, which has none of its threads; open the provider in the child (after the fork), or start workers with multiprocessing's \"spawn\" or \"forkserver\""
        )));
    }
    Ok(runtime)
}
