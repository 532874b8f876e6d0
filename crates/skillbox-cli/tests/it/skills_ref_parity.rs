//! `validate --strict` against the reference implementation: the real `skills-ref` (PyPI),
//! run on the cases ported from its test suite and on a corpus of varied skills written for the
//! tests (`skillbox_testkit::SkillCorpus`). Verdicts must agree,
//! except for the documented cases where skills-ref's strictyaml refuses valid YAML or accepts
//! what YAML 1.2 and the spec reject.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::support::{SkillCorpus, peer_python, repo_root, skillbox};

/// Cases where skillbox deliberately differs, with skillbox's verdict and why (README, section
/// "Differences from skills-ref").
const DIVERGENCES: &[(&str, bool, &str)] = &[
    (
        "bom-at-start/my-skill",
        true,
        "a UTF-8 byte-order mark before `---` is allowed by YAML; skills-ref refuses it",
    ),
    (
        "metadata-scalar/my-skill",
        false,
        "the spec makes `metadata` a mapping; skills-ref does not check its type",
    ),
    (
        "yaml-divergence-anchor-alias/my-skill",
        true,
        "anchors and aliases are YAML; strictyaml refuses them",
    ),
    (
        "yaml-divergence-explicit-str-tag/my-skill",
        true,
        "`!!str` is a YAML core tag; strictyaml refuses tags",
    ),
    (
        "yaml-divergence-flow-mapping-metadata/my-skill",
        true,
        "flow mappings are YAML; strictyaml refuses them",
    ),
    (
        "yaml-divergence-flow-mapping-whole-frontmatter/my-skill",
        true,
        "a flow-mapping frontmatter is YAML; strictyaml refuses it",
    ),
    (
        "yaml-divergence-flow-sequence-allowed-tools/my-skill",
        true,
        "`[Read, Grep]` is YAML; strictyaml refuses flow style",
    ),
    (
        "yaml-divergence-null-description/my-skill",
        false,
        "`description: null` is null in YAML, so the required field is empty",
    ),
    (
        "yaml-divergence-tilde-description/my-skill",
        false,
        "`description: ~` is null in YAML, so the required field is empty",
    ),
    (
        "yaml-divergence-triple-dash-before-name/my-skill",
        true,
        "a `---` inside a value does not end the frontmatter; skills-ref splits on it",
    ),
];

fn cases_root() -> PathBuf {
    repo_root().join("tests/fixtures/skills-ref-cases")
}

fn skills_ref_verdicts(paths: &[PathBuf]) -> BTreeMap<String, Vec<String>> {
    let output = Command::new(peer_python())
        .arg(repo_root().join("tests/peers/skills_ref_verdicts.py"))
        .args(paths)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn skillbox_strict_verdict(path: &Path) -> bool {
    let output = skillbox()
        .args(["validate", "--spec-only", "--json"])
        .arg(path)
        .output()
        .unwrap();
    match output.status.code() {
        Some(0) => true,
        Some(1) => false,
        other => panic!(
            "validate exited {other:?} for {}:\n{}",
            path.display(),
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

#[test]
fn strict_validation_agrees_with_skills_ref_on_its_own_cases() {
    let expected: BTreeMap<String, serde_json::Value> =
        serde_json::from_str(&fs_err::read_to_string(cases_root().join("EXPECTED.json")).unwrap())
            .unwrap();
    assert!(
        expected.len() >= 70,
        "ported cases went missing: {}",
        expected.len()
    );
    let paths: Vec<PathBuf> = expected
        .keys()
        .map(|case| cases_root().join(case))
        .collect();
    let live = skills_ref_verdicts(&paths);
    let mut disagreements = Vec::new();
    for (case, path) in expected.keys().zip(&paths) {
        let reference_valid = live[&path.display().to_string()].is_empty();
        assert_eq!(
            reference_valid, expected[case]["skills_ref_valid"],
            "installed skills-ref no longer gives the recorded verdict for {case}; regenerate EXPECTED.json"
        );
        let ours = skillbox_strict_verdict(path);
        match DIVERGENCES.iter().find(|(name, _, _)| name == case) {
            Some((_, documented, why)) => {
                assert_eq!(
                    ours, *documented,
                    "{case}: skillbox's documented verdict changed ({why})"
                );
                assert_ne!(
                    ours, reference_valid,
                    "{case} is listed as a divergence but now agrees; remove it ({why})"
                );
            }
            None if ours != reference_valid => {
                disagreements.push(format!(
                    "{case}: skills-ref valid={reference_valid}, skillbox valid={ours}"
                ));
            }
            None => {}
        }
    }
    assert!(
        disagreements.is_empty(),
        "verdicts differ:\n{}",
        disagreements.join("\n")
    );
}

#[test]
fn strict_validation_agrees_with_skills_ref_on_the_corpus() {
    let corpus = SkillCorpus::write();
    let skill_dirs = corpus.skill_folders();
    assert_eq!(
        skill_dirs.len(),
        skillbox_testkit::skill_corpus::CORPUS_SKILLS,
        "the corpus lost skills: {skill_dirs:?}"
    );
    let live = skills_ref_verdicts(&skill_dirs);
    let mut invalid = Vec::new();
    for directory in &skill_dirs {
        let reference_valid = live[&directory.display().to_string()].is_empty();
        let ours = skillbox_strict_verdict(directory);
        assert_eq!(
            ours,
            reference_valid,
            "verdicts differ for {}: skills-ref says {:?}",
            directory.display(),
            live[&directory.display().to_string()]
        );
        if !ours {
            invalid.push(
                directory
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    // One skill of the corpus has a description over the spec's limit.
    assert_eq!(invalid, vec![skillbox_testkit::skill_corpus::INVALID_SKILL]);
}
