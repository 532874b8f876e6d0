//! Warm workers: long-lived, sandboxed node and python processes that keep handler modules
//! loaded, so a tool call costs a round trip over a pipe instead of an interpreter start.
//!
//! One worker serves one skill in one language, one call at a time. Each call gets its own
//! `__workDir` inside the worker's workspace, which the worker itself creates and removes: the
//! runtime never prepares a path inside a folder the sandbox can write. A call past its timeout
//! kills the worker (it is replaced on the next call); a crashed worker is replaced likewise; a
//! worker is retired after `max_calls_per_worker` calls, and once idle for `idle_timeout`; at
//! most `max_workers` live at once (idle ones are evicted, oldest first). A call abandoned by
//! its caller (a client that disconnects) retires its worker.
//!
//! Nothing a call started outlives its answer: before a call's answer is given, every process
//! of the worker but the worker itself is killed (see [`crate::sandbox::stray_processes`]), and
//! a worker whose call left any is retired, zombies and all, as is one whose call left a thread
//! running in it (the worker's thread count grew), since that thread could start processes
//! after the answer.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use nix::unistd::Pid;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{Mutex, Semaphore};

use crate::error::{ErrorType, ExecError};
use crate::executor::SkillCopy;
use crate::executor::layout::RunLayout;
use crate::interpreter::Language;
use crate::process::{Invocation, SandboxRuntime, kill_tree};
use crate::sandbox::stray_processes::WorkerProcesses;

/// Default most workers alive at once.
pub const DEFAULT_MAX_WORKERS: usize = 4;
/// Default calls a worker serves before it is replaced.
pub const DEFAULT_MAX_CALLS_PER_WORKER: u64 = 1_000;
/// Default time a worker may stay idle before it is retired, in seconds.
pub const DEFAULT_WORKER_IDLE_SECONDS: u64 = 300;
/// Longest the idle-worker reaper sleeps when no worker is idle (it wakes earlier for one that
/// is).
const REAPER_NAP: Duration = Duration::from_secs(60);
/// Bytes of a worker's stderr kept for error messages.
const STDERR_TAIL_BYTES: usize = 4 * 1024;

/// The limits of one call on a warm worker.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallLimits {
    /// Wall-clock limit of the round trip.
    pub timeout: Duration,
    /// Longest answer line read; a longer one retires the worker (a handler can write to the
    /// answer stream itself, so the line is otherwise unbounded).
    pub max_answer_bytes: usize,
}

/// One answer line from a worker.
enum Answer {
    /// The line, without its newline.
    Line(String),
    /// The line went past the limit; reading stopped there.
    TooLarge,
    /// The worker closed its stdout.
    Ended,
}

/// Read one line of at most `max_bytes` (invalid UTF-8 replaced), never holding more.
async fn read_answer(
    stdout: &mut BufReader<ChildStdout>,
    max_bytes: usize,
) -> std::io::Result<Answer> {
    let mut line = Vec::new();
    loop {
        let buffer = stdout.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(Answer::Ended);
        }
        let (taken, complete) = match buffer.iter().position(|byte| *byte == b'\n') {
            Some(end) => (end, true),
            None => (buffer.len(), false),
        };
        if line.len() + taken > max_bytes {
            return Ok(Answer::TooLarge);
        }
        line.extend_from_slice(&buffer[..taken]);
        stdout.consume(if complete { taken + 1 } else { taken });
        if complete {
            return Ok(Answer::Line(String::from_utf8_lossy(&line).into_owned()));
        }
    }
}

/// Warm worker settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerPoolConfig {
    /// Use warm workers for JavaScript and Python handlers (otherwise spawn per call).
    pub enabled: bool,
    /// Most workers alive at once.
    pub max_workers: usize,
    /// Calls a worker serves before it is replaced.
    pub max_calls_per_worker: u64,
    /// How long a worker may wait for its next call before it is retired (its processes,
    /// uid and memory given back).
    pub idle_timeout: Duration,
}

impl Default for WorkerPoolConfig {
    fn default() -> Self {
        WorkerPoolConfig {
            enabled: true,
            max_workers: DEFAULT_MAX_WORKERS,
            max_calls_per_worker: DEFAULT_MAX_CALLS_PER_WORKER,
            idle_timeout: Duration::from_secs(DEFAULT_WORKER_IDLE_SECONDS),
        }
    }
}

