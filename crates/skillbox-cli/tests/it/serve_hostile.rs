//! `skillbox serve` against hostile clients, as a real process: requests a web page could
//! forge (DNS rebinding, cross-site posts), bodies built to exhaust memory, and skill files that
//! never finish reading.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::serve::{start_server_command, start_server_env, start_server_with};
use super::serve_runs::Server;
use super::support::{memory_kib, repo_root, skill_md, write_tree};

impl Server {
    fn examples(data: &Path, extra: &[&str]) -> Self {
        let mut arguments = vec!["--sandbox", "off"];
        arguments.extend_from_slice(extra);
        Server::new(start_server_with(
            data,
            &[repo_root().join("examples/skills")],
            &arguments,
        ))
    }

    fn port(&self) -> &str {
        self.url
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/rpc")
    }

    /// POST `body` to `/rpc` with these headers (no others but what HTTP needs); the status and
    /// the body as JSON (`null` when empty).
    fn post(&self, body: impl Into<reqwest::Body>, headers: &[(&str, &str)]) -> (u16, Value) {
        let mut request = self
            .client
            .post(&self.url)
            .body(body)
            .timeout(Duration::from_secs(120));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        self.runtime.block_on(async {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let text = response.text().await.unwrap();
            let body = if text.is_empty() {
                Value::Null
            } else {
                serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text))
            };
            (status, body)
        })
    }

    fn health(&self, timeout: Duration) -> Result<u16, String> {
        let url = self.url.replace("/rpc", "/healthz");
        self.runtime.block_on(async {
            self.client
                .get(url)
                .timeout(timeout)
                .send()
                .await
                .map(|response| response.status().as_u16())
                .map_err(|error| error.to_string())
        })
    }
}

const LIST: &str = r#"{"jsonrpc": "2.0", "id": 1, "method": "list_skills"}"#;
const JSON: (&str, &str) = ("content-type", "application/json");

fn refusal(response: &(u16, Value)) -> (u16, &str) {
    (response.0, response.1["error"].as_str().unwrap_or_default())
}

#[test]
fn requests_a_web_page_could_forge_are_refused() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::examples(data.path(), &[]);
    let port = server.port().to_owned();

    // DNS rebinding: the page's own name, pointed at 127.0.0.1, arrives in `Host`.
    let rebound = server.post(LIST, &[JSON, ("host", &format!("attacker.example:{port}"))]);
    let (status, message) = refusal(&rebound);
    assert_eq!(status, 403, "{rebound:?}");
    assert!(
        message.contains("--allowed-host attacker.example"),
        "{message}"
    );
    // A cross-site post names the page in `Origin`.
    for origin in ["http://attacker.example", "null"] {
        let forged = server.post(LIST, &[JSON, ("origin", origin)]);
        assert_eq!(forged.0, 403, "{origin}: {forged:?}");
        assert!(refusal(&forged).1.contains("refused"), "{forged:?}");
    }
    // Bodies a page can send without a preflight are refused.
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let headers: Vec<(&str, &str)> = content_type
            .map(|value| ("content-type", value))
            .into_iter()
            .collect();
        let response = server.post(LIST, &headers);
        let (status, message) = refusal(&response);
        assert_eq!(status, 415, "{content_type:?}: {response:?}");
        assert!(
            message.contains("Content-Type: application/json"),
            "{message}"
        );
    }
    // What local clients send keeps working, on every loopback name.
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
    ] {
        let (status, body) = server.post(
            LIST,
            &[
                ("content-type", "application/json; charset=utf-8"),
                ("host", &host),
                ("origin", "http://localhost:3000"),
            ],
        );
        assert_eq!(status, 200, "{host}: {body}");
        assert!(body["result"]["skills"].is_array(), "{body}");
    }
    assert_eq!(server.health(Duration::from_secs(10)), Ok(200));
    drop(server);

    // Names the operator allows, by flag and by environment variable.
    let listed = Server::examples(data.path(), &["--allowed-host", "Skills.Internal"]);
    let from_env = Server::new(start_server_env(
        data.path(),
        &[repo_root().join("examples/skills")],
        &["--sandbox", "off"],
        &[("SKILLBOX_ALLOWED_HOSTS", "other.internal,skills.internal")],
    ));
    for server in [&listed, &from_env] {
        let allowed = server.post(
            LIST,
            &[
                JSON,
                ("host", "skills.internal:8080"),
                ("origin", "https://skills.internal"),
            ],
        );
        assert_eq!(allowed.0, 200, "{allowed:?}");
        let refused = server.post(LIST, &[JSON, ("host", "attacker.example")]);
        assert_eq!(refused.0, 403, "{refused:?}");
    }
    drop((listed, from_env));

    // With a token, a rebinding page (which cannot know it) is no threat: any Host is answered
    // with the token, but other origins are still refused.
    let with_token = Server::examples(data.path(), &["--token", "s3cret"]);
    let bearer = ("authorization", "Bearer s3cret");
    let any_host = with_token.post(LIST, &[JSON, bearer, ("host", "10.0.0.5:7878")]);
    assert_eq!(any_host.0, 200, "{any_host:?}");
    let other_origin =
        with_token.post(LIST, &[JSON, bearer, ("origin", "http://attacker.example")]);
    assert_eq!(other_origin.0, 403, "{other_origin:?}");
}

