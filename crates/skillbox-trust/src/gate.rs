//! The trust gate: what the executor asks before running a skill's code, and what `list` and
//! `show` ask to mark skills. Roots the user named are trusted; a project root is trusted
//! only as the trust file records it; an installed skill only as the files its lock records.

use std::path::{Path, PathBuf};

use skillbox_core::Skill;
use skillbox_core::catalog::{RootOrigin, SkillRoot};

use crate::digest::{self, skill_digest};
use crate::error::TrustError;
use crate::trust_file::{InstalledSkill, TrustPolicy, TrustStore, skill_key};
use crate::verdict::{TrustVerdict, Untrusted, UntrustedReason};

/// What running a skill's code needs ([`TrustGate::requirement`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustRequirement {
    /// It may run as its files are (its root is not gated, or trusted with `follow`).
    AsItIs,
    /// It may run only as the files the user trusted (policy `pin`).
    Pinned(PinnedSkill),
    /// It may not run.
    Refused(Untrusted),
}

/// A skill whose root was trusted with `pin`: its files must have this digest to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedSkill {
    /// The digest recorded when the root was trusted (`sha256:<hex>`).
    pub digest: String,
    /// The skill (`name` or `name@version`).
    pub skill: String,
    /// The root's canonical path.
    pub root: PathBuf,
    /// For an installed skill, the lock that records its files (see [`InstalledSkill`]).
    pub installed_lock: Option<PathBuf>,
}

impl PinnedSkill {
    /// The refusal of this skill because its files are not the trusted ones: for an installed
    /// skill, naming the files that differ from its lock.
    #[must_use]
    pub fn changed(&self, skill: &Skill) -> Untrusted {
        let Some(lock) = &self.installed_lock else {
            return self.refusal(UntrustedReason::Changed);
        };
        let changes = installed_changes(skill, lock);
        self.refusal(UntrustedReason::InstalledChanged {
            folder: skill.directory.clone(),
            lock: lock.clone(),
            changes,
        })
    }

    /// The refusal of this skill for `reason` (its files changed, or cannot be read).
    #[must_use]
    pub fn refusal(&self, reason: UntrustedReason) -> Untrusted {
        Untrusted {
            skill: self.skill.clone(),
            root: self.root.clone(),
            reason,
        }
    }

    /// Check that the skill's files, digested now, are the ones trusted; the refusal when
    /// they changed or cannot be read.
    ///
    /// # Errors
    /// [`UntrustedReason::Changed`] or [`UntrustedReason::Unverifiable`] in the refusal.
    pub fn verify(&self, skill: &Skill) -> Result<(), Untrusted> {
        match skill_digest(skill) {
            Ok(digest) if digest == self.digest => Ok(()),
            Ok(_) => Err(self.changed(skill)),
            Err(error) => Err(self.refusal(UntrustedReason::Unverifiable(error.to_string()))),
        }
    }
}

/// What the executor asks before running a skill's code. The default gate trusts everything
/// (library users, explicit roots); [`TrustGate::for_roots`] makes one that holds back the
/// project-level roots until the user trusts them. The trust file is read at each
/// [`TrustGate::verdict`], so `skillbox trust` and `untrust` take effect in a running server
/// too; a listing reads it once ([`TrustGate::read_store`]) and asks
/// [`TrustGate::verdict_with`] for each skill.
#[derive(Debug, Clone, Default)]
pub struct TrustGate {
    store_path: Option<PathBuf>,
    gated: Vec<GatedRoot>,
    /// Whether skills of every root are checked against the install records (a gate over a
    /// catalog's roots); the default gate trusts everything.
    checks_installs: bool,
}

#[derive(Debug, Clone)]
struct GatedRoot {
    /// As the catalog names it (and so as its skills' `root`).
    path: PathBuf,
    canonical: PathBuf,
}

impl TrustGate {
    /// A gate over a catalog's roots: skills under a project-level default root need trust
    /// recorded in the trust file at `store_path` (none known: never trusted). A root that
    /// resolves to one named earlier is skipped, as the catalog skips it.
    #[must_use]
    pub fn for_roots(roots: &[SkillRoot], store_path: Option<PathBuf>) -> TrustGate {
        let mut seen: Vec<PathBuf> = Vec::new();
        let mut gated = Vec::new();
        for root in roots {
            let Ok(canonical) = fs_err::canonicalize(&root.path) else {
                continue;
            };
            if seen.contains(&canonical) {
                continue;
            }
            seen.push(canonical.clone());
            if root.origin == RootOrigin::Project {
                gated.push(GatedRoot {
                    path: root.path.clone(),
                    canonical,
                });
            }
        }
        TrustGate {
            checks_installs: store_path.is_some(),
            store_path,
            gated,
        }
    }

    /// The trust file this gate reads, when one is known.
    #[must_use]
    pub fn trust_file(&self) -> Option<&std::path::Path> {
        self.store_path.as_deref()
    }

    /// Whether the skill needs checking at all: its root needs trust, or it may be an
    /// installed skill, which runs only as installed whatever its root.
    #[must_use]
    pub fn is_gated(&self, skill: &Skill) -> bool {
        self.checks_installs || self.gated_root(skill).is_some()
    }

    /// Whether the skill's code may run now, reading the trust file afresh. Under `pin` this
    /// digests the skill's files.
    #[must_use]
    pub fn verdict(&self, skill: &Skill) -> TrustVerdict {
        if !self.is_gated(skill) {
            return TrustVerdict::Trusted;
        }
        self.verdict_with(&self.read_store(), skill)
    }

