//! A plain HTTP server for the tests of installing skills from URLs: the files of a folder
//! (`GET` and `HEAD`), and routes a test programs ([`StaticServer::route`]) for what a folder
//! cannot show: an error status, a redirect, a slow or late answer. On 127.0.0.1 with port 0;
//! every request is recorded; it stops when dropped.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;

pub use crate::local_http::ReceivedRequest;
use crate::local_http::{LocalHttpServer, ResponseBody, text_response};

/// How often a slow route sends its next piece.
const SLOW_TICK: Duration = Duration::from_millis(100);

/// What a route answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status.
    pub status: u16,
    /// Headers to send (`Content-Length` is added when missing).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// A response with `status` and `body`, no headers.
    #[must_use]
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Response {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// `200` with `body`.
    #[must_use]
    pub fn ok(body: impl Into<Vec<u8>>) -> Self {
        Response::new(200, body)
    }

    /// The same response with the header `name: value` added.
    #[must_use]
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

/// A programmed route: its response, how long to wait before it, how fast to send its body,
/// and the bearer token it asks for, if any.
#[derive(Debug, Clone)]
struct Route {
    response: Response,
    delay: Duration,
    bytes_per_second: Option<u64>,
    required_token: Option<String>,
}

/// What the handler needs.
#[derive(Debug)]
struct Site {
    folder: Option<PathBuf>,
    routes: Mutex<HashMap<String, Route>>,
}

/// The server; see the module documentation.
#[derive(Debug)]
pub struct StaticServer {
    server: LocalHttpServer,
    site: Arc<Site>,
}

impl StaticServer {
    /// Serve the files under `folder` (`/a/b.txt` is `folder/a/b.txt`; folders and paths
    /// leaving `folder` are 404), read at each request, so files written later are served.
    #[must_use]
    pub fn start(folder: impl Into<PathBuf>) -> Self {
        Self::serve(Some(folder.into()))
    }

    /// A server with no folder: only the routes answer, everything else is 404.
    #[must_use]
    pub fn without_folder() -> Self {
        Self::serve(None)
    }

    fn serve(folder: Option<PathBuf>) -> Self {
        let site = Arc::new(Site {
            folder,
            routes: Mutex::new(HashMap::new()),
        });
        let handler_site = Arc::clone(&site);
        let server = LocalHttpServer::start(Arc::new(move |request| {
            let site = Arc::clone(&handler_site);
            Box::pin(async move { answer(&request, &site).await })
                as Pin<Box<dyn std::future::Future<Output = _> + Send>>
        }));
        StaticServer { server, site }
    }

    /// Answer requests for `path` (any method) with `response`, before any file. A `path` with
    /// a `?query` matches only that query; one without matches any query.
    pub fn route(&self, path: &str, response: Response) {
        self.add_route(path, response, Duration::ZERO, None);
    }

    /// Answer `path` with `response` only to a request carrying `Authorization: Bearer
    /// token`; any other gets `401` with a `WWW-Authenticate: Bearer` challenge.
    pub fn protected(&self, path: &str, token: &str, response: Response) {
        self.insert_route(
            path,
            Route {
                response,
                delay: Duration::ZERO,
                bytes_per_second: None,
                required_token: Some(token.to_owned()),
            },
        );
    }

    /// Answer `from` with `302 Found` and `Location: to` (a path here, or any URL).
    pub fn redirect(&self, from: &str, to: &str) {
        self.route(
            from,
            Response::new(302, Vec::new()).with_header("Location", to),
        );
    }

    /// Answer `path` with `response`, its body sent at about `bytes_per_second` (in pieces
    /// every 100 ms) after the headers: a slow download.
    pub fn slow(&self, path: &str, response: Response, bytes_per_second: u64) {
        self.add_route(
            path,
            response,
            Duration::ZERO,
            Some(bytes_per_second.max(1)),
        );
    }

    /// Answer `path` with `response` only after `delay`: a server that is slow to answer.
    pub fn delayed(&self, path: &str, response: Response, delay: Duration) {
        self.add_route(path, response, delay, None);
    }

    fn add_route(
        &self,
        path: &str,
        response: Response,
        delay: Duration,
        bytes_per_second: Option<u64>,
    ) {
        self.insert_route(
            path,
            Route {
                response,
                delay,
                bytes_per_second,
                required_token: None,
            },
        );
    }

    fn insert_route(&self, path: &str, route: Route) {
        self.site
            .routes
            .lock()
            .expect("the routes")
            .insert(format!("/{}", path.trim_start_matches('/')), route);
    }

    /// `http://127.0.0.1:PORT/PATH`.
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.server.base_url(),
            path.trim_start_matches('/')
        )
    }

    /// `http://127.0.0.1:PORT`.
    #[must_use]
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// The requests answered so far (method, path, query, headers, status), in order.
    #[must_use]
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        self.server.requests()
    }
}