/// Kills the server if it grows past `limit_kib`, so a regression cannot take the machine down;
/// remembers the largest size seen.
struct MemoryWatch {
    stop: Arc<AtomicBool>,
    largest_kib: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MemoryWatch {
    fn start(pid: u32, limit_kib: u64) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let largest_kib = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, largest_kib) = (Arc::clone(&stop), Arc::clone(&largest_kib));
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let (_, resident) = memory_kib(pid);
                    largest_kib.fetch_max(resident, Ordering::SeqCst);
                    if resident > limit_kib {
                        let _ = std::process::Command::new("kill")
                            .args(["-KILL", &pid.to_string()])
                            .status();
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            })
        };
        MemoryWatch {
            stop,
            largest_kib,
            thread: Some(thread),
        }
    }
}

impl Drop for MemoryWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Far below what parsing a 32 MiB array into a JSON tree costs (gigabytes), and well above
/// holding the body itself a few times over.
const HOSTILE_BODY_PEAK_LIMIT_KIB: u64 = 256 * 1024;

#[test]
fn a_32_mib_hostile_body_gets_a_clear_error_without_costing_gigabytes() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::examples(data.path(), &[]);
    let pid = server.child.id();
    let watch = MemoryWatch::start(pid, 2 * 1024 * 1024);
    let (before_kib, _) = memory_kib(pid);
    const BODY_BYTES: usize = 32 * 1024 * 1024;

    // A batch of eleven million empty objects.
    let mut batch = String::with_capacity(BODY_BYTES + 16);
    batch.push('[');
    while batch.len() < BODY_BYTES {
        batch.push_str("{},");
    }
    batch.push_str("{}]");
    let started = Instant::now();
    let (status, response) = server.post(batch, &[JSON]);
    let batch_took = started.elapsed();
    assert_eq!(status, 200, "{response}");
    assert_eq!(response["error"]["code"], -32600, "{response}");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 100 requests"),
        "{response}"
    );

    // One request whose params are a huge tree.
    let mut nested = String::from(
        r#"{"jsonrpc": "2.0", "id": 2, "method": "list_skills", "params": {"filler": ["#,
    );
    while nested.len() < BODY_BYTES {
        nested.push_str(r#"{"a": [{}]},"#);
    }
    nested.push_str("{}]}}");
    let started = Instant::now();
    let (status, response) = server.post(nested, &[JSON]);
    let nested_took = started.elapsed();
    assert_eq!(status, 200, "{response}");
    assert_eq!(
        (response["id"].clone(), response["error"]["code"].clone()),
        (json!(2), json!(-32602)),
        "{response}"
    );
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("params of `list_skills`") && message.contains("at most"),
        "{message}"
    );

    let (peak_kib, _) = memory_kib(pid);
    let largest_seen = watch.largest_kib.load(Ordering::SeqCst);
    drop(watch);
    eprintln!(
        "hostile bodies: peak RSS {before_kib} KiB before, {peak_kib} KiB after (largest sampled {largest_seen} KiB); the batch was answered in {batch_took:?}, the nested params in {nested_took:?}"
    );
    assert!(
        peak_kib > 0 && peak_kib < HOSTILE_BODY_PEAK_LIMIT_KIB,
        "the server's peak RSS reached {peak_kib} KiB (limit {HOSTILE_BODY_PEAK_LIMIT_KIB} KiB)"
    );

    // Large content is still welcome where it belongs: a 24 MiB blob.
    let content = "0123456789abcdef".repeat(24 * 1024 * 1024 / 16);
    let created = server.call(
        "create_blob",
        json!({"content": content, "kind": "text/plain"}),
    );
    assert_eq!(
        created["result"]["size_bytes"],
        24 * 1024 * 1024,
        "{created}"
    );
}

