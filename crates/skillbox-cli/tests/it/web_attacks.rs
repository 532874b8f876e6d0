//! The web app of `skillbox serve` against a hostile skill author and a hostile client, through
//! the real binary over raw HTTP (so paths, headers and bodies arrive exactly as an attacker
//! writes them): markup in every field a page shows, markdown built to run or to point at our
//! own endpoints, files that escape their skill or never end, forged requests, sessions, and
//! requests built to exhaust memory, streams or disk.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::serve::start_server_command;
use super::support::{
    HttpAnswer as Answer, memory_kib, parse_http_answer as parse_answer, repo_root, request_head,
    write_tree,
};

/// Markup that runs if a page puts it in the document as HTML.
const XSS: &str = "<img src=x onerror=alert(1)>";
/// Text that leaves an attribute value and opens an element, if unescaped.
const ATTRIBUTE_BREAK: &str = "\"'><svg onload=alert(2)>";
/// What a page holds when skill text got in as markup.
const ACTIVE_MARKS: [&str; 4] = [
    "<img src=x onerror",
    "<svg onload",
    "\"'><svg",
    "<script>alert",
];

/// A `skillbox serve` process with the web app, stopped when dropped.
struct Web {
    child: Child,
    /// `127.0.0.1:PORT`.
    address: String,
    data: tempfile::TempDir,
}

impl Drop for Web {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Web {
    /// `skillbox serve ROOTS --sandbox off EXTRA` on port 0, with no model, token or config from
    /// the environment.
    fn start(roots: &[&Path], extra: &[&str]) -> Self {
        let data = tempfile::tempdir().unwrap();
        let mut command = Command::new(assert_cmd::cargo::cargo_bin("skillbox"));
        command
            .current_dir(repo_root())
            .arg("serve")
            .args(roots)
            .args(["--listen", "127.0.0.1:0", "--sandbox", "off", "--data-dir"])
            .arg(data.path())
            .args(extra)
            .env("SKILLBOX_CONFIG", "/dev/null");
        for variable in [
            "SKILLBOX_TOKEN",
            "SKILLBOX_ROOTS",
            "SKILLBOX_ALLOWED_HOSTS",
            "SKILLBOX_PROVIDER",
            "SKILLBOX_MODEL",
            "SKILLBOX_BASE_URL",
            "OPENROUTER_API_KEY",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "SKILLBOX_API_KEY",
        ] {
            command.env_remove(variable);
        }
        let (child, url) = start_server_command(command);
        let address = url
            .trim_start_matches("http://")
            .trim_end_matches("/rpc")
            .to_owned();
        Web {
            child,
            address,
            data,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(&self.address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        stream
    }

    /// The request head for `method target` with these headers (a `Host` of the server's
    /// address unless one is given) and `Connection: close`.
    fn head(&self, method: &str, target: &str, headers: &[(&str, &str)], body: usize) -> String {
        request_head(&self.address, method, target, headers, body)
    }

    /// Send `method target` with `headers` and `body`, and read the whole answer.
    fn send(&self, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
        let mut stream = self.connect();
        let head = self.head(method, target, headers, body.len());
        stream.write_all(head.as_bytes()).unwrap();
        // A server that answers before reading all of a large body may close early.
        let _ = stream.write_all(body);
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes);
        parse_answer(&bytes).unwrap_or_else(|| {
            panic!(
                "{method} {}: no HTTP answer (the connection closed after {} bytes)",
                shorten(target),
                bytes.len()
            )
        })
    }

    /// Like [`Web::send`], `None` when the connection ends without an answer.
    fn try_send(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Option<Answer> {
        let mut stream = self.connect();
        stream
            .write_all(self.head(method, target, headers, body.len()).as_bytes())
            .ok()?;
        let _ = stream.write_all(body);
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes);
        parse_answer(&bytes)
    }

    fn get(&self, target: &str) -> Answer {
        self.send("GET", target, &[], b"")
    }

    /// [`Web::send`] again after each 429 once its `Retry-After` has passed (a few times at
    /// most): the right token, sent from an address that presented wrong ones just before.
    fn send_after_waiting(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Answer {
        for _ in 0..5 {
            let answer = self.send(method, target, headers, body);
            if answer.status != 429 {
                return answer;
            }
            let seconds: u64 = answer
                .header("retry-after")
                .and_then(|seconds| seconds.parse().ok())
                .expect("a 429 says when to retry");
            assert!((1..=2).contains(&seconds), "Retry-After: {seconds}");
            std::thread::sleep(Duration::from_secs(seconds));
        }
        panic!("{method} {target}: still 429 after waiting five times");
    }

    fn get_with(&self, target: &str, headers: &[(&str, &str)]) -> Answer {
        self.send("GET", target, headers, b"")
    }

    /// POST JSON as the page's script does: the content type and this CSRF token.
    fn post_json(&self, target: &str, csrf: &str, body: &Value, extra: &[(&str, &str)]) -> Answer {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("X-Skillbox-Csrf", csrf),
        ];
        headers.extend_from_slice(extra);
        self.send("POST", target, &headers, body.to_string().as_bytes())
    }

    /// Open an event stream: the status, the head and the stream to read events from.
    fn open_stream(&self, target: &str, headers: &[(&str, &str)]) -> (u16, String, TcpStream) {
        let mut stream = self.connect();
        let mut head = format!("GET {target} HTTP/1.1\r\nHost: {}\r\n", self.address);
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("Accept: text/event-stream\r\n\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        let mut received = Vec::new();
        let mut byte = [0_u8; 1];
        while !received.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte) {
                Ok(1) => received.push(byte[0]),
                _ => break,
            }
        }
        let head = String::from_utf8_lossy(&received).into_owned();
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|status| status.parse().ok())
            .unwrap_or(0);
        (status, head, stream)
    }
}

fn shorten(text: &str) -> String {
    if text.len() > 80 {
        format!("{}… ({} bytes)", &text[..80], text.len())
    } else {
        text.to_owned()
    }
}

/// `text` percent-encoded for a URL path segment or query value.
fn encoded(text: &str) -> String {
    text.bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
                char::from(byte).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect()
}

/// Fail when `page` holds skill text as markup.
fn assert_inert(page: &Answer, what: &str) {
    let text = page.text();
    for mark in ACTIVE_MARKS {
        assert!(
            !text.contains(mark),
            "{what}: `{mark}` reached the page as markup:\n{text}"
        );
    }
}

/// Skills whose every field a page shows carries markup: descriptions, titles, frontmatter keys
/// and values, metadata, argument hints, tools, file names and contents, and a folder that
/// cannot be loaded whose name is markup.
fn hostile_fields_tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let description = format!("Marked {XSS} {ATTRIBUTE_BREAK}");
    let skill_md = format!(
        "---\nname: evil-fields\ndescription: '{}'\nargument-hint: '{XSS}'\nmodel: '{}'\nallowed-tools: '{XSS} Bash'\nmetadata:\n  '{XSS}': '{}'\n'{XSS}': '{}'\n---\n# Body\n\nPlain text.\n",
        description.replace('\'', "''"),
        ATTRIBUTE_BREAK.replace('\'', "''"),
        ATTRIBUTE_BREAK.replace('\'', "''"),
        ATTRIBUTE_BREAK.replace('\'', "''"),
    );
    let tools = json!([{
        "name": "evil_tool",
        "description": format!("Tool {XSS} {ATTRIBUTE_BREAK}"),
        "script": "scripts/tool.py",
        "parameters": {
            "text": {"type": "string", "description": XSS, "pattern": ATTRIBUTE_BREAK, "default": XSS},
            "choice": {"type": "string", "enum": [XSS, ATTRIBUTE_BREAK]}
        }
    }]);
    let big_text = format!("{XSS}\n").repeat(300 * 1024 / XSS.len());
    write_tree(
        root.path(),
        &[
            ("evil-fields/SKILL.md", &skill_md),
            ("evil-fields/tools.json", &tools.to_string()),
            ("evil-fields/scripts/tool.py", "print('{}')\n"),
            (
                "evil-fields/scripts/evil.py",
                &format!("# </code></pre>{XSS}\nprint('{ATTRIBUTE_BREAK}')\n"),
            ),
            ("evil-fields/notes.txt", &format!("</pre>{XSS}\n")),
            ("evil-fields/big.txt", &big_text),
            (&format!("evil-fields/references/{XSS}.md"), "# hi\n"),
            (
                &format!("evil-fields/{}.txt", ATTRIBUTE_BREAK.replace('/', "_")),
                "x\n",
            ),
            (
                "titled/skill.toml",
                &format!(
                    "name = \"titled\"\nversion = \"1.0.0\"\ndescription = \"{}\"\nkind = \"instruction\"\n",
                    description.replace('"', "\\\"")
                ),
            ),
            (
                "titled/SKILL.md",
                &format!("---\nname: '{}'\ndescription: d\n---\nBody.\n", XSS),
            ),
            (
                &format!("{XSS}/SKILL.md"),
                &format!("---\nname: [{XSS}\ndescription: {ATTRIBUTE_BREAK}\n"),
            ),
        ],
    );
    root
}

