//! Getting skills through the real binary, from real sources on loopback: a git smart-HTTP
//! server (`git http-backend`), `git daemon`, `file://` repositories, a static server for
//! `.well-known` indexes and archives, local folders, archives and plugin marketplaces. Every
//! refusal names what is wrong and leaves nothing half-installed.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;
use skillbox_testkit::static_server::Response;
use skillbox_testkit::{GitDaemon, GitHttpServer, GitRepo, StaticServer};

use super::install_project::{Project, sha256};
use super::support::{skill_md, write_tree};

/// A repository with two skills (one with a script) and a tag `v1`.
fn two_skill_repo() -> GitRepo {
    let repo = GitRepo::new();
    repo.write(&[
        ("README.md", "two skills\n"),
        (
            "skills/hello/SKILL.md",
            &skill_md("hello", "Says hello. Use when greeting."),
        ),
        (
            "skills/world/SKILL.md",
            &skill_md("world", "World facts. Use for geography."),
        ),
        ("skills/world/references/facts.md", "Earth is round.\n"),
    ]);
    repo.write_executable(
        "skills/hello/scripts/run.py",
        "print('hello from an installed skill')\n",
    );
    repo.commit("first");
    repo.tag("v1");
    repo
}

#[test]
fn a_skill_from_git_over_http_is_locked_installed_trusted_by_digest_and_runs() {
    let repo = two_skill_repo();
    let server = GitHttpServer::start();
    server.add_repo("acme/skills", &repo);
    let project = Project::new();
    let source = format!("{}@v1", server.url("acme/skills"));

    let (code, _, stderr) = project.run(&["add", &source]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("holds 2 skills")
            && stderr.contains("--skill")
            && stderr.contains("hello  Says hello"),
        "{stderr}"
    );
    project.assert_untouched();

    let report = project.json(&["add", &source, "--skill", "hello", "--agent", "claude"]);
    assert_eq!(report["skills"][0]["action"], "added");
    let lock = project.lock();
    let hello = &lock["skills"]["hello"];
    assert_eq!(hello["kind"], "git");
    assert_eq!(hello["path"], "skills/hello");
    assert_eq!(hello["reference"], "v1");
    assert_eq!(hello["revision"].as_str().unwrap(), repo.rev_parse("v1"));
    assert!(
        hello["files"]["scripts/run.py"]["executable"]
            .as_bool()
            .unwrap()
    );
    assert_eq!(
        hello["files"]["SKILL.md"]["size"].as_u64().unwrap() as usize,
        skill_md("hello", "Says hello. Use when greeting.").len()
    );
    assert!(project.installed("hello").join("scripts/run.py").is_file());
    assert_eq!(
        std::fs::read_link(project.directory().join(".claude/skills/hello")).unwrap(),
        PathBuf::from("../../.agents/skills/hello")
    );
    let manifest = fs_err::read_to_string(project.directory().join("skillbox.toml")).unwrap();
    assert!(
        manifest.contains("hello = { source = ") && manifest.contains("ref = \"v1\""),
        "{manifest}"
    );

    // The project root `.agents/skills` was never trusted, but the installed skill runs.
    let ran = project.ok(&["run", "hello", "scripts/run.py"]);
    assert!(ran.contains("hello from an installed skill"), "{ran}");
    let listed = project.json(&["list"]);
    let trust: Vec<&Value> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| &skill["trust"])
        .collect();
    assert!(trust.iter().all(|trust| *trust == "trusted"), "{listed}");
    // Nothing was sent with credentials.
    assert!(
        server
            .requests()
            .iter()
            .all(|request| request.authorization().is_none())
    );
}

