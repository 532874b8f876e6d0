//! The Landlock ruleset a run gets: what it may read, write and reach.

use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};

use crate::sandbox::{ROOT_ETC_ENTRIES, SYSTEM_READ_PATHS, SandboxPlan};

/// Landlock ABI the helper asks for; older kernels get the best they support.
pub(super) const LANDLOCK_ABI: ABI = ABI::V6;

pub(super) fn apply_landlock(plan: &SandboxPlan) -> Result<(), String> {
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
