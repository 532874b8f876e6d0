//! How much one install may fetch and unpack.

/// Bounds on what a source may bring. The per-skill defaults are the MCP skills extension's
/// ceiling (512 files, 16 MiB per skill).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstallLimits {
    /// Most files in one skill.
    pub max_files_per_skill: usize,
    /// Most bytes of one skill's files.
    pub max_bytes_per_skill: u64,
    /// Most bytes downloaded for one artifact (an archive, an index, a file).
    pub max_download_bytes: u64,
    /// Most entries in one archive or git tree walked.
    pub max_source_entries: usize,
    /// Most bytes unpacked from one archive or git tree.
    pub max_source_bytes: u64,
    /// Largest ratio of unpacked to packed size of one archive entry (zip bombs).
    pub max_compression_ratio: u64,
    /// Longest one HTTP request of a git fetch may take.
    pub git_http_timeout: std::time::Duration,
    /// Longest a server may take to accept a connection, and a git server to send its next
    /// bytes while a fetch waits for them (`git://` and ssh; an HTTP request is bounded as a
    /// whole by [`InstallLimits::git_http_timeout`]).
    pub network_timeout: std::time::Duration,
    /// Most bytes a git server may send before it is asked for objects: its capabilities and
    /// the refs it advertises.
    pub max_advertised_bytes: u64,
}

/// The default of [`InstallLimits::network_timeout`], in seconds.
pub const DEFAULT_NETWORK_TIMEOUT_SECONDS: u64 = 120;

impl Default for InstallLimits {
    fn default() -> Self {
        InstallLimits {
            max_files_per_skill: 512,
            max_bytes_per_skill: 16 * 1024 * 1024,
            max_download_bytes: 256 * 1024 * 1024,
            max_source_entries: 100_000,
            max_source_bytes: 1024 * 1024 * 1024,
            max_compression_ratio: 200,
            git_http_timeout: std::time::Duration::from_secs(600),
            network_timeout: std::time::Duration::from_secs(DEFAULT_NETWORK_TIMEOUT_SECONDS),
            max_advertised_bytes: 32 * 1024 * 1024,
        }
    }
}
