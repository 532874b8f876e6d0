//! The trust check every run of a skill's code passes, and the verified copy a skill pinned by
//! trust runs from.
//!
//! A skill under a gated root whose trust is pinned (`pin`) may run only as the files the user
//! trusted. Checking the folder and then running it leaves a window in which anyone who can
//! write the project can swap a file. So such a skill runs from its copy in the runtime folder's
//! skill store (`store/sha256/<tree digest>/`, see [`skillbox_trust::store`]), made by
//! hashing exactly the bytes copied and kept only when that digest is the trusted one: the
//! files checked are the files run. Later runs reuse the copy while the folder still digests
//! the same (each use touches it; the start-up sweep removes copies unused for a day).

use skillbox_core::Skill;
use skillbox_core::source::SkillSource;
use skillbox_trust::store::SkillStoreError;
use skillbox_trust::{PinnedSkill, TrustRequirement, Untrusted, UntrustedReason};

use super::{Executor, off_the_async_threads};
use crate::error::{ErrorType, ExecError};

/// The runtime folder's subfolder holding the skill store.
pub(super) const STORE_FOLDER: &str = "store";

/// What the trust check allows a skill's run.
pub(super) enum TrustedFiles {
    /// Its own files, as they are (not gated, `follow`, or an archived skill whose bytes are
    /// held in memory and were checked).
    AsTheyAre,
    /// Only its verified copy in the skill store, at this folder.
    VerifiedCopy(std::path::PathBuf),
}

impl Executor {
    /// Ask the trust gate whether the skill's code may run, and from where: every path that
    /// runs a skill's code (scripts, preprocessing commands, handlers, exports, mounted skills)
    /// asks first, through [`Executor::skill_directory`].
    ///
    /// For a skill under a gated root this reads the trust file and, under `pin`, digests the
    /// skill (and makes its verified copy on first use): on a multi-threaded runtime that
    /// blocking work leaves the async worker first (see [`off_the_async_threads`]).
    ///
    /// # Errors
    /// [`ErrorType::Untrusted`] naming the skill, its root, why, and the command that trusts it;
    /// [`ErrorType::SandboxUnavailable`] when the skill store cannot be written.
    pub(super) fn trusted_files(&self, skill: &Skill) -> Result<TrustedFiles, ExecError> {
        let gate = &self.config.trust;
        if !gate.is_gated(skill) {
            return Ok(TrustedFiles::AsTheyAre);
        }
        off_the_async_threads(|| match gate.requirement(skill) {
            TrustRequirement::AsItIs => Ok(TrustedFiles::AsTheyAre),
            TrustRequirement::Refused(refusal) => Err(untrusted(&refusal)),
            TrustRequirement::Pinned(pin) => match &skill.source {
                SkillSource::Directory(_) => self.verified_copy(skill, &pin),
                // An archive runs from the bytes the catalog holds, which are the bytes hashed.
                SkillSource::Archive(_) => pin
                    .verify(skill)
                    .map(|()| TrustedFiles::AsTheyAre)
                    .map_err(|refusal| untrusted(&refusal)),
            },
        })
    }

    /// The verified copy of a pinned skill folder: the stored one when the folder still
    /// digests as trusted, else one copied now (and checked as it is copied).
    fn verified_copy(&self, skill: &Skill, pin: &PinnedSkill) -> Result<TrustedFiles, ExecError> {
        if let Some(tree) = self.skill_store.existing(&pin.digest) {
            // The copy holds the trusted files; the folder must still hold them too, or the
            // user sees a change as one.
            return pin
                .verify(skill)
                .map(|()| TrustedFiles::VerifiedCopy(tree))
                .map_err(|refusal| untrusted(&refusal));
        }
        match self.skill_store.insert_verified(skill, &pin.digest) {
            Ok(tree) => Ok(TrustedFiles::VerifiedCopy(tree)),
            Err(SkillStoreError::Mismatch { .. }) => Err(untrusted(&pin.changed(skill))),
            Err(error @ SkillStoreError::Source { .. }) => Err(untrusted(
                &pin.refusal(UntrustedReason::Unverifiable(error.to_string())),
            )),
            Err(error) => Err(ExecError::new(
                ErrorType::SandboxUnavailable,
                format!(
                    "cannot make the verified copy skill `{}` runs from: {error}",
                    skill.name()
                ),
            )),
        }
    }
}

fn untrusted(refusal: &Untrusted) -> ExecError {
    ExecError::new(ErrorType::Untrusted, refusal.to_string())
}
