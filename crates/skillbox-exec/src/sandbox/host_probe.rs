//! What the host supports ([`HostSupport`]), as the helper's `probe` finds it: asked once per
//! process, and cached in the runtime folder for one-shot commands, keyed by the helper binary,
//! the kernel and boot, and the user.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::helper_command::HelperCommand;

/// What the host can do, as found by the helper's probe.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostSupport {
    /// The runtime runs as root (so the sandbox must drop to another uid).
    pub running_as_root: bool,
    /// Dropping to the sandbox uid works.
    pub uid_drop: bool,
    /// New PID, network, mount, IPC and UTS namespaces can be created.
    pub namespaces: bool,
    /// Landlock ABI version, when Landlock is enabled.
    pub landlock_abi: Option<i32>,
    /// seccomp filters can be installed.
    pub seccomp: bool,
    /// A control group per run can be made (memory and tasks of the whole run bounded).
    #[serde(default)]
    pub cgroups: bool,
    /// Why a layer is missing, per layer.
    pub notes: Vec<String>,
}

impl HelperCommand {
    /// Ask the helper what the host supports (cached for the life of the process).
    pub fn probe(&self) -> &'static HostSupport {
        static SUPPORT: OnceLock<HostSupport> = OnceLock::new();
        SUPPORT.get_or_init(|| self.probe_uncached())
    }

    /// What the host supports, from `cache` when it was written for this helper binary, this
    /// kernel and boot, and this user; otherwise probed (and the cache rewritten). Saves a
    /// one-shot command the helper's probe (a few forks and namespace attempts).
    pub fn probe_cached(&self, cache: &Path) -> HostSupport {
        static SUPPORT: OnceLock<HostSupport> = OnceLock::new();
        let key = ProbeKey::current(&self.program);
        if let Some(support) = SUPPORT.get() {
            // Probed already in this process; a runtime folder without the cache gets one.
            if let Some(key) = key.filter(|_| !cache.exists()) {
                store_probe(cache, key, support);
            }
            return support.clone();
        }
        if let Some(key) = &key
            && let Ok(text) = fs_err::read(cache)
            && let Ok(cached) = serde_json::from_slice::<ProbeCache>(&text)
            && cached.key == *key
        {
            return SUPPORT.get_or_init(|| cached.support).clone();
        }
        let support = SUPPORT.get_or_init(|| self.probe_uncached()).clone();
        if let Some(key) = key {
            store_probe(cache, key, &support);
        }
        support
    }

    /// Probe afresh, ignoring and rewriting `cache` (for `doctor`).
    #[must_use]
    pub fn probe_fresh(&self, cache: &Path) -> HostSupport {
        let _ = std::fs::remove_file(cache);
        let support = self.probe_uncached();
        if let Some(key) = ProbeKey::current(&self.program) {
            store_probe(cache, key, &support);
        }
        support
    }

    fn probe_uncached(&self) -> HostSupport {
        let output = std::process::Command::new(&self.program)
            .args(&self.leading_args)
            .arg("probe")
            .env_clear()
            .stdin(std::process::Stdio::null())
            .output();
        match output {
            Ok(output) if output.status.success() => serde_json::from_slice(&output.stdout)
                .unwrap_or_else(|error| HostSupport {
                    notes: vec![format!(
                        "the sandbox probe printed something unreadable: {error}"
                    )],
                    ..HostSupport::default()
                }),
            Ok(output) => HostSupport {
                notes: vec![format!(
                    "the sandbox probe failed: {}",
                    String::from_utf8_lossy(&output.stderr).trim()
                )],
                ..HostSupport::default()
            },
            Err(error) => HostSupport {
                notes: vec![format!(
                    "the sandbox helper `{}` cannot be started: {error}",
                    self.program.display()
                )],
                ..HostSupport::default()
            },
        }
    }
}

/// File (in the runtime folder) caching the helper's probe.
pub const PROBE_CACHE_FILE: &str = "host-probe.json";

/// What a probe result depends on: the helper binary, the kernel and this boot (sysctls and
/// boot parameters), and who runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ProbeKey {
    helper: PathBuf,
    helper_identity: (u64, u64, u64, i64, i64),
    kernel: String,
    boot_id: String,
    euid: u32,
}

impl ProbeKey {
    fn current(helper: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(helper).ok()?;
        let read = |path: &str| fs_err::read_to_string(path).ok();
        Some(ProbeKey {
            helper: helper.to_path_buf(),
            helper_identity: (
                metadata.dev(),
                metadata.ino(),
                metadata.size(),
                metadata.mtime(),
                metadata.mtime_nsec(),
            ),
            kernel: format!(
                "{} {}",
                read("/proc/sys/kernel/osrelease")?.trim(),
                read("/proc/sys/kernel/version")?.trim()
            ),
            boot_id: read("/proc/sys/kernel/random/boot_id")?.trim().to_owned(),
            euid: nix::unistd::geteuid().as_raw(),
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct ProbeCache {
    key: ProbeKey,
    support: HostSupport,
}

/// Write JSON to `path` whole, readable by its owner alone (a cache: not flushed to disk).
fn write_atomically(path: &Path, value: &impl Serialize) -> std::io::Result<()> {
    skillbox_trust::safe_write::write_file_atomically(
        path,
        &serde_json::to_vec(value).map_err(std::io::Error::other)?,
        skillbox_trust::safe_write::WriteOptions::PRIVATE.unsynced(),
    )
}

/// Write the probe cache (a failure only costs the next command a probe).
fn store_probe(cache: &Path, key: ProbeKey, support: &HostSupport) {
    let record = ProbeCache {
        key,
        support: support.clone(),
    };
    if let Err(error) = write_atomically(cache, &record) {
        tracing::debug!(%error, cache = %cache.display(), "cannot write the probe cache");
    }
}
