//! The XML prompt is byte-identical to `skills-ref to-prompt` over the same skills: those of
//! the corpus written for the tests (`skillbox_testkit::SkillCorpus`), group by group.

use std::process::Command;

use skillbox_tools::{PromptFormat, ProviderOptions, SkillsProvider};

use skillbox_testkit::peer_python;

use super::support::{catalog, executor, repo_root};

#[test]
fn xml_prompt_equals_skills_ref_to_prompt_on_the_corpus() {
    let corpus = skillbox_testkit::SkillCorpus::write();
    let mut compared = 0;
    for (group, skills_in_it) in [
        ("studio", 12),
        ("agents/curated", 6),
        ("agents/system", 2),
        ("tool-skills", 1),
        ("plugins", 3),
    ] {
        let root = corpus.group(group);
        let provider =
            SkillsProvider::new(catalog(&[&root]), executor(), ProviderOptions::default());
        let skills = provider.model_skills();
        assert_eq!(skills.len(), skills_in_it, "{}", root.display());
        compared += skills.len();
        let ours = provider.system_prompt(PromptFormat::Xml);
        let directories: Vec<_> = skills.iter().map(|skill| skill.directory.clone()).collect();
        let output = Command::new(peer_python())
            .arg(repo_root().join("tests/peers/skills_ref_verdicts.py"))
            .arg("--to-prompt")
            .args(&directories)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let reference = String::from_utf8(output.stdout).unwrap();
        assert_eq!(
            ours,
            reference.strip_suffix('\n').unwrap_or(&reference),
            "{}",
            root.display()
        );
    }
    assert!(compared >= 20, "only {compared} skills compared");
}