#[test]
fn skill_text_reaches_every_page_as_text_never_as_markup() {
    let tree = hostile_fields_tree();
    let web = Web::start(&[tree.path()], &[]);
    let list = web.get("/skills");
    assert_eq!(list.status, 200, "{}", list.text());
    assert!(list.text().contains("evil-fields"), "{}", list.text());
    assert!(
        list.text().contains("&#60;img src=x onerror=alert(1)&#62;"),
        "the description is shown, escaped: {}",
        list.text()
    );
    // The folder that could not be loaded is listed by its (markup) name, escaped.
    assert!(
        list.text().contains("Folders that could not be loaded"),
        "{}",
        list.text()
    );
    let skill = web.get("/skills/evil-fields");
    assert_eq!(skill.status, 200, "{}", skill.text());
    for shown in ["evil_tool", "Tool &#60;img", "big.txt"] {
        assert!(skill.text().contains(shown), "{shown}: {}", skill.text());
    }
    let mut pages = vec![
        ("the list".to_owned(), list),
        ("the skill page".to_owned(), skill),
        ("the titled skill".to_owned(), web.get("/skills/titled")),
    ];
    let reflected = encoded(&format!("{XSS}{ATTRIBUTE_BREAK}"));
    for target in [
        "/".to_owned(),
        "/skills?q=Marked".to_owned(),
        "/skills?q=Marked&fragment=rows".to_owned(),
        format!("/skills?q={reflected}"),
        format!("/skills?q={reflected}&fragment=rows"),
        format!("/skills?namespace={reflected}&kind={reflected}&errors={reflected}"),
        format!("/skills/{reflected}"),
        format!("/skills/evil-fields?version={reflected}"),
        format!("/skills/evil-fields/files/{reflected}"),
        format!("/playground?tool={reflected}&skill={reflected}"),
        "/chat".to_owned(),
        format!("/chat/{reflected}"),
        "/runs".to_owned(),
        format!("/nothing/{reflected}"),
        format!("/login?next={reflected}"),
    ] {
        let page = web.get(&target);
        pages.push((target, page));
    }
    for file in [
        "scripts/evil.py".to_owned(),
        "notes.txt".to_owned(),
        "big.txt".to_owned(),
        format!("references/{XSS}.md"),
        format!("{}.txt", ATTRIBUTE_BREAK.replace('/', "_")),
    ] {
        let target = format!(
            "/skills/evil-fields/files/{}",
            file.split('/').map(encoded).collect::<Vec<_>>().join("/")
        );
        let page = web.get(&target);
        assert_eq!(page.status, 200, "{file}: {}", page.text());
        pages.push((file, page));
    }
    for (what, page) in &pages {
        assert_inert(page, what);
        if page.status != 302 && page.status != 303 {
            let policy = page.header("content-security-policy").unwrap_or_default();
            assert!(
                policy.contains("default-src 'none'") && policy.contains("script-src 'self'"),
                "{what}: {policy}"
            );
        }
    }
    // The tools' schemas reach the playground as JSON, which its script shows as text.
    let tools = web.get("/api/tools");
    assert!(
        tools
            .header("content-type")
            .is_some_and(|value| value.starts_with("application/json")),
        "{:?}",
        tools.headers
    );
    let listed = tools.json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "evil_tool")
        .cloned()
        .unwrap();
    assert_eq!(
        listed["parameters"]["properties"]["text"]["description"],
        XSS
    );
}

/// The part of a skill page that holds the rendered SKILL.md body.
fn rendered_body(page: &Answer) -> String {
    let text = page.text();
    let start = text
        .find("id=\"skill-body\">")
        .expect("the skill page has a body");
    let rest = &text[start..];
    rest[..rest.find("</article>").unwrap()].to_owned()
}

/// Every `href` and `src` value in `html`.
fn link_targets(html: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for attribute in ["href=\"", "src=\""] {
        let mut rest = html;
        while let Some(start) = rest.find(attribute) {
            rest = &rest[start + attribute.len()..];
            let end = rest.find('"').unwrap();
            targets.push(rest[..end].replace("&amp;", "&"));
            rest = &rest[end..];
        }
    }
    targets
}

