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

use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};
use nix::sched::CloneFlags;
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Gid, Uid};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use skillbox_core::printable::printable_path;

use super::{
    HELPER_EXEC_FAILED, HELPER_SETUP_FAILED, HostSupport, OutputCopy, OutputNotes,
    ROOT_ETC_ENTRIES, ROOT_SYSTEM_FOLDERS, ROOT_WORKSPACE, RootLayout, SYSTEM_READ_PATHS,
    SandboxPlan, WorkspaceMount,
};

/// The host name a run sees.
const SANDBOX_HOSTNAME: &str = "skillbox";

/// Landlock ABI the helper asks for; older kernels get the best they support.
const LANDLOCK_ABI: ABI = ABI::V6;

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
    if let Err(error) = nix::unistd::chdir(&plan.workspace) {
        return fail(&format!(
            "cannot enter the workspace `{}`: {error}",
            plan.workspace.display()
        ));
    }
    // Nothing the runtime had open (logs, sockets, secrets) reaches the program.
    close_inherited_descriptors(inherited_bound);
    let program = command[0].clone();
    let argv = command;
    let error = match nix::unistd::execvp(&program, &argv) {
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

fn parse_exec_args(args: &[OsString]) -> Result<(SandboxPlan, Vec<CString>), String> {
    let mut plan = None;
    let mut index = 0;
    while index < args.len() {
        match args[index].to_str() {
            Some("--plan") => {
                let json = args.get(index + 1).ok_or("`--plan` needs a JSON value")?;
                plan = Some(
                    serde_json::from_slice::<SandboxPlan>(json.as_bytes())
                        .map_err(|error| format!("invalid `--plan`: {error}"))?,
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

/// Stop mount events from crossing between the host and the sandbox's mount namespace.
fn make_mounts_private() -> Result<(), String> {
    use nix::mount::{MsFlags, mount};
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|error| format!("cannot make mounts private: {error}"))
}

/// A `/proc` showing only the sandbox's PID namespace.
fn mount_proc() -> Result<(), String> {
    use nix::mount::{MsFlags, mount};
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(|error| format!("cannot mount a private /proc: {error}"))
}

/// Devices the private `/dev` shows (bound from the host's).
const ROOT_DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];

/// What the helper keeps of a root it built: the workspace, and the output copy to make.
struct PreparedRoot {
    workspace: std::os::fd::OwnedFd,
    output_copy: Option<OutputCopyJob>,
}

/// Build the minimal root described by `layout` on its mount point. Runs as root inside the new
/// mount namespace, before the fork and before any privilege is dropped; nothing here is
/// visible to the host. The child then enters it with [`enter_root`].
fn prepare_root(layout: &RootLayout, plan: &SandboxPlan) -> Result<PreparedRoot, String> {
    use nix::mount::{MsFlags, mount};
    let new_root = layout.mount_point.as_path();
    make_mounts_private()?;
    mount(
        Some("tmpfs"),
        new_root,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("mode=0755,size=4m"),
    )
    .map_err(|error| {
        format!(
            "cannot mount the new root on `{}`: {error}",
            new_root.display()
        )
    })?;
    let inside = |path: &Path| new_root.join(path.strip_prefix("/").unwrap_or(path));
    for folder in ROOT_SYSTEM_FOLDERS {
        let host = Path::new(folder);
        match std::fs::symlink_metadata(host) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = std::fs::read_link(host)
                    .map_err(|error| format!("cannot read the link `{folder}`: {error}"))?;
                std::os::unix::fs::symlink(&target, inside(host))
                    .map_err(|error| format!("cannot link `{folder}`: {error}"))?;
            }
            Ok(_) => bind(host, &inside(host), BindKind::ReadOnly)?,
            Err(_) => {}
        }
    }
    for entry in ROOT_ETC_ENTRIES {
        let host = Path::new(entry);
        if host.exists() {
            bind(host, &inside(host), BindKind::ReadOnly)?;
        }
    }
    let dev = inside(Path::new("/dev"));
    create_folder(&dev)?;
    for device in ROOT_DEVICES {
        bind(
            &Path::new("/dev").join(device),
            &dev.join(device),
            BindKind::Device,
        )?;
    }
    for (link, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, dev.join(link))
            .map_err(|error| format!("cannot link `/dev/{link}`: {error}"))?;
    }
    // Private scratch space: /tmp, and /dev/shm for POSIX shared memory and semaphores.
    for (folder, bytes) in [
        ("/tmp", layout.tmp_bytes),
        ("/dev/shm", layout.tmp_bytes / 4),
    ] {
        mount_scratch(&inside(Path::new(folder)), bytes, "mode=1777")?;
    }
    for extra in &layout.binds {
        bind(
            &extra.source,
            &under_root(new_root, &extra.target)?,
            BindKind::ReadOnly,
        )?;
    }
    let workspace = inside(Path::new(ROOT_WORKSPACE));
    let owner = if plan.layers.uid_drop {
        plan.uid
    } else {
        nix::unistd::geteuid().as_raw()
    };
    match &layout.workspace {
        WorkspaceMount::Scratch { bytes } => {
            let options = format!("mode=0700,uid={owner},gid={owner}");
            mount_scratch(&workspace, *bytes, &options)?;
        }
        WorkspaceMount::Host { source } => bind(source, &workspace, BindKind::Writable)?,
    }
    let workspace_descriptor = open_folder(None, &workspace)?;
    for folder in &layout.workspace_folders {
        hand_workspace_folder(&workspace_descriptor, &contained(folder)?, owner)?;
    }
    for folder in &layout.folders {
        create_folder(&under_root(new_root, folder)?)?;
    }
    create_folder(&inside(Path::new("/proc")))?;
    create_folder(&inside(Path::new("/.old-root")))?;
    let output_copy = match &layout.output_copy {
        Some(copy) => Some(OutputCopyJob::open(copy)?),
        None => None,
    };
    Ok(PreparedRoot {
        workspace: workspace_descriptor,
        output_copy,
    })
}

/// Enter the root [`prepare_root`] built: `pivot_root`, detach the host's tree, mount this PID
/// namespace's `/proc`, make the root read-only. Runs in the namespace's first process.
fn enter_root(layout: &RootLayout) -> Result<(), String> {
    use nix::mount::{MntFlags, MsFlags, mount, umount2};
    let new_root = layout.mount_point.as_path();
    let old_root = new_root.join(".old-root");
    nix::unistd::pivot_root(new_root, &old_root)
        .map_err(|error| format!("cannot enter the new root: {error}"))?;
    nix::unistd::chdir("/").map_err(|error| format!("cannot enter the new root: {error}"))?;
    umount2("/.old-root", MntFlags::MNT_DETACH)
        .map_err(|error| format!("cannot detach the host's root: {error}"))?;
    std::fs::remove_dir("/.old-root")
        .map_err(|error| format!("cannot remove the host root's mount point: {error}"))?;
    mount_proc()?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        None::<&str>,
    )
    .map_err(|error| format!("cannot make the new root read-only: {error}"))
}

