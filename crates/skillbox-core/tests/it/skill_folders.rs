//! Which folders are skills, and which of their files loading reads, in the corner cases of
//! naming: `SKILL.md` as a folder or a symlink, both spellings at once, sidecars that are folders
//! or symlinks. Discovery decides this by looking names up in each folder; these cases pin the
//! decisions to those a listing of the folder gives.

use std::os::unix::fs::symlink;

use skillbox_core::DiagnosticCode;

use crate::{load, plain_skill_md, write};

#[test]
fn naming_corner_cases_decide_as_a_listing_would() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path();
    // A folder named SKILL.md does not count; skill.md does.
    std::fs::create_dir_all(root.join("folder-named/SKILL.md")).unwrap();
    write(
        &root.join("folder-named/skill.md"),
        &plain_skill_md("folder-named"),
    );
    // A dangling SKILL.md symlink makes the folder no skill (skill.md is not consulted), so
    // discovery goes on into its subfolders.
    write(&root.join("dangling/skill.md"), &plain_skill_md("dangling"));
    symlink("missing.md", root.join("dangling/SKILL.md")).unwrap();
    write(
        &root.join("dangling/inner/SKILL.md"),
        &plain_skill_md("inner"),
    );
    // A symlink to a file inside the skill counts.
    write(&root.join("linked/real.md"), &plain_skill_md("linked"));
    symlink("real.md", root.join("linked/SKILL.md")).unwrap();
    // Both spellings: SKILL.md wins.
    write(&root.join("both/SKILL.md"), &plain_skill_md("both"));
    write(&root.join("both/skill.md"), &plain_skill_md("lowercase"));
    // A folder named tools.json is not a manifest; a symlink to one inside the skill is.
    write(
        &root.join("tools-folder/SKILL.md"),
        &plain_skill_md("tools-folder"),
    );
    std::fs::create_dir_all(root.join("tools-folder/tools.json")).unwrap();
    write(
        &root.join("tools-link/SKILL.md"),
        &plain_skill_md("tools-link"),
    );
    write(
        &root.join("tools-link/real-tools.json"),
        r#"[{"name": "count_words", "description": "Count words."}]"#,
    );
    symlink("real-tools.json", root.join("tools-link/tools.json")).unwrap();

    let catalog = load(&[root]);
    let found: Vec<(&str, &str)> = catalog
        .skills()
        .iter()
        .map(|skill| (skill.name(), skill.skill_md_name.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![
            ("both", "SKILL.md"),
            ("folder-named", "skill.md"),
            ("inner", "SKILL.md"),
            ("linked", "SKILL.md"),
            ("tools-folder", "SKILL.md"),
            ("tools-link", "SKILL.md"),
        ]
    );
    assert!(catalog.skipped().is_empty(), "{:?}", catalog.skipped());
    let tools_folder = catalog.get("tools-folder").unwrap();
    assert!(
        tools_folder.tools.is_empty()
            && !tools_folder
                .diagnostics
                .iter()
                .any(|d| d.code == DiagnosticCode::PathUnreadable),
        "{:?}",
        tools_folder.diagnostics
    );
    let tools_link = catalog.get("tools-link").unwrap();
    assert_eq!(
        tools_link
            .tools
            .iter()
            .map(|tool| tool.name.as_str())
            .collect::<Vec<_>>(),
        vec!["count_words"]
    );
}

/// The resolved `SKILL.md` path prompts show is the canonical one however the folder was
/// reached: a root given as a link, a skill folder that is a link, a
/// `SKILL.md` that is a link to a file elsewhere in the skill, and plain folders (whose path
/// discovery resolves as it walks instead of asking the filesystem afterwards).
#[test]
fn resolved_skill_md_paths_are_canonical_however_the_folder_was_reached() {
    let temp = tempfile::tempdir().unwrap();
    let base = temp.path();
    let real_root = base.join("real-root");
    write(&real_root.join("plain/SKILL.md"), &plain_skill_md("plain"));
    write(
        &real_root.join("group/nested/SKILL.md"),
        &plain_skill_md("nested"),
    );
    write(
        &base.join("elsewhere/target/SKILL.md"),
        &plain_skill_md("target"),
    );
    symlink(
        base.join("elsewhere/target"),
        real_root.join("linked-folder"),
    )
    .unwrap();
    write(
        &real_root.join("linked-file/docs/real.md"),
        &plain_skill_md("linked-file"),
    );
    symlink("docs/real.md", real_root.join("linked-file/SKILL.md")).unwrap();
    symlink(&real_root, base.join("root-link")).unwrap();

    for root in [base.join("root-link"), real_root.clone()] {
        let catalog = load(&[&root]);
        let mut names: Vec<&str> = catalog.skills().iter().map(|skill| skill.name()).collect();
        names.sort_unstable();
        assert_eq!(names, ["linked-file", "nested", "plain", "target"]);
        for skill in catalog.skills() {
            let expected = std::fs::canonicalize(&skill.skill_md_path).unwrap();
            assert_eq!(
                skill.resolved_skill_md_path(),
                &expected,
                "{}",
                skill.name()
            );
            assert!(expected.is_absolute());
        }
    }
}
