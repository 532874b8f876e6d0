//! Integration tests of the catalog through the crate's public API: archives, hostile catalogs,
//! the naming corner cases of skill folders, special files inside skills, and skill folders swapped
//! after loading.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::result_large_err,
    missing_docs
)]

mod archives;
mod folder_swaps;
mod frontmatter_properties;
mod hostile_catalogs;
mod reload;
mod search;
mod search_attacks;
mod skill_folders;
mod special_files;

use std::path::Path;

use skillbox_core::{CatalogLimits, CatalogOptions, SkillCatalog, SkillRoot};

/// Write `text` at `path`, creating the folders above it.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A `SKILL.md` of `name` whose body is `Body of {description}`.
pub fn skill_md(name: &str, description: &str) -> String {
    versioned_skill_md(name, None, description)
}

/// A `SKILL.md` of `name` with a description that says nothing.
pub fn plain_skill_md(name: &str) -> String {
    skill_md(name, "A skill for tests.")
}

/// As [`skill_md`], with a `version` in the frontmatter when given.
pub fn versioned_skill_md(name: &str, version: Option<&str>, description: &str) -> String {
    let version = version
        .map(|v| format!("version: {v}\n"))
        .unwrap_or_default();
    format!("---\nname: {name}\ndescription: {description}\n{version}---\nBody of {description}\n")
}

/// Load these roots, each as an explicit root, with the default limits.
pub fn load(roots: &[&Path]) -> SkillCatalog {
    load_with(roots, CatalogLimits::default())
}

/// Load these roots, each as an explicit root, with `limits`.
pub fn load_with(roots: &[&Path], limits: CatalogLimits) -> SkillCatalog {
    SkillCatalog::load(&CatalogOptions {
        roots: roots
            .iter()
            .map(|root| SkillRoot::explicit(*root))
            .collect(),
        limits,
        ..CatalogOptions::default()
    })
    .unwrap()
}
