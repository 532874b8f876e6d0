//! Git commands independent of the machine and of the process running the tests: no inherited
//! `GIT_*` variables, no system or global config, no credential prompts, a fixed author.

use std::path::Path;
use std::process::{Command, Stdio};

/// The author and committer of the test repositories' commits.
const AUTHOR_NAME: &str = "Skillbox Test";
/// Their e-mail address (a reserved domain).
const AUTHOR_EMAIL: &str = "test@skillbox.invalid";

/// Make `command` (a `git` command, or a program that runs git) independent of the machine and
/// of the process running the tests: no inherited `GIT_*` variables, no system config, `home`
/// as `HOME` (so no global config or credential helper), no prompts for credentials, and a
/// fixed author and committer. Returns `command` for chaining.
pub fn isolate_git<'a>(command: &'a mut Command, home: &Path) -> &'a mut Command {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            command.env_remove(name);
        }
    }
    command
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SSH_ASKPASS")
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", AUTHOR_NAME)
        .env("GIT_AUTHOR_EMAIL", AUTHOR_EMAIL)
        .env("GIT_COMMITTER_NAME", AUTHOR_NAME)
        .env("GIT_COMMITTER_EMAIL", AUTHOR_EMAIL)
}

/// A `git` command isolated by [`isolate_git`] with `home` as `HOME`.
#[must_use]
pub fn git_command(home: &Path) -> Command {
    let mut command = Command::new("git");
    isolate_git(&mut command, home);
    command
}

/// Run `command` (a git command), failing the test with its output when it fails; its stdout,
/// trimmed.
pub(super) fn run_git(mut command: Command, what: &str) -> String {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run git (needed for {what}): {error}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}
