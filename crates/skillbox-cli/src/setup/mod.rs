//! The composition root: everything a command is built from (roots, catalog, trust gate,
//! executor, tool provider, data folder, model settings) is put together here, the same way for
//! every command. Commands parse nothing and build nothing else; they call these and print.

pub mod executor;
pub mod model;
pub mod provider;

use std::path::PathBuf;

use anyhow::Context;
use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot, ValidationMode};
use skillbox_trust::{TrustGate, TrustStore};

use crate::arguments::GlobalOptions;

/// What every command starts from: the global options and the skill roots it was given.
#[derive(Debug)]
pub struct Setup<'a> {
    /// The options every command takes.
    pub global: &'a GlobalOptions,
    /// The roots: `--root` and the command's positional roots when given, else
    /// `SKILLBOX_ROOTS`, else the defaults under the working directory and home.
    pub roots: Vec<SkillRoot>,
    /// The time limit of the code the command runs (`--timeout-ms`), when not the default.
    pub run_timeout: Option<std::time::Duration>,
}

impl<'a> Setup<'a> {
    /// The setup of a command given `positional` roots (after any `--root`).
    pub fn new(global: &'a GlobalOptions, positional: &[PathBuf]) -> anyhow::Result<Self> {
        let named: Vec<SkillRoot> = global
            .roots
            .iter()
            .chain(positional)
            .map(SkillRoot::explicit)
            .collect();
        let roots = if named.is_empty() {
            let working_directory =
                std::env::current_dir().context("cannot read the working directory")?;
            SkillRoot::from_environment_or_defaults(&working_directory)
        } else {
            named
        };
        Ok(Setup {
            global,
            roots,
            run_timeout: None,
        })
    }

    /// The same setup running code within `timeout` (`--timeout-ms`) when one is given: the
    /// executor's limit for scripts, handlers and commands, and the default of runs whose
    /// arguments set none.
    #[must_use]
    pub fn with_run_timeout(mut self, timeout: Option<std::time::Duration>) -> Self {
        self.run_timeout = timeout;
        self
    }

    /// The catalog of the roots, filtered by name and read in `mode`.
    pub fn catalog_with(
        &self,
        include: &[String],
        exclude: &[String],
        mode: ValidationMode,
    ) -> anyhow::Result<SkillCatalog> {
        let options = CatalogOptions {
            roots: self.roots.clone(),
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
        for warning in executor::contested_grants(&self.global.execution, &catalog) {
            tracing::warn!("{warning}");
        }
        Ok(catalog)
    }

    /// The catalog of the roots, read leniently: what `show`, `find`, `run`, `call` and the
    /// model commands look skills up in.
    pub fn catalog(&self) -> anyhow::Result<SkillCatalog> {
        self.catalog_with(&[], &[], ValidationMode::Lenient)
    }

    /// The options of a catalog that a server door watches and reloads.
    pub fn served_catalog_options(&self) -> CatalogOptions {
        CatalogOptions {
            roots: self.roots.clone(),
            mode: ValidationMode::Lenient,
            ..CatalogOptions::default()
        }
    }
}

/// The trust gate over a catalog's roots: project-level default roots run code only once
/// trusted in the user's trust file (`skillbox trust`).
pub fn trust_gate(roots: &[SkillRoot]) -> TrustGate {
    TrustGate::for_roots(roots, TrustStore::default_path().ok())
}

/// The async runtime of a command that needs one (two worker threads: the machine's work is
/// in the sandboxed processes and the blocking pool, not here).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
