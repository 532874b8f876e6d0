//! Round 4 attacks on installs, through the real binary: a cloned repository (its manifest,
//! its lock, its committed links) or a publisher trying to get the user's own skills copied
//! into a project, or taken over, and a concurrent writer swapping the install folder for a
//! link. The user's own skills live in a fake home (`HOME` of the [`Project`]). Every test
//! here failed before its finding was fixed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use skillbox_testkit::static_server::Response;
use skillbox_testkit::{GitRepo, StaticServer};

use super::install_project::Project;
use super::support::{make_world_readable, skill_md, write_tree};

/// The user's own skill `private` in `~/.claude/skills`, with a `.env` beside its files and a
/// script telling which copy runs and whether it got `API_KEY`.
fn users_private_skill(project: &Project) -> PathBuf {
    let folder = home(project).join(".claude/skills/private");
    write_tree(
        &folder,
        &[
            ("SKILL.md", &secret_skill_md("private")),
            (".env", "API_KEY=the-users-own-key\n"),
            ("scripts/show.py", &show_script("mine")),
        ],
    );
    folder
}

fn home(project: &Project) -> PathBuf {
    fs_err::canonicalize(project.temp.path().join("home")).unwrap()
}

/// A skill that declares the secret `API_KEY`.
fn secret_skill_md(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: The {name} skill. Use when testing grants.\nrequired_environment_variables:\n  - API_KEY\n---\nBody.\n"
    )
}

fn show_script(copy: &str) -> String {
    format!("import os\nprint('key=%s copy={copy}' % os.environ.get('API_KEY', 'none'))\n")
}

/// A lock naming `source` for the skill `private`, as a cloned repository would ship it.
fn planted_lock(source: &str, kind: &str, digest: &str) -> serde_json::Value {
    json!({
        "version": 1,
        "skills": {
            "private": {
                "source": source,
                "kind": kind,
                "path": "",
                "digest": digest,
                "files": {}
            }
        }
    })
}

/// Everything under `folder`, as relative paths.
fn listing(folder: &Path) -> Vec<String> {
    walkdir::WalkDir::new(folder)
        .min_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .map(|entry| {
            entry
                .path()
                .strip_prefix(folder)
                .unwrap()
                .display()
                .to_string()
        })
        .collect()
}

