//! What hostile clients try: headers sent slowly or never, many large bodies at once, skill
//! files that never finish reading, requests forged by web pages.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};
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

/// The first bytes the server sends back, in lower case.
fn first_answer(stream: &mut TcpStream) -> String {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = vec![0u8; 4096];
    let read = stream.read(&mut answer).unwrap();
    String::from_utf8_lossy(&answer[..read]).to_ascii_lowercase()
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
    let answer = first_answer(&mut third);
    assert!(answer.starts_with("http/1.1 503"), "{answer}");
    assert!(answer.contains("retry-after: 1\r\n"), "{answer}");
    assert!(
        answer.contains("-32000") && answer.contains("retry in a moment"),
        "{answer}"
    );
    // A chunked body that also declares a small `Content-Length` is read by its chunks (the
    // length is ignored), so it is a body of unknown length and is refused the same way.
    let mut smuggled = connect_and_send(
        &server,
        b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n[",
    );
    let answer = first_answer(&mut smuggled);
    assert!(answer.starts_with("http/1.1 503"), "{answer}");
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

/// Store `bytes` bytes of text as a blob and return its id.
fn large_blob(server: &Server, bytes: usize) -> String {
    let created = server.call(
        "create_blob",
        json!({"content": "x".repeat(bytes), "kind": "text/plain"}),
    );
    created["result"]["blob_id"].as_str().unwrap().to_owned()
}

/// Ask on a new connection for the whole of a blob, without reading the answer. The
/// connection's receive buffer is kept small, as a client that reads nothing would have it
/// (otherwise loopback buffers grow to hold tens of MiB).
fn ask_for_whole_blob(server: &Server, blob_id: &str) -> TcpStream {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "read_blob",
                      "params": {"blob_id": blob_id, "mode": "full"}})
    .to_string();
    let request = format!(
        "POST /rpc HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = server.runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let stream = socket
            .connect(address(server).parse().unwrap())
            .await
            .unwrap();
        stream.into_std().unwrap()
    });
    stream.set_nonblocking(false).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// Read what arrives until the server closes the connection; `Err` with the count when it
/// is still open after `limit`.
fn count_until_closed(stream: &mut TcpStream, limit: Duration) -> Result<usize, usize> {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut received = 0;
    let mut buffer = vec![0u8; 1024 * 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return Ok(received),
            Ok(read) => received += read,
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => {
                return Ok(received);
            }
            Err(_) => return Err(received),
        }
    }
}

#[test]
fn a_client_that_stops_reading_its_answer_is_disconnected() {
    let server = Server::start_with(examples(), None, |state| {
        state.with_send_stall_timeout(Duration::from_millis(500))
    });
    let size = 16 * 1024 * 1024;
    let blob_id = large_blob(&server, size);
    // The answer is larger than what the sockets buffer, so the server's writes block while
    // the client reads nothing...
    let mut reader = ask_for_whole_blob(&server, &blob_id);
    std::thread::sleep(Duration::from_secs(3));
    // ...and the server gives up: only what was already buffered arrives, then the end.
    let received = count_until_closed(&mut reader, Duration::from_secs(10));
    assert!(
        received.is_ok_and(|received| received < size),
        "the server kept the connection and its answer: {received:?} bytes"
    );
    // A client that reads is served in full.
    let read = server.call("read_blob", json!({"blob_id": blob_id, "mode": "full"}));
    assert_eq!(read["result"]["preview"].as_str().map(str::len), Some(size));
}