#[test]
fn markdown_keeps_nothing_active_and_its_links_stay_inside_the_skill() {
    let root = tempfile::tempdir().unwrap();
    let body = r#"# Title

<script>alert(1)</script>

<img src=x onerror=alert(1)>

<svg onload=alert(2)><circle r="1"/></svg>

<math><mtext><table><mglyph><style><img src=x onerror=alert(3)></style></mglyph></table></mtext></math>

<style>body { display: none }</style>

<form action="/api/call" method="post"><input name="tool" value="use_skill"><button>go</button></form>

<iframe src="/playground"></iframe><object data="/api/tools"></object><embed src="/api/tools">

<base href="https://evil.example/"><meta http-equiv="refresh" content="0;url=https://evil.example/"><link rel="stylesheet" href="https://evil.example/x.css">

<a href="javascript:alert(4)">a</a> [b](javascript:alert(5)) [c](JaVaScRiPt:alert(6)) <a href="java&#x09;script:alert(7)">d</a> <a href="&#106;avascript:alert(7)">e</a>

[f](data:text/html,hello) ![g](data:image/svg+xml,hello) <a href="vbscript:x">h</a>

<a href="references/api.md" onclick="alert(10)" style="position:fixed" id="sign-out" name="csrf" class="x">attributes</a>

<details open ontoggle=alert(11)><summary>s</summary>d</details>

[up](../../../../api/catalog/events) ![up](../../../../api/catalog/events) [up2](references/../../../../../playground)

[encoded](..%2f..%2f..%2f..%2fapi%2fcatalog%2fevents) [dots](%2e%2e/%2e%2e/%2e%2e/%2e%2e/api/catalog/events) [root](/api/call) [scheme](//evil.example/x) [slash](/\evil.example) [back](\\evil.example)

<a href="  ../../../../api/catalog/events">spaced</a> <img src="..//..//..//../api/catalog/events">

[ok](references/api.md) [inside](references/../SKILL.md) [space](my%20file.md) [anchor](#title) [web](https://example.com/)
"#;
    write_tree(
        root.path(),
        &[
            (
                "evil-md/SKILL.md",
                &format!("---\nname: evil-md\ndescription: Hostile markdown.\n---\n{body}"),
            ),
            ("evil-md/references/api.md", "# API\n"),
            ("evil-md/my file.md", "spaces\n"),
        ],
    );
    let web = Web::start(&[root.path()], &[]);
    let page = web.get("/skills/evil-md");
    assert_eq!(page.status, 200, "{}", page.text());
    let html = rendered_body(&page);
    assert!(html.contains("<h1>Title</h1>"), "{html}");
    for active in [
        "<script",
        "<svg",
        "<math",
        "<style",
        "<form",
        "<input",
        "<button",
        "<iframe",
        "<object",
        "<embed",
        "<base",
        "<meta",
        "<link",
        " on",
        " style=",
        " id=",
        " name=",
        " class=",
        "javascript",
        "vbscript",
        "data:",
    ] {
        assert!(
            !html.to_ascii_lowercase().contains(active),
            "`{active}` survived the sanitiser:\n{html}"
        );
    }
    let targets = link_targets(&html);
    assert!(targets.len() >= 6, "{targets:?}");
    for target in &targets {
        let inside = ["/skills/evil-md/files/", "/skills/evil-md/raw/"]
            .iter()
            .any(|prefix| target.starts_with(prefix));
        let allowed = inside || target == "#title" || target == "https://example.com/";
        assert!(
            allowed,
            "a link leaves the skill's files: `{target}` in\n{html}"
        );
        let decoded = target.replace("%2E", ".").replace("%2e", ".");
        assert!(
            !decoded.split(['/', '\\']).any(|segment| segment == ".."),
            "a link climbs out of the skill: `{target}` in\n{html}"
        );
    }
    for (shown, target) in [
        ("ok", "/skills/evil-md/files/references/api.md"),
        ("inside", "/skills/evil-md/files/SKILL.md"),
        ("space", "/skills/evil-md/files/my%20file.md"),
    ] {
        assert!(
            html.contains(&format!("href=\"{target}\"")),
            "[{shown}] should link to {target}:\n{html}"
        );
        assert_eq!(web.get(target).status, 200, "{target}");
    }
}

#[test]
fn raw_files_run_nothing_and_their_names_cannot_inject_headers() {
    let root = tempfile::tempdir().unwrap();
    let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"><script>alert(2)</script></svg>";
    let html = "<!doctype html><script>fetch('/api/call',{method:'POST'})</script>";
    let names = [
        "evil.svg",
        "evil.html",
        "evil.htm",
        "image.png",
        "a\r\nSet-Cookie: pwn=1\r\nX-Injected: 1.txt",
        "quote\".txt",
        "semi;colon=1.txt",
        "accent-é.txt",
    ];
    let mut files = vec![(
        "evil-raw/SKILL.md".to_owned(),
        "---\nname: evil-raw\ndescription: Hostile raw files.\n---\nBody.\n".to_owned(),
    )];
    for name in names {
        let content = match name {
            "evil.svg" => svg,
            "image.png" => html,
            _ => html,
        };
        files.push((format!("evil-raw/{name}"), content.to_owned()));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    write_tree(root.path(), &files);
    let web = Web::start(&[root.path()], &[]);
    for name in names {
        let target = format!("/skills/evil-raw/raw/{}", encoded(name));
        let answer = web.get(&target);
        assert_eq!(answer.status, 200, "{name:?}: {}", answer.text());
        let policy = answer.header("content-security-policy").unwrap_or_default();
        assert!(
            policy.contains("sandbox") && policy.contains("default-src 'none'"),
            "{name:?}: {policy}"
        );
        assert!(!policy.contains("script-src"), "{name:?}: {policy}");
        assert_eq!(answer.header("x-content-type-options"), Some("nosniff"));
        assert!(
            answer.header("set-cookie").is_none(),
            "{name:?}: {:?}",
            answer.headers
        );
        assert!(
            answer.header("x-injected").is_none(),
            "{name:?}: {:?}",
            answer.headers
        );
        let dispositions = answer.headers_named("content-disposition");
        let content_type = answer.header("content-type").unwrap_or_default();
        if name.ends_with(".svg") || name.ends_with(".png") {
            assert!(
                content_type.starts_with("image/"),
                "{name:?}: {content_type}"
            );
        } else {
            assert_eq!(content_type, "application/octet-stream", "{name:?}");
            assert_eq!(dispositions.len(), 1, "{name:?}: {:?}", answer.headers);
            let disposition = dispositions[0];
            assert!(
                disposition.starts_with("attachment"),
                "{name:?}: {disposition}"
            );
            // One quoted file name, nothing after it.
            let quoted = disposition.trim_start_matches("attachment; filename=\"");
            assert_eq!(
                quoted.find('"'),
                Some(quoted.len() - 1),
                "{name:?}: {disposition}"
            );
        }
        let expected = if name == "evil.svg" { svg } else { html };
        assert_eq!(answer.text(), expected, "{name:?}");
    }
    // The viewer shows an SVG through <img> (where its scripts never run), never inline.
    let viewer = web.get("/skills/evil-raw/files/evil.svg");
    assert!(
        viewer
            .text()
            .contains("<img src=\"/skills/evil-raw/raw/evil.svg\""),
        "{}",
        viewer.text()
    );
    assert_inert(&viewer, "the SVG's viewer");
    assert!(
        !viewer.text().contains("<script>alert(2)"),
        "{}",
        viewer.text()
    );
}

/// A skill with every way out of its folder: links to files and folders outside, a FIFO, device
/// files, and a file inside reached through a link (which stays served).
fn escape_tree() -> (tempfile::TempDir, std::path::PathBuf) {
    use std::os::unix::fs::symlink;
    let top = tempfile::tempdir().unwrap();
    let outside = top.path().join("outside");
    write_tree(
        top.path(),
        &[
            ("outside/secret.txt", "OUTSIDE-SECRET\n"),
            ("outside/ok.txt", "OUTSIDE-SECRET\n"),
            ("secret-outside.txt", "OUTSIDE-SECRET\n"),
            (
                "skills/paths/SKILL.md",
                "---\nname: paths\ndescription: Paths that leave.\n---\nBody.\n",
            ),
            ("skills/paths/ok.txt", "inside\n"),
            ("skills/paths/sub/ok.txt", "inside too\n"),
            ("skills/paths/swap.txt", "inside\n"),
        ],
    );
    let skill = top.path().join("skills/paths");
    symlink(
        top.path().join("secret-outside.txt"),
        skill.join("link-out.txt"),
    )
    .unwrap();
    symlink("../../secret-outside.txt", skill.join("relative-out.txt")).unwrap();
    symlink("/etc/passwd", skill.join("passwd")).unwrap();
    symlink("/etc", skill.join("linked-etc")).unwrap();
    symlink(&outside, skill.join("linked-outside")).unwrap();
    symlink("/dev/zero", skill.join("zero.txt")).unwrap();
    symlink("/dev/urandom", skill.join("urandom.png")).unwrap();
    symlink("ok.txt", skill.join("inner-link.txt")).unwrap();
    skillbox_testkit::make_fifo(&skill.join("pipe.txt"));
    (top, skill)
}

#[test]
fn file_paths_never_leave_the_skill() {
    let (top, skill) = escape_tree();
    let web = Web::start(&[&top.path().join("skills")], &["--no-watch"]);
    let page = web.get("/skills/paths");
    assert_eq!(page.status, 200, "{}", page.text());
    let listed = page.text();
    for unlisted in [
        "link-out",
        "relative-out",
        "passwd",
        "linked-etc",
        "linked-outside",
        "zero.txt",
        "urandom",
        "pipe.txt",
    ] {
        assert!(
            !listed.contains(unlisted),
            "{unlisted} is listed:\n{listed}"
        );
    }
    assert!(listed.contains("inner-link.txt"), "{listed}");
    let long = "a/".repeat(4000) + "ok.txt";
    let attempts = [
        "..%2f..%2fsecret-outside.txt",
        "../../secret-outside.txt",
        "%2e%2e/%2e%2e/secret-outside.txt",
        "%2E%2E%2F%2E%2E%2Fsecret-outside.txt",
        "..%5c..%5csecret-outside.txt",
        "%252e%252e%252fsecret-outside.txt",
        "%c0%ae%c0%ae/%c0%ae%c0%ae/secret-outside.txt",
        "/etc/passwd",
        "%2fetc%2fpasswd",
        "ok.txt%00.png",
        "ok.txt/..",
        "sub/../../../secret-outside.txt",
        "link-out.txt",
        "relative-out.txt",
        "passwd",
        "linked-etc/passwd",
        "linked-outside/secret.txt",
        "zero.txt",
        "urandom.png",
        "pipe.txt",
        &long,
    ];
    for attempt in attempts {
        for view in ["files", "raw"] {
            let target = format!("/skills/paths/{view}/{attempt}");
            let started = Instant::now();
            let answer = web.get(&target);
            let text = answer.text();
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "{view} {}: took {:?}",
                shorten(attempt),
                started.elapsed()
            );
            assert!(
                !text.contains("OUTSIDE-SECRET") && !text.contains("root:x:0:0"),
                "{view} {} served a file outside the skill:\n{text}",
                shorten(attempt)
            );
            assert!(
                matches!(answer.status, 400 | 404 | 414 | 431),
                "{view} {}: {} {text}",
                shorten(attempt),
                answer.status
            );
        }
    }
    // The playground's door to the same files: the dispatcher's `read_skill_file`.
    let csrf = web.get("/playground").csrf();
    for path in attempts {
        let call = json!({"tool": "read_skill_file", "arguments": {"name": "paths", "path": path}});
        let started = Instant::now();
        let answer = web.post_json("/api/call", &csrf, &call, &[]);
        let path = shorten(path);
        assert!(started.elapsed() < Duration::from_secs(15), "{path} blocks");
        assert_eq!(answer.status, 200, "{path}: {}", answer.text());
        assert_eq!(answer.json()["is_error"], true, "{path}: {}", answer.text());
        assert!(
            !answer.text().contains("OUTSIDE-SECRET") && !answer.text().contains("root:x:0:0"),
            "{path}: {}",
            answer.text()
        );
    }
    let inner = web.get("/skills/paths/raw/inner-link.txt");
    assert_eq!((inner.status, inner.text().as_str()), (200, "inside\n"));

    // Files swapped after the listing was made: a listed name now a link out, a FIFO, a
    // folder on the way now a link out, and the whole skill folder now another folder.
    use std::os::unix::fs::symlink;
    fs_err::remove_file(skill.join("swap.txt")).unwrap();
    symlink(
        top.path().join("secret-outside.txt"),
        skill.join("swap.txt"),
    )
    .unwrap();
    let swapped = |web: &Web, path: &str| {
        for view in ["files", "raw"] {
            let started = Instant::now();
            let answer = web.get(&format!("/skills/paths/{view}/{path}"));
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "{view} {path} blocks"
            );
            assert!(
                !answer.text().contains("OUTSIDE-SECRET"),
                "{view} {path} after the swap: {}",
                answer.text()
            );
            assert_ne!(answer.status, 200, "{view} {path}: {}", answer.text());
        }
    };
    swapped(&web, "swap.txt");
    fs_err::remove_file(skill.join("swap.txt")).unwrap();
    skillbox_testkit::make_fifo(&skill.join("swap.txt"));
    swapped(&web, "swap.txt");
    fs_err::rename(skill.join("sub"), skill.join("sub-old")).unwrap();
    symlink(top.path().join("outside"), skill.join("sub")).unwrap();
    swapped(&web, "sub/ok.txt");
    fs_err::rename(&skill, top.path().join("paths-old")).unwrap();
    symlink(top.path().join("outside"), &skill).unwrap();
    swapped(&web, "ok.txt");
}

#[test]
fn huge_files_and_a_skill_of_100k_files_cost_a_page_not_their_size() {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[
            (
                "huge/SKILL.md",
                "---\nname: huge\ndescription: Huge files.\n---\nBody.\n",
            ),
            (
                "many/SKILL.md",
                "---\nname: many\ndescription: Many files.\n---\nBody.\n",
            ),
        ],
    );
    // 2 GiB of text that takes no disk (sparse: the rest reads as zeros).
    let huge = fs_err::File::create(root.path().join("huge/huge.log")).unwrap();
    huge.set_len(2 * 1024 * 1024 * 1024).unwrap();
    fs_err::write(
        root.path().join("huge/three-mib.txt"),
        "line of text\n".repeat(3 * 1024 * 1024 / 13),
    )
    .unwrap();
    let many = root.path().join("many/files");
    fs_err::create_dir(&many).unwrap();
    for index in 0..100_000 {
        fs_err::File::create(many.join(format!("{index:06}.txt"))).unwrap();
    }
    let web = Web::start(&[root.path()], &["--no-watch"]);
    let (_, rss_before) = memory_kib(web.pid());
    let timed = |target: &str| {
        let started = Instant::now();
        let answer = web.get(target);
        let elapsed = started.elapsed();
        eprintln!(
            "{target}: {} in {elapsed:?}, {} bytes",
            answer.status,
            answer.body.len()
        );
        assert!(
            elapsed < Duration::from_secs(20),
            "{target} took {elapsed:?}"
        );
        answer
    };
    let viewer = timed("/skills/huge/files/huge.log");
    assert_eq!(viewer.status, 200, "{}", viewer.text());
    assert!(viewer.text().contains("binary file"), "{}", viewer.text());
    let raw = timed("/skills/huge/raw/huge.log");
    assert_eq!(raw.status, 400, "{}", raw.text());
    assert!(raw.text().contains("larger than"), "{}", raw.text());
    let text = timed("/skills/huge/files/three-mib.txt");
    assert_eq!(text.status, 200);
    assert!(
        text.text().contains("Only the beginning"),
        "{}",
        text.text()
    );
    let listing = timed("/skills/many");
    assert_eq!(listing.status, 200);
    assert!(
        listing.text().contains("per-skill limit of files"),
        "the listing says it was cut"
    );
    let (_, rss_after) = memory_kib(web.pid());
    eprintln!("server memory: {rss_before} KiB before, {rss_after} KiB after");
}

