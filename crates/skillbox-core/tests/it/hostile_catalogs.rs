//! Hostile catalogs (issue 15) through the catalog itself: which copy of a name is in effect
//! across roots and versions, and names no model may see.

use crate::{load, skill_md, versioned_skill_md, write};

/// The codes of a skill's diagnostics, as text.
fn codes(skill: &skillbox_core::Skill) -> Vec<&'static str> {
    skill
        .diagnostics
        .iter()
        .map(|diagnostic| diagnostic.code.as_str())
        .collect()
}

#[test]
fn versions_from_earlier_roots_stay_reachable_by_version_only() {
    let temp = tempfile::tempdir().unwrap();
    let (early, late) = (temp.path().join("early"), temp.path().join("late"));
    write(
        &early.join("conv/SKILL.md"),
        &versioned_skill_md("conv", Some("2.0.0"), "early two"),
    );
    write(
        &late.join("conv/SKILL.md"),
        &versioned_skill_md("conv", Some("1.0.0"), "late one"),
    );
    write(
        &early.join("plain/SKILL.md"),
        &versioned_skill_md("plain", None, "early plain"),
    );
    write(
        &late.join("plain/SKILL.md"),
        &versioned_skill_md("plain", Some("0.1.0"), "late plain"),
    );
    let catalog = load(&[&early, &late]);

    // A later root wins for a name, even with a lower version.
    let conv = catalog.get("conv").unwrap();
    assert_eq!(conv.description, "late one");
    assert!(catalog.is_latest(conv));
    let versions: Vec<&str> = catalog
        .versions("conv")
        .map(|skill| skill.description.as_str())
        .collect();
    assert_eq!(versions, vec!["late one", "early two"]);
    let two = catalog.find("conv", Some("2.0.0")).unwrap();
    assert_eq!(two.description, "early two");
    assert!(!catalog.is_latest(two));
    assert!(
        codes(two).contains(&"skill-shadowed"),
        "{:?}",
        two.diagnostics
    );
    assert!(
        codes(conv).contains(&"skill-shadowed"),
        "{:?}",
        conv.diagnostics
    );

    // An unversioned copy in an earlier root can never be asked for: it is shadowed, loudly.
    assert_eq!(catalog.get("plain").unwrap().description, "late plain");
    assert_eq!(catalog.versions("plain").count(), 1);
    let shadowed: Vec<&str> = catalog
        .shadowed()
        .iter()
        .map(|skill| skill.description.as_str())
        .collect();
    assert_eq!(shadowed, vec!["early plain"]);
    let message = &catalog.shadowed()[0].diagnostics[0].message;
    assert!(
        message.contains("it has no version to ask for"),
        "{message}"
    );
}

#[test]
fn build_metadata_finds_the_same_version() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("root");
    write(
        &root.join("tag/SKILL.md"),
        &versioned_skill_md("tag", Some("1.2.3+build.7"), "tagged"),
    );
    let catalog = load(&[&root]);
    for asked in ["1.2.3", "1.2.3+build.7", "1.2.3+other"] {
        assert_eq!(
            catalog.find("tag", Some(asked)).unwrap().description,
            "tagged",
            "{asked}"
        );
    }
    assert!(catalog.find("tag", Some("1.2.4")).is_err());
}

#[test]
fn a_name_no_model_may_see_is_an_error_wherever_it_comes_from() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("root");
    // No `name`: the folder's name stands in, and it holds a zero-width space.
    write(
        &root.join("pdf\u{200B}/SKILL.md"),
        "---\ndescription: Nameless.\n---\nBody.\n",
    );
    // A `skill.toml` too broken to use still names the skill.
    write(
        &root.join("bidi/skill.toml"),
        "name = \"demo.\u{202E}txt\"\nversion = \"1.0.0\"\n",
    );
    write(&root.join("bidi/SKILL.md"), "---\nname: Bidi\n---\nBody.\n");
    let catalog = load(&[&root]);
    let unsafe_name = |name: &str| {
        let skill = catalog
            .skills()
            .iter()
            .chain(catalog.shadowed())
            .find(|skill| skill.name() == name)
            .unwrap_or_else(|| panic!("no skill named {name:?}"));
        assert!(!skill.visible_to_model());
        skill
            .diagnostics
            .iter()
            .find(|diagnostic| {
                diagnostic.code.as_str() == "name-invalid-characters"
                    && diagnostic.severity == skillbox_core::Severity::Error
            })
            .unwrap_or_else(|| panic!("{name:?}: {:#?}", skill.diagnostics))
            .message
            .clone()
    };
    assert_eq!(
        unsafe_name("pdf\u{200B}"),
        "skill name `pdf\\u{200b}` is never offered to a model or run: it contains U+200B (a zero-width character)"
    );
    assert_eq!(
        unsafe_name("demo.\u{202E}txt"),
        "skill name `demo.\\u{202e}txt` is never offered to a model or run: it contains U+202E (a bidirectional-text override or isolate)"
    );
}

