//! The web app of `skillbox serve`, over HTTP against the real binary: pages, escaping, the
//! token and CSRF rules, the playground's calls, the chat's turns and event stream, runs.
//! The browser tests (headless Chromium) are in `web_browser.rs`.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillbox_testkit::model_server::{Reply, ScriptedModelServer};

use super::serve::start_server_env;
use super::support::{make_world_readable, write_tree};

/// A skill tree with a tool, a hostile skill and a skill with an error.
pub fn web_tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[
            (
                "weather/SKILL.md",
                "---\nname: weather\ndescription: Weather lookups for a city.\n---\n# Weather\n\nCall `get_weather` with a city.\n\n| unit | meaning |\n|---|---|\n| C | Celsius |\n\nSee [the notes](references/notes.md).\n",
            ),
            (
                "weather/tools.json",
                r#"[{"name":"get_weather","description":"Current weather of a city.","script":"scripts/weather.py","parameters":{"city":{"type":"string","description":"The city"},"unit":{"type":"string","enum":["C","F"],"optional":true}}}]"#,
            ),
            (
                "weather/scripts/weather.py",
                "import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({'city': args.get('city'), 'sky': 'sunny'}))\n",
            ),
            ("weather/references/notes.md", "# Notes\n\nDry.\n"),
            (
                "xss/SKILL.md",
                "---\nname: xss\ndescription: \"<script>window.pwned=1</script><img src=x onerror=window.pwned=2>\"\n---\n# Body\n\n<script>window.pwned=3</script>\n\n<img src=x onerror=\"window.pwned=4\">\n\n[click](javascript:window.pwned=5)\n",
            ),
            ("xss/<b>bold<:b>.md", "<script>window.pwned=6</script>\n"),
            (
                "xss/.mcp.json",
                r#"{"mcpServers": {"evil": {"command": "python3", "args": ["<script>window.pwned=7</script>"]}}}"#,
            ),
            (
                "broken/SKILL.md",
                "---\nname: broken\ndescription: Has a bad field.\nmetadata: [1, 2]\n---\nBody.\n",
            ),
            (
                "greet/SKILL.md",
                "---\nname: greet\ndescription: Greets people by name.\n---\nRun `greet.py NAME` with use_skill.\n",
            ),
            (
                "greet/scripts/greet.py",
                "import sys\nprint('Hello, ' + sys.argv[1] + '!')\n",
            ),
        ],
    );
    make_world_readable(root.path());
    root
}

/// A running `skillbox serve` and a client for its pages.
pub struct WebServer {
    child: Child,
    /// `http://127.0.0.1:PORT` without a trailing slash.
    pub base: String,
    runtime: &'static tokio::runtime::Runtime,
    client: reqwest::Client,
    /// The session cookie, once signed in.
    pub cookie: Option<String>,
    /// Folders kept as long as the server runs ([`WebServer::over_web_tree`]).
    folders: Vec<tempfile::TempDir>,
}

/// One answer.
pub struct Page {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Page {
    pub fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default()
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|_| panic!("not JSON: {}", self.text))
    }

    /// The page's CSRF token (`data-csrf` on the body).
    pub fn csrf(&self) -> String {
        let start = self
            .text
            .find("data-csrf=\"")
            .expect("a page with a CSRF token")
            + 11;
        self.text[start..][..self.text[start..].find('"').unwrap()].to_owned()
    }
}

impl WebServer {
    /// `skillbox serve ROOT --sandbox off EXTRA…` with these environment variables.
    pub fn start(root: &Path, data: &Path, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let mut arguments = vec!["--sandbox", "off"];
        arguments.extend_from_slice(extra);
        let (child, url) = start_server_env(data, &[root.to_path_buf()], &arguments, env);
        let base = url.trim_end_matches("/rpc").to_owned();
        WebServer {
            child,
            base,
            runtime: skillbox_testkit::runtime(),
            client: skillbox_testkit::http_client_builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
            cookie: None,
            folders: Vec::new(),
        }
    }

    /// [`WebServer::start`] over a fresh [`web_tree`] and data folder of its own.
    pub fn over_web_tree(extra: &[&str], env: &[(&str, &str)]) -> Self {
        let tree = web_tree();
        let data = tempfile::tempdir().unwrap();
        let mut server = WebServer::start(tree.path(), data.path(), extra, env);
        server.folders = vec![tree, data];
        server
    }

