//! Discovery: roots and their precedence, nesting, limits, versions, archives, filters.

use std::io::Write;
use std::path::Path;

use super::support::{SkillCorpus, json_stdout, skill_md, skillbox, write_tree};

fn list_json(command: &mut assert_cmd::Command) -> (serde_json::Value, String) {
    let output = command.output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        json_stdout(&output),
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn names(listing: &serde_json::Value) -> Vec<String> {
    listing
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn default_roots_later_project_roots_override_earlier_and_user_roots_loudly() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let project = temp.path().join("project");
    write_tree(
        &home,
        &[(
            ".agents/skills/shared/SKILL.md",
            &skill_md("shared", "From the user."),
        )],
    );
    write_tree(
        &home,
        &[(
            ".claude/skills/personal/SKILL.md",
            &skill_md("personal", "Only the user's."),
        )],
    );
    write_tree(
        &project,
        &[(
            "skills/shared/SKILL.md",
            &skill_md("shared", "From skills/."),
        )],
    );
    write_tree(
        &project,
        &[(
            ".agents/skills/shared/SKILL.md",
            &skill_md("shared", "From .agents/skills."),
        )],
    );
    let (listing, stderr) = list_json(
        skillbox()
            .current_dir(&project)
            .env("HOME", &home)
            .args(["list", "--json"]),
    );
    assert_eq!(names(&listing), vec!["personal", "shared"]);
    assert_eq!(listing[1]["description"], "From .agents/skills.");
    // Both overridden copies are reported, never dropped silently.
    assert_eq!(
        stderr.matches("warning[skill-shadowed]").count(),
        2,
        "{stderr}"
    );
    assert!(stderr.contains("a later root wins"), "{stderr}");
}

#[test]
fn environment_roots_replace_the_defaults_and_flags_replace_both() {
    let temp = tempfile::tempdir().unwrap();
    write_tree(
        temp.path(),
        &[(
            "skills/default-one/SKILL.md",
            &skill_md("default-one", "Default."),
        )],
    );
    write_tree(
        temp.path(),
        &[("a/env-one/SKILL.md", &skill_md("env-one", "Env."))],
    );
    write_tree(
        temp.path(),
        &[("b/env-two/SKILL.md", &skill_md("env-two", "Env."))],
    );
    write_tree(
        temp.path(),
        &[("c/flag-one/SKILL.md", &skill_md("flag-one", "Flag."))],
    );
    let roots = format!(
        "{}:{}",
        temp.path().join("a").display(),
        temp.path().join("b").display()
    );
    let (listing, _) = list_json(
        skillbox()
            .current_dir(temp.path())
            .env("HOME", temp.path())
            .env("SKILLBOX_ROOTS", &roots)
            .args(["list", "--json"]),
    );
    assert_eq!(names(&listing), vec!["env-one", "env-two"]);
    let (listing, _) = list_json(
        skillbox()
            .current_dir(temp.path())
            .env("SKILLBOX_ROOTS", &roots)
            .args(["list", "--json", "--root", "c"]),
    );
    assert_eq!(names(&listing), vec!["flag-one"]);
}

#[test]
fn nested_skills_in_the_corpus_are_found() {
    let corpus = SkillCorpus::write();
    // A catalog nested by maturity (`curated/`, `experimental/`, `system/`).
    let (listing, _) = list_json(
        skillbox()
            .args(["list", "--json"])
            .arg(corpus.group("agents")),
    );
    let found = names(&listing);
    assert!(
        found.contains(&"ci-fix".to_owned()) && found.contains(&"plan-writer".to_owned()),
        "{found:?}"
    );
    assert_eq!(found.len(), 10, "{found:?}");
    // A plugin marketplace: skills under `plugins/NAME/skills/`, beside hidden
    // `.claude-plugin/` folders that hold no skill.
    let (listing, _) = list_json(
        skillbox()
            .args(["list", "--json"])
            .arg(corpus.group("plugins")),
    );
    assert_eq!(
        names(&listing),
        vec!["changelog-writer", "readme-refresh", "version-bump"]
    );
    // The whole corpus, every group at once.
    let (listing, _) = list_json(skillbox().args(["list", "--json"]).arg(corpus.root()));
    assert_eq!(
        names(&listing).len(),
        skillbox_testkit::skill_corpus::CORPUS_SKILLS
    );
}

#[test]
fn hidden_folders_node_modules_and_too_deep_folders_are_not_searched() {
    let temp = tempfile::tempdir().unwrap();
    write_tree(
        temp.path(),
        &[("visible/SKILL.md", &skill_md("visible", "Found."))],
    );
    write_tree(
        temp.path(),
        &[(".hidden/secret/SKILL.md", &skill_md("secret", "Hidden."))],
    );
    write_tree(
        temp.path(),
        &[("node_modules/pkg/SKILL.md", &skill_md("pkg", "Vendored."))],
    );
    write_tree(
        temp.path(),
        &[(
            "a/b/c/d/e/f/g/deep/SKILL.md",
            &skill_md("deep", "Too deep."),
        )],
    );
    let (listing, _) = list_json(skillbox().args(["list", "--json"]).arg(temp.path()));
    assert_eq!(names(&listing), vec!["visible"]);
}

#[cfg(unix)]
#[test]
fn symlink_loops_are_reported_not_followed_forever() {
    let temp = tempfile::tempdir().unwrap();
    write_tree(
        temp.path(),
        &[("group/one/SKILL.md", &skill_md("one", "One."))],
    );
    std::os::unix::fs::symlink(temp.path(), temp.path().join("group/loop")).unwrap();
    let (listing, stderr) = list_json(
        skillbox()
            .args(["list", "--json"])
            .arg(temp.path())
            .timeout(std::time::Duration::from_secs(20)),
    );
    assert_eq!(names(&listing), vec!["one"]);
    assert!(stderr.contains("symlink loop"), "{stderr}");
}

#[test]
fn versions_coexist_and_latest_is_by_semver_not_string_order() {
    let (listing, _) = list_json(skillbox().args([
        "list",
        "--json",
        "examples/skills",
        "--include",
        "text.stats",
    ]));
    let versions: Vec<(&str, bool)> = listing
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| {
            (
                skill["version"].as_str().unwrap(),
                skill["latest"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(versions, vec![("0.10.0", true), ("0.9.0", false)]);
    let output = skillbox()
        .args(["show", "--json", "--root", "examples/skills", "text.stats"])
        .output()
        .unwrap();
    assert_eq!(json_stdout(&output)["version"], "0.10.0");
    let output = skillbox()
        .args([
            "show",
            "--json",
            "--root",
            "examples/skills",
            "text.stats",
            "--version",
            "0.9.0",
        ])
        .output()
        .unwrap();
    let old = json_stdout(&output);
    assert_eq!(old["version"], "0.9.0");
    assert_eq!(old["title"], "Text Statistics");
    assert_eq!(old["manifest"]["kind"], "action");
}

#[test]
fn include_and_exclude_take_globs() {
    let (listing, _) = list_json(skillbox().args([
        "list",
        "--json",
        "examples/skills",
        "--include",
        "text*",
        "--exclude",
        "text.stats",
    ]));
    assert_eq!(names(&listing), vec!["text-tools"]);
    let output = skillbox()
        .args(["list", "examples/skills", "--include", "[unclosed"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid name pattern `[unclosed`"));
}

fn write_zip(path: &Path, entries: &[(&str, &[u8])]) {
    let file = std::fs::File::create(path).unwrap();
    let mut writer = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default();
    for (name, bytes) in entries {
        writer.start_file(*name, options).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap();
}

#[test]
fn packaged_skills_load_read_only_and_unsafe_archives_are_refused() {
    let temp = tempfile::tempdir().unwrap();
    let packaged = skill_md("packaged", "Comes in a .skill archive.");
    write_zip(
        &temp.path().join("packaged.skill"),
        &[
            ("packaged/SKILL.md", packaged.as_bytes()),
            ("packaged/scripts/run.py", b"print('hi')\n"),
        ],
    );
    write_zip(
        &temp.path().join("evil.zip"),
        &[
            ("SKILL.md", skill_md("evil", "Escapes.").as_bytes()),
            ("../../escape.txt", b"owned"),
        ],
    );
    let (listing, stderr) = list_json(skillbox().args(["list", "--json"]).arg(temp.path()));
    assert_eq!(names(&listing), vec!["packaged"]);
    assert_eq!(listing[0]["archived"], true);
    assert!(
        stderr.contains("error[archive-invalid]") && stderr.contains("evil.zip"),
        "{stderr}"
    );
    assert!(!temp.path().parent().unwrap().join("escape.txt").exists());
    let output = skillbox()
        .args(["show", "--json", "packaged", "--root"])
        .arg(temp.path())
        .output()
        .unwrap();
    let view = json_stdout(&output);
    let resources: Vec<&str> = view["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(resources, vec!["SKILL.md", "scripts/run.py"]);
    assert_eq!(view["body"], "# packaged\n\nInstructions.");
}

#[test]
fn a_broken_skill_is_reported_and_the_rest_still_load() {
    let temp = tempfile::tempdir().unwrap();
    write_tree(
        temp.path(),
        &[("fine/SKILL.md", &skill_md("fine", "Fine."))],
    );
    write_tree(
        temp.path(),
        &[(
            "broken/SKILL.md",
            "---\nname: broken\ndescription: [unclosed\n---\n",
        )],
    );
    write_tree(
        temp.path(),
        &[(
            "warned/SKILL.md",
            "---\nname: warned\ndescription: Loads.\ncolour: blue\n---\n",
        )],
    );
    let (listing, stderr) = list_json(skillbox().args(["list", "--json"]).arg(temp.path()));
    assert_eq!(names(&listing), vec!["fine", "warned"]);
    assert_eq!(listing[1]["warnings"], 1);
    assert!(
        stderr.contains("error[yaml-invalid]") && stderr.contains("broken/SKILL.md:3"),
        "{stderr}"
    );
}
