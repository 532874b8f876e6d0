//! Packaged skills: a `.zip` or `.skill` archive holding one skill folder (or the skill's files
//! at the archive root). The archive is read into memory as it is on disk (compressed) and its
//! central directory is checked under hard limits: entry count, the sum of declared sizes, each
//! entry's compression ratio (zip bombs), and entry names that would leave the skill (zip-slip)
//! or are symlinks are refused outright. Nothing is decompressed then: an entry is decompressed
//! only when it is read, only as far as it is read, and never past its declared size.

use std::collections::BTreeMap;
use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::error::CatalogError;
use crate::limits::CatalogLimits;
use crate::source::{SourceFile, contained_relative_path, open_regular_file};

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

/// The zip reader over an archive's bytes; cloning it is cheap (the central directory is
/// shared), so every read works on its own clone.
type ZipReader = zip::ZipArchive<Cursor<Arc<[u8]>>>;

/// Where one file of the skill sits in the archive.
#[derive(Debug, Clone, Copy)]
struct ArchivedEntry {
    /// Index in the zip's central directory.
    index: usize,
    /// The size the central directory declares; reads never go past it.
    size_bytes: u64,
}

/// The files of one skill packaged in an archive: the archive's bytes as they are on disk, and
/// where each file of the skill sits in them. Holding the bytes rather than reopening the file
/// keeps the catalog a snapshot: what is listed, read, hashed for trust and unpacked for a run
/// are the bytes that were loaded.
pub struct ArchivedFiles {
    /// The archive on disk.
    pub archive_path: PathBuf,
    bytes: Arc<[u8]>,
    zip: ZipReader,
    entries: BTreeMap<String, ArchivedEntry>,
    unpacked_bytes: u64,
    content_digest: OnceLock<String>,
    trust_digest: OnceLock<String>,
}

impl std::fmt::Debug for ArchivedFiles {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ArchivedFiles")
            .field("archive_path", &self.archive_path)
            .field("archive_bytes", &self.bytes.len())
            .field("files", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl ArchivedFiles {
    /// Whether the skill has a file at this relative path (already normalised).
    #[must_use]
    pub fn contains(&self, relative: &str) -> bool {
        self.entries.contains_key(relative)
    }

    /// How many files the skill has.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the skill has no files (never true for a loaded skill: it has `SKILL.md`).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The skill's files in path order with their declared sizes.
    pub fn files(&self) -> impl Iterator<Item = SourceFile> + '_ {
        self.entries.iter().map(|(path, entry)| SourceFile {
            relative_path: path.clone(),
            size_bytes: entry.size_bytes,
        })
    }

    /// Bytes the skill's files take unpacked (the sum of their declared sizes, which reads
    /// never pass).
    #[must_use]
    pub fn unpacked_bytes(&self) -> u64 {
        self.unpacked_bytes
    }

    /// The sha256 of the archive's bytes as 64 hex digits, computed once: two archives with
    /// this digest hold the same skill, whatever their paths.
    pub fn content_digest(&self) -> &str {
        self.content_digest.get_or_init(|| {
            use sha2::{Digest, Sha256};
            hex::encode(Sha256::digest(&self.bytes))
        })
    }

    /// The trust digest of the skill's files, computed by `compute` on first success and kept:
    /// the bytes held cannot change, so neither can their digest.
    ///
    /// # Errors
    /// What `compute` returns.
    pub fn trust_digest_once<E>(
        &self,
        compute: impl FnOnce(&Self) -> Result<String, E>,
    ) -> Result<String, E> {
        if let Some(digest) = self.trust_digest.get() {
            return Ok(digest.clone());
        }
        let digest = compute(self)?;
        Ok(self.trust_digest.get_or_init(|| digest).clone())
    }

    /// Hand `read` a reader of one file, decompressing only as far as `read` reads. The reader
    /// fails rather than go past the entry's declared size, and the zip's checksum is checked
    /// when the entry is read to its end; either failure names the archive and the file.
    ///
    /// # Errors
    /// [`CatalogError::FileNotFound`] when the skill has no such file, or
    /// [`CatalogError::Io`] when the entry cannot be read.
    pub fn read_with<T>(
        &self,
        relative: &str,
        read: impl FnOnce(&mut dyn Read) -> std::io::Result<T>,
    ) -> Result<T, CatalogError> {
        let entry = self
            .entries
            .get(relative)
            .ok_or_else(|| CatalogError::FileNotFound {
                path: self.archive_path.join(relative),
            })?;
        let unreadable = |error: &dyn std::fmt::Display| {
            CatalogError::Io(format!(
                "cannot read `{relative}` from archive `{}`: {error}",
                self.archive_path.display()
            ))
        };
        let mut zip = self.zip.clone();
        let file = zip
            .by_index(entry.index)
            .map_err(|error| unreadable(&error))?;
        let mut bounded = DeclaredSize {
            inner: file,
            remaining: entry.size_bytes,
        };
        read(&mut bounded).map_err(|error| unreadable(&error))
    }

    /// Decompress one file into `writer`, a buffer at a time.
    ///
    /// # Errors
    /// As [`ArchivedFiles::read_with`], and when writing fails.
    pub fn copy_to(&self, relative: &str, writer: &mut impl Write) -> Result<u64, CatalogError> {
        self.read_with(relative, |reader| std::io::copy(reader, writer))
    }
}

/// A reader that yields at most the entry's declared size and fails if the entry goes on past
/// it (a header that lies about its size).
struct DeclaredSize<R> {
    inner: R,
    remaining: u64,
}

impl<R: Read> Read for DeclaredSize<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        if buffer.is_empty() {
            return Ok(0);
        }
        if self.remaining == 0 {
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the entry expands past the size its header declares",
                )),
            };
        }
        let window = usize::try_from(self.remaining)
            .unwrap_or(usize::MAX)
            .min(buffer.len());
        let read = self.inner.read(&mut buffer[..window])?;
        if read == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the entry ends before the size its header declares",
            ));
        }
        self.remaining -= read as u64;
        Ok(read)
    }
}

