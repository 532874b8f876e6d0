//! skillbox-tools: what a model sees of skills. A [`SkillsProvider`] renders the system-prompt
//! section ([`PromptFormat`]) and the tool definitions ([`ToolFormat`], [`ToolProfile`]) from one
//! source per schema, and answers every tool call through `handle_tool_call`.

pub mod builtin_skills;
pub mod builtin_tools;
pub mod live;
pub mod preprocess;
pub mod prompt;
pub mod provider;
pub mod session;
pub mod substitution;
pub mod tool_spec;

pub use live::{CatalogChange, LiveProvider, ReloadCounts, RootWatcher, watch_roots};
pub use prompt::{
    OmittedSkillsHint, PromptBudget, PromptFormat, render_prompt, render_prompt_hinting,
};
pub use provider::{
    FindSkillsOffer, ProtocolCallError, ProviderError, ProviderOptions, SkillLookupMiss,
    SkillsProvider, ToolOutcome, ToolProfile,
};
pub use session::Session;
pub use tool_spec::{ToolFormat, ToolSpec, render_tools};