#[test]
fn viewing_a_skill_never_runs_its_commands() {
    let root = tempfile::tempdir().unwrap();
    let marker = root.path().join("ran");
    write_tree(
        root.path(),
        &[(
            "commands/SKILL.md",
            &format!(
                "---\nname: commands\ndescription: Runs a command on load.\nargument-hint: '[x]'\n---\nToday: !`touch {}`\n",
                marker.display()
            ),
        )],
    );
    let web = Web::start(&[root.path()], &["--preprocess-commands"]);
    for target in [
        "/skills/commands",
        "/skills/commands/files/SKILL.md",
        "/skills?q=commands",
        "/chat",
        "/playground?skill=commands",
    ] {
        let page = web.get(target);
        assert_eq!(page.status, 200, "{target}: {}", page.text());
    }
    let page = web.get("/skills/commands");
    assert!(page.text().contains("shown here unrun"), "{}", page.text());
    assert!(page.text().contains("touch"), "{}", page.text());
    std::thread::sleep(Duration::from_millis(500));
    assert!(!marker.exists(), "a page view ran the skill's command");
}

/// A tree of one plain skill.
fn plain_tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[(
            "plain/SKILL.md",
            "---\nname: plain\ndescription: A plain skill.\n---\nBody.\n",
        )],
    );
    root
}

#[test]
fn requests_another_site_could_forge_are_refused() {
    let root = plain_tree();
    let web = Web::start(&[root.path()], &[]);
    let port = web.address.rsplit(':').next().unwrap().to_owned();
    let csrf = web.get("/playground").csrf();
    assert_eq!(csrf.len(), 64, "{csrf}");
    let call = json!({"tool": "load_skill", "arguments": {"skill": "plain"}});
    let body = call.to_string();
    let own_origin = format!("http://127.0.0.1:{port}");
    // What the page's script sends works.
    let sent = web.post_json("/api/call", &csrf, &call, &[("Origin", &own_origin)]);
    assert_eq!(sent.status, 200, "{}", sent.text());
    assert_eq!(sent.json()["is_error"], false, "{}", sent.text());
    let forged: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("no CSRF header", vec![("Content-Type", "application/json")]),
        (
            "a wrong CSRF header",
            vec![
                ("Content-Type", "application/json"),
                (
                    "X-Skillbox-Csrf",
                    "0000000000000000000000000000000000000000000000000000000000000000",
                ),
            ],
        ),
        (
            "an empty CSRF header",
            vec![
                ("Content-Type", "application/json"),
                ("X-Skillbox-Csrf", ""),
            ],
        ),
        (
            "a text/plain body",
            vec![("Content-Type", "text/plain"), ("X-Skillbox-Csrf", &csrf)],
        ),
        (
            "a form",
            vec![
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("X-Skillbox-Csrf", &csrf),
            ],
        ),
        ("no content type", vec![("X-Skillbox-Csrf", &csrf)]),
        (
            "a foreign Origin",
            vec![
                ("Content-Type", "application/json"),
                ("X-Skillbox-Csrf", &csrf),
                ("Origin", "http://evil.example"),
            ],
        ),
        (
            "Origin: null",
            vec![
                ("Content-Type", "application/json"),
                ("X-Skillbox-Csrf", &csrf),
                ("Origin", "null"),
            ],
        ),
        (
            "a look-alike Origin",
            vec![
                ("Content-Type", "application/json"),
                ("X-Skillbox-Csrf", &csrf),
                ("Origin", "http://127.0.0.1.evil.example"),
            ],
        ),
    ];
    for target in [
        "/api/call",
        "/api/chat",
        "/api/chat/0123456789abcdef0123456789abcdef/turns",
        "/api/chat/0123456789abcdef0123456789abcdef/stop",
        "/api/chat/0123456789abcdef0123456789abcdef/approvals/1",
        "/logout",
    ] {
        for (what, headers) in &forged {
            let answer = web.send("POST", target, headers, body.as_bytes());
            assert_eq!(
                answer.status,
                403,
                "{target} with {what}: {}",
                answer.text()
            );
        }
    }
    // DNS rebinding: a page whose own name now points here.
    for host in [
        format!("evil.example:{port}"),
        format!("localhost.evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        "0.0.0.0".to_owned(),
        String::new(),
    ] {
        for target in ["/", "/skills/plain", "/api/tools", "/api/catalog/events"] {
            let answer = web.get_with(target, &[("Host", &host)]);
            assert!(
                matches!(answer.status, 400 | 403),
                "{target} for Host {host:?}: {} {}",
                answer.status,
                answer.text()
            );
        }
        let answer = web.send(
            "POST",
            "/api/call",
            &[
                ("Host", &host),
                ("Content-Type", "application/json"),
                ("X-Skillbox-Csrf", &csrf),
            ],
            body.as_bytes(),
        );
        assert!(
            matches!(answer.status, 400 | 403),
            "POST for Host {host:?}: {}",
            answer.text()
        );
    }
    // No preflight is ever granted, and no other method reaches the call.
    let preflight = web.send(
        "OPTIONS",
        "/api/call",
        &[
            ("Origin", &own_origin),
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "content-type, x-skillbox-csrf",
            ),
        ],
        b"",
    );
    assert!(
        preflight.header("access-control-allow-origin").is_none(),
        "{:?}",
        preflight.headers
    );
    for method in ["GET", "HEAD", "PUT", "DELETE", "PATCH"] {
        let answer = web.send(
            method,
            "/api/call?tool=load_skill",
            &[
                ("Content-Type", "application/json"),
                ("X-Skillbox-Csrf", &csrf),
                ("X-HTTP-Method-Override", "POST"),
            ],
            body.as_bytes(),
        );
        assert_eq!(answer.status, 405, "{method}: {}", answer.text());
    }
}