/// Which worker serves a call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WorkerKey {
    /// Handler language.
    pub language: Language,
    /// The skill folder (handlers of one skill share a worker): for a skill pinned by trust,
    /// its verified copy, so another version of its files gets another worker.
    pub skill_directory: PathBuf,
    /// Which copy of its name the skill is: its secrets, in the worker's environment, depend
    /// on it.
    pub copy: SkillCopy,
}

/// How to start a worker for a key.
pub(crate) struct WorkerSpawn<'a> {
    /// The sandbox to start it in.
    pub sandbox: &'a SandboxRuntime,
    /// Lays out a new worker's run (leasing its uid) and builds its invocation.
    pub prepare: &'a (dyn Fn() -> Result<(Invocation, RunLayout), ExecError> + Sync),
}

struct Worker {
    _child: tokio::process::Child,
    process_id: Option<Pid>,
    /// Every process of the worker, to end what a call leaves behind.
    processes: Option<WorkerProcesses>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr_tail: Arc<std::sync::Mutex<Vec<u8>>>,
    /// The workspace as the worker sees it.
    workspace: PathBuf,
    calls: u64,
    last_used: Instant,
    /// Its host folder (without namespaces) and uid, released when the worker goes.
    _layout: RunLayout,
    /// Its place in the pool's count of live workers, given back when it is dropped.
    _slot: LiveSlot,
}

/// A place in a pool's count of live workers: taken, under the pool's lock, before a worker
/// starts (so two calls starting workers at once both see the pool full) and given back when
/// dropped (a worker that failed to start, or a worker's end).
struct LiveSlot(Arc<AtomicUsize>);

impl LiveSlot {
    fn take(live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::Relaxed);
        LiveSlot(Arc::clone(live))
    }
}

impl Drop for LiveSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Worker {
    fn stderr_tail(&self) -> String {
        stderr_tail_text(&self.stderr_tail)
    }
}

impl Drop for Worker {
    /// A worker ends only by being killed (retired, evicted, abandoned mid-call, or its pool
    /// dropped): its whole process tree goes, and the control group its helper made, and then
    /// its slot counts it out of its pool.
    fn drop(&mut self) {
        end_sandboxed_process(self.process_id, self.processes.take());
    }
}

/// A long-lived sandboxed process (a warm worker, a skill server) just spawned through its
/// helper: the helper's pid, the watch over every process of the run, and its pipes (`None`
/// when one is missing).
pub(crate) struct LongLived {
    pub process_id: Option<Pid>,
    pub processes: Option<WorkerProcesses>,
    pub pipes: Option<(ChildStdin, ChildStdout, tokio::process::ChildStderr)>,
}

impl LongLived {
    /// The parts of `child`, run under `layers` in `layout` (whose leased uid it runs as).
    pub(crate) fn of(
        child: &mut tokio::process::Child,
        layers: crate::sandbox::SandboxLayers,
        layout: &RunLayout,
    ) -> Self {
        let process_id = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let processes = process_id.map(|helper| {
            let uid = layout.folder.lease.as_ref().map(|lease| lease.uid);
            WorkerProcesses::new(helper.as_raw(), layers, uid)
        });
        let pipes = match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(stdin), Some(stdout), Some(stderr)) => Some((stdin, stdout, stderr)),
            _ => None,
        };
        LongLived {
            process_id,
            processes,
            pipes,
        }
    }
}

/// Kill a long-lived sandboxed process (a warm worker, a skill's MCP server) started through
/// the helper `process_id`: its whole process tree, then (off the async threads) the
/// processes that escaped the tree without namespaces and the control group its helper made.
pub(crate) fn end_sandboxed_process(process_id: Option<Pid>, processes: Option<WorkerProcesses>) {
    kill_tree(process_id);
    if let Some(pid) = process_id {
        let helper = pid.as_raw().unsigned_abs();
        let remove = move || end_what_escaped(helper, processes);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(remove)),
            Err(_) => drop(std::thread::spawn(remove)),
        }
    }
}

/// After a long-lived process's tree was killed: the killed helper `helper` could not remove
/// its run's control group, and without namespaces the process's children do not die with it,
/// so those in its group, or of its uid, are killed first. It may wait for them to die: run it
/// off the async threads.
pub(crate) fn end_what_escaped(helper: u32, mut processes: Option<WorkerProcesses>) {
    if let Some(processes) = &mut processes {
        processes.end_stragglers();
    }
    crate::sandbox::cgroups::remove_group_of(helper);
}

