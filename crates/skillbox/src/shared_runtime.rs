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
/// When the runtime cannot be built (the process may start no more threads).
pub fn shared_runtime() -> Result<&'static tokio::runtime::Runtime, std::io::Error> {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    if let Some(runtime) = RUNTIME.get() {
        return Ok(runtime);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(SHARED_RUNTIME_WORKERS)
        .thread_name("skillbox")
        .enable_all()
        .build()?;
    // Two first callers may race: the loser's runtime is dropped unused.
    Ok(RUNTIME.get_or_init(|| runtime))
}
