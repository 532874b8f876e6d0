//! `skillbox new` and `skillbox pack` through the real binary: every skeleton validates (for
//! skillbox and for the reference validator, skills-ref) and its example really runs; packs are
//! byte-identical whatever the folder's times, modes and listing order, and install; published
//! indexes install over HTTP with their digests checked.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use skillbox_testkit::StaticServer;
use skillbox_testkit::make_fifo;

use super::install_project::{Project, sha256};
use super::support::{assert_exit, json_stdout, peer_python, repo_root, skillbox, write_tree};

const FORMATS: [&str; 3] = ["agent-skill", "skill-tools", "protocol"];
const LANGUAGES: [&str; 3] = ["python", "node", "bash"];

/// A temporary folder the sandbox user may enter (the tests may run as root, and the scripts
/// then run as another user).
fn open_temp() -> tempfile::TempDir {
    let temp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    temp
}

/// `skillbox ARGS` in `folder`; the output, with the exit status checked.
fn run_in(folder: &Path, args: &[&str], code: i32) -> std::process::Output {
    let output = skillbox().current_dir(folder).args(args).output().unwrap();
    assert_exit(&output, code);
    output
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// The name of the skeleton for one combination: a Skills Protocol id has no hyphens.
fn skeleton_name(format: &str, language: &str, tools: bool) -> String {
    let tools = if tools { "tools" } else { "plain" };
    match format {
        "protocol" => format!("count{language}{tools}"),
        _ => format!("count-{format}-{language}-{tools}"),
    }
}

#[test]
fn every_skeleton_validates_and_its_example_runs() {
    let temp = open_temp();
    let root = temp.path().join("skills");
    std::fs::create_dir(&root).unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = temp.path().join("data");
    let mut made = Vec::new();
    for format in FORMATS {
        for language in LANGUAGES {
            for tools in [false, true] {
                let name = skeleton_name(format, language, tools);
                let mut args = vec![
                    "new", &name, "--path", "skills", "--format", format, "--script", language,
                    "--json",
                ];
                if tools {
                    args.push("--tools");
                }
                let created = json_stdout(&run_in(temp.path(), &args, 0));
                assert_eq!(created["name"], name.as_str());
                made.push((name, format, language, created));
            }
        }
    }

    // All of them together: no error, no warning (tool names included, which must not clash).
    let report = json_stdout(&run_in(temp.path(), &["validate", "--json", "skills"], 0));
    assert_eq!(report["checked"], made.len());
    assert_eq!(report["warnings"], 0, "{report:#}");
    for skill in report["skills"].as_array().unwrap() {
        assert_eq!(skill["diagnostics"], serde_json::json!([]), "{skill:#}");
    }

    for (name, format, language, created) in &made {
        let script = created["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|file| file["path"].as_str().unwrap().starts_with("scripts/"))
            .unwrap()["path"]
            .as_str()
            .unwrap()
            .to_owned();
        let mode = std::fs::metadata(root.join(name).join(&script))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755, "{name}: {script}");
        // The script, as a person runs it.
        let ran = run_in(
            temp.path(),
            &["run", name, &script, "skills", "--", "one", "two", "three"],
            0,
        );
        let counts: Value = serde_json::from_str(&stdout(&ran)).unwrap();
        assert_eq!(
            counts,
            serde_json::json!({"words": 3, "lines": 1, "characters": 13}),
            "{name} ({language})"
        );
        // The tool, as a model calls it.
        if let Some(tool) = created["tool"].as_str() {
            let called = json_stdout(&run_in(
                temp.path(),
                &[
                    "call",
                    tool,
                    "skills",
                    "--args",
                    r#"{"text": "the \"quick\" brown\nfox"}"#,
                ],
                0,
            ));
            assert_eq!(
                called,
                serde_json::json!({"words": 4, "lines": 2, "characters": 21}),
                "{name} ({language})"
            );
        }
        // The Skills Protocol entrypoint, as `execute_skill` runs it.
        if *format == "protocol" {
            let arguments = serde_json::json!({"name": name, "args": {"text": "one two three"}});
            let executed = json_stdout(&run_in(
                temp.path(),
                &[
                    "call",
                    "execute_skill",
                    "skills",
                    "--data-dir",
                    data.to_str().unwrap(),
                    "--args",
                    &arguments.to_string(),
                ],
                0,
            ));
            assert_eq!(executed["status"], "completed", "{executed:#}");
            assert_eq!(executed["output"]["words"], 3, "{executed:#}");
        }
        // The evals are in the shapes `skillbox eval` reads.
        let evals: Value = serde_json::from_slice(
            &fs_err::read(root.join(name).join("evals/evals.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(evals["skill_name"], name.as_str());
        let expectations = evals["evals"][0]["expectations"].as_array().unwrap();
        assert!(expectations[0].is_string() && expectations[1]["contains"] == "9");
        let triggers: Value = serde_json::from_slice(
            &fs_err::read(root.join(name).join("evals/triggers.json")).unwrap(),
        )
        .unwrap();
        let should: Vec<bool> = triggers
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["should_trigger"].as_bool().unwrap())
            .collect();
        assert!(should.iter().filter(|yes| **yes).count() >= 3);
        assert!(should.iter().filter(|yes| !**yes).count() >= 3);
    }

    // The reference validator accepts every one of them too.
    let paths: Vec<String> = made
        .iter()
        .map(|(name, ..)| root.join(name).display().to_string())
        .collect();
    let output = Command::new(peer_python())
        .arg(repo_root().join("tests/peers/skills_ref_verdicts.py"))
        .args(&paths)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let verdicts: Value = serde_json::from_slice(&output.stdout).unwrap();
    for path in &paths {
        assert_eq!(
            verdicts[path],
            serde_json::json!([]),
            "skills-ref on {path}"
        );
    }
}

#[test]
fn new_prints_the_files_and_the_next_steps() {
    let temp = open_temp();
    let output = run_in(
        temp.path(),
        &["new", "word-count", "--tools", "--script", "python"],
        0,
    );
    insta::assert_snapshot!("new_output", stdout(&output));
    let skill_md = fs_err::read_to_string(temp.path().join("word-count/SKILL.md")).unwrap();
    insta::assert_snapshot!("new_skill_md_tools_python", skill_md);
    let tools = fs_err::read_to_string(temp.path().join("word-count/tools.json")).unwrap();
    insta::assert_snapshot!("new_tools_json", tools);
}

#[test]
fn new_refuses_what_exists_and_names_the_rule_a_name_breaks() {
    let temp = open_temp();
    let folder = temp.path();
    std::fs::create_dir(folder.join("taken")).unwrap();
    std::fs::write(folder.join("file"), "x").unwrap();
    std::os::unix::fs::symlink(folder.join("nowhere"), folder.join("dangling")).unwrap();
    for (name, kind) in [
        ("taken", "a folder"),
        ("file", "a file"),
        ("dangling", "a symlink"),
    ] {
        let output = run_in(folder, &["new", name], 2);
        assert!(
            stderr(&output).contains(&format!("`{name}` already exists ({kind})")),
            "{}",
            stderr(&output)
        );
    }
    for (args, expected) in [
        (
            &["new", "Word-Count"][..],
            "`Word-Count` cannot be a skill name: it must be lowercase; use `word-count`",
        ),
        (&["new", "word--count"][..], "it must not contain `--`"),
        (&["new", "../escape"][..], "it contains `/`"),
        (
            &["new", "word-count", "--format", "protocol"][..],
            "a Skills Protocol id is lowercase letters and digits in dot-separated segments; use an id such as `word.count`",
        ),
        (
            &["new", "word-count", "--path", "missing"][..],
            "`missing` does not exist",
        ),
    ] {
        let output = run_in(folder, args, 2);
        assert!(stderr(&output).contains(expected), "{}", stderr(&output));
    }
    // Nothing was left behind: no staging folder, nothing changed.
    let mut names: Vec<String> = fs_err::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["dangling", "file", "taken"]);
}

/// A skill made by `new`, with extra files of every kind the packer meets: nested, executable,
/// hidden, and the ones it leaves out.
fn packable_skill(parent: &Path, name: &str) -> PathBuf {
    run_in(parent, &["new", name, "--script", "bash"], 0);
    let folder = parent.join(name);
    write_tree(
        &folder,
        &[
            ("references/guide.md", "# Guide\n"),
            ("references/a-b.md", "sorted before references/a/\n"),
            ("references/a/deep.md", "deep\n"),
            (".hidden-config", "kept\n"),
            (".git/HEAD", "ref: refs/heads/main\n"),
            ("scripts/__pycache__/x.cpython-311.pyc", "cache"),
            ("node_modules/left/index.js", "module"),
            (".DS_Store", "finder"),
            ("docs/.DS_Store", "finder"),
        ],
    );
    folder
}

/// Copy a tree file by file in reverse order, with other modes (group-writable, the owner's
/// execute bit kept) and other times: what another machine's checkout looks like.
fn copy_differently(from: &Path, to: &Path) {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(from)
        .into_iter()
        .map(|entry| entry.unwrap().into_path())
        .filter(|path| path.is_file())
        .collect();
    files.reverse();
    let mut time = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    for file in files {
        let target = to.join(file.strip_prefix(from).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&file, &target).unwrap();
        let executable = std::fs::metadata(&file).unwrap().permissions().mode() & 0o100 != 0;
        let mode = if executable { 0o775 } else { 0o664 };
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode)).unwrap();
        time += std::time::Duration::from_secs(3_600);
        std::fs::File::options()
            .write(true)
            .open(&target)
            .unwrap()
            .set_modified(time)
            .unwrap();
    }
}

