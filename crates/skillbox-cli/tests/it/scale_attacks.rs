//! Attacks on the scale features with a real `skillbox serve`: `GET /metrics` (its token,
//! `Host`/`Origin` checks, label cardinality, bodies sent to it, many scrapes at once) and
//! `--blob-store` (folders that are not the store's, URLs that hide a path, S3 endpoints and
//! credentials). Every folder a store is pointed at is made here under a temporary folder.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use skillbox_testkit::s3_server::S3Server;

use super::serve::{start_server_env, start_server_with};
use super::support::skillbox;

const TOKEN: &str = "scale-attack-token";

/// The mode bits of `path` (links not followed).
fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The names in a folder, sorted.
fn names(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs_err::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `skillbox serve --blob-store STORE` with a data folder of its own, run to its end (it must
/// refuse to start): its output.
fn serve_with_store(store: &str, environment: &[(&str, &str)]) -> Output {
    let data = tempfile::tempdir().unwrap();
    skillbox()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path().join("data"))
        .args(["--blob-store", store])
        .env_remove("SKILLBOX_TOKEN")
        .envs(environment.iter().copied())
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

/// Assert the server refused to start, naming `--blob-store` and `expected`; its stderr.
fn refused(output: &Output, expected: &str) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        !output.status.success() && !stderr.contains("serving the Skills Protocol"),
        "the server started: {stderr}"
    );
    assert!(
        stderr.contains(expected),
        "expected `{expected}` in: {stderr}"
    );
    stderr
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

#[test]
fn a_blob_store_folder_holding_other_files_is_refused_and_left_untouched() {
    let parent = tempfile::tempdir().unwrap();
    let foreign = parent.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "keep me").unwrap();
    set_mode(&foreign.join("notes.txt"), 0o644);
    set_mode(&foreign, 0o755);
    let output = serve_with_store(&file_url(&foreign), &[]);
    refused(&output, "holds `notes.txt`");
    assert_eq!(mode(&foreign), 0o755, "the folder's mode was changed");
    assert_eq!(mode(&foreign.join("notes.txt")), 0o644);
    assert_eq!(names(&foreign), ["notes.txt"]);
}

#[test]
fn a_blob_store_folder_whose_data_entry_is_not_the_stores_is_refused_and_left_untouched() {
    let parent = tempfile::tempdir().unwrap();
    // Someone's folder that happens to hold only `data/`, with their files in it.
    let project = parent.path().join("project");
    std::fs::create_dir_all(project.join("data/album")).unwrap();
    std::fs::write(project.join("data/photo.jpg"), "a photo").unwrap();
    std::fs::write(project.join("data/album/one.jpg"), "another").unwrap();
    for (path, wanted) in [
        ("data/photo.jpg", 0o644),
        ("data/album/one.jpg", 0o644),
        ("data/album", 0o755),
        ("data", 0o755),
        ("", 0o755),
    ] {
        set_mode(&project.join(path), wanted);
    }
    let output = serve_with_store(&file_url(&project), &[]);
    refused(&output, "--blob-store");
    for (path, wanted) in [
        ("data/photo.jpg", 0o644),
        ("data/album/one.jpg", 0o644),
        ("data/album", 0o755),
        ("data", 0o755),
        ("", 0o755),
    ] {
        assert_eq!(mode(&project.join(path)), wanted, "`{path}` was changed");
    }
    assert_eq!(names(&project), ["data"]);

    // A store folder whose `data` is a link to another folder.
    let victim = parent.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "keep me").unwrap();
    set_mode(&victim.join("keep.txt"), 0o644);
    set_mode(&victim, 0o755);
    let linked = parent.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    set_mode(&linked, 0o700);
    std::os::unix::fs::symlink(&victim, linked.join("data")).unwrap();
    let output = serve_with_store(&file_url(&linked), &[]);
    refused(&output, "--blob-store");
    assert_eq!(mode(&victim), 0o755);
    assert_eq!(mode(&victim.join("keep.txt")), 0o644);
    assert_eq!(names(&victim), ["keep.txt"]);

    // A store folder whose `meta` is a FIFO: refused at once, nothing opened for reading.
    let fifo = parent.path().join("fifo");
    std::fs::create_dir(&fifo).unwrap();
    set_mode(&fifo, 0o700);
    let made = std::process::Command::new("mkfifo")
        .arg(fifo.join("meta"))
        .status()
        .unwrap();
    assert!(made.success());
    let started = Instant::now();
    let output = serve_with_store(&file_url(&fifo), &[]);
    let stderr = refused(&output, "--blob-store");
    assert!(stderr.contains("meta"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(names(&fifo), ["meta"]);
}

#[test]
fn a_store_folder_the_store_made_is_opened_again() {
    let parent = tempfile::tempdir().unwrap();
    let store = parent.path().join("store");
    let data = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let server = super::serve_runs::Server::new(start_server_with(
            data.path(),
            &[],
            &["--blob-store", &file_url(&store)],
        ));
        let created = server.result(
            "create_blob",
            serde_json::json!({"content": "hello", "kind": "text/plain"}),
        );
        assert!(created["blob_id"].is_string(), "{created}");
    }
    assert_eq!(names(&store), ["data", "meta"]);
    assert_eq!(names(&store.join("data")).len(), 2);
}

