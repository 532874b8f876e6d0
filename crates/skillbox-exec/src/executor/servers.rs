//! A skill's MCP server as a long-lived sandboxed process (`docs/design/skill-servers.md`):
//! started through the trust gate scripts pass, in the skill's layout (the warm workers'
//! machinery: a leased uid, namespaces, Landlock, seccomp, limits), in the skill's folder as
//! its working directory, with the skill's network policy, and given only the environment
//! variables it declares that the user granted as secrets. Its standard input and output are
//! the MCP connection; dropping the [`ServerProcess`] kills its whole process tree.
//!
//! Two things differ from a script's run, because a server outlives the call that starts it:
//! - its sandbox helper is started from one thread that lasts as long as the process (the
//!   helper dies with the thread that started it, and a thread of tokio's blocking pool ends
//!   after ten idle seconds);
//! - its output is read at a bounded pace ([`PacedRead`]): a server writing as fast as it can,
//!   to stdout or stderr, slows itself down, not skillbox.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use nix::unistd::Pid;
use skillbox_core::Skill;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{ChildStdin, ChildStdout};

use super::layout::{LayoutRequest, RunLayout, SANDBOX_SKILL_DIR};
use super::skill_files::resolve_in_skill;
use super::{Executor, InvocationIo, SkillCopy, outcome};
use crate::audit::{AuditRecord, now_ms};
use crate::error::{ErrorType, ExecError};
use crate::executor::off_the_async_threads;
use crate::interpreter::Language;
use crate::process::kill_tree;
use crate::sandbox::stray_processes::WorkerProcesses;
use crate::workers::{LongLived, end_what_escaped, keep_stderr_tail, stderr_tail_text};

/// The declared program of a stdio server, as skillbox starts it.
#[derive(Debug, Clone, Copy)]
pub struct ServerLaunch<'a> {
    /// The server's name (for the audit log and messages).
    pub name: &'a str,
    /// `python3`/`python` and `node` run with the executor's interpreters; a relative path
    /// names a file inside the skill; any other name is looked up on the sandbox's `PATH`.
    pub command: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// The environment variables it may receive: each is passed when the user granted a
    /// secret of that name to the skill, and never otherwise.
    pub env: &'a [String],
    /// Values given as templates for some of those variables (`${CLAUDE_PLUGIN_ROOT}/db`,
    /// `${KEY:-default}`): passed expanded, whether or not the name itself was granted.
    pub env_values: &'a std::collections::BTreeMap<String, String>,
}

/// Bytes per second a server's standard output is read at, past [`STDOUT_BURST_BYTES`]: a
/// tool list or a large answer comes at once, a flood of messages is slowed to this pace.
pub const STDOUT_BYTES_PER_SECOND: u64 = 1024 * 1024;
/// Bytes of standard output read at once before the pace applies (two of the largest
/// messages a server may send).
pub const STDOUT_BURST_BYTES: u64 = 8 * 1024 * 1024;
/// Bytes per second a server's stderr is read at, past [`STDERR_BURST_BYTES`] (only its tail
/// is kept, for messages).
pub const STDERR_BYTES_PER_SECOND: u64 = 256 * 1024;
/// Bytes of stderr read at once before the pace applies.
pub const STDERR_BURST_BYTES: u64 = 1024 * 1024;

/// A skill's MCP server, running. Dropped, it is killed with every process it started.
pub struct ServerProcess {
    /// Kept so the child is reaped; killed with its tree on drop.
    child: tokio::process::Child,
    process_id: Option<Pid>,
    processes: Option<WorkerProcesses>,
    pipes: Option<(PacedRead<ChildStdout>, ChildStdin)>,
    stderr_tail: Arc<std::sync::Mutex<Vec<u8>>>,
    /// Its host folder (without namespaces) and uid, released when it goes.
    _layout: RunLayout,
}

impl std::fmt::Debug for ServerProcess {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ServerProcess")
            .field("process_id", &self.process_id)
            .finish_non_exhaustive()
    }
}

impl ServerProcess {
    /// Its standard output (read at a bounded pace) and input, the MCP connection (once).
    pub fn take_pipes(&mut self) -> Option<(PacedRead<ChildStdout>, ChildStdin)> {
        self.pipes.take()
    }

    /// The last lines it wrote to stderr.
    #[must_use]
    pub fn stderr_tail(&self) -> String {
        stderr_tail_text(&self.stderr_tail)
    }

    /// The process id of the helper that runs it (the root of its process tree).
    #[must_use]
    pub fn process_id(&self) -> Option<u32> {
        self.process_id.map(|pid| pid.as_raw().unsigned_abs())
    }

