//! Starting one process through the sandbox helper, feeding it, capturing capped output,
//! enforcing the timeout and killing everything it started.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncWriteExt;

use crate::output::{CapturedOutput, OutputSender, StreamKind, capture};
use crate::sandbox::{
    HELPER_EXEC_FAILED, HELPER_SETUP_FAILED, HelperCommand, HostSupport, SandboxLayers,
    SandboxPlan, SandboxPolicy, UidPool,
};

/// How long output readers may go on after the process ended before they are abandoned.
const OUTPUT_DRAIN_GRACE: Duration = Duration::from_millis(500);

/// The sandbox as configured for one executor: helper, host support, layers in force.
#[derive(Debug, Clone)]
pub struct SandboxRuntime {
    /// The helper program, when there is one.
    pub helper: Option<HelperCommand>,
    /// What the host supports.
    pub support: HostSupport,
    /// The operator's policy.
    pub policy: SandboxPolicy,
    /// The layers every execution gets.
    pub layers: SandboxLayers,
    /// Per-execution uids (used when the uid drop is on).
    pub uids: std::sync::Arc<UidPool>,
    /// The cached probe, removed when the helper cannot set a run up (the host changed).
    pub probe_cache: Option<PathBuf>,
}

/// One process to run.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// Program (interpreter or executable script).
    pub program: PathBuf,
    /// Arguments after the program.
    pub args: Vec<OsString>,
    /// The complete environment.
    pub env: Vec<(String, String)>,
    /// The writable workspace, and the working directory unless `working_directory` is set.
    pub workspace: PathBuf,
    /// Where the program starts instead of the workspace.
    pub working_directory: Option<PathBuf>,
    /// Extra read-only paths.
    pub readable: Vec<PathBuf>,
    /// Whether the network stays reachable.
    pub network: bool,
    /// Bytes written to stdin, then closed; `None` for an empty stdin.
    pub stdin: Option<Vec<u8>>,
    /// Wall-clock limit.
    pub timeout: Duration,
    /// Bytes kept per output stream (from its beginning).
    pub max_output_bytes: usize,
    /// Bytes of the end of stderr kept besides its beginning (0: none).
    pub stderr_tail_bytes: usize,
    /// Forward output chunks here as they arrive.
    pub live_output: Option<OutputSender>,
    /// The uid (and gid) the execution runs as when the uid drop is on.
    pub uid: u32,
    /// Run in a minimal root instead of the host's file tree (paths in `workspace`, `readable`
    /// and `program` are then paths inside that root).
    pub root: Option<crate::sandbox::RootLayout>,
}

/// What happened.
#[derive(Debug, Clone)]
pub struct Completed {
    /// Exit code (128 + signal number when killed by a signal).
    pub exit_code: Option<i32>,
    /// Killed at the timeout.
    pub timed_out: bool,
    /// Captured stdout.
    pub stdout: CapturedOutput,
    /// Captured stderr.
    pub stderr: CapturedOutput,
    /// Wall time.
    pub duration: Duration,
    /// The helper could not set the sandbox up (nothing ran), with its message.
    pub setup_error: Option<String>,
}

impl SandboxRuntime {
    /// The plan for one invocation.
    fn plan(&self, invocation: &Invocation, setup_token: &str) -> SandboxPlan {
        SandboxPlan {
            layers: self.layers,
            network: invocation.network,
            workspace: invocation.workspace.clone(),
            working_directory: invocation.working_directory.clone(),
            readable: invocation.readable.clone(),
            // A private root has its own small writable /tmp and /dev/shm.
            writable: if invocation.root.is_some() {
                vec![PathBuf::from("/tmp"), PathBuf::from("/dev/shm")]
            } else {
                Vec::new()
            },
            limits: self.policy.limits,
            uid: invocation.uid,
            gid: invocation.uid,
            root: invocation.root.clone(),
            cgroup: self
                .layers
                .cgroups
                .then_some(crate::sandbox::cgroups::GroupLimits {
                    memory_bytes: self.policy.limits.run_memory_bytes,
                    tasks: self.policy.limits.processes,
                }),
            setup_token: setup_token.to_owned(),
            program_environment_prefix: crate::sandbox::PROGRAM_ENVIRONMENT_PREFIX.to_owned(),
        }
    }

