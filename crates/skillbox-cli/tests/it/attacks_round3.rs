//! Round 3 attacks on the one door policy, snapshot answers, the path lookup, warm workers and
//! the separate sandbox helper, each through the real binary. Every test here failed when it
//! was written and should pass once its finding is fixed.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::{make_world_readable, memory_kib, skillbox, write_tree};

/// Two roots holding a skill `deploy` that declares the secret `API_KEY`: the earlier, less
/// trusted root has it nested at `vendor/deploy`, the later root at `deploy` (the copy in
/// effect). Each copy's script and body print the secret and which copy they are.
fn two_copies_of_deploy(base: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let early = base.join("early");
    let late = base.join("late");
    for (root, folder, copy) in [
        (&early, "vendor/deploy", "shadowed"),
        (&late, "deploy", "in-effect"),
    ] {
        write_tree(
            root,
            &[
                (
                    &format!("{folder}/SKILL.md"),
                    "---\nname: deploy\ndescription: Deploys.\nrequired_environment_variables:\n  - API_KEY\n---\n# deploy\nbody key: !`echo ${API_KEY:-none}`\n",
                ),
                (
                    &format!("{folder}/scripts/show.sh"),
                    &format!("#!/bin/sh\necho \"key=${{API_KEY:-none}} copy={copy}\"\n"),
                ),
            ],
        );
    }
    make_world_readable(base);
    (early, late)
}

/// A secret granted by name (`--secret API_KEY:deploy`) must reach only the copy of `deploy`
/// in effect. The new path lookup reaches a shadowed copy in an earlier root by its folder
/// (`vendor/deploy`); `use_skill` runs its script with `SkillCopy::InEffect` whatever copy it
/// found, so the shadowed copy gets the secret.
#[test]
fn a_shadowed_copy_reached_by_its_path_gets_no_secret_granted_by_name_through_use_skill() {
    let temp = tempfile::tempdir().unwrap();
    let (early, late) = two_copies_of_deploy(temp.path());
    let run = |skill: &str| {
        let output = skillbox()
            .env("API_KEY", "s3cr3t-value")
            .args(["--secret", "API_KEY:deploy", "-r"])
            .arg(&early)
            .arg("-r")
            .arg(&late)
            .args(["call", "use_skill", "--args"])
            .arg(json!({"skill": skill, "script": "scripts/show.sh"}).to_string())
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    };
    let in_effect = run("deploy");
    assert!(
        in_effect.contains("key=s3cr3t-value copy=in-effect"),
        "{in_effect}"
    );
    let shadowed = run("vendor/deploy");
    assert!(shadowed.contains("copy=shadowed"), "{shadowed}");
    assert!(
        !shadowed.contains("s3cr3t-value"),
        "the shadowed copy reached by its path got the secret granted to the name: {shadowed}"
    );
}

/// The same through `load_skill` with `!command` preprocessing: the shadowed copy's body runs
/// its commands with the secret.
#[test]
fn a_shadowed_copy_reached_by_its_path_gets_no_secret_granted_by_name_through_preprocessing() {
    let temp = tempfile::tempdir().unwrap();
    let (early, late) = two_copies_of_deploy(temp.path());
    let output = skillbox()
        .env("API_KEY", "s3cr3t-value")
        .args(["--secret", "API_KEY:deploy", "--preprocess-commands", "-r"])
        .arg(&early)
        .arg("-r")
        .arg(&late)
        .args(["call", "load_skill", "--args"])
        .arg(json!({"skill": "vendor/deploy"}).to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("vendor/deploy"), "{stdout}");
    assert!(
        !stdout.contains("s3cr3t-value"),
        "the shadowed copy's commands ran with the secret granted to the name: {stdout}"
    );
}

