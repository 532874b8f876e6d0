//! Skills that bring their tools (`docs/design/skill-servers.md`): the MCP servers a skill
//! declares, started when the skill is loaded and stopped when nothing holds them any more.
//!
//! - [`ServerPool`]: one per process, in the [`crate::DoorPolicy`] every door shares. It keeps
//!   a weak reference to each running server by [`ServerKey`], so two conversations loading
//!   one skill share its server, and a server no holder keeps is gone.
//! - [`ServerHolds`]: what one conversation (an agent's, an MCP session's) holds: the servers
//!   its `load_skill` calls started, and the ones the user approved. Dropped (the conversation
//!   ended, the session closed), its servers stop unless another holder keeps them.
//! - [`SkillServer`]: one server: its MCP client connection (rmcp, over the sandboxed child's
//!   pipes or streamable HTTP), its tools as offered (`server__tool`), restarted on the next
//!   call after a crash or an idle stop.
//!
//! A server tool's call goes through the door policy like every tool's: the approval hook,
//! the run queue, the log and the metrics.

mod connection;
mod holds;
mod pool;
mod tools;

pub use holds::ServerHolds;
pub use pool::{ServerPool, ServerPoolConfig, ServerReport, ServerStatus, render_reports};
pub use tools::ServerTool;

pub use pool::SkillServer;
pub(crate) use tools::prepare_call;

use std::time::Duration;

/// Longest a server may take to start: `initialize` and `tools/list` answered.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest one tool call may take.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// A server no call used for this long is stopped (it starts again on the next call).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// Largest single message read from a server: a larger one ends its connection.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// Characters of a tool call's result given to the model at most; the rest is cut with a note.
pub const MAX_RESULT_CHARS: usize = 256 * 1024;
/// Servers started as processes one skillbox process runs at once at most, whoever holds them:
/// each is a sandboxed process with a uid leased from the pool every run shares, and a client
/// loading skill after skill must not take them all.
pub const DEFAULT_MAX_RUNNING_SERVERS: usize = 64;
/// Servers one load starts at most (the loaded skill's and those of the skills it requires).
pub const MAX_SERVERS_PER_LOAD: usize = 32;
/// Tools of one server offered at most.
pub const MAX_TOOLS_PER_SERVER: usize = 128;
/// Pages of `tools/list` read at most.
pub const MAX_TOOL_PAGES: usize = 16;
/// Bytes of one tool's input schema (as JSON) at most; a larger tool is left out.
pub const MAX_SCHEMA_BYTES: usize = 32 * 1024;
/// Bytes of the definitions (schemas, descriptions, names) of one server's tools offered at
/// most, as a skill's own `tools.json` is bounded; the tools past it are left out.
pub const MAX_TOOL_DEFINITION_BYTES: usize = 1024 * 1024;
/// Characters of one tool's description kept.
pub const MAX_DESCRIPTION_CHARS: usize = 2048;
/// What separates a server's name from its tool's in the names offered.
pub const NAME_SEPARATOR: &str = "__";
