//! Packaged skills: a `.zip` or `.skill` archive holding one skill folder (or the skill's files
//! at the archive root). The archive is unpacked into memory, read-only, under hard limits:
//! entry count, total unpacked size, per-entry compression ratio (zip bombs), and entry names
//! that would leave the skill (zip-slip) are refused outright.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::error::CatalogError;
use crate::limits::CatalogLimits;
use crate::source::{ArchivedFiles, contained_relative_path, open_regular_file};

/// File name endings recognised as packaged skills.
pub const ARCHIVE_EXTENSIONS: &[&str] = &["zip", "skill"];

/// Whether a path looks like a packaged skill.
#[must_use]
pub fn is_archive_path(path: &Path) -> bool {
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| {
            ARCHIVE_EXTENSIONS
                .iter()
                .any(|known| extension.eq_ignore_ascii_case(known))
        })
}

/// An archive unpacked into memory: the skill's files and the folder name they came from.
#[derive(Debug)]
pub struct UnpackedArchive {
    /// The skill's files, relative to the skill folder.
    pub files: Arc<ArchivedFiles>,
    /// The skill folder's name inside the archive, or the archive's file stem when the files
    /// sit at the archive root.
    pub folder_name: String,
}

fn archive_error(path: &Path, message: String, hint: &str) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::ArchiveInvalid, message)
        .in_file(path)
        .with_hint(hint)
}