/// A size-limited tmpfs at `path` (created first).
fn mount_scratch(path: &Path, bytes: u64, options: &str) -> Result<(), String> {
    use nix::mount::{MsFlags, mount};
    create_folder(path)?;
    mount(
        Some("tmpfs"),
        path,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(format!("{options},size={}", bytes.max(4096)).as_str()),
    )
    .map_err(|error| format!("cannot mount `{}`: {error}", path.display()))
}

/// Where an absolute path the plan names (a bind target, a folder) lies under the new root.
/// Every part after `/` must be a plain name: a `..` would reach the host's tree, which this
/// root process can still write before it enters the new root.
fn under_root(new_root: &Path, path: &Path) -> Result<PathBuf, String> {
    let relative = path
        .strip_prefix("/")
        .map_err(|_| format!("`{}` must be an absolute path", path.display()))?;
    Ok(new_root.join(contained(relative)?))
}

/// A relative path with no `..`, for folders named in a layout.
fn contained(path: &Path) -> Result<PathBuf, String> {
    let fine = path
        .components()
        .all(|component| matches!(component, std::path::Component::Normal(_)));
    if fine && !path.as_os_str().is_empty() {
        Ok(path.to_path_buf())
    } else {
        Err(format!(
            "`{}` must be a plain relative path",
            path.display()
        ))
    }
}