#[test]
fn pack_writes_the_same_bytes_every_time_and_the_archive_installs() {
    let temp = open_temp();
    let folder = packable_skill(temp.path(), "packed");
    let first = run_in(temp.path(), &["pack", "packed", "--json"], 0);
    let report = json_stdout(&first);
    let archive = temp.path().join("packed.skill");
    let bytes = fs_err::read(&archive).unwrap();
    assert_eq!(report["digest"], sha256(&bytes));
    assert_eq!(report["size_bytes"], bytes.len());
    assert_eq!(
        report["left_out"],
        serde_json::json!([
            ".DS_Store",
            ".git/",
            "docs/.DS_Store",
            "evals/",
            "node_modules/",
            "scripts/__pycache__/"
        ])
    );

    // Again, and from a copy made otherwise elsewhere: the same bytes.
    run_in(temp.path(), &["pack", "packed", "-o", "again.skill"], 0);
    assert_eq!(
        fs_err::read(temp.path().join("again.skill")).unwrap(),
        bytes
    );
    let elsewhere = temp.path().join("elsewhere");
    copy_differently(&folder, &elsewhere.join("packed"));
    run_in(&elsewhere, &["pack", "packed", "-o", "../copy.skill"], 0);
    assert_eq!(fs_err::read(temp.path().join("copy.skill")).unwrap(), bytes);

    // What is in it: sorted paths under `packed/`, no folders, fixed times and modes.
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(&bytes)).unwrap();
    let entries: Vec<(String, u32)> = (0..zip.len())
        .map(|index| {
            let entry = zip.by_index(index).unwrap();
            assert_eq!(entry.last_modified(), Some(zip::DateTime::default()));
            (
                entry.name().unwrap().into_owned(),
                entry.unix_mode().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("packed/.hidden-config", 0o100_644),
            ("packed/SKILL.md", 0o100_644),
            ("packed/references/a-b.md", 0o100_644),
            ("packed/references/a/deep.md", 0o100_644),
            ("packed/references/guide.md", 0o100_644),
            ("packed/scripts/example.sh", 0o100_755),
        ]
        .map(|(name, mode)| (name.to_owned(), mode))
    );

    // The catalog reads it, and it installs as a skill that validates and runs.
    let validated = json_stdout(&run_in(
        temp.path(),
        &["validate", "--json", "packed.skill"],
        0,
    ));
    assert_eq!(validated["warnings"], 0, "{validated:#}");
    let project = Project::new();
    project.ok(&["add", archive.to_str().unwrap()]);
    let installed = project.installed("packed");
    assert!(installed.join("scripts/example.sh").is_file());
    assert!(!installed.join("evals").exists());
    run_in(temp.path(), &["validate", installed.to_str().unwrap()], 0);
}

