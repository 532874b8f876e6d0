//! The sandbox helper: the program the runtime starts instead of a script. It applies a
//! [`SandboxPlan`] to itself in a fixed order and then `execve`s the real program, so the policy
//! never runs as code between `fork` and `exec` inside a multi-threaded runtime.
//!
//! `HELPER probe` prints what the host supports as JSON; `HELPER exec --plan JSON -- PROGRAM
//! ARGS…` runs a program. Setup failures exit with [`HELPER_SETUP_FAILED`] after a line on
//! stderr starting with `skillbox-sandbox:`; exec failures with [`HELPER_EXEC_FAILED`].
//!
//! This module holds the crate's only `unsafe` code: `fork`, which is sound here because the
//! helper is single-threaded when it forks, and one `prctl` call that nix does not wrap.
#![allow(unsafe_code)]

mod landlock;
mod mounts;
mod output_copy;
mod probe;
mod seccomp;

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;

use nix::sched::CloneFlags;
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Gid, Uid};

use self::landlock::apply_landlock;
use self::mounts::{PreparedRoot, enter_root, prepare_root};
use self::probe::probe;
use self::seccomp::apply_seccomp;
#[cfg(doc)]
use super::plan::PROGRAM_ENVIRONMENT_PREFIX;
use super::{HELPER_EXEC_FAILED, HELPER_SETUP_FAILED, SandboxPlan};

/// The host name a run sees.
const SANDBOX_HOSTNAME: &str = "skillbox";

/// Entry point: `args` are the helper's arguments after the program name (and any selector).
/// Returns the exit code for setup errors and probes; on success it never returns (it execs).
#[must_use]
pub fn run(args: &[OsString]) -> i32 {
    match args.first().and_then(|arg| arg.to_str()) {
        Some("probe") => {
            let support = probe();
            match serde_json::to_string(&support) {
                Ok(json) => {
                    use std::io::Write;
                    let mut stdout = std::io::stdout().lock();
                    match writeln!(stdout, "{json}") {
                        Ok(()) => 0,
                        Err(error) => fail(&format!("cannot print the probe result: {error}")),
                    }
                }
                Err(error) => fail(&format!("cannot print the probe result: {error}")),
            }
        }
        Some("exec") => exec(&args[1..]),
        _ => fail("usage: skillbox-sandbox probe | exec --plan JSON -- PROGRAM [ARG]..."),
    }
}

/// The run's setup token from its plan: setup failures are reported with it, so a program that
/// prints a look-alike line cannot pass its own failure off as the sandbox's.
static SETUP_TOKEN: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The prefix of the helper's own messages on stderr.
fn message_prefix() -> String {
    match SETUP_TOKEN.get().filter(|token| !token.is_empty()) {
        Some(token) => format!("skillbox-sandbox[{token}]: "),
        None => "skillbox-sandbox: ".to_owned(),
    }
}

fn fail(message: &str) -> i32 {
    eprintln!("{}{message}", message_prefix());
    HELPER_SETUP_FAILED
}