/// Create a folder inside the workspace (a relative path) and hand it to the run's uid, one
/// folder at a time relative to descriptors, never following a link. The workspace may be the
/// operator's `--workdir`, which holds whatever earlier runs left there: a link planted at that
/// name must not lead this root process to a host folder.
fn hand_workspace_folder(
    workspace: &std::os::fd::OwnedFd,
    path: &Path,
    owner: u32,
) -> Result<(), String> {
    use std::os::fd::AsFd;
    let mut folder = workspace
        .try_clone()
        .map_err(|error| format!("cannot open the workspace: {error}"))?;
    for name in path.components().map(|component| component.as_os_str()) {
        match nix::sys::stat::mkdirat(
            folder.as_fd(),
            name,
            nix::sys::stat::Mode::from_bits_truncate(0o755),
        ) {
            Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
            Err(error) => {
                return Err(format!(
                    "cannot create `{}` in the workspace: {error}",
                    path.display()
                ));
            }
        }
        folder = open_folder(Some(folder.as_fd()), Path::new(name)).map_err(|_| {
            format!(
                "`{}` in the workspace is a link or not a folder; remove it",
                path.display()
            )
        })?;
    }
    nix::unistd::fchown(
        folder.as_fd(),
        Some(Uid::from_raw(owner)),
        Some(Gid::from_raw(owner)),
    )
    .map_err(|error| format!("cannot hand `{}` to the run: {error}", path.display()))
}

/// Open a folder without following a symlink at its last component, relative to `at` (or the
/// current root).
fn open_folder(
    at: Option<std::os::fd::BorrowedFd<'_>>,
    path: &Path,
) -> Result<std::os::fd::OwnedFd, String> {
    use nix::fcntl::{AT_FDCWD, OFlag, openat};
    use nix::sys::stat::Mode;
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let opened = match at {
        Some(folder) => openat(folder, path, flags, Mode::empty()),
        None => openat(AT_FDCWD, path, flags, Mode::empty()),
    };
    opened.map_err(|error| format!("cannot open the folder `{}`: {error}", path.display()))
}

/// The copy of a run's output files, prepared before the fork (the host folder is opened while
/// the host's tree is still reachable) and made after the program's namespace is gone.
struct OutputCopyJob {
    source: PathBuf,
    destination: std::os::fd::OwnedFd,
    report: std::fs::File,
    max_files: usize,
    max_bytes: u64,
}

/// Folder depth an output copy descends to.
const MAX_OUTPUT_DEPTH: usize = 16;