async fn answer<B>(request: &http::Request<B>, site: &Site) -> http::Response<ResponseBody> {
    let path = request.uri().path();
    let route = {
        let routes = site.routes.lock().expect("the routes");
        request
            .uri()
            .query()
            .and_then(|query| routes.get(&format!("{path}?{query}")))
            .or_else(|| routes.get(path))
            .cloned()
    };
    if let Some(route) = route {
        if let Some(token) = &route.required_token {
            let presented = request
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok());
            if presented != Some(format!("Bearer {token}").as_str()) {
                let mut response = text_response(401, "a token is needed\n");
                response.headers_mut().insert(
                    http::header::WWW_AUTHENTICATE,
                    http::HeaderValue::from_static("Bearer realm=\"skillbox-tests\""),
                );
                return response;
            }
        }
        return route_response(route).await;
    }
    if request.method() != http::Method::GET && request.method() != http::Method::HEAD {
        let mut response = text_response(405, "only GET and HEAD\n");
        response.headers_mut().insert(
            http::header::ALLOW,
            http::HeaderValue::from_static("GET, HEAD"),
        );
        return response;
    }
    let Some(file) = site
        .folder
        .as_deref()
        .and_then(|folder| file_of(folder, path))
    else {
        return text_response(404, "not found\n");
    };
    match tokio::fs::read(&file).await {
        Ok(bytes) => {
            let mut response = http::Response::new(ResponseBody::full(bytes));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static(content_type(&file)),
            );
            response
        }
        Err(_) => text_response(404, "not found\n"),
    }
}

/// The file `path` (a URL path) names under `folder`: `None` for paths leaving it and for
/// anything not a file.
fn file_of(folder: &Path, path: &str) -> Option<PathBuf> {
    let relative = PathBuf::from(percent_decode(path.trim_start_matches('/'))?);
    if !relative
        .components()
        .all(|component| matches!(component, Component::Normal(_)))
    {
        return None;
    }
    let file = folder.join(relative);
    file.is_file().then_some(file)
}

/// `text` with its `%XX` escapes decoded; `None` when one is broken or the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = std::str::from_utf8(bytes.get(index + 1..index + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            decoded.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

/// The content type of a file, by its name's ending.
fn content_type(file: &Path) -> &'static str {
    let name = file
        .file_name()
        .map(|name| name.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    [
        (".tar.gz", "application/gzip"),
        (".tgz", "application/gzip"),
        (".gz", "application/gzip"),
        (".zip", "application/zip"),
        (".tar", "application/x-tar"),
        (".json", "application/json"),
        (".md", "text/markdown; charset=utf-8"),
        (".txt", "text/plain; charset=utf-8"),
        (".html", "text/html; charset=utf-8"),
        (".yaml", "application/yaml"),
        (".yml", "application/yaml"),
        (".toml", "application/toml"),
    ]
    .into_iter()
    .find(|(ending, _)| name.ends_with(ending))
    .map_or("application/octet-stream", |(_, kind)| kind)
}

