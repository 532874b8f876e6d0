//! `skillbox pack --index`: a folder of skills published as a `.well-known/agent-skills/`
//! discovery index (the Agent Skills discovery RFC, v0.2.0), the publishing side of
//! `skillbox add https://site`.
//!
//! Every direct subfolder holding a `SKILL.md` is validated (all are reported; any error stops
//! the publish). A skill that is only its `SKILL.md` is published as `type: "skill-md"`, that
//! file copied to `NAME/SKILL.md`; any other as `type: "archive"`, a reproducible `NAME.tar.gz`
//! whose entries are the skill's files at the archive's root (tar headers with time 0, owner 0,
//! no owner names, modes 0644 or 0755, GNU format, sorted; gzip with time 0 and an unknown OS
//! byte). Each entry's `digest` is the sha256 of its artifact's bytes, and its `url` is relative
//! to the index. The tree is built beside `.well-known/agent-skills/` and swapped into place, so
//! a reader never sees half of it, and publishing twice gives identical trees.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use skillbox_core::Diagnostic;

use crate::error::AuthorError;
use crate::files::{SkillFile, collect_files};
use crate::pack::{PackOptions, refuse_output_inside, sha256_digest};
use crate::placement::{StagingFolder, entry_kind};

/// The `$schema` of the index written.
pub const INDEX_SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
/// Where the index goes under the output folder.
pub const WELL_KNOWN_PATH: &str = ".well-known/agent-skills";
/// The index's file name.
pub const INDEX_FILE: &str = "index.json";
/// The gzip level of the archives (fixed, so the bytes are too).
pub const GZIP_LEVEL: u32 = 9;
/// The gzip header's OS byte: 255, "unknown", the same on every machine.
pub const GZIP_OS_UNKNOWN: u8 = 255;

/// How a skill is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArtifactKind {
    /// The skill is its `SKILL.md` alone.
    SkillMd,
    /// The skill's files in a `.tar.gz`.
    Archive,
}

/// One skill as published.
#[derive(Debug, Clone, Serialize)]
pub struct PublishedSkill {
    /// Its name.
    pub name: String,
    /// Its description, as the index gives it.
    pub description: String,
    /// How it is published.
    #[serde(rename = "type")]
    pub kind: ArtifactKind,
    /// Its artifact, relative to the index.
    pub url: String,
    /// `sha256:` and the hex digest of the artifact's bytes.
    pub digest: String,
    /// The artifact's size in bytes.
    pub size_bytes: u64,
    /// Files in the artifact.
    pub files: usize,
    /// The skill folder.
    pub folder: PathBuf,
    /// What of the folder was left out.
    pub left_out: Vec<String>,
    /// What validation warned about.
    pub warnings: Vec<Diagnostic>,
}

/// A subfolder that is not published, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedFolder {
    /// The folder.
    pub path: PathBuf,
    /// Why.
    pub reason: String,
}

/// What `pack --index` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct IndexReport {
    /// The index file.
    pub index: PathBuf,
    /// The skills, by name.
    pub skills: Vec<PublishedSkill>,
    /// Subfolders passed over.
    pub skipped: Vec<SkippedFolder>,
}

/// One entry of `index.json`, in the RFC's field order.
#[derive(Serialize)]
struct IndexEntry<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    kind: ArtifactKind,
    description: &'a str,
    url: &'a str,
    digest: &'a str,
}