#[test]
fn pack_prints_the_archive_and_its_digest() {
    let temp = open_temp();
    packable_skill(temp.path(), "packed");
    let output = run_in(temp.path(), &["pack", "packed"], 0);
    insta::assert_snapshot!("pack_output", stdout(&output));
}

#[test]
fn pack_refuses_links_special_files_and_invalid_skills_by_name() {
    let temp = open_temp();
    let folder = packable_skill(temp.path(), "packed");
    let secret = temp.path().join("secret.txt");
    std::fs::write(&secret, "secret").unwrap();

    std::os::unix::fs::symlink(&secret, folder.join("references/link.md")).unwrap();
    let output = run_in(temp.path(), &["pack", "packed"], 2);
    assert!(
        stderr(&output).contains("`packed/references/link.md` is a symlink"),
        "{}",
        stderr(&output)
    );
    std::fs::remove_file(folder.join("references/link.md")).unwrap();

    std::os::unix::fs::symlink(temp.path(), folder.join("outside")).unwrap();
    let output = run_in(temp.path(), &["pack", "packed"], 2);
    assert!(
        stderr(&output).contains("`packed/outside` is a symlink"),
        "{}",
        stderr(&output)
    );
    std::fs::remove_file(folder.join("outside")).unwrap();

    make_fifo(&folder.join("scripts/pipe"));
    let output = run_in(temp.path(), &["pack", "packed"], 2);
    assert!(
        stderr(&output).contains("`packed/scripts/pipe` is a FIFO (named pipe)"),
        "{}",
        stderr(&output)
    );
    std::fs::remove_file(folder.join("scripts/pipe")).unwrap();

    let output = run_in(
        temp.path(),
        &["pack", "packed", "-o", "packed/self.skill"],
        2,
    );
    assert!(
        stderr(&output).contains("is inside the skill folder"),
        "{}",
        stderr(&output)
    );

    let skill_md = folder.join("SKILL.md");
    let text = fs_err::read_to_string(&skill_md).unwrap();
    std::fs::write(&skill_md, text.replace("name: packed", "name: Packed")).unwrap();
    let output = run_in(temp.path(), &["pack", "packed"], 1);
    let error = stderr(&output);
    assert!(
        error.contains(
            "error[name-not-lowercase] packed/SKILL.md:2:1: skill name `Packed` must be lowercase"
        ) && error.contains("`packed` is not a valid skill (2 error(s))"),
        "{error}"
    );

    // No archive and no temporary file was written by any of them.
    let mut names: Vec<String> = fs_err::read_dir(temp.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["packed", "secret.txt"]);
}

