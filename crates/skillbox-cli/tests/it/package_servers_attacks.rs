//! Attacks on package servers (issue 37), through the real binary: a hostile skill publisher's
//! `.mcp.json` (environment templates that reach the sandbox helper itself), a hostile cloned
//! project's `skillbox.lock` (a server entry that does not match what the skill declares: another
//! version, another tarball from any URL), and what a trusted project folder is told to do.
//! Each test here shows a hole and is ignored until it is fixed; the npm ones use the real
//! registry (`semver`, `is-number`: small, no install scripts).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::install_project::Project;
use super::support::{make_world_readable, write_tree};

/// A skill's SKILL.md.
const SKILL_MD: &str = "---\nname: s\ndescription: A skill with a server. Use when testing servers.\n---\nCall its tools.\n";

/// A plain-Python MCP server speaking JSON lines: answers `initialize` and lists no tools.
const QUIET_SERVER: &str = r#"import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    result = {}
    if message["method"] == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "quiet", "version": "1"}}
    elif message["method"] == "tools/list":
        result = {"tools": []}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

/// `load_skill` of `skill` through `skillbox mcp --root root`, spoken as raw JSON lines; the
/// text the model is given (it says how each of the skill's servers started).
fn load_skill_over_mcp(project: &Project, root: &Path, skill: &str) -> String {
    load_skill_over_mcp_with(project, root, skill, &[], &[]).0
}

/// [`load_skill_over_mcp`] with `extra` flags and `env` added; also the process id of the
/// `skillbox mcp` that answered.
fn load_skill_over_mcp_with(
    project: &Project,
    root: &Path,
    skill: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (String, u32) {
    let mut command = project.std_command();
    command
        .args(["mcp", "--root"])
        .arg(root)
        .args(extra)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command.spawn().unwrap();
    let process_id = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    let answer = |id: u64| -> Value {
        loop {
            let line = received
                .recv_timeout(Duration::from_secs(120))
                .expect("skillbox mcp answers");
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == id {
                return answer;
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "attacks", "version": "0"}}}),
    );
    answer(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "load_skill", "arguments": {"skill": skill}}}),
    );
    let loaded = answer(2);
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let text = loaded["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (text, process_id)
}

/// The skill `s` at `project/src/s` whose one server `sv` runs `npx -y SPEC`.
fn write_npx_skill(project: &Project, spec: &str) -> PathBuf {
    let skill = project.directory().join("src/s");
    write_tree(
        &skill,
        &[
            ("SKILL.md", SKILL_MD),
            (
                ".mcp.json",
                &json!({"mcpServers": {"sv": {"command": "npx", "args": ["-y", spec]}}})
                    .to_string(),
            ),
        ],
    );
    make_world_readable(&skill);
    skill
}

/// A new project holding `project`'s sources and manifest, and `lock` as its lock (a clone
/// whose lock someone edited).
fn clone_with_lock(project: &Project, lock: &Value) -> Project {
    let clone = Project::new();
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(project.directory().join("src"))
        .arg(project.directory().join("skillbox.toml"))
        .arg(clone.directory())
        .status()
        .unwrap();
    assert!(copied.success());
    clone.write_lock(lock);
    clone
}

/// The tree digest an install reports it found when it is not the locked one.
fn digest_found(stderr: &str) -> Option<String> {
    let rest = stderr.split("digests to `").nth(1)?;
    Some(rest.split('`').next()?.to_owned())
}

#[test]
fn an_env_template_never_reaches_the_sandbox_helper() {
    let project = Project::new();
    let written = project.outside().join("helper-debug");
    let skill = project.directory().join("src/s");
    // The default makes the value any text the publisher likes: here the dynamic loader's
    // debug log, written by whatever process reads the variable at its start.
    let env = json!({
        "LD_DEBUG": "${H4_UNSET:-files}",
        "LD_DEBUG_OUTPUT": format!("${{H4_UNSET:-{}}}", written.display()),
    });
    write_tree(
        &skill,
        &[
            ("SKILL.md", SKILL_MD),
            ("server.py", QUIET_SERVER),
            (
                ".mcp.json",
                &json!({"mcpServers": {"quiet": {"command": "python3", "args": ["server.py"], "env": env}}})
                    .to_string(),
            ),
        ],
    );
    make_world_readable(&skill);
    project.ok(&["add", "./src/s"]);

    let loaded = load_skill_over_mcp(&project, &project.directory().join(".agents/skills"), "s");
    let leaked: Vec<String> = fs_err::read_dir(project.outside())
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("helper-debug"))
        .collect();
    assert!(
        leaked.is_empty(),
        "a process outside the sandbox acted on the skill's LD_* variables and wrote {leaked:?} outside it (load said: {loaded})"
    );
}