/// Keep the last [`STDERR_TAIL_BYTES`] of a long-lived process's stderr (a warm worker's, or a
/// skill server's read at a bounded pace), read by a task, for error messages.
pub(crate) fn keep_stderr_tail(
    mut stderr: impl tokio::io::AsyncRead + Unpin + Send + 'static,
) -> Arc<std::sync::Mutex<Vec<u8>>> {
    let stderr_tail = Arc::new(std::sync::Mutex::new(Vec::new()));
    let tail = Arc::clone(&stderr_tail);
    tokio::spawn(async move {
        let mut buffer = vec![0u8; 8 * 1024];
        while let Ok(read) = stderr.read(&mut buffer).await {
            if read == 0 {
                break;
            }
            if let Ok(mut tail) = tail.lock() {
                tail.extend_from_slice(&buffer[..read]);
                let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
                tail.drain(..excess);
            }
        }
    });
    stderr_tail
}

/// The tail kept by [`keep_stderr_tail`], as text.
pub(crate) fn stderr_tail_text(tail: &std::sync::Mutex<Vec<u8>>) -> String {
    tail.lock()
        .map(|tail| String::from_utf8_lossy(&tail).trim().to_owned())
        .unwrap_or_default()
}

/// The pool.
pub struct WorkerPool {
    config: WorkerPoolConfig,
    idle: Arc<IdleWorkers>,
    /// Workers alive or starting: each holds a [`LiveSlot`].
    live: Arc<AtomicUsize>,
    permits: Semaphore,
    /// The task retiring workers idle past [`WorkerPoolConfig::idle_timeout`], once started.
    reaper: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// Idle workers by what they serve.
type IdleWorkers = Mutex<HashMap<WorkerKey, Vec<Worker>>>;

impl Drop for WorkerPool {
    /// The reaper goes with the pool (its idle workers are dropped, and so killed, with it).
    fn drop(&mut self) {
        if let Ok(mut reaper) = self.reaper.lock()
            && let Some(task) = reaper.take()
        {
            task.abort();
        }
    }
}

impl std::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl WorkerPool {
    /// An empty pool.
    #[must_use]
    pub fn new(config: WorkerPoolConfig) -> Self {
        let permits = Semaphore::new(config.max_workers.max(1));
        WorkerPool {
            config,
            idle: Arc::new(Mutex::new(HashMap::new())),
            live: Arc::new(AtomicUsize::new(0)),
            permits,
            reaper: std::sync::Mutex::new(None),
        }
    }

    /// Start the task that retires idle workers, unless it runs (it lives as long as the pool
    /// and the async runtime it was started on).
    fn ensure_reaper(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Ok(mut reaper) = self.reaper.lock() else {
            return;
        };
        if reaper.as_ref().is_some_and(|task| !task.is_finished()) {
            return;
        }
        *reaper = Some(runtime.spawn(retire_idle_workers(
            Arc::downgrade(&self.idle),
            self.config.idle_timeout,
        )));
    }