    fn send(&self, request: reqwest::RequestBuilder) -> Page {
        let request = match &self.cookie {
            Some(cookie) => request.header("cookie", cookie),
            None => request,
        };
        self.runtime.block_on(async {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let text = response.text().await.unwrap();
            Page {
                status,
                headers,
                text,
            }
        })
    }

    pub fn get(&self, path: &str) -> Page {
        self.send(self.client.get(format!("{}{path}", self.base)))
    }

    /// A JSON `POST` with the CSRF header.
    pub fn post(&self, path: &str, csrf: &str, body: &Value) -> Page {
        self.send(
            self.client
                .post(format!("{}{path}", self.base))
                .header("content-type", "application/json")
                .header("x-skillbox-csrf", csrf)
                .body(body.to_string()),
        )
    }

    /// A form `POST` (the login form).
    pub fn post_form(&self, path: &str, form: &[(&str, &str)]) -> Page {
        let body: Vec<String> = form
            .iter()
            .map(|(name, value)| format!("{name}={}", encode(value)))
            .collect();
        self.send(
            self.client
                .post(format!("{}{path}", self.base))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body.join("&")),
        )
    }

    /// The events of a conversation's stream until one of type `until` (or the timeout).
    pub fn events_until(&self, conversation: &str, until: &str) -> Vec<Value> {
        let url = format!("{}/api/chat/{conversation}/events", self.base);
        let mut request = self.client.get(url);
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie);
        }
        self.runtime.block_on(async {
            let mut response = request.send().await.unwrap();
            assert_eq!(response.status().as_u16(), 200);
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut buffer = String::new();
            let mut events = Vec::new();
            while Instant::now() < deadline {
                let Ok(Ok(Some(chunk))) =
                    tokio::time::timeout(Duration::from_secs(30), response.chunk()).await
                else {
                    break;
                };
                buffer.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = buffer.find("\n\n") {
                    let block: String = buffer.drain(..end + 2).collect();
                    for line in block.lines() {
                        if let Some(data) = line.strip_prefix("data: ") {
                            let event: Value = serde_json::from_str(data).unwrap();
                            let done = event["type"] == until;
                            events.push(event);
                            if done {
                                return events;
                            }
                        }
                    }
                }
            }
            panic!("no `{until}` event came: {events:#?}");
        })
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() {
                char::from(byte).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect()
}

#[test]
fn pages_show_the_catalog_with_skill_content_escaped() {
    let server = WebServer::over_web_tree(&[], &[]);

    let list = server.get("/");
    assert_eq!(list.status, 200);
    let policy = list.header("content-security-policy");
    assert!(policy.contains("script-src 'self'") && policy.contains("default-src 'none'"));
    assert_eq!(list.header("x-content-type-options"), "nosniff");
    for name in ["weather", "xss", "broken", "greet"] {
        assert!(
            list.text.contains(&format!("href=\"/skills/{name}\"")),
            "{name}"
        );
    }
    assert!(
        list.text.contains("&#60;script&#62;window.pwned=1"),
        "{}",
        list.text
    );
    assert!(!list.text.contains("<script>window"), "{}", list.text);
    assert!(!list.text.contains("<img src=x"), "{}", list.text);
    assert!(
        list.text.contains("badge error"),
        "the broken skill shows its error"
    );

    let skill = server.get("/skills/weather");
    assert_eq!(skill.status, 200);
    assert!(
        skill.text.contains("<table>"),
        "rendered markdown: {}",
        skill.text
    );
    assert!(
        skill
            .text
            .contains("href=\"/skills/weather/files/references/notes.md\"")
    );
    assert!(skill.text.contains("get_weather") && skill.text.contains("&#34;city&#34;"));
    assert!(skill.text.contains("What <code>load_skill</code> returns"));
    assert!(
        skill.text.contains("Call `get_weather` with a city."),
        "the load_skill text"
    );

    let hostile = server.get("/skills/xss");
    assert_eq!(hostile.status, 200);
    // The text may be shown (escaped), never as markup.
    for active in [
        "<script>window",
        "<img src=x",
        "onerror=\"window",
        "href=\"javascript:",
        "<b>bold",
    ] {
        assert!(!hostile.text.contains(active), "{active}: {}", hostile.text);
    }
    assert!(
        hostile.text.contains("&#60;b&#62;bold"),
        "the file name, escaped"
    );
    // What it declares it brings: its MCP server, the command escaped.
    assert!(
        hostile.text.contains("MCP server <code>evil</code>")
            && hostile
                .text
                .contains("python3 &#60;script&#62;window.pwned=7&#60;/script&#62;"),
        "{}",
        hostile.text
    );

    let file = server.get("/skills/weather/files/scripts/weather.py");
    assert_eq!(file.status, 200);
    assert!(file.text.contains("hl-"), "highlighted: {}", file.text);
    let raw = server.get("/skills/xss/raw/%3Cb%3Ebold%3C%3Ab%3E.md");
    assert_eq!(raw.status, 200);
    assert!(raw.header("content-security-policy").contains("sandbox"));
    assert!(raw.header("content-disposition").starts_with("attachment"));
    assert_eq!(raw.header("content-type"), "application/octet-stream");

    let broken = server.get("/skills/broken");
    assert!(
        broken.text.contains("SKILL.md:4:1"),
        "a located diagnostic: {}",
        broken.text
    );
    let missing = server.get("/skills/wether");
    assert_eq!(missing.status, 404);
    assert!(
        missing.text.contains("Did you mean `weather`?"),
        "{}",
        missing.text
    );
    // Encoded, so the client sends the `..` as written and the file handler sees it.
    let climbing = server.get("/skills/weather/files/..%2F..%2F..%2Fetc%2Fpasswd");
    assert_eq!(climbing.status, 404);
    assert!(
        climbing.text.contains("is not a file of skill"),
        "{}",
        climbing.text
    );
    assert_eq!(server.get("/nowhere").status, 404);
    assert_eq!(
        server.get("/healthz").status,
        200,
        "the server's own routes stay"
    );
}

