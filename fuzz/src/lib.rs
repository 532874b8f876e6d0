//! The checks the fuzz targets run, kept in a library so that `cargo test` can replay the seed
//! corpus (and any local corpus or crash artifact) through them on a stable toolchain.
//!
//! Each function must never panic for any input; the `assert!`s below are invariants of the
//! parsers, so a violation shows up as a crash exactly like a panic inside the library.

use skillbox_core::diagnostic::Diagnostic;
use skillbox_core::frontmatter::parse_head;
use skillbox_core::limits::MAX_FRONTMATTER_BYTES;
use skillbox_core::skill_toml::parse_skill_manifest;
use skillbox_core::properties::{PropertiesContext, ValidationMode, interpret};
use skillbox_core::tools_json::parse_tools_manifest;
use skillbox_core::yaml::{YamlNode, YamlValue};

/// Lines a text has for positions: one more than its line breaks (`\n`, `\r\n`, and a lone
/// `\r`, which YAML counts too). A position may point one line past the last break.
fn line_count(data: &[u8]) -> u64 {
    let breaks = data
        .iter()
        .enumerate()
        .filter(|(index, byte)| {
            **byte == b'\n' || (**byte == b'\r' && data.get(index + 1) != Some(&b'\n'))
        })
        .count();
    breaks as u64 + 1
}

/// Lines fall inside the text and columns count from 1.
fn check_diagnostic(diagnostic: &Diagnostic, lines: u64, first_column: u64) {
    assert!(
        !diagnostic.message.trim().is_empty(),
        "diagnostic without a message: {diagnostic:?}"
    );
    if let Some(line) = diagnostic.line {
        assert!(
            (1..=lines + 1).contains(&line),
            "line {line} outside a text of {lines} lines: {diagnostic:?}"
        );
    }
    if let Some(column) = diagnostic.column {
        assert!(column >= first_column, "column {column}: {diagnostic:?}");
    }
}

fn check_node(node: &YamlNode, lines: u64) {
    for position in [node.position, node.key_position].into_iter().flatten() {
        assert!(
            (1..=lines + 1).contains(&position.line),
            "node at line {} outside a text of {lines} lines",
            position.line
        );
    }
    match &node.value {
        YamlValue::Sequence(items) => items.iter().for_each(|item| check_node(item, lines)),
        YamlValue::Mapping(entries) => entries.values().for_each(|item| check_node(item, lines)),
        _ => {}
    }
}

/// `SKILL.md` heads: raw bytes through [`parse_head`] (complete and cut by the read limit),
/// then the fields through [`interpret`] in lenient and strict mode.
pub fn frontmatter(data: &[u8]) {
    let lines = line_count(data);
    for truncated in [false, true] {
        match parse_head(data, truncated, MAX_FRONTMATTER_BYTES) {
            Ok(parsed) => {
                assert!(
                    parsed.body_offset <= data.len() as u64,
                    "body offset {} past the end ({} bytes)",
                    parsed.body_offset,
                    data.len()
                );
                for node in parsed.fields.values() {
                    check_node(node, lines);
                }
                for mode in [ValidationMode::Lenient, ValidationMode::Strict] {
                    for has_skill_manifest in [false, true] {
                        let context = PropertiesContext {
                            directory_name: Some("fuzz-skill"),
                            has_skill_manifest,
                            mode,
                        };
                        let (_, diagnostics) = interpret(&parsed.fields, context);
                        for diagnostic in &diagnostics {
                            check_diagnostic(diagnostic, lines, 1);
                        }
                    }
                }
            }
            Err(diagnostic) => check_diagnostic(&diagnostic, lines, 1),
        }
    }
}

/// `tools.json` and `skill.toml` texts (UTF-8 only, as the loader decodes them first).
pub fn manifests(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines = line_count(data);
    let (_, diagnostics) = parse_tools_manifest(text);
    for diagnostic in &diagnostics {
        check_diagnostic(diagnostic, lines, 1);
    }
    let (_, diagnostics) = parse_skill_manifest(text);
    for diagnostic in &diagnostics {
        check_diagnostic(diagnostic, lines, 1);
    }
}

/// `.zip`/`.skill` archives: any bytes through [`unpack_archive_bytes`]; every file it lists is
/// read to its end, and a read never yields more than the size the listing declares.
pub fn archives(data: &[u8]) {
    use skillbox_core::archive::unpack_archive_bytes;
    use skillbox_core::limits::CatalogLimits;
    let path = std::path::Path::new("fuzz.skill");
    let limits = CatalogLimits {
        max_archive_unpacked_bytes: 4 * 1024 * 1024,
        ..CatalogLimits::default()
    };
    let unpacked = match unpack_archive_bytes(path, data.to_vec(), &limits) {
        Ok(unpacked) => unpacked,
        Err(diagnostic) => {
            assert!(!diagnostic.message.trim().is_empty(), "{diagnostic:?}");
            return;
        }
    };
    let files = &unpacked.files;
    let mut declared_total = 0u64;
    for file in files.files() {
        declared_total += file.size_bytes;
        let mut read = Vec::new();
        match files.copy_to(&file.relative_path, &mut read) {
            Ok(copied) => assert!(
                copied == read.len() as u64 && copied == file.size_bytes,
                "`{}` read {copied} bytes of {} declared",
                file.relative_path,
                file.size_bytes
            ),
            Err(error) => assert!(
                read.len() as u64 <= file.size_bytes,
                "`{}` yielded {} bytes past its declared {} before failing: {error}",
                file.relative_path,
                read.len(),
                file.size_bytes
            ),
        }
    }
    assert!(declared_total <= limits.max_archive_unpacked_bytes);
}
