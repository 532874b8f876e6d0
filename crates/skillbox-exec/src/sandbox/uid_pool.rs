//! The uids sandboxed programs run as: `nobody` for the helper's probe, and, when the runtime is
//! root, one uid per live execution from a pool above 2^31, leased host-wide through lock files
//! so that no two runs (of this runtime or another) share one.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// User and group id the probe drops to (`nobody`).
pub const SANDBOX_UID: u32 = 65534;
/// See [`SANDBOX_UID`].
pub const SANDBOX_GID: u32 = 65534;
/// First uid of the pool sandboxed executions run as when the runtime is root. Each live
/// execution gets its own uid (and gid), so `RLIMIT_NPROC` limits each run separately: a fork
/// bomb in one sandbox cannot starve another. The pool sits above 2^31, where no account
/// allocator hands out uids (SSSD's default range ends at 2,000,200,000; systemd's ranges end
/// below 2^31), so no real user can share a sandbox uid and read its processes.
pub const SANDBOX_UID_POOL_START: u32 = 3_000_000_000;
/// Size of that pool (most executions alive at once).
pub const SANDBOX_UID_POOL_SIZE: u32 = 4_096;

/// Folder of per-uid lock files shared by every skillbox runtime on the host. A runtime holds
/// an exclusive `flock` on `<uid>` for as long as an execution runs as that uid, so two runtimes
/// (or two pools) never hand out the same uid at once.
pub const UID_LOCK_DIRECTORY: &str = "/run/skillbox-uids";

/// Hands out uids from the sandbox pool, one per live execution, host-wide: a uid is in use by
/// this pool (an in-process set) or by any other runtime (its lock file is locked).
#[derive(Debug)]
pub struct UidPool {
    in_use: std::sync::Mutex<std::collections::BTreeSet<u32>>,
    next: std::sync::atomic::AtomicU32,
    lock_directory: PathBuf,
    prepared: OnceLock<Result<PathBuf, String>>,
}

impl Default for UidPool {
    /// A pool that coordinates through [`UID_LOCK_DIRECTORY`].
    fn default() -> Self {
        UidPool::with_lock_directory(Path::new(UID_LOCK_DIRECTORY), 0)
    }
}

impl UidPool {
    /// A pool coordinating with other runtimes through the lock files in `lock_directory`,
    /// trying uids from `SANDBOX_UID_POOL_START + first_offset` on.
    #[must_use]
    pub fn with_lock_directory(lock_directory: &Path, first_offset: u32) -> Self {
        UidPool {
            in_use: std::sync::Mutex::default(),
            next: std::sync::atomic::AtomicU32::new(first_offset % SANDBOX_UID_POOL_SIZE),
            lock_directory: lock_directory.to_path_buf(),
            prepared: OnceLock::new(),
        }
    }

    /// The process-wide pool. It starts at an offset derived from the process id so that
    /// runtimes rarely contend for the same lock files; the locks make sharing impossible.
    #[must_use]
    pub fn global() -> std::sync::Arc<Self> {
        static POOL: OnceLock<std::sync::Arc<UidPool>> = OnceLock::new();
        std::sync::Arc::clone(POOL.get_or_init(|| {
            std::sync::Arc::new(UidPool::with_lock_directory(
                Path::new(UID_LOCK_DIRECTORY),
                std::process::id().wrapping_mul(7_919),
            ))
        }))
    }

    fn lock_directory(&self) -> Result<&Path, String> {
        self.prepared
            .get_or_init(|| {
                crate::private_directory::ensure_private_directory(&self.lock_directory, 0o700)
                    .map_err(|error| format!("cannot prepare the sandbox uid locks: {error}"))
            })
            .as_deref()
            .map_err(Clone::clone)
    }

    /// Lease a uid no other live execution (of this or any other runtime) uses.
    ///
    /// # Errors
    /// When every uid of the pool is in use, or the lock folder cannot be used.
    pub fn lease(self: &std::sync::Arc<Self>) -> Result<UidLease, String> {
        let directory = self.lock_directory()?;
        let mut in_use = self
            .in_use
            .lock()
            .map_err(|_| "the uid pool is poisoned".to_owned())?;
        for _ in 0..SANDBOX_UID_POOL_SIZE {
            let offset = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                % SANDBOX_UID_POOL_SIZE;
            let uid = SANDBOX_UID_POOL_START + offset;
            if in_use.contains(&uid) {
                continue;
            }
            let path = directory.join(uid.to_string());
            let file = fs_err::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|error| format!("cannot claim a sandbox uid: {error}"))?;
            match nix::fcntl::Flock::lock(
                file.into_parts().0,
                nix::fcntl::FlockArg::LockExclusiveNonblock,
            ) {
                Ok(lock) => {
                    in_use.insert(uid);
                    return Ok(UidLease {
                        uid,
                        pool: std::sync::Arc::clone(self),
                        _lock: lock,
                    });
                }
                Err((_, nix::errno::Errno::EWOULDBLOCK)) => continue,
                Err((_, error)) => {
                    return Err(format!(
                        "cannot lock `{}` to claim a sandbox uid: {error}",
                        path.display()
                    ));
                }
            }
        }
        Err(format!(
            "all {SANDBOX_UID_POOL_SIZE} sandbox uids are in use"
        ))
    }
}

/// A uid leased for one execution; returned to the pool (and its lock released) when dropped.
#[derive(Debug)]
pub struct UidLease {
    /// The uid (also used as the gid).
    pub uid: u32,
    pool: std::sync::Arc<UidPool>,
    _lock: nix::fcntl::Flock<std::fs::File>,
}

impl Drop for UidLease {
    fn drop(&mut self) {
        if let Ok(mut in_use) = self.pool.in_use.lock() {
            in_use.remove(&self.uid);
        }
    }
}