/// Unpack a skill archive into memory.
///
/// # Errors
/// A diagnostic naming the archive when it is unreadable, not a zip, unsafe (entry names with
/// `..` or absolute paths, symlinks), too large, too compressed, or holds no single skill.
pub fn unpack_archive(path: &Path, limits: &CatalogLimits) -> Result<UnpackedArchive, Diagnostic> {
    let unreadable = |error: CatalogError| {
        archive_error(
            path,
            error.to_string(),
            "name a `.zip`/`.skill` file you may read",
        )
    };
    // Opened before its size is read, so the size is that of the file being read; a FIFO or
    // device is refused instead of read (a FIFO would block the catalog forever).
    let file = open_regular_file(path).map_err(unreadable)?;
    let size = file
        .metadata()
        .map_err(|error| unreadable(CatalogError::io(error)))?
        .len();
    if size > limits.max_archive_bytes {
        return Err(archive_error(
            path,
            format!(
                "archive is {size} bytes; the limit is {}",
                limits.max_archive_bytes
            ),
            "ship large assets outside the skill, or unpack the archive into a skill folder",
        ));
    }
    let mut archive = zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(|error| {
        archive_error(
            path,
            format!("not a readable zip archive: {error}"),
            "re-create the archive with `zip -r`",
        )
    })?;
    if archive.len() > limits.max_archive_entries {
        return Err(archive_error(
            path,
            format!(
                "archive has {} entries; the limit is {}",
                archive.len(),
                limits.max_archive_entries
            ),
            "package only the skill folder",
        ));
    }
    let mut entries: BTreeMap<String, Arc<[u8]>> = BTreeMap::new();
    let mut total: u64 = 0;
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).map_err(|error| {
            archive_error(
                path,
                format!("entry {index} is unreadable: {error}"),
                "re-create the archive",
            )
        })?;
        let name = match entry.name() {
            Ok(name) => name.into_owned(),
            Err(error) => {
                return Err(archive_error(
                    path,
                    format!("entry {index} has an unreadable name: {error}"),
                    "re-create the archive with UTF-8 file names",
                ));
            }
        };
        let relative = contained_relative_path(&name).map_err(|_| {
            archive_error(
                path,
                format!(
                    "entry `{name}` would be written outside the skill (absolute path or `..`)"
                ),
                "this archive is unsafe; do not use it",
            )
        })?;
        if entry.is_symlink() {
            return Err(archive_error(
                path,
                format!("entry `{name}` is a symlink, which packaged skills may not contain"),
                "replace the link with the file it points to",
            ));
        }
        if entry.is_dir() {
            continue;
        }
        let declared = entry.size();
        let compressed = entry.compressed_size().max(1);
        if declared / compressed > limits.max_archive_compression_ratio {
            return Err(archive_error(
                path,
                format!(
                    "entry `{name}` expands {}x (limit {}x); this looks like a zip bomb",
                    declared / compressed,
                    limits.max_archive_compression_ratio
                ),
                "this archive is unsafe; do not use it",
            ));
        }
        // Never trust the declared size: read at most what the remaining budget allows.
        let budget = limits.max_archive_unpacked_bytes.saturating_sub(total);
        let mut bytes =
            Vec::with_capacity(usize::try_from(declared.min(budget).min(1 << 20)).unwrap_or(0));
        (&mut entry)
            .take(budget + 1)
            .read_to_end(&mut bytes)
            .map_err(|error| {
                archive_error(
                    path,
                    format!("entry `{name}` cannot be unpacked: {error}"),
                    "re-create the archive",
                )
            })?;
        total += bytes.len() as u64;
        if total > limits.max_archive_unpacked_bytes {
            return Err(archive_error(
                path,
                format!(
                    "archive expands past {} bytes",
                    limits.max_archive_unpacked_bytes
                ),
                "this archive is too large or unsafe",
            ));
        }
        entries.insert(relative, Arc::from(bytes));
    }
    let is_skill_md = |name: &str| name == "SKILL.md" || name == "skill.md";
    let stem = path
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Layout 1: SKILL.md at the archive root.
    if entries.keys().any(|name| is_skill_md(name)) {
        return Ok(UnpackedArchive {
            files: Arc::new(ArchivedFiles {
                archive_path: path.to_path_buf(),
                files: entries,
            }),
            folder_name: stem,
        });
    }
    // Layout 2: exactly one top-level folder holding SKILL.md.
    let folders: Vec<&str> = entries
        .keys()
        .filter_map(|name| name.split_once('/'))
        .filter(|(_, rest)| is_skill_md(rest))
        .map(|(folder, _)| folder)
        .collect();
    match folders.as_slice() {
        [folder] => {
            let folder = (*folder).to_owned();
            let prefix = format!("{folder}/");
            let files = entries
                .into_iter()
                .filter_map(|(name, bytes)| {
                    name.strip_prefix(&prefix)
                        .map(|rest| (rest.to_owned(), bytes))
                })
                .collect();
            Ok(UnpackedArchive {
                files: Arc::new(ArchivedFiles {
                    archive_path: path.to_path_buf(),
                    files,
                }),
                folder_name: folder,
            })
        }
        [] => Err(archive_error(
            path,
            "archive holds no `SKILL.md` at its root or in a top-level folder".to_owned(),
            "package one skill folder: `zip -r my-skill.skill my-skill/`",
        )),
        _ => Err(archive_error(
            path,
            format!(
                "archive holds {} skill folders; a packaged skill holds exactly one",
                folders.len()
            ),
            "package each skill in its own archive",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write_zip(path: &Path, entries: &[(&str, &[u8])]) {
        let file = std::fs::File::create(path).unwrap();
        let mut writer = zip::ZipWriter::new(file);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, bytes) in entries {
            writer.start_file(*name, options).unwrap();
            writer.write_all(bytes).unwrap();
        }
        writer.finish().unwrap();
    }

    #[test]
    fn unpacks_single_folder_layout() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("pdf.skill");
        write_zip(
            &path,
            &[
                ("pdf/SKILL.md", b"---\nname: pdf\ndescription: d\n---\n"),
                ("pdf/scripts/a.py", b"print(1)"),
            ],
        );
        let unpacked = unpack_archive(&path, &CatalogLimits::default()).unwrap();
        assert_eq!(unpacked.folder_name, "pdf");
        assert_eq!(
            unpacked.files.files.keys().collect::<Vec<_>>(),
            vec!["SKILL.md", "scripts/a.py"]
        );
    }

    #[test]
    fn refuses_zip_slip() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("evil.zip");
        write_zip(
            &path,
            &[("SKILL.md", b"---\n---\n"), ("../../etc/evil", b"x")],
        );
        let error = unpack_archive(&path, &CatalogLimits::default()).unwrap_err();
        assert!(
            error.message.contains("outside the skill"),
            "{}",
            error.message
        );
    }

    #[test]
    fn refuses_zip_bomb() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("bomb.zip");
        let zeros = vec![0u8; 20 * 1024 * 1024];
        write_zip(&path, &[("SKILL.md", b"---\n---\n"), ("zeros.bin", &zeros)]);
        let error = unpack_archive(&path, &CatalogLimits::default()).unwrap_err();
        assert!(error.message.contains("zip bomb"), "{}", error.message);
    }

    #[test]
    fn refuses_total_size_past_limit_even_with_lying_headers() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("big.zip");
        let noise: Vec<u8> = (0..200_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        write_zip(
            &path,
            &[
                ("SKILL.md", b"---\n---\n"),
                ("a.bin", &noise),
                ("b.bin", &noise),
            ],
        );
        let limits = CatalogLimits {
            max_archive_unpacked_bytes: 300_000,
            ..CatalogLimits::default()
        };
        assert!(unpack_archive(&path, &limits).is_err());
    }

    #[test]
    fn refuses_garbage_and_multiple_skills() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("garbage.zip");
        std::fs::write(&path, b"not a zip").unwrap();
        assert!(unpack_archive(&path, &CatalogLimits::default()).is_err());
        let path = temp.path().join("two.zip");
        write_zip(
            &path,
            &[("a/SKILL.md", b"---\n---\n"), ("b/SKILL.md", b"---\n---\n")],
        );
        let error = unpack_archive(&path, &CatalogLimits::default()).unwrap_err();
        assert!(
            error.message.contains("2 skill folders"),
            "{}",
            error.message
        );
    }
}