#[test]
fn git_daemon_file_urls_and_owner_repo_shorthand_resolve_refs_and_paths() {
    let repo = two_skill_repo();
    let first = repo.rev_parse("HEAD");
    repo.write(&[(
        "skills/world/references/facts.md",
        "Earth is round and old.\n",
    )]);
    let second = repo.commit("second");
    let daemon = GitDaemon::start();
    daemon.add_repo("acme/skills", &repo);
    let project = Project::new();

    // `owner/repo/path@sha` on a configured forge (here git://).
    let output = project
        .skillbox()
        .env("SKILLBOX_FORGE", daemon.base_url())
        .args([
            "add",
            &format!("acme/skills/skills/world@{first}"),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        project.lock()["skills"]["world"]["revision"]
            .as_str()
            .unwrap(),
        first
    );
    assert_eq!(
        fs_err::read_to_string(project.installed("world").join("references/facts.md")).unwrap(),
        "Earth is round.\n"
    );

    // A file:// URL with `#ref` and a sub-path after `.git`.
    let bare = tempfile::tempdir().unwrap();
    let bare_path = bare.path().join("mirror.git");
    skillbox_testkit::git_server::git_command(bare.path())
        .args(["clone", "--bare", "-q"])
        .arg(repo.path())
        .arg(&bare_path)
        .status()
        .unwrap();
    let url = format!("file://{}/skills/world#main", bare_path.display());
    project.ok(&["add", &url]);
    assert_eq!(
        project.lock()["skills"]["world"]["revision"]
            .as_str()
            .unwrap(),
        second
    );
    assert_eq!(
        fs_err::read_to_string(project.installed("world").join("references/facts.md")).unwrap(),
        "Earth is round and old.\n"
    );

    let (code, _, stderr) =
        project.run(&["add", &format!("{}@no-such-tag", daemon.url("acme/skills"))]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no-such-tag"), "{stderr}");
    let (code, _, stderr) = project.run(&[
        "add",
        &format!("{}/skills/nothing", daemon.url("acme/skills")),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("there is no `skills/nothing`"), "{stderr}");
}

#[test]
fn a_token_from_the_environment_goes_to_its_host_only() {
    let repo = two_skill_repo();
    let server = GitHttpServer::start().with_required_token("s3cret-token");
    server.add_repo("private/skills", &repo);
    let project = Project::new();
    let source = format!("{}/skills/hello", server.url("private/skills"));

    let (code, _, stderr) = project.run(&["add", &source]);
    assert_eq!(code, 2, "{stderr}");
    assert!(!stderr.contains("s3cret-token"));
    project.assert_untouched();

    // The variable names the host and the port: the token is for this server alone.
    let variable = format!(
        "SKILLBOX_TOKEN_127_0_0_1_{}",
        server.base_url().rsplit(':').next().unwrap()
    );
    let output = project
        .skillbox()
        .env("SKILLBOX_TOKEN_127_0_0_1", "s3cret-token")
        .args(["add", &source])
        .output()
        .unwrap();
    assert!(
        !output.status.success(),
        "a token for port 80 went to another port"
    );
    let output = project
        .skillbox()
        .env(&variable, "s3cret-token")
        .args(["add", &source])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lock = fs_err::read_to_string(project.directory().join("skillbox.lock")).unwrap();
    let manifest = fs_err::read_to_string(project.directory().join("skillbox.toml")).unwrap();
    assert!(!lock.contains("s3cret") && !manifest.contains("s3cret"));
    assert!(
        server
            .requests()
            .iter()
            .any(|request| request.authorization().is_some())
    );

    // An index on 127.0.0.1 pointing at an artifact on `localhost` (allowed): the token for
    // 127.0.0.1 is not sent there, nor to the index, which does not ask for one.
    let skill = skill_md("remote", "Remote skill. Use when testing hosts.");
    let artifacts = StaticServer::without_folder();
    artifacts.route("/remote/SKILL.md", Response::ok(skill.clone()));
    let elsewhere = artifacts
        .url("/remote/SKILL.md")
        .replace("127.0.0.1", "localhost");
    let index = StaticServer::without_folder();
    index.route(
        "/.well-known/agent-skills/index.json",
        Response::ok(
            serde_json::json!({"skills": [{"name": "remote", "type": "skill-md", "description": "d", "url": elsewhere, "digest": sha256(skill.as_bytes())}]})
                .to_string(),
        ),
    );
    let index_variable = format!(
        "SKILLBOX_TOKEN_127_0_0_1_{}",
        index.base_url().rsplit(':').next().unwrap()
    );
    let allowed = elsewhere
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let output = project
        .skillbox()
        .env(&index_variable, "s3cret-token")
        .args(["add", &index.base_url(), "--allow-host", &allowed])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        index
            .requests()
            .iter()
            .all(|request| request.authorization().is_none())
    );
    assert!(
        artifacts
            .requests()
            .iter()
            .all(|request| request.authorization().is_none())
    );
}

/// A zip of `entries` (name, bytes, unix mode).
fn zip_of(entries: &[(&str, &[u8], u32)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, content, mode) in entries {
        if mode & 0o170_000 == 0o120_000 {
            writer
                .add_symlink(
                    *name,
                    String::from_utf8_lossy(content),
                    zip::write::SimpleFileOptions::default(),
                )
                .unwrap();
            continue;
        }
        writer
            .start_file(
                *name,
                zip::write::SimpleFileOptions::default().unix_permissions(*mode),
            )
            .unwrap();
        writer.write_all(content).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

#[test]
fn well_known_indexes_install_verified_skills_in_both_entry_shapes() {
    let alpha = skill_md("alpha", "Alpha. Use for alpha tasks.");
    let beta_skill = skill_md("beta", "Beta. Use for beta tasks.");
    let beta_files: &[(&str, &[u8])] = &[
        ("SKILL.md", beta_skill.as_bytes()),
        ("references/notes.md", b"notes\n"),
    ];
    let beta_zip = zip_of(&[
        ("SKILL.md", beta_files[0].1, 0o644),
        ("references/notes.md", beta_files[1].1, 0o644),
    ]);
    let gamma = skill_md("gamma", "Gamma. Use for gamma tasks.");
    let site = StaticServer::without_folder();
    site.route(
        "/.well-known/agent-skills/alpha/SKILL.md",
        Response::ok(alpha.clone()),
    );
    site.route(
        "/.well-known/agent-skills/beta.zip",
        Response::ok(beta_zip.clone()),
    );
    site.route(
        "/.well-known/agent-skills/gamma/SKILL.md",
        Response::ok(gamma.clone()),
    );
    let gamma_digest = sha256(gamma.as_bytes());
    let gamma_manifest = format!("SKILL.md\0{}\n", gamma_digest.trim_start_matches("sha256:"));
    site.route(
        "/.well-known/agent-skills/index.json",
        Response::ok(
            serde_json::json!({
                "$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
                "skills": [
                    {"name": "alpha", "type": "skill-md", "description": "Alpha", "url": "alpha/SKILL.md", "digest": sha256(alpha.as_bytes())},
                    {"name": "beta", "type": "archive", "description": "Beta", "url": "beta.zip", "digest": sha256(&beta_zip)},
                    {"name": "gamma", "description": "Gamma", "digest": sha256(gamma_manifest.as_bytes()),
                     "files": [{"path": "SKILL.md", "digest": gamma_digest}]},
                    {"name": "forged", "type": "skill-md", "description": "Forged", "url": "alpha/SKILL.md", "digest": sha256(b"something else")}
                ]
            })
            .to_string(),
        ),
    );
    let project = Project::new();
    let report = project.json(&[
        "add",
        &site.base_url(),
        "--skill",
        "alpha",
        "--skill",
        "beta",
        "--skill",
        "gamma",
    ]);
    assert_eq!(report["skills"].as_array().unwrap().len(), 3);
    assert_eq!(project.lock()["skills"]["beta"]["kind"], "well-known");
    assert_eq!(
        fs_err::read_to_string(project.installed("beta").join("references/notes.md")).unwrap(),
        "notes\n"
    );
    assert!(project.installed("gamma/SKILL.md").is_file());

    let before = fs_err::read(project.directory().join("skillbox.lock")).unwrap();
    let (code, _, stderr) = project.run(&[
        "add",
        &format!("{}/.well-known/agent-skills/", site.base_url()),
        "--skill",
        "forged",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("its sha256 is") && stderr.contains("the index says"),
        "{stderr}"
    );
    assert!(!project.installed("forged").exists());
    assert_eq!(
        fs_err::read(project.directory().join("skillbox.lock")).unwrap(),
        before
    );
}

#[test]
fn unsafe_archives_are_refused_by_name_and_leave_nothing() {
    let good = skill_md("packed", "Packed. Use when unpacking.");
    let site = StaticServer::without_folder();
    site.route(
        "/slip.zip",
        Response::ok(zip_of(&[
            ("SKILL.md", good.as_bytes(), 0o644),
            ("../../escape.txt", b"x", 0o644),
        ])),
    );
    site.route(
        "/bomb.zip",
        Response::ok(zip_of(&[
            ("SKILL.md", good.as_bytes(), 0o644),
            ("big.bin", &vec![0u8; 8 * 1024 * 1024], 0o644),
        ])),
    );
    site.route(
        "/link.zip",
        Response::ok(zip_of(&[
            ("SKILL.md", good.as_bytes(), 0o644),
            ("passwd", b"/etc/passwd", 0o120_777),
        ])),
    );
    site.route("/missing.zip", Response::new(404, "gone"));
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    let mut header = tar::Header::new_gnu();
    header.set_size(good.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    tar.append_data(&mut header, "packed/SKILL.md", good.as_bytes())
        .unwrap();
    let mut fifo = tar::Header::new_gnu();
    fifo.set_entry_type(tar::EntryType::Fifo);
    fifo.set_size(0);
    fifo.set_cksum();
    tar.append_data(&mut fifo, "packed/pipe", &[][..]).unwrap();
    site.route(
        "/fifo.tar.gz",
        Response::ok(tar.into_inner().unwrap().finish().unwrap()),
    );

    let project = Project::new();
    for (path, expected) in [
        ("/slip.zip", "../../escape.txt"),
        ("/bomb.zip", "zip bomb"),
        ("/link.zip", "outside the source"),
        ("/missing.zip", "404"),
        ("/fifo.tar.gz", "packed/pipe"),
    ] {
        let (code, _, stderr) = project.run(&["add", &site.url(path)]);
        assert_eq!(code, 2, "{path}: {stderr}");
        assert!(stderr.contains(expected), "{path}: {stderr}");
        project.assert_untouched();
    }
    let temp_parent = std::env::temp_dir();
    assert!(!temp_parent.join("escape.txt").exists());

    // The same skill packed safely installs, from a URL and from a file here.
    site.route(
        "/good.skill",
        Response::ok(zip_of(&[("SKILL.md", good.as_bytes(), 0o644)])),
    );
    project.ok(&["add", &site.url("/good.skill")]);
    assert_eq!(project.lock()["skills"]["packed"]["kind"], "archive");
    let archive = project.temp.path().join("packed.skill");
    std::fs::write(&archive, zip_of(&[("SKILL.md", good.as_bytes(), 0o644)])).unwrap();
    project.ok(&["add", archive.to_str().unwrap()]);
    assert_eq!(project.lock()["skills"]["packed"]["kind"], "path");
}

#[test]
fn plugin_bundles_and_marketplaces_are_searched_for_skills() {
    let temp = tempfile::tempdir().unwrap();
    let market = temp.path().join("market");
    write_tree(
        &market,
        &[
            (
                ".claude-plugin/marketplace.json",
                r#"{"name": "m", "owner": {"name": "o"}, "plugins": [{"name": "docs", "source": "./plugins/docs"}, {"name": "far", "source": {"source": "github", "repo": "o/far"}}]}"#,
            ),
            (
                "plugins/docs/.claude-plugin/plugin.json",
                r#"{"name": "docs"}"#,
            ),
            (
                "plugins/docs/skills/writer/SKILL.md",
                &skill_md("writer", "Writes docs. Use when documenting."),
            ),
            (
                "plugins/docs/skills/editor/SKILL.md",
                &skill_md("editor", "Edits docs. Use when editing."),
            ),
            (
                "codex/.codex-plugin/plugin.json",
                r#"{"name": "cx", "skills": "./my-skills/"}"#,
            ),
            (
                "codex/my-skills/linter/SKILL.md",
                &skill_md("linter", "Lints. Use when linting."),
            ),
        ],
    );
    let project = Project::new();
    let report = project.json(&["add", market.to_str().unwrap(), "--all"]);
    let names: Vec<&str> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["editor", "writer"]);
    assert_eq!(
        project.lock()["skills"]["writer"]["path"],
        "plugins/docs/skills/writer"
    );
    project.ok(&["add", market.join("codex").to_str().unwrap()]);
    assert!(project.installed("linter/SKILL.md").is_file());
}

#[test]
fn refusals_in_git_trees_name_the_entry_and_submodules_are_skipped() {
    let repo = GitRepo::new();
    repo.write(&[
        ("outside.md", "secret\n"),
        ("bad/SKILL.md", &skill_md("bad", "Bad. Use never.")),
        ("big/SKILL.md", &skill_md("big", "Big. Use for size.")),
        ("big/a.txt", "a"),
        ("big/b.txt", "b"),
        ("ok/SKILL.md", &skill_md("ok", "Ok. Use always.")),
        (
            "invalid/SKILL.md",
            "---\nname: Not A Name\n---\nno description\n",
        ),
    ]);
    repo.symlink("bad/escape.md", "../outside.md");
    repo.symlink("ok/alias.md", "SKILL.md");
    repo.git(&["add", "--all"]);
    let pinned = repo.commit("trees");
    // A submodule (gitlink) inside the skill: never fetched, reported.
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{pinned},ok/vendor"),
    ]);
    repo.git(&["commit", "-q", "-m", "with a submodule"]);
    let server = GitHttpServer::start();
    server.add_repo("acme/trees", &repo);
    let url = server.url("acme/trees");
    let project = Project::new();

    let (code, _, stderr) = project.run(&["add", &format!("{url}/bad")]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("escape.md") && stderr.contains("outside"),
        "{stderr}"
    );
    let (code, _, stderr) = project.run(&["add", &format!("{url}/big"), "--max-files", "2"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("holds 3 files") && stderr.contains("--max-files"),
        "{stderr}"
    );
    let (code, _, stderr) = project.run(&["add", &format!("{url}/invalid")]);
    assert_eq!(code, 2);
    assert!(stderr.contains("is not valid"), "{stderr}");
    project.assert_untouched();

    let (code, _, stderr) = project.run(&["add", &format!("{url}/ok")]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("ok/vendor") && stderr.contains("submodule"),
        "{stderr}"
    );
    assert!(!project.installed("ok/vendor").exists());
    // Choosing one skill of the repository: its siblings that would be refused are no
    // obstacle (only the chosen skill's folder is written whole and validated).
    let other = Project::new();
    let (code, _, stderr) = other.run(&["add", &url, "--skill", "ok"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = other.run(&["add", &url, "--skill", "bad"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("escape.md"), "{stderr}");
    assert_eq!(
        project.lock()["skills"]["ok"]["links"]["alias.md"],
        "SKILL.md"
    );
    assert!(project.installed("ok/alias.md").is_symlink());
}

#[test]
fn install_frozen_outdated_update_verify_and_remove_keep_folders_as_locked() {
    let repo = two_skill_repo();
    let server = GitHttpServer::start();
    server.add_repo("acme/skills", &repo);
    let project = Project::new();
    let source = format!("{}#main", server.url("acme/skills"));
    project.ok(&["add", &source, "--all", "--agent", "claude"]);
    let first_digest = project.lock()["skills"]["hello"]["digest"].clone();

    // Nothing changed upstream: not outdated; a frozen install agrees.
    assert_eq!(project.run(&["outdated"]).0, 0);
    assert!(
        project
            .ok(&["install", "--frozen"])
            .contains("unchanged hello")
    );

    // A new commit: outdated names it (exit 1), update takes it.
    repo.write(&[(
        "skills/hello/SKILL.md",
        &skill_md("hello", "Says hello loudly. Use when greeting."),
    )]);
    repo.commit("louder");
    let (code, stdout, _) = project.run(&["outdated"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("outdated  hello"), "{stdout}");
    assert!(!stdout.contains("outdated  world"), "{stdout}");
    let report = project.json(&["update", "hello"]);
    assert_eq!(report["skills"][0]["action"], "updated");
    assert_ne!(project.lock()["skills"]["hello"]["digest"], first_digest);

    // Tampering: verify names the file (exit 1), running refuses naming it, install restores.
    let script = project.installed("hello").join("scripts/run.py");
    std::fs::write(&script, "print('tampered')\n").unwrap();
    std::fs::write(project.installed("world").join("extra.md"), "added\n").unwrap();
    let (code, stdout, _) = project.run(&["verify"]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("changed scripts/run.py") && stdout.contains("added extra.md"),
        "{stdout}"
    );
    let (code, _, stderr) = project.run(&["run", "hello", "scripts/run.py"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("`scripts/run.py` changed") && stderr.contains("skillbox verify"),
        "{stderr}"
    );
    // The link in Claude's folder is the same skill, refused the same way.
    let (code, _, stderr) =
        project.run(&["run", "hello", "scripts/run.py", "--root", ".claude/skills"]);
    assert_ne!(code, 0, "{stderr}");
    project.ok(&["install"]);
    assert_eq!(project.run(&["verify"]).0, 0);
    assert!(
        project
            .ok(&["run", "hello", "scripts/run.py"])
            .contains("hello from an installed skill")
    );

    // The manifest and lock disagree: frozen refuses, naming the skill.
    let manifest_path = project.directory().join("skillbox.toml");
    let manifest = fs_err::read_to_string(&manifest_path).unwrap();
    std::fs::write(&manifest_path, manifest.replace("#main", "#v1")).unwrap();
    let (code, _, stderr) = project.run(&["install", "--frozen"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--frozen") && stderr.contains("`hello`"),
        "{stderr}"
    );
    std::fs::write(&manifest_path, manifest).unwrap();

    // A fresh clone of the project (manifest and lock only) installs from the store, offline.
    let clone = Project::new();
    for file in ["skillbox.toml", "skillbox.lock"] {
        std::fs::copy(project.directory().join(file), clone.directory().join(file)).unwrap();
    }
    std::fs::remove_dir_all(clone.temp.path().join("cache")).unwrap();
    copy_dir(
        &project.temp.path().join("cache"),
        &clone.temp.path().join("cache"),
    );
    drop(server);
    let report = clone.json(&["install", "--frozen"]);
    assert!(
        report["skills"]
            .as_array()
            .unwrap()
            .iter()
            .all(|skill| skill["action"] == "restored"),
        "{report}"
    );
    assert_eq!(clone.run(&["verify"]).0, 0);

    // Remove takes the folder, the link, the manifest and lock entries.
    project.ok(&["remove", "hello"]);
    assert!(!project.installed("hello").exists());
    assert!(std::fs::symlink_metadata(project.directory().join(".claude/skills/hello")).is_err());
    assert!(project.lock()["skills"].get("hello").is_none());
    assert!(
        !fs_err::read_to_string(&manifest_path)
            .unwrap()
            .contains("hello =")
    );
    let (code, _, stderr) = project.run(&["remove", "hello"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("skill `hello` is not in"), "{stderr}");
}

fn copy_dir(from: &Path, to: &Path) {
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn an_install_killed_at_any_moment_is_completed_by_the_next_install() {
    let repo = GitRepo::new();
    for index in 0..40 {
        let name = format!("skill-{index:02}");
        repo.write(&[
            (
                &format!("skills/{name}/SKILL.md"),
                &skill_md(&name, "A numbered skill. Use when counting."),
            ),
            (
                &format!("skills/{name}/references/a.md"),
                &"reference text\n".repeat(200),
            ),
            (&format!("skills/{name}/scripts/b.py"), "print('b')\n"),
        ]);
    }
    repo.commit("forty");
    let project = Project::new();
    let source = format!("file://{}", repo.path().display());
    project.ok(&["add", &source, "--all"]);
    for round in 0..6u64 {
        std::fs::remove_dir_all(project.directory().join(".agents/skills")).unwrap();
        let mut child = project
            .std_command()
            .args(["install"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(3 + round * 7));
        let _ = child.kill();
        let _ = child.wait();
        project.ok(&["install"]);
        let (code, stdout, _) = project.run(&["verify"]);
        assert_eq!(code, 0, "round {round}: {stdout}");
        let installed = fs_err::read_dir(project.directory().join(".agents/skills"))
            .unwrap()
            .count();
        assert_eq!(installed, 40, "round {round}");
        let leftovers: Vec<_> = fs_err::read_dir(project.directory().join(".agents"))
            .unwrap()
            .flatten()
            .filter(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with(".skillbox-staging-")
            })
            .collect();
        assert!(leftovers.is_empty(), "round {round}: {leftovers:?}");
    }
}

#[test]
fn a_cold_install_fetches_each_source_once_and_skips_sibling_skills_that_do_not_validate() {
    let repo = GitRepo::new();
    for name in ["one", "two", "three"] {
        repo.write(&[(
            &format!("skills/{name}/SKILL.md"),
            &skill_md(name, "Numbered. Use when counting."),
        )]);
    }
    repo.commit("three");
    let server = GitHttpServer::start();
    server.add_repo("acme/many", &repo);
    let project = Project::new();
    project.ok(&["add", &server.url("acme/many"), "--all"]);
    // Upstream gains a broken sibling; the locked skills still install from their commit,
    // and a fresh machine (empty store) fetches the repository once, not once per skill.
    repo.write(&[("skills/broken/SKILL.md", "---\nname: Broken Name\n---\n")]);
    repo.commit("broken sibling");
    std::fs::remove_dir_all(project.temp.path().join("cache")).unwrap();
    std::fs::remove_dir_all(project.directory().join(".agents/skills")).unwrap();
    let before = server.requests().len();
    let report = project.json(&["install", "--frozen"]);
    assert_eq!(report["skills"].as_array().unwrap().len(), 3, "{report}");
    let fetches = server.requests()[before..]
        .iter()
        .filter(|request| request.path.ends_with("/git-upload-pack"))
        .count();
    assert!(fetches <= 2, "{fetches} fetches for one source");
    assert_eq!(project.run(&["verify"]).0, 0);
}

#[test]
fn add_installs_the_skills_a_skill_requires_and_names_what_is_missing() {
    let temp = tempfile::tempdir().unwrap();
    let source = temp.path().join("source");
    let requiring = |name: &str, requires: &str| {
        format!(
            "---\nname: {name}\ndescription: The {name} skill. Use when testing requires.\nrequires: [{requires}]\n---\nBody.\n"
        )
    };
    write_tree(
        &source,
        &[
            ("trip/SKILL.md", &requiring("trip", "weather")),
            ("weather/SKILL.md", &requiring("weather", "units")),
            (
                "units/SKILL.md",
                &skill_md("units", "Converts units. Use when converting."),
            ),
            (
                "unrelated/SKILL.md",
                &skill_md("unrelated", "Unrelated. Use never."),
            ),
            ("lonely/SKILL.md", &requiring("lonely", "nowhere")),
            ("loop-a/SKILL.md", &requiring("loop-a", "loop-b")),
            ("loop-b/SKILL.md", &requiring("loop-b", "loop-a")),
        ],
    );
    let project = Project::new();
    let report = project.json(&["add", source.to_str().unwrap(), "--skill", "trip"]);
    let mut names: Vec<&str> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["trip", "units", "weather"]);
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("also adding `weather`, which `trip` requires"),
        "{notes}"
    );
    assert!(
        notes.contains("also adding `units`, which `weather` requires"),
        "{notes}"
    );
    let lock = project.lock();
    assert_eq!(
        lock["skills"]["trip"]["requires"],
        serde_json::json!(["weather"])
    );
    assert!(lock["skills"].get("unrelated").is_none());
    // A requirement neither the source nor the install holds is named, and nothing changes.
    let (code, _, refused) = project.run(&["add", source.to_str().unwrap(), "--skill", "lonely"]);
    assert_ne!(code, 0, "{refused}");
    assert!(
        refused.contains("`lonely` requires the skill `nowhere`, which"),
        "{refused}"
    );
    assert!(!project.installed("lonely/SKILL.md").exists());
    let (code, _, cycle) = project.run(&["add", source.to_str().unwrap(), "--skill", "loop-a"]);
    assert_ne!(code, 0, "{cycle}");
    assert!(cycle.contains("loop-a -> loop-b -> loop-a"), "{cycle}");
    assert!(!project.installed("loop-a/SKILL.md").exists());
}
