//! What one run may ask for (its wall-clock limit, its input blobs and their bytes, the skills
//! it mounts, the size of its code) and [`RunLimits`], how many runs execute at once and how
//! many may wait.

use std::time::Duration;

use skillbox_exec::executor::python_run::MAX_OUTPUT_BYTES_TOTAL;

/// Longest wall-clock limit a caller may ask for.
pub const MAX_RUN_TIMEOUT: Duration = Duration::from_secs(240);
/// Most input blobs one run may mount.
pub const MAX_INPUT_BLOBS: usize = 64;
/// Default for the most bytes of input blobs one run may read in all: each run gets its own
/// copy of its inputs on the data folder's disk, so without a bound one request naming 64 large
/// blobs would copy tens of GiB. The same as a run may write to `out/`.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = MAX_OUTPUT_BYTES_TOTAL;
/// Most skills one `run_code` may mount.
pub const MAX_MOUNTED_SKILLS: usize = 64;
/// Largest `code` accepted, in bytes.
pub const MAX_CODE_BYTES: usize = 1024 * 1024;

/// How many runs may execute at once, and how many may wait for a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    /// Runs executing at once.
    pub max_concurrent: usize,
    /// Runs waiting for a turn; past this, callers get a "busy, retry" error.
    pub max_queued: usize,
    /// Bytes of input blobs one run may read in all (they are copied for it).
    pub max_input_bytes: u64,
}

impl Default for RunLimits {
    /// As many runs as cores, four times that waiting, and [`DEFAULT_MAX_INPUT_BYTES`] of
    /// inputs each.
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        RunLimits {
            max_concurrent: cores,
            max_queued: cores * 4,
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
        }
    }
}
