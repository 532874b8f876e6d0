//! The fields of a `SKILL.md` frontmatter, interpreted: which ones skillbox knows, their types,
//! and the agentskills rules for `name`, `description` and `compatibility`.
//!
//! Every field is also available verbatim (as JSON) from [`SkillProperties::raw`], so front
//! doors such as MCP can pass the frontmatter through unchanged.
//!
//! One concept per file: the field catalog (which fields are known, spec or extension), the
//! [`SkillProperties`] type with its verbatim fields, [`interpret`] (the frontmatter read into
//! that type, with the rules for `description` and `compatibility`), the field reader (one
//! field read as text, flag, words, mapping or entries), and the name rules.

mod field_catalog;
mod field_reader;
mod interpret;
mod name_rules;
mod skill_properties;

pub use field_catalog::{SPEC_FIELDS, is_known_field};
pub use field_reader::split_words;
pub(crate) use interpret::interpret_parsed;
pub use interpret::{
    MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, PropertiesContext, ValidationMode, interpret,
};
pub use name_rules::{MAX_NAME_CHARS, is_environment_name, name_problems, nfkc};
pub use skill_properties::{FileReference, SkillProperties};

#[cfg(test)]
mod tests;
