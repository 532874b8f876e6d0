//! What a project looks like after `skillbox add --agent`: the link skillbox makes in an
//! agent's folder reaches the installed folder, so `skillbox list` sees one skill there, with
//! no `skill-shadowed` warning; a real second copy still gets one.

use super::install_project::Project;
use super::support::{skill_md, write_tree};

#[test]
fn a_skill_shown_to_an_agent_through_a_link_is_one_skill_and_no_warning() {
    let project = Project::new();
    let source = project.outside().join("sources/bundle");
    write_tree(
        &source,
        &[
            (
                "pdf/SKILL.md",
                &skill_md("pdf", "Fills PDF forms. Use for PDFs."),
            ),
            (
                "docx/SKILL.md",
                &skill_md("docx", "Edits documents. Use for docx."),
            ),
        ],
    );
    let source = source.to_string_lossy().into_owned();
    project.ok(&["add", &source, "--skill", "pdf", "--agent", "claude"]);
    let link = project.directory().join(".claude/skills/pdf");
    assert!(link.is_symlink());

    let list = |args: &[&str]| {
        let output = project.skillbox().arg("list").args(args).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    };
    for args in [&[][..], &["--json"][..]] {
        let printed = list(args);
        assert!(printed.contains("pdf"), "{printed}");
        assert!(!printed.contains("skill-shadowed"), "{args:?}: {printed}");
        assert!(!printed.contains("shadowed"), "{args:?}: {printed}");
    }

    // The user's own, distinct copy of `pdf` is overridden by the project's: that still warns.
    write_tree(
        &project.temp.path().join("home/.claude/skills/pdf"),
        &[(
            "SKILL.md",
            &skill_md("pdf", "My own PDF skill. Use for PDFs."),
        )],
    );
    let printed = list(&[]);
    assert!(printed.contains("skill-shadowed"), "{printed}");
}