#[test]
fn a_skill_file_that_never_finishes_reading_does_not_stall_the_server() {
    let skills = tempfile::tempdir().unwrap();
    write_tree(
        skills.path(),
        &[
            (
                "fifo-notes/SKILL.md",
                &skill_md("fifo-notes", "Has a FIFO."),
            ),
            ("plain/SKILL.md", &skill_md("plain", "Plain.")),
        ],
    );
    // In a subfolder: core opens top-level files without blocking already, but not these.
    std::fs::create_dir_all(skills.path().join("fifo-notes/references")).unwrap();
    let fifo = skills.path().join("fifo-notes/references/notes.txt");
    skillbox_testkit::make_fifo(&fifo);
    let data = tempfile::tempdir().unwrap();
    let server = Server::new(start_server_with(
        data.path(),
        &[skills.path().to_path_buf()],
        &["--sandbox", "off"],
    ));
    // More stuck reads than the server has worker threads.
    let stuck: Vec<_> = (0..4)
        .map(|_| {
            let client = server.client.clone();
            let url = server.url.clone();
            server.runtime.spawn(async move {
                client
                    .post(url)
                    .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "read_skill_file",
                                  "params": {"name": "fifo-notes", "path": "references/notes.txt"}}))
                    .timeout(Duration::from_secs(60))
                    .send()
                    .await
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        server.health(Duration::from_secs(10)),
        Ok(200),
        "/healthz stalled behind reads of a FIFO"
    );
    let listed = server.runtime.block_on(async {
        server
            .client
            .post(&server.url)
            .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "list_skills"}))
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .map_err(|error| error.to_string())?
            .json::<Value>()
            .await
            .map_err(|error| error.to_string())
    });
    let listed = listed.expect("list_skills stalled behind reads of a FIFO");
    assert!(listed.to_string().contains("plain"), "{listed}");
    for request in stuck {
        request.abort();
    }
}

#[test]
fn idle_connections_cannot_use_up_the_servers_descriptors() {
    // A low soft limit of open files, as many systems have (1024), scaled down; the hard limit
    // leaves room to raise it.
    if std::process::Command::new("prlimit")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED idle_connections_cannot_use_up_the_servers_descriptors: no prlimit");
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new("prlimit");
    command
        .current_dir(repo_root())
        .arg("--nofile=64:4096")
        .arg(assert_cmd::cargo::cargo_bin("skillbox"))
        .arg("serve")
        .arg(repo_root().join("examples/skills"))
        .args(["--listen", "127.0.0.1:0", "--sandbox", "off", "--data-dir"])
        .arg(data.path())
        .env_remove("SKILLBOX_ALLOWED_HOSTS");
    let server = Server::new(start_server_command(command));
    // A hundred connections, each with a request answered and kept alive.
    let address = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/rpc");
    let idle: Vec<std::net::TcpStream> = (0..100)
        .map(|_| {
            let mut stream = std::net::TcpStream::connect(address).unwrap();
            std::io::Write::write_all(
                &mut stream,
                b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n",
            )
            .unwrap();
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(server.health(Duration::from_secs(5)), Ok(200));
    drop(idle);
}

#[test]
fn a_token_on_the_command_line_is_warned_about() {
    // Stop right after the warning: the data folder is a file.
    let data = tempfile::NamedTempFile::new().unwrap();
    let serve = |arguments: &[&str], token_variable: Option<&str>| {
        let mut command = assert_cmd::Command::cargo_bin("skillbox").unwrap();
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data.path())
            .args(arguments)
            .env_remove("SKILLBOX_TOKEN");
        if let Some(token) = token_variable {
            command.env("SKILLBOX_TOKEN", token);
        }
        let output = command.output().unwrap();
        assert!(!output.status.success());
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let warning = "--token on the command line is visible to every user";
    for arguments in [&["--token", "s3cret"][..], &["--token=s3cret"][..]] {
        let stderr = serve(arguments, None);
        assert!(
            stderr.contains(warning) && stderr.contains("SKILLBOX_TOKEN"),
            "{stderr}"
        );
    }
    let stderr = serve(&[], Some("s3cret"));
    assert!(!stderr.contains(warning), "{stderr}");
}

/// `skillbox serve examples/skills` with `token` in `SKILLBOX_TOKEN`, its log kept: the server
/// (`/rpc` URL) and the lines it has written to stderr so far.
fn start_keeping_the_log(data: &Path, token: &str) -> (Server, Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("skillbox"))
        .current_dir(repo_root())
        .arg("serve")
        .arg(repo_root().join("examples/skills"))
        .args(["--listen", "127.0.0.1:0", "--sandbox", "off", "--no-watch"])
        .arg("--data-dir")
        .arg(data)
        .env("SKILLBOX_TOKEN", token)
        .env("SKILLBOX_CONFIG", "/dev/null")
        .env_remove("SKILLBOX_LOG")
        .env_remove("SKILLBOX_ROOTS")
        .env_remove("SKILLBOX_ALLOWED_HOSTS")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let Some(Ok(line)) = lines.next() else {
            let _ = child.kill();
            panic!("the server did not announce its address");
        };
        if let Some(rest) = line.strip_prefix("skillbox: serving the Skills Protocol at ") {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = Arc::clone(&log);
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            kept.lock().unwrap().push(without_colours(&line));
        }
    });
    (Server::new((child, url)), log)
}

