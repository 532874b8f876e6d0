//! The seccomp filters a run gets: denied system calls, namespace-creating `clone` flags, and
//! (on host paths) metadata changes that succeed without effect.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

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
pub(super) fn apply_seccomp(network: bool, host_tree: bool) -> Result<(), String> {
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