#[test]
fn the_list_is_searched_filtered_and_paged_on_the_server() {
    let root = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for index in 0..120 {
        let kind = if index % 3 == 0 { "alpha" } else { "beta" };
        files.push((
            format!("{kind}-{index:03}/SKILL.md"),
            format!("---\nname: {kind}-{index:03}\ndescription: Skill number {index} of the {kind} set.\n---\nBody.\n"),
        ));
    }
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    write_tree(root.path(), &borrowed);
    make_world_readable(root.path());
    let data = tempfile::tempdir().unwrap();
    let server = WebServer::start(root.path(), data.path(), &[], &[]);

    let first = server.get("/skills");
    // 120 and the built-in protocol guide.
    assert!(
        first.text.contains("121 matching · page 1 of 3"),
        "{}",
        first.text
    );
    let rows = server.get("/skills?q=ALPHA+set&fragment=rows");
    assert!(rows.text.contains("40 matching"), "{}", rows.text);
    assert!(!rows.text.contains("<html"), "only the rows");
    assert!(!rows.text.contains("beta-"), "{}", rows.text);
    let last = server.get("/skills?q=beta&page=99");
    assert!(
        last.text.contains("page 2 of 2"),
        "a page past the end is the last"
    );
    let none = server.get("/skills?q=nothing-like-this");
    assert!(none.text.contains("No skill matches"));
}

