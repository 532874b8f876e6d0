//! Getting skills against a hostile skill author, publisher, repository or project: through
//! the real binary, with real servers on loopback. A source, a lock or a cloned project may
//! name anything; an install never writes, reads or deletes outside the project's folders,
//! never replaces what it did not install, and never trusts files the locked source does not
//! hold.

use std::io::Write;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use skillbox_testkit::static_server::Response;
use skillbox_testkit::{GitHttpServer, GitRepo, StaticServer};

use super::install_project::{Project, sha256};
use super::support::{skill_md, write_tree};

/// Every entry under `folder` with its bytes (links by target), for "left alone" checks.
fn snapshot(folder: &Path) -> Vec<(String, Vec<u8>)> {
    let mut entries: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(folder)
        .follow_links(false)
        .into_iter()
        .map(|entry| {
            let entry = entry.unwrap();
            let relative = entry
                .path()
                .strip_prefix(folder)
                .unwrap()
                .display()
                .to_string();
            let content = if entry.path_is_symlink() {
                std::fs::read_link(entry.path())
                    .unwrap()
                    .display()
                    .to_string()
                    .into_bytes()
            } else if entry.file_type().is_file() {
                fs_err::read(entry.path()).unwrap()
            } else {
                Vec::new()
            };
            (relative, content)
        })
        .collect();
    entries.sort();
    entries
}

