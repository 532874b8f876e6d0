//! One module per command.

pub mod agent;
pub mod execute;
pub mod find;
pub mod list;
pub mod mcp;
pub mod show;
pub mod surface;
pub mod trust;
pub mod validate;

use std::path::PathBuf;

use anyhow::Context;
use skillbox_core::trust::TrustError;
use skillbox_core::{
    CatalogOptions, SkillCatalog, SkillRoot, TrustGate, TrustStore, ValidationMode,
};

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

/// The trust gate over a catalog's roots: project-level default roots run code only once
/// trusted in the user's trust file (`skillbox trust`).
pub fn trust_gate(roots: &[SkillRoot]) -> TrustGate {
    TrustGate::for_roots(roots, TrustStore::default_path().ok())
}

/// How `show` marks one skill's trust: as [`trust_mark_with`], reading the trust file only when
/// the skill's root needs trust.
pub fn trust_mark(gate: &TrustGate, skill: &skillbox_core::Skill) -> Option<TrustMark> {
    if !gate.is_gated(skill) {
        return None;
    }
    trust_mark_with(gate, &gate.read_store(), skill)
}

/// How a listing marks a skill's trust, against the trust file read once for the listing
/// ([`TrustGate::read_store`]): nothing for skills whose root needs none, else the verdict's
/// label and, when untrusted, the command that trusts the root.
pub fn trust_mark_with(
    gate: &TrustGate,
    store: &Result<Option<TrustStore>, TrustError>,
    skill: &skillbox_core::Skill,
) -> Option<TrustMark> {
    if !gate.is_gated(skill) {
        return None;
    }
    let verdict = gate.verdict_with(store, skill);
    Some(TrustMark {
        label: verdict.label(),
        command: match verdict {
            skillbox_core::TrustVerdict::Trusted => None,
            skillbox_core::TrustVerdict::Untrusted(untrusted) => Some(untrusted.trust_command()),
        },
    })
}

/// A skill's trust as `list` and `show` print it.
#[derive(Debug, Clone)]
pub struct TrustMark {
    /// `trusted`, `untrusted`, `changed`, `new` or `unverifiable`.
    pub label: &'static str,
    /// The command that trusts the skill's root, when it is not trusted.
    pub command: Option<String>,
}