/// A log line without its terminal colour codes (`ESC [ … m`).
fn without_colours(line: &str) -> String {
    let mut plain = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('\u{1b}') {
        plain.push_str(&rest[..start]);
        rest = &rest[start..];
        rest = rest.find('m').map_or("", |end| &rest[end + 1..]);
    }
    plain.push_str(rest);
    plain
}

/// Status and `Retry-After` (seconds) of a request sent with `client`.
async fn status_and_retry(request: reqwest::RequestBuilder) -> (u16, Option<u64>) {
    let response = request.send().await.unwrap();
    let retry = response
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok()?.parse().ok());
    (response.status().as_u16(), retry)
}

#[test]
fn wrong_tokens_from_many_connections_are_held_back_logged_and_counted() {
    use skillbox_server::auth_throttle::{FAILED_AUTH_BURST, FAILED_AUTH_REFILL};
    let data = tempfile::tempdir().unwrap();
    let token = "the-right-token-4b1d";
    let (server, log) = start_keeping_the_log(data.path(), token);
    let base = server.url.trim_end_matches("/rpc").to_owned();
    let runtime = server.runtime;
    // A browser signed in before the guessing starts.
    let session = runtime.block_on(async {
        let response = skillbox_testkit::http_client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .post(format!("{base}/login"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("token={token}&next=/"))
            .send()
            .await
            .unwrap();
        let cookie = response.headers()["set-cookie"].to_str().unwrap();
        cookie.split(';').next().unwrap().to_owned()
    });

    // Four connections guess as fast as they are answered, for two seconds.
    let guessing_for = Duration::from_secs(2);
    let started = Instant::now();
    let answers: Vec<(u16, Option<u64>)> = runtime.block_on(async {
        let guessers = (0..4).map(|connection| {
            let url = server.url.clone();
            tokio::spawn(async move {
                let client = skillbox_testkit::http_client();
                let mut answers = Vec::new();
                let mut guess = 0;
                while started.elapsed() < guessing_for {
                    guess += 1;
                    answers.push(
                        status_and_retry(
                            client
                                .post(&url)
                                .bearer_auth(format!("guess-{connection}-{guess}"))
                                .header("content-type", "application/json")
                                .body(LIST),
                        )
                        .await,
                    );
                }
                answers
            })
        });
        let mut all = Vec::new();
        for guesser in guessers.collect::<Vec<_>>() {
            all.extend(guesser.await.unwrap());
        }
        all
    });
    let took = started.elapsed();
    let compared = answers.iter().filter(|(status, _)| *status == 401).count();
    let held_back: Vec<Option<u64>> = answers
        .iter()
        .filter(|(status, _)| *status == 429)
        .map(|(_, retry)| *retry)
        .collect();
    eprintln!(
        "{} wrong tokens in {took:?}: {compared} compared, {} held back",
        answers.len(),
        held_back.len()
    );
    assert_eq!(compared + held_back.len(), answers.len(), "{answers:?}");
    // The burst, then one per refill: the comparisons are bounded, however many connections.
    let refills = took.as_millis().div_ceil(FAILED_AUTH_REFILL.as_millis());
    assert!(
        compared as u128 <= u128::from(FAILED_AUTH_BURST) + refills + 1,
        "{compared} compared in {took:?}"
    );
    assert!(!held_back.is_empty());
    assert!(
        held_back.iter().all(|retry| matches!(retry, Some(1..=2))),
        "{held_back:?}"
    );

    // The other doors behind the token hold the same address back (a wrong token is compared
    // at most once more, if a refill came meanwhile).
    let wrong = "Bearer another-guess";
    let doors: Vec<(&str, u16)> = runtime.block_on(async {
        let client = skillbox_testkit::http_client();
        let mut doors = Vec::new();
        for door in ["/mcp", "/metrics", "/healthz", "/login"] {
            let mut status = 0;
            for _ in 0..3 {
                let url = format!("{base}{door}");
                let request = match door {
                    "/mcp" => client
                        .post(url)
                        .header("authorization", wrong)
                        .header("accept", "application/json, text/event-stream")
                        .header("content-type", "application/json")
                        .body(super::mcp::INITIALIZE),
                    "/login" => client
                        .post(url)
                        .header("content-type", "application/x-www-form-urlencoded")
                        .body("token=another-guess&next=/"),
                    _ => client.get(url).header("authorization", wrong),
                };
                let (answer, retry) = status_and_retry(request).await;
                status = answer;
                if answer == 429 {
                    assert!(matches!(retry, Some(1..=2)), "{door}: {retry:?}");
                    break;
                }
                assert_eq!(answer, 401, "{door}");
            }
            doors.push((door, status));
        }
        doors
    });
    assert_eq!(
        doors,
        [
            ("/mcp", 429),
            ("/metrics", 429),
            ("/healthz", 429),
            ("/login", 429)
        ]
    );
    // The signed-in browser goes on: a session is not a token.
    let page = runtime.block_on(status_and_retry(
        skillbox_testkit::http_client()
            .get(format!("{base}/skills"))
            .header("cookie", &session),
    ));
    assert_eq!(page, (200, None));

    // Once the guessing stops, the right token is let in after `Retry-After`.
    let right = format!("Bearer {token}");
    let (waits, scrape_status, scrape) = runtime.block_on(async {
        let client = skillbox_testkit::http_client();
        let mut waits = 0;
        loop {
            let (status, retry) = status_and_retry(
                client
                    .post(&server.url)
                    .header("authorization", &right)
                    .header("content-type", "application/json")
                    .body(LIST),
            )
            .await;
            match (status, retry) {
                (200, _) => break,
                (429, Some(seconds @ 1..=2)) if waits < 5 => {
                    waits += 1;
                    tokio::time::sleep(Duration::from_secs(seconds)).await;
                }
                other => panic!("the right token got {other:?}"),
            }
        }
        let response = client
            .get(format!("{base}/metrics"))
            .header("authorization", &right)
            .send()
            .await
            .unwrap();
        (
            waits,
            response.status().as_u16(),
            response.text().await.unwrap(),
        )
    });
    assert_eq!(scrape_status, 200, "{scrape}");
    // Every refusal was counted, by door and outcome.
    let counted = |door: &str, outcome: &str| -> usize {
        let prefix = format!(
            "skillbox_failed_authentications_total{{door=\"{door}\",outcome=\"{outcome}\"}} "
        );
        scrape
            .lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .map_or(0, |value| value.trim().parse().unwrap())
    };
    assert_eq!(counted("rpc", "wrong"), compared, "{scrape}");
    // (The right token held back while waiting counts as held back too.)
    assert_eq!(
        counted("rpc", "throttled"),
        held_back.len() + waits,
        "{scrape}"
    );
    let other_doors: usize = ["mcp", "metrics", "healthz", "web"]
        .iter()
        .map(|door| counted(door, "wrong") + counted(door, "throttled"))
        .sum();
    assert!((4..=12).contains(&other_doors), "{scrape}");

    // Logged, but not once per guess: one line for the address so far (the next comes a
    // minute after it, with the count since).
    let lines: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|line| line.contains("wrong tokens presented"))
        .cloned()
        .collect();
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].contains("WARN") && lines[0].contains("client=loopback"),
        "{lines:#?}"
    );
}