    /// Workers currently alive.
    #[must_use]
    pub fn live_workers(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    /// Call a handler on a warm worker, starting one if needed.
    pub(crate) async fn call(
        &self,
        key: &WorkerKey,
        spawn: &WorkerSpawn<'_>,
        handler: &Path,
        arguments: Value,
        limits: CallLimits,
    ) -> (Value, Option<ErrorType>) {
        let Ok(_permit) = self.permits.acquire().await else {
            return (
                json!({ "error": "the worker pool is shut down" }),
                Some(ErrorType::ExecutionFailed),
            );
        };
        let mut worker = match self.checkout(key, spawn).await {
            Ok(worker) => worker,
            Err(message) => {
                return (
                    json!({ "error": message }),
                    Some(ErrorType::SandboxUnavailable),
                );
            }
        };
        // The threads the worker may run once the call is over: the Python bootstrap runs on
        // one, so any other is the handler's; a node worker's own threads (V8's, libuv's) are
        // all there once it has answered a call, so more after a call than before it are the
        // handler's.
        let thread_baseline = match key.language {
            Language::Python => Some(1),
            _ => worker
                .processes
                .as_mut()
                .and_then(WorkerProcesses::worker_threads),
        };
        // A call abandoned by its caller (this future dropped) drops the worker with it, which
        // kills it and counts it out.
        let (mut outcome, worker) = Self::round_trip(worker, handler, arguments, limits).await;
        if let Some(mut worker) = worker {
            worker.calls += 1;
            worker.last_used = Instant::now();
            let mut left_processes = false;
            // A quick look first: ending them may wait for them to die.
            if let Some(processes) = &mut worker.processes
                && processes.any_stragglers()
            {
                let ended = crate::executor::off_the_async_threads(|| processes.end_stragglers());
                if ended.still_running > 0 {
                    outcome = (
                        json!({ "error": format!("the handler left {} processes running that could not be stopped", ended.still_running) }),
                        Some(ErrorType::ExecutionFailed),
                    );
                }
                left_processes = ended.found;
            }
            // A thread the call left behind could start processes later, with no run place
            // held: the worker goes with it.
            let threads_after = worker
                .processes
                .as_mut()
                .and_then(WorkerProcesses::worker_threads);
            let left_threads = thread_baseline
                .zip(threads_after)
                .is_some_and(|(baseline, after)| after > baseline);
            // A worker whose call left processes, zombies it will not reap, or threads is
            // retired.
            if left_processes || left_threads {
                tracing::debug!(
                    left_processes,
                    left_threads,
                    "retiring a warm worker: its call left processes or threads behind"
                );
            }
            if left_processes || left_threads || worker.calls >= self.config.max_calls_per_worker {
                drop(worker);
            } else {
                self.idle
                    .lock()
                    .await
                    .entry(key.clone())
                    .or_default()
                    .push(worker);
                self.ensure_reaper();
            }
        }
        outcome
    }

    async fn checkout(&self, key: &WorkerKey, spawn: &WorkerSpawn<'_>) -> Result<Worker, String> {
        let slot = {
            let mut idle = self.idle.lock().await;
            if let Some(worker) = idle.get_mut(key).and_then(Vec::pop) {
                return Ok(worker);
            }
            if self.live_workers() >= self.config.max_workers {
                // Evict the idle worker used longest ago (there is one: we hold a permit).
                let oldest = idle
                    .iter()
                    .flat_map(|(key, workers)| {
                        workers
                            .iter()
                            .enumerate()
                            .map(move |(index, worker)| (worker.last_used, key.clone(), index))
                    })
                    .min_by_key(|(last_used, _, _)| *last_used);
                if let Some((_, oldest_key, index)) = oldest
                    && let Some(workers) = idle.get_mut(&oldest_key)
                {
                    drop(workers.swap_remove(index));
                }
            }
            // Counted in before the lock is let go: a call checking out meanwhile sees it.
            LiveSlot::take(&self.live)
        };
        start_worker(spawn, slot)
    }

    /// One call on `worker`; the worker comes back when it can serve again (a worker not
    /// given back is dropped, which kills it).
    async fn round_trip(
        mut worker: Worker,
        handler: &Path,
        mut arguments: Value,
        limits: CallLimits,
    ) -> ((Value, Option<ErrorType>), Option<Worker>) {
        let CallLimits {
            timeout,
            max_answer_bytes,
        } = limits;
        let call_id = worker.calls;
        // The worker makes (and removes) this folder itself, as the sandbox user.
        let work_directory = worker.workspace.join(format!("call-{call_id}"));
        if let Value::Object(map) = &mut arguments {
            map.insert(
                "__workDir".to_owned(),
                Value::String(work_directory.display().to_string()),
            );
        }
        let request = json!({
            "id": call_id,
            "handler": handler,
            "workDir": work_directory,
            "args": arguments,
        });
        let mut line = serde_json::to_vec(&request).unwrap_or_default();
        line.push(b'\n');
        let exchange = async {
            worker.stdin.write_all(&line).await?;
            worker.stdin.flush().await?;
            read_answer(&mut worker.stdout, max_answer_bytes).await
        };
        let answer = tokio::time::timeout(timeout, exchange).await;
        match answer {
            Err(_) => (
                (
                    json!({ "error": format!("the handler ran longer than {} ms and was stopped", timeout.as_millis()) }),
                    Some(ErrorType::ExecutionTimeout),
                ),
                None,
            ),
            Ok(Ok(Answer::TooLarge)) => (
                (
                    json!({ "error": format!("the handler's answer is larger than {max_answer_bytes} bytes of JSON; return less (write large results to files)") }),
                    Some(ErrorType::ExecutionFailed),
                ),
                None,
            ),
            Ok(Ok(Answer::Line(text))) => match serde_json::from_str::<Value>(&text) {
                // An answer to another call means the worker wrote lines of its own on the
                // answer stream: it cannot be trusted to answer in step any more.
                Ok(Value::Object(answer)) if answer.get("id") != Some(&json!(call_id)) => {
                    let message = "the worker answered out of turn (a handler wrote to the answer stream itself)";
                    (
                        (
                            json!({ "error": message }),
                            Some(ErrorType::ExecutionFailed),
                        ),
                        None,
                    )
                }
                Ok(Value::Object(mut answer)) => {
                    let outcome = match (answer.remove("ok"), answer.remove("error")) {
                        (_, Some(error)) => {
                            (json!({ "error": error }), Some(ErrorType::ExecutionFailed))
                        }
                        (Some(value), None) => (value, None),
                        (None, None) => (Value::Null, None),
                    };
                    (outcome, Some(worker))
                }
                _ => {
                    let message = format!(
                        "the worker answered with something that is not JSON: {}",
                        text.chars().take(200).collect::<String>()
                    );
                    (
                        (
                            json!({ "error": message }),
                            Some(ErrorType::ExecutionFailed),
                        ),
                        None,
                    )
                }
            },
            Ok(_) => {
                // The worker died mid-call (a crash, exit(), or a limit).
                tokio::time::sleep(Duration::from_millis(20)).await;
                let tail = worker.stderr_tail();
                let message = if tail.is_empty() {
                    "the handler's worker process ended without answering".to_owned()
                } else {
                    format!("the handler's worker process ended without answering: {tail}")
                };
                (
                    (
                        json!({ "error": message }),
                        Some(ErrorType::ExecutionFailed),
                    ),
                    None,
                )
            }
        }
    }
}

/// Start a worker in `slot` (given back if it cannot start).
fn start_worker(spawn: &WorkerSpawn<'_>, slot: LiveSlot) -> Result<Worker, String> {
    let (invocation, layout): (Invocation, RunLayout) =
        (spawn.prepare)().map_err(|error| error.message)?;
    let setup_token = uuid::Uuid::new_v4().simple().to_string();
    let mut child = spawn
        .sandbox
        .command(&invocation, &setup_token)
        .spawn()
        .map_err(|error| format!("cannot start a worker: {error}"))?;
    let LongLived {
        process_id,
        processes,
        pipes,
    } = LongLived::of(&mut child, spawn.sandbox.layers, &layout);
    let Some((stdin, stdout, stderr)) = pipes else {
        return Err("a worker started without its pipes".to_owned());
    };
    let stderr_tail = keep_stderr_tail(stderr);
    Ok(Worker {
        _child: child,
        process_id,
        processes,
        stdin,
        stdout: BufReader::new(stdout),
        stderr_tail,
        workspace: invocation.workspace,
        calls: 0,
        last_used: Instant::now(),
        _layout: layout,
        _slot: slot,
    })
}

/// Retire the workers of the pool `idle` once they have waited `timeout` for a call; ends with
/// the pool.
async fn retire_idle_workers(idle: Weak<IdleWorkers>, timeout: Duration) {
    loop {
        let next = {
            let Some(idle) = idle.upgrade() else {
                return;
            };
            let mut idle = idle.lock().await;
            let now = Instant::now();
            let mut retired = Vec::new();
            let mut next: Option<Instant> = None;
            // When a worker is due (never, past what an instant can hold).
            let due = |worker: &Worker| worker.last_used.checked_add(timeout);
            for workers in idle.values_mut() {
                retired.extend(
                    workers.extract_if(.., |worker| due(worker).is_some_and(|due| due <= now)),
                );
                next = workers.iter().filter_map(due).chain(next).min();
            }
            idle.retain(|_, workers| !workers.is_empty());
            drop(idle);
            // Killed outside the lock.
            drop(retired);
            next
        };
        let wake = next.unwrap_or_else(|| Instant::now() + REAPER_NAP);
        tokio::time::sleep_until(wake.into()).await;
    }
}