#[test]
fn with_a_token_every_route_needs_a_session_and_sessions_stay_apart() {
    let root = plain_tree();
    let token = "correct-horse-battery-staple-0123456789";
    let web = Web::start(&[root.path()], &["--token", token]);
    let hex = "0123456789abcdef0123456789abcdef";
    let gets = [
        "/".to_owned(),
        "/skills".to_owned(),
        "/skills?fragment=rows".to_owned(),
        "/skills/plain".to_owned(),
        "/skills/plain/files/SKILL.md".to_owned(),
        "/skills/plain/raw/SKILL.md".to_owned(),
        "/playground".to_owned(),
        "/chat".to_owned(),
        format!("/chat/{hex}"),
        "/runs".to_owned(),
        format!("/blobs/{hex}"),
        "/api/tools".to_owned(),
        "/api/catalog/events".to_owned(),
        format!("/api/chat/{hex}/events"),
    ];
    let token_cookie = format!("skillbox_session={token}");
    let strangers: [(&str, Vec<(&str, &str)>); 5] = [
        ("no credentials", vec![]),
        (
            "a guessed session",
            vec![("Cookie", "skillbox_session=guess")],
        ),
        (
            "a well-formed unknown session",
            vec![(
                "Cookie",
                "skillbox_session=0000000000000000000000000000000000000000000000000000000000000000",
            )],
        ),
        ("a wrong bearer", vec![("Authorization", "Bearer wrong")]),
        ("the token as a cookie", vec![("Cookie", &token_cookie)]),
    ];
    for (what, headers) in &strangers {
        let guessing = headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
        for target in &gets {
            let answer = web.get_with(target, headers);
            let to_login = answer
                .header("location")
                .is_some_and(|location| location.starts_with("/login?next="));
            // Past a few wrong bearers in a row, an address is held back (429).
            let held_back =
                guessing && answer.status == 429 && answer.header("retry-after").is_some();
            assert!(
                answer.status == 401 || (answer.status == 303 && to_login) || held_back,
                "{target} with {what}: {} {:?} {}",
                answer.status,
                answer.headers,
                answer.text()
            );
            if target.starts_with("/api/") || target.starts_with("/blobs/") {
                assert!(
                    !answer.text().contains("plain"),
                    "{target}: {}",
                    answer.text()
                );
            }
        }
        for target in ["/api/call", "/api/chat", "/logout"] {
            let answer = web.send(
                "POST",
                target,
                &[headers.clone(), vec![("Content-Type", "application/json")]].concat(),
                b"{}",
            );
            assert!(
                answer.status == 401 || (guessing && answer.status == 429),
                "POST {target} with {what}: {} {}",
                answer.status,
                answer.text()
            );
        }
    }
    // The assets and the form are public; the rest of the server wants the bearer.
    assert_eq!(web.get("/assets/app.js").status, 200);
    assert_eq!(web.get("/login").status, 200);
    assert_eq!(web.get("/assets/..%2f..%2fsrc%2flib.rs").status, 404);
    // The right bearer works once the wrong ones' wait has passed.
    let bearer = format!("Bearer {token}");
    assert_eq!(
        web.send_after_waiting("GET", "/api/tools", &[("Authorization", &bearer)], b"")
            .status,
        200
    );

    // Signing in: a wrong token is refused slowly, the right one opens a fresh session whatever
    // cookie came with it (no fixation), in a cookie scripts cannot read.
    let login = |token: &str, next: &str, cookie: Option<&str>| {
        let form = format!("token={}&next={}", encoded(token), encoded(next));
        let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
        if let Some(cookie) = cookie {
            headers.push(("Cookie", cookie));
        }
        web.send_after_waiting("POST", "/login", &headers, form.as_bytes())
    };
    let started = Instant::now();
    let wrong = login("wrong", "/", None);
    assert_eq!(wrong.status, 401, "{}", wrong.text());
    assert!(started.elapsed() >= Duration::from_millis(250));
    assert!(wrong.header("set-cookie").is_none());
    let fixed = "skillbox_session=attacker-chosen";
    let signed = login(token, "/skills/plain", Some(fixed));
    assert_eq!(signed.status, 303, "{}", signed.text());
    assert_eq!(signed.header("location"), Some("/skills/plain"));
    let cookie_header = signed.header("set-cookie").unwrap().to_owned();
    // The browser keeps the cookie as long as the server keeps the session at most: 7 days.
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=604800"] {
        assert!(cookie_header.contains(flag), "{cookie_header}");
    }
    let session = cookie_header.split(';').next().unwrap().to_owned();
    assert_ne!(session, fixed);
    assert_eq!(session.len(), "skillbox_session=".len() + 64, "{session}");
    assert_eq!(web.get_with("/skills", &[("Cookie", fixed)]).status, 303);
    let page = web.get_with("/playground", &[("Cookie", &session)]);
    assert_eq!(page.status, 200);
    let csrf = page.csrf();

    // Another session's CSRF token does not work with this session's cookie.
    let other = login(token, "/", None);
    let other_session = other
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let other_csrf = web
        .get_with("/playground", &[("Cookie", &other_session)])
        .csrf();
    assert_ne!(csrf, other_csrf);
    let call = json!({"tool": "load_skill", "arguments": {"skill": "plain"}});
    let crossed = web.post_json("/api/call", &other_csrf, &call, &[("Cookie", &session)]);
    assert_eq!(crossed.status, 403, "{}", crossed.text());
    let own = web.post_json("/api/call", &csrf, &call, &[("Cookie", &session)]);
    assert_eq!(own.status, 200, "{}", own.text());

    // `next` never leads off this server, through the form or the redirect.
    for next in [
        "//evil.example/",
        "/\\evil.example",
        "\\/evil.example",
        "https://evil.example/",
        " //evil.example",
        "/\t/evil.example",
        "/\r\nSet-Cookie: pwn=1",
        "javascript:alert(1)",
        "http:evil.example",
    ] {
        let answer = login(token, next, None);
        assert_eq!(answer.status, 303, "{next:?}: {}", answer.text());
        let location = answer.header("location").unwrap();
        assert!(
            location.starts_with('/')
                && !location.starts_with("//")
                && !location.contains('\\')
                && !location.contains("evil"),
            "{next:?} led to {location:?}"
        );
        assert_eq!(
            answer.headers_named("set-cookie").len(),
            1,
            "{:?}",
            answer.headers
        );
        let form = web.get(&format!("/login?next={}", encoded(next)));
        assert!(
            !form.text().contains("evil.example"),
            "{next:?}: {}",
            form.text()
        );
    }

    // Signing out ends the session on the server, not only in the browser.
    let out = web.post_json("/logout", &csrf, &json!({}), &[("Cookie", &session)]);
    assert_eq!(out.status, 200, "{}", out.text());
    assert!(out.header("set-cookie").unwrap().contains("Max-Age=0"));
    assert_eq!(web.get_with("/skills", &[("Cookie", &session)]).status, 303);
    assert_eq!(
        web.get_with("/skills", &[("Cookie", &other_session)])
            .status,
        200
    );

    // Guessing: many wrong tokens at once from one address are held back: few are compared,
    // the rest get 429 with `Retry-After` whatever they held.
    let started = Instant::now();
    let guesses: Vec<_> = (0..32)
        .map(|index| {
            let address = web.address.clone();
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(&address).unwrap();
                let form = format!("token=guess{index}&next=/");
                let request = format!(
                    "POST /login HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{form}",
                    form.len()
                );
                stream.write_all(request.as_bytes()).unwrap();
                let mut answer = Vec::new();
                let _ = stream.read_to_end(&mut answer);
                parse_answer(&answer).map(|answer| answer.status)
            })
        })
        .collect();
    let statuses: Vec<_> = guesses
        .into_iter()
        .map(|guess| guess.join().unwrap())
        .collect();
    let compared = statuses
        .iter()
        .filter(|status| **status == Some(401))
        .count();
    let held_back = statuses
        .iter()
        .filter(|status| **status == Some(429))
        .count();
    assert_eq!(compared + held_back, 32, "{statuses:?}");
    assert!(
        compared <= skillbox_server::auth_throttle::FAILED_AUTH_BURST as usize,
        "{statuses:?}"
    );
    eprintln!(
        "32 wrong tokens at once: {compared} compared, {held_back} held back, in {:?}",
        started.elapsed()
    );
    // A signed-in browser is not held back: its session is not a token.
    assert_eq!(
        web.get_with("/skills", &[("Cookie", &other_session)])
            .status,
        200
    );
}

