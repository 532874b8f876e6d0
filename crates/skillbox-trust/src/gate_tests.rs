//! The trust file and the gate, tested together: what is recorded, and what runs.

use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;

use super::*;
use std::collections::BTreeMap;

use crate::trust_file::{TRUST_FILE_NAME, TrustedRoot};
use crate::verdict::shell_word;
use skillbox_core::{CatalogOptions, SkillCatalog};

#[test]
fn local_sources_are_confirmed_per_lock_and_cover_the_folders_inside() {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join(TRUST_FILE_NAME);
    let mut store = TrustStore::load(&path).unwrap();
    let lock = Path::new("/work/p/skillbox.lock");
    store
        .confirm_local_source(lock, Path::new("/shared/skills"))
        .unwrap();
    store.save().unwrap();
    let store = TrustStore::load(&path).unwrap();
    assert!(store.local_source_confirmed(lock, Path::new("/shared/skills")));
    assert!(store.local_source_confirmed(lock, Path::new("/shared/skills/pdf")));
    assert!(!store.local_source_confirmed(lock, Path::new("/shared")));
    assert!(!store.local_source_confirmed(lock, Path::new("/shared/skills-other")));
    // Another project (a clone elsewhere) has no confirmation of its own.
    let clone = Path::new("/work/clone/skillbox.lock");
    assert!(!store.local_source_confirmed(clone, Path::new("/shared/skills")));
}

struct Project {
    _temp: tempfile::TempDir,
    directory: PathBuf,
    store_path: PathBuf,
}

impl Project {
    fn new() -> Project {
        let temp = tempfile::tempdir().unwrap();
        let directory = fs_err::canonicalize(temp.path()).unwrap().join("project");
        for name in ["alpha", "beta"] {
            let skill = directory.join(".claude/skills").join(name);
            std::fs::create_dir_all(skill.join("scripts")).unwrap();
            std::fs::write(
                skill.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: Does {name}.\n---\nBody.\n"),
            )
            .unwrap();
            std::fs::write(skill.join("scripts/run.py"), "print(1)\n").unwrap();
        }
        let store_path = temp.path().join("config/trust.json");
        Project {
            _temp: temp,
            directory,
            store_path,
        }
    }

    fn root(&self) -> PathBuf {
        self.directory.join(".claude/skills")
    }

    fn roots(&self) -> Vec<SkillRoot> {
        SkillRoot::defaults(&self.directory, None)
    }

    fn catalog(&self) -> SkillCatalog {
        SkillCatalog::load(&CatalogOptions {
            roots: self.roots(),
            ..CatalogOptions::default()
        })
        .unwrap()
    }

    fn gate(&self) -> TrustGate {
        TrustGate::for_roots(&self.roots(), Some(self.store_path.clone()))
    }

    /// Each skill's label, as a listing finds them: the trust file read once.
    fn labels(&self) -> Vec<(String, &'static str)> {
        let catalog = self.catalog();
        let gate = self.gate();
        let store = gate.read_store();
        catalog
            .skills()
            .iter()
            .map(|skill| {
                let label = gate.verdict_with(&store, skill).label();
                assert_eq!(gate.verdict(skill).label(), label, "{}", skill.name());
                (skill.name().to_owned(), label)
            })
            .collect()
    }

    fn trust(&self, policy: Option<TrustPolicy>) -> TrustedRoot {
        let mut store = TrustStore::load(&self.store_path).unwrap();
        let trusted = store.trust_root(&self.root(), policy).unwrap();
        store.save().unwrap();
        trusted
    }
}

fn labels(pairs: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
    pairs
        .iter()
        .map(|(name, label)| ((*name).to_owned(), *label))
        .collect()
}

#[test]
fn project_roots_need_trust_and_pin_notices_changes() {
    let project = Project::new();
    assert_eq!(
        project.labels(),
        labels(&[("alpha", "untrusted"), ("beta", "untrusted")])
    );

    let trusted = project.trust(None);
    assert_eq!(trusted.root, project.root());
    assert_eq!(trusted.entry.policy, TrustPolicy::Pin);
    assert_eq!(
        trusted.entry.skills.keys().collect::<Vec<_>>(),
        vec!["alpha", "beta"]
    );
    assert_eq!(
        project.labels(),
        labels(&[("alpha", "trusted"), ("beta", "trusted")])
    );

    std::fs::write(project.root().join("alpha/scripts/run.py"), "print(2)\n").unwrap();
    let gamma = project.root().join("gamma");
    std::fs::create_dir_all(&gamma).unwrap();
    std::fs::write(
        gamma.join("SKILL.md"),
        "---\nname: gamma\ndescription: New.\n---\n",
    )
    .unwrap();
    assert_eq!(
        project.labels(),
        labels(&[("alpha", "changed"), ("beta", "trusted"), ("gamma", "new")])
    );

    // Re-trusting without a policy keeps the recorded one; `follow` stops pinning.
    project.trust(None);
    let all_trusted = labels(&[
        ("alpha", "trusted"),
        ("beta", "trusted"),
        ("gamma", "trusted"),
    ]);
    assert_eq!(project.labels(), all_trusted);
    assert_eq!(
        project.trust(Some(TrustPolicy::Follow)).entry.policy,
        TrustPolicy::Follow
    );
    std::fs::write(project.root().join("beta/scripts/run.py"), "print(3)\n").unwrap();
    assert_eq!(project.trust(None).entry.policy, TrustPolicy::Follow);
    std::fs::write(project.root().join("beta/scripts/run.py"), "print(4)\n").unwrap();
    assert_eq!(project.labels(), all_trusted);

    let mut store = TrustStore::load(&project.store_path).unwrap();
    store.untrust_root(&project.root()).unwrap();
    store.save().unwrap();
    assert_eq!(project.labels()[0].1, "untrusted");
}

