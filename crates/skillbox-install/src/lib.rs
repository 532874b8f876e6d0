//! Getting skills: `skillbox add`, `install`, `update`, `remove`, `outdated` and `verify`.
//!
//! A SOURCE ([`source::SourceSpec`]) is fetched into a private staging folder ([`fetch`]), the
//! skills in it are found (a skill folder, a folder of skills, a Claude or Codex plugin, a
//! marketplace; [`discover`]) and validated, stored read-only under their tree digest in the
//! content-addressed store ([`skillbox_trust::store`]), and copied into the install folder
//! (`.agents/skills/` of the project, or the user's) with links in other agents' folders.
//! The manifest (`skillbox.toml`, [`manifest`]) says what the project wants; the lock
//! (`skillbox.lock`, [`skillbox_trust::lockfile`]) says exactly what was installed, down to
//! each file's digest. Installed skills are recorded in the user's trust file by digest, so
//! their code runs only as installed.

pub mod agents;
pub mod discover;
pub mod error;
pub mod fetch;
mod folder_handle;
mod guard;
pub mod limits;
mod local_source;
pub mod operations;
pub mod package_servers;
pub mod progress;
pub mod project_manifest;
pub mod scope;
pub mod source;

pub use error::InstallError;
pub use limits::InstallLimits;
pub use operations::Installer;
pub use progress::{Progress, ProgressEvent};
pub use scope::InstallScope;
pub use source::SourceSpec;
