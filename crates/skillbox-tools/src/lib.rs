//! skillbox-tools: the tool surface, what models and clients see of skills. The registry
//! (`registry/`, one type per built-in tool under `tools/`) declares each tool's facts and
//! derives its schema from its typed parameters; the door policy (`door.rs`) is the one entry
//! every door calls with a tool call; a [`SkillsProvider`] is one catalog snapshot as models see
//! it, and renders the system-prompt section ([`PromptFormat`]) and the tool definitions in
//! every provider's shape ([`ToolFormat`]).

pub mod approval;
pub mod builtin_skills;
pub mod door;
pub mod effect;
pub mod live;
pub mod outcome;
pub mod preprocess;
pub mod prompt;
pub mod provider;
pub mod registry;
pub mod result_schema;
pub mod servers;
pub mod session;
pub mod substitution;
pub mod tool_spec;
pub mod tools;

pub use approval::{Approval, ApprovalDecision, ApprovalMode, ApprovalPolicy, ApprovalRequest};
pub use door::{CallContext, Door, DoorNotice, DoorNotices, DoorPolicy, call_once};
pub use effect::{CallIntent, LoadedSkill, ToolEffect};
pub use live::{CatalogChange, LiveProvider, ReloadCounts, RootWatcher, watch_roots};
pub use outcome::{CallStatus, Content, Rendered, ToolOutcome};
pub use prompt::{
    OmittedSkillsHint, PromptBudget, PromptFormat, render_prompt, render_prompt_hinting,
};
pub use provider::{
    FindSkillsOffer, ProviderError, ProviderOptions, SkillLookupMiss, SkillsProvider,
};
pub use registry::{Offer, Tool, ToolProfile, ToolRef};
pub use servers::{ServerHolds, ServerPool, ServerPoolConfig};
pub use session::SkillSession;
pub use skillbox_services::params::{self, Arguments};
pub use skillbox_services::tls::install_crypto_provider;
pub use skillbox_services::{ReadBudget, Unbudgeted};
pub use tool_spec::{ToolFormat, ToolSpec, render_tools};
