//! `skillbox serve` as a process: it announces its address, and blobs survive a kill -9.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::repo_root;

/// Start `skillbox serve examples/skills` (sandbox off) on port 0 and return the child and its
/// `/rpc` URL.
fn start_server(data_dir: &std::path::Path) -> (Child, String) {
    start_server_with(
        data_dir,
        &[repo_root().join("examples/skills")],
        &["--sandbox", "off"],
    )
}

/// Start `skillbox serve ROOTS... EXTRA...` on port 0 and return the child and its `/rpc` URL.
pub fn start_server_with(
    data_dir: &std::path::Path,
    roots: &[std::path::PathBuf],
    extra: &[&str],
) -> (Child, String) {
    start_server_env(data_dir, roots, extra, &[])
}

/// [`start_server_with`] with these environment variables set.
pub fn start_server_env(
    data_dir: &std::path::Path,
    roots: &[std::path::PathBuf],
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Child, String) {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("skillbox"));
    command
        .current_dir(repo_root())
        .arg("serve")
        .args(roots)
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .args(extra)
        .env_remove("SKILLBOX_ALLOWED_HOSTS")
        .envs(env.iter().copied());
    start_server_command(command)
}

/// Spawn a prepared `skillbox serve …` command (it must listen on port 0) and return the child
/// and its `/rpc` URL once it has announced it.
pub fn start_server_command(mut command: Command) -> (Child, String) {
    let mut child = command
        .env_remove("SKILLBOX_TOKEN")
        .env_remove("SKILLBOX_ROOTS")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let line = match lines.next() {
            Some(Ok(line)) if Instant::now() < deadline => line,
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server did not announce its address");
            }
        };
        if let Some(rest) = line.strip_prefix("skillbox: serving the Skills Protocol at ") {
            let url = rest.split_whitespace().next().unwrap().to_owned();
            // Keep draining stderr so the server never blocks on it.
            std::thread::spawn(move || for _ in lines.by_ref() {});
            return (child, url);
        }
    }
}

pub fn rpc(
    client: &reqwest::Client,
    runtime: &tokio::runtime::Runtime,
    url: &str,
    method: &str,
    params: Value,
) -> Result<Value, String> {
    runtime.block_on(async {
        let response = client
            .post(url)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .map_err(|error| error.to_string())?;
        let body: Value = response.json().await.map_err(|error| error.to_string())?;
        body.get("result").cloned().ok_or_else(|| body.to_string())
    })
}

#[test]
fn acknowledged_blobs_survive_a_kill_9_and_no_partial_blob_is_visible() {
    let data = tempfile::tempdir().unwrap();
    let runtime = skillbox_testkit::runtime();
    let client = skillbox_testkit::http_client();
    let (mut server, url) = start_server(data.path());
    let acknowledged: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let writer = {
        let acknowledged = Arc::clone(&acknowledged);
        let url = url.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let client = skillbox_testkit::http_client();
            for round in 0..100_000u32 {
                let content = format!("{round}:").repeat(20_000 + (round as usize % 7) * 1_000);
                match rpc(
                    &client,
                    &runtime,
                    &url,
                    "create_blob",
                    json!({"content": content, "kind": "text/plain"}),
                ) {
                    Ok(result) => acknowledged
                        .lock()
                        .unwrap()
                        .push((result["blob_id"].as_str().unwrap().to_owned(), content)),
                    Err(_) => return, // the server is gone
                }
            }
        })
    };
    // Let a good number of writes land, then kill the server mid-stream.
    let deadline = Instant::now() + Duration::from_secs(20);
    while acknowledged.lock().unwrap().len() < 25 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill().unwrap(); // SIGKILL
    server.wait().unwrap();
    writer.join().unwrap();
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        acknowledged.len() >= 25,
        "only {} blobs were written before the kill",
        acknowledged.len()
    );

    let (mut restarted, url) = start_server(data.path());
    for (blob_id, content) in &acknowledged {
        let read = rpc(
            &client,
            runtime,
            &url,
            "read_blob",
            json!({"blob_id": blob_id, "mode": "full"}),
        )
        .unwrap();
        assert_eq!(
            read["size_bytes"].as_u64(),
            Some(content.len() as u64),
            "{blob_id}"
        );
        assert!(
            read["preview"].as_str() == Some(content.as_str()),
            "{blob_id} changed after the kill"
        );
    }
    // Every blob that is visible at all is whole: each commit record's size matches its bytes.
    let meta_folder = data.path().join("blobs/meta");
    for entry in fs_err::read_dir(&meta_folder).unwrap() {
        let path = entry.unwrap().path();
        let Some(id) = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_suffix(".json"))
        else {
            continue; // staging files of an interrupted write are not blobs
        };
        let read = rpc(
            &client,
            runtime,
            &url,
            "read_blob",
            json!({"blob_id": format!("blob:{id}"), "mode": "full"}),
        )
        .unwrap();
        assert_eq!(
            read["preview"].as_str().map(str::len),
            read["size_bytes"].as_u64().map(|size| size as usize),
            "{id}"
        );
        assert_eq!(read["truncated"], false);
    }
    restarted.kill().unwrap();
    restarted.wait().unwrap();
}

#[test]
fn a_python_requests_client_speaks_the_protocol() {
    let data = tempfile::tempdir().unwrap();
    let (mut server, url) = start_server(data.path());
    let output = Command::new(super::support::peer_python())
        .arg(repo_root().join("tests/peers/rpc_client.py"))
        .arg(&url)
        .output()
        .unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["failures"], json!([]), "{report}");
    assert_eq!(report["checks"].as_array().unwrap().len(), 12, "{report}");
}