fn exec(args: &[OsString]) -> i32 {
    let (plan, command) = match parse_exec_args(args) {
        Ok(parsed) => parsed,
        Err(message) => return fail(&message),
    };
    let _ = SETUP_TOKEN.set(plan.setup_token.clone());
    // Read before `confine` lowers the limit: descriptors inherited above the run's own limit
    // must be closed too.
    let inherited_bound = inherited_descriptor_bound();
    // Die with the runtime thread that started us, and lead our own session and process group
    // so the runtime can kill the whole tree.
    let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
    let mut lifeline = Lifeline::Runtime(nix::unistd::getppid());
    let _ = nix::unistd::setsid();
    // The run's control group, entered before anything of the run exists.
    let group = match plan.cgroup {
        Some(limits) => match super::cgroups::RunGroup::enter(limits) {
            Ok(group) => Some(group),
            Err(message) => return fail(&message),
        },
        None => None,
    };
    // A run with namespaces always enters a private root, and only such a run has one.
    let root = match (&plan.root, plan.layers.namespaces) {
        (Some(root), true) => Some(root),
        (None, false) => None,
        (Some(_), false) => {
            return fail("a private root needs namespaces, which this sandbox does not have");
        }
        (None, true) => {
            return fail("namespaces need a private root to enter, and the plan has none");
        }
    };
    if let Some(layout) = root {
        let mut flags = CloneFlags::CLONE_NEWPID
            | CloneFlags::CLONE_NEWNS
            | CloneFlags::CLONE_NEWIPC
            | CloneFlags::CLONE_NEWUTS;
        if !plan.network {
            flags |= CloneFlags::CLONE_NEWNET;
        }
        if let Err(error) = nix::sched::unshare(flags) {
            return fail(&format!("cannot create namespaces: {error}"));
        }
        // The run's own UTS namespace: it does not learn the host's name.
        let _ = nix::unistd::sethostname(SANDBOX_HOSTNAME);
        // The root is built here, before the fork, so that this process keeps a descriptor of
        // the workspace and can copy outputs out of it after the program ends.
        let prepared = match prepare_root(layout, &plan) {
            Ok(prepared) => prepared,
            Err(message) => return fail(&message),
        };
        // Open while this process lives: the namespace's first process checks it once it has
        // armed its own parent-death signal (see `Lifeline`).
        let (watch, held_open) = match nix::unistd::pipe2(
            nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK,
        ) {
            Ok(ends) => ends,
            Err(error) => return fail(&format!("cannot create a pipe: {error}")),
        };
        // SAFETY: the helper is single-threaded (it has started no threads), so the child may
        // run arbitrary code after `fork`.
        match unsafe { nix::unistd::fork() } {
            Ok(ForkResult::Parent { child }) => {
                drop(watch);
                let code = relay_exit(child);
                drop(held_open);
                if let PreparedRoot {
                    workspace,
                    output_copy: Some(copy),
                } = prepared
                {
                    copy.run(&workspace);
                }
                if let Some(group) = group {
                    group.leave();
                }
                return code;
            }
            Ok(ForkResult::Child) => {
                // Die with the helper, and see only this namespace's processes in /proc.
                let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
                drop(held_open);
                lifeline = Lifeline::Helper(watch);
                drop(prepared);
                drop(group);
                if let Err(message) = enter_root(layout) {
                    return fail(&message);
                }
            }
            Err(error) => return fail(&format!("cannot fork into the new namespaces: {error}")),
        }
    }
    if let Err(message) = confine(&plan, &lifeline) {
        return fail(&message);
    }
    drop(lifeline);
    let start_in = plan.working_directory.as_ref().unwrap_or(&plan.workspace);
    if let Err(error) = nix::unistd::chdir(start_in) {
        return fail(&format!(
            "cannot enter the working directory `{}`: {error}",
            start_in.display()
        ));
    }
    // Nothing the runtime had open (logs, sockets, secrets) reaches the program.
    close_inherited_descriptors(inherited_bound);
    let program = command[0].clone();
    let argv = command;
    let environment = program_environment(&plan.program_environment_prefix);
    let error = match nix::unistd::execvpe(&program, &argv, &environment) {
        Err(error) => error,
        Ok(infallible) => match infallible {},
    };
    eprintln!(
        "{}cannot execute `{}`: {error}",
        message_prefix(),
        program.to_string_lossy()
    );
    HELPER_EXEC_FAILED
}

/// The program's environment: this process's variables that carry `prefix` (the runtime's
/// [`PROGRAM_ENVIRONMENT_PREFIX`]), without it; with no prefix, this process's own.
fn program_environment(prefix: &str) -> Vec<CString> {
    std::env::vars_os()
        .filter_map(|(key, value)| {
            let name = key.as_bytes().strip_prefix(prefix.as_bytes())?;
            let mut entry = name.to_vec();
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            CString::new(entry).ok()
        })
        .collect()
}

fn parse_exec_args(args: &[OsString]) -> Result<(SandboxPlan, Vec<CString>), String> {
    let mut plan = None;
    let mut index = 0;
    while index < args.len() {
        match args[index].to_str() {
            Some("--plan") => {
                let json = args.get(index + 1).ok_or("`--plan` needs a JSON value")?;
                plan = Some(
                    serde_json::from_slice::<SandboxPlan>(json.as_bytes())
                        .map_err(|error| {
                            format!(
                                "invalid `--plan`: {error} (is this `skillbox-sandbox` older than the `skillbox` that started it? rebuild both: `cargo build --release --workspace --bins`)"
                            )
                        })?,
                );
                index += 2;
            }
            Some("--") => {
                index += 1;
                break;
            }
            _ => {
                return Err(format!(
                    "unexpected argument `{}`",
                    args[index].to_string_lossy()
                ));
            }
        }
    }
    let plan = plan.ok_or("missing `--plan`")?;
    let command: Vec<CString> = args[index..]
        .iter()
        .map(|arg| {
            CString::new(arg.as_bytes()).map_err(|_| "an argument contains a NUL byte".to_owned())
        })
        .collect::<Result<_, _>>()?;
    if command.is_empty() {
        return Err("no program to run after `--`".to_owned());
    }
    Ok((plan, command))
}

/// Wait for the namespace's first process and exit as it did.
fn relay_exit(child: nix::unistd::Pid) -> i32 {
    loop {
        match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => return code,
            Ok(WaitStatus::Signaled(_, signal, _)) => return 128 + signal as i32,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => {}
            Err(error) => return fail(&format!("lost the sandboxed process: {error}")),
        }
    }
}

/// Most descriptors the fallback of [`close_inherited_descriptors`] tries to close.
const MAX_CLOSED_DESCRIPTORS: u64 = 1 << 20;

