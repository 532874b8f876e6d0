//! Unpacking an archive (`.zip`/`.skill` or `.tar.gz`/`.tgz`) held in memory into a staging
//! folder through a [`TreeWriter`]: every name checked, special entries refused, each zip
//! entry's declared size and compression ratio bounded before it is read, and the total bytes
//! unpacked bounded as they are written.

use std::io::{Cursor, Read};
use std::path::Path;

use super::tree::TreeWriter;
use crate::error::InstallError;
use crate::limits::InstallLimits;

/// The archive formats understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArchiveFormat {
    /// `.zip` and `.skill`.
    Zip,
    /// `.tar.gz` and `.tgz`.
    TarGz,
}

impl ArchiveFormat {
    /// The format a name or URL ends with, else the one its bytes start like.
    pub(crate) fn detect(name: &str, bytes: &[u8]) -> Option<ArchiveFormat> {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".zip") || lower.ends_with(".skill") {
            Some(ArchiveFormat::Zip)
        } else if lower.ends_with(".tar.gz") || lower.ends_with(".tgz") {
            Some(ArchiveFormat::TarGz)
        } else if bytes.starts_with(b"PK\x03\x04") {
            Some(ArchiveFormat::Zip)
        } else if bytes.starts_with(&[0x1f, 0x8b]) {
            Some(ArchiveFormat::TarGz)
        } else {
            None
        }
    }
}

/// Unpack `bytes` (an archive of `format`, named `source_text` in messages) into the empty
/// folder `root`.
///
/// # Errors
/// [`InstallError::Refused`] naming the entry for anything unsafe or past the limits.
pub(crate) fn unpack(
    bytes: &[u8],
    format: ArchiveFormat,
    root: &Path,
    source_text: &str,
    limits: &InstallLimits,
) -> Result<(), InstallError> {
    let mut writer = TreeWriter::new(root, source_text, limits);
    match format {
        ArchiveFormat::Zip => unpack_zip(bytes, &mut writer, source_text, limits)?,
        ArchiveFormat::TarGz => unpack_tar_gz(bytes, &mut writer, source_text, limits)?,
    }
    writer.finish()
}

fn unpack_zip(
    bytes: &[u8],
    writer: &mut TreeWriter<'_>,
    source_text: &str,
    limits: &InstallLimits,
) -> Result<(), InstallError> {
    let refused = |message: String| InstallError::refused(source_text, message);
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|error| refused(format!("it is not a readable zip archive ({error})")))?;
    // Two entries of one name: which one a reader takes differs between tools, so what was
    // reviewed with one need not be what is installed.
    if archive.has_duplicate_names() {
        return Err(refused("it holds two entries of the same name".to_owned()));
    }
    if archive.len() > limits.max_source_entries {
        return Err(refused(format!(
            "it holds {} entries; the limit is {}",
            archive.len(),
            limits.max_source_entries
        )));
    }
    for index in 0..archive.len() {
        let mut entry = archive
            .by_index(index)
            .map_err(|error| refused(format!("entry {index} cannot be read ({error})")))?;
        let name = entry.name_raw().to_vec();
        let shown = String::from_utf8_lossy(&name).into_owned();
        let mode = entry.unix_mode().unwrap_or(0o644);
        let kind = mode & 0o170_000;
        if entry.is_dir() {
            writer.folder(&name)?;
            continue;
        }
        if kind == 0o120_000 {
            let mut target = Vec::new();
            (&mut entry)
                .take(4096)
                .read_to_end(&mut target)
                .map_err(|error| refused(format!("link `{shown}` cannot be read ({error})")))?;
            writer.link(&name, &target)?;
            continue;
        }
        if kind != 0 && kind != 0o100_000 {
            return Err(refused(format!(
                "entry `{shown}` is not a regular file, folder or link"
            )));
        }
        let packed = entry.compressed_size().max(1);
        if entry.size() / packed > limits.max_compression_ratio {
            return Err(refused(format!(
                "entry `{shown}` unpacks to {} bytes from {packed}, past a ratio of {} (a zip bomb?)",
                entry.size(),
                limits.max_compression_ratio
            )));
        }
        let declared = entry.size();
        let mut bounded = (&mut entry).take(declared);
        writer.file(&name, &mut bounded, mode & 0o111 != 0)?;
    }
    Ok(())
}

fn unpack_tar_gz(
    bytes: &[u8],
    writer: &mut TreeWriter<'_>,
    source_text: &str,
    limits: &InstallLimits,
) -> Result<(), InstallError> {
    let refused = |message: String| InstallError::refused(source_text, message);
    let decoder = flate2::read::GzDecoder::new(bytes);
    // The whole stream is bounded: a bomb stops at the limit, not at the end of the disk.
    let bounded = decoder.take(limits.max_source_bytes.saturating_add(1024 * 1024));
    let mut archive = tar::Archive::new(bounded);
    let entries = archive
        .entries()
        .map_err(|error| refused(format!("it is not a readable .tar.gz archive ({error})")))?;
    for entry in entries {
        let mut entry =
            entry.map_err(|error| refused(format!("an entry cannot be read ({error})")))?;
        let name = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&name).into_owned();
        let header = entry.header();
        let kind = header.entry_type();
        if kind.is_dir() {
            writer.folder(&name)?;
        } else if kind.is_file() {
            let executable = header.mode().is_ok_and(|mode| mode & 0o111 != 0);
            writer.file(&name, &mut entry, executable)?;
        } else if kind.is_symlink() {
            let target = entry
                .link_name_bytes()
                .map(|target| target.into_owned())
                .unwrap_or_default();
            writer.link(&name, &target)?;
        } else if kind.is_pax_global_extensions()
            || kind.is_pax_local_extensions()
            || kind.is_gnu_longname()
            || kind.is_gnu_longlink()
        {
            continue;
        } else {
            return Err(refused(format!(
                "entry `{shown}` is a {kind:?} entry, not a regular file, folder or link"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, content) in entries {
            writer
                .start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            writer.write_all(content).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    #[test]
    fn zip_slip_and_bombs_are_refused() {
        let limits = InstallLimits::default();
        let temp = tempfile::tempdir().unwrap();
        let slip = zip_of(&[("../evil", b"x")]);
        let error = unpack(&slip, ArchiveFormat::Zip, temp.path(), "a.zip", &limits).unwrap_err();
        assert!(error.to_string().contains("../evil"), "{error}");
        let bomb = zip_of(&[("big", &vec![0u8; 4 * 1024 * 1024])]);
        let temp = tempfile::tempdir().unwrap();
        let error = unpack(&bomb, ArchiveFormat::Zip, temp.path(), "a.zip", &limits).unwrap_err();
        assert!(error.to_string().contains("zip bomb"), "{error}");
    }

    #[test]
    fn a_tar_gz_unpacks_with_modes() {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::default(),
        ));
        let mut header = tar::Header::new_gnu();
        header.set_size(3);
        header.set_mode(0o755);
        header.set_cksum();
        builder
            .append_data(&mut header, "skill/run.sh", &b"hi\n"[..])
            .unwrap();
        let bytes = builder.into_inner().unwrap().finish().unwrap();
        let temp = tempfile::tempdir().unwrap();
        unpack(
            &bytes,
            ArchiveFormat::TarGz,
            temp.path(),
            "a.tgz",
            &InstallLimits::default(),
        )
        .unwrap();
        let mode = std::fs::metadata(temp.path().join("skill/run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }

    use std::os::unix::fs::PermissionsExt;
}
