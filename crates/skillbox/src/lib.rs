//! skillbox as a library: seed 002's `createSkillsProvider` for Rust programs, and the one
//! API the command line's `call` and the Python and Node bindings use. Open folders of skills
//! with [`Options`], then read the system-prompt section ([`Provider::system_prompt`]) and the
//! tool definitions in any provider's format ([`Provider::tools`]), and answer each tool call
//! a model makes ([`Provider::call`], or [`Provider::call_blocking`] without an async
//! runtime). Calls go through the door policy every door takes (approval, the run queue,
//! trust, the sandbox, the audit log): a call from here is answered exactly as one from MCP or
//! the agent. A [`Session`] follows one conversation's active skill and skill servers.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let skills_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills");
//! use serde_json::json;
//! use skillbox::{Options, Provider, SandboxMode, ToolFormat};
//!
//! let skills = Provider::open(
//!     Options::new([skills_dir])
//!         .exclude(["api-design-review"])
//!         .timeout(std::time::Duration::from_secs(10))
//!         .max_output_bytes(20 * 1024)
//!         // Doc tests have no sandbox helper beside them; a program has `skillbox-sandbox`.
//!         .sandbox(SandboxMode::Off),
//! )?;
//! let system = format!("You are a helpful assistant.\n\n{}", skills.system_prompt());
//! let tools = skills.tools(ToolFormat::OpenAi);
//! assert!(!skills.skill_names().contains(&"api-design-review".to_owned()));
//! # let _ = (system, tools);
//!
//! let session = skills.session(false);
//! let loaded = session.call_blocking("load_skill", &json!({"skill": "text-tools"}));
//! assert!(!loaded.is_error());
//! assert_eq!(session.active_skill().as_deref(), Some("text-tools"));
//! # Ok(()) }
//! ```

mod error;
mod options;
mod provider;
mod session;
mod shared_runtime;

pub use error::OpenError;
pub use options::{
    DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_MS, Options, ToolOffer, TrustRule, parse_sandbox_mode,
};
pub use provider::Provider;
pub use session::Session;
pub use shared_runtime::{SHARED_RUNTIME_WORKERS, shared_runtime};
pub use skillbox_exec::SandboxMode;
pub use skillbox_tools::{
    Approval, ApprovalDecision, ApprovalRequest, Arguments, CallStatus, Door, FindSkillsOffer,
    PromptFormat, ToolFormat, ToolOutcome,
};