    /// How it ended, when it has: its exit code or signal, and what it said on stderr.
    pub fn ended(&mut self) -> Option<String> {
        let status = self.child.try_wait().ok().flatten()?;
        let how = match status.code() {
            Some(code) => format!("it exited with code {code}"),
            None => "it was killed by a signal".to_owned(),
        };
        let tail = self.stderr_tail();
        Some(if tail.is_empty() {
            how
        } else {
            format!("{how}; its stderr ends: {}", last_chars(&tail, 600))
        })
    }
}

impl Drop for ServerProcess {
    /// Kill its process tree, then the processes that left it (without namespaces: those of
    /// its control group or uid), and remove its control group. Done here rather than handed to
    /// the blocking pool as a warm worker's end is: a server is often dropped as the runtime
    /// shuts down (its conversation was the process's), when work handed to that pool is
    /// dropped unrun, and a child that left the server's session would run on.
    fn drop(&mut self) {
        kill_tree(self.process_id);
        let processes = self.processes.take();
        if let Some(helper) = self.process_id.map(|pid| pid.as_raw().unsigned_abs()) {
            off_the_async_threads(|| end_what_escaped(helper, processes));
        }
    }
}

/// The last `count` characters of `text`.
fn last_chars(text: &str, count: usize) -> &str {
    let skip = text.chars().count().saturating_sub(count);
    text.char_indices()
        .nth(skip)
        .map_or(text, |(start, _)| &text[start..])
}

