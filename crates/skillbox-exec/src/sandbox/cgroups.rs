//! One control group per run: its processes together may hold at most so much memory
//! (`tmpfs` pages of its workspace, `/tmp` and `/dev/shm` included) and so many tasks, whatever
//! each process's own limits. The helper creates the group under its own (the runtime's) group
//! before anything of the run exists, moves itself in so that everything the run starts is
//! inside, and afterwards moves back out and removes it.
//!
//! Both cgroup versions are handled: v2 (a unified hierarchy whose group delegates the `memory`
//! and `pids` controllers to children) and v1 (separate `memory` and `pids` hierarchies). Groups
//! left by a helper that was killed (a timeout kills the whole process group) are removed by the
//! next helper, once the process they are named after is gone.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Name prefix of run groups; the helper's pid follows.
const GROUP_PREFIX: &str = "skillbox-run-";

/// The limits of one run's group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupLimits {
    /// Memory of every process of the run together, page cache and tmpfs included.
    pub memory_bytes: u64,
    /// Tasks (processes and threads) of the run together.
    pub tasks: u64,
}

/// Which controllers live where.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hierarchy {
    /// A unified (v2) group that can give children `memory` and `pids`.
    Unified(PathBuf),
    /// v1: the current `memory` group and the current `pids` group.
    Split { memory: PathBuf, pids: PathBuf },
}

/// A run's group(s), entered by the helper. [`RunGroup::leave`] moves the helper back and
/// removes them.
pub struct RunGroup {
    parts: Vec<GroupPart>,
}

/// One created group in one hierarchy.
struct GroupPart {
    /// The folder holding the group (the runtime's group), kept open: after `pivot_root` the
    /// helper can no longer reach it by path.
    parent: OwnedFd,
    /// The group's name in that folder.
    name: String,
    /// The runtime's group's membership file, to move back into.
    home: File,
    /// The file a process joins a group by.
    membership: &'static str,
}

/// The file this process joins a group by. In v1 it is `tasks`: the helper is single-threaded,
/// and moving one thread (itself) skips the global lock whose writer waits a whole RCU grace
/// period (10-15 ms here) that `cgroup.procs` takes. v2 has only `cgroup.procs`.
fn membership_file(hierarchy: &Hierarchy) -> &'static str {
    match hierarchy {
        Hierarchy::Unified(_) => "cgroup.procs",
        Hierarchy::Split { .. } => "tasks",
    }
}