#[test]
fn file_urls_that_hide_a_path_are_refused() {
    let parent = tempfile::tempdir().unwrap();
    let victim = parent.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    set_mode(&victim, 0o755);
    // Encoded slashes: the folder named is `victim`, two levels up, not `store/…`.
    let hidden = format!(
        "{}/store%2F..%2F..%2Fvictim",
        file_url(&parent.path().join("a"))
    );
    let stderr = refused(&serve_with_store(&hidden, &[]), "--blob-store");
    assert!(stderr.contains("file:///"), "{stderr}");
    assert_eq!(mode(&victim), 0o755, "the folder was used");
    assert!(names(&victim).is_empty());
    // A NUL byte.
    let nul = format!("{}/store%00x", file_url(parent.path()));
    let stderr = refused(&serve_with_store(&nul, &[]), "--blob-store");
    assert!(!stderr.contains('\0'), "{stderr:?}");
    // Dots the URL parser resolves are fine: they name the folder they look like.
    let dotted = format!("{}/a/%2e%2e/store", file_url(parent.path()));
    let data = tempfile::tempdir().unwrap();
    let (mut child, _) = start_server_with(data.path(), &[], &["--blob-store", &dotted]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(parent.path().join("store/meta").is_dir());
    assert!(!parent.path().join("a").exists());
}

#[test]
fn s3_urls_holding_more_than_a_place_are_refused_without_repeating_it() {
    for store in [
        "s3://bucket/prefix#wJalrSECRET",
        "s3://bucket/prefix?X-Amz-Credential=AKIAEXAMPLE",
        "s3://:wJalrSECRET@bucket/prefix",
    ] {
        let stderr = refused(&serve_with_store(store, &[]), "holds credentials");
        assert!(
            !stderr.contains("wJalrSECRET") && !stderr.contains("AKIAEXAMPLE"),
            "{stderr}"
        );
    }
}

#[test]
fn credentials_in_the_s3_endpoint_never_reach_stderr() {
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://leakuser:wJalrSECRET@127.0.0.1:{closed_port}");
    let output = serve_with_store(
        "s3://bucket/prefix",
        &[
            ("AWS_ENDPOINT_URL", &endpoint),
            ("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE"),
            ("AWS_SECRET_ACCESS_KEY", "wJalrSECRET"),
            ("AWS_REGION", "us-east-1"),
        ],
    );
    let stderr = refused(&output, "AWS_ENDPOINT_URL `http://127.0.0.1");
    assert!(stderr.contains("holds a user name or password"), "{stderr}");
    assert!(!stderr.contains("wJalrSECRET"), "{stderr}");
    // The same on another machine, over https too.
    for endpoint in [
        "http://leakuser:wJalrSECRET@10.255.255.1:9000",
        "https://leakuser:wJalrSECRET@s3.example.com",
    ] {
        let output = serve_with_store(
            "s3://bucket/prefix",
            &[("AWS_ENDPOINT_URL", endpoint), ("AWS_REGION", "us-east-1")],
        );
        let stderr = refused(&output, "holds a user name or password");
        assert!(!stderr.contains("wJalrSECRET"), "{stderr}");
    }
}

#[test]
fn plain_http_to_another_machine_is_refused_however_the_endpoint_is_spelled() {
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let loopback = format!("http://127.0.0.1:{closed_port}");
    // The check must look at the endpoint the S3 client uses: the variable names are read
    // case-insensitively after `AWS_`, and the last one given wins.
    for (name, variable) in [
        ("AWS_Endpoint_Url", "http://10.255.255.1:9000"),
        ("AWS_ENDPOINT_URL_S3", "http://10.255.255.1:9000"),
        ("AWS_Endpoint_Url_S3", "http://10.255.255.1:9000"),
    ] {
        let output = serve_with_store(
            "s3://bucket/prefix",
            &[
                ("AWS_ENDPOINT_URL", &loopback),
                (name, variable),
                ("AWS_ACCESS_KEY_ID", "key"),
                ("AWS_SECRET_ACCESS_KEY", "secret"),
                ("AWS_REGION", "us-east-1"),
            ],
        );
        refused(&output, "plain HTTP to another machine");
    }
}

/// A server with a token, a blob store on moto, and nothing else.
struct Scraped {
    child: std::process::Child,
    base: String,
    address: String,
    _data: tempfile::TempDir,
}

impl Drop for Scraped {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Scraped {
    fn start() -> Self {
        let data = tempfile::tempdir().unwrap();
        let s3 = S3Server::shared();
        let bucket = s3.create_bucket();
        let environment = s3.environment();
        let environment: Vec<(&str, &str)> = environment
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        let store = format!("s3://{bucket}/scale");
        let (child, url) = start_server_env(
            data.path(),
            &[],
            &["--blob-store", &store, "--token", TOKEN],
            &environment,
        );
        let base = url.trim_end_matches("/rpc").to_owned();
        let address = base.trim_start_matches("http://").to_owned();
        Scraped {
            child,
            base,
            address,
            _data: data,
        }
    }

    /// Send raw bytes as one HTTP/1.1 request and read the whole answer (the request must ask
    /// for `Connection: close`).
    fn raw(&self, request: &[u8]) -> String {
        let mut stream = std::net::TcpStream::connect(&self.address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream.write_all(request).unwrap();
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).into_owned()
    }

    /// `GET /metrics` with these extra header lines: the status and the body.
    fn scrape_with(&self, headers: &[&str]) -> (u16, String) {
        let mut request = format!(
            "GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.address
        );
        for line in headers {
            request.push_str(line);
            request.push_str("\r\n");
        }
        request.push_str("\r\n");
        status_and_body(&self.raw(request.as_bytes()))
    }

    fn scrape(&self) -> String {
        let authorization = format!("Authorization: Bearer {TOKEN}");
        let (status, body) = self.scrape_with(&[&authorization]);
        assert_eq!(status, 200, "{body}");
        body
    }
}

fn status_and_body(answer: &str) -> (u16, String) {
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, body.to_owned())
}

/// The sample lines of a scrape (not `#` comments).
fn samples(scrape: &str) -> Vec<&str> {
    scrape
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .collect()
}

#[test]
fn the_scrape_needs_the_exact_token_and_a_local_host() {
    let server = Scraped::start();
    let bearer = format!("Bearer {TOKEN}");
    for (headers, expected) in [
        (vec![], 401),
        (vec![format!("Authorization: bearer {TOKEN}")], 200),
        (vec![format!("Authorization: BEARER {TOKEN}")], 200),
        (vec![format!("Authorization: Bearer  {TOKEN}")], 401),
        (vec![format!("Authorization: Bearer {TOKEN} ")], 200),
        (vec![format!("Authorization: Bearer {TOKEN}x")], 401),
        (vec![format!("Authorization: Bearer {}", &TOKEN[1..])], 401),
        (vec![format!("Authorization: Basic {TOKEN}")], 401),
        (vec![format!("Authorization: {TOKEN}")], 401),
        (vec!["Authorization: Bearer".to_owned()], 401),
        (vec!["Authorization: Bearer ".to_owned()], 401),
        // Two headers: the first is read, a right one after a wrong one does not help.
        (
            vec![
                "Authorization: Bearer wrong".to_owned(),
                format!("Authorization: {bearer}"),
            ],
            401,
        ),
        (vec![format!("X-Authorization: {bearer}")], 401),
        (vec![format!("Cookie: token={TOKEN}")], 401),
        // The token in the right place, from a foreign page or for a foreign host.
        (
            vec![
                format!("Authorization: {bearer}"),
                "Origin: http://evil.example".to_owned(),
            ],
            403,
        ),
        (
            vec![
                format!("Authorization: {bearer}"),
                "Origin: null".to_owned(),
            ],
            403,
        ),
    ] {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        let (status, body) = server.scrape_with(&headers);
        assert_eq!(status, expected, "{headers:?}: {body}");
        if status != 200 {
            assert!(!body.contains("skillbox_"), "{headers:?}: {body}");
        }
    }
    // A foreign `Host` (DNS rebinding): a page has no token, so it gets nothing. With the
    // token the name is not checked (a server behind a proxy), as `AccessPolicy` documents.
    for (authorization, expected) in [("", 401), (bearer.as_str(), 200)] {
        let authorization = if authorization.is_empty() {
            String::new()
        } else {
            format!("Authorization: {authorization}\r\n")
        };
        let answer = server.raw(
            format!(
                "GET /metrics HTTP/1.1\r\nHost: evil.example\r\n{authorization}Connection: close\r\n\r\n"
            )
            .as_bytes(),
        );
        let (status, body) = status_and_body(&answer);
        assert_eq!(status, expected, "{body}");
        if status != 200 {
            assert!(!body.contains("skillbox_"), "{body}");
        }
    }
    // The scrape names the store by bucket only, never the endpoint or a credential.
    let scrape = server.scrape();
    for secret in ["skillbox-test-secret", "skillbox-test-key", "127.0.0.1"] {
        assert!(!scrape.contains(secret), "{secret} in {scrape}");
    }
}

#[test]
fn junk_paths_methods_and_tool_names_cannot_grow_the_scrape() {
    let server = Scraped::start();
    let bearer = format!("Authorization: Bearer {TOKEN}");
    let junk = |round: usize| {
        for index in 0..20 {
            let target = format!("/junk-{round}-{index}?q={index}");
            for method in ["GET", "PROPFIND", "BREW", "X-JUNK-{index}", "DELETE"] {
                let method = method.replace("{index}", &index.to_string());
                let request = format!(
                    "{method} {target} HTTP/1.1\r\nHost: {}\r\n{bearer}\r\nConnection: close\r\n\r\n",
                    server.address
                );
                server.raw(request.as_bytes());
            }
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"junk-{round}-{index}"}}}}"#
            );
            for (method, path) in [
                ("POST", "/mcp"),
                ("PROPFIND", "/mcp"),
                ("PATCH", "/rpc"),
                ("PUT", "/metrics"),
            ] {
                let request = format!(
                    "{method} {path} HTTP/1.1\r\nHost: {}\r\n{bearer}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    server.address,
                    body.len()
                );
                server.raw(request.as_bytes());
            }
        }
    };
    junk(0);
    server.scrape();
    let before = server.scrape();
    for round in 1..=3 {
        junk(round);
    }
    let after = server.scrape();
    let series = |scrape: &str| -> Vec<String> {
        samples(scrape)
            .iter()
            .map(|line| line.rsplit_once(' ').unwrap().0.to_owned())
            .collect()
    };
    assert_eq!(
        series(&before),
        series(&after),
        "junk added series:\n{after}"
    );
    assert!(!after.contains("junk") && !after.contains("PROPFIND") && !after.contains("BREW"));
}