impl Executor {
    /// Start a skill's stdio MCP server: only when its code may run (the trust gate), in its
    /// layout, in its folder. Nothing is read from or written to it here.
    ///
    /// # Errors
    /// The trust gate's refusal, a command that leaves the skill, or a process that cannot
    /// start.
    pub fn start_server(
        &self,
        skill: &Skill,
        copy: SkillCopy,
        launch: ServerLaunch<'_>,
    ) -> Result<ServerProcess, ExecError> {
        let started = Instant::now();
        let files = self.skill_directory(skill)?;
        let skill_seen = self
            .shown(&files.directory, Path::new(SANDBOX_SKILL_DIR))
            .inside
            .to_string_lossy()
            .into_owned();
        let granted = |name: &str| {
            self.config
                .secrets
                .get(name)
                .filter(|secret| secret.granted_to_copy(skill.name(), copy))
                .map(|secret| secret.value.clone())
        };
        let expand = |text: &str| {
            skillbox_core::server_variables::expand(text, &skill_seen, granted).map_err(|why| {
                ExecError::new(
                    ErrorType::InvalidArgs,
                    format!(
                        "the MCP server `{}` of skill `{}` cannot start: {why}",
                        launch.name,
                        skill.name()
                    ),
                )
            })
        };
        let mut package_tree = None;
        let (program, mut args, interpreter, server_args) =
            match skillbox_core::package_server::recognize(launch.command, launch.args) {
                None => {
                    let (program, args, interpreter) =
                        self.server_program(&files.directory, launch)?;
                    (program, args, interpreter, launch.args.to_vec())
                }
                Some(Err(why)) => {
                    return Err(ExecError::new(
                        ErrorType::ExecutionFailed,
                        format!(
                            "the MCP server `{}` of skill `{}` cannot start in the sandbox, which has no network to fetch its package: {why}",
                            launch.name,
                            skill.name()
                        ),
                    ));
                }
                Some(Ok(package)) => {
                    let found = self.package_launch(
                        skill,
                        launch.name,
                        (launch.command, launch.args),
                        &package,
                    )?;
                    package_tree = Some(found.tree);
                    (
                        found.program,
                        found.args,
                        Some(found.interpreter),
                        package.args,
                    )
                }
            };
        for arg in &server_args {
            args.push(OsString::from(expand(arg)?));
        }
        let mut request = self.skill_request(&files, interpreter.as_deref());
        request.skills.extend(package_tree);
        let layout = self.layout(LayoutRequest {
            long_lived: true,
            ..request
        })?;
        let mut invocation = self.invocation(
            (skill, copy),
            &files.directory,
            &layout,
            program,
            args,
            InvocationIo {
                stdin: Some(Vec::new()),
                timeout: Duration::MAX,
                max_output_bytes: 0,
                live_output: None,
            },
        );
        invocation.working_directory = Some(
            self.shown(&files.directory, Path::new(SANDBOX_SKILL_DIR))
                .inside,
        );
        for (name, template) in launch.env_values {
            let value = expand(template)?;
            if !invocation.env.iter().any(|(key, _)| key == name) {
                invocation.env.push((name.clone(), value));
            }
        }
        for name in launch.env {
            if let Some(value) = granted(name)
                && !invocation.env.iter().any(|(key, _)| key == name)
            {
                invocation.env.push((name.clone(), value));
            }
        }
        let setup_token = uuid::Uuid::new_v4().simple().to_string();
        let spawned = spawn_from_lasting_thread(self.sandbox.command(&invocation, &setup_token));
        self.audit(AuditRecord {
            timestamp_ms: now_ms(),
            kind: "mcp_server",
            skill: skill.name().to_owned(),
            target: launch.name.to_owned(),
            argument_count: launch.args.len(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            exit_code: None,
            stdout_bytes: 0,
            stderr_bytes: 0,
            truncated: false,
            sandbox_level: self.level,
            outcome: outcome(spawned.as_ref().err().map(|_| ErrorType::ExecutionFailed)),
        });
        let mut child = spawned.map_err(|error| {
            ExecError::new(
                ErrorType::ExecutionFailed,
                format!(
                    "cannot start the MCP server `{}` of skill `{}`: {error}",
                    launch.name,
                    skill.name()
                ),
            )
        })?;
        let LongLived {
            process_id,
            processes,
            pipes,
        } = LongLived::of(&mut child, self.sandbox.layers, &layout);
        let Some((stdin, stdout, stderr)) = pipes else {
            return Err(ExecError::new(
                ErrorType::ExecutionFailed,
                "an MCP server started without its pipes",
            ));
        };
        Ok(ServerProcess {
            child,
            process_id,
            processes,
            pipes: Some((
                PacedRead::new(stdout, STDOUT_BYTES_PER_SECOND, STDOUT_BURST_BYTES),
                stdin,
            )),
            stderr_tail: keep_stderr_tail(PacedRead::new(
                stderr,
                STDERR_BYTES_PER_SECOND,
                STDERR_BURST_BYTES,
            )),
            _layout: layout,
        })
    }

    /// The program, leading arguments and interpreter (whose folder the layout shows) of a
    /// server's command.
    fn server_program(
        &self,
        skill_directory: &Path,
        launch: ServerLaunch<'_>,
    ) -> Result<(PathBuf, Vec<OsString>, Option<PathBuf>), ExecError> {
        let command = launch.command;
        let language = match command {
            "python3" | "python" => Some(Language::Python),
            "node" => Some(Language::Node),
            _ => None,
        };
        if let Some(language) = language {
            let interpreter = self.interpreter(language, Path::new(command))?;
            let leading = language.leading_args().iter().map(OsString::from).collect();
            return Ok((interpreter.clone(), leading, Some(interpreter)));
        }
        if command.contains('/') && !command.starts_with('/') {
            let file = resolve_in_skill(skill_directory, command, false)?;
            let seen = self.seen_in_skill(skill_directory, &file);
            let found = self.command_for(&file, &seen)?;
            return Ok((found.program, found.args, found.interpreter));
        }
        if command.is_empty() || command.contains('\0') {
            return Err(ExecError::new(
                ErrorType::InvalidArgs,
                format!(
                    "the MCP server `{}` has no command to run; declare one",
                    launch.name
                ),
            ));
        }
        // A program of the sandbox's system folders, by name or absolute path.
        Ok((PathBuf::from(command), Vec::new(), None))
    }
}

/// Work for the thread that starts servers' processes.
type SpawnJob = Box<dyn FnOnce() + Send>;

/// The thread every server's sandbox helper is started from, started on first use and lasting
/// as long as the process. The helper asks to be killed when the thread that started it ends
/// (the parent-death signal follows a thread, not a process), so a server started from a
/// short-lived thread would be killed with it; started from here, it dies with skillbox.
fn lasting_thread() -> Option<&'static mpsc::Sender<SpawnJob>> {
    static JOBS: OnceLock<Option<mpsc::Sender<SpawnJob>>> = OnceLock::new();
    JOBS.get_or_init(|| {
        let (sender, jobs) = mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("skillbox-servers".to_owned())
            .spawn(move || {
                for job in jobs {
                    job();
                }
            })
            .ok()?;
        Some(sender)
    })
    .as_ref()
}

/// Spawn `command` from [`lasting_thread`], in the calling thread's tokio runtime (which reaps
/// the child); where there is no such thread or runtime, from the calling thread.
fn spawn_from_lasting_thread(
    mut command: tokio::process::Command,
) -> std::io::Result<tokio::process::Child> {
    let (Some(thread), Ok(runtime)) = (lasting_thread(), tokio::runtime::Handle::try_current())
    else {
        return command.spawn();
    };
    let (answer, answered) = mpsc::sync_channel(1);
    let job: SpawnJob = Box::new(move || {
        let _entered = runtime.enter();
        let _ = answer.send(command.spawn());
    });
    let ended = || std::io::Error::other("the thread that starts skill servers has ended");
    thread.send(job).map_err(|_| ended())?;
    answered.recv().map_err(|_| ended())?
}