/// One above the highest descriptor the helper can have inherited: its open-files limit as it
/// started (the runtime's), before the run's own limit is applied.
fn inherited_descriptor_bound() -> u64 {
    rlimit::Resource::NOFILE
        .get()
        .map_or(1024, |(soft, _)| soft.min(MAX_CLOSED_DESCRIPTORS))
}

/// Close every descriptor above stderr; `bound` is one above the highest that can be open
/// (only used on kernels before 5.9, which lack `close_range`).
fn close_inherited_descriptors(bound: u64) {
    // SAFETY: close_range takes three integers and touches no memory; the helper is about to
    // exec and uses no descriptor above 2 from here on.
    let closed = unsafe { libc::syscall(libc::SYS_close_range, 3_u32, u32::MAX, 0_u32) };
    if closed != 0 {
        for descriptor in 3..bound {
            let _ = nix::unistd::close(i32::try_from(descriptor).unwrap_or(i32::MAX));
        }
    }
}

/// What the program must die with: the runtime (without namespaces, the helper becomes the
/// program), or the helper process that waits for the namespace's first process.
///
/// The parent-death signal set at the start does not survive the switch to the run's uid (the
/// kernel clears it whenever the effective uid changes), so it is armed again after the switch,
/// and the seccomp filter keeps the program from clearing it. A program that left the helper's
/// process group would otherwise outlive the helper, and with it its call. Arming it again
/// leaves a gap in which the parent may already have ended; the lifeline closes it.
enum Lifeline {
    /// The runtime's pid, as this process saw it at the start.
    Runtime(nix::unistd::Pid),
    /// The read end of a pipe whose only write end the helper holds: end of file once it ended.
    Helper(std::os::fd::OwnedFd),
}

impl Lifeline {
    fn alive(&self) -> bool {
        match self {
            Lifeline::Runtime(parent) => nix::unistd::getppid() == *parent,
            Lifeline::Helper(watch) => {
                let mut byte = [0u8; 1];
                !matches!(nix::unistd::read(watch, &mut byte), Ok(0))
            }
        }
    }
}

/// Limits, privilege drop, the parent-death signal again, `no_new_privs`, Landlock, seccomp: in
/// that order.
fn confine(plan: &SandboxPlan, lifeline: &Lifeline) -> Result<(), String> {
    apply_limits(plan)?;
    if plan.layers.uid_drop {
        drop_privileges(plan.uid, plan.gid)?;
    }
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
        .map_err(|error| format!("cannot set the parent-death signal: {error}"))?;
    if !lifeline.alive() {
        return Err("the process that started the sandbox has ended".to_owned());
    }
    nix::sys::prctl::set_no_new_privs()
        .map_err(|error| format!("cannot set no_new_privs: {error}"))?;
    if plan.layers.landlock {
        apply_landlock(plan)?;
    }
    if plan.layers.seccomp {
        apply_seccomp(plan.network, plan.root.is_none())?;
    }
    Ok(())
}

fn apply_limits(plan: &SandboxPlan) -> Result<(), String> {
    use rlimit::Resource;
    let limits = plan.limits;
    for (resource, value, name) in [
        (Resource::CPU, limits.cpu_seconds, "CPU time"),
        (Resource::AS, limits.memory_bytes, "address space"),
        (Resource::FSIZE, limits.file_size_bytes, "file size"),
        (Resource::NOFILE, limits.open_files, "open files"),
        (Resource::NPROC, limits.processes, "processes"),
        (Resource::CORE, 0, "core dumps"),
    ] {
        resource
            .set(value, value)
            .map_err(|error| format!("cannot limit {name} to {value}: {error}"))?;
    }
    Ok(())
}

fn drop_privileges(uid: u32, gid: u32) -> Result<(), String> {
    // Empty the capability bounding set while still privileged, so nothing can regain them.
    for capability in 0..=63 {
        // SAFETY: PR_CAPBSET_DROP takes one integer argument and touches no memory; an unknown
        // capability number just returns EINVAL, which is ignored.
        let _ = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0) };
    }
    nix::unistd::setgroups(&[])
        .map_err(|error| format!("cannot drop supplementary groups: {error}"))?;
    let gid = Gid::from_raw(gid);
    nix::unistd::setresgid(gid, gid, gid)
        .map_err(|error| format!("cannot switch to gid {gid}: {error}"))?;
    let uid = Uid::from_raw(uid);
    nix::unistd::setresuid(uid, uid, uid)
        .map_err(|error| format!("cannot switch to uid {uid}: {error}"))?;
    if nix::unistd::setuid(Uid::from_raw(0)).is_ok() {
        return Err("dropping root did not stick".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lifeline_ends_with_the_helper() {
        let (watch, held_open) =
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK)
                .unwrap();
        let lifeline = Lifeline::Helper(watch);
        assert!(lifeline.alive());
        drop(held_open);
        assert!(!lifeline.alive());
        assert!(Lifeline::Runtime(nix::unistd::getppid()).alive());
        assert!(!Lifeline::Runtime(nix::unistd::Pid::from_raw(i32::MAX)).alive());
    }
}