impl OutputCopyJob {
    fn open(copy: &OutputCopy) -> Result<Self, String> {
        use std::os::unix::fs::OpenOptionsExt;
        let source = contained(&copy.source)?;
        let destination = open_folder(None, &copy.destination)?;
        let report = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&copy.report)
            .map_err(|error| format!("cannot create `{}`: {error}", copy.report.display()))?;
        Ok(OutputCopyJob {
            source,
            destination,
            report,
            max_files: copy.max_files,
            max_bytes: copy.max_bytes,
        })
    }

    /// Copy the regular files under the source folder of `workspace` (every process that could
    /// change it is dead), noting in the report what was left and why.
    fn run(mut self, workspace: &std::os::fd::OwnedFd) {
        use std::io::Write;
        use std::os::fd::AsFd;
        let mut notes = OutputNotes::default();
        let mut copied = CopyBudget::default();
        match open_folder(Some(workspace.as_fd()), &self.source) {
            Ok(source) => {
                let destination = self.destination.as_fd();
                self.copy_folder(
                    &source,
                    destination,
                    Path::new(""),
                    0,
                    &mut copied,
                    &mut notes,
                );
            }
            Err(message) => notes.push(format!("out/: {message}")),
        }
        for note in notes.into_lines() {
            let _ = writeln!(self.report, "{note}");
        }
    }

    fn copy_folder(
        &self,
        source: &std::os::fd::OwnedFd,
        destination: std::os::fd::BorrowedFd<'_>,
        relative: &Path,
        depth: usize,
        budget: &mut CopyBudget,
        notes: &mut OutputNotes,
    ) {
        use nix::sys::stat::{Mode, SFlag};
        use std::os::fd::AsFd;
        let Ok(listing) = nix::dir::Dir::from_fd(match source.try_clone() {
            Ok(clone) => clone,
            Err(error) => {
                notes.push(format!("out/{}: {error}", printable_path(relative)));
                return;
            }
        }) else {
            notes.push(format!(
                "out/{}: cannot be listed",
                printable_path(relative)
            ));
            return;
        };
        let mut names: Vec<std::ffi::OsString> = Vec::new();
        for entry in listing.into_iter().flatten() {
            let name = std::ffi::OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            if !notes.look_at_one_more() {
                break;
            }
            names.push(name.to_owned());
        }
        names.sort();
        for name in names {
            let shown = relative.join(&name);
            let Ok(status) = nix::sys::stat::fstatat(
                source.as_fd(),
                name.as_os_str(),
                nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
            ) else {
                continue;
            };
            let kind = SFlag::from_bits_truncate(status.st_mode) & SFlag::S_IFMT;
            if kind == SFlag::S_IFDIR {
                if depth + 1 >= MAX_OUTPUT_DEPTH {
                    notes.push(format!(
                        "out/{}: deeper than {MAX_OUTPUT_DEPTH} folders",
                        printable_path(&shown)
                    ));
                    continue;
                }
                let made = nix::sys::stat::mkdirat(
                    destination,
                    name.as_os_str(),
                    Mode::from_bits_truncate(0o700),
                );
                let opened = made
                    .map_err(|error| error.to_string())
                    .and_then(|()| open_folder(Some(source.as_fd()), Path::new(&name)))
                    .and_then(|inner| {
                        open_folder(Some(destination), Path::new(&name)).map(|out| (inner, out))
                    });
                match opened {
                    Ok((inner, out)) if !notes.stopped() => {
                        self.copy_folder(&inner, out.as_fd(), &shown, depth + 1, budget, notes);
                    }
                    Ok(_) => {}
                    Err(message) => {
                        notes.push(format!("out/{}: {message}", printable_path(&shown)))
                    }
                }
                continue;
            }
            if kind != SFlag::S_IFREG {
                notes.push(format!(
                    "out/{}: not a regular file (links are not followed)",
                    printable_path(&shown)
                ));
                continue;
            }
            let size = u64::try_from(status.st_size).unwrap_or(0);
            if budget.files >= self.max_files {
                notes.push(format!(
                    "out/{}: more than {} output files",
                    printable_path(&shown),
                    self.max_files
                ));
                continue;
            }
            if budget.bytes.saturating_add(size) > self.max_bytes {
                notes.push(format!(
                    "out/{}: output files exceed {} bytes in total",
                    printable_path(&shown),
                    self.max_bytes
                ));
                continue;
            }
            match copy_file(source.as_fd(), destination, &name) {
                Ok(bytes) => {
                    budget.files += 1;
                    budget.bytes += bytes;
                }
                Err(message) => notes.push(format!("out/{}: {message}", printable_path(&shown))),
            }
        }
    }
}

