//! What the registry knows of each tool, declared once: the profiles it belongs to, whether a
//! call runs code or reads files, how much of a request's parameters `/rpc` reads, and what an
//! MCP client is told of its effects.

use std::collections::BTreeSet;

/// Which tools to offer a model or client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolProfile {
    /// `load_skill`, `use_skill`, `read_skill_file`, `find_skills` (when offered), one tool per
    /// `tools.json` entry, and `define_tool`/`remove_tool` when enabled.
    Skills,
    /// The 8 Skills Protocol tools.
    Protocol,
}

impl ToolProfile {
    /// Parse a profile name as used on the command line.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "skills" => Some(ToolProfile::Skills),
            "protocol" => Some(ToolProfile::Protocol),
            _ => None,
        }
    }
}

/// Which tools one caller may call.
#[derive(Debug, Clone, Copy)]
pub enum Offer<'a> {
    /// The tools a profile lists for models (MCP, the agent's skills).
    Profile(ToolProfile),
    /// The Skills Protocol's tools and this server's extensions to it (`/rpc`).
    Rpc,
    /// Every tool this provider answers, of either profile (`skillbox call`, the playground).
    Everything,
    /// These tools of the skills profile only, by name (one agent round's offer).
    Named(&'a BTreeSet<String>),
}

/// Whether a call of a tool runs code (a script, a handler, a protocol run, commands).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsCode {
    /// Never.
    Never,
    /// Always.
    Always,
    /// When the provider runs `` !`command` `` lines of skill bodies (`load_skill`).
    WhenCommandsRun,
}

/// Whether a call reads files (on the blocking pool, under a time budget).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadsFiles {
    /// It answers from memory.
    Never,
    /// Always.
    Always,
    /// Depending on its parameters (`describe_skill` with `detail: "full"`).
    PerCall,
}

/// How much of a JSON-RPC request's `params` `/rpc` reads for a tool before refusing them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamsSize {
    /// Names and numbers: 64 KiB.
    Small,
    /// Code and arguments for a run: 8 MiB.
    Run,
    /// Content read straight from the request body, never built into a tree (`create_blob`).
    Body,
}

/// What an MCP client is told about a tool's effects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    /// It changes nothing.
    pub read_only: bool,
    /// It may destroy something (no tool does: runs are sandboxed, blobs only added).
    pub destructive: bool,
    /// Calling it twice with the same arguments does no more than once.
    pub idempotent: bool,
    /// It reaches the world outside the catalog (no tool does: runs have no network).
    pub open_world: bool,
}

impl Annotations {
    /// A tool that only reads.
    pub const READ_ONLY: Annotations = Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    /// A tool that runs code or stores something.
    pub const ACTS: Annotations = Annotations {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };
}

/// The profiles a built-in tool belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profiles {
    /// The skills profile.
    pub skills: bool,
    /// The Skills Protocol profile.
    pub protocol: bool,
    /// Answered by `/rpc` as this server's extension to the protocol.
    pub rpc_extension: bool,
}

impl Profiles {
    /// The skills profile only.
    pub const SKILLS: Profiles = Profiles {
        skills: true,
        protocol: false,
        rpc_extension: false,
    };
    /// The Skills Protocol profile only.
    pub const PROTOCOL: Profiles = Profiles {
        skills: false,
        protocol: true,
        rpc_extension: false,
    };
}

/// The facts of a tool, declared once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolFacts {
    /// Where it is offered.
    pub profiles: Profiles,
    /// Whether a call may run code: it then waits for a place in the run queue, and asks the
    /// approval hook first.
    pub runs_code: RunsCode,
    /// Whether a call reads files: it then runs on the blocking pool.
    pub reads_files: ReadsFiles,
    /// It changes what the runtime offers (`define_tool`): the approval hook is asked first.
    pub mutating: bool,
    /// Its calls load a skill's instructions (their effect is [`ToolEffect::LoadsSkill`](crate::effect::ToolEffect::LoadsSkill) when
    /// they name one): never held back by the active skill's `allowed-tools`, so a model can
    /// always switch skills.
    pub loads_skills: bool,
    /// It needs the run and blob services (a data folder).
    pub needs_services: bool,
    /// How large its `/rpc` params may be.
    pub params_size: ParamsSize,
    /// What MCP clients are told.
    pub annotations: Annotations,
}