/// Publish the skill folders of `folder` under `output/.well-known/agent-skills/`.
///
/// # Errors
/// [`AuthorError::InvalidSkills`] listing every invalid skill; [`AuthorError::DuplicateName`];
/// [`AuthorError::NotOneSkill`] when `folder` holds no skill folder; the refusals of
/// [`collect_files`]; [`AuthorError::OutputRefused`] when the place holds something this did
/// not write; [`AuthorError::Io`].
pub fn publish_index(
    folder: &Path,
    output: &Path,
    options: &PackOptions,
) -> Result<IndexReport, AuthorError> {
    let (candidates, skipped) = skill_folders(folder)?;
    if candidates.is_empty() {
        return Err(AuthorError::NotOneSkill {
            path: folder.to_path_buf(),
            problem: "holds no skill folders (folders with a `SKILL.md`)".to_owned(),
            hint: "name the folder whose subfolders are the skills to publish",
        });
    }
    let mut checked = Vec::new();
    let mut invalid = Vec::new();
    for candidate in &candidates {
        match options.check(candidate) {
            Ok(skill) => checked.push(skill),
            Err(AuthorError::InvalidSkill { path, diagnostics }) => {
                invalid.push((path, diagnostics));
            }
            Err(error) => return Err(error),
        }
    }
    if !invalid.is_empty() {
        return Err(AuthorError::InvalidSkills {
            folder: folder.to_path_buf(),
            skills: invalid,
        });
    }
    let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
    for (index, skill) in checked.iter().enumerate() {
        if let Some(first) = by_name.insert(skill.name().to_owned(), index) {
            return Err(AuthorError::DuplicateName {
                name: skill.name().to_owned(),
                first: checked[first].folder.clone(),
                second: skill.folder.clone(),
            });
        }
    }
    let well_known = output.join(WELL_KNOWN_PATH);
    let folders: Vec<&Path> = candidates.iter().map(PathBuf::as_path).collect();
    refuse_output_inside(&well_known.join(INDEX_FILE), &folders)?;
    let parent = prepare_well_known(output)?;
    let staging = StagingFolder::create(&parent, "agent-skills")?;
    let mut skills = Vec::new();
    let mut artifacts: BTreeMap<String, String> = BTreeMap::new();
    for index in by_name.values() {
        let skill = &checked[*index];
        let name = skill.name();
        let collected = collect_files(&skill.folder, &options.limits)?;
        let (kind, url, bytes) = match collected.files.as_slice() {
            [only] if is_skill_md(&only.path) => (
                ArtifactKind::SkillMd,
                format!("{name}/SKILL.md"),
                only.bytes.clone(),
            ),
            files => (
                ArtifactKind::Archive,
                format!("{name}.tar.gz"),
                tar_gz(files, &well_known.join(format!("{name}.tar.gz")))?,
            ),
        };
        // Two artifacts, or an artifact and the index, at one place (a skill named
        // `index.json`, or `a` and `a.tar.gz`): refused rather than overwritten.
        let top = url.split('/').next().unwrap_or_default().to_owned();
        let clash = artifacts
            .insert(top.clone(), name.to_owned())
            .is_some_and(|other| other != name);
        if clash || top == INDEX_FILE {
            return Err(AuthorError::OutputRefused {
                path: well_known.join(&top),
                problem: format!("is where skill `{name}`'s artifact would go, beside another"),
                hint: "rename the skill",
            });
        }
        staging.write(&url, &bytes, false)?;
        skills.push(PublishedSkill {
            name: name.to_owned(),
            description: skill.skill.description.clone(),
            kind,
            digest: sha256_digest(&bytes),
            size_bytes: bytes.len() as u64,
            files: collected.files.len(),
            url,
            folder: skill.folder.clone(),
            left_out: collected.left_out,
            warnings: skill.warnings.clone(),
        });
    }
    let entries: Vec<IndexEntry<'_>> = skills
        .iter()
        .map(|skill| IndexEntry {
            name: &skill.name,
            kind: skill.kind,
            description: &skill.description,
            url: &skill.url,
            digest: &skill.digest,
        })
        .collect();
    let index = serde_json::json!({"$schema": INDEX_SCHEMA, "skills": entries});
    let mut text = serde_json::to_string_pretty(&index).map_err(|error| AuthorError::Archive {
        path: well_known.join(INDEX_FILE),
        message: error.to_string(),
    })?;
    text.push('\n');
    staging.write(INDEX_FILE, text.as_bytes(), false)?;
    refuse_foreign_folder(&well_known)?;
    staging.replace(&well_known)?;
    Ok(IndexReport {
        index: well_known.join(INDEX_FILE),
        skills,
        skipped,
    })
}

/// Whether a skill file is its instructions file.
fn is_skill_md(path: &str) -> bool {
    skillbox_core::loader::SKILL_MD_NAMES.contains(&path)
}

/// The direct subfolders of `folder` that hold a `SKILL.md`, sorted, and those passed over
/// with the reason. Hidden entries and files are not looked at.
fn skill_folders(folder: &Path) -> Result<(Vec<PathBuf>, Vec<SkippedFolder>), AuthorError> {
    let entries = fs_err::read_dir(folder).map_err(|error| AuthorError::NotAFolder {
        path: folder.to_path_buf(),
        problem: format!("cannot be listed ({})", error.kind()),
        hint: "name the folder whose subfolders are the skills to publish",
    })?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|error| AuthorError::io("list the folder", folder, error))?;
        names.push(entry.file_name());
    }
    names.sort();
    let mut candidates = Vec::new();
    let mut skipped = Vec::new();
    for name in names {
        if name.as_encoded_bytes().starts_with(b".") {
            continue;
        }
        let path = folder.join(&name);
        let Ok(metadata) = fs_err::symlink_metadata(&path) else {
            continue;
        };
        if metadata.file_type().is_symlink() {
            skipped.push(SkippedFolder {
                path,
                reason: "a symlink, which is not followed".to_owned(),
            });
        } else if metadata.is_dir() {
            let has_skill_md = skillbox_core::loader::SKILL_MD_NAMES
                .iter()
                .any(|skill_md| fs_err::symlink_metadata(path.join(skill_md)).is_ok());
            if has_skill_md {
                candidates.push(path);
            } else {
                skipped.push(SkippedFolder {
                    path,
                    reason: "no `SKILL.md`".to_owned(),
                });
            }
        }
    }
    Ok((candidates, skipped))
}