/// What an output copy has used so far.
#[derive(Default)]
struct CopyBudget {
    files: usize,
    bytes: u64,
}

/// Copy one regular file between folders, never following a link on either side.
fn copy_file(
    from: std::os::fd::BorrowedFd<'_>,
    to: std::os::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
) -> Result<u64, String> {
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::Mode;
    let source = openat(
        from,
        name,
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|error| error.to_string())?;
    let target = openat(
        to,
        name,
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )
    .map_err(|error| error.to_string())?;
    let mut source = std::fs::File::from(source);
    let mut target = std::fs::File::from(target);
    if !source
        .metadata()
        .map_err(|error| error.to_string())?
        .is_file()
    {
        return Err("not a regular file".to_owned());
    }
    std::io::copy(&mut source, &mut target).map_err(|error| error.to_string())
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

fn create_folder(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path)
        .map_err(|error| format!("cannot create `{}`: {error}", path.display()))
}

/// How a bind mount may be used. All are `nosuid`; all but devices are `nodev`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BindKind {
    ReadOnly,
    Writable,
    Device,
}

/// Show `source` at `target` (created as an empty file or folder first).
fn bind(source: &Path, target: &Path, kind: BindKind) -> Result<(), String> {
    use nix::mount::{MsFlags, mount};
    let metadata = std::fs::metadata(source)
        .map_err(|error| format!("cannot mount `{}`: {error}", source.display()))?;
    if metadata.is_dir() {
        create_folder(target)?;
    } else {
        if let Some(parent) = target.parent() {
            create_folder(parent)?;
        }
        // The root is a fresh tmpfs: a file already there was put by an earlier entry of the
        // plan, never one to truncate.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(target)
            .map_err(|error| format!("cannot create `{}`: {error}", target.display()))?;
    }
    mount(
        Some(source),
        target,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(|error| {
        format!(
            "cannot mount `{}` at `{}`: {error}",
            source.display(),
            target.display()
        )
    })?;
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_NOSUID;
    match kind {
        BindKind::ReadOnly => flags |= MsFlags::MS_RDONLY | MsFlags::MS_NODEV,
        BindKind::Writable => flags |= MsFlags::MS_NODEV,
        // Reading and writing a device does not need a writable mount; changing its times,
        // mode or owner on the host does.
        BindKind::Device => flags |= MsFlags::MS_RDONLY,
    }
    mount(None::<&str>, target, None::<&str>, flags, None::<&str>).map_err(|error| {
        format!(
            "cannot restrict the mount at `{}`: {error}",
            target.display()
        )
    })
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

fn apply_landlock(plan: &SandboxPlan) -> Result<(), String> {
    let abi = LANDLOCK_ABI;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(|error| format!("landlock: {error}"))?;
    if !plan.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|error| format!("landlock: {error}"))?;
    }
    let ruleset = ruleset
        .scope(Scope::from_all(abi))
        .map_err(|error| format!("landlock: {error}"))?;
    let mut created = ruleset
        .create()
        .map_err(|error| format!("landlock: {error}"))?;
    // In a minimal root everything was put there to be read; on the host's tree, only the
    // system folders, the parts of /etc interpreters need, and the plan's own paths.
    let host_etc: &[&str] = if plan.root.is_some() {
        &[]
    } else {
        ROOT_ETC_ENTRIES
    };
    let readable = SYSTEM_READ_PATHS
        .iter()
        .chain(host_etc)
        .map(Path::new)
        .chain(plan.readable.iter().map(|path| path.as_path()));
    for path in readable {
        created = add_path_rule(created, path, read, abi)?;
    }
    for device in [
        "/dev/null",
        "/dev/zero",
        "/dev/urandom",
        "/dev/random",
        "/dev/full",
    ] {
        created = add_path_rule(created, Path::new(device), read | AccessFs::WriteFile, abi)?;
    }
    for path in std::iter::once(&plan.workspace).chain(&plan.writable) {
        created = add_path_rule(created, path, all, abi)?;
    }
    let status = created
        .restrict_self()
        .map_err(|error| format!("landlock: {error}"))?;
    match status.ruleset {
        landlock::RulesetStatus::NotEnforced => {
            Err("landlock is not enforced on this kernel".to_owned())
        }
        _ => Ok(()),
    }
}

