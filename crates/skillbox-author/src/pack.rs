//! `skillbox pack`: a skill folder as a reproducible `.skill` archive.
//!
//! The archive is a zip holding the skill under one top folder named after the skill (the
//! shape of Claude's `.skill` files, which the catalog and `skillbox add` read): entries sorted
//! by path bytewise, no folder entries, every time 1980-01-01 00:00, Unix modes 0644 or 0755
//! (the owner's execute bit decides), deflate at [`DEFLATE_LEVEL`], no extra fields. The same
//! files give the same bytes on every run, whatever their times, owners, umask or the order a
//! file system lists them in. Before it is written, the archive is read back as the catalog
//! reads archives, so what is written is what `skillbox validate X.skill` accepts.

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};
use skillbox_core::{CatalogLimits, Diagnostic};
use zip::write::SimpleFileOptions;

use crate::error::AuthorError;
use crate::files::{PackLimits, SkillFile, collect_files};
use crate::placement::{EXECUTABLE_MODE, FILE_MODE, write_file_atomically};
use crate::validation::{CheckedSkill, check_skill_folder};

/// The deflate level of every entry (fixed, so the bytes are too).
pub const DEFLATE_LEVEL: i64 = 9;
/// The file name ending of packed skills.
pub const ARCHIVE_EXTENSION: &str = "skill";

/// What packing needs besides the skill.
#[derive(Debug, Clone, Default)]
pub struct PackOptions {
    /// The runtime's own tool names, which a skill's tool may not take (warned about, as
    /// `skillbox validate` does).
    pub reserved_tool_names: Vec<String>,
    /// How much one skill may hold.
    pub limits: PackLimits,
}

impl PackOptions {
    fn reserved(&self) -> Vec<&str> {
        self.reserved_tool_names
            .iter()
            .map(String::as_str)
            .collect()
    }

    /// Check the skill folder as `skillbox validate` does.
    pub(crate) fn check(&self, folder: &Path) -> Result<CheckedSkill, AuthorError> {
        check_skill_folder(folder, &self.reserved())
    }
}

/// What `pack` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct PackReport {
    /// The skill's name.
    pub name: String,
    /// The skill folder packed.
    pub folder: PathBuf,
    /// The archive written.
    pub archive: PathBuf,
    /// Its size in bytes.
    pub size_bytes: u64,
    /// Files in it.
    pub files: usize,
    /// `sha256:` and the hex digest of the archive's bytes.
    pub digest: String,
    /// What of the folder was left out (folders end with `/`).
    pub left_out: Vec<String>,
    /// What validation warned about; packing went on.
    pub warnings: Vec<Diagnostic>,
}

/// Validate the skill folder `folder` and write it as a `.skill` archive at `output` (default:
/// `NAME.skill` in the current folder).
///
/// # Errors
/// [`AuthorError::InvalidSkill`] with the diagnostics when the skill has errors; the refusals of
/// [`collect_files`]; [`AuthorError::OutputInsideSkill`]; [`AuthorError::TooLarge`] when the
/// archive would pass the catalog's limits; [`AuthorError::Io`] when it cannot be written (no
/// file is left half-written).
pub fn pack_skill(
    folder: &Path,
    output: Option<&Path>,
    options: &PackOptions,
) -> Result<PackReport, AuthorError> {
    let checked = options.check(folder)?;
    let name = checked.name().to_owned();
    let archive = output.map_or_else(
        || PathBuf::from(format!("{name}.{ARCHIVE_EXTENSION}")),
        Path::to_path_buf,
    );
    refuse_missing_parent(&archive)?;
    refuse_output_inside(&archive, &[folder])?;
    let collected = collect_files(folder, &options.limits)?;
    let bytes = skill_archive(&name, &collected.files, &archive, &options.limits)?;
    write_file_atomically(&archive, &bytes)?;
    Ok(PackReport {
        name,
        folder: folder.to_path_buf(),
        archive,
        size_bytes: bytes.len() as u64,
        files: collected.files.len(),
        digest: sha256_digest(&bytes),
        left_out: collected.left_out,
        warnings: checked.warnings,
    })
}

/// `sha256:` and the hex digest of `bytes`, as discovery indexes and lock files write it.
#[must_use]
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// Refuse an output inside one of `folders`: the next pack would hold it. The output need not
/// exist yet; its nearest existing folder is resolved (links included).
pub(crate) fn refuse_output_inside(output: &Path, folders: &[&Path]) -> Result<(), AuthorError> {
    let absolute =
        std::path::absolute(output).map_err(|error| AuthorError::io("resolve", output, error))?;
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    let resolved = loop {
        if let Ok(resolved) = fs_err::canonicalize(existing) {
            break rest
                .iter()
                .rev()
                .fold(resolved, |path: PathBuf, part| path.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => break absolute.clone(),
        }
    };
    for folder in folders {
        if let Ok(folder) = fs_err::canonicalize(folder)
            && resolved.starts_with(&folder)
        {
            return Err(AuthorError::OutputInsideSkill {
                output: output.to_path_buf(),
                skill: folder,
            });
        }
    }
    Ok(())
}

/// Refuse an output whose folder is missing, before anything is read.
fn refuse_missing_parent(output: &Path) -> Result<(), AuthorError> {
    let parent = match output.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => return Ok(()),
    };
    if parent.is_dir() {
        return Ok(());
    }
    Err(AuthorError::NotAFolder {
        path: parent.to_path_buf(),
        problem: "does not exist".to_owned(),
        hint: "create the folder the archive goes in first, or give -o another path",
    })
}

