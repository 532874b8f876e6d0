//! Shared test helpers: the real binary, temporary skill trees, and the Python peer venv.

pub use skillbox_testkit::{corpus_root, peer_python, repo_root, write_tree};

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

/// A minimal valid SKILL.md for `name`.
pub fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nInstructions.\n")
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