#[test]
fn oversized_and_deeply_nested_requests_are_refused_early() {
    let root = plain_tree();
    let web = Web::start(&[root.path()], &[]);
    let csrf = web.get("/playground").csrf();
    let json_headers = [
        ("Content-Type", "application/json"),
        ("X-Skillbox-Csrf", csrf.as_str()),
    ];
    // A call whose arguments hold 8 MiB: refused for its size before it is read and parsed.
    let big = json!({"tool": "load_skill", "arguments": {"skill": "x".repeat(8 * 1024 * 1024)}});
    let answer = web.send(
        "POST",
        "/api/call",
        &json_headers,
        big.to_string().as_bytes(),
    );
    assert_eq!(answer.status, 413, "{}", shorten(&answer.text()));
    // Each JSON endpoint takes no more than its largest sensible body.
    for target in [
        "/api/chat",
        "/api/chat/0123456789abcdef0123456789abcdef/turns",
        "/api/chat/0123456789abcdef0123456789abcdef/approvals/1",
    ] {
        let answer = web.send("POST", target, &json_headers, big.to_string().as_bytes());
        assert_eq!(answer.status, 413, "{target}: {}", shorten(&answer.text()));
    }
    let form = format!("token={}", "x".repeat(8 * 1024 * 1024));
    let login = web.send(
        "POST",
        "/login",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        form.as_bytes(),
    );
    assert!(
        matches!(login.status, 303 | 413),
        "{}",
        shorten(&login.text())
    );

    // Memory: eight 60 MiB bodies at once.
    let (_, before) = memory_kib(web.pid());
    let body = json!({"tool": "load_skill", "arguments": {"skill": "y".repeat(60 * 1024 * 1024)}})
        .to_string();
    let body = std::sync::Arc::new(body);
    let senders: Vec<_> = (0..8)
        .map(|_| {
            let address = web.address.clone();
            let body = std::sync::Arc::clone(&body);
            let csrf = csrf.clone();
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(&address).unwrap();
                let head = format!(
                    "POST /api/call HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nX-Skillbox-Csrf: {csrf}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                stream.write_all(head.as_bytes()).unwrap();
                let _ = stream.write_all(body.as_bytes());
                let mut answer = Vec::new();
                let _ = stream.read_to_end(&mut answer);
                parse_answer(&answer).map(|answer| answer.status)
            })
        })
        .collect();
    let statuses: Vec<_> = senders
        .into_iter()
        .map(|sender| sender.join().unwrap())
        .collect();
    let (peak, after) = memory_kib(web.pid());
    eprintln!(
        "eight 60 MiB calls: {statuses:?}; server memory {before} KiB before, peak {peak} KiB, {after} KiB after"
    );
    for status in statuses {
        assert!(matches!(status, Some(413) | None), "{status:?}");
    }

    // Nesting past what the parser follows is an error, not a crash.
    let nested = format!(
        "{{\"tool\": \"load_skill\", \"arguments\": {{\"skill\": {}1{}}}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let answer = web.send("POST", "/api/call", &json_headers, nested.as_bytes());
    assert!(
        matches!(answer.status, 400 | 413 | 422),
        "{}",
        shorten(&answer.text())
    );
    // Query strings too long, pages out of range, headers by the thousand.
    let long_query = format!("/skills?q={}", "a".repeat(10 * 1024 * 1024));
    if let Some(answer) = web.try_send("GET", &long_query, &[], b"") {
        assert!(
            matches!(answer.status, 400 | 414 | 431),
            "{}",
            answer.status
        );
    }
    for page in [
        "0",
        "-1",
        "18446744073709551615",
        "99999999999999999999999",
        "1e3",
        "",
    ] {
        let answer = web.get(&format!("/skills?page={page}"));
        assert!(
            matches!(answer.status, 200 | 400),
            "page={page}: {}",
            answer.status
        );
    }
    let cookies = "a=b; ".repeat(20_000);
    if let Some(answer) = web.try_send("GET", "/skills", &[("Cookie", &cookies)], b"") {
        assert!(matches!(answer.status, 200 | 431), "{}", answer.status);
    }
    assert_eq!(web.get("/skills").status, 200, "the server still answers");
}

/// Send `body` to `target` in 64 KiB chunks without a `Content-Length` (so its size is known
/// only while it is read), with `headers`; the status, or `None` when the connection ends
/// without an answer.
fn send_chunked(web: &Web, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Option<u16> {
    let mut stream = web.connect();
    let mut head = format!("POST {target} HTTP/1.1\r\nHost: {}\r\n", web.address);
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).ok()?;
    for piece in body.chunks(64 * 1024) {
        let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
        chunk.extend_from_slice(piece);
        chunk.extend_from_slice(b"\r\n");
        if stream.write_all(&chunk).is_err() {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    parse_answer(&bytes).map(|answer| answer.status)
}

#[test]
fn every_endpoint_refuses_a_2_mib_body_before_building_anything_of_it() {
    let root = plain_tree();
    let web = Web::start(&[root.path()], &["--token", "tok-2mib"]);
    let hex = "0123456789abcdef0123456789abcdef";
    let session = web
        .send(
            "POST",
            "/login",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            b"token=tok-2mib&next=/",
        )
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let csrf = web.get_with("/playground", &[("Cookie", &session)]).csrf();
    let json_headers = [
        ("Content-Type", "application/json"),
        ("X-Skillbox-Csrf", csrf.as_str()),
        ("Cookie", session.as_str()),
    ];
    // 2 MiB of valid JSON every endpoint could start reading: the members each one wants, then
    // one it does not know holding a million numbers (a tree of it took about 40 times its size).
    let two_mib = 2 * 1024 * 1024;
    let mut body =
        r#"{"tool":"load_skill","model":"","text":"hi","approve":true,"junk":["#.to_owned();
    while body.len() < two_mib - 4 {
        body.push_str("0,");
    }
    body.push_str("0]}");
    let targets = [
        "/api/call".to_owned(),
        "/api/chat".to_owned(),
        format!("/api/chat/{hex}/turns"),
        format!("/api/chat/{hex}/stop"),
        format!("/api/chat/{hex}/approvals/1"),
        "/logout".to_owned(),
    ];
    // The server's memory once warm: every endpoint answered once (but signing out).
    for target in targets.iter().filter(|target| *target != "/logout") {
        web.send("POST", target, &json_headers, b"{}");
    }
    // Bodies that say their size are refused unread.
    let (_, before) = memory_kib(web.pid());
    for target in &targets {
        let answer = web.send("POST", target, &json_headers, body.as_bytes());
        assert_eq!(answer.status, 413, "{target}: {}", shorten(&answer.text()));
        let message = answer.json()["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.contains(&body.len().to_string()) && message.contains("at most"),
            "{target}: {message}"
        );
    }
    let form = format!("token={}&next=/", "x".repeat(two_mib));
    let form_headers = [("Content-Type", "application/x-www-form-urlencoded")];
    let login = web.send("POST", "/login", &form_headers, form.as_bytes());
    assert_eq!(login.status, 413, "{}", shorten(&login.text()));
    assert!(login.text().contains("65536"), "{}", shorten(&login.text()));
    let (_, unread) = memory_kib(web.pid());
    // Bodies sent in chunks are read up to their endpoint's bound (a call's 1 MiB of
    // arguments is the largest), then refused.
    for target in &targets {
        assert_eq!(
            send_chunked(&web, target, &json_headers, body.as_bytes()),
            Some(413),
            "{target} in chunks"
        );
    }
    assert_eq!(
        send_chunked(&web, "/login", &form_headers, form.as_bytes()),
        Some(413)
    );
    let (_, after) = memory_kib(web.pid());
    eprintln!(
        "2 MiB bodies: server memory {before} KiB before, {unread} KiB after seven sized ones, {after} KiB after seven more in chunks"
    );
    assert!(
        unread.saturating_sub(before) < 2 * 1024,
        "seven bodies refused unread grew the server by {} KiB",
        unread - before
    );
    assert!(
        after.saturating_sub(before) < 8 * 1024,
        "the server grew by {} KiB",
        after - before
    );
    // Bodies of the sizes pages send still work.
    let page = web.post_json(
        "/api/call",
        &csrf,
        &json!({"tool": "load_skill", "arguments": {"skill": "plain"}}),
        &[("Cookie", &session)],
    );
    assert_eq!(page.status, 200, "{}", page.text());
}

/// Read server-sent events from `stream` until their data lines satisfy `wanted` or the time
/// runs out; the data lines read.
fn read_events(
    stream: &mut TcpStream,
    limit: Duration,
    wanted: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let deadline = Instant::now() + limit;
    let mut text = String::new();
    let mut buffer = [0_u8; 16 * 1024];
    while Instant::now() < deadline {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => text.push_str(&String::from_utf8_lossy(&buffer[..read])),
            Err(_) => {}
        }
        let data: Vec<String> = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| data.trim().to_owned())
            .collect();
        if wanted(&data) {
            return data;
        }
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|data| data.trim().to_owned())
        .collect()
}

