//! Running a registry tool (`npm`, `python3 -m pip`) for an install: bounded in time, its
//! output kept in files (no pipe to fill), its standard input closed, and its failure told
//! with the end of what it wrote.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

use super::PackageError;

/// Bytes of a tool's output kept for messages.
const OUTPUT_TAIL_BYTES: u64 = 4 * 1024;
/// Bytes of a tool's standard output read as its answer (a pip report).
const MAX_ANSWER_BYTES: u64 = 64 * 1024 * 1024;

/// `program` on `PATH`, as the shell would find it.
pub(crate) fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|folder| folder.join(program))
        .find(|candidate| {
            use std::os::unix::fs::PermissionsExt;
            fs_err::metadata(candidate).is_ok_and(|metadata| {
                metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
            })
        })
}

/// Run `program args` in `folder` (with `env` added), for at most `timeout`; its standard
/// output as text. `what` names the step in messages.
pub(crate) fn run_tool(
    what: &str,
    program: &Path,
    args: &[&str],
    folder: &Path,
    env: &[(&str, &str)],
    timeout: Duration,
) -> Result<String, PackageError> {
    let failed = |message: String| PackageError::new(format!("{what}: {message}"));
    let output_file = || {
        tempfile::tempfile_in(folder)
            .map_err(|error| failed(format!("cannot make an output file: {error}")))
    };
    let (mut stdout, mut stderr) = (output_file()?, output_file()?);
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(folder)
        .stdin(Stdio::null())
        .stdout(Stdio::from(
            stdout
                .try_clone()
                .map_err(|error| failed(error.to_string()))?,
        ))
        .stderr(Stdio::from(
            stderr
                .try_clone()
                .map_err(|error| failed(error.to_string()))?,
        ));
    for (key, value) in env {
        command.env(key, value);
    }
    tracing::debug!(program = %program.display(), ?args, "running a registry tool");
    let mut child = command
        .spawn()
        .map_err(|error| failed(format!("cannot start `{}`: {error}", program.display())))?;
    let status = match child.wait_timeout(timeout) {
        Ok(Some(status)) => status,
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(failed(format!(
                "`{}` did not finish in {} s",
                program.display(),
                timeout.as_secs()
            )));
        }
        Err(error) => return Err(failed(error.to_string())),
    };
    if !status.success() {
        let tail = |file: &mut std::fs::File| {
            use std::io::{Seek, SeekFrom};
            let length = file.seek(SeekFrom::End(0)).unwrap_or(0);
            let _ = file.seek(SeekFrom::Start(length.saturating_sub(OUTPUT_TAIL_BYTES)));
            let mut text = String::new();
            let _ = file.take(OUTPUT_TAIL_BYTES).read_to_string(&mut text);
            text.trim().to_owned()
        };
        let said = [tail(&mut stderr), tail(&mut stdout)]
            .into_iter()
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        return Err(failed(format!(
            "`{}` failed ({status}){}",
            program.display(),
            if said.is_empty() {
                String::new()
            } else {
                format!("; it said:\n{said}")
            }
        )));
    }
    use std::io::{Seek, SeekFrom};
    stdout
        .seek(SeekFrom::Start(0))
        .map_err(|error| failed(error.to_string()))?;
    let mut answer = String::new();
    stdout
        .take(MAX_ANSWER_BYTES)
        .read_to_string(&mut answer)
        .map_err(|error| failed(format!("its output is not text: {error}")))?;
    Ok(answer)
}