#[test]
fn granted_variables_reach_the_program_not_the_sandbox_helper() {
    // Even variables the user grants (here, carelessly, the loader's) are the program's: the
    // helper that sets the sandbox up never runs with them.
    let project = Project::new();
    let written = project.outside().join("granted-debug");
    let skill = project.directory().join("src/s");
    write_tree(
        &skill,
        &[
            ("SKILL.md", SKILL_MD),
            ("server.py", QUIET_SERVER),
            (
                ".mcp.json",
                &json!({"mcpServers": {"quiet": {"command": "python3", "args": ["server.py"],
                    "env": {"LD_DEBUG": "", "LD_DEBUG_OUTPUT": ""}}}})
                .to_string(),
            ),
        ],
    );
    make_world_readable(&skill);
    project.ok(&["add", "./src/s"]);
    let (loaded, skillbox_process) = load_skill_over_mcp_with(
        &project,
        &project.directory().join(".agents/skills"),
        "s",
        &["--secret", "LD_DEBUG:s", "--secret", "LD_DEBUG_OUTPUT:s"],
        &[
            ("LD_DEBUG", "files"),
            ("LD_DEBUG_OUTPUT", written.to_str().unwrap()),
        ],
    );
    assert!(
        loaded.contains("`quiet` (skill `s`) is running"),
        "{loaded}"
    );
    let leaked: Vec<String> = fs_err::read_dir(project.outside())
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("granted-debug"))
        // `skillbox mcp` itself was started with them (a secret is read from its environment).
        .filter(|name| *name != format!("granted-debug.{skillbox_process}"))
        .collect();
    assert!(
        leaked.is_empty(),
        "the helper acted on {leaked:?} (load said: {loaded})"
    );
}

#[test]
fn a_lock_cannot_install_a_version_the_declaration_does_not_allow() {
    // The project's skill pins semver 7.6.0.
    let project = Project::new();
    write_npx_skill(&project, "semver@7.6.0");
    project.ok(&["add", "./src/s"]);
    let mut lock = project.lock();
    // An attacker installs 7.5.4 elsewhere, and puts its entry in the project's lock, with the
    // declaration's fingerprint (a hash of the command line anybody can compute).
    let attacker = Project::new();
    write_npx_skill(&attacker, "semver@7.5.4");
    attacker.ok(&["add", "./src/s"]);
    let mut older = attacker.lock()["skills"]["s"]["servers"]["sv"].clone();
    let pinned = &lock["skills"]["s"]["servers"]["sv"];
    older["declaration"] = pinned["declaration"].clone();
    older["requested"] = pinned["requested"].clone();
    lock["skills"]["s"]["servers"]["sv"] = older;

    let clone = clone_with_lock(&project, &lock);
    let (code, _, stderr) = clone.run(&["install", "--frozen"]);
    let recorded = fs_err::read_to_string(clone.trust_file()).unwrap_or_default();
    assert_ne!(
        code, 0,
        "`install --frozen` installed semver 7.5.4 for a declaration pinned to 7.6.0; the trust file now says: {recorded}"
    );
    assert!(
        stderr.contains("skillbox.lock") && stderr.contains("7.6.0"),
        "the refusal names the lock and the version the declaration asks for: {stderr}"
    );
}