#[test]
fn a_path_in_a_root_finds_that_copy_the_latest_root_first() {
    let temp = tempfile::tempdir().unwrap();
    let (early, late) = (temp.path().join("early"), temp.path().join("late"));
    // One root holds two copies of `deploy`; the first in path order is in effect.
    write(
        &early.join("a/deploy/SKILL.md"),
        &versioned_skill_md("deploy", None, "early a"),
    );
    write(
        &early.join("b/deploy/SKILL.md"),
        &versioned_skill_md("deploy", None, "early b"),
    );
    // Both roots hold `vendor/tool`: the later root's is found by the path.
    write(
        &early.join("vendor/tool/SKILL.md"),
        &versioned_skill_md("tool", None, "early tool"),
    );
    write(
        &late.join("vendor/tool/SKILL.md"),
        &versioned_skill_md("tool", None, "late tool"),
    );
    let catalog = load(&[&early, &late]);
    let found = |path: &str| {
        catalog
            .find_by_path(path)
            .map(|skill| skill.description.as_str())
    };
    assert_eq!(found("a/deploy"), Some("early a"));
    assert_eq!(found("b/deploy/SKILL.md"), Some("early b"));
    assert_eq!(found("b/deploy/"), Some("early b"));
    assert_eq!(found("vendor/tool"), Some("late tool"));
    for nothing in [
        "",
        "/",
        "b/../b/deploy",
        "/b/deploy",
        "b//deploy",
        "c/deploy",
    ] {
        assert_eq!(found(nothing), None, "{nothing}");
    }
    let shadowed = catalog.find("b/deploy", None).unwrap();
    assert_eq!(shadowed.description, "early b");
    assert!(!catalog.is_latest(shadowed));
    assert!(catalog.is_latest(catalog.find("a/deploy", None).unwrap()));
}

#[test]
fn one_folder_reached_from_two_roots_is_one_skill_and_no_override() {
    let temp = tempfile::tempdir().unwrap();
    let project = temp.path();
    let (claude, agents) = (
        project.join(".claude/skills"),
        project.join(".agents/skills"),
    );
    write(
        &agents.join("pdf/SKILL.md"),
        &skill_md("pdf", "installed pdf"),
    );
    std::fs::create_dir_all(&claude).unwrap();
    // The link `skillbox add --agent claude` makes, and one by another name.
    std::os::unix::fs::symlink("../../.agents/skills/pdf", claude.join("pdf")).unwrap();
    std::os::unix::fs::symlink(agents.join("pdf"), claude.join("pdf-alias")).unwrap();
    // A real second copy of another skill still overrides, loudly.
    write(&claude.join("notes/SKILL.md"), &skill_md("notes", "first"));
    write(&agents.join("notes/SKILL.md"), &skill_md("notes", "second"));
    let catalog = load(&[&claude, &agents]);

    let pdf = catalog.get("pdf").unwrap();
    assert_eq!(pdf.directory, agents.join("pdf"));
    assert_eq!(catalog.versions("pdf").count(), 1);
    assert!(
        !codes(pdf).contains(&"skill-shadowed"),
        "{:?}",
        pdf.diagnostics
    );
    assert!(
        catalog.shadowed().iter().all(|skill| skill.name() != "pdf"),
        "{:?}",
        catalog.shadowed()
    );
    let shadowing: Vec<&str> = catalog
        .diagnostics()
        .iter()
        .filter(|diagnostic| diagnostic.code.as_str() == "skill-shadowed")
        .map(|diagnostic| diagnostic.message.as_str())
        .collect();
    assert_eq!(shadowing.len(), 1, "{shadowing:?}");
    assert!(shadowing[0].contains("`notes`"), "{shadowing:?}");
    let notes = catalog.get("notes").unwrap();
    assert_eq!(notes.description, "second");
    assert!(codes(notes).contains(&"skill-shadowed"));
}
