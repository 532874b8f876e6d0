//! The process groups of the git processes a server starts: each killed when its guard is
//! dropped unfinished, and all of them when the server stops.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// The process groups of the git processes a server started (each child leads its own group,
/// so killing the group kills what it started too: `upload-pack` under `http-backend`).
#[derive(Debug, Default)]
pub(super) struct ProcessGroups {
    state: Mutex<ProcessGroupsState>,
}

#[derive(Debug, Default)]
struct ProcessGroupsState {
    stopped: bool,
    running: HashSet<u32>,
}

impl ProcessGroups {
    /// Start `command` in a process group of its own, killed when the returned guard is dropped
    /// before [`ProcessGroupGuard::finished`] or when the server stops.
    pub(super) fn spawn(
        self: &Arc<Self>,
        mut command: tokio::process::Command,
    ) -> std::io::Result<(tokio::process::Child, ProcessGroupGuard)> {
        let child = command.process_group(0).kill_on_drop(true).spawn()?;
        // The command holds the parent's copies of the child's standard streams (a socket, for
        // the daemon): drop them now, so the peer sees the end when the child ends.
        drop(command);
        let pid = child.id().unwrap_or_default();
        let mut state = self.state.lock().expect("the process groups");
        if state.stopped {
            kill_group(pid);
        } else {
            state.running.insert(pid);
        }
        Ok((
            child,
            ProcessGroupGuard {
                groups: Arc::clone(self),
                pid,
            },
        ))
    }

    /// The process ids of the groups running now.
    #[cfg(test)]
    pub(super) fn running(&self) -> Vec<u32> {
        self.state
            .lock()
            .expect("the process groups")
            .running
            .iter()
            .copied()
            .collect()
    }

    /// Kill every running group, and any started from now on.
    pub(super) fn stop(&self) {
        let mut state = self.state.lock().expect("the process groups");
        state.stopped = true;
        for pid in state.running.drain() {
            kill_group(pid);
        }
    }
}

/// A started git process: its group is killed when this is dropped unless it finished.
#[derive(Debug)]
pub(super) struct ProcessGroupGuard {
    groups: Arc<ProcessGroups>,
    pid: u32,
}

impl ProcessGroupGuard {
    /// The process ended and was waited for: nothing to kill.
    pub(super) fn finished(self) {
        self.groups
            .state
            .lock()
            .expect("the process groups")
            .running
            .remove(&self.pid);
    }
}

impl Drop for ProcessGroupGuard {
    fn drop(&mut self) {
        let mut state = self.groups.state.lock().expect("the process groups");
        if state.running.remove(&self.pid) {
            kill_group(self.pid);
        }
    }
}

fn kill_group(pid: u32) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}
