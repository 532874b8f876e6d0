//! Reloading after files changed (the hot-reload path): a skill broken mid-edit keeps its last
//! good copy, a new broken skill is skipped as on a first load, and a removed skill is gone.

use skillbox_core::{CatalogOptions, DiagnosticCode, SkillCatalog, SkillRoot};

use crate::{plain_skill_md, skill_md, write};

#[test]
fn a_skill_broken_while_edited_keeps_its_last_good_copy() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path();
    write(&root.join("steady/SKILL.md"), &plain_skill_md("steady"));
    write(
        &root.join("edited/SKILL.md"),
        &skill_md("edited", "First text."),
    );
    write(&root.join("half/SKILL.md"), &skill_md("half", "Whole."));
    let options = CatalogOptions {
        roots: vec![SkillRoot::explicit(root)],
        ..CatalogOptions::default()
    };
    let first = SkillCatalog::load(&options).unwrap();
    assert_eq!(first.len(), 3);

    // `edited` is saved with unclosed frontmatter (skipped on a first load); `half` loads but
    // with an error (its name no longer matches its folder); a new broken skill appears.
    write(
        &root.join("edited/SKILL.md"),
        "---\nname: edited\ndescription: Second",
    );
    write(
        &root.join("half/SKILL.md"),
        &skill_md("Half", "Now invalid."),
    );
    write(&root.join("fresh/SKILL.md"), "---\nname: fresh\n");
    let second = SkillCatalog::reload(&options, &first).unwrap();

    let names: Vec<&str> = second.skills().iter().map(|skill| skill.name()).collect();
    assert_eq!(names, ["edited", "half", "steady"]);
    assert_eq!(second.get("edited").unwrap().description, "First text.");
    assert_eq!(second.get("half").unwrap().description, "Whole.");
    let kept: Vec<&str> = second
        .diagnostics()
        .iter()
        .filter(|d| d.code == DiagnosticCode::SkillKeptLastGood)
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(kept.iter().any(|m| m.contains("`edited`")), "{kept:?}");
    // The new broken skill has no last good copy.
    assert!(
        second
            .skipped()
            .iter()
            .any(|skipped| skipped.path.ends_with("fresh"))
    );
    // A plain load of the same files does not keep anything.
    let plain = SkillCatalog::load(&options).unwrap();
    assert!(plain.get("edited").is_none());

    // Fixed: the new copy is served. Removed: gone, whatever the previous snapshot held.
    write(
        &root.join("edited/SKILL.md"),
        &skill_md("edited", "Third text."),
    );
    std::fs::remove_dir_all(root.join("half")).unwrap();
    let third = SkillCatalog::reload(&options, &second).unwrap();
    assert_eq!(third.get("edited").unwrap().description, "Third text.");
    assert!(third.get("half").is_none());
}