#[test]
fn the_playground_calls_tools_through_the_dispatcher_with_csrf() {
    let server = WebServer::over_web_tree(&[], &[]);
    let page = server.get("/playground?tool=get_weather");
    assert_eq!(page.status, 200);
    let csrf = page.csrf();

    let tools = server.get("/api/tools").json();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    for name in [
        "load_skill",
        "use_skill",
        "get_weather",
        "execute_skill",
        "run_code",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }

    let answer = server.post(
        "/api/call",
        &csrf,
        &json!({"tool": "get_weather", "arguments": {"city": "Oslo"}}),
    );
    assert_eq!(answer.status, 200, "{}", answer.text);
    let answer = answer.json();
    assert_eq!(answer["is_error"], false, "{answer}");
    assert!(answer["content"].to_string().contains("sunny"), "{answer}");
    assert_eq!(
        answer["sandbox"], "none",
        "the level `--sandbox off` runs at"
    );
    assert!(answer["duration_ms"].is_u64());

    let script = server
        .post(
            "/api/call",
            &csrf,
            &json!({"tool": "use_skill", "arguments": {"skill": "greet", "script": "scripts/greet.py", "args": ["Ada"]}}),
        )
        .json();
    assert!(
        script["content"].to_string().contains("Hello, Ada!"),
        "{script}"
    );

    let refused = server.post("/api/call", "wrong", &json!({"tool": "get_weather"}));
    assert_eq!(refused.status, 403);
    assert!(refused.text.contains("CSRF"), "{}", refused.text);
    let as_form = server.send(
        server
            .client
            .post(format!("{}/api/call", server.base))
            .header("content-type", "text/plain")
            .header("x-skillbox-csrf", &csrf)
            .body(r#"{"tool":"get_weather"}"#),
    );
    assert_eq!(as_form.status, 403, "{}", as_form.text);
    let unknown = server.post("/api/call", &csrf, &json!({"tool": "rm_rf"}));
    assert_eq!(unknown.status, 404);
    // The door policy's message names the tool and lists those there are.
    assert!(
        unknown.text.contains("`rm_rf`") && unknown.text.contains("get_weather"),
        "{}",
        unknown.text
    );
    let foreign = server.send(
        server
            .client
            .post(format!("{}/api/call", server.base))
            .header("content-type", "application/json")
            .header("x-skillbox-csrf", &csrf)
            .header("origin", "https://evil.example")
            .body(r#"{"tool":"get_weather","arguments":{"city":"x"}}"#),
    );
    assert_eq!(
        foreign.status, 403,
        "a foreign page is refused by the server's check"
    );
}

#[test]
fn with_a_token_the_pages_ask_for_it_once() {
    let mut server = WebServer::over_web_tree(&["--token", "s3cret-token"], &[]);
    let redirected = server.get("/skills/weather?version=");
    assert_eq!(redirected.status, 303);
    assert_eq!(
        redirected.header("location"),
        "/login?next=/skills/weather%3Fversion%3D"
    );
    assert_eq!(server.get("/api/tools").status, 401);
    assert_eq!(
        server.get("/assets/app.js").status,
        200,
        "assets are public"
    );
    let login = server.get("/login?next=/skills");
    assert!(login.text.contains("type=\"password\""));

    let wrong = server.post_form("/login", &[("token", "guess"), ("next", "/skills")]);
    assert_eq!(wrong.status, 401);
    assert!(wrong.header("set-cookie").is_empty());
    let right = server.post_form(
        "/login",
        &[("token", "s3cret-token"), ("next", "//evil.example/")],
    );
    assert_eq!(right.status, 303);
    assert_eq!(right.header("location"), "/", "never to another host");
    let cookie = right.header("set-cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(
        !cookie.contains("s3cret-token"),
        "the token itself is never a cookie"
    );
    server.cookie = Some(cookie.split(';').next().unwrap().to_owned());
    let page = server.get("/skills");
    assert_eq!(page.status, 200);
    assert!(page.text.contains("Sign out"));
    let bearer = server.send(
        server
            .client
            .get(format!("{}/api/tools", server.base))
            .header("authorization", "Bearer s3cret-token"),
    );
    assert_eq!(bearer.status, 200, "scripts may use the bearer token");

    let out = server.post("/logout", &page.csrf(), &json!({}));
    assert_eq!(out.status, 200);
    assert_eq!(server.get("/skills").status, 303, "the session is gone");
}

/// A streamed Chat Completions tool call.
fn calls(name: &str, arguments: &str) -> Reply {
    let call = json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":name,"arguments":arguments}}]}}]});
    Reply::data_events(&[&call.to_string(), &finish("tool_calls")])
}

fn says(text: &str) -> Reply {
    let chunk = json!({"choices":[{"index":0,"delta":{"role":"assistant","content":text}}]});
    Reply::data_events(&[&chunk.to_string(), &finish("stop")])
}

fn finish(reason: &str) -> String {
    json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}],"usage":{"prompt_tokens":10,"completion_tokens":5}}).to_string()
}