#[test]
fn large_blob_reads_take_from_the_budget_until_their_answers_are_sent() {
    let server = Server::start(None);
    let size = 16 * 1024 * 1024;
    let blob_id = large_blob(&server, size);
    let whole = json!({"blob_id": blob_id, "mode": "full"});
    // Ten clients ask for 16 MiB each and read nothing: the answers of eight of them hold the
    // 128 MiB budget while they wait to be sent (the other two are told to retry)...
    let holders: Vec<TcpStream> = (0..10)
        .map(|_| ask_for_whole_blob(&server, &blob_id))
        .collect();
    for holder in &holders {
        // The first bytes of every answer have arrived: all ten have been dealt with.
        holder
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        assert_eq!(holder.peek(&mut [0u8; 1]).unwrap(), 1);
    }
    // ...so one more large read is told to come back, instead of costing 16 MiB more.
    let refused = server.call("read_blob", whole.clone());
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    assert_eq!(
        refused["error"]["data"]["retry_after_ms"], 1000,
        "{refused}"
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("retry in a moment"), "{message}");
    // Small samples do not need the budget.
    let sample = server.call("read_blob", json!({"blob_id": blob_id}));
    assert_eq!(
        sample["result"]["preview"].as_str().map(str::len),
        Some(2000)
    );
    // Once the clients are gone, so are their answers, and large reads work again.
    drop(holders);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let read = server.call("read_blob", whole.clone());
        if read["result"]["preview"].as_str().map(str::len) == Some(size) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the budget was not given back: {}",
            read["error"]
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_batch_stops_running_requests_once_its_answers_are_large() {
    let server = Server::start(None);
    let size = 16 * 1024 * 1024;
    let blob_id = large_blob(&server, size);
    let batch: Vec<Value> = (1..=4)
        .map(|id| {
            json!({"jsonrpc": "2.0", "id": id, "method": "read_blob",
                   "params": {"blob_id": blob_id, "mode": "full"}})
        })
        .collect();
    let (status, answers) = server.post(&Value::Array(batch).to_string());
    assert_eq!(status, 200);
    let answers = answers.unwrap();
    let answers = answers.as_array().unwrap();
    assert_eq!(answers.len(), 4);
    // Two answers of 16 MiB reach the 32 MiB a batch may hold; the rest are not run.
    for answer in &answers[..2] {
        assert_eq!(
            answer["result"]["preview"].as_str().map(str::len),
            Some(size)
        );
    }
    for (answer, id) in answers[2..].iter().zip(3..) {
        assert_eq!(answer["id"], id);
        assert_eq!(answer["error"]["code"], -32000, "{}", answer["error"]);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("not run") && message.contains("another batch"),
            "{message}"
        );
    }
}

#[test]
fn a_blob_kind_must_be_a_short_mime_type() {
    let server = Server::start(None);
    // The kind is repeated in every read of the blob: a megabyte of control characters (six
    // bytes each once escaped in JSON) would make each small read answer with 6 MiB.
    for kind in [
        "\u{1}".repeat(1024 * 1024),
        "t".repeat(256),
        "text/html\r\nX-Injected: 1".to_owned(),
        " ".to_owned(),
    ] {
        let created = server.call("create_blob", json!({"content": "x", "kind": kind}));
        assert_eq!(
            created["error"]["code"],
            -32602,
            "{:.200}",
            created.to_string()
        );
        let message = created["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("parameter `kind`") && message.contains("MIME type"),
            "{message}"
        );
        assert!(
            message.len() < 200,
            "the message repeats the kind: {message:.300}"
        );
    }
    let created = server.call(
        "create_blob",
        json!({"content": "x", "kind": "text/plain; charset=utf-8"}),
    );
    assert!(created["result"]["blob_id"].is_string(), "{created}");
}

#[test]
fn blob_failures_name_no_host_paths_and_a_blob_swept_during_a_read_is_not_found() {
    let server = Server::start(None);
    let data = server._data.path().to_str().unwrap().to_owned();
    let create = || {
        let created = server.call(
            "create_blob",
            json!({"content": "hello", "kind": "text/plain"}),
        );
        created["result"]["blob_id"].as_str().unwrap().to_owned()
    };
    let file_of = |blob_id: &str, folder: &str, suffix: &str| {
        server._data.path().join("blobs").join(folder).join(format!(
            "{}{suffix}",
            blob_id.strip_prefix("blob:").unwrap()
        ))
    };
    // The expiry sweep removes the bytes after a read found the metadata: the blob is gone,
    // which is the caller's problem (-32602), not the server's.
    let swept = create();
    std::fs::remove_file(file_of(&swept, "data", "")).unwrap();
    let read = server.call("read_blob", json!({"blob_id": swept}));
    assert_eq!(read["error"]["code"], -32602, "{read}");
    let run = server.call(
        "run_code",
        json!({"language": "python", "code": "def main(args):\n    return 1\n",
               "input_blobs": [swept]}),
    );
    assert_eq!(run["error"]["code"], -32602, "{run}");
    // A damaged store is the server's problem (-32603), reported without its paths.
    let damaged = create();
    std::fs::write(file_of(&damaged, "meta", ".json"), "not json").unwrap();
    let read = server.call("read_blob", json!({"blob_id": damaged}));
    assert_eq!(read["error"]["code"], -32603, "{read}");
    for answer in [
        &read,
        &run,
        &server.call("read_blob", json!({"blob_id": swept})),
    ] {
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            !message.contains(&data),
            "a host path reached the client: {message}"
        );
    }
}

