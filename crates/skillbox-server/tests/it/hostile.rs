//! What hostile clients try: headers sent slowly or never, many large bodies at once, skill
//! files that never finish reading, requests forged by web pages.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::json;
use tower::ServiceExt;

use super::{Server, catalog_of, examples, state};

fn address(server: &Server) -> String {
    server.url.trim_start_matches("http://").to_owned()
}

/// Send raw bytes on a new connection.
fn connect_and_send(server: &Server, bytes: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(address(server)).unwrap();
    stream.write_all(bytes).unwrap();
    stream
}

/// Read until the server closes the connection, or fail after `limit`.
fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> Result<String, String> {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut received = Vec::new();
    match stream.read_to_end(&mut received) {
        Ok(_) => Ok(String::from_utf8_lossy(&received).into_owned()),
        Err(error) => Err(format!(
            "the connection is still open after {limit:?} ({error}); received so far: {:?}",
            String::from_utf8_lossy(&received)
        )),
    }
}

#[test]
fn a_client_that_never_finishes_its_headers_is_disconnected() {
    let server = Server::start_with(examples(), None, |state| {
        state.with_header_read_timeout(Duration::from_millis(300))
    });
    let started = Instant::now();
    let mut slow = connect_and_send(&server, b"POST /rpc HTT");
    let outcome = read_until_closed(&mut slow, Duration::from_secs(10));
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // One header, then nothing: the same.
    let mut slow = connect_and_send(&server, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n");
    assert!(read_until_closed(&mut slow, Duration::from_secs(10)).is_ok());

    // A complete request on a fresh connection is answered as usual.
    let mut prompt = connect_and_send(
        &server,
        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    let answer = read_until_closed(&mut prompt, Duration::from_secs(10)).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let body = server.call("list_skills", json!({}));
    assert!(body["result"]["skills"].is_array(), "{body}");
}

/// The headers of a 60 MiB JSON-RPC post whose body never comes.
fn large_post_headers() -> Vec<u8> {
    let length = 60 * 1024 * 1024;
    format!(
        "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n[{{\"jsonrpc\":"
    )
    .into_bytes()
}

#[test]
fn past_the_large_body_budget_callers_get_503_with_retry_after() {
    let server = Server::start(None);
    // Two slow uploads of 60 MiB hold the 128 MiB budget...
    let holding: Vec<TcpStream> = (0..2)
        .map(|_| {
            let stream = connect_and_send(&server, &large_post_headers());
            std::thread::sleep(Duration::from_millis(200));
            stream
        })
        .collect();
    // ...so a third is told to come back, before its body is read.
    let mut third = connect_and_send(&server, &large_post_headers());
    third
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = vec![0u8; 4096];
    let read = third.read(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]).to_ascii_lowercase();
    assert!(answer.starts_with("http/1.1 503"), "{answer}");
    assert!(answer.contains("retry-after: 1\r\n"), "{answer}");
    assert!(
        answer.contains("-32000") && answer.contains("retry in a moment"),
        "{answer}"
    );
    // Small requests are not affected.
    let listed = server.call("list_skills", json!({"limit": 1}));
    assert!(listed["result"]["skills"].is_array(), "{listed}");

    // Once the slow uploads are gone, a large request is accepted again.
    drop(holding);
    drop(third);
    let content = "x".repeat(3 * 1024 * 1024);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, body) = server.post(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "create_blob",
                    "params": {"content": content, "kind": "text/plain"}})
            .to_string(),
        );
        if status == 200 {
            assert_eq!(body.unwrap()["result"]["size_bytes"], 3 * 1024 * 1024);
            break;
        }
        assert!(
            status == 503 && Instant::now() < deadline,
            "the budget was not given back: {status} {body:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_catalog_read_past_its_budget_is_given_up_while_the_server_answers() {
    // Core refuses FIFOs and devices at once, so no skill file stalls a read for ever today;
    // the budget still bounds a read that is merely slow (a stalled network file system, a
    // huge folder). Here: a full description listing 5,000 files, against a 1 ms budget.
    let skills = tempfile::tempdir().unwrap();
    let folder = skills.path().join("crowded");
    std::fs::create_dir_all(folder.join("references")).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        "---\nname: crowded\ndescription: Has many files.\n---\nSee references/.\n",
    )
    .unwrap();
    for index in 0..5_000 {
        std::fs::write(folder.join(format!("references/note-{index}.txt")), "x").unwrap();
    }
    let server = Server::start_with(catalog_of(skills.path()), None, |state| {
        state.with_catalog_budget(Duration::from_millis(1))
    });
    let described = server.call(
        "describe_skill",
        json!({"name": "crowded", "detail": "full"}),
    );
    assert_eq!(described["error"]["code"], -32001, "{described}");
    let message = described["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`describe_skill` did not finish within 1 ms"),
        "{message}"
    );
    // Calls that read nothing are answered as before.
    let listed = server.call("list_skills", json!({}));
    assert!(listed.get("result").is_some(), "{listed}");
}

#[tokio::test]
async fn the_router_checks_hosts_and_content_types_without_a_socket() {
    let data = tempfile::tempdir().unwrap();
    let app = skillbox_server::router(state(examples(), data.path(), None));
    let request = |host: &str, content_type: &str| {
        Request::post("/rpc")
            .header(header::HOST, host)
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(
                r#"{"jsonrpc": "2.0", "id": 1, "method": "list_skills"}"#,
            ))
            .unwrap()
    };
    let cases = [
        ("localhost:7878", "application/json", StatusCode::OK),
        (
            "attacker.example:7878",
            "application/json",
            StatusCode::FORBIDDEN,
        ),
        (
            "localhost:7878",
            "text/plain",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
    ];
    for (host, content_type, expected) in cases {
        let response = app
            .clone()
            .oneshot(request(host, content_type))
            .await
            .unwrap();
        assert_eq!(response.status(), expected, "{host} {content_type}");
    }
}