/// The bytes of the `.skill` archive of `files` under the top folder `name`, checked as the
/// catalog will read them; `archive` names it in messages.
///
/// # Errors
/// [`AuthorError::TooLarge`] for a file compressed past the catalog's ratio or an archive past
/// its size; [`AuthorError::Archive`] when the archive cannot be written or read back.
pub fn skill_archive(
    name: &str,
    files: &[SkillFile],
    archive: &Path,
    limits: &PackLimits,
) -> Result<Vec<u8>, AuthorError> {
    let failed = |error: &dyn std::fmt::Display| AuthorError::Archive {
        path: archive.to_path_buf(),
        message: error.to_string(),
    };
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for file in files {
        let mode = if file.executable {
            EXECUTABLE_MODE
        } else {
            FILE_MODE
        };
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .compression_level(Some(DEFLATE_LEVEL))
            .last_modified_time(zip::DateTime::default())
            .system(zip::System::Unix)
            .unix_permissions(mode)
            .large_file(false);
        writer
            .start_file(format!("{name}/{}", file.path), options)
            .map_err(|error| failed(&error))?;
        writer
            .write_all(&file.bytes)
            .map_err(|error| failed(&error))?;
    }
    let bytes = writer
        .finish()
        .map_err(|error| failed(&error))?
        .into_inner();
    if bytes.len() as u64 > limits.max_archive_bytes {
        return Err(AuthorError::TooLarge {
            path: archive.to_path_buf(),
            what: format!("would be {} bytes", bytes.len()),
            limit: format!("{} bytes", limits.max_archive_bytes),
            hint: "ship large data outside the skill and fetch it at run time",
        });
    }
    refuse_bomb_like_entries(&bytes, name, archive, limits)?;
    let catalog_limits = CatalogLimits {
        max_archive_bytes: limits.max_archive_bytes,
        max_archive_compression_ratio: limits.max_compression_ratio,
        ..CatalogLimits::default()
    };
    skillbox_core::archive::unpack_archive_bytes(archive, bytes.clone(), &catalog_limits)
        .map_err(|diagnostic| failed(&diagnostic))?;
    Ok(bytes)
}

/// Refuse an entry that compresses past the ratio the catalog takes for a zip bomb, naming the
/// file of the skill.
fn refuse_bomb_like_entries(
    bytes: &[u8],
    name: &str,
    archive: &Path,
    limits: &PackLimits,
) -> Result<(), AuthorError> {
    let mut zip =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|error| AuthorError::Archive {
            path: archive.to_path_buf(),
            message: error.to_string(),
        })?;
    for index in 0..zip.len() {
        let entry = zip
            .by_index_raw(index)
            .map_err(|error| AuthorError::Archive {
                path: archive.to_path_buf(),
                message: error.to_string(),
            })?;
        let ratio = entry.size() / entry.compressed_size().max(1);
        if ratio > limits.max_compression_ratio {
            let entry_name = entry
                .name()
                .map(|text| text.into_owned())
                .unwrap_or_default();
            let relative = entry_name
                .strip_prefix(&format!("{name}/"))
                .unwrap_or(&entry_name)
                .to_owned();
            return Err(AuthorError::TooLarge {
                path: PathBuf::from(relative),
                what: format!("compresses {ratio} to 1"),
                limit: format!(
                    "{} to 1, past which skillbox refuses an archive entry as a zip bomb",
                    limits.max_compression_ratio
                ),
                hint: "store the file compressed (gzip it), or generate it at run time",
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn files() -> Vec<SkillFile> {
        vec![
            SkillFile {
                path: "SKILL.md".to_owned(),
                bytes: b"---\nname: demo\ndescription: Demo. Use for demos.\n---\nBody.\n".to_vec(),
                executable: false,
            },
            SkillFile {
                path: "scripts/run.sh".to_owned(),
                bytes: b"echo hi\n".to_vec(),
                executable: true,
            },
        ]
    }

    #[test]
    fn the_archive_is_fixed_in_time_mode_and_order() {
        let path = Path::new("demo.skill");
        let limits = PackLimits::default();
        let first = skill_archive("demo", &files(), path, &limits).unwrap();
        let second = skill_archive("demo", &files(), path, &limits).unwrap();
        assert_eq!(first, second);
        let mut zip = zip::ZipArchive::new(Cursor::new(&first)).unwrap();
        let entries: Vec<(String, Option<u32>, bool)> = (0..zip.len())
            .map(|index| {
                let entry = zip.by_index(index).unwrap();
                let time = entry.last_modified().unwrap_or_default();
                let no_extra = entry.extra_data().is_none_or(|data| data.is_empty());
                (
                    entry.name().unwrap().into_owned(),
                    entry.unix_mode(),
                    time == zip::DateTime::default() && no_extra,
                )
            })
            .collect();
        assert_eq!(
            entries,
            vec![
                ("demo/SKILL.md".to_owned(), Some(0o100_644), true),
                ("demo/scripts/run.sh".to_owned(), Some(0o100_755), true),
            ]
        );
    }

    #[test]
    fn a_file_that_compresses_like_a_bomb_is_named() {
        let mut files = files();
        files.push(SkillFile {
            path: "data/zeros.bin".to_owned(),
            bytes: vec![0; 4 * 1024 * 1024],
            executable: false,
        });
        let error = skill_archive(
            "demo",
            &files,
            Path::new("demo.skill"),
            &PackLimits::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("`data/zeros.bin` compresses") && error.contains("zip bomb"),
            "{error}"
        );
    }
}