#[test]
fn a_chat_turn_streams_its_events_and_survives_a_restart() {
    let tree = web_tree();
    let data = tempfile::tempdir().unwrap();
    let model = ScriptedModelServer::start(vec![
        calls("get_weather", r#"{"city":"Oslo"}"#),
        says("It is sunny in Oslo."),
    ]);
    let flags = ["--base-url", model.base_url.as_str(), "--model", "scripted"];
    let conversation = {
        let server = WebServer::start(tree.path(), data.path(), &flags, &[]);
        let page = server.get("/chat");
        assert!(page.text.contains("scripted · chat at"), "{}", page.text);
        let csrf = page.csrf();
        let made = server.post("/api/chat", &csrf, &json!({}));
        assert_eq!(made.status, 200, "{}", made.text);
        let id = made.json()["id"].as_str().unwrap().to_owned();
        let started = server.post(
            &format!("/api/chat/{id}/turns"),
            &csrf,
            &json!({"text": "Weather in Oslo?"}),
        );
        assert_eq!(started.status, 200, "{}", started.text);
        let events = server.events_until(&id, "idle");
        let kinds: Vec<&str> = events
            .iter()
            .map(|event| event["type"].as_str().unwrap())
            .collect();
        for kind in [
            "user",
            "turn_started",
            "tool_call_started",
            "tool_call_finished",
            "text_delta",
            "final",
            "idle",
        ] {
            assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
        }
        let finished = events
            .iter()
            .find(|event| event["type"] == "tool_call_finished")
            .unwrap();
        assert!(finished["result"].as_str().unwrap().contains("sunny"));
        assert!(finished["duration_ms"].is_u64());
        let busy = server.post(
            &format!("/api/chat/{id}/turns"),
            &csrf,
            &json!({"text": ""}),
        );
        assert_eq!(busy.status, 400, "an empty message is refused");
        id
    };
    // A new server reads the conversation back from its transcript.
    let server = WebServer::start(tree.path(), data.path(), &flags, &[]);
    assert_eq!(server.get(&format!("/chat/{conversation}")).status, 200);
    let replayed = server.events_until(&conversation, "text_delta");
    assert_eq!(replayed[0]["type"], "user");
    assert_eq!(replayed[0]["text"], "Weather in Oslo?");
    assert!(
        replayed
            .iter()
            .any(|event| event["type"] == "tool_call_finished")
    );
    assert_eq!(server.get("/chat/0123").status, 404);
}

#[test]
fn chat_without_a_model_says_how_to_set_one_up() {
    let server = WebServer::over_web_tree(
        &[],
        &[
            ("OPENROUTER_API_KEY", ""),
            ("OPENAI_API_KEY", ""),
            ("ANTHROPIC_API_KEY", ""),
        ],
    );
    let page = server.get("/chat");
    assert_eq!(page.status, 200);
    assert!(page.text.contains("Chat has no model"), "{}", page.text);
    let made = server.post("/api/chat", &page.csrf(), &json!({}));
    assert_eq!(made.status, 400);
    assert!(made.text.contains("--base-url"), "{}", made.text);
}

#[test]
fn runs_list_run_objects_and_their_blobs_download() {
    let tree = tempfile::tempdir().unwrap();
    write_tree(
        tree.path(),
        &[(
            "report/SKILL.md",
            "---\nname: report\ndescription: Writes a report.\n---\nBody.\n",
        )],
    );
    make_world_readable(tree.path());
    let data = tempfile::tempdir().unwrap();
    let audit = data.path().join("audit.jsonl");
    let server = WebServer::start(
        tree.path(),
        data.path(),
        &["--audit-log", audit.to_str().unwrap()],
        &[],
    );
    let csrf = server.get("/runs").csrf();
    let run = server.post(
        "/api/call",
        &csrf,
        &json!({"tool": "run_code", "arguments": {"language": "python", "code": "def main(args):\n    open('out/result.txt', 'w').write('forty-two')\n    return 'done'\n"}}),
    );
    assert_eq!(run.status, 200, "{}", run.text);
    let runs = server.get("/runs");
    assert!(runs.text.contains("run_code"), "{}", runs.text);
    assert!(runs.text.contains("completed"), "{}", runs.text);
    let start = runs
        .text
        .find("href=\"/blobs/")
        .expect("an output blob link")
        + 6;
    let link = &runs.text[start..][..runs.text[start..].find('"').unwrap()];
    let blob = server.get(link);
    assert_eq!(blob.status, 200);
    assert_eq!(blob.text, "forty-two");
    assert!(blob.header("content-disposition").starts_with("attachment"));
    assert!(runs.text.contains("Audit log"));
    assert_eq!(server.get("/blobs/blob:nope").status, 404);
}