/// Find the hierarchy this process can make run groups in.
fn hierarchy() -> Option<Hierarchy> {
    let membership = fs_err::read_to_string("/proc/self/cgroup").ok()?;
    let mountinfo = fs_err::read_to_string("/proc/self/mountinfo").ok()?;
    let mut unified_path = None;
    let mut memory_path = None;
    let mut pids_path = None;
    for line in membership.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        if controllers.is_empty() {
            unified_path = Some(path.to_owned());
        }
        for controller in controllers.split(',') {
            match controller {
                "memory" => memory_path = Some(path.to_owned()),
                "pids" => pids_path = Some(path.to_owned()),
                _ => {}
            }
        }
    }
    let mut unified_mount = None;
    let mut memory_mount = None;
    let mut pids_mount = None;
    for line in mountinfo.lines() {
        // `… mount-point options - fstype source super-options`
        let Some((before, after)) = line.split_once(" - ") else {
            continue;
        };
        let mount_point = before.split(' ').nth(4)?;
        let mut after = after.split(' ');
        let fstype = after.next()?;
        let super_options = after.nth(1).unwrap_or("");
        match fstype {
            "cgroup2" => unified_mount = Some(PathBuf::from(mount_point)),
            "cgroup" => {
                for option in super_options.split(',') {
                    match option {
                        "memory" => memory_mount = Some(PathBuf::from(mount_point)),
                        "pids" => pids_mount = Some(PathBuf::from(mount_point)),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let join = |mount: PathBuf, path: &str| mount.join(path.trim_start_matches('/'));
    if let (Some(memory), Some(pids), Some(memory_path), Some(pids_path)) =
        (memory_mount, pids_mount, &memory_path, &pids_path)
    {
        return Some(Hierarchy::Split {
            memory: join(memory, memory_path),
            pids: join(pids, pids_path),
        });
    }
    let group = join(unified_mount?, unified_path.as_deref()?);
    let delegated = fs_err::read_to_string(group.join("cgroup.subtree_control")).ok()?;
    let has = |controller: &str| delegated.split_whitespace().any(|name| name == controller);
    (has("memory") && has("pids")).then_some(Hierarchy::Unified(group))
}

/// Whether run groups can be made here (for the probe): make one, limit it, remove it.
#[must_use]
pub fn available() -> bool {
    let limits = GroupLimits {
        memory_bytes: 64 * 1024 * 1024,
        tasks: 8,
    };
    match RunGroup::create(limits) {
        Ok(group) => {
            group.remove();
            true
        }
        Err(_) => false,
    }
}

impl RunGroup {
    /// Create this run's group(s) with `limits`, without entering them.
    fn create(limits: GroupLimits) -> Result<Self, String> {
        let hierarchy = hierarchy().ok_or("no cgroup hierarchy with memory and pids control")?;
        let name = format!("{GROUP_PREFIX}{}", std::process::id());
        let settings: Vec<(PathBuf, Vec<(&str, String)>)> = match &hierarchy {
            Hierarchy::Unified(group) => vec![(
                group.clone(),
                vec![
                    ("memory.max", limits.memory_bytes.to_string()),
                    ("memory.swap.max", "0".to_owned()),
                    ("pids.max", limits.tasks.to_string()),
                ],
            )],
            Hierarchy::Split { memory, pids } => vec![
                (
                    memory.clone(),
                    vec![
                        ("memory.limit_in_bytes", limits.memory_bytes.to_string()),
                        (
                            "memory.memsw.limit_in_bytes",
                            limits.memory_bytes.to_string(),
                        ),
                    ],
                ),
                (pids.clone(), vec![("pids.max", limits.tasks.to_string())]),
            ],
        };
        let mut group = RunGroup { parts: Vec::new() };
        match group.make_parts(&name, settings, membership_file(&hierarchy)) {
            Ok(()) => Ok(group),
            Err(message) => {
                group.remove();
                Err(message)
            }
        }
    }

    fn make_parts(
        &mut self,
        name: &str,
        settings: Vec<(PathBuf, Vec<(&str, String)>)>,
        membership: &'static str,
    ) -> Result<(), String> {
        for (home, files) in settings {
            sweep_abandoned(&home);
            let parent = open_folder(&home)?;
            let created = home.join(name);
            fs_err::create_dir(&created).map_err(|error| error.to_string())?;
            let home_procs = fs_err::OpenOptions::new()
                .write(true)
                .open(home.join(membership))
                .map_err(|error| error.to_string())?
                .into_parts()
                .0;
            self.parts.push(GroupPart {
                parent,
                name: name.to_owned(),
                home: home_procs,
                membership,
            });
            for (file, value) in files {
                let path = created.join(file);
                // Swap accounting is optional in v1 (`memsw` needs `swapaccount=1`).
                if file.contains("memsw") && !path.exists() {
                    continue;
                }
                fs_err::write(&path, &value).map_err(|error| error.to_string())?;
            }
        }
        Ok(())
    }

    /// Create the run's group(s) and move this process (and so everything it starts) in.
    ///
    /// # Errors
    /// When no usable hierarchy exists or the group cannot be made or entered; nothing is left
    /// behind then.
    pub fn enter(limits: GroupLimits) -> Result<Self, String> {
        let group = Self::create(limits)?;
        for part in &group.parts {
            let procs = nix::fcntl::openat(
                part.parent.as_fd(),
                Path::new(&part.name).join(part.membership).as_path(),
                nix::fcntl::OFlag::O_WRONLY | nix::fcntl::OFlag::O_CLOEXEC,
                nix::sys::stat::Mode::empty(),
            );
            let moved = procs.map_err(|error| error.to_string()).and_then(|procs| {
                File::from(procs)
                    .write_all(b"0")
                    .map_err(|error| error.to_string())
            });
            if let Err(message) = moved {
                group.leave();
                return Err(format!("cannot enter the run's cgroup: {message}"));
            }
        }
        Ok(group)
    }

    /// Move this process back to the runtime's group(s) and remove the run's, once every
    /// process of the run is gone.
    pub fn leave(mut self) {
        for part in &mut self.parts {
            let _ = part.home.write_all(b"0");
        }
        self.remove();
    }

    fn remove(self) {
        for part in &self.parts {
            // The kernel may still be tearing the run's last processes down.
            for _ in 0..50 {
                match nix::unistd::unlinkat(
                    &part.parent,
                    part.name.as_str(),
                    nix::unistd::UnlinkatFlags::RemoveDir,
                ) {
                    Err(nix::errno::Errno::EBUSY) => {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                    _ => break,
                }
            }
        }
    }
}

/// Remove the group a helper made for its run when the helper could not (it was killed at a
/// timeout, or it became the program itself on a host without namespaces). Called by the
/// runtime after the helper has been reaped; waits briefly for the run's last processes.
pub fn remove_group_of(helper: u32) {
    let Some(hierarchy) = hierarchy() else {
        return;
    };
    let homes = match hierarchy {
        Hierarchy::Unified(group) => vec![group],
        Hierarchy::Split { memory, pids } => vec![memory, pids],
    };
    for home in homes {
        let group = home.join(format!("{GROUP_PREFIX}{helper}"));
        for _ in 0..100 {
            match std::fs::remove_dir(&group) {
                Err(error) if error.raw_os_error() == Some(libc::EBUSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                _ => break,
            }
        }
    }
}

/// Every process in the group the helper `helper` made for its run (all hierarchies), the
/// helper included: what a warm worker's call may have left running, whatever session or
/// parent it has. Empty when there is no such group.
pub(crate) fn group_processes(helper: u32) -> Vec<i32> {
    // The runtime's own groups do not move: found once.
    static HIERARCHY: std::sync::OnceLock<Option<Hierarchy>> = std::sync::OnceLock::new();
    let Some(hierarchy) = HIERARCHY.get_or_init(hierarchy) else {
        return Vec::new();
    };
    let homes = match hierarchy {
        Hierarchy::Unified(group) => vec![group],
        Hierarchy::Split { memory, pids } => vec![memory, pids],
    };
    let mut found = Vec::new();
    for home in homes {
        let procs = home
            .join(format!("{GROUP_PREFIX}{helper}"))
            .join("cgroup.procs");
        if let Ok(text) = fs_err::read_to_string(procs) {
            found.extend(
                text.lines()
                    .filter_map(|line| line.trim().parse::<i32>().ok()),
            );
        }
    }
    found
}

fn open_folder(path: &Path) -> Result<OwnedFd, String> {
    nix::fcntl::open(
        path,
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(|error| format!("cannot open `{}`: {error}", path.display()))
}

/// Remove run groups whose helper is gone (killed with its run at a timeout). A group still in
/// use cannot be removed (the kernel refuses while it holds processes).
fn sweep_abandoned(home: &Path) {
    let Ok(entries) = fs_err::read_dir(home) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(GROUP_PREFIX))
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
        if !alive {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}