#[test]
fn run_inputs_are_bounded_and_copied_only_once_the_run_has_its_turn() {
    let limits = skillbox_server::RunLimits {
        max_concurrent: 1,
        max_queued: 0,
        max_input_bytes: 1000,
    };
    let server = Server::start_with(examples(), None, |state| state.with_run_limits(limits));
    let blob = |bytes: usize| {
        let created = server.call(
            "create_blob",
            json!({"content": "x".repeat(bytes), "kind": "text/plain"}),
        );
        created["result"]["blob_id"].as_str().unwrap().to_owned()
    };
    let (first, second) = (blob(600), blob(600));
    let run = |input_blobs: Vec<String>, code: &str| {
        server.call(
            "run_code",
            json!({"language": "python", "code": code, "input_blobs": input_blobs}),
        )
    };
    let quick = "def main(args):\n    return 1\n";
    // Together over the run's input bytes: refused before anything is copied.
    let refused = run(vec![first.clone(), second.clone()], quick);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`input_blobs`")
            && message.contains("1200 bytes")
            && message.contains("at most 1000"),
        "{message}"
    );
    // The same blob twice is one input.
    let twice = run(
        vec![
            first.clone(),
            first.to_uppercase().replace("BLOB:", "blob:"),
        ],
        quick,
    );
    assert_eq!(twice["result"]["status"], "completed", "{twice}");

    // While the one run slot is taken, a run with inputs is refused without copying them.
    let slow = json!({"jsonrpc": "2.0", "id": 1, "method": "run_code",
                      "params": {"language": "python",
                                 "code": "import time\ndef main(args):\n    time.sleep(4)\n"}})
    .to_string();
    let hold = || {
        connect_and_send(
            &server,
            format!(
                "POST /rpc HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{slow}",
                slow.len()
            )
            .as_bytes(),
        )
    };
    // The probe is a run too, so it may take the slot before the slow run does: then try again.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut holder = loop {
        let mut holder = hold();
        std::thread::sleep(Duration::from_millis(300));
        if run(Vec::new(), quick)["error"]["code"] == -32000 {
            break holder;
        }
        read_until_closed(&mut holder, Duration::from_secs(30)).unwrap();
        assert!(
            Instant::now() < deadline,
            "the slow run never took the slot"
        );
    };
    let run_inputs = server._data.path().join("run-inputs");
    let modified = || std::fs::metadata(&run_inputs).unwrap().modified().unwrap();
    let before = modified();
    let busy = run(vec![first.clone()], quick);
    assert_eq!(busy["error"]["code"], -32000, "{busy}");
    assert_eq!(
        modified(),
        before,
        "inputs were copied for a run the queue refused"
    );
    let slow_answer = read_until_closed(&mut holder, Duration::from_secs(30)).unwrap();
    assert!(slow_answer.contains("\"completed\""), "{slow_answer}");
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

#[tokio::test]
async fn an_empty_token_is_no_token_and_keeps_the_host_check() {
    let data = tempfile::tempdir().unwrap();
    let app = skillbox_server::router(state(examples(), data.path(), Some("")));
    let request = |host: &str| {
        Request::post("/rpc")
            .header(header::HOST, host)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(
                r#"{"jsonrpc": "2.0", "id": 1, "method": "list_skills"}"#,
            ))
            .unwrap()
    };
    for (host, expected) in [
        ("localhost:7878", StatusCode::OK),
        ("attacker.example:7878", StatusCode::FORBIDDEN),
    ] {
        let response = app.clone().oneshot(request(host)).await.unwrap();
        assert_eq!(response.status(), expected, "{host}");
    }
}