async fn route_response(route: Route) -> http::Response<ResponseBody> {
    if !route.delay.is_zero() {
        tokio::time::sleep(route.delay).await;
    }
    let Response {
        status,
        headers,
        body,
    } = route.response;
    let length = body.len();
    let body = match route.bytes_per_second {
        None => ResponseBody::full(body),
        Some(bytes_per_second) => {
            let (sender, receiver) = tokio::sync::mpsc::channel(1);
            let piece = usize::try_from(bytes_per_second / 10)
                .unwrap_or(usize::MAX)
                .max(1);
            tokio::spawn(async move {
                let body = Bytes::from(body);
                for start in (0..body.len()).step_by(piece) {
                    tokio::time::sleep(SLOW_TICK).await;
                    let end = (start + piece).min(body.len());
                    if sender.send(body.slice(start..end)).await.is_err() {
                        break;
                    }
                }
            });
            ResponseBody::Pieces(receiver)
        }
    };
    let mut response = http::Response::new(body);
    *response.status_mut() =
        http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in headers {
        match (
            http::HeaderName::from_bytes(name.as_bytes()),
            http::HeaderValue::from_str(&value),
        ) {
            (Ok(name), Ok(value)) => {
                response.headers_mut().append(name, value);
            }
            _ => panic!("the route's header `{name}: {value}` is not a valid header"),
        }
    }
    if !response
        .headers()
        .contains_key(http::header::CONTENT_LENGTH)
    {
        response.headers_mut().insert(
            http::header::CONTENT_LENGTH,
            http::HeaderValue::from(length),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(client: &reqwest::Client, url: &str) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
        crate::runtime().block_on(async {
            let response = client.get(url).send().await.unwrap();
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            (status, headers, response.bytes().await.unwrap().to_vec())
        })
    }

    /// The status of `GET target`, sent as written (an HTTP client would tidy `..` away).
    fn raw_status(server: &StaticServer, target: &str) -> u16 {
        use std::io::{Read, Write};
        let address = server.base_url().replace("http://", "");
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        write!(
            stream,
            "GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap()
    }

    #[test]
    fn files_are_served_with_get_and_head() {
        let folder = tempfile::tempdir().unwrap();
        crate::write_tree(
            folder.path(),
            &[
                ("site/skills/greet/SKILL.md", "hello"),
                ("site/a b.json", "{}"),
                ("secret.txt", "outside"),
            ],
        );
        let server = StaticServer::start(folder.path().join("site"));
        let client = crate::http_client();

        let (status, headers, body) = get(&client, &server.url("skills/greet/SKILL.md"));
        assert_eq!((status, body.as_slice()), (200, b"hello".as_slice()));
        assert_eq!(headers["content-type"], "text/markdown; charset=utf-8");
        assert_eq!(get(&client, &server.url("a%20b.json")).2, b"{}");

        let head = crate::runtime().block_on(async {
            client
                .head(server.url("skills/greet/SKILL.md"))
                .send()
                .await
                .unwrap()
        });
        assert_eq!(head.status(), 200);
        assert_eq!(head.headers()["content-length"], "5");

        for missing in ["missing.txt", "skills"] {
            assert_eq!(get(&client, &server.url(missing)).0, 404, "{missing}");
        }
        assert_eq!(raw_status(&server, "/a%20b.json"), 200);
        for outside in [
            "/../secret.txt",
            "/%2e%2e/secret.txt",
            "/skills/..%2F..%2Fsecret.txt",
        ] {
            assert_eq!(raw_status(&server, outside), 404, "{outside}");
        }
        let posted = crate::runtime()
            .block_on(async { client.post(server.url("a%20b.json")).send().await.unwrap() });
        assert_eq!(posted.status(), 405);

        let requests = server.requests();
        assert_eq!(requests[0].method, "GET");
        assert_eq!(requests[0].path, "/skills/greet/SKILL.md");
        assert_eq!(requests[0].status, 200);
        assert_eq!(requests[2].method, "HEAD");
    }

    #[test]
    fn routes_answer_before_files_and_record_headers() {
        let folder = tempfile::tempdir().unwrap();
        crate::write_tree(folder.path(), &[("file.txt", "from the folder")]);
        let server = StaticServer::start(folder.path());
        server.route(
            "/file.txt",
            Response::new(500, "broken").with_header("Retry-After", "1"),
        );
        server.route("/q?version=2", Response::ok("second"));
        server.route("/q", Response::ok("any"));
        let client = crate::http_client();

        let (status, headers, body) = get(&client, &server.url("file.txt"));
        assert_eq!((status, body.as_slice()), (500, b"broken".as_slice()));
        assert_eq!(headers["retry-after"], "1");
        assert_eq!(get(&client, &server.url("q?version=2")).2, b"second");
        assert_eq!(get(&client, &server.url("q?version=1")).2, b"any");

        crate::runtime().block_on(async {
            client
                .get(server.url("q"))
                .bearer_auth("secret")
                .send()
                .await
                .unwrap()
        });
        let last = server.requests().pop().unwrap();
        assert_eq!(last.authorization(), Some("Bearer secret"));
        assert_eq!(last.query, None);
    }

    #[test]
    fn redirects_are_followed() {
        let server = StaticServer::without_folder();
        server.redirect("/old", "/new");
        server.route("/new", Response::ok("moved here"));
        let client = crate::http_client();
        assert_eq!(get(&client, &server.url("old")).2, b"moved here");
        let not_following = crate::http_client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let (status, headers, _) = get(&not_following, &server.url("old"));
        assert_eq!(status, 302);
        assert_eq!(headers["location"], "/new");
        assert_eq!(get(&client, &server.url("elsewhere")).0, 404);
    }

    #[test]
    fn slow_and_delayed_routes_take_their_time() {
        let server = StaticServer::without_folder();
        let body = "x".repeat(300);
        server.slow("/slow", Response::ok(body.clone()), 1000);
        server.delayed("/late", Response::ok("late"), Duration::from_millis(300));
        let client = crate::http_client();

        let started = std::time::Instant::now();
        let (status, headers, received) = get(&client, &server.url("slow"));
        assert_eq!((status, received), (200, body.into_bytes()));
        assert_eq!(headers["content-length"], "300");
        // Three pieces of 100 bytes, each after a 100 ms tick.
        assert!(started.elapsed() >= Duration::from_millis(300));

        let started = std::time::Instant::now();
        assert_eq!(get(&client, &server.url("late")).2, b"late");
        assert!(started.elapsed() >= Duration::from_millis(300));
    }

    #[test]
    fn a_dropped_server_refuses_connections() {
        let server = StaticServer::without_folder();
        let address = server.base_url().replace("http://", "");
        drop(server);
        assert!(crate::wait_until(
            Duration::from_secs(5),
            Duration::from_millis(20),
            || std::net::TcpStream::connect(&address).is_err()
        ));
    }

    #[test]
    fn percent_escapes_are_decoded() {
        assert_eq!(percent_decode("a%20b%2Fc").as_deref(), Some("a b/c"));
        assert_eq!(percent_decode("bad%2"), None);
        assert_eq!(percent_decode("bad%zz"), None);
    }
}
