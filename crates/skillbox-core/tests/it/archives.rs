//! Archives read only as far as asked (issue 15): entries are decompressed when read, never
//! past their declared size, and all the archives of one catalog share one memory budget.

use std::io::Write;
use std::path::{Path, PathBuf};

use skillbox_core::{CatalogLimits, SkillCatalog, SkippedSkill};

use crate::{load, load_with, skill_md};

fn deflated() -> zip::write::SimpleFileOptions {
    zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated)
}

/// An archive holding `SKILL.md` and a stored (uncompressed) `assets/data.bin` whose bytes
/// were changed after its checksum was written, so reading that entry to its end fails.
fn archive_with_a_corrupt_entry(path: &Path) {
    let marker = b"corrupt-me:";
    let mut data = marker.to_vec();
    data.extend(std::iter::repeat_n(b'x', 64 * 1024));
    let mut writer = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    writer.start_file("lazy/SKILL.md", deflated()).unwrap();
    writer
        .write_all(skill_md("lazy", "read lazily").as_bytes())
        .unwrap();
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    writer.start_file("lazy/assets/data.bin", stored).unwrap();
    writer.write_all(&data).unwrap();
    writer.finish().unwrap();
    let mut bytes = fs_err::read(path).unwrap();
    let at = bytes
        .windows(marker.len())
        .position(|window| window == marker)
        .unwrap();
    bytes[at] = b'C';
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn an_archive_entry_is_decompressed_only_when_read() {
    let temp = tempfile::tempdir().unwrap();
    let archive: PathBuf = temp.path().join("lazy.skill");
    archive_with_a_corrupt_entry(&archive);
    let catalog = load(&[&archive]);
    assert!(catalog.skipped().is_empty(), "{:#?}", catalog.skipped());
    let skill = catalog.get("lazy").unwrap();
    assert_eq!(skill.body().unwrap().text.as_ref(), "Body of read lazily");
    let (resources, _) = skill.resources();
    let listed: Vec<(&str, u64)> = resources
        .iter()
        .map(|resource| (resource.path.as_str(), resource.size_bytes))
        .collect();
    let skill_md_bytes = skill_md("lazy", "read lazily").len() as u64;
    assert_eq!(
        listed,
        vec![
            ("SKILL.md", skill_md_bytes),
            ("assets/data.bin", 64 * 1024 + 11)
        ]
    );
    // Only reading the broken entry to its end finds the problem, and says where.
    let (head, truncated) = skill.read_text_file("assets/data.bin", 4).unwrap();
    assert_eq!((head.as_str(), truncated), ("Corr", true));
    let error = skill
        .read_text_file("assets/data.bin", 1024 * 1024)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("assets/data.bin") && error.contains("lazy.skill"),
        "{error}"
    );
}

/// An archive of `name` padded with an incompressible asset to about `bytes` on disk.
fn archive_of_size(folder: &Path, name: &str, bytes: usize) -> PathBuf {
    let path = folder.join(format!("{name}.skill"));
    let mut writer = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    writer
        .start_file(format!("{name}/SKILL.md"), deflated())
        .unwrap();
    writer
        .write_all(skill_md(name, "padded").as_bytes())
        .unwrap();
    writer
        .start_file(format!("{name}/assets/noise.bin"), deflated())
        .unwrap();
    let mut state: u32 = 7;
    let noise: Vec<u8> = (0..bytes)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 24) as u8
        })
        .collect();
    writer.write_all(&noise).unwrap();
    writer.finish().unwrap();
    path
}

/// Of the archives `a-first`, `b-second` and `c-third`, the first two loaded and one was
/// skipped, which is returned.
fn only_the_third_is_skipped(catalog: &SkillCatalog) -> &SkippedSkill {
    let loaded: Vec<&str> = catalog.skills().iter().map(|skill| skill.name()).collect();
    assert_eq!(loaded, vec!["a-first", "b-second"]);
    let [skipped] = catalog.skipped() else {
        panic!("{:#?}", catalog.skipped());
    };
    skipped
}

#[test]
fn archives_share_one_budget_given_in_path_order() {
    let temp = tempfile::tempdir().unwrap();
    let archives: Vec<PathBuf> = ["a-first", "b-second", "c-third"]
        .iter()
        .map(|name| archive_of_size(temp.path(), name, 100 * 1024))
        .collect();
    let size = archives[0].metadata().unwrap().len();
    let limits = CatalogLimits {
        max_catalog_archive_bytes: size * 5 / 2,
        ..CatalogLimits::default()
    };
    let catalog = load_with(&[temp.path()], limits);
    let skipped = only_the_third_is_skipped(&catalog);
    assert_eq!(skipped.path, archives[2]);
    let message = &skipped.diagnostics[0].message;
    assert!(
        message.contains("only") && message.contains("path order"),
        "{message}"
    );
}

#[test]
fn what_archives_expand_to_shares_one_budget_too() {
    let temp = tempfile::tempdir().unwrap();
    for name in ["a-first", "b-second", "c-third"] {
        archive_of_size(temp.path(), name, 100 * 1024);
    }
    let limits = CatalogLimits {
        max_catalog_archive_unpacked_bytes: 250 * 1024,
        ..CatalogLimits::default()
    };
    let catalog = load_with(&[temp.path()], limits);
    let skipped = only_the_third_is_skipped(&catalog);
    assert!(skipped.path.ends_with("c-third.skill"), "{skipped:?}");
    assert!(
        skipped.diagnostics[0].message.contains("expands to"),
        "{:?}",
        skipped.diagnostics
    );
}
