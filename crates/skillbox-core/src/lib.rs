//! skillbox-core: the skill model, parsing, validation and discovery.
//!
//! A skill is a folder with a `SKILL.md` (YAML frontmatter and markdown instructions), optionally
//! a `tools.json` (typed tools with handler scripts, the Skill Tools spec) or a `skill.toml`
//! (the Skills Protocol manifest). [`SkillCatalog::load`] discovers skills under several roots
//! and loads them into one [`Skill`] model with [`Diagnostic`]s for everything that is off.
//! This crate does no I/O beyond reading skill files: no async, no network, no processes, and
//! it writes nothing (trust, digests, the store, the lock and safe writes are `skillbox-trust`).

// Diagnostics are returned by value on the (cold) error path of loaders; boxing them would only
// add noise to every call site.
#![allow(clippy::result_large_err)]

pub mod archive;
pub mod catalog;
pub mod diagnostic;
mod directory_listing;
pub mod discovery;
pub mod error;
pub mod frontmatter;
mod json_locate;
pub mod limits;
pub mod loader;
pub mod names;
pub mod package_server;
pub mod printable;
pub mod properties;
pub mod report;
pub mod search;
pub mod server_variables;
pub mod shell_words;
mod simple_yaml;
pub mod skill;
pub mod skill_servers;
pub mod skill_toml;
pub mod source;
pub mod text;
pub mod tool_names;
pub mod tools_json;
pub mod yaml;

pub use catalog::{
    CatalogOptions, PROTOCOL_GUIDE_SKILL_NAME, RESERVED_SKILL_NAMES, RootOrigin, SkillCatalog,
    SkillRoot, SkippedSkill,
};
pub use diagnostic::{Diagnostic, DiagnosticCode, Severity, TextPosition};
pub use error::CatalogError;
pub use limits::CatalogLimits;
pub use properties::{SkillProperties, ValidationMode};
pub use report::{SkillReport, ValidationReport};
pub use skill::{Skill, SkillBody, SkillFormat, SkillId, SkillResource, SkillSummary};
pub use skill_servers::{ServerDeclaration, ServerTransport};
pub use skill_toml::{SkillKind, SkillManifest};
pub use tools_json::ToolDefinition;