#[test]
fn a_listing_judges_every_skill_by_one_reading_of_the_trust_file() {
    let project = Project::new();
    project.trust(None);
    let catalog = project.catalog();
    let gate = project.gate();
    let store = gate.read_store();
    // Later changes to the file are not seen by verdicts against the earlier reading.
    std::fs::write(&project.store_path, "{").unwrap();
    for skill in catalog.skills() {
        assert_eq!(gate.verdict_with(&store, skill), TrustVerdict::Trusted);
        assert_eq!(gate.verdict(skill).label(), "unverifiable");
    }
    // A gate over roots none of which is gated still reads the file: installed skills
    // run only as installed whatever their root.
    let explicit = TrustGate::for_roots(
        &[SkillRoot::explicit(project.root())],
        Some(project.store_path.clone()),
    );
    assert!(explicit.read_store().is_err());
    // The default gate (library users) reads nothing.
    assert!(matches!(TrustGate::default().read_store(), Ok(None)));
}

#[test]
fn installed_skills_run_only_as_installed_whatever_their_root() {
    let project = Project::new();
    let roots = vec![SkillRoot::explicit(project.root())];
    let catalog = SkillCatalog::load(&CatalogOptions {
        roots: roots.clone(),
        ..CatalogOptions::default()
    })
    .unwrap();
    let alpha = catalog.get("alpha").unwrap();
    let inventory = digest::folder_inventory_at(&alpha.directory).unwrap();
    let lock_path = project.directory.join("skillbox.lock");
    let mut lock = crate::lockfile::SkillLock::new();
    lock.skills.insert(
        "alpha".to_owned(),
        crate::lockfile::LockedSkill {
            source: "./x".to_owned(),
            kind: crate::lockfile::SourceKind::Path,
            path: String::new(),
            reference: None,
            revision: None,
            digest: inventory.digest.clone(),
            files: inventory
                .files
                .iter()
                .map(|(path, file)| (path.clone(), file.into()))
                .collect(),
            links: BTreeMap::new(),
            requires: Vec::new(),
            agents: Vec::new(),
            copies: false,
            servers: BTreeMap::new(),
        },
    );
    std::fs::write(&lock_path, lock.to_text()).unwrap();
    TrustStore::update(&project.store_path, |store| {
        store
            .record_installed(&alpha.directory, &inventory.digest, &lock_path)
            .map(|_| ())
    })
    .unwrap();
    let gate = TrustGate::for_roots(&roots, Some(project.store_path.clone()));
    let store = gate.read_store();
    assert_eq!(
        gate.listed_verdict(&store, alpha),
        Some(TrustVerdict::Trusted)
    );
    let beta = catalog.get("beta").unwrap();
    assert_eq!(gate.listed_verdict(&store, beta), None);
    assert_eq!(gate.verdict(beta), TrustVerdict::Trusted);

    std::fs::write(alpha.directory.join("scripts/run.py"), "print(2)\n").unwrap();
    let TrustVerdict::Untrusted(refusal) = gate.verdict(alpha) else {
        panic!("a changed installed skill is trusted");
    };
    assert_eq!(TrustVerdict::Untrusted(refusal.clone()).label(), "modified");
    let text = refusal.to_string();
    assert!(text.contains("`scripts/run.py` changed"), "{text}");
    assert!(text.contains("skillbox verify"), "{text}");
}

#[test]
fn explicit_environment_and_user_roots_are_trusted() {
    let project = Project::new();
    for origin in [
        RootOrigin::Explicit,
        RootOrigin::Environment,
        RootOrigin::User,
    ] {
        let roots = vec![SkillRoot {
            path: project.root(),
            origin,
        }];
        let catalog = SkillCatalog::load(&CatalogOptions {
            roots: roots.clone(),
            ..CatalogOptions::default()
        })
        .unwrap();
        let gate = TrustGate::for_roots(&roots, Some(project.store_path.clone()));
        let store = gate.read_store();
        for skill in catalog.skills() {
            assert_eq!(gate.listed_verdict(&store, skill), None);
            assert_eq!(gate.verdict(skill), TrustVerdict::Trusted);
        }
    }
    // The same folder reached first as a user root is not held back as a project root.
    let mut roots = vec![SkillRoot {
        path: project.root(),
        origin: RootOrigin::User,
    }];
    roots.extend(project.roots());
    let gate = TrustGate::for_roots(&roots, Some(project.store_path.clone()));
    assert!(gate.gated.is_empty());
}

