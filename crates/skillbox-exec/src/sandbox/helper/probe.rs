//! `HELPER probe`: what the host supports, each layer tried in a throw-away child process.

use landlock::{Access, AccessFs, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr};
use nix::sched::CloneFlags;
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::ForkResult;

use super::drop_privileges;
use super::landlock::LANDLOCK_ABI;
use super::seccomp::apply_seccomp;
use crate::sandbox::{HostSupport, SANDBOX_GID, SANDBOX_UID, cgroups};

/// Find what the host supports by trying each layer in a throw-away child process.
pub(super) fn probe() -> HostSupport {
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
            i32::from(drop_privileges(SANDBOX_UID, SANDBOX_GID).is_err())
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
        running_as_root && check("cgroups", || i32::from(!cgroups::available())).is_some();
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