    /// The command that starts an invocation through the helper (or directly without one);
    /// the helper marks its own error lines with `setup_token`.
    pub fn command(&self, invocation: &Invocation, setup_token: &str) -> tokio::process::Command {
        let mut command = match &self.helper {
            Some(helper) => {
                let plan =
                    serde_json::to_string(&self.plan(invocation, setup_token)).unwrap_or_default();
                let mut command = tokio::process::Command::new(&helper.program);
                command
                    .args(&helper.leading_args)
                    .arg("exec")
                    .arg("--plan")
                    .arg(plan)
                    .arg("--")
                    .arg(&invocation.program)
                    .args(&invocation.args);
                command
            }
            None => {
                let mut command = tokio::process::Command::new(&invocation.program);
                command
                    .args(&invocation.args)
                    .current_dir(
                        invocation
                            .working_directory
                            .as_ref()
                            .unwrap_or(&invocation.workspace),
                    )
                    .process_group(0);
                command
            }
        };
        command.env_clear();
        if self.helper.is_some() {
            // The helper's own environment: `PATH` (where it looks the program up) and the
            // program's, prefixed (see `PROGRAM_ENVIRONMENT_PREFIX`).
            if let Some((_, path)) = invocation.env.iter().find(|(key, _)| key == "PATH") {
                command.env("PATH", path);
            }
            command.envs(invocation.env.iter().map(|(key, value)| {
                (
                    format!("{}{key}", crate::sandbox::PROGRAM_ENVIRONMENT_PREFIX),
                    value,
                )
            }));
        } else {
            command.envs(invocation.env.iter().map(|(key, value)| (key, value)));
        }
        command
            .stdin(if invocation.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    }

    /// Run one invocation to completion.
    pub async fn execute(&self, invocation: Invocation) -> Completed {
        let started = Instant::now();
        let setup_token = uuid::Uuid::new_v4().simple().to_string();
        let mut command = self.command(&invocation, &setup_token);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(error) => {
                return Completed {
                    exit_code: None,
                    timed_out: false,
                    stdout: CapturedOutput::default(),
                    stderr: CapturedOutput::default(),
                    duration: started.elapsed(),
                    setup_error: Some(format!(
                        "cannot start `{}`: {error}",
                        self.helper
                            .as_ref()
                            .map_or(&invocation.program, |helper| &helper.program)
                            .display()
                    )),
                };
            }
        };
        let process_id = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        // Declared after `child`, so dropped before it: a run dropped midway (its caller was
        // cancelled) kills the whole group while the child is not yet reaped, so the group id
        // is still its own. `kill_on_drop` alone reaches the direct child only.
        let mut tree = TreeGuard(process_id);
        if let (Some(data), Some(mut stdin)) = (invocation.stdin, child.stdin.take()) {
            tokio::spawn(async move {
                let _ = stdin.write_all(&data).await;
                let _ = stdin.shutdown().await;
            });
        }
        let cap = invocation.max_output_bytes;
        let live = |kind| invocation.live_output.clone().map(|sender| (kind, sender));
        let stdout_live = live(StreamKind::Stdout);
        let stderr_live = live(StreamKind::Stderr);
        let stdout_task = child
            .stdout
            .take()
            .map(|stream| tokio::spawn(capture(stream, cap, 0, stdout_live)));
        let stderr_task = child.stderr.take().map(|stream| {
            tokio::spawn(capture(
                stream,
                cap,
                invocation.stderr_tail_bytes,
                stderr_live,
            ))
        });
        let (status, timed_out) = match tokio::time::timeout(invocation.timeout, child.wait()).await
        {
            Ok(status) => (status.ok(), false),
            Err(_) => {
                kill_tree(process_id);
                (child.wait().await.ok(), true)
            }
        };
        // Whatever the script left behind in its process group goes too.
        kill_tree(process_id);
        tree.0 = None;
        // A helper killed at the timeout (or one that became the program, without namespaces)
        // could not remove its run's control group.
        if self.layers.cgroups
            && (timed_out || !self.layers.namespaces)
            && let Some(pid) = process_id
        {
            let helper = pid.as_raw().unsigned_abs();
            drop(tokio::task::spawn_blocking(move || {
                crate::sandbox::cgroups::remove_group_of(helper);
            }));
        }
        let stdout = finish(stdout_task).await;
        let stderr = finish(stderr_task).await;
        let exit_code = status.and_then(|status| {
            use std::os::unix::process::ExitStatusExt;
            status
                .code()
                .or_else(|| status.signal().map(|signal| 128 + signal))
        });
        let setup_error = match exit_code {
            Some(HELPER_SETUP_FAILED | HELPER_EXEC_FAILED) if self.helper.is_some() => {
                let text = String::from_utf8_lossy(&stderr.bytes);
                let prefix = format!("skillbox-sandbox[{setup_token}]: ");
                text.lines()
                    .find_map(|line| line.strip_prefix(prefix.as_str()))
                    .map(str::to_owned)
            }
            _ => None,
        };
        if let (Some(_), Some(cache)) = (&setup_error, &self.probe_cache) {
            let _ = std::fs::remove_file(cache);
        }
        Completed {
            exit_code,
            timed_out,
            stdout,
            stderr,
            duration: started.elapsed(),
            setup_error,
        }
    }
}

/// Kills a run's process group when the run is dropped before it ended.
struct TreeGuard(Option<Pid>);

impl Drop for TreeGuard {
    fn drop(&mut self) {
        kill_tree(self.0.take());
    }
}

/// SIGKILL the process group led by `process_id` (the helper made it a session leader), and the
/// process itself in case it had not got that far.
pub fn kill_tree(process_id: Option<Pid>) {
    if let Some(pid) = process_id {
        let _ = killpg(pid, Signal::SIGKILL);
        let _ = kill(pid, Signal::SIGKILL);
    }
}

async fn finish(task: Option<tokio::task::JoinHandle<CapturedOutput>>) -> CapturedOutput {
    let Some(mut task) = task else {
        return CapturedOutput::default();
    };
    match tokio::time::timeout(OUTPUT_DRAIN_GRACE, &mut task).await {
        Ok(Ok(captured)) => captured,
        _ => {
            task.abort();
            CapturedOutput::default()
        }
    }
}
