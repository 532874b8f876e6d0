//! `skillbox serve` against hostile clients, as a real process: requests a web page could
//! forge (DNS rebinding, cross-site posts).

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::serve::{start_server_env, start_server_with};
use super::serve_runs::Server;
use super::support::repo_root;

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