/// Make `output/.well-known/` (and `output`) when missing, refusing a link or file there; the
/// folder the staging tree is built in.
fn prepare_well_known(output: &Path) -> Result<PathBuf, AuthorError> {
    let well_known_parent = output.join(".well-known");
    for folder in [output, well_known_parent.as_path()] {
        match entry_kind(folder) {
            None => fs_err::create_dir_all(folder)
                .map_err(|error| AuthorError::io("create the folder", folder, error))?,
            Some("a folder") => {}
            Some(kind) => {
                return Err(AuthorError::OutputRefused {
                    path: folder.to_path_buf(),
                    problem: format!("is {kind}"),
                    hint: "give --output a folder of its own; links are not written through",
                });
            }
        }
    }
    Ok(well_known_parent)
}

/// Refuse to replace a `.well-known/agent-skills/` that this did not write: a folder holding
/// files but no `index.json`, or anything that is not a folder.
fn refuse_foreign_folder(well_known: &Path) -> Result<(), AuthorError> {
    match entry_kind(well_known) {
        None => Ok(()),
        Some("a folder") => {
            let empty = fs_err::read_dir(well_known)
                .map_err(|error| AuthorError::io("list the folder", well_known, error))?
                .next()
                .is_none();
            if empty || well_known.join(INDEX_FILE).is_file() {
                Ok(())
            } else {
                Err(AuthorError::OutputRefused {
                    path: well_known.to_path_buf(),
                    problem: format!(
                        "holds files but no `{INDEX_FILE}`, so it was not published here"
                    ),
                    hint: "move it away, or give --output another folder",
                })
            }
        }
        Some(kind) => Err(AuthorError::OutputRefused {
            path: well_known.to_path_buf(),
            problem: format!("is {kind}"),
            hint: "move it away, or give --output another folder",
        }),
    }
}

/// The reproducible `.tar.gz` of `files` at the archive's root; `archive` names it in messages.
///
/// # Errors
/// [`AuthorError::Archive`] when it cannot be written.
pub fn tar_gz(files: &[SkillFile], archive: &Path) -> Result<Vec<u8>, AuthorError> {
    let failed = |error: std::io::Error| AuthorError::Archive {
        path: archive.to_path_buf(),
        message: error.to_string(),
    };
    let encoder = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(GZIP_OS_UNKNOWN)
        .write(Vec::new(), flate2::Compression::new(GZIP_LEVEL));
    let mut builder = tar::Builder::new(encoder);
    for file in files {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(file.bytes.len() as u64);
        header.set_mode(if file.executable {
            crate::placement::EXECUTABLE_MODE
        } else {
            crate::placement::FILE_MODE
        });
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_username("").map_err(failed)?;
        header.set_groupname("").map_err(failed)?;
        builder
            .append_data(&mut header, &file.path, file.bytes.as_slice())
            .map_err(failed)?;
    }
    let encoder = builder.into_inner().map_err(failed)?;
    encoder.finish().map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::io::Read;

    #[test]
    fn archives_have_fixed_headers_and_no_folder_entries() {
        let files = vec![
            SkillFile {
                path: "SKILL.md".to_owned(),
                bytes: b"skill".to_vec(),
                executable: false,
            },
            SkillFile {
                path: format!("{}/run.sh", "deep/".repeat(30)),
                bytes: b"echo".to_vec(),
                executable: true,
            },
        ];
        let bytes = tar_gz(&files, Path::new("x.tar.gz")).unwrap();
        assert_eq!(bytes, tar_gz(&files, Path::new("x.tar.gz")).unwrap());
        assert_eq!(&bytes[4..8], &[0, 0, 0, 0], "gzip time");
        assert_eq!(bytes[9], GZIP_OS_UNKNOWN);
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
        let mut seen = Vec::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let header = entry.header().clone();
            let mut content = Vec::new();
            entry.read_to_end(&mut content).unwrap();
            seen.push((
                entry.path().unwrap().display().to_string(),
                header.mode().unwrap(),
                header.mtime().unwrap(),
                header.uid().unwrap(),
                header.username().unwrap().unwrap_or_default().to_owned(),
                content.len(),
            ));
        }
        assert_eq!(
            seen,
            vec![
                ("SKILL.md".to_owned(), 0o644, 0, 0, String::new(), 5),
                (files[1].path.clone(), 0o755, 0, 0, String::new(), 4),
            ]
        );
    }
}
