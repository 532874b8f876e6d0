//! A skill folder swapped after loading: every read of a loaded skill stays inside the folder
//! that was loaded. Replacing the folder (by a symlink to somewhere else, directly or through a
//! link outside the root) makes its reads refuse until a reload, a removed folder has no files,
//! and a nested folder flipping between a real folder and a symlink out of the skill never lets
//! a read through.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use skillbox_core::Skill;

use crate::{load, plain_skill_md, write};

/// What the files outside every skill hold; no read of a skill may return it.
const SECRET: &str = "outside the skill: secret";
/// What the skill's own files hold.
const HARMLESS: &str = "harmless";
/// How long the racing test flips a folder while it reads.
const RACE_DURATION: Duration = Duration::from_secs(2);

/// A folder outside every root holding `secret`, `sub/secret` and `sub/only-outside.txt`, as a
/// swapped-in target.
fn outside_folder(path: &Path) {
    write(&path.join("secret"), SECRET);
    write(&path.join("sub/secret"), SECRET);
    write(&path.join("sub/only-outside.txt"), SECRET);
}

/// A skill folder named `name` at `path` with `secret` and `sub/secret` that are harmless.
fn skill_folder(path: &Path, name: &str) {
    write(&path.join("SKILL.md"), &plain_skill_md(name));
    write(&path.join("secret"), HARMLESS);
    write(&path.join("sub/secret"), HARMLESS);
}

/// Replace `link` (whatever it is) by a symlink to `target` in one rename, as an attacker would.
fn swap_in_symlink(target: &Path, link: &Path) {
    let staged = link.with_extension("staged");
    symlink(target, &staged).unwrap();
    std::fs::rename(&staged, link).unwrap();
}

fn sha256_of(text: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes()).into()
}

/// Every read a client can ask of `skill` refuses, and none shows the swapped-in folder.
fn assert_reads_refused(skill: &Skill) {
    let folder = skill.directory.display().to_string();
    for path in ["secret", "sub/secret", "SKILL.md"] {
        let error = skill.source.read_file(path, 1024).unwrap_err().to_string();
        assert!(
            error.contains("was replaced since it was loaded") && error.contains(&folder),
            "{path}: {error}"
        );
        let digest = skill.source.sha256(path);
        assert!(digest.is_err(), "{path}: {digest:?}");
        assert!(!skill.source.is_file(path), "{path}");
    }
    let (files, more) = skill.source.list_files(100);
    assert!(files.is_empty() && !more, "{files:?}");
    assert!(skill.resources().0.is_empty());
    assert!(skill.read_text_file("secret", 1024).is_err());
    assert!(skill.body().is_err());
}

#[test]
fn a_skill_folder_swapped_for_a_symlink_serves_nothing_of_its_target() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("root");
    let outside = temp.path().join("outside");
    outside_folder(&outside);
    skill_folder(&root.join("swap"), "swap");
    let catalog = load(&[&root]);
    let skill = catalog.get("swap").unwrap();
    assert_eq!(
        skill.source.read_file("secret", 1024).unwrap().0,
        HARMLESS.as_bytes()
    );

    std::fs::rename(root.join("swap"), temp.path().join("moved-away")).unwrap();
    swap_in_symlink(&outside, &root.join("swap"));

    assert_reads_refused(skill);
    // A reload serves what the folder is now: the catalog follows the root, not the old copy.
    let reloaded = load(&[&root]);
    assert!(reloaded.get("swap").is_none());
}

#[test]
fn a_removed_skill_folder_has_no_files() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("root");
    skill_folder(&root.join("gone"), "gone");
    let catalog = load(&[&root]);
    let skill = catalog.get("gone").unwrap();
    std::fs::remove_dir_all(root.join("gone")).unwrap();
    let error = skill.source.read_file("secret", 1024).unwrap_err();
    assert!(
        matches!(&error, skillbox_core::CatalogError::FileNotFound { path } if *path == skill.directory),
        "{error}"
    );
    assert!(skill.source.list_files(100).0.is_empty());
}