#[test]
fn a_trust_file_others_could_change_is_not_believed() {
    let project = Project::new();
    project.trust(None);
    let set_mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let folder = project.store_path.parent().unwrap().to_path_buf();
    assert!(TrustStore::load(&project.store_path).is_ok());
    set_mode(&project.store_path, 0o666);
    let error = TrustStore::load(&project.store_path).unwrap_err();
    assert!(matches!(error, TrustError::NotPrivate { .. }), "{error}");
    assert!(error.to_string().contains("mode 666"), "{error}");
    set_mode(&project.store_path, 0o600);
    set_mode(&folder, 0o777);
    let error = TrustStore::load(&project.store_path).unwrap_err();
    assert!(matches!(error, TrustError::NotPrivate { .. }), "{error}");
    set_mode(&folder, 0o700);
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(&project.store_path, Some(4242), None).unwrap();
        let error = TrustStore::load(&project.store_path).unwrap_err();
        assert!(error.to_string().contains("belongs to uid 4242"), "{error}");
    }
}

#[test]
fn the_trust_file_is_private_and_a_corrupt_one_is_named() {
    let project = Project::new();
    project.trust(None);
    let folder_mode = std::fs::metadata(project.store_path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    let file_mode = std::fs::metadata(&project.store_path)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!((folder_mode & 0o777, file_mode & 0o777), (0o700, 0o600));

    let original = fs_err::read_to_string(&project.store_path).unwrap();
    for (edited, expected) in [
        ("{".to_owned(), "EOF while parsing"),
        (
            original.replace("\"version\": 1", "\"version\": 7"),
            "`version` is 7",
        ),
        (
            original.replace("\"pin\"", "\"sometimes\""),
            "unknown variant",
        ),
        (original.replace("sha256:", "md5:"), "is not `sha256:`"),
        (
            original.replace("\"alpha\"", "\"../alpha\""),
            "skill key `../alpha`",
        ),
        (
            original.replace("\"policy\"", "\"extra\": 1, \"policy\""),
            "unknown field",
        ),
    ] {
        std::fs::write(&project.store_path, &edited).unwrap();
        let error = TrustStore::load(&project.store_path)
            .unwrap_err()
            .to_string();
        assert!(error.contains("trust file `"), "{error}");
        assert!(error.contains(expected), "{expected}: {error}");
        // The gate refuses rather than treating the file as empty.
        let catalog = project.catalog();
        match project.gate().verdict(&catalog.skills()[0]) {
            TrustVerdict::Untrusted(Untrusted {
                reason: UntrustedReason::Unverifiable(detail),
                ..
            }) => assert!(detail.contains(expected), "{detail}"),
            other => panic!("{other:?}"),
        }
        // Nothing rewrote it.
        assert_eq!(fs_err::read_to_string(&project.store_path).unwrap(), edited);
    }
}

#[test]
fn trusting_needs_an_existing_root_with_skills_and_untrusting_a_known_one() {
    let project = Project::new();
    let mut store = TrustStore::load(&project.store_path).unwrap();
    let missing = project.directory.join("nope");
    assert!(matches!(
        store.trust_root(&missing, None),
        Err(TrustError::RootMissing { .. })
    ));
    let empty = project.directory.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert!(matches!(
        store.trust_root(&empty, None),
        Err(TrustError::NoSkills { .. })
    ));
    assert!(matches!(
        store.untrust_root(&empty),
        Err(TrustError::UnknownRoot { .. })
    ));
    // A root that is gone can still be untrusted by its recorded path.
    store.trust_root(&project.root(), None).unwrap();
    std::fs::remove_dir_all(project.root()).unwrap();
    assert_eq!(
        store.untrust_root(&project.root()).unwrap().root,
        project.root()
    );
}

#[test]
fn refusals_name_the_skill_the_root_the_reason_and_the_command() {
    let refusal = |reason| {
        Untrusted {
            skill: "hello".to_owned(),
            root: PathBuf::from("/work/my project/.claude/skills"),
            reason,
        }
        .to_string()
    };
    insta::assert_snapshot!(
        [
            refusal(UntrustedReason::NeverTrusted),
            refusal(UntrustedReason::Changed),
            refusal(UntrustedReason::AddedSince),
            refusal(UntrustedReason::Unverifiable("why".to_owned())),
        ]
        .join("\n\n")
    );
    assert_eq!(shell_word(Path::new("/a/b-c/.d")), "/a/b-c/.d");
    assert_eq!(shell_word(Path::new("/it's")), "\"/it's\"");
}
