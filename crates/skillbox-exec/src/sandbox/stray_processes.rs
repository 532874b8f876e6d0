//! Processes a warm worker's call left behind: children a handler started (in a session of its
//! own, say) that would keep running after the call answered, with no run slot held and the
//! worker's later calls in reach. The pool ends them before a call's answer is given.
//!
//! Which processes are the worker's depends on the layers in force:
//! - with namespaces the worker is the first process of its own PID namespace, so every process
//!   of the run is one of its descendants (an orphan is adopted by it, and no process can leave
//!   the namespace or make another): the walk of its children's children finds them all;
//! - with a control group per run, every process of the run is in the helper's group
//!   (`skillbox-run-<helper pid>`), whatever session or parent it has;
//! - with a uid of its own (the runtime is root) every process of that uid is the worker's.
//!
//! Without namespaces, control groups or a uid drop, only the worker's descendants are found: a
//! process that left its session and was adopted by the host's init is missed (that host's
//! level is `partial` or `none`).
//!
//! A process is signalled through a pidfd opened after it was found and checked again to be the
//! one found (same start time), so a pid reused meanwhile by another process is never killed.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// How often the collection of a worker's processes and their killing are repeated while new
/// ones keep appearing (each pass kills what the one before missed, a fork bomb's children
/// included: a killed process forks no more).
const MAX_KILL_PASSES: usize = 50;
/// Longest the killing waits for the killed processes to be gone.
const KILL_WAIT: Duration = Duration::from_secs(2);
/// Most processes a walk of a worker's descendants visits.
const MAX_WALKED_PROCESSES: usize = 8_192;

/// What tells one warm worker's processes apart.
#[derive(Debug)]
pub(crate) struct WorkerProcesses {
    /// The helper that started the worker (a child of the runtime).
    helper: i32,
    /// Whether the worker runs in a PID namespace of its own (it is then the helper's child,
    /// else the helper itself: the helper became the program).
    namespaces: bool,
    /// The worker process and its start time, once found.
    worker: Option<(i32, u64)>,
    /// The uid every process of the worker runs as, when it is the worker's own and the
    /// worker shares the host's PID namespace.
    uid: Option<u32>,
    /// Whether the helper made a control group for the worker.
    cgroup: bool,
}

/// What [`WorkerProcesses::end_stragglers`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Stragglers {
    /// Processes besides the worker (and its helper) were found, running or not yet reaped.
    pub found: bool,
    /// Processes that were signalled but still ran when the wait ended.
    pub still_running: usize,
}

impl WorkerProcesses {
    /// The processes of the worker the helper `helper` started, under these layers; `uid` is
    /// the worker's leased uid when it has one.
    pub(crate) fn new(
        helper: i32,
        layers: crate::sandbox::SandboxLayers,
        uid: Option<u32>,
    ) -> Self {
        WorkerProcesses {
            helper,
            namespaces: layers.namespaces,
            worker: None,
            uid: uid.filter(|_| layers.uid_drop && !layers.namespaces),
            cgroup: layers.cgroups,
        }
    }

    /// Whether anything besides the worker and its helper exists now (a quick look, done
    /// after every call).
    pub(crate) fn any_stragglers(&mut self) -> bool {
        self.find_worker();
        !self.candidates().is_empty()
    }

    /// How many threads the worker process runs now (`None` when it cannot be read). A thread
    /// a handler leaves behind lives on inside the worker and could start processes after the
    /// call answered: the pool compares the count before and after each call.
    pub(crate) fn worker_threads(&mut self) -> Option<usize> {
        self.find_worker();
        let (pid, start_time) = self.worker?;
        ProcessStatus::of(pid)
            .filter(|status| status.start_time == start_time)
            .map(|status| status.threads)
    }

