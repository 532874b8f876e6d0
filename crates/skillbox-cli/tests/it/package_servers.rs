//! Package servers (issue 37): a skill's `npx -y …` and `uvx …` servers, with real packages
//! from npm (`@modelcontextprotocol/server-everything`) and PyPI (`mcp-server-time`),
//! installed ahead by `skillbox add`, pinned in the lock, reproduced by `install --frozen`, and
//! run offline in the sandbox: the official MCP client loads the skill and calls their tools
//! through `skillbox mcp` with both registries pointed at a closed loopback port. Tampering
//! with a stored tree, a lying integrity in the lock, a lock missing a server and the plugin
//! variables each have a test.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::install_project::Project;
use super::support::{json_stdout, make_world_readable, peer_python, write_tree};

/// The PyPI server's pinned version (the npm one is left open: `add` pins it).
const TIME_VERSION: &str = "2026.10.19";

/// Registry settings that reach nothing: a loopback port nobody listens on.
const CLOSED_REGISTRIES: [(&str, &str); 3] = [
    ("npm_config_registry", "http://127.0.0.1:9/"),
    ("PIP_INDEX_URL", "http://127.0.0.1:9/simple"),
    ("UV_INDEX_URL", "http://127.0.0.1:9/simple"),
];

/// The skill `clock`, inside the project at `src/clock`: an unpinned npm server, a pinned
/// PyPI server, and environment values from the plugin variables.
fn write_clock_skill(project: &Project) -> PathBuf {
    let skill = project.directory().join("src/clock");
    write_tree(
        &skill,
        &[
            (
                "SKILL.md",
                "---\nname: clock\ndescription: Tells the time in a city and echoes text. Use when asked the time.\n---\nCall `time__get_current_time`, or `everything__echo`.\n",
            ),
            (
                ".mcp.json",
                &format!(
                    r#"{{"mcpServers": {{
  "everything": {{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"],
                 "env": {{"SKILL_HOME": "${{CLAUDE_PLUGIN_ROOT}}/data", "LEVEL": "${{LOG_LEVEL:-info}}", "API_KEY": "${{CLOCK_KEY}}"}}}},
  "time": {{"command": "uvx", "args": ["mcp-server-time@{TIME_VERSION}", "--local-timezone=${{TZ_NAME:-UTC}}"]}}
}}}}"#
                ),
            ),
        ],
    );
    make_world_readable(&skill);
    skill
}

/// The official MCP client: loads `clock` through `skillbox mcp` (with `extra` flags) and calls
/// the servers' tools; what it saw, as JSON.
const CLIENT: &str = r#"import asyncio, json, os, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    binary, root, *extra = sys.argv[1:]
    params = StdioServerParameters(command=binary, args=["mcp", "--root", root, *extra], env=dict(os.environ))
    seen = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            loaded = await session.call_tool("load_skill", {"skill": "clock"})
            seen["loaded"] = loaded.content[0].text
            seen["tools"] = [tool.name for tool in (await session.list_tools()).tools]
            if "time__get_current_time" in seen["tools"]:
                now = await session.call_tool("time__get_current_time", {"timezone": "Europe/Oslo"})
                seen["time"] = [now.content[0].text, now.is_error]
            if "everything__echo" in seen["tools"]:
                echo = await session.call_tool("everything__echo", {"message": "hello"})
                seen["echo"] = [echo.content[0].text, echo.is_error]
                env = await session.call_tool("everything__get-env", {})
                seen["env"] = env.content[0].text
    print(json.dumps(seen))

asyncio.run(main())
"#;

/// Run the client over the project's install folder, registries closed, with `extra` flags
/// and `env` added.
fn client(project: &Project, extra: &[&str], env: &[(&str, &str)]) -> Value {
    client_over(
        project,
        &project.directory().join(".agents/skills"),
        extra,
        env,
    )
}

