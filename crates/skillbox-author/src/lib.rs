//! skillbox-author: the author's side of skills. [`scaffold::new_skill`] writes a skill
//! skeleton that validates as written and whose example runs (`skillbox new`);
//! [`pack::pack_skill`] validates a skill folder and writes it as a reproducible `.skill`
//! archive (`skillbox pack`); [`publish::publish_index`] publishes a folder of skills as a
//! `.well-known/agent-skills/` discovery index with its artifacts (`skillbox pack --index`),
//! which `skillbox add https://site` installs.
//!
//! Skills are checked with the catalog's own validation, folders are read without following
//! links, and outputs are built beside their place and renamed into it, so a failure leaves
//! nothing half-written.

pub mod error;
pub mod files;
pub mod pack;
mod placement;
pub mod publish;
pub mod scaffold;
pub mod validation;

pub use error::AuthorError;
pub use files::PackLimits;
pub use pack::{PackOptions, PackReport, pack_skill};
pub use publish::{IndexReport, publish_index};
pub use scaffold::{NewSkill, NewSkillRequest, ScriptLanguage, SkeletonFormat, new_skill};