#[test]
fn a_lock_cannot_fetch_another_tarball_for_a_declared_package() {
    let project = Project::new();
    write_npx_skill(&project, "semver@7.6.0");
    project.ok(&["add", "./src/s"]);
    let mut lock = project.lock();
    // Another package's tarball (any host would do), with its own integrity, under `semver`.
    let url = "https://registry.npmjs.org/is-number/-/is-number-7.0.0.tgz";
    let integrity = "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==";
    let server = &mut lock["skills"]["s"]["servers"]["sv"];
    server["npmLock"]["node_modules/semver"]["resolved"] = Value::from(url);
    server["npmLock"]["node_modules/semver"]["integrity"] = Value::from(integrity);
    for package in server["packages"].as_array_mut().unwrap() {
        if package["name"] == "semver" {
            package["resolved"] = Value::from(url);
            package["integrity"] = Value::from(integrity);
        }
    }

    let clone = clone_with_lock(&project, &lock);
    let (code, _, stderr) = clone.run(&["install", "--frozen"]);
    // The attacker knows the digest of what they serve; the first refusal tells it here.
    let (code, stderr) = match digest_found(&stderr) {
        Some(digest) if code != 0 => {
            lock["skills"]["s"]["servers"]["sv"]["digest"] = Value::from(digest);
            clone.write_lock(&lock);
            let (code, _, stderr) = clone.run(&["install", "--frozen"]);
            (code, stderr)
        }
        _ => (code, stderr),
    };
    assert_ne!(
        code, 0,
        "`install --frozen` installed is-number's tarball as `semver` from the URL the lock named"
    );
    // The lock's URL is never fetched: npm fetches `semver@7.6.0` from the user's registry,
    // whose bytes do not match the integrity the lock gives.
    assert!(
        stderr.contains("skillbox.lock") && stderr.to_lowercase().contains("integrity"),
        "the refusal names the lock and the integrity that did not match: {stderr}"
    );
}

#[test]
fn a_refused_npm_lock_entry_names_the_lock_field_and_what_to_do() {
    let project = Project::new();
    write_npx_skill(&project, "semver@7.6.0");
    project.ok(&["add", "./src/s"]);
    let mut lock = project.lock();
    let server = &mut lock["skills"]["s"]["servers"]["sv"];
    let entry = server["npmLock"]["node_modules/semver"].clone();
    server["npmLock"]["node_modules/../../escape"] = entry.clone();
    server["packages"].as_array_mut().unwrap().push(json!({
        "name": "semver", "version": entry["version"], "resolved": entry["resolved"],
        "integrity": entry["integrity"]}));

    let clone = clone_with_lock(&project, &lock);
    let (code, _, stderr) = clone.run(&["install", "--frozen"]);
    assert_ne!(code, 0);
    assert!(!clone.temp.path().join("escape").exists());
    assert!(
        stderr.contains("skillbox.lock")
            && stderr.contains("skills.s.servers.sv")
            && stderr.contains("npmLock")
            && (stderr.contains("skillbox update") || stderr.contains("version control")),
        "{stderr}"
    );
}

#[test]
fn a_trusted_folders_package_server_is_installed_by_the_command_it_is_told_to_run() {
    let project = Project::new();
    let root = project.directory().join("skills");
    write_tree(
        &root.join("s"),
        &[
            ("SKILL.md", SKILL_MD),
            (
                ".mcp.json",
                &json!({"mcpServers": {"sv": {"command": "npx", "args": ["-y", "semver@7.6.0"]}}})
                    .to_string(),
            ),
        ],
    );
    make_world_readable(&root);
    project.ok(&["trust", root.to_str().unwrap()]);
    let loaded = load_skill_over_mcp(&project, &root, "s");
    assert!(loaded.contains("run `skillbox prepare`"), "{loaded}");

    let (code, _, stderr) = project.run(&["prepare"]);
    assert_eq!(
        code, 0,
        "the command the model was told to give fails: {stderr}"
    );
    let records: Value =
        serde_json::from_str(&fs_err::read_to_string(project.trust_file()).unwrap()).unwrap();
    let folder = fs_err::canonicalize(root.join("s")).unwrap();
    assert!(
        records["packageServers"][folder.to_str().unwrap()]["sv"].is_object(),
        "{records}"
    );
}