    /// The trust file, read once for judging many skills with [`TrustGate::verdict_with`];
    /// `Ok(None)` when no trust file is known or no root is gated (nothing is read then).
    ///
    /// # Errors
    /// As [`TrustStore::load`]; [`TrustGate::verdict_with`] turns the error into an
    /// `unverifiable` verdict for every gated skill.
    pub fn read_store(&self) -> Result<Option<TrustStore>, TrustError> {
        match &self.store_path {
            Some(store_path) if self.checks_installs || !self.gated.is_empty() => {
                TrustStore::load(store_path).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Whether the skill's code may run, as [`TrustGate::verdict`] answers it, against a trust
    /// file already read with [`TrustGate::read_store`]. Under `pin` this digests the skill's
    /// files.
    #[must_use]
    pub fn verdict_with(
        &self,
        store: &Result<Option<TrustStore>, TrustError>,
        skill: &Skill,
    ) -> TrustVerdict {
        match self.requirement_with(store, skill) {
            TrustRequirement::AsItIs => TrustVerdict::Trusted,
            TrustRequirement::Refused(refusal) => TrustVerdict::Untrusted(refusal),
            TrustRequirement::Pinned(pin) => match pin.verify(skill) {
                Ok(()) => TrustVerdict::Trusted,
                Err(refusal) => TrustVerdict::Untrusted(refusal),
            },
        }
    }

    /// The verdict a listing shows for a skill, against a trust file already read: `None` for
    /// a skill that needs no trust (its root is not gated and it was not installed).
    #[must_use]
    pub fn listed_verdict(
        &self,
        store: &Result<Option<TrustStore>, TrustError>,
        skill: &Skill,
    ) -> Option<TrustVerdict> {
        let installed =
            matches!(store, Ok(Some(store)) if installed_record(store, skill).is_some());
        (installed || self.gated_root(skill).is_some()).then(|| self.verdict_with(store, skill))
    }

    /// What running the skill's code needs, reading the trust file afresh but digesting
    /// nothing: for a runner that checks a pinned skill's files itself, as it copies the files
    /// it will run (see [`crate::store`]), so the files checked are the files run.
    #[must_use]
    pub fn requirement(&self, skill: &Skill) -> TrustRequirement {
        if !self.is_gated(skill) {
            return TrustRequirement::AsItIs;
        }
        self.requirement_with(&self.read_store(), skill)
    }

    /// [`TrustGate::requirement`] against a trust file already read.
    #[must_use]
    pub fn requirement_with(
        &self,
        store: &Result<Option<TrustStore>, TrustError>,
        skill: &Skill,
    ) -> TrustRequirement {
        let gated = self.gated_root(skill);
        if gated.is_none() && !self.checks_installs {
            return TrustRequirement::AsItIs;
        }
        let root = || {
            gated.map_or_else(
                || fs_err::canonicalize(&skill.root).unwrap_or_else(|_| skill.root.clone()),
                |gated| gated.canonical.clone(),
            )
        };
        let untrusted = |reason| {
            TrustRequirement::Refused(Untrusted {
                skill: skill.id.to_string(),
                root: root(),
                reason,
            })
        };
        let store = match store {
            Ok(store) => store.as_ref(),
            Err(error) => return untrusted(UntrustedReason::Unverifiable(error.to_string())),
        };
        if let Some(record) = store.and_then(|store| installed_record(store, skill)) {
            return TrustRequirement::Pinned(PinnedSkill {
                digest: record.digest.clone(),
                skill: skill.id.to_string(),
                root: root(),
                installed_lock: Some(record.lock.clone()),
            });
        }
        let Some(gated) = gated else {
            return TrustRequirement::AsItIs;
        };
        let Some(store) = store else {
            return untrusted(UntrustedReason::NeverTrusted);
        };
        let Some(entry) = store.get(&gated.canonical) else {
            return untrusted(UntrustedReason::NeverTrusted);
        };
        if entry.policy == TrustPolicy::Follow {
            return TrustRequirement::AsItIs;
        }
        match entry.skills.get(&skill_key(skill)) {
            Some(digest) => TrustRequirement::Pinned(PinnedSkill {
                digest: digest.clone(),
                skill: skill.id.to_string(),
                root: gated.canonical.clone(),
                installed_lock: None,
            }),
            None => untrusted(UntrustedReason::AddedSince),
        }
    }

    fn gated_root(&self, skill: &Skill) -> Option<&GatedRoot> {
        self.gated.iter().find(|gated| gated.path == skill.root)
    }
}

/// The install record of a skill's folder, if it is an installed skill (found by its canonical
/// path, so a link to it in another agent's folder is the same skill). Archived skills are
/// never installed folders.
fn installed_record<'store>(
    store: &'store TrustStore,
    skill: &Skill,
) -> Option<&'store InstalledSkill> {
    if store.installed.is_empty()
        || !matches!(
            skill.source,
            skillbox_core::source::SkillSource::Directory(_)
        )
    {
        return None;
    }
    let canonical = fs_err::canonicalize(&skill.directory).ok()?;
    store.installed(&canonical)
}

/// The changes of an installed skill's folder against its lock, as one line; a plain
/// statement when the lock or the folder cannot be read.
fn installed_changes(skill: &Skill, lock: &Path) -> String {
    let name = skill
        .directory
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.as_str();
    let locked = crate::lockfile::SkillLock::load(lock)
        .ok()
        .flatten()
        .and_then(|mut lock| lock.skills.remove(name));
    let found = digest::folder_inventory_at(&skill.directory);
    match (locked, found) {
        (Some(locked), Ok(found)) => crate::lockfile::describe_changes(&locked.changes(&found), 3),
        (None, _) => format!("the lock no longer records `{name}`"),
        (_, Err(error)) => error.to_string(),
    }
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