fn add_path_rule(
    created: landlock::RulesetCreated,
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
    abi: ABI,
) -> Result<landlock::RulesetCreated, String> {
    // Paths that do not exist on this host are simply not granted.
    let Ok(metadata) = std::fs::metadata(path) else {
        return Ok(created);
    };
    let Ok(fd) = PathFd::new(path) else {
        return Ok(created);
    };
    let access = if metadata.is_dir() {
        access
    } else {
        access & AccessFs::from_file(abi)
    };
    created
        .add_rule(PathBeneath::new(fd, access))
        .map_err(|error| format!("landlock rule for `{}`: {error}", path.display()))
}

/// Syscalls no skill needs and a sandbox escape might.
const DENIED_SYSCALLS: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    // The new mount API: inside a fresh user namespace it would reach many file systems' code.
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    // File handles bypass path checks (the "shocker" escape needs them).
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_chroot,
    // The kernel log: any user may read it where `kernel.dmesg_restrict` is 0.
    libc::SYS_syslog,
];

/// `clone` flags that create namespaces: refused, so a sandboxed program cannot make itself a
/// user namespace (and the capabilities inside it) with plain `clone`.
const NAMESPACE_CLONE_FLAGS: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

fn seccomp_program(network: bool) -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = DENIED_SYSCALLS
        .iter()
        .map(|syscall| (*syscall, Vec::new()))
        .collect();
    if !network {
        let not_unix = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .map_err(|error| format!("seccomp: {error}"))?;
        let rule = SeccompRule::new(vec![not_unix]).map_err(|error| format!("seccomp: {error}"))?;
        rules.insert(libc::SYS_socket, vec![rule]);
    }
    // The parent-death signal is what takes the program down with the helper (see `Lifeline`).
    let keeps_parent_death_signal = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        libc::PR_SET_PDEATHSIG as u64,
    )
    .map_err(|error| format!("seccomp: {error}"))?;
    rules.insert(
        libc::SYS_prctl,
        vec![
            SeccompRule::new(vec![keeps_parent_death_signal])
                .map_err(|error| format!("seccomp: {error}"))?,
        ],
    );
    let namespace_rules = NAMESPACE_CLONE_FLAGS
        .iter()
        .map(|flag| {
            let condition = SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(*flag),
                *flag,
            )
            .map_err(|error| format!("seccomp: {error}"))?;
            SeccompRule::new(vec![condition]).map_err(|error| format!("seccomp: {error}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    rules.insert(libc::SYS_clone, namespace_rules);
    filter_program(rules, libc::EPERM)
}

/// System calls from Linux 5.1 on have one number on every architecture; the `libc` crate does
/// not name these yet (or not on every architecture).
const SYS_FCHMODAT2: i64 = 452;
/// See [`SYS_FCHMODAT2`].
const SYS_SETXATTRAT: i64 = 463;
/// See [`SYS_FCHMODAT2`].
const SYS_REMOVEXATTRAT: i64 = 466;
/// See [`SYS_FCHMODAT2`].
const SYS_FILE_SETATTR: i64 = 469;

/// System calls that change a file's mode, owner, times or extended attributes, by path or by
/// descriptor. Landlock has no access right for any of them, and seccomp cannot see which file a
/// call names, so a run that sees host paths gets [`metadata_program`].
const METADATA_SYSCALLS: &[i64] = &[
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    SYS_FCHMODAT2,
    libc::SYS_fchown,
    libc::SYS_fchownat,
    libc::SYS_utimensat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    SYS_SETXATTRAT,
    SYS_REMOVEXATTRAT,
    SYS_FILE_SETATTR,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_chmod,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_chown,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_lchown,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_utime,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_utimes,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_futimesat,
];

/// `ioctl` requests that set a file's attribute flags (`chattr`) or its `fsxattr` (the same
/// numbers on x86_64 and aarch64): `FS_IOC_SETFLAGS` (`_IOW('f', 2, long)`), `FS_IOC32_SETFLAGS`
/// (`_IOW('f', 2, int)`) and `FS_IOC_FSSETXATTR` (`_IOW('X', 32, struct fsxattr)`, 28 bytes).
const METADATA_IOCTLS: &[u64] = &[0x4008_6602, 0x4004_6602, 0x401c_5820];

/// Where a run sees host paths (no minimal root), the files it may read include some its uid
/// owns (its skill folder, an archive's shared copy, an interpreter under the user's home) and,
/// on a host where the runtime is not root, every file of that user. Every call that would
/// change their metadata instead succeeds without doing anything: `EPERM` would break ordinary
/// programs that set the mode of what they copy (Python's `shutil.copy`, `cp -p`, `tar`), and
/// the only cost is that such changes do nothing in the workspace either.
fn metadata_program() -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = METADATA_SYSCALLS
        .iter()
        .map(|syscall| (*syscall, Vec::new()))
        .collect();
    let ioctl_rules = METADATA_IOCTLS
        .iter()
        .map(|request| {
            let condition =
                SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, *request)
                    .map_err(|error| format!("seccomp: {error}"))?;
            SeccompRule::new(vec![condition]).map_err(|error| format!("seccomp: {error}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    rules.insert(libc::SYS_ioctl, ioctl_rules);
    filter_program(rules, SUCCEED_WITHOUT_EFFECT)
}

/// An "error number" of 0: the system call is skipped and returns 0.
const SUCCEED_WITHOUT_EFFECT: i32 = 0;

/// `clone3` passes its flags in memory, where seccomp cannot look: it fails with `ENOSYS`, so
/// C libraries fall back to `clone`, whose flags the main filter checks.
fn clone3_program() -> Result<BpfProgram, String> {
    filter_program(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
    )
}

fn filter_program(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
) -> Result<BpfProgram, String> {
    let arch = if cfg!(target_arch = "aarch64") {
        TargetArch::aarch64
    } else {
        TargetArch::x86_64
    };
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(u32::try_from(errno).unwrap_or(1)),
        arch,
    )
    .map_err(|error| format!("seccomp: {error}"))?;
    BpfProgram::try_from(filter).map_err(|error| format!("seccomp: {error}"))
}

/// The x32 ABI's system calls are x86_64's numbers with this bit set, under the same audit
/// arch: a filter that knows only x86_64's numbers lets them through on kernels built with x32.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Refuse every x32 system call with `EPERM` (nothing skillbox runs is an x32 program). Written
/// by hand: seccompiler matches exact numbers only.
fn x32_program() -> BpfProgram {
    use seccompiler::sock_filter;
    let instruction = |code: u32, jump_if_true: u8, jump_if_false: u8, value: u32| sock_filter {
        code: u16::try_from(code).unwrap_or_default(),
        jt: jump_if_true,
        jf: jump_if_false,
        k: value,
    };
    // `seccomp_data.nr` is the first field.
    let syscall_number_offset = 0;
    vec![
        instruction(
            libc::BPF_LD | libc::BPF_W | libc::BPF_ABS,
            0,
            0,
            syscall_number_offset,
        ),
        instruction(
            libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K,
            0,
            1,
            X32_SYSCALL_BIT,
        ),
        instruction(
            libc::BPF_RET | libc::BPF_K,
            0,
            0,
            libc::SECCOMP_RET_ERRNO | u32::try_from(libc::EPERM).unwrap_or(1),
        ),
        instruction(libc::BPF_RET | libc::BPF_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
}

/// The filters for a run; `host_tree` when it sees host paths (no minimal root), whose metadata
/// it must not change.
fn apply_seccomp(network: bool, host_tree: bool) -> Result<(), String> {
    let program = seccomp_program(network)?;
    seccompiler::apply_filter(&program).map_err(|error| format!("seccomp: {error}"))?;
    if host_tree {
        let metadata = metadata_program()?;
        seccompiler::apply_filter(&metadata).map_err(|error| format!("seccomp: {error}"))?;
    }
    let clone3 = clone3_program()?;
    seccompiler::apply_filter(&clone3).map_err(|error| format!("seccomp: {error}"))?;
    if cfg!(target_arch = "x86_64") {
        seccompiler::apply_filter(&x32_program()).map_err(|error| format!("seccomp: {error}"))?;
    }
    Ok(())
}

/// Find what the host supports by trying each layer in a throw-away child process.
fn probe() -> HostSupport {
    let running_as_root = nix::unistd::geteuid().is_root();
    let mut notes = Vec::new();
    let mut check = |name: &str, test: fn() -> i32| -> Option<i32> {
        let outcome = in_child(test);
        if outcome.is_none() {
            notes.push(format!("{name}: not available on this host"));
        }
        outcome
    };
    let namespaces = check("namespaces", || {
        let flags = CloneFlags::CLONE_NEWPID
            | CloneFlags::CLONE_NEWNS
            | CloneFlags::CLONE_NEWIPC
            | CloneFlags::CLONE_NEWUTS
            | CloneFlags::CLONE_NEWNET;
        i32::from(nix::sched::unshare(flags).is_err())
    })
    .is_some();
    let uid_drop = running_as_root
        && check("uid drop", || {
            i32::from(drop_privileges(super::SANDBOX_UID, super::SANDBOX_GID).is_err())
        })
        .is_some();
    let landlock_abi = check("landlock", || {
        let Ok(ruleset) = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(LANDLOCK_ABI))
            .and_then(|ruleset| ruleset.create())
        else {
            return 1;
        };
        match ruleset.restrict_self() {
            Ok(status) => match status.landlock {
                LandlockStatus::Available {
                    effective_abi,
                    kernel_abi,
                } => {
                    // Exit codes carry the ABI version (offset to keep 0 and 1 for errors).
                    10 + kernel_abi.unwrap_or(effective_abi as i32)
                }
                _ => 1,
            },
            Err(_) => 1,
        }
    })
    .map(|code| code - 10);
    let seccomp = check("seccomp", || {
        if nix::sys::prctl::set_no_new_privs().is_err() {
            return 1;
        }
        i32::from(apply_seccomp(false, true).is_err())
    })
    .is_some();
    let cgroups =
        running_as_root && check("cgroups", || i32::from(!super::cgroups::available())).is_some();
    HostSupport {
        running_as_root,
        uid_drop,
        namespaces,
        landlock_abi,
        seccomp,
        cgroups,
        notes,
    }
}

/// Run `test` in a forked child; `Some(code)` when it exited with 0 or a code of 10 or more.
fn in_child(test: fn() -> i32) -> Option<i32> {
    // SAFETY: the helper is single-threaded when probing, so the child may run arbitrary code.
    match unsafe { nix::unistd::fork() } {
        Ok(ForkResult::Child) => std::process::exit(test()),
        Ok(ForkResult::Parent { child }) => match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) if code == 0 || code >= 10 => Some(code),
            _ => None,
        },
        Err(_) => None,
    }
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

    #[test]
    fn plan_paths_stay_under_the_new_root() {
        let root = Path::new("/run/skillbox/root");
        assert_eq!(
            under_root(root, Path::new("/blobs/0123")).unwrap(),
            root.join("blobs/0123")
        );
        for bad in ["/", "/skills/../../etc", "/../x", "blobs/x", ""] {
            assert!(under_root(root, Path::new(bad)).is_err(), "{bad:?}");
        }
    }
}