/// A `.tar.gz` of entries built with `tar` (regular files and symbolic links).
fn tar_gz(entries: &[(&str, TarEntry<'_>)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for (name, entry) in entries {
        let mut header = tar::Header::new_gnu();
        match entry {
            TarEntry::File(bytes) => {
                header.set_size(bytes.len() as u64);
                header.set_mode(0o644);
                header.set_entry_type(tar::EntryType::Regular);
                header.set_cksum();
                builder.append_data(&mut header, name, *bytes).unwrap();
            }
            TarEntry::Link(target) => {
                header.set_size(0);
                header.set_mode(0o777);
                header.set_entry_type(tar::EntryType::Symlink);
                builder.append_link(&mut header, name, target).unwrap();
            }
        }
    }
    builder.into_inner().unwrap().finish().unwrap()
}

enum TarEntry<'a> {
    File(&'a [u8]),
    Link(&'a str),
}

#[test]
fn add_leaves_a_folder_it_did_not_install_in_place() {
    let project = Project::new();
    let source = project.source_skill("notes");
    write_tree(
        &project.installed("notes"),
        &[
            (
                "SKILL.md",
                &skill_md("notes", "My own notes. Use when noting."),
            ),
            ("mine.md", "written by hand\n"),
        ],
    );
    let before = snapshot(&project.installed("notes"));
    let stderr = project.refused(&["add", source.to_str().unwrap()]);
    assert!(
        stderr.contains("was not installed by") && stderr.contains("move it away"),
        "{stderr}"
    );
    assert_eq!(snapshot(&project.installed("notes")), before);
    assert!(!project.directory().join("skillbox.lock").exists());
    assert!(!project.directory().join("skillbox.toml").exists());

    // A folder that already holds exactly the files is taken over; one installed here and
    // changed since is not replaced by an `add` of another source either.
    fs_err::remove_dir_all(project.installed("notes")).unwrap();
    project.ok(&["add", source.to_str().unwrap()]);
    project.ok(&["add", source.to_str().unwrap()]);

    // A manifest entry a pull request adds for a name the user already uses is refused too.
    // (from inside the project: one from outside is refused before that, see
    // `a_manifest_cannot_make_install_copy_a_folder_from_outside_the_project`)
    let theirs = project.directory().join("vendored/mine");
    write_tree(
        &theirs,
        &[("SKILL.md", &skill_md("mine", "Theirs. Use when theirs."))],
    );
    write_tree(
        &project.installed("mine"),
        &[("SKILL.md", &skill_md("mine", "Mine. Use when mine."))],
    );
    let manifest = project.directory().join("skillbox.toml");
    let mut text = fs_err::read_to_string(&manifest).unwrap();
    text.push_str(&format!(
        "mine = {{ source = {:?} }}\n",
        theirs.display().to_string()
    ));
    fs_err::write(&manifest, text).unwrap();
    let stderr = project.refused(&["install"]);
    assert!(stderr.contains("was not installed by"), "{stderr}");
    assert!(
        fs_err::read_to_string(project.installed("mine/SKILL.md"))
            .unwrap()
            .contains("Mine.")
    );
}

#[test]
fn links_planted_in_a_project_send_no_write_or_delete_elsewhere() {
    let project = Project::new();
    let source = project.source_skill("tool");
    let victim = project.outside().join("victim");
    write_tree(
        &victim,
        &[
            ("tool/important.txt", "the victim's own file\n"),
            ("other/SKILL.md", "not a skill of this project\n"),
        ],
    );
    let before = snapshot(&victim);
    let agents = project.directory().join(".agents");

    // `.agents/skills` as a link to another folder (the user's skills, another project).
    fs_err::create_dir_all(&agents).unwrap();
    symlink(&victim, agents.join("skills")).unwrap();
    let stderr = project.refused(&["add", source.to_str().unwrap()]);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(snapshot(&victim), before);
    assert!(!project.directory().join("skillbox.lock").exists());

    // `.agents` itself.
    fs_err::remove_dir_all(&agents).unwrap();
    symlink(&victim, &agents).unwrap();
    let stderr = project.refused(&["add", source.to_str().unwrap()]);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(snapshot(&victim), before);
    fs_err::remove_file(&agents).unwrap();

    // An agent's folder (`.claude/skills`), and the folder above it.
    let claude = project.directory().join(".claude");
    fs_err::create_dir_all(&claude).unwrap();
    symlink(&victim, claude.join("skills")).unwrap();
    let stderr = project.refused(&[
        "add",
        source.to_str().unwrap(),
        "--agent",
        "claude",
        "--copy",
    ]);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(snapshot(&victim), before);
    assert!(!project.directory().join("skillbox.lock").exists());
    fs_err::remove_file(claude.join("skills")).unwrap();
    fs_err::remove_dir(&claude).unwrap();
    symlink(&victim, &claude).unwrap();
    let stderr = project.refused(&["add", source.to_str().unwrap(), "--agent", "claude"]);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(snapshot(&victim), before);
    fs_err::remove_file(&claude).unwrap();

    // A project whose lock names `tool` (added there once), with `.agents/skills` then linked
    // elsewhere.
    let clone = Project::new();
    clone.ok(&["add", source.to_str().unwrap(), "--agent", "claude"]);
    fs_err::remove_dir_all(clone.directory().join(".agents/skills")).unwrap();
    symlink(&victim, clone.directory().join(".agents/skills")).unwrap();
    let stderr = clone.refused(&["install"]);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(snapshot(&victim), before);

    // A link at the skill's own folder is replaced by the folder; what it pointed to is left
    // alone and not recorded as installed.
    fs_err::remove_file(clone.directory().join(".agents/skills")).unwrap();
    fs_err::create_dir_all(clone.directory().join(".agents/skills")).unwrap();
    symlink(victim.join("tool"), clone.installed("tool")).unwrap();
    clone.ok(&["install"]);
    assert!(!clone.installed("tool").is_symlink());
    assert!(clone.installed("tool/scripts/run.py").is_file());
    assert_eq!(snapshot(&victim), before);
    let trust = fs_err::read_to_string(clone.trust_file()).unwrap();
    assert!(!trust.contains("victim"), "{trust}");

    // The project's lock file for installs, planted as a link, is not opened through it.
    let planted = project.outside().join("created-through-a-link");
    let install_lock = clone.directory().join(".agents/.skillbox-install.lock");
    let _ = fs_err::remove_file(&install_lock);
    symlink(&planted, &install_lock).unwrap();
    let _ = clone.run(&["install"]);
    assert!(!planted.exists());
}

#[test]
fn a_linked_manifest_or_lock_is_refused_without_printing_what_it_points_to() {
    let project = Project::new();
    let secret = project.outside().join("credentials");
    fs_err::write(
        &secret,
        "[default]\naws_access_key_id = AKIASECRETSECRET\naws_secret_access_key = hunter2\n",
    )
    .unwrap();
    symlink(&secret, project.directory().join("skillbox.toml")).unwrap();
    for args in [
        &["install", "--frozen"][..],
        &["install"],
        &["outdated"],
        &["add", "./nothing"],
    ] {
        let (code, stdout, stderr) = project.run(args);
        assert_ne!(code, 0, "{args:?}");
        assert!(
            !stderr.contains("AKIA") && !stdout.contains("AKIA"),
            "{args:?}: {stderr}"
        );
    }
    let stderr = project.refused(&["install"]);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(
        fs_err::read_to_string(&secret).unwrap(),
        "[default]\naws_access_key_id = AKIASECRETSECRET\naws_secret_access_key = hunter2\n"
    );
    fs_err::remove_file(project.directory().join("skillbox.toml")).unwrap();
    symlink(&secret, project.directory().join("skillbox.lock")).unwrap();
    for args in [
        &["install"][..],
        &["verify"],
        &["outdated"],
        &["remove", "x"],
    ] {
        let (code, _, stderr) = project.run(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains("symbolic link"), "{args:?}: {stderr}");
    }
}

#[test]
fn an_edited_lock_does_not_make_tampered_files_trusted() {
    let project = Project::new();
    let source = project.source_skill("tool");
    project.ok(&["add", source.to_str().unwrap()]);
    let ran = project.ok(&["run", "tool", "scripts/run.py"]);
    assert!(ran.contains("original"), "{ran}");

    // Someone who can write the project changes a script and edits the lock to match.
    let script = project.installed("tool/scripts/run.py");
    fs_err::write(&script, "print('tampered')\n").unwrap();
    let (code, _, stderr) = project.run(&["run", "tool", "scripts/run.py"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("scripts/run.py"), "{stderr}");
    let found = skillbox_trust::digest::folder_inventory_at(&project.installed("tool")).unwrap();
    let mut lock = project.lock();
    lock["skills"]["tool"]["digest"] = Value::from(found.digest.clone());
    lock["skills"]["tool"]["files"]["scripts/run.py"] = serde_json::json!({
        "digest": sha256(b"print('tampered')\n"),
        "size": 18,
    });
    project.write_lock(&lock);
    assert!(project.ok(&["verify"]).contains("unchanged"));

    // `install` does not take the folder's word for it: the locked source does not hold those
    // files, so nothing is recorded and the tampered script still does not run.
    let stderr = project.refused(&["install"]);
    assert!(stderr.contains("not the locked"), "{stderr}");
    let trust = fs_err::read_to_string(project.trust_file()).unwrap();
    assert!(!trust.contains(&found.digest), "{trust}");
    let (code, stdout, stderr) = project.run(&["run", "tool", "scripts/run.py"]);
    assert_ne!(code, 0, "{stdout}");
    assert!(!stdout.contains("tampered"), "{stdout}");
    assert!(stderr.contains("does not run"), "{stderr}");

    // The same lock in a fresh clone with the tampered folder committed: not trusted either.
    let clone = Project::new();
    fs_err::write(
        clone.directory().join("skillbox.lock"),
        serde_json::to_string_pretty(&lock).unwrap(),
    )
    .unwrap();
    write_tree(
        &clone.installed("tool"),
        &[
            ("SKILL.md", &skill_md("tool", "A skill. Use when testing.")),
            ("scripts/run.py", "print('tampered')\n"),
        ],
    );
    // Its lock names a folder outside it, which this clone never added: refused before the
    // folder is looked at.
    let stderr = clone.refused(&["install"]);
    assert!(stderr.contains("outside the project"), "{stderr}");
    assert!(!clone.trust_file().exists());
}

#[test]
fn link_chains_that_leave_a_skill_are_refused_from_archives_and_folders() {
    let project = Project::new();
    let skill = skill_md("chain", "Chain. Use when chaining.");
    // `d/l1` climbs to the skill's folder; each `d/l1/..` then climbs one more where it looks
    // like it climbs none, so `l2` reaches `/etc/passwd` though every part looks inside.
    let target = format!(
        "d/l1/..{}{}/etc/passwd",
        "/chain/d/l1/..".repeat(24),
        "/..".repeat(26)
    );
    let archive = tar_gz(&[
        ("chain/SKILL.md", TarEntry::File(skill.as_bytes())),
        ("chain/d/keep.md", TarEntry::File(b"k\n")),
        ("chain/d/l1", TarEntry::Link("..")),
        ("chain/l2", TarEntry::Link(&target)),
    ]);
    let path = project.outside().join("chain.tar.gz");
    fs_err::write(&path, &archive).unwrap();
    let stderr = project.refused(&["add", path.to_str().unwrap()]);
    assert!(
        stderr.contains("l2") && stderr.contains("leaves"),
        "{stderr}"
    );
    assert!(!project.installed("chain").exists());

    // The same skill as a folder on disk.
    let folder = project.outside().join("chain");
    write_tree(&folder, &[("SKILL.md", &skill), ("d/keep.md", "k\n")]);
    symlink("..", folder.join("d/l1")).unwrap();
    symlink(&target, folder.join("l2")).unwrap();
    assert_eq!(
        fs_err::canonicalize(folder.join("l2")).unwrap(),
        PathBuf::from("/etc/passwd")
    );
    let stderr = project.refused(&["add", folder.to_str().unwrap()]);
    assert!(
        stderr.contains("l2") && stderr.contains("outside"),
        "{stderr}"
    );
    assert!(!project.installed("chain").exists());

    // Chains that stay inside are kept.
    fs_err::remove_file(folder.join("l2")).unwrap();
    symlink("d/l1/d/keep.md", folder.join("l2")).unwrap();
    project.ok(&["add", folder.to_str().unwrap()]);
    assert_eq!(
        fs_err::read_to_string(project.installed("chain/l2")).unwrap(),
        "k\n"
    );
}

#[test]
fn a_lock_or_manifest_path_cannot_reach_outside_the_source() {
    let project = Project::new();
    let repo = GitRepo::new();
    repo.write(&[(
        "skills/secret/SKILL.md",
        &skill_md("secret", "Public. Use when public."),
    )]);
    repo.commit("first");
    let private = project.outside().join("private/secret");
    write_tree(
        &private,
        &[
            (
                "SKILL.md",
                &skill_md("secret", "Private. Use when private."),
            ),
            ("credentials.txt", "PRIVATE\n"),
        ],
    );
    let url = format!("file://{}", repo.path().display());
    project.ok(&["add", &url]);

    let mut lock = project.lock();
    let climb = "../".repeat(private.components().count() + 2);
    for path in [
        format!(
            "{climb}{}",
            private.display().to_string().trim_start_matches('/')
        ),
        private.display().to_string(),
    ] {
        lock["skills"]["secret"]["path"] = Value::from(path.clone());
        project.write_lock(&lock);
        for args in [&["update"][..], &["install"], &["outdated"]] {
            let stderr = project.refused(args);
            assert!(
                stderr.contains("skills.secret.path"),
                "{path} {args:?}: {stderr}"
            );
        }
        assert!(!project.installed("secret/credentials.txt").exists());
    }

    // The manifest's `path` too.
    fs_err::remove_file(project.directory().join("skillbox.lock")).unwrap();
    fs_err::write(
        project.directory().join("skillbox.toml"),
        format!(
            "[skills]\nsecret = {{ source = {url:?}, path = {:?} }}\n",
            format!(
                "{climb}{}",
                private.display().to_string().trim_start_matches('/')
            )
        ),
    )
    .unwrap();
    let stderr = project.refused(&["install"]);
    assert!(stderr.contains("skills.secret.path"), "{stderr}");
    assert!(!project.installed("secret/credentials.txt").exists());
}

#[test]
fn a_git_token_does_not_follow_a_redirect_to_another_host() {
    let repo = GitRepo::new();
    repo.write(&[(
        "SKILL.md",
        &skill_md("private", "Private. Use when private."),
    )]);
    repo.commit("first");
    let server = GitHttpServer::start().with_required_token("s3cret-token");
    server.add_repo("private/skills", &repo);
    // The token is for 127.0.0.1 at the redirector's port; the redirect goes to the server as
    // `localhost`.
    let target = server
        .url("private/skills")
        .replace("127.0.0.1", "localhost");
    let redirector = StaticServer::without_folder();
    redirector.redirect(
        "/o/r.git/info/refs",
        &format!("{target}/info/refs?service=git-upload-pack"),
    );
    let project = Project::new();
    let output = project
        .skillbox()
        .env(
            format!(
                "SKILLBOX_TOKEN_127_0_0_1_{}",
                redirector.base_url().rsplit(':').next().unwrap()
            ),
            "s3cret-token",
        )
        .args(["add", &redirector.url("o/r.git")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");
    assert!(
        !server.requests().is_empty(),
        "the redirect was not followed"
    );
    assert!(
        server
            .requests()
            .iter()
            .all(|request| request.authorization().is_none()),
        "the token went to the redirect target"
    );

    // Straight to its own host and port, the token is sent.
    let variable = format!(
        "SKILLBOX_TOKEN_127_0_0_1_{}",
        server.base_url().rsplit(':').next().unwrap()
    );
    let output = project
        .skillbox()
        .env(&variable, "s3cret-token")
        .args(["add", &server.url("private/skills")])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A site whose index lists `entries`, with a package `z.tar.gz` holding skill `z`.
fn index_site(entries: impl FnOnce(&str, &str) -> Value) -> StaticServer {
    let skill = skill_md("z", "Zed. Use when zed.");
    let package = tar_gz(&[("SKILL.md", TarEntry::File(skill.as_bytes()))]);
    let site = StaticServer::without_folder();
    site.route(
        "/.well-known/agent-skills/z.tar.gz",
        Response::ok(package.clone()),
    );
    site.route(
        "/.well-known/agent-skills/index.json",
        Response::ok(entries(&sha256(skill.as_bytes()), &sha256(&package)).to_string()),
    );
    site
}

#[test]
fn a_well_known_file_list_naming_paths_outside_the_skill_is_refused() {
    let project = Project::new();
    for bad in [
        "/dev/zero",
        "../../../../../../../../dev/zero",
        "a/../../SKILL.md",
    ] {
        let site = index_site(|skill_digest, package_digest| {
            serde_json::json!({"skills": [{
                "name": "z", "description": "Zed",
                "files": [
                    {"path": "SKILL.md", "digest": skill_digest},
                    {"path": bad, "digest": format!("sha256:{}", "0".repeat(64))}
                ],
                "package": {"url": "z.tar.gz", "digest": package_digest}
            }]})
        });
        let started = Instant::now();
        let stderr = project.refused(&["add", &site.base_url()]);
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{bad}: took {:?}",
            started.elapsed()
        );
        assert!(stderr.contains("lists a file"), "{bad}: {stderr}");
        assert!(!project.installed("z").exists());
    }
}

#[test]
fn listing_an_index_to_choose_from_downloads_no_skill() {
    let site = StaticServer::without_folder();
    let skills: Vec<Value> = (0..500)
        .map(|index| {
            serde_json::json!({
                "name": format!("skill-{index}"),
                "type": "skill-md",
                "description": format!("Skill {index}. {}", "long ".repeat(200)),
                "url": format!("https://unreachable.invalid/{index}/SKILL.md"),
                "digest": format!("sha256:{}", "0".repeat(64)),
            })
        })
        .collect();
    site.route(
        "/.well-known/agent-skills/index.json",
        Response::ok(serde_json::json!({ "skills": skills }).to_string()),
    );
    let project = Project::new();
    let started = Instant::now();
    let (code, _, stderr) = project.run(&["add", &site.base_url()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(
        stderr.contains("holds 500 skills")
            && stderr.contains("skill-0")
            && stderr.contains("and 450 more"),
        "{stderr}"
    );
    assert!(stderr.lines().count() < 80, "{stderr}");
    assert!(
        site.requests()
            .iter()
            .all(|request| request.path.ends_with("index.json")),
        "a skill was downloaded to be listed"
    );
}

#[test]
fn a_zip_with_two_entries_of_one_name_is_refused() {
    // Two entries named `SKILL.md` (written under names of the same length, then renamed in
    // their local and central headers): tools disagree on which one is the file.
    let first = skill_md("twice", "Reviewed. Use when reviewing.");
    let second = skill_md("twice", "Something else. Use when not looking.");
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file("SKILL.md", zip::write::SimpleFileOptions::default())
        .unwrap();
    zip.write_all(first.as_bytes()).unwrap();
    zip.start_file("SKILL.mX", zip::write::SimpleFileOptions::default())
        .unwrap();
    zip.write_all(second.as_bytes()).unwrap();
    let mut bytes = zip.finish().unwrap().into_inner();
    let mut renamed = 0;
    for start in 0..bytes.len() - 8 {
        if &bytes[start..start + 8] == b"SKILL.mX" {
            bytes[start..start + 8].copy_from_slice(b"SKILL.md");
            renamed += 1;
        }
    }
    assert_eq!(renamed, 2);
    let project = Project::new();
    let path = project.outside().join("twice.zip");
    fs_err::write(&path, &bytes).unwrap();
    let stderr = project.refused(&["add", path.to_str().unwrap()]);
    assert!(stderr.contains("two entries of the same name"), "{stderr}");
    assert!(!project.installed("twice").exists());
}

#[test]
fn install_keeps_an_unlocked_folder_whose_files_changed() {
    let project = Project::new();
    let one = project.source_skill("one");
    let two = project.source_skill("two");
    project.ok(&["add", one.to_str().unwrap()]);
    project.ok(&["add", two.to_str().unwrap()]);
    // The user works in `two`; then the lock drops both (a pull request, a hostile lock).
    fs_err::write(
        project.installed("two/scripts/run.py"),
        "print('my work')\n",
    )
    .unwrap();
    let mut lock = project.lock();
    lock["skills"] = serde_json::json!({});
    project.write_lock(&lock);
    fs_err::remove_file(project.directory().join("skillbox.toml")).unwrap();
    let (code, stdout, stderr) = project.run(&["install"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!project.installed("one").exists(), "{stdout}");
    assert_eq!(
        fs_err::read_to_string(project.installed("two/scripts/run.py")).unwrap(),
        "print('my work')\n"
    );
    assert!(stderr.contains("left in place"), "{stderr}");
}

#[test]
fn a_lock_cannot_install_a_link_out_of_a_skill() {
    // A cloned repository ships a skill folder with a link to the user's files, and a lock
    // naming it with its true digest: `install` fetches it from the lock alone.
    let project = Project::new();
    let vendored = project.directory().join("vendor/evil");
    write_tree(
        &vendored,
        &[(
            "SKILL.md",
            &skill_md("evil", "Evil. Use when reading keys."),
        )],
    );
    symlink("/etc/passwd", vendored.join("key")).unwrap();
    let inventory = skillbox_trust::digest::folder_inventory_at(&vendored).unwrap();
    let files: serde_json::Map<String, Value> = inventory
        .files
        .iter()
        .map(|(path, file)| {
            (
                path.clone(),
                serde_json::json!({"digest": file.digest, "size": file.size}),
            )
        })
        .collect();
    let lock = serde_json::json!({
        "version": 1,
        "skills": {"evil": {
            "source": "./vendor/evil",
            "kind": "path",
            "digest": inventory.digest,
            "files": files,
            "links": {"key": "/etc/passwd"},
        }}
    });
    project.write_lock(&lock);
    let stderr = project.refused(&["install"]);
    assert!(
        stderr.contains("`key`") && stderr.contains("outside"),
        "{stderr}"
    );
    assert!(!project.installed("evil").exists());
    assert!(!project.trust_file().exists());

    // Nor from the store, where a refused `add` leaves nothing.
    let (code, _, _) = project.run(&["add", "./vendor/evil"]);
    assert_eq!(code, 2);
    let stored = walkdir::WalkDir::new(project.temp.path().join("cache"))
        .into_iter()
        .filter_map(Result::ok)
        .any(|entry| entry.file_name() == "key");
    assert!(!stored, "the refused tree was stored");
}

#[test]
fn a_manifest_cannot_make_install_copy_a_folder_from_outside_the_project() {
    let project = Project::new();
    let private = project.source_skill("private");
    // A repository's manifest naming one of the user's own skills, by absolute path and by a
    // relative path climbing out of the project.
    let relative = format!("../outside/sources/{}", "private");
    for source in [private.display().to_string(), relative] {
        fs_err::write(
            project.directory().join("skillbox.toml"),
            format!("[skills]\nprivate = {{ source = {source:?} }}\n"),
        )
        .unwrap();
        let stderr = project.refused(&["install"]);
        assert!(
            stderr.contains("outside the project") && stderr.contains("skillbox add"),
            "{stderr}"
        );
        assert!(!project.installed("private").exists());
        assert!(!project.directory().join("skillbox.lock").exists());
    }
    // Inside the project a manifest entry is enough; outside, the person's own `skillbox add`
    // confirms it (for this project, in the user's trust file).
    write_tree(
        &project.directory().join("vendored/inner"),
        &[("SKILL.md", &skill_md("inner", "Inner. Use when testing."))],
    );
    fs_err::write(
        project.directory().join("skillbox.toml"),
        "[skills]\ninner = { source = \"./vendored/inner\" }\n",
    )
    .unwrap();
    project.ok(&["install"]);
    assert!(project.installed("inner/SKILL.md").is_file());
    project.ok(&["add", private.to_str().unwrap()]);
    assert!(project.installed("private/SKILL.md").is_file());
    project.ok(&["install", "--frozen"]);
}
