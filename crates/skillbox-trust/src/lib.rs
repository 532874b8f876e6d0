//! skillbox-trust: verification, between the skill model (`skillbox-core`, which only reads)
//! and what runs or installs skills. It holds what decides whether a skill's code may run and
//! proves what is on disk is what was chosen:
//!
//! - [`trust_file`]: the user's `trust.json` (trusted project roots and their policy, the
//!   skill folders installs put in place, the local sources the user confirmed);
//! - [`gate`] and [`verdict`]: what the executor asks before running a skill's code, and the
//!   refusal worded for the person who can change it;
//! - [`digest`]: the tree digest of a skill folder (what trust records and the lock pins);
//! - [`store`]: the content-addressed store of read-only trees, hashed as they are copied;
//! - [`lockfile`]: `skillbox.lock`, what an install put in place down to each file;
//! - [`package_servers`]: what an install records of a skill's npm and PyPI servers;
//! - [`ownership`]: whether a file and the folders above it are the user's alone;
//! - [`safe_write`]: the file written whole and the tree removed without following links,
//!   which every crate that writes uses.
//!
//! Project roots (`skills/`, `.claude/skills/`, … under the working directory) hold whatever a
//! cloned repository ships: their skills are read and listed, but their code runs only once the
//! user trusted the root with `skillbox trust` (`pin`: as the files were then; `follow`: as
//! they are). Roots the user named and the user-level roots are the user's own choice and
//! always trusted. A runner asks [`TrustGate::requirement`], which digests nothing: a pinned
//! skill then runs from its copy in a [`store::SkillStore`], whose files were hashed as they
//! were copied, so the files checked are the files run.

pub mod digest;
pub mod error;
pub mod gate;
pub mod lockfile;
pub mod ownership;
pub mod package_servers;
pub mod safe_write;
pub mod store;
pub mod trust_file;
pub mod verdict;

pub use digest::skill_digest;
pub use error::TrustError;
pub use gate::{PinnedSkill, TrustGate, TrustRequirement};
pub use trust_file::{InstalledSkill, TrustEntry, TrustPolicy, TrustStore, TrustedRoot};
pub use verdict::{TrustVerdict, Untrusted, UntrustedReason};
