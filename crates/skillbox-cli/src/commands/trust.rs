//! `skillbox trust` and `skillbox untrust`: which project skill folders may run code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;
use skillbox_core::catalog::PROJECT_DEFAULT_ROOTS;
use skillbox_core::printable::printable_path;
use skillbox_trust::{TrustEntry, TrustError, TrustedRoot};
use skillbox_trust::{TrustPolicy, TrustStore};

use crate::arguments::{GlobalOptions, TrustArguments, TrustPolicyArgument, UntrustArguments};
use crate::output::{print_json, print_text};

/// One trusted folder as printed with `--json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TrustedRootView<'a> {
    root: &'a Path,
    #[serde(flatten)]
    entry: &'a TrustEntry,
}

/// `skillbox trust`.
pub fn trust(global: &GlobalOptions, arguments: &TrustArguments) -> anyhow::Result<ExitCode> {
    let mut store = TrustStore::load(&TrustStore::default_path()?)?;
    if arguments.list {
        let listed: Vec<(&Path, &TrustEntry)> = store.entries().collect();
        if listed.is_empty() && !arguments.json {
            print_text(
                "no trusted folders; `skillbox trust` trusts the project's skill folders\n",
            )?;
        } else {
            print_roots("ROOT", &listed, arguments.json)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let policy = arguments.trust_policy.map(|policy| match policy {
        TrustPolicyArgument::Pin => TrustPolicy::Pin,
        TrustPolicyArgument::Follow => TrustPolicy::Follow,
    });
    let named: Vec<PathBuf> = global
        .roots
        .iter()
        .chain(&arguments.roots)
        .cloned()
        .collect();
    let mut trusted: Vec<TrustedRoot> = Vec::new();
    if named.is_empty() {
        let working_directory =
            std::env::current_dir().context("cannot read the working directory")?;
        for relative in PROJECT_DEFAULT_ROOTS {
            let root = working_directory.join(relative);
            if !root.exists() {
                continue;
            }
            match store.trust_root(&root, policy) {
                Ok(done) => add_once(&mut trusted, done),
                Err(TrustError::NoSkills { path }) => {
                    eprintln!(
                        "note: `{}` holds no skills; left out",
                        printable_path(&path)
                    );
                }
                Err(error) => return Err(error.into()),
            }
        }
        if trusted.is_empty() {
            anyhow::bail!(
                "no project skill folder with skills under `{}` (looked for {}); name the folder to trust",
                printable_path(&working_directory),
                PROJECT_DEFAULT_ROOTS
                    .iter()
                    .map(|relative| format!("`{relative}/`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    } else {
        for root in &named {
            add_once(&mut trusted, store.trust_root(root, policy)?);
        }
    }
    store.save()?;
    let listed: Vec<(&Path, &TrustEntry)> = trusted
        .iter()
        .map(|done| (done.root.as_path(), &done.entry))
        .collect();
    print_roots("TRUSTED", &listed, arguments.json)?;
    Ok(ExitCode::SUCCESS)
}

/// Keep the first trust of each root (two names can resolve to one folder).
fn add_once(trusted: &mut Vec<TrustedRoot>, done: TrustedRoot) {
    if !trusted.iter().any(|earlier| earlier.root == done.root) {
        trusted.push(done);
    }
}

/// `skillbox untrust`.
pub fn untrust(arguments: &UntrustArguments) -> anyhow::Result<ExitCode> {
    let mut store = TrustStore::load(&TrustStore::default_path()?)?;
    let mut text = String::new();
    for root in &arguments.roots {
        let forgotten = store.untrust_root(root)?;
        text.push_str(&format!("untrusted {}\n", printable_path(&forgotten.root)));
    }
    store.save()?;
    print_text(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Trusted folders as a table (number of skills recorded, policy, root: the path last, so it is
/// never cut) or a JSON array.
fn print_roots(heading: &str, roots: &[(&Path, &TrustEntry)], json: bool) -> anyhow::Result<()> {
    if json {
        let views: Vec<TrustedRootView<'_>> = roots
            .iter()
            .map(|(root, entry)| TrustedRootView { root, entry })
            .collect();
        return print_json(&views);
    }
    let mut text = format!("{:<6}  {:<6}  {heading}\n", "SKILLS", "POLICY");
    for (root, entry) in roots {
        text.push_str(&format!(
            "{:<6}  {:<6}  {}\n",
            entry.skills.len(),
            entry.policy.as_str(),
            printable_path(root)
        ));
    }
    print_text(&text)
}