/// [`client`] over any root.
fn client_over(project: &Project, root: &Path, extra: &[&str], env: &[(&str, &str)]) -> Value {
    let script = project.outside().join("client.py");
    fs_err::write(&script, CLIENT).unwrap();
    let mut command = std::process::Command::new(peer_python());
    command
        .arg(&script)
        .arg(assert_cmd::cargo::cargo_bin("skillbox"))
        .arg(root)
        .args(extra);
    for (key, value) in project.std_command().get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command.envs(CLOSED_REGISTRIES).envs(env.iter().copied());
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "the MCP client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Copy `sources` (files or folders) into the folder `into`.
fn copy_into(sources: &[PathBuf], into: &Path) {
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .args(sources)
        .arg(into)
        .status()
        .unwrap();
    assert!(copied.success());
}

/// A copy of the project's sources, manifest and lock in a new project (a clone).
fn clone_of(project: &Project) -> Project {
    let clone = Project::new();
    let from = project.directory();
    copy_into(
        &[
            from.join("src"),
            from.join("skillbox.toml"),
            from.join("skillbox.lock"),
        ],
        &clone.directory(),
    );
    clone
}

fn stored_tree(project: &Project, digest: &str) -> PathBuf {
    project
        .temp
        .path()
        .join("cache/store/sha256")
        .join(digest.strip_prefix("sha256:").unwrap())
}

#[test]
fn servers_from_npm_and_pypi_are_pinned_at_add_and_run_offline_in_the_sandbox() {
    let project = Project::new();
    let skill = write_clock_skill(&project);

    // `validate` says what it found, and warns about the open version.
    let (_, report, _) = project.run(&["validate", "--json", skill.to_str().unwrap()]);
    let report: Value = serde_json::from_str(&report).unwrap();
    let notes: Vec<(String, String)> = report["skills"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|note| note["code"] == "server-package")
        .map(|note| {
            (
                note["severity"].as_str().unwrap().to_owned(),
                note["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes.iter().any(|(severity, message)| severity == "warning"
            && message.contains("npm package `@modelcontextprotocol/server-everything`")
            && message.contains("not pinned")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|(severity, message)| severity == "info"
            && message.contains(&format!(
                "pypi package `mcp-server-time`, version =={TIME_VERSION}"
            ))),
        "{notes:?}"
    );

    let (code, _, stderr) = project.run(&["add", "./src/clock"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("server `everything` of `clock` asks for @modelcontextprotocol/server-everything without a version"),
        "{stderr}"
    );
    let locked = project.lock();
    let servers = &locked["skills"]["clock"]["servers"];
    let everything = &servers["everything"];
    let version = everything["version"].as_str().unwrap();
    assert!(
        version.split('.').count() == 3 && version.chars().all(|c| c.is_ascii_digit() || c == '.'),
        "an open version is pinned to an exact one: {version}"
    );
    assert_eq!(everything["registry"], "npm");
    assert_eq!(
        everything["entry"]["script"],
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    );
    let packages = everything["packages"].as_array().unwrap();
    assert!(packages.len() > 20, "{packages:?}");
    assert!(packages.iter().all(|package| {
        package["integrity"]
            .as_str()
            .unwrap()
            .starts_with("sha512-")
    }));
    let time = &servers["time"];
    assert_eq!(
        (time["registry"].as_str(), time["version"].as_str()),
        (Some("pypi"), Some(TIME_VERSION))
    );
    assert_eq!(time["entry"]["module"], "mcp_server_time");
    assert!(time["packages"].as_array().unwrap().iter().all(|package| {
        let integrity = package["integrity"].as_str().unwrap();
        integrity.starts_with("sha256:") && integrity.len() == 71
    }));
    for server in [everything, time] {
        assert!(stored_tree(&project, server["digest"].as_str().unwrap()).is_dir());
    }

    // Loaded and called with every registry closed; the plugin variables expand in the
    // sandbox (the skill's folder as the sandbox shows it, a default, a granted secret), and
    // nothing else of the user's environment reaches the server.
    let seen = client(
        &project,
        &["--secret", "CLOCK_KEY:clock"],
        &[("CLOCK_KEY", "k-4711"), ("LEAKED_SECRET", "must-not-leak")],
    );
    let loaded = seen["loaded"].as_str().unwrap();
    assert!(
        loaded.contains("`everything` (skill `clock`) is running"),
        "{loaded}"
    );
    assert!(
        loaded.contains("`time` (skill `clock`) is running"),
        "{loaded}"
    );
    let now = seen["time"][0].as_str().unwrap();
    assert!(now.contains("\"timezone\": \"Europe/Oslo\""), "{now}");
    assert_eq!(seen["time"][1], false);
    assert_eq!(seen["echo"], serde_json::json!(["Echo: hello", false]));
    let env = seen["env"].as_str().unwrap();
    assert!(
        env.contains("\"SKILL_HOME\": \"/skill/data\"") || env.contains("clock/data\""),
        "{env}"
    );
    assert!(env.contains("\"LEVEL\": \"info\""), "{env}");
    assert!(env.contains("\"API_KEY\": \"k-4711\""), "{env}");
    assert!(
        !env.contains("must-not-leak") && !env.contains("127.0.0.1:9"),
        "{env}"
    );

    // A clone with only the sources, manifest and lock installs exactly the same trees
    // (`--frozen`), then again from its warm store with the registries closed.
    let clone = clone_of(&project);
    let (code, _, stderr) = clone.run(&["install", "--frozen"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        clone.lock(),
        locked,
        "a frozen install changes nothing in the lock"
    );
    for server in [everything, time] {
        assert!(stored_tree(&clone, server["digest"].as_str().unwrap()).is_dir());
    }
    fs_err::remove_dir_all(clone.directory().join(".agents")).unwrap();
    let output = clone
        .skillbox()
        .args(["install", "--frozen"])
        .envs(CLOSED_REGISTRIES)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen = client(&clone, &[], &[]);
    assert_eq!(seen["time"][1], false, "{seen}");
    // Without the grant its template names, `everything` does not start, and says why.
    let loaded = seen["loaded"].as_str().unwrap();
    assert!(
        loaded.contains("`${CLOCK_KEY}` is not granted to the skill and has no default; grant it with `--secret CLOCK_KEY`"),
        "{loaded}"
    );
    let seen = client(
        &clone,
        &["--secret", "CLOCK_KEY:clock"],
        &[("CLOCK_KEY", "k-1")],
    );
    assert_eq!(
        seen["echo"],
        serde_json::json!(["Echo: hello", false]),
        "{seen}"
    );

    // `outdated` asks the registries for the newest version each declaration allows.
    let (code, stdout, stderr) = project.run(&["outdated"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("clock:everything"), "{stdout}");
    let mut older = locked.clone();
    older["skills"]["clock"]["servers"]["everything"]["version"] = Value::from("2025.1.14");
    project.write_lock(&older);
    let (code, stdout, stderr) = project.run(&["outdated"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with("outdated") && line.contains("clock:everything")),
        "{stdout}"
    );
    assert!(
        stderr.contains(&format!(
            "server `everything` of `clock`: @modelcontextprotocol/server-everything 2025.1.14 is locked, {version} is out"
        )),
        "{stderr}"
    );
}

#[test]
fn a_changed_stored_tree_is_named_by_verify_and_refused_at_start() {
    let project = Project::new();
    let skill = project.directory().join("src/clock");
    write_tree(
        &skill,
        &[(
            "SKILL.md",
            "---\nname: clock\ndescription: Tells the time. Use when asked the time.\n---\nCall `time__get_current_time`.\n",
        )],
    );
    fs_err::write(
        skill.join(".mcp.json"),
        format!(r#"{{"mcpServers": {{"time": {{"command": "uvx", "args": ["--from", "mcp-server-time=={TIME_VERSION}", "mcp-server-time"]}}}}}}"#),
    )
    .unwrap();
    make_world_readable(&skill);
    project.ok(&["add", "./src/clock"]);
    let digest = project.lock()["skills"]["clock"]["servers"]["time"]["digest"]
        .as_str()
        .unwrap()
        .to_owned();
    let tree = stored_tree(&project, &digest);
    let (code, stdout, _) = project.run(&["verify"]);
    assert_eq!(code, 0, "{stdout}");

    // Someone with the user's rights edits a module of the stored package.
    let module = tree.join("mcp_server_time/server.py");
    let mut permissions = fs_err::metadata(&module).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o644);
    for folder in [tree.as_path(), tree.join("mcp_server_time").as_path()] {
        let mut open = fs_err::metadata(folder).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut open, 0o755);
        fs_err::set_permissions(folder, open).unwrap();
    }
    fs_err::set_permissions(&module, permissions).unwrap();
    let mut text = fs_err::read_to_string(&module).unwrap();
    text.push_str("\nimport os; os.system('echo owned')\n");
    fs_err::write(&module, text).unwrap();

    let (code, stdout, _) = project.run(&["verify"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("clock:time"), "{stdout}");
    assert!(stdout.contains("mcp_server_time/server.py"), "{stdout}");
    let seen = client(&project, &[], &[]);
    let loaded = seen["loaded"].as_str().unwrap();
    assert!(
        loaded.contains("has changed in the store since it was installed"),
        "{loaded}"
    );
    assert!(
        !seen["tools"]
            .as_array()
            .unwrap()
            .contains(&Value::from("time__get_current_time"))
    );
}

#[test]
fn a_lying_integrity_a_missing_server_and_an_uninstalled_one_are_refused() {
    let project = Project::new();
    write_clock_skill(&project);
    project.ok(&["add", "./src/clock"]);
    let locked = project.lock();

    // A lock whose integrity for one package is not its bytes' (edited in both places a
    // reviewer and npm read): the install is refused, and nothing is stored or placed.
    let clone = clone_of(&project);
    let mut lying = locked.clone();
    let server = &mut lying["skills"]["clock"]["servers"]["everything"];
    let forged = "sha512-".to_owned() + &"A".repeat(86) + "==";
    let victim = server["packages"][0]["name"].as_str().unwrap().to_owned();
    server["packages"][0]["integrity"] = Value::from(forged.clone());
    let path = format!("node_modules/{victim}");
    server["npmLock"][&path]["integrity"] = Value::from(forged);
    clone.write_lock(&lying);
    let (code, _, stderr) = clone.run(&["install", "--frozen"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("cannot install server `everything` of skill `clock`"),
        "{stderr}"
    );
    assert!(stderr.to_lowercase().contains("integrity"), "{stderr}");
    let digest = locked["skills"]["clock"]["servers"]["everything"]["digest"]
        .as_str()
        .unwrap();
    assert!(!stored_tree(&clone, digest).exists());

    // A lock that records no package for a declared server: `--frozen` refuses to resolve one.
    let clone = clone_of(&project);
    let mut missing = locked.clone();
    missing["skills"]["clock"]["servers"]
        .as_object_mut()
        .unwrap()
        .remove("time");
    clone.write_lock(&missing);
    let (code, _, stderr) = clone.run(&["install", "--frozen"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("records no package for server `time` of skill `clock`"),
        "{stderr}"
    );

    // A trusted project folder whose servers were never installed: the model is told the
    // server is unavailable and what installs it; no registry is asked.
    let folder = Project::new();
    let root = folder.directory().join("skills");
    fs_err::create_dir_all(&root).unwrap();
    copy_into(&[project.directory().join("src/clock")], &root);
    let seen = client_over(&folder, &root, &[], &[]);
    let loaded = seen["loaded"].as_str().unwrap();
    assert!(
        loaded.contains("is not installed; run `skillbox prepare`"),
        "{loaded}"
    );
    // `prepare` installs them ahead for that folder; then they run with the registries closed.
    let (code, stdout, stderr) = folder.run(&["--root", root.to_str().unwrap(), "prepare"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("clock:time") && stdout.contains("clock:everything"),
        "{stdout}"
    );
    let seen = client_over(
        &folder,
        &root,
        &["--secret", "CLOCK_KEY:clock"],
        &[("CLOCK_KEY", "k-2")],
    );
    assert_eq!(
        seen["echo"],
        serde_json::json!(["Echo: hello", false]),
        "{seen}"
    );
    assert_eq!(seen["time"][1], false, "{seen}");
    // Run again, it keeps what it installed (no registry is asked).
    let output = folder
        .skillbox()
        .args(["--root", root.to_str().unwrap(), "prepare", "--json"])
        .envs(CLOSED_REGISTRIES)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        report["skills"]
            .as_array()
            .unwrap()
            .iter()
            .all(|skill| skill["action"] == "unchanged"),
        "{report}"
    );
}

#[test]
fn json_reports_of_validate_show_the_package() {
    let project = Project::new();
    let skill = write_clock_skill(&project);
    let shown = json_stdout(
        &project
            .skillbox()
            .arg("--root")
            .arg(skill.parent().unwrap())
            .args(["show", "--json", "clock"])
            .output()
            .unwrap(),
    );
    let servers = shown["mcp_servers"].as_array().unwrap();
    let time = servers
        .iter()
        .find(|server| server["name"] == "time")
        .unwrap();
    assert_eq!(time["command"], "uvx");
    assert_eq!(
        time["env_values"].as_object().map(serde_json::Map::len),
        None,
        "no env templates for `time`"
    );
    let everything = servers
        .iter()
        .find(|server| server["name"] == "everything")
        .unwrap();
    assert_eq!(everything["env_values"]["LEVEL"], "${LOG_LEVEL:-info}");
}
