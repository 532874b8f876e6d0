//! The review of the round 4 fixes (issue 34), attacked again through the real binary: a
//! cloned repository leading git out of the project through a committed link.
//! Every test here failed before its finding was fixed.

use serde_json::json;
use skillbox_testkit::GitRepo;

use super::install_project::Project;
use super::support::skill_md;

/// A `file://` URL is read by git as it is written: `link/..` is the folder above where the
/// link points, not the project folder the spelling suggests. A cloned manifest or lock
/// naming `file://PROJECT/link/../REPO`, with `link` a committed link to a folder beside the
/// user's repository and a decoy repository at `PROJECT/REPO`, must not get that repository
/// fetched, whatever command reads it.
#[test]
fn a_file_url_cannot_leave_the_project_through_a_link_followed_by_dot_dot() {
    let project = Project::new();
    let users = GitRepo::new();
    users.write(&[(
        "secret-tool/SKILL.md",
        &skill_md("secret-tool", "The user's private tool. Use at work."),
    )]);
    users.commit("private work");
    let users_folder = fs_err::canonicalize(users.path()).unwrap();
    let repository_name = users_folder.file_name().unwrap().to_str().unwrap();
    // The decoy the spelling names, inside the project: a repository of its own.
    let decoy = project.directory().join(repository_name);
    fs_err::create_dir_all(decoy.join("objects")).unwrap();
    fs_err::create_dir_all(decoy.join("refs")).unwrap();
    fs_err::write(decoy.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    // `link/..` is the folder holding the user's repository.
    std::os::unix::fs::symlink(&users_folder, project.directory().join("link")).unwrap();
    let url = format!(
        "file://{}/link/../{repository_name}",
        project.directory().display()
    );

    fs_err::write(
        project.directory().join("skillbox.toml"),
        format!("[skills]\nsecret-tool = {{ source = {url:?}, path = \"secret-tool\" }}\n"),
    )
    .unwrap();
    let stderr = project.refused(&["install"]);
    assert!(stderr.contains("outside the project"), "{stderr}");
    assert!(!project.installed("secret-tool").exists());
    assert!(!project.directory().join("skillbox.lock").exists());

    // The same source in a planted lock, for every command that fetches.
    fs_err::remove_file(project.directory().join("skillbox.toml")).unwrap();
    project.write_lock(&json!({
        "version": 1,
        "skills": {
            "secret-tool": {
                "source": url,
                "kind": "git",
                "path": "secret-tool",
                "revision": "0".repeat(40),
                "digest": format!("sha256:{}", "0".repeat(64)),
                "files": {}
            }
        }
    }));
    for command in [&["install"][..], &["update"], &["outdated"]] {
        let stderr = project.refused(command);
        assert!(
            stderr.contains("outside the project"),
            "{command:?}: {stderr}"
        );
        assert!(!stderr.contains("digests to"), "{command:?}: {stderr}");
        assert!(!project.installed("secret-tool").exists(), "{command:?}");
    }
}
