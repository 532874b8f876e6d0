//! The layers an execution gets ([`SandboxLayers`]), given the policy and what the host
//! supports, and the [`SandboxLevel`] they amount to, as results, audit lines and `doctor`
//! report it.

use serde::{Deserialize, Serialize};

use super::host_probe::HostSupport;

/// Which layers an execution gets, given the policy and the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxLayers {
    /// PID/network/mount/IPC/UTS namespaces.
    pub namespaces: bool,
    /// Drop to the sandbox uid (only when the runtime is root).
    pub uid_drop: bool,
    /// Landlock filesystem (and TCP) rules.
    pub landlock: bool,
    /// seccomp syscall filter.
    pub seccomp: bool,
    /// A control group per run (not part of the level: many hosts do not delegate one).
    #[serde(default)]
    pub cgroups: bool,
}

/// The level an execution ran at, for results, audit lines and `doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxLevel {
    /// Clean environment, limits and process-tree cleanup only.
    None,
    /// Some layers missing.
    Partial,
    /// Every layer.
    Full,
}

impl SandboxLevel {
    /// The level's name, as results, audit lines and the configuration spell it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxLevel::None => "none",
            SandboxLevel::Partial => "partial",
            SandboxLevel::Full => "full",
        }
    }
}

impl SandboxLayers {
    /// Every layer the host supports (the uid drop only matters when running as root).
    #[must_use]
    pub fn available(support: &HostSupport) -> Self {
        SandboxLayers {
            namespaces: support.namespaces,
            uid_drop: support.running_as_root && support.uid_drop,
            landlock: support.landlock_abi.is_some(),
            seccomp: support.seccomp,
            cgroups: support.cgroups,
        }
    }

    /// No layers.
    #[must_use]
    pub fn none() -> Self {
        SandboxLayers {
            namespaces: false,
            uid_drop: false,
            landlock: false,
            seccomp: false,
            cgroups: false,
        }
    }

    /// The level these layers amount to on a host.
    #[must_use]
    pub fn level(&self, support: &HostSupport) -> SandboxLevel {
        let uid_ok = self.uid_drop || !support.running_as_root;
        match (self.namespaces, uid_ok, self.landlock, self.seccomp) {
            (true, true, true, true) => SandboxLevel::Full,
            (false, false, false, false) => SandboxLevel::None,
            _ => SandboxLevel::Partial,
        }
    }

    /// Names of the missing layers, for warnings.
    #[must_use]
    pub fn missing(&self, support: &HostSupport) -> Vec<&'static str> {
        let mut missing = Vec::new();
        if !self.namespaces {
            missing.push("namespaces");
        }
        if support.running_as_root && !self.uid_drop {
            missing.push("uid drop");
        }
        if !self.landlock {
            missing.push("landlock");
        }
        if !self.seccomp {
            missing.push("seccomp");
        }
        missing
    }
}