/// A packaged skill as read from its archive: the skill's files and the folder name they came
/// from.
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

/// Read a skill archive and check its central directory; no entry is decompressed.
///
/// # Errors
/// A diagnostic naming the archive when it is unreadable, not a zip, unsafe (entry names with
/// `..` or absolute paths, symlinks), too large, too compressed, or holds no single skill.
pub fn unpack_archive(path: &Path, limits: &CatalogLimits) -> Result<UnpackedArchive, Diagnostic> {
    unpack_archive_within(path, limits, limits.max_archive_bytes)
}

/// [`unpack_archive`] for an archive the catalog gave at most `allowance_bytes` of its
/// archive budget.
pub(crate) fn unpack_archive_within(
    path: &Path,
    limits: &CatalogLimits,
    allowance_bytes: u64,
) -> Result<UnpackedArchive, Diagnostic> {
    let unreadable = |error: &dyn std::fmt::Display| {
        archive_error(
            path,
            error.to_string(),
            "name a `.zip`/`.skill` file you may read",
        )
    };
    // Opened before its size is read, so the size is that of the file being read; a FIFO or
    // device is refused instead of read (a FIFO would block the catalog forever).
    let file = open_regular_file(path).map_err(|error| unreadable(&error))?;
    let size = file.metadata().map_err(|error| unreadable(&error))?.len();
    let limit = limits.max_archive_bytes.min(allowance_bytes);
    let too_large = |size: u64| {
        archive_error(
            path,
            format!("archive is {size} bytes; the limit is {limit}"),
            "ship large assets outside the skill, or unpack the archive into a skill folder",
        )
    };
    if size > limit {
        return Err(too_large(size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // The file may grow after its size was read: never read past the limit.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| unreadable(&error))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    unpack_archive_bytes(path, bytes, limits)
}

/// [`unpack_archive`] over an archive's bytes already in memory; `path` names it in messages.
///
/// # Errors
/// As [`unpack_archive`], except for reading the file.
pub fn unpack_archive_bytes(
    path: &Path,
    bytes: Vec<u8>,
    limits: &CatalogLimits,
) -> Result<UnpackedArchive, Diagnostic> {
    refuse_too_many_records(path, &bytes, limits)?;
    let bytes: Arc<[u8]> = Arc::from(bytes);
    let mut zip = zip::ZipArchive::new(Cursor::new(Arc::clone(&bytes))).map_err(|error| {
        archive_error(
            path,
            format!("not a readable zip archive: {error}"),
            "re-create the archive with `zip -r`",
        )
    })?;
    let entries = checked_entries(path, &mut zip, limits)?;
    let (entries, folder_name) = skill_layout(path, entries)?;
    let unpacked_bytes = entries.values().map(|entry| entry.size_bytes).sum();
    Ok(UnpackedArchive {
        files: Arc::new(ArchivedFiles {
            archive_path: path.to_path_buf(),
            bytes,
            zip,
            entries,
            unpacked_bytes,
            content_digest: OnceLock::new(),
            trust_digest: OnceLock::new(),
        }),
        folder_name,
    })
}

/// The bytes that open every central directory record of a zip.
const CENTRAL_DIRECTORY_SIGNATURE: &[u8] = b"PK\x01\x02";

/// Refuse an archive whose bytes hold more central directory records than it may have
/// entries, before the zip reader parses them: it parses every record the archive's end
/// record announces, a few hundred bytes of memory each (a 61 MB archive of 1.2 million
/// records took 380 MB before its entry count could be checked). Each record starts with the
/// signature, so counting signatures bounds what the reader can parse, whichever end record
/// it settles on.
fn refuse_too_many_records(
    path: &Path,
    bytes: &[u8],
    limits: &CatalogLimits,
) -> Result<(), Diagnostic> {
    let too_many = memchr::memmem::find_iter(bytes, CENTRAL_DIRECTORY_SIGNATURE)
        .nth(limits.max_archive_entries)
        .is_some();
    if too_many {
        return Err(archive_error(
            path,
            format!(
                "archive holds more than {} central directory records; the limit is {} entries",
                limits.max_archive_entries, limits.max_archive_entries
            ),
            "package only the skill folder (zips stored uncompressed inside it count too)",
        ));
    }
    Ok(())
}

/// The archive's files by normalised path, after checking every entry of the central
/// directory against the limits.
fn checked_entries(
    path: &Path,
    zip: &mut ZipReader,
    limits: &CatalogLimits,
) -> Result<BTreeMap<String, ArchivedEntry>, Diagnostic> {
    // Defence in depth: `refuse_too_many_records` already let through at most this many
    // central directory signatures, and the zip reader checks the signature of every record,
    // so this cannot fire with the reader in use; it keeps the limit should either change.
    if zip.len() > limits.max_archive_entries {
        return Err(archive_error(
            path,
            format!(
                "archive has {} entries; the limit is {}",
                zip.len(),
                limits.max_archive_entries
            ),
            "package only the skill folder",
        ));
    }
    let mut entries = BTreeMap::new();
    let mut declared_total: u64 = 0;
    for index in 0..zip.len() {
        let entry = zip.by_index_raw(index).map_err(|error| {
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
        // Reads never go past an entry's declared size, so the declared sizes bound what the
        // archive can ever expand to.
        declared_total = declared_total.saturating_add(declared);
        if declared_total > limits.max_archive_unpacked_bytes {
            return Err(archive_error(
                path,
                format!(
                    "archive expands past {} bytes",
                    limits.max_archive_unpacked_bytes
                ),
                "this archive is too large or unsafe",
            ));
        }
        entries.insert(
            relative,
            ArchivedEntry {
                index,
                size_bytes: declared,
            },
        );
    }
    Ok(entries)
}

/// Where the skill sits in the archive: its files relative to the skill folder, and the
/// folder's name.
fn skill_layout(
    path: &Path,
    entries: BTreeMap<String, ArchivedEntry>,
) -> Result<(BTreeMap<String, ArchivedEntry>, String), Diagnostic> {
    let is_skill_md = |name: &str| name == "SKILL.md" || name == "skill.md";
    // Layout 1: SKILL.md at the archive root.
    if entries.keys().any(|name| is_skill_md(name)) {
        let stem = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        return Ok((entries, stem));
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
                .filter_map(|(name, entry)| {
                    name.strip_prefix(&prefix)
                        .map(|rest| (rest.to_owned(), entry))
                })
                .collect();
            Ok((files, folder))
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
        let listed: Vec<String> = unpacked
            .files
            .files()
            .map(|file| file.relative_path)
            .collect();
        assert_eq!(listed, vec!["SKILL.md", "scripts/a.py"]);
        let mut script = Vec::new();
        unpacked.files.copy_to("scripts/a.py", &mut script).unwrap();
        assert_eq!(script, b"print(1)");
    }

    #[test]
    fn a_read_never_passes_the_declared_size_and_a_bad_checksum_is_named() {
        let path = Path::new("seed.zip");
        let lying = include_bytes!("../../../fuzz/seeds/archives/lying-size.zip");
        let unpacked =
            unpack_archive_bytes(path, lying.to_vec(), &CatalogLimits::default()).unwrap();
        let mut read = Vec::new();
        let error = unpacked
            .files
            .copy_to("lies.bin", &mut read)
            .unwrap_err()
            .to_string();
        assert!(read.len() <= 8, "{} bytes of 8 declared", read.len());
        assert!(
            error.contains("declared") && error.contains("lies.bin"),
            "{error}"
        );
        let corrupt = include_bytes!("../../../fuzz/seeds/archives/corrupt-entry.zip");
        let unpacked =
            unpack_archive_bytes(path, corrupt.to_vec(), &CatalogLimits::default()).unwrap();
        let error = unpacked
            .files
            .copy_to("data.bin", &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("data.bin") && error.contains("seed.zip"),
            "{error}"
        );
    }

    #[test]
    fn too_many_records_are_refused_before_the_directory_is_parsed() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("records.zip");
        let names: Vec<String> = (0..1_000).map(|index| format!("{index:x}")).collect();
        let mut entries: Vec<(&str, &[u8])> = vec![("SKILL.md", b"---\n---\n")];
        entries.extend(names.iter().map(|name| (name.as_str(), &b""[..])));
        write_zip(&path, &entries);
        let limits = CatalogLimits {
            max_archive_entries: 100,
            ..CatalogLimits::default()
        };
        let error = unpack_archive(&path, &limits).unwrap_err();
        assert!(
            error
                .message
                .contains("more than 100 central directory records"),
            "{}",
            error.message
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