/// Item 1: a clone shipping only a lock (or a lock and a manifest) whose entry is the user's
/// own `~/.claude/skills/private` gets it copied by no command that fetches, and no message
/// tells it the folder's digest or sends the person to `skillbox update`.
#[test]
fn a_cloned_lock_naming_the_users_own_skill_is_refused_by_every_command_that_fetches() {
    let project = Project::new();
    let private = users_private_skill(&project);
    // The real digest of the user's skill, learnt in another project of another user.
    let scratch = Project::new();
    let added = scratch.json(&["add", private.to_str().unwrap()]);
    let real_digest = added["skills"][0]["digest"].as_str().unwrap().to_owned();
    let planted_digest = format!("sha256:{}", "0".repeat(64));

    for source in [
        private.display().to_string(),
        "~/.claude/skills/private".to_owned(),
    ] {
        project.write_lock(&planted_lock(&source, "path", &planted_digest));
        for with_manifest in [false, true] {
            let manifest = project.directory().join("skillbox.toml");
            if with_manifest {
                fs_err::write(
                    &manifest,
                    format!("[skills]\nprivate = {{ source = {source:?} }}\n"),
                )
                .unwrap();
            } else {
                let _ = fs_err::remove_file(&manifest);
            }
            for command in [
                &["update"][..],
                &["update", "private"],
                &["outdated"],
                &["install"],
                &["install", "--frozen"],
            ] {
                let (code, stdout, stderr) = project.run(command);
                assert_eq!(
                    code, 2,
                    "{command:?} ({source}, manifest: {with_manifest}) was not refused:\n{stdout}\n{stderr}"
                );
                let said = format!("{stdout}{stderr}");
                assert!(
                    !said.contains(&real_digest),
                    "{command:?} disclosed the digest of the user's skill: {said}"
                );
                assert!(
                    !said.contains("skillbox update"),
                    "{command:?} sent the person to `skillbox update`: {said}"
                );
                assert!(
                    said.contains("outside the project") && said.contains("skillbox add"),
                    "{command:?}: {said}"
                );
                assert!(
                    !project.installed("private").exists(),
                    "{command:?} copied the user's skill into the clone"
                );
            }
        }
    }
    let trust = fs_err::read_to_string(project.trust_file()).unwrap_or_default();
    assert!(!trust.contains("private"), "{trust}");

    // The person's own `skillbox add PATH` confirms it, for this project only.
    fs_err::remove_file(project.directory().join("skillbox.toml")).unwrap();
    fs_err::remove_file(project.directory().join("skillbox.lock")).unwrap();
    project.ok(&["add", private.to_str().unwrap()]);
    project.ok(&["install", "--frozen"]);
    project.ok(&["update"]);
    assert_eq!(project.run(&["outdated"]).0, 0);
    // The confirmation is the user's (the trust file), not the project's: the same manifest
    // and lock in another folder (a clone) are refused.
    let clone = project.temp.path().join("clone");
    fs_err::create_dir_all(&clone).unwrap();
    for file in ["skillbox.toml", "skillbox.lock"] {
        fs_err::copy(project.directory().join(file), clone.join(file)).unwrap();
    }
    let (code, _, stderr) = project.run(&["install", "--project", clone.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("outside the project"), "{stderr}");
    assert!(!clone.join(".agents/skills/private").exists());
}

/// Item 2 (a): a folder inside the project (or one the person names) whose committed
/// `.agents/skills` (or a skill folder) is a link to the user's own skills gets nothing read
/// through the link: `install` from the manifest and `add DIR --all` refuse it.
#[test]
fn a_local_source_cannot_reach_the_users_skills_through_a_committed_link() {
    let project = Project::new();
    users_private_skill(&project);
    let vendor = project.directory().join("vendor");
    write_tree(
        &vendor,
        &[(
            "tools/own/SKILL.md",
            &skill_md("own", "Own. Use when testing."),
        )],
    );
    fs_err::create_dir_all(vendor.join(".agents")).unwrap();
    std::os::unix::fs::symlink(
        home(&project).join(".claude/skills"),
        vendor.join(".agents/skills"),
    )
    .unwrap();
    for manifest in [
        "[skills]\nprivate = { source = \"./vendor\", path = \".agents/skills/private\" }\n",
        "[skills]\nprivate = { source = \"./vendor/.agents/skills/private\" }\n",
        "[skills]\nown = { source = \"./vendor\", path = \"tools/own\" }\nprivate = { source = \"./vendor\" }\n",
    ] {
        fs_err::write(project.directory().join("skillbox.toml"), manifest).unwrap();
        let stderr = project.refused(&["install"]);
        assert!(
            stderr.contains("link") || stderr.contains("outside the project"),
            "{manifest}: {stderr}"
        );
        assert!(!project.installed("private").exists(), "{manifest}");
    }
    fs_err::remove_file(project.directory().join("skillbox.toml")).unwrap();

    // A folder the person names, holding a nested link to one of the user's skills.
    let cloned = project.outside().join("cloned");
    write_tree(
        &cloned,
        &[(
            "skills/own/SKILL.md",
            &skill_md("own", "Own. Use when testing."),
        )],
    );
    std::os::unix::fs::symlink(
        home(&project).join(".claude/skills/private"),
        cloned.join("skills/private"),
    )
    .unwrap();
    let stderr = project.refused(&["add", cloned.to_str().unwrap(), "--all"]);
    assert!(
        stderr.contains("skills/private") && stderr.contains("link"),
        "{stderr}"
    );
    project.assert_untouched();
    // The same with the link at `.agents/skills`.
    fs_err::remove_file(cloned.join("skills/private")).unwrap();
    fs_err::create_dir_all(cloned.join(".agents")).unwrap();
    std::os::unix::fs::symlink(
        home(&project).join(".claude/skills"),
        cloned.join(".agents/skills"),
    )
    .unwrap();
    let stderr = project.refused(&["add", cloned.to_str().unwrap(), "--all"]);
    assert!(stderr.contains(".agents/skills"), "{stderr}");
    project.assert_untouched();
}

/// Item 2 (b): a `file://` repository named by a cloned manifest is held to the rule of a
/// path: outside the project only once the person added it, inside only when it leads git
/// nowhere else (here a committed `.git` file pointing at the user's repository).
#[test]
fn a_file_url_in_a_cloned_manifest_is_held_to_the_rule_of_a_path() {
    let project = Project::new();
    let repo = GitRepo::new();
    repo.write(&[(
        "secret-tool/SKILL.md",
        &skill_md("secret-tool", "The user's private tool. Use at work."),
    )]);
    repo.commit("private work");
    let url = format!("file://{}", repo.path().display());
    fs_err::write(
        project.directory().join("skillbox.toml"),
        format!("[skills]\nsecret-tool = {{ source = {url:?}, path = \"secret-tool\" }}\n"),
    )
    .unwrap();
    let stderr = project.refused(&["install"]);
    assert!(stderr.contains("outside the project"), "{stderr}");
    assert!(!project.installed("secret-tool").exists());
    assert!(!project.directory().join("skillbox.lock").exists());

    // Inside the project, a repository whose `.git` is a file sending git to the user's.
    let vendored = project.directory().join("vendor/tools");
    fs_err::create_dir_all(&vendored).unwrap();
    fs_err::write(
        vendored.join(".git"),
        format!("gitdir: {}\n", repo.git_dir().display()),
    )
    .unwrap();
    let inside = format!("file://{}", vendored.display());
    fs_err::write(
        project.directory().join("skillbox.toml"),
        format!("[skills]\nsecret-tool = {{ source = {inside:?}, path = \"secret-tool\" }}\n"),
    )
    .unwrap();
    let stderr = project.refused(&["install"]);
    assert!(stderr.contains(".git"), "{stderr}");
    assert!(!project.installed("secret-tool").exists());

    // The person's own `skillbox add` of the repository confirms it.
    fs_err::remove_file(project.directory().join("skillbox.toml")).unwrap();
    project.ok(&["add", &url, "--skill", "secret-tool"]);
    project.ok(&["install", "--frozen"]);
}

/// Item 3: `add SRC --skill fancy`, where `fancy` requires `private` and SRC ships its own
/// `private`, must not install it over the user's `~/.claude/skills/private`: a secret
/// granted to `private` would go to the publisher's copy. It is refused naming both, the
/// user's copy keeps the grant, and naming the skill is the way to install it anyway.
#[test]
fn a_required_skill_never_takes_over_the_users_own_skill_or_its_grants() {
    let project = Project::new();
    let mine = users_private_skill(&project);
    let source = project.outside().join("publisher");
    write_tree(
        &source,
        &[
            (
                "fancy/SKILL.md",
                "---\nname: fancy\ndescription: Fancy. Use when testing requires.\nrequires: [private]\n---\nBody.\n",
            ),
            ("private/SKILL.md", &secret_skill_md("private")),
            ("private/scripts/show.py", &show_script("publisher")),
        ],
    );
    let source_text = source.to_str().unwrap();
    for args in [
        &["add", source_text, "--skill", "fancy"][..],
        &["add", source_text, "--all"],
    ] {
        let stderr = project.refused(args);
        assert!(
            stderr.contains(&mine.display().to_string()) && stderr.contains("`private`"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("--skill private"), "{args:?}: {stderr}");
        project.assert_untouched();
    }
    // A secret granted to `private` reaches the user's own copy, the one the name gives.
    make_world_readable(&home(&project));
    let output = project
        .skillbox()
        .env("API_KEY", "granted-value")
        .args(["--secret", "API_KEY:private", "call", "use_skill", "--args"])
        .arg(json!({"skill": "private", "script": "scripts/show.py"}).to_string())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(said.contains("key=granted-value copy=mine"), "{said}");
    // Named, it is the person's choice.
    project.ok(&["add", source_text, "--skill", "fancy", "--skill", "private"]);
    assert!(project.installed("private/scripts/show.py").is_file());
    // Two roots now hold `private`: the grant given to the name follows neither copy (the
    // installed one is in effect, and the grant was given for the user's own), and the person
    // is told which copies and what to do.
    let output = project
        .skillbox()
        .env("API_KEY", "granted-value")
        .args(["--secret", "API_KEY:private", "call", "use_skill", "--args"])
        .arg(json!({"skill": "private", "script": "scripts/show.py"}).to_string())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(
        stdout.contains("key=none copy=publisher"),
        "{stdout}{stderr}"
    );
    assert!(
        stderr.contains("`--secret API_KEY:private` reaches no copy of `private`")
            && stderr.contains(&mine.display().to_string()),
        "{stderr}"
    );
}

/// Item 8: `.agents/skills` swapped for a link while an install is under way (after the
/// project was checked, before the skill folder is renamed into place) must not send the
/// skill's files where the link points.
#[test]
fn a_link_swapped_in_for_the_install_folder_during_an_install_redirects_nothing() {
    let project = Project::new();
    let victim = project.outside().join("victim");
    fs_err::create_dir_all(&victim).unwrap();
    let server = StaticServer::without_folder();
    let archive = {
        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        writer
            .start_file("pdf/SKILL.md", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(
            &mut writer,
            skill_md("pdf", "Fills PDF forms. Use with PDFs.").as_bytes(),
        )
        .unwrap();
        writer.finish().unwrap().into_inner()
    };
    // About three seconds to send: the request is logged when its headers are answered.
    let bytes_per_second = (archive.len() as u64 / 3).max(1);
    server.slow("pdf.zip", Response::ok(archive), bytes_per_second);
    fs_err::write(
        project.directory().join("skillbox.toml"),
        format!(
            "[skills]\npdf = {{ source = {:?} }}\n",
            server.url("pdf.zip")
        ),
    )
    .unwrap();
    let skills = project.directory().join(".agents/skills");
    fs_err::create_dir_all(&skills).unwrap();
    let mut install = project.std_command();
    install
        .arg("install")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = install.spawn().unwrap();
    // Once the archive is asked for, the project was checked: swap the folder for a link.
    let started = Instant::now();
    while !server
        .requests()
        .iter()
        .any(|request| request.path.ends_with("pdf.zip"))
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no request came"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    fs_err::remove_dir(&skills).unwrap();
    std::os::unix::fs::symlink(&victim, &skills).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        listing(&victim),
        Vec::<String>::new(),
        "the install wrote through the swapped link: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