    /// Kill every process of the worker but the worker (and its helper), until none is left,
    /// and wait for them to be gone.
    pub(crate) fn end_stragglers(&mut self) -> Stragglers {
        self.find_worker();
        let spared: BTreeSet<i32> = [Some(self.helper), self.worker.map(|(pid, _)| pid)]
            .into_iter()
            .flatten()
            .collect();
        let mut found = false;
        let mut signalled: Vec<(i32, u64)> = Vec::new();
        // A pass that finds nothing running is checked by one more: a process that forked and
        // exited between a pass's listing and its look at each process leaves a child the
        // listing did not hold, which the next listing does.
        let mut quiet_passes = 0;
        for _ in 0..MAX_KILL_PASSES {
            let mut running = Vec::new();
            for pid in self.candidates() {
                if spared.contains(&pid) {
                    continue;
                }
                let Some(status) = ProcessStatus::of(pid) else {
                    continue;
                };
                found = true;
                if status.running() {
                    running.push((pid, status.start_time));
                }
            }
            if running.is_empty() {
                quiet_passes += 1;
                if quiet_passes >= 2 {
                    break;
                }
                continue;
            }
            quiet_passes = 0;
            for (pid, start_time) in running {
                if kill_exactly(pid, start_time) {
                    signalled.push((pid, start_time));
                }
            }
        }
        let deadline = Instant::now() + KILL_WAIT;
        let still_running = |signalled: &[(i32, u64)]| {
            signalled
                .iter()
                .filter(|(pid, start_time)| {
                    ProcessStatus::of(*pid)
                        .is_some_and(|status| status.start_time == *start_time && status.running())
                })
                .count()
        };
        let mut left = still_running(&signalled);
        while left > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
            left = still_running(&signalled);
        }
        Stragglers {
            found,
            still_running: left,
        }
    }

    /// Find the worker process: the helper's only child with namespaces, else the helper.
    fn find_worker(&mut self) {
        if self.worker.is_some() {
            return;
        }
        let pid = if self.namespaces {
            children(self.helper).into_iter().next()
        } else {
            Some(self.helper)
        };
        self.worker =
            pid.and_then(|pid| ProcessStatus::of(pid).map(|status| (pid, status.start_time)));
    }

    /// Every process that may be the worker's besides the worker itself (the helper and the
    /// worker may be among them).
    fn candidates(&self) -> BTreeSet<i32> {
        let mut found = BTreeSet::new();
        if let Some((worker, start_time)) = self.worker
            && ProcessStatus::of(worker).is_some_and(|status| status.start_time == start_time)
        {
            found.extend(descendants(worker));
        }
        if self.cgroup {
            found.extend(crate::sandbox::cgroups::group_processes(
                self.helper.unsigned_abs(),
            ));
        }
        if let Some(uid) = self.uid {
            found.extend(processes_of_uid(uid));
        }
        if let Some((worker, _)) = self.worker {
            found.remove(&worker);
        }
        found.remove(&self.helper);
        found
    }
}

/// What `/proc/<pid>/stat` says of a process.
#[derive(Debug, Clone, Copy)]
struct ProcessStatus {
    state: char,
    /// How many threads it runs.
    threads: usize,
    /// Clock ticks after boot at which it started: with the pid, names one process for good.
    start_time: u64,
}

