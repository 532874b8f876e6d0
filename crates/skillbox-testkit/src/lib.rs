//! Helpers every skillbox test suite needs: where the repository and the shared corpus are,
//! the Python venv holding the reference implementations, and one tokio runtime per test binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The repository root.
#[must_use]
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

/// The shared corpus of real-world skills beside the repository.
#[must_use]
pub fn corpus_root() -> PathBuf {
    repo_root().join("../shared/corpus")
}

/// The Python interpreter of the test venv (skills-ref, mcp, requests), created on first use by
/// `scripts/setup-test-venv.sh`. Fails the test with the script's message when it cannot be
/// created: the peers are part of the test suite, not optional.
#[must_use]
pub fn peer_python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let output = Command::new("bash")
                .arg(repo_root().join("scripts/setup-test-venv.sh"))
                .output()
                .expect("bash runs");
            assert!(
                output.status.success(),
                "setting up the test venv failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            PathBuf::from(
                String::from_utf8(output.stdout)
                    .expect("a UTF-8 path")
                    .trim(),
            )
        })
        .clone()
}

/// One multi-threaded runtime for the whole test binary: warm workers' pipes and servers belong
/// to the runtime that started them.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}
