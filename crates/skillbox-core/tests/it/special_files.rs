//! FIFOs and other special files inside skills: every read the catalog makes refuses them with
//! a message naming the file, and none blocks. Each read runs under a time limit, so a reader
//! that blocks on a FIFO fails its test instead of hanging the suite.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use skillbox_core::{CatalogError, Diagnostic, DiagnosticCode, Skill, SkillCatalog};
use skillbox_testkit::{finishes_within, make_fifo};

use crate::{plain_skill_md, write};

/// Far longer than any of these reads takes; only a blocked read reaches it.
const READ_LIMIT: Duration = Duration::from_secs(10);

const FIFO: &str = "a FIFO (named pipe)";

/// Load the root, failing rather than hanging when a read blocks.
fn load(root: &Path) -> SkillCatalog {
    let root = root.to_path_buf();
    finishes_within(READ_LIMIT, "loading the catalog", move || {
        crate::load(&[&root])
    })
}

fn assert_names_fifo(diagnostic: &Diagnostic, file: &Path) {
    assert_eq!(
        diagnostic.code,
        DiagnosticCode::PathUnreadable,
        "{diagnostic}"
    );
    assert_eq!(diagnostic.file.as_deref(), Some(file), "{diagnostic}");
    assert!(
        diagnostic.message.contains(FIFO)
            && diagnostic.message.contains(&file.display().to_string()),
        "{diagnostic}"
    );
}

#[test]
fn a_fifo_as_skill_md_is_reported_not_skipped_in_silence() {
    let temp = tempfile::tempdir().unwrap();
    let folder = temp.path().join("piped");
    std::fs::create_dir_all(&folder).unwrap();
    make_fifo(&folder.join("SKILL.md"));
    write(&temp.path().join("fine/SKILL.md"), &plain_skill_md("fine"));

    let catalog = load(temp.path());
    assert_eq!(catalog.names().collect::<Vec<_>>(), vec!["fine"]);
    let skipped = catalog.skipped();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0].path, folder);
    assert_names_fifo(&skipped[0].diagnostics[0], &folder.join("SKILL.md"));
}

#[test]
fn a_fifo_as_tools_json_or_skill_toml_is_a_diagnostic_on_the_skill() {
    let temp = tempfile::tempdir().unwrap();
    let tools = temp.path().join("tools-pipe");
    write(&tools.join("SKILL.md"), &plain_skill_md("tools-pipe"));
    make_fifo(&tools.join("tools.json"));
    // A symlink to a FIFO inside the skill passes the containment check, then must be refused.
    let linked = temp.path().join("linked-pipe");
    write(&linked.join("SKILL.md"), &plain_skill_md("linked-pipe"));
    make_fifo(&linked.join("pipe"));
    std::os::unix::fs::symlink("pipe", linked.join("tools.json")).unwrap();
    let manifest = temp.path().join("manifest-pipe");
    write(&manifest.join("SKILL.md"), &plain_skill_md("manifest-pipe"));
    make_fifo(&manifest.join("skill.toml"));

    let catalog = load(temp.path());
    for (name, file) in [
        ("tools-pipe", tools.join("tools.json")),
        ("linked-pipe", linked.join("tools.json")),
        ("manifest-pipe", manifest.join("skill.toml")),
    ] {
        let skill = catalog.get(name).unwrap_or_else(|| panic!("{name} loads"));
        let diagnostic = skill
            .diagnostics
            .iter()
            .find(|d| d.code == DiagnosticCode::PathUnreadable)
            .unwrap_or_else(|| panic!("{name}: {:?}", skill.diagnostics));
        assert_eq!(diagnostic.file.as_deref(), Some(file.as_path()));
        assert!(diagnostic.message.contains(FIFO), "{diagnostic}");
    }
}

#[test]
fn resources_that_are_fifos_or_folders_are_refused_when_read() {
    let temp = tempfile::tempdir().unwrap();
    let folder = temp.path().join("reader");
    write(&folder.join("SKILL.md"), &plain_skill_md("reader"));
    make_fifo(&folder.join("pipe"));
    std::fs::create_dir_all(folder.join("references")).unwrap();
    make_fifo(&folder.join("references/pipe"));
    std::os::unix::fs::symlink("../pipe", folder.join("references/link")).unwrap();
    let catalog = load(temp.path());
    let skill = Arc::clone(catalog.get("reader").unwrap());

    for (relative, kind) in [
        ("pipe", FIFO),
        ("references/pipe", FIFO),
        ("references/link", FIFO),
        ("references", "a folder"),
    ] {
        let reader = Arc::clone(&skill);
        let result = finishes_within(READ_LIMIT, relative, move || {
            reader.read_text_file(relative, 1024)
        });
        match result {
            Err(CatalogError::NotRegularFile { path, kind: found }) => {
                assert_eq!(found, kind, "{relative}");
                assert!(path.ends_with(relative), "{}", path.display());
                let message = CatalogError::NotRegularFile { path, kind }.to_string();
                assert!(message.contains("not a regular file"), "{message}");
            }
            other => panic!("{relative}: {other:?}"),
        }
    }
}

/// A skill `name` holding `relative`, loaded (its file list cached), whose `relative` is then
/// replaced by a FIFO, as a file may be swapped between listing and reading.
fn skill_with_file_swapped_for_fifo(name: &str, relative: &str) -> (tempfile::TempDir, Arc<Skill>) {
    let temp = tempfile::tempdir().unwrap();
    let folder = temp.path().join(name);
    write(&folder.join("SKILL.md"), &plain_skill_md(name));
    if relative != "SKILL.md" {
        write(&folder.join(relative), "data");
    }
    let catalog = load(temp.path());
    let skill = Arc::clone(catalog.get(name).unwrap());
    assert!(skill.resources().0.iter().any(|r| r.path == relative));
    std::fs::remove_file(folder.join(relative)).unwrap();
    make_fifo(&folder.join(relative));
    (temp, skill)
}

fn assert_refuses_fifo(error: &str, relative: &str) {
    assert!(error.contains(FIFO) && error.contains(relative), "{error}");
}

#[test]
fn a_resource_swapped_for_a_fifo_after_listing_gets_no_digest_and_no_hang() {
    let (_temp, skill) = skill_with_file_swapped_for_fifo("digest", "assets/data.txt");
    let error = finishes_within(READ_LIMIT, "the digest", move || {
        skill.resource_sha256("assets/data.txt")
    });
    assert_refuses_fifo(&error.unwrap_err().to_string(), "assets/data.txt");
}

#[test]
fn a_skill_md_swapped_for_a_fifo_fails_the_body_read_clearly() {
    let (_temp, skill) = skill_with_file_swapped_for_fifo("swapped", "SKILL.md");
    let error = finishes_within(READ_LIMIT, "the body", move || skill.body());
    assert_refuses_fifo(&error.unwrap_err().to_string(), "SKILL.md");
}

#[test]
fn an_archive_that_is_a_fifo_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("piped.skill");
    make_fifo(&path);
    let reader = path.clone();
    let error = finishes_within(READ_LIMIT, "unpacking the archive", move || {
        skillbox_core::archive::unpack_archive(&reader, &skillbox_core::CatalogLimits::default())
    })
    .unwrap_err();
    assert_eq!(error.code, DiagnosticCode::ArchiveInvalid);
    assert!(error.message.contains(FIFO), "{error}");
}