impl ProcessStatus {
    fn of(pid: i32) -> Option<Self> {
        let text = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid …`: the command may hold spaces and parentheses.
        let (_, after) = text.rsplit_once(')')?;
        let mut fields = after.split_whitespace();
        let state = fields.next()?.chars().next()?;
        // `state` was field 3; `num_threads` is field 20, the start time field 22.
        let threads = fields.nth(16)?.parse().ok()?;
        let start_time = fields.nth(1)?.parse().ok()?;
        Some(ProcessStatus {
            state,
            threads,
            start_time,
        })
    }

    /// Neither a zombie nor dead.
    fn running(self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// SIGKILL the process `pid` if it is still the one that started at `start_time`.
fn kill_exactly(pid: i32, start_time: u64) -> bool {
    let Some(target) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    let still_the_one =
        || ProcessStatus::of(pid).is_some_and(|status| status.start_time == start_time);
    match rustix::process::pidfd_open(target, rustix::process::PidfdFlags::empty()) {
        // The pidfd holds the process: checked after it was opened, the start time tells
        // whether it is the one found.
        Ok(pidfd) => {
            still_the_one()
                && rustix::process::pidfd_send_signal(&pidfd, rustix::process::Signal::KILL).is_ok()
        }
        // Kernels before 5.3: checked just before the signal.
        Err(rustix::io::Errno::NOSYS) => {
            still_the_one()
                && nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                )
                .is_ok()
        }
        Err(_) => false,
    }
}

/// The children of every thread of `pid`.
fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = fs_err::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for task in tasks.flatten() {
        if let Ok(text) = fs_err::read_to_string(task.path().join("children")) {
            found.extend(
                text.split_whitespace()
                    .filter_map(|child| child.parse::<i32>().ok()),
            );
        }
    }
    found
}

/// Every descendant of `pid` (children, their children…), at most [`MAX_WALKED_PROCESSES`].
fn descendants(pid: i32) -> BTreeSet<i32> {
    let mut found = BTreeSet::new();
    let mut pending = vec![pid];
    while let Some(parent) = pending.pop() {
        for child in children(parent) {
            if found.len() >= MAX_WALKED_PROCESSES {
                return found;
            }
            if found.insert(child) {
                pending.push(child);
            }
        }
    }
    found
}

/// End every process whose real uid is `uid`, a sandbox uid just leased: on a host without
/// namespaces, a process a run left behind when its runtime was killed (nothing was left to
/// end it) keeps the uid, and the run leasing it next must not share it. No live execution
/// runs as a uid whose lease was free, so every such process is a leftover. Says how many were
/// signalled.
pub(crate) fn end_processes_of_uid(uid: u32) -> usize {
    processes_of_uid(uid)
        .into_iter()
        .filter(|pid| {
            ProcessStatus::of(*pid).is_some_and(|status| kill_exactly(*pid, status.start_time))
        })
        .count()
}

/// Every process whose real uid is `uid`.
fn processes_of_uid(uid: u32) -> Vec<i32> {
    let Ok(entries) = fs_err::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            fs_err::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
                status
                    .lines()
                    .find_map(|line| line.strip_prefix("Uid:"))
                    .and_then(|ids| ids.split_whitespace().next())
                    .and_then(|real| real.parse::<u32>().ok())
                    == Some(uid)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_status_reads_state_and_start_time() {
        let own = ProcessStatus::of(i32::try_from(std::process::id()).unwrap()).unwrap();
        assert!(own.running());
        assert!(own.start_time > 0);
        assert!(own.threads >= 1);
        assert!(ProcessStatus::of(i32::MAX).is_none());
    }

    #[test]
    fn descendants_are_found_and_a_reused_pid_is_never_signalled() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let own = i32::try_from(std::process::id()).unwrap();
        assert!(descendants(own).contains(&pid));
        let start_time = ProcessStatus::of(pid).unwrap().start_time;
        // Another start time: another process that happens to have the pid.
        assert!(!kill_exactly(pid, start_time + 1));
        assert!(ProcessStatus::of(pid).unwrap().running());
        assert!(kill_exactly(pid, start_time));
        child.wait().unwrap();
    }

    #[test]
    fn a_leased_uids_leftover_processes_are_ended() {
        use std::os::unix::process::CommandExt;
        if !nix::unistd::geteuid().is_root() {
            eprintln!("SKIPPED: running a process as another uid needs root");
            return;
        }
        // A uid of the sandbox pool's range that no other test leases.
        let uid =
            crate::sandbox::SANDBOX_UID_POOL_START + crate::sandbox::SANDBOX_UID_POOL_SIZE - 1;
        let mut leftover = std::process::Command::new("sleep")
            .arg("30")
            .uid(uid)
            .gid(uid)
            .spawn()
            .unwrap();
        let pid = i32::try_from(leftover.id()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !processes_of_uid(uid).contains(&pid) {
            assert!(Instant::now() < deadline, "the process never ran as {uid}");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(end_processes_of_uid(uid), 1);
        let status = leftover.wait().unwrap();
        assert!(!status.success());
        assert_eq!(end_processes_of_uid(uid), 0);
    }
}