/// A running `skillbox serve` over `root` (killed when dropped), and its `/mcp` URL.
struct Served {
    child: Child,
    mcp: String,
    _data: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(root: &Path) -> Served {
    let data = tempfile::tempdir().unwrap();
    let (child, url) =
        super::serve::start_server_with(data.path(), &[root.to_path_buf()], &["--no-watch"]);
    Served {
        child,
        mcp: url.replace("/rpc", "/mcp"),
        _data: data,
    }
}

/// Three small skills, world-readable.
fn small_catalog() -> tempfile::TempDir {
    let temp = tempfile::tempdir().unwrap();
    for name in ["s1", "s2", "s3"] {
        write_tree(
            temp.path(),
            &[(
                &format!("{name}/SKILL.md"),
                &super::support::skill_md(name, "A skill."),
            )],
        );
    }
    make_world_readable(temp.path());
    temp
}

/// One stateless 2026-07-28 request to `/mcp`; the body text, or the client's error.
async fn mcp_request(
    client: &reqwest::Client,
    url: &str,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<String, String> {
    let body = super::mcp::stateless_body(method, params);
    client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .header("Mcp-Name", "")
        .json(&body)
        .timeout(timeout)
        .send()
        .await
        .map_err(|error| error.to_string())?
        .text()
        .await
        .map_err(|error| error.to_string())
}

/// `uri::resolve` tries every run of leading segments of a URI whose first segment names no
/// skill, building each candidate path anew and scanning the catalog (allocating every skill's
/// path in its root) for each: quadratic in the URI's length. 16,000 segments (32 KB) took
/// 6 s of a blocking thread in a debug build; a 1 MiB body (half a million segments) would
/// take hours, and 32 of them hold every blocking thread. A URI this long names nothing.
#[test]
fn a_long_mcp_uri_is_refused_in_time_linear_in_its_length() {
    let catalog = small_catalog();
    let server = serve(catalog.path());
    let uri = format!("skill://nosuch/{}", vec!["a"; 48_000].join("/"));
    let runtime = skillbox_testkit::runtime();
    let client = skillbox_testkit::http_client();
    let started = Instant::now();
    let answer = runtime.block_on(mcp_request(
        &client,
        &server.mcp,
        "resources/directory/read",
        json!({"uri": uri}),
        Duration::from_secs(4),
    ));
    let elapsed = started.elapsed();
    drop(server);
    let answer = answer.unwrap_or_else(|error| {
        panic!("a 96 KB URI was not answered within 4 s ({error}): resolving it is quadratic")
    });
    assert!(answer.contains("\"error\""), "{answer:.300}");
    assert!(!answer.contains("did not finish"), "{answer:.300}");
    assert!(elapsed < Duration::from_secs(4), "{elapsed:?}");
}

/// `skills/list` pages are memoised per snapshot under the client's cursor text, at most 256
/// of them, but not bounded in bytes: any `k1.<hex>` cursor is accepted, so a client sending
/// 256 distinct cursors of nearly 1 MiB each (the `/mcp` body bound) makes the server keep
/// about 256 MiB until the next reload (for good with `--no-watch`). 64 such requests grew the
/// server by about 60 MiB; the same cursor 64 times, by almost nothing.
#[test]
fn skills_list_pages_kept_per_snapshot_are_bounded_in_bytes_not_only_in_count() {
    let catalog = small_catalog();
    let server = serve(catalog.path());
    let runtime = skillbox_testkit::runtime();
    let client = skillbox_testkit::http_client();
    let pid = server.child.id();
    let padding = "a".repeat(480_000);
    let before = memory_kib(pid).1;
    for index in 0..64 {
        // Distinct keys that sort before every skill: each a full first page.
        let key = format!("{index:06}{padding}");
        let cursor = format!("k1.{}", hex_of(key.as_bytes()));
        let answer = runtime
            .block_on(mcp_request(
                &client,
                &server.mcp,
                "skills/list",
                json!({"cursor": cursor}),
                Duration::from_secs(10),
            ))
            .unwrap();
        assert!(answer.contains("skill://s1/SKILL.md"), "{answer:.300}");
    }
    std::thread::sleep(Duration::from_millis(200));
    let after = memory_kib(pid).1;
    drop(server);
    let grown_mib = after.saturating_sub(before) / 1024;
    assert!(
        grown_mib < 24,
        "64 skills/list requests with distinct 1 MiB cursors left the server {grown_mib} MiB larger (from {before} KiB to {after} KiB): the memo keeps every cursor"
    );
}

fn hex_of(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// Host pids whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in fs_err::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<i32>().ok())
        else {
            continue;
        };
        if let Ok(cmdline) = fs_err::read(format!("/proc/{pid}/cmdline"))
            && String::from_utf8_lossy(&cmdline).contains(marker)
        {
            found.push(pid);
        }
    }
    found
}

/// Nothing a warm worker's call started may outlive its answer, but a handler's threads are
/// the worker and live on: a thread the handler starts waits until the call has answered (and
/// the pool's look for stray processes found none), then starts a process in a session of its
/// own. That process, and the thread itself, run with no place in the run queue until the
/// worker's next call or its idle retirement (5 minutes).
#[test]
fn a_thread_a_handler_leaves_cannot_start_processes_after_its_call_answered() {
    let temp = tempfile::tempdir().unwrap();
    let marker = format!("7.{}{}", std::process::id(), 4242);
    write_tree(
        temp.path(),
        &[
            (
                "threader/SKILL.md",
                &super::support::skill_md("threader", "Starts a thread."),
            ),
            (
                "threader/tools.json",
                r#"[{"name":"spin","description":"Starts a thread.","script":"scripts/spin.py","parameters":{"marker":{"type":"string","description":"m"}}}]"#,
            ),
            (
                "threader/scripts/spin.py",
                "import subprocess, threading, time\n\ndef later(marker):\n    time.sleep(0.3)\n    subprocess.Popen(['sleep', marker], start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n\ndef handler(args):\n    threading.Thread(target=later, args=(args['marker'],), daemon=True).start()\n    return {'started': True}\n",
            ),
        ],
    );
    make_world_readable(temp.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillbox"))
        .args(["mcp", "--no-watch", temp.path().to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answer_to = |id: u64, line: Value| -> Value {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        loop {
            let mut text = String::new();
            assert!(stdout.read_line(&mut text).unwrap() > 0, "stdout closed");
            let message: Value = serde_json::from_str(&text).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    };
    answer_to(
        0,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
    );
    let called = answer_to(
        1,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "spin", "arguments": {"marker": marker}}}),
    );
    std::thread::sleep(Duration::from_millis(1_200));
    let survivors = processes_with(&marker);
    for pid in &survivors {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(called["result"]["isError"], json!(false), "{called}");
    assert_eq!(
        survivors,
        Vec::<i32>::new(),
        "a process the handler's thread started after the call answered was still running"
    );
}

/// The sandbox helper runs as root (the operator's user) for every run, yet the binary is
/// taken from beside `skillbox` or, failing that, from the folder above it, without checking
/// who owns it or who may write it. A `skillbox` copied to `/tmp/x/skillbox` runs any
/// `/tmp/skillbox-sandbox` another local user planted; here a world-writable helper owned by
/// `nobody` in the folder above is run as root with the run's plan.
#[test]
fn a_helper_someone_else_owns_or_can_write_is_never_run() {
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = temp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let copied = bin.join("skillbox");
    std::fs::copy(env!("CARGO_BIN_EXE_skillbox"), &copied).unwrap();
    let ran = temp.path().join("planted-helper-ran");
    let planted = temp.path().join("skillbox-sandbox");
    std::fs::write(
        &planted,
        format!(
            "#!/bin/sh\necho \"$(id -u) $*\" >> '{}'\nexit 1\n",
            ran.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
    // Another user's file, as a local user would leave it.
    let _ = std::os::unix::fs::chown(&planted, Some(65534), Some(65534));
    let skills = temp.path().join("skills");
    write_tree(
        &skills,
        &[
            ("x/SKILL.md", &super::support::skill_md("x", "A skill.")),
            ("x/run.sh", "#!/bin/sh\necho hi\n"),
        ],
    );
    make_world_readable(&skills);
    let runtime = temp.path().join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    let output = Command::new(&copied)
        .args(["run", "x", "run.sh", "-r"])
        .arg(&skills)
        .env("SKILLBOX_RUNTIME_DIR", &runtime)
        .env_remove("SKILLBOX_ROOTS")
        .output()
        .unwrap();
    let ran_text = fs_err::read_to_string(&ran).unwrap_or_default();
    assert_eq!(
        ran_text,
        "",
        "a helper owned by nobody and writable by everyone was run (stderr: {})",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A helper that is root's and closed, beside a root-owned binary, but under a folder another
/// user owns: that user could rename the folders below theirs and put another program where the
/// helper was checked, so the helper is not used (the binary is its own helper).
#[test]
fn a_helper_under_a_folder_someone_else_owns_is_never_run() {
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let theirs = temp.path().join("theirs");
    let bin = theirs.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o755)).unwrap();
    let copied = bin.join("skillbox");
    std::fs::copy(env!("CARGO_BIN_EXE_skillbox"), &copied).unwrap();
    let ran = temp.path().join("helper-ran");
    let helper = bin.join("skillbox-sandbox");
    std::fs::write(
        &helper,
        format!(
            "#!/bin/sh\necho \"$(id -u) $*\" >> '{}'\nexit 1\n",
            ran.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The folder above `bin` is another user's.
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let skills = temp.path().join("skills");
    write_tree(
        &skills,
        &[
            ("x/SKILL.md", &super::support::skill_md("x", "A skill.")),
            ("x/run.sh", "#!/bin/sh\necho hi\n"),
        ],
    );
    make_world_readable(&skills);
    let runtime = temp.path().join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    let output = Command::new(&copied)
        .args(["run", "x", "run.sh", "-r"])
        .arg(&skills)
        .env("SKILLBOX_RUNTIME_DIR", &runtime)
        .env_remove("SKILLBOX_ROOTS")
        .output()
        .unwrap();
    assert_eq!(
        fs_err::read_to_string(&ran).unwrap_or_default(),
        "",
        "a helper under another user's folder was run (stderr: {})",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("not using this sandbox helper"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
