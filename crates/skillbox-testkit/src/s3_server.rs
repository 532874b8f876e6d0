//! A real S3-compatible server for the blob store's tests: moto's server mode (`moto_server`,
//! pinned in `scripts/test-requirements.txt` and installed in the test venv), one per test
//! binary, started on first use on 127.0.0.1 and stopped when the binary exits. Each test
//! takes a bucket of its own ([`S3Server::create_bucket`]). Nothing leaves the machine.
//!
//! moto accepts any credentials and answers unsigned requests too: the helpers that look into
//! a bucket ([`S3Server::keys`], [`S3Server::uploads_in_progress`]) send plain HTTP, so the
//! tests see the bucket as the server holds it, not through the client under test.

use std::io::{Read, Write};
use std::process::Child;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The region the tests name (moto serves every region).
pub const REGION: &str = "us-east-1";
/// The credentials the tests send (moto accepts any).
const ACCESS_KEY: &str = "skillbox-test-key";
const SECRET_KEY: &str = "skillbox-test-secret";
/// How long one request to the server may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The running S3 server.
#[derive(Debug)]
pub struct S3Server {
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    port: u16,
    buckets: AtomicUsize,
    _process: Mutex<Child>,
}

/// One object as a bucket listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedObject {
    /// The object's key.
    pub key: String,
    /// Its size in bytes.
    pub size: u64,
}

impl S3Server {
    /// The shared server, started on first use from the test venv (created if needed, as
    /// [`crate::peer_python`] does: the server is part of the test suite, not optional).
    #[must_use]
    pub fn shared() -> &'static S3Server {
        static SERVER: OnceLock<S3Server> = OnceLock::new();
        SERVER.get_or_init(start)
    }

    /// A new empty bucket, named for this test binary and numbered.
    #[must_use]
    pub fn create_bucket(&self) -> String {
        let number = self.buckets.fetch_add(1, Ordering::Relaxed);
        let bucket = format!("skillbox-test-{}-{number}", std::process::id());
        let (status, body) = self.request("PUT", &format!("/{bucket}"));
        assert_eq!(status, 200, "creating the bucket {bucket} failed: {body}");
        bucket
    }

    /// The environment a client of this server needs (the standard AWS variables), as
    /// `(name, value)` pairs; `AWS_ALLOW_HTTP` is left out on purpose (a loopback endpoint
    /// must be accepted without it).
    #[must_use]
    pub fn environment(&self) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT_URL", self.endpoint.as_str()),
            ("AWS_REGION", REGION),
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
    }

    /// The objects of `bucket` whose keys start with `prefix`, as the server lists them.
    #[must_use]
    pub fn keys(&self, bucket: &str, prefix: &str) -> Vec<ListedObject> {
        let (status, body) = self.request("GET", &format!("/{bucket}?list-type=2&prefix={prefix}"));
        assert_eq!(status, 200, "listing {bucket} failed: {body}");
        assert!(
            !body.contains("<IsTruncated>true</IsTruncated>"),
            "the tests keep fewer than 1000 objects in a bucket: {body}"
        );
        elements(&body, "Contents")
            .into_iter()
            .map(|object| ListedObject {
                key: elements(object, "Key")
                    .first()
                    .copied()
                    .unwrap_or("")
                    .to_owned(),
                size: elements(object, "Size")
                    .first()
                    .and_then(|size| size.parse().ok())
                    .unwrap_or(0),
            })
            .collect()
    }

    /// How many multipart uploads were begun in `bucket` and neither completed nor aborted.
    #[must_use]
    pub fn uploads_in_progress(&self, bucket: &str) -> usize {
        let (status, body) = self.request("GET", &format!("/{bucket}?uploads"));
        assert_eq!(
            status, 200,
            "listing the uploads of {bucket} failed: {body}"
        );
        elements(&body, "Upload").len()
    }

    /// One plain HTTP/1.1 request without a body: the status and the body as text.
    fn request(&self, method: &str, target: &str) -> (u16, String) {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port))
            .expect("the S3 server accepts connections");
        stream.set_read_timeout(Some(REQUEST_TIMEOUT)).unwrap();
        write!(
            stream,
            "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )
        .unwrap();
        let mut answer = Vec::new();
        stream
            .read_to_end(&mut answer)
            .expect("the S3 server answers");
        let answer = String::from_utf8_lossy(&answer).into_owned();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or(0);
        assert!(
            !head
                .to_ascii_lowercase()
                .contains("transfer-encoding: chunked"),
            "the S3 server answered in chunks, which these helpers do not read: {head}"
        );
        (status, body.to_owned())
    }
}

/// The contents of every `<name>…</name>` element in `xml` (flat: no nesting of the same name).
fn elements<'a>(xml: &'a str, name: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{name}>"), format!("</{name}>"));
    let mut found = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else {
            break;
        };
        found.push(&after[..end]);
        rest = &after[end + close.len()..];
    }
    found
}

fn start() -> S3Server {
    let python = crate::peer_python();
    let program = python.with_file_name("moto_server");
    let (port, child) = crate::local_model::serve_on_free_port(
        &program,
        &[],
        &[],
        "moto_server (the S3 server of the tests)",
        "/moto-api/",
    );
    S3Server {
        endpoint: format!("http://127.0.0.1:{port}"),
        port,
        buckets: AtomicUsize::new(0),
        _process: Mutex::new(child),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_found_in_order() {
        let xml = "<a><Key>x</Key><Size>3</Size></a><a><Key>y</Key></a>";
        assert_eq!(elements(xml, "Key"), ["x", "y"]);
        assert_eq!(elements(xml, "Size"), ["3"]);
        assert!(elements(xml, "Upload").is_empty());
    }
}