#[test]
fn catalog_event_streams_are_bounded() {
    let root = plain_tree();
    let web = Web::start(&[root.path()], &[]);
    let (_, before) = memory_kib(web.pid());
    let mut open = Vec::new();
    let mut refused = 0;
    for _ in 0..400 {
        let (status, head, stream) = web.open_stream("/api/catalog/events", &[]);
        match status {
            200 => open.push(stream),
            503 => refused += 1,
            other => panic!("a catalog stream answered {other}: {head}"),
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let (_, after) = memory_kib(web.pid());
    eprintln!(
        "{} catalog streams open, {refused} refused; server memory {before} KiB before, {after} KiB after ({} KiB per stream)",
        open.len(),
        (after.saturating_sub(before)) / open.len().max(1) as u64
    );
    assert!(refused > 0, "400 catalog streams were all accepted");
    assert!(
        open.len() >= 64,
        "only {} streams were accepted",
        open.len()
    );
    // A reload reaches the open streams; the pages keep working.
    write_tree(
        root.path(),
        &[(
            "second/SKILL.md",
            "---\nname: second\ndescription: Second.\n---\nB.\n",
        )],
    );
    let events = read_events(&mut open[0], Duration::from_secs(20), |data| {
        data.len() >= 2
    });
    assert!(events.len() >= 2, "{events:?}");
    assert_eq!(web.get("/skills").status, 200);
    // Closed streams give their places back.
    open.clear();
    assert!(
        skillbox_testkit::wait_until(Duration::from_secs(60), Duration::from_millis(500), || {
            web.open_stream("/api/catalog/events", &[]).0 == 200
        }),
        "closed streams kept their places"
    );
}

/// A streamed text answer in Chat Completions form.
fn says(text: &str) -> skillbox_testkit::model_server::Reply {
    let chunk = json!({"choices":[{"index":0,"delta":{"content":text}}]}).to_string();
    let finish = json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}).to_string();
    skillbox_testkit::model_server::Reply::data_events(&[&chunk, &finish])
}

