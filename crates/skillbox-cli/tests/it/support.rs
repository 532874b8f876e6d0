//! Shared test helpers: the real binary, temporary skill trees, and the Python peer venv.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The shared corpus of real-world skills beside the repository.
pub fn corpus_root() -> PathBuf {
    repo_root().join("../shared/corpus")
}

/// A command running the real `skillbox` binary from the repository root, with the
/// environment cleared of anything that would change which roots it reads.
pub fn skillbox() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::cargo_bin("skillbox").unwrap();
    command
        .current_dir(repo_root())
        .env_remove("SKILLBOX_ROOTS")
        .env_remove("SKILLBOX_LOG")
        .env("COLUMNS", "100");
    command
}

/// Write files (path relative to `root` → contents) into a tree.
pub fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (relative, contents) in files {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
}

/// A minimal valid SKILL.md for `name`.
pub fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nInstructions.\n")
}

/// The Python interpreter of the test venv (skills-ref, mcp, requests), created on first use
/// by `scripts/setup-test-venv.sh`. Fails the test with the script's message when it cannot be
/// created: the peers are part of the test suite, not optional.
pub fn peer_python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let output = Command::new("bash")
                .arg(repo_root().join("scripts/setup-test-venv.sh"))
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "setting up the test venv failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
        })
        .clone()
}

/// Parse stdout as JSON.
pub fn json_stdout(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}):\n{}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}