/// Every file under `folder` with its bytes, by relative path.
fn tree(folder: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(folder)
        .into_iter()
        .map(|entry| entry.unwrap().into_path())
        .filter(|path| path.is_file())
        .map(|path| {
            (
                path.strip_prefix(folder).unwrap().display().to_string(),
                fs_err::read(&path).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_published_index_installs_over_http_with_its_digests_checked() {
    let temp = open_temp();
    let skills = temp.path().join("skills");
    std::fs::create_dir(&skills).unwrap();
    packable_skill(&skills, "with-script");
    write_tree(
        &skills,
        &[
            (
                "only-instructions/SKILL.md",
                "---\nname: only-instructions\ndescription: Writes release notes from a list of changes. Use when the user asks for release notes.\n---\n# Release notes\n\nGroup the changes by kind.\n",
            ),
            // Left out, so the skill is still only its SKILL.md.
            ("only-instructions/evals/triggers.json", "[]\n"),
            ("notes/README.md", "not a skill\n"),
        ],
    );
    let published = json_stdout(&run_in(
        temp.path(),
        &["pack", "--index", "skills", "-o", "site", "--json"],
        0,
    ));
    let site = temp.path().join("site");
    let well_known = site.join(".well-known/agent-skills");
    let index: Value =
        serde_json::from_slice(&fs_err::read(well_known.join("index.json")).unwrap()).unwrap();
    assert_eq!(
        index["$schema"],
        "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    );
    let listed: Vec<(&str, &str, &str)> = index["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| {
            (
                skill["name"].as_str().unwrap(),
                skill["type"].as_str().unwrap(),
                skill["url"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            (
                "only-instructions",
                "skill-md",
                "only-instructions/SKILL.md"
            ),
            ("with-script", "archive", "with-script.tar.gz"),
        ]
    );
    // Each digest is the sha256 of the artifact's bytes.
    for skill in index["skills"].as_array().unwrap() {
        let artifact = fs_err::read(well_known.join(skill["url"].as_str().unwrap())).unwrap();
        assert_eq!(skill["digest"], sha256(&artifact), "{skill}");
    }
    assert_eq!(
        published["skipped"],
        serde_json::json!([{"path": "skills/notes", "reason": "no `SKILL.md`"}])
    );

    // Publishing again, into the same place or another, gives the same tree.
    let before = tree(&site);
    let again = run_in(temp.path(), &["pack", "--index", "skills", "-o", "site"], 0);
    assert_eq!(tree(&site), before);
    insta::assert_snapshot!("pack_index_output", stdout(&again));
    run_in(
        temp.path(),
        &["pack", "--index", "skills", "-o", "other"],
        0,
    );
    assert_eq!(tree(&temp.path().join("other")), before);

    // Served as a site, both install and validate.
    let server = StaticServer::start(&site);
    let project = Project::new();
    project.ok(&[
        "add",
        &server.base_url(),
        "--skill",
        "only-instructions",
        "--skill",
        "with-script",
    ]);
    for name in ["only-instructions", "with-script"] {
        let installed = project.installed(name);
        run_in(temp.path(), &["validate", installed.to_str().unwrap()], 0);
    }
    let script = project.installed("with-script").join("scripts/example.sh");
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o100,
        0o100
    );
    assert_eq!(
        project.lock()["skills"]["with-script"]["kind"],
        "well-known"
    );
}

#[test]
fn an_index_with_invalid_skills_names_every_one_and_writes_nothing() {
    let temp = open_temp();
    write_tree(
        temp.path(),
        &[
            (
                "skills/good/SKILL.md",
                "---\nname: good\ndescription: Good. Use for good things.\n---\nBody.\n",
            ),
            (
                "skills/first/SKILL.md",
                "---\nname: First\ndescription: Bad name.\n---\nBody.\n",
            ),
            (
                "skills/second/SKILL.md",
                "---\nname: second\n---\nNo description.\n",
            ),
        ],
    );
    let output = run_in(temp.path(), &["pack", "--index", "skills", "-o", "site"], 1);
    let error = stderr(&output);
    assert!(
        error.contains("skills/first/SKILL.md")
            && error.contains("skills/second/SKILL.md")
            && error.contains("missing required field `description`")
            && error.contains("2 skill folder(s) of `skills` are not valid"),
        "{error}"
    );
    assert!(!temp.path().join("site").exists());
}
