//! One module per command.

pub mod execute;
pub mod list;
pub mod show;
pub mod surface;
pub mod validate;

use std::path::PathBuf;

use anyhow::Context;
use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot, ValidationMode};

use crate::arguments::GlobalOptions;

/// The roots a command uses: `--root` and positional roots when given, else `SKILLBOX_ROOTS`,
/// else the defaults under the working directory and home.
pub fn roots(global: &GlobalOptions, positional: &[PathBuf]) -> anyhow::Result<Vec<SkillRoot>> {
    let named: Vec<SkillRoot> = global
        .roots
        .iter()
        .chain(positional)
        .map(SkillRoot::explicit)
        .collect();
    if !named.is_empty() {
        return Ok(named);
    }
    let working_directory = std::env::current_dir().context("cannot read the working directory")?;
    Ok(SkillRoot::from_environment_or_defaults(&working_directory))
}

/// Load the catalog for a command.
pub fn load_catalog(
    roots: Vec<SkillRoot>,
    include: &[String],
    exclude: &[String],
    mode: ValidationMode,
) -> anyhow::Result<SkillCatalog> {
    let options = CatalogOptions {
        roots,
        include: include.to_vec(),
        exclude: exclude.to_vec(),
        mode,
        ..CatalogOptions::default()
    };
    let catalog = SkillCatalog::load(&options)?;
    tracing::info!(
        skills = catalog.len(),
        roots = options.roots.len(),
        "catalog loaded"
    );
    Ok(catalog)
}

/// The catalog of the global roots (`--root`, `SKILLBOX_ROOTS` or the defaults), read leniently:
/// what `show`, `run` and `call` look skills up in.
pub fn default_catalog(global: &GlobalOptions) -> anyhow::Result<SkillCatalog> {
    load_catalog(roots(global, &[])?, &[], &[], ValidationMode::Lenient)
}