/// A reader that reads at most `bytes_per_second` once its `burst` is spent (a token bucket):
/// a writer faster than that waits on its full pipe.
pub struct PacedRead<R> {
    inner: R,
    bytes_per_second: u64,
    burst: u64,
    /// Bytes that may be read now.
    allowance: u64,
    /// When the allowance was last topped up.
    topped_up: Instant,
    /// The wait for more allowance, when it ran out.
    waiting: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Where a read lands before it is handed on (at most its allowance).
    scratch: Box<[u8]>,
}

impl<R> std::fmt::Debug for PacedRead<R> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("PacedRead")
            .field("bytes_per_second", &self.bytes_per_second)
            .field("allowance", &self.allowance)
            .finish_non_exhaustive()
    }
}

impl<R> PacedRead<R> {
    /// Read `inner` at `bytes_per_second` (at least one), `burst` at once.
    pub fn new(inner: R, bytes_per_second: u64, burst: u64) -> Self {
        PacedRead {
            inner,
            bytes_per_second: bytes_per_second.max(1),
            burst,
            allowance: burst,
            topped_up: Instant::now(),
            waiting: None,
            scratch: vec![0u8; 64 * 1024].into_boxed_slice(),
        }
    }

    fn top_up(&mut self) {
        let elapsed = self.topped_up.elapsed();
        let earned =
            u64::try_from(elapsed.as_micros() * u128::from(self.bytes_per_second) / 1_000_000)
                .unwrap_or(u64::MAX);
        if earned > 0 {
            self.allowance = self.allowance.saturating_add(earned).min(self.burst);
            self.topped_up = Instant::now();
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for PacedRead<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if let Some(waiting) = this.waiting.as_mut() {
                ready!(waiting.as_mut().poll(context));
                this.waiting = None;
            }
            this.top_up();
            if this.allowance > 0 {
                break;
            }
            // Wait for a read's worth (a sixteenth of a second's), not for one byte.
            let wait = Duration::from_millis(1000 / 16);
            this.waiting = Some(Box::pin(tokio::time::sleep(wait)));
        }
        let allowed = usize::try_from(this.allowance)
            .unwrap_or(usize::MAX)
            .min(buffer.remaining())
            .min(this.scratch.len());
        let mut landed = ReadBuf::new(&mut this.scratch[..allowed]);
        ready!(Pin::new(&mut this.inner).poll_read(context, &mut landed))?;
        let read = landed.filled();
        this.allowance = this
            .allowance
            .saturating_sub(u64::try_from(read.len()).unwrap_or(u64::MAX));
        buffer.put_slice(read);
        Poll::Ready(Ok(()))
    }
}

impl Executor {
    /// Whether skillbox may reach a skill's MCP server over HTTP: its code may run (the
    /// trust gate) and the operator allowed it the network (`--allow-network`,
    /// `--allow-network-for SKILL`): the server acts for the skill, so it gets what the
    /// skill's scripts get, and a skill can never make the runtime call a host it could not.
    ///
    /// # Errors
    /// The trust gate's refusal, or the network not allowed, saying how to allow it.
    pub fn check_server_reach(
        &self,
        skill: &Skill,
        copy: SkillCopy,
        server: &str,
    ) -> Result<(), ExecError> {
        self.skill_directory(skill)?;
        if self.config.policy.allows_network(skill.name(), copy) {
            return Ok(());
        }
        Err(ExecError::new(
            ErrorType::ScriptNotAllowed,
            format!(
                "the MCP server `{server}` of skill `{}` is reached over the network, which this skill is not allowed: start skillbox with `--allow-network-for {}` to allow it",
                skill.name(),
                skill.name()
            ),
        ))
    }

    /// Log one call of a skill's MCP server tool in the audit log.
    pub fn audit_server_call(&self, skill: &str, tool: &str, duration: Duration, failed: bool) {
        self.audit(AuditRecord {
            timestamp_ms: now_ms(),
            kind: "mcp_tool",
            skill: skill.to_owned(),
            target: tool.to_owned(),
            argument_count: 1,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            exit_code: None,
            stdout_bytes: 0,
            stderr_bytes: 0,
            truncated: false,
            sandbox_level: self.level,
            outcome: outcome(failed.then_some(ErrorType::ExecutionFailed)),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_paced_read_hands_on_everything_at_its_pace_past_the_burst() {
        let data: Vec<u8> = (0..30_000_u32).map(|byte| (byte % 251) as u8).collect();
        let started = Instant::now();
        let mut read = Vec::new();
        PacedRead::new(data.as_slice(), 100_000, 10_000)
            .read_to_end(&mut read)
            .await
            .unwrap();
        assert_eq!(read, data);
        // 10,000 bytes at once, the other 20,000 at 100,000 a second.
        assert!(
            started.elapsed() >= Duration::from_millis(150),
            "{:?}",
            started.elapsed()
        );
    }
}