#[test]
fn a_huge_or_slow_body_sent_to_metrics_is_not_waited_for() {
    let server = Scraped::start();
    // A declared body of 1 GiB that never comes: the answer comes at once all the same.
    let started = Instant::now();
    let answer = server.raw(
        format!(
            "GET /metrics HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 1073741824\r\nConnection: close\r\n\r\npartial",
            server.address
        )
        .as_bytes(),
    );
    let (status, body) = status_and_body(&answer);
    assert!(status == 200 || status == 413, "{status}: {body}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // Without the token, the same request is refused before any body is read.
    let answer = server.raw(
        format!(
            "GET /metrics HTTP/1.1\r\nHost: {}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
            server.address
        )
        .as_bytes(),
    );
    assert_eq!(status_and_body(&answer).0, 401, "{answer}");
    // A 32 MiB body sent in full is not kept: the server still answers.
    let mut request = format!(
        "GET /metrics HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        server.address,
        32 << 20
    )
    .into_bytes();
    request.resize(request.len() + (32 << 20), b'x');
    let mut stream = std::net::TcpStream::connect(&server.address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // The server may answer and close before reading it all: a failed write is fine.
    let _ = stream.write_all(&request);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    server.scrape();
}

#[test]
fn many_scrapes_at_once_are_all_answered() {
    let server = Scraped::start();
    let client = skillbox_testkit::http_client_builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let statuses = skillbox_testkit::runtime().block_on(async {
        let scrapes: Vec<_> = (0..200)
            .map(|_| {
                let request = client
                    .get(format!("{}/metrics", server.base))
                    .bearer_auth(TOKEN);
                tokio::spawn(async move {
                    let response = request.send().await.unwrap();
                    let status = response.status().as_u16();
                    let text = response.text().await.unwrap();
                    (status, text.ends_with("# EOF\n"))
                })
            })
            .collect();
        let mut statuses = Vec::new();
        for scrape in scrapes {
            statuses.push(scrape.await.unwrap());
        }
        statuses
    });
    assert!(
        statuses.iter().all(|answer| *answer == (200, true)),
        "{statuses:?}"
    );
    assert!(
        server
            .scrape()
            .contains("skillbox_http_requests_total{door=\"metrics\",status=\"200\"}")
    );
}

#[test]
fn a_failing_bucket_shows_clients_no_details_and_the_log_no_secret() {
    let s3 = S3Server::shared();
    let bucket = s3.create_bucket();
    let port = s3.endpoint.rsplit(':').next().unwrap().to_owned();
    let endpoint = format!("http://127.0.0.1:{port}");
    let data = tempfile::tempdir().unwrap();
    let log = data.path().join("stderr.log");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("skillbox"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path().join("data"))
        .args(["--blob-store", &format!("s3://{bucket}/leak")])
        .env_remove("SKILLBOX_TOKEN")
        .env_remove("SKILLBOX_ALLOWED_HOSTS")
        .env("AWS_ENDPOINT_URL", &endpoint)
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
        .env("AWS_SECRET_ACCESS_KEY", "wJalrSECRETKEY")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let url = loop {
        let text = fs_err::read_to_string(&log).unwrap();
        if let Some(rest) = text
            .lines()
            .find_map(|line| line.strip_prefix("skillbox: serving the Skills Protocol at "))
        {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server did not start: {text}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // The bucket goes away under the server.
    let mut stream = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    write!(
        stream,
        "DELETE /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
    let client = skillbox_testkit::http_client();
    let failure = super::serve::rpc(
        &client,
        skillbox_testkit::runtime(),
        &url,
        "create_blob",
        serde_json::json!({"content": "hello", "kind": "text/plain"}),
    )
    .unwrap_err();
    let _ = child.kill();
    let _ = child.wait();
    let stderr = fs_err::read_to_string(&log).unwrap();
    assert!(failure.contains("blob storage failed"), "{failure}");
    for secret in ["wJalrSECRETKEY", &port, &bucket, "AKIAEXAMPLE"] {
        assert!(!failure.contains(secret), "{secret} in {failure}");
    }
    // The log has the details, never the secret key.
    assert!(stderr.contains("NoSuchBucket"), "{stderr}");
    assert!(!stderr.contains("wJalrSECRETKEY"), "{stderr}");
}

#[test]
fn a_data_folder_whose_builtin_entry_is_a_link_is_refused_and_the_target_left_untouched() {
    let parent = tempfile::tempdir().unwrap();
    let victim = parent.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "keep me").unwrap();
    set_mode(&victim, 0o700);
    let data = parent.path().join("data");
    std::fs::create_dir(&data).unwrap();
    set_mode(&data, 0o711);
    std::os::unix::fs::symlink(&victim, data.join("builtin")).unwrap();
    let output = skillbox()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .env_remove("SKILLBOX_TOKEN")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the server started: {stderr}");
    assert!(stderr.contains("builtin"), "{stderr}");
    assert_eq!(mode(&victim), 0o700, "the link's target was changed");
    assert_eq!(names(&victim), ["keep.txt"]);
}