#[test]
fn chat_ids_event_positions_and_approvals_cannot_be_forged() {
    let model =
        skillbox_testkit::model_server::ScriptedModelServer::start(vec![says("fine"), says(XSS)]);
    let root = plain_tree();
    let web = Web::start(&[root.path()], &["--base-url", &model.base_url]);
    let csrf = web.get("/chat").csrf();
    let made = web.post_json("/api/chat", &csrf, &json!({}), &[]);
    assert_eq!(made.status, 200, "{}", made.text());
    let id = made.json()["id"].as_str().unwrap().to_owned();
    assert!(
        id.len() == 32 && id.bytes().all(|byte| byte.is_ascii_hexdigit()),
        "{id}"
    );
    assert_eq!(web.get(&format!("/chat/{id}")).status, 200);

    // Ids shaped like paths, or unknown, name no conversation and no file.
    for target in [
        "/chat/..%2f..%2f..%2fetc%2fpasswd".to_owned(),
        "/chat/../../etc/passwd".to_owned(),
        "/chat/%2e%2e".to_owned(),
        format!("/chat/{id}%00"),
        format!("/chat/{}", id.to_ascii_uppercase()),
        format!("/chat/{}", "0".repeat(32)),
        format!("/chat/..%2f{}", &id[3..]),
        "/api/chat/..%2f..%2ftranscripts/events".to_owned(),
        format!("/api/chat/{}/events", "f".repeat(32)),
    ] {
        let answer = web.get(&target);
        assert_eq!(answer.status, 404, "{target}: {}", answer.text());
        assert!(!answer.text().contains("root:x:0:0"), "{target}");
    }
    // Approval numbers nobody is waiting for are refused, whatever their shape.
    for (number, refused) in [
        ("0", 404),
        ("1", 404),
        ("2", 404),
        ("999", 404),
        ("18446744073709551615", 404),
        ("-1", 400),
        ("18446744073709551616", 400),
        ("x", 400),
    ] {
        let answer = web.post_json(
            &format!("/api/chat/{id}/approvals/{number}"),
            &csrf,
            &json!({"approve": true}),
            &[],
        );
        assert_eq!(answer.status, refused, "{number}: {}", answer.text());
    }
    // A message over 64 KiB is refused by name; one of 64 KiB is taken.
    let turns = format!("/api/chat/{id}/turns");
    let over = web.post_json(
        &turns,
        &csrf,
        &json!({"text": "a".repeat(64 * 1024 + 1)}),
        &[],
    );
    assert_eq!(over.status, 400, "{}", shorten(&over.text()));
    assert!(over.text().contains("65536"), "{}", over.text());
    let at = web.post_json(&turns, &csrf, &json!({"text": "a".repeat(64 * 1024)}), &[]);
    assert_eq!(at.status, 200, "{}", shorten(&at.text()));
    let (status, head, mut stream) = web.open_stream(&format!("/api/chat/{id}/events"), &[]);
    assert_eq!(status, 200, "{head}");
    let events = read_events(&mut stream, Duration::from_secs(30), |data| {
        data.iter().any(|data| data.contains("\"idle\""))
    });
    assert!(
        events.iter().any(|data| data.contains("fine")),
        "{events:?}"
    );

    // Crafted positions: ids past the end, out of range, malformed; each stream opens.
    let events_target = format!("/api/chat/{id}/events");
    let huge = u64::MAX.to_string();
    let positions = [
        (Some(format!("0:{huge}")), String::new()),
        (Some(format!("{huge}:{huge}")), String::new()),
        (Some("0:99999999999999999999999".to_owned()), String::new()),
        (Some("-1:-1".to_owned()), String::new()),
        (Some("x".to_owned()), String::new()),
        (None, format!("?after={huge}")),
        (None, format!("?after={huge}&generation={huge}")),
    ];
    for (last_event_id, query) in &positions {
        let headers: Vec<(&str, &str)> = last_event_id
            .iter()
            .map(|value| ("Last-Event-ID", value.as_str()))
            .collect();
        let (status, head, _stream) = web.open_stream(&format!("{events_target}{query}"), &headers);
        assert!(
            matches!(status, 200 | 400),
            "Last-Event-ID {last_event_id:?} {query}: the stream answered {status}: {head:?}"
        );
    }
    // Stream after stream from the first event on still works.
    let (status, _, mut again) = web.open_stream(&events_target, &[("Last-Event-ID", "0:0")]);
    assert_eq!(status, 200);
    let replay = read_events(&mut again, Duration::from_secs(10), |data| {
        data.iter().any(|data| data.contains("\"idle\""))
    });
    assert!(
        replay.iter().any(|data| data.contains("fine")),
        "{replay:?}"
    );

    // Streams opened and closed on an idle conversation give their places back: more of
    // them, one after another, than may be open at once.
    for round in 0..300 {
        let (status, head, stream) = web.open_stream(&events_target, &[]);
        assert_eq!(status, 200, "stream {round} after as many closed: {head}");
        drop(stream);
        if round % 50 == 49 {
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    // A message carrying markup stays data: the page holds none of it.
    let marked = web.post_json(&turns, &csrf, &json!({"text": XSS}), &[]);
    assert_eq!(marked.status, 200, "{}", marked.text());
    let page = web.get(&format!("/chat/{id}"));
    assert_inert(&page, "the chat page");

    // Conversations made in bulk: what each costs.
    let transcripts = web.data.path().join("transcripts");
    let (_, before) = memory_kib(web.pid());
    let started = Instant::now();
    for _ in 0..1000 {
        let made = web.post_json("/api/chat", &csrf, &json!({}), &[]);
        assert_eq!(made.status, 200, "{}", made.text());
    }
    let elapsed = started.elapsed();
    let (_, after) = memory_kib(web.pid());
    let files: Vec<_> = fs_err::read_dir(&transcripts).unwrap().collect();
    let bytes: u64 = files
        .iter()
        .map(|entry| entry.as_ref().unwrap().metadata().unwrap().len())
        .sum();
    eprintln!(
        "1000 conversations in {elapsed:?}: {} transcript files, {bytes} bytes; server memory {before} KiB before, {after} KiB after",
        files.len()
    );
    assert_eq!(
        web.get(&format!("/chat/{id}")).status,
        200,
        "the first one reads back"
    );
}

#[test]
fn deeply_nested_markdown_costs_a_page_not_minutes() {
    let root = tempfile::tempdir().unwrap();
    let skill = |name: &str, body: &str| {
        (
            format!("{name}/SKILL.md"),
            format!("---\nname: {name}\ndescription: Nested.\n---\n{body}"),
        )
    };
    let raw_tags = "<kbd>k</kbd> ".repeat(300);
    let files = [
        skill("deep-div", &"<div>".repeat(50_000)),
        skill("deep-quote", &(">".repeat(50_000) + " x\n")),
        skill(
            "deep-list",
            &(0..150)
                .map(|depth| "  ".repeat(depth) + "- x\n")
                .collect::<String>(),
        ),
        skill("many-tags", &raw_tags),
        skill(
            "some-html",
            "<details><summary>More</summary>\n\nHidden *text*.\n\n</details>\n\nPress <kbd>Ctrl</kbd>.\n",
        ),
    ];
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    write_tree(root.path(), &files);
    let web = Web::start(&[root.path()], &["--no-watch"]);
    for name in ["deep-div", "deep-quote", "deep-list", "many-tags"] {
        let started = Instant::now();
        let page = web.get(&format!("/skills/{name}"));
        eprintln!("{name}: {} in {:?}", page.status, started.elapsed());
        assert_eq!(page.status, 200);
        let body = rendered_body(&page);
        assert!(body.contains("shown as text"), "{name}: {}", shorten(&body));
        assert!(
            !body.contains("<div><div>") && !body.contains("<kbd>"),
            "{name}"
        );
        assert_eq!(web.get("/skills").status, 200, "the server answers others");
    }
    let kept = rendered_body(&web.get("/skills/some-html"));
    assert!(
        kept.contains("<details>") && kept.contains("<kbd>Ctrl</kbd>"),
        "{kept}"
    );
    assert!(!kept.contains("shown as text"), "{kept}");
}

#[test]
fn what_a_run_prints_and_names_reaches_the_runs_page_as_text() {
    let root = plain_tree();
    let audit = tempfile::tempdir().unwrap();
    let audit_log = audit.path().join("audit.jsonl");
    let web = Web::start(
        &[root.path()],
        &["--audit-log", audit_log.to_str().unwrap()],
    );
    let csrf = web.get("/playground").csrf();
    let code = format!(
        "import os\ndef main(args):\n    print('{XSS}')\n    os.makedirs('out', exist_ok=True)\n    open('out/{XSS}.txt', 'w').write('x')\n    return {{'v': '{}'}}\n",
        ATTRIBUTE_BREAK.replace('\'', "\\'")
    );
    let call = json!({"tool": "run_code", "arguments": {"language": "python", "code": code}});
    let answer = web.post_json("/api/call", &csrf, &call, &[]);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let run = answer.json()["content"].clone();
    assert_eq!(run["status"], "completed", "{run}");
    let blob = run["output_files"][0]["blob_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let page = web.get("/runs");
    assert_eq!(page.status, 200);
    assert!(
        page.text().contains("out/&#60;img src=x"),
        "{}",
        page.text()
    );
    assert_inert(&page, "the runs page");
    let download = web.get(&format!("/blobs/{}", encoded(&blob)));
    assert_eq!(download.status, 200, "{}", download.text());
    assert_eq!(download.text(), "x");
    let disposition = download.header("content-disposition").unwrap();
    assert!(
        disposition
            .trim_start_matches("attachment; filename=\"")
            .trim_end_matches('"')
            .chars()
            .all(|character| character.is_ascii_alphanumeric()),
        "{disposition}"
    );
    for id in ["..%2f..%2fmeta", "blob:..%2f..%2fx", "%00", &"f".repeat(33)] {
        assert_eq!(web.get(&format!("/blobs/{id}")).status, 404, "{id}");
    }
}

#[test]
fn clients_that_do_not_read_large_answers_hold_a_bounded_amount() {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[(
            "large/SKILL.md",
            "---\nname: large\ndescription: A large file.\n---\nBody.\n",
        )],
    );
    // 15 MiB that does not compress (the raw endpoint serves at most 16 MiB).
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let noise: Vec<u8> = (0..15 * 1024 * 1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect();
    fs_err::write(root.path().join("large/data.bin"), &noise).unwrap();
    let web = Web::start(&[root.path()], &["--no-watch"]);
    let (_, before) = memory_kib(web.pid());
    let request = format!(
        "GET /skills/large/raw/data.bin HTTP/1.1\r\nHost: {}\r\n\r\n",
        web.address
    );
    // Clients that ask and then read nothing.
    let mut readers = Vec::new();
    for _ in 0..48 {
        let socket = TcpStream::connect(&web.address).unwrap();
        (&socket).write_all(request.as_bytes()).unwrap();
        readers.push(socket);
    }
    std::thread::sleep(Duration::from_secs(2));
    let (peak, held) = memory_kib(web.pid());
    let mut statuses = std::collections::BTreeMap::new();
    for socket in &mut readers {
        socket
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut head = [0_u8; 12];
        let status = match socket.read_exact(&mut head) {
            Ok(()) => String::from_utf8_lossy(&head[9..12]).into_owned(),
            Err(error) => error.to_string(),
        };
        *statuses.entry(status).or_insert(0) += 1;
    }
    eprintln!(
        "48 clients not reading a 15 MiB file: {statuses:?}; server memory {before} KiB before, {held} KiB held (peak {peak} KiB)"
    );
    assert!(statuses.contains_key("503"), "{statuses:?}");
    assert!(statuses.contains_key("200"), "{statuses:?}");
    assert!(
        held < before + 400 * 1024,
        "the answers held {} KiB",
        held - before
    );
    // Once they leave, the budget is back.
    drop(readers);
    assert!(
        skillbox_testkit::wait_until(Duration::from_secs(30), Duration::from_millis(200), || {
            web.get("/skills/large/raw/data.bin").status == 200
        }),
        "the budget was not given back"
    );
    let whole = web.get("/skills/large/raw/data.bin");
    assert_eq!(whole.body.len(), noise.len());
    assert!(whole.body == noise, "the file arrives whole and unchanged");
}

#[test]
fn rendering_a_large_body_does_not_hold_up_other_pages() {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[(
            "long/SKILL.md",
            // About 1 MiB of short paragraphs: a second of work per view in a debug build.
            &format!(
                "---\nname: long\ndescription: A long body.\n---\n{}",
                "p\n\n".repeat(340_000)
            ),
        )],
    );
    let web = Web::start(&[root.path()], &["--no-watch"]);
    let started = Instant::now();
    let views: Vec<_> = (0..8)
        .map(|_| {
            let address = web.address.clone();
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(&address).unwrap();
                let request = format!(
                    "GET /skills/long HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
                );
                stream.write_all(request.as_bytes()).unwrap();
                let mut answer = Vec::new();
                let _ = stream.read_to_end(&mut answer);
                (
                    parse_answer(&answer).map(|answer| answer.status),
                    Instant::now(),
                )
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let list = web.get("/skills");
    let list_done = Instant::now();
    assert_eq!(list.status, 200);
    let finished: Vec<_> = views.into_iter().map(|view| view.join().unwrap()).collect();
    let first_view = finished.iter().map(|(_, done)| *done).min().unwrap();
    eprintln!(
        "the list answered after {:?}; the first of 8 long pages after {:?}, the last after {:?}",
        list_done - started,
        first_view - started,
        finished.iter().map(|(_, done)| *done).max().unwrap() - started
    );
    for (status, _) in &finished {
        assert!(matches!(status, Some(200 | 503)), "{status:?}");
    }
    assert!(
        list_done < first_view,
        "the list waited for the long pages to render"
    );
}