#[test]
fn a_skill_folder_reached_through_a_link_outside_the_root_cannot_be_flipped() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("root");
    let attacker = temp.path().join("attacker");
    let outside = temp.path().join("outside");
    outside_folder(&outside);
    skill_folder(&attacker.join("real"), "swap");
    std::fs::create_dir_all(&root).unwrap();
    symlink(attacker.join("real"), attacker.join("d")).unwrap();
    symlink(attacker.join("d"), root.join("swap")).unwrap();
    let catalog = load(&[&root]);
    let skill = catalog.get("swap").unwrap();
    assert_eq!(
        skill.source.read_file("sub/secret", 1024).unwrap().0,
        HARMLESS.as_bytes()
    );

    // The flip happens outside the root: no watcher sees it, so no reload follows.
    swap_in_symlink(&outside, &attacker.join("d"));

    assert_reads_refused(skill);
    // Flipping back serves the loaded folder again.
    swap_in_symlink(&attacker.join("real"), &attacker.join("d"));
    assert_eq!(
        skill.source.read_file("sub/secret", 1024).unwrap().0,
        HARMLESS.as_bytes()
    );
}

#[test]
fn a_nested_folder_flipping_to_a_symlink_out_of_the_skill_never_lets_a_read_through() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("root");
    let outside = temp.path().join("outside");
    outside_folder(&outside);
    let folder = root.join("race");
    skill_folder(&folder, "race");
    // Hidden names, so that neither is part of the skill's listing.
    symlink(outside.join("sub"), folder.join(".link")).unwrap();
    let catalog = load(&[&root]);
    let skill = Arc::clone(catalog.get("race").unwrap());

    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let stop = Arc::clone(&stop);
        let folder = folder.clone();
        std::thread::spawn(move || {
            let (sub, real, link) = (
                folder.join("sub"),
                folder.join(".real"),
                folder.join(".link"),
            );
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                std::fs::rename(&sub, &real).unwrap();
                std::fs::rename(&link, &sub).unwrap();
                std::fs::rename(&sub, &link).unwrap();
                std::fs::rename(&real, &sub).unwrap();
                flips += 1;
            }
            flips
        })
    };
    let secret_digest = sha256_of(SECRET);
    let (mut harmless_reads, mut leaks) = (0u64, Vec::new());
    let started = Instant::now();
    while started.elapsed() < RACE_DURATION {
        match skill.source.read_file("sub/secret", 1024) {
            Ok((bytes, _)) if bytes == HARMLESS.as_bytes() => harmless_reads += 1,
            Ok((bytes, _)) => leaks.push(format!("read {:?}", String::from_utf8_lossy(&bytes))),
            Err(_) => {}
        }
        if skill.source.sha256("sub/secret").ok() == Some(secret_digest) {
            leaks.push("sha256 of the outside file".to_owned());
        }
        let (files, _) = skill.source.list_files(100);
        if let Some(file) = files
            .iter()
            .find(|file| file.relative_path.contains("only-outside"))
        {
            leaks.push(format!("listed {}", file.relative_path));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert!(
        leaks.is_empty(),
        "{} leaks, first: {:?}",
        leaks.len(),
        leaks.first()
    );
    assert!(
        flips > 0 && harmless_reads > 0,
        "{flips} flips, {harmless_reads} reads"
    );
}

/// Walking by descriptor did not change what a skill lists (the trust digest of the same tree
/// is checked in `skillbox-trust`'s digest tests).
#[test]
fn listings_are_what_the_walk_by_path_gave() {
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::tempdir().unwrap();
    let skill = temp.path().join("digest");
    write(&skill.join("SKILL.md"), &plain_skill_md("digest"));
    write(&skill.join("scripts/run.py"), "print(1)\n");
    write(&skill.join("scripts/lib/util.py"), "X = 1\n");
    write(&skill.join(".hidden/x"), "h\n");
    write(&skill.join("node_modules/m.js"), "m\n");
    write(&skill.join("a b/ü.txt"), "u\n");
    symlink("scripts/run.py", skill.join("alias")).unwrap();
    symlink("/etc", skill.join("out")).unwrap();
    std::fs::create_dir_all(skill.join("empty")).unwrap();
    std::fs::set_permissions(
        skill.join("scripts/run.py"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let catalog = load(&[temp.path()]);
    let loaded = catalog.get("digest").unwrap();
    let listed: Vec<(String, u64)> = loaded
        .source
        .list_files(100)
        .0
        .into_iter()
        .map(|file| (file.relative_path, file.size_bytes))
        .collect();
    let expected = [
        ("SKILL.md", 80),
        ("a b/ü.txt", 2),
        ("alias", 9),
        ("scripts/lib/util.py", 6),
        ("scripts/run.py", 9),
    ];
    assert_eq!(
        listed,
        expected
            .iter()
            .map(|(path, size)| ((*path).to_owned(), *size))
            .collect::<Vec<_>>()
    );
    let (first_three, more) = loaded.source.list_files(3);
    assert_eq!(first_three.len(), 3);
    assert!(more);
}
