//! The XML prompt is byte-identical to `skills-ref to-prompt` over the same skills.

use std::process::Command;

use skillbox_tools::{PromptFormat, ProviderOptions, SkillsProvider};

use skillbox_testkit::peer_python;

use super::support::{catalog, executor, repo_root};

#[test]
fn xml_prompt_equals_skills_ref_to_prompt_on_the_corpus() {
    for root in [
        "anthropics",
        "openai/curated",
        "openai/system",
        "skill-tools",
    ] {
        let root = repo_root().join("../shared/corpus").join(root);
        let provider =
            SkillsProvider::new(catalog(&[&root]), executor(), ProviderOptions::default());
        let skills = provider.model_skills();
        assert!(!skills.is_empty(), "{}", root.display());
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
}
