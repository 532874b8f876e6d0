//! The headless-Chromium harness against pages served on 127.0.0.1 (port 0) by a small HTTP
//! server here: what its console reports, clicking and typing, screenshots, paint timing, its
//! failure messages, that its processes end, and how it skips.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::json;

use skillbox_testkit::browser::{Browser, Page, WINDOW_HEIGHT_PIXELS, WINDOW_WIDTH_PIXELS};

/// Every page is served with this policy: scripts from the site only, none inline.
const POLICY: &str = "script-src 'self'";

/// A page with three faults: an inline script the policy blocks, then a script that calls
/// `console.error` and throws. The empty data: icon keeps Chromium from asking for
/// `/favicon.ico`, whose 404 would be a fourth error.
const NOISY_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>noisy</title><link rel="icon" href="data:,"></head>
<body><p id="status">loaded</p>
<script>document.getElementById('status').textContent = 'the inline script ran';</script>
<script src="/noisy.js"></script>
</body></html>"#;
const NOISY_SCRIPT: &str = "console.error('marker: console.error was called');\n\
     throw new Error('marker: nobody caught this');\n";

/// A page without faults: a name field, a button, and a greeting the button fills in.
const GREETER_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>greeter</title><link rel="icon" href="data:,"></head>
<body><h1>Greeter</h1>
<input id="name" autocomplete="off"><button id="greet" type="button">Greet</button>
<p id="greeting"></p>
<script src="/greeter.js"></script>
</body></html>"#;
const GREETER_SCRIPT: &str = "document.getElementById('greet').addEventListener('click', () => {\n\
     const name = document.getElementById('name').value;\n\
     document.getElementById('greeting').textContent = 'Hello, ' + name + '!';\n\
     });\n";

/// The first bytes of every PNG file.
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
/// How long the processes of a browser may take to end once it is gone.
const PROCESS_EXIT_LIMIT: Duration = Duration::from_secs(10);
/// Set for this binary run as a child by a test, naming the helper test it is to run.
const HELPER_VARIABLE: &str = "SKILLBOX_BROWSER_TEST_HELPER";

/// The base URL of this binary's site, started on first use.
fn site() -> &'static str {
    static SITE: OnceLock<String> = OnceLock::new();
    SITE.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || serve(stream));
            }
        });
        url
    })
}

/// A page of the shared browser showing `path` of the site; `None` when there is no browser
/// (the test is skipped).
fn open(path: &str) -> Option<Page<'static>> {
    let page = Browser::shared()?.new_page();
    page.goto(&format!("{}{path}", site()));
    Some(page)
}

/// Answer one request (its connection then closes).
fn serve(mut stream: TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut header = String::new();
    while reader.read_line(&mut header).is_ok_and(|read| read > 2) {
        header.clear();
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("/");
    let (status, content_type, body) = match path {
        "/noisy" => ("200 OK", "text/html", NOISY_PAGE),
        "/noisy.js" => ("200 OK", "text/javascript", NOISY_SCRIPT),
        "/greeter" => ("200 OK", "text/html", GREETER_PAGE),
        "/greeter.js" => ("200 OK", "text/javascript", GREETER_SCRIPT),
        _ => ("404 Not Found", "text/plain", "not found"),
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}; charset=utf-8\r\n\
         Content-Security-Policy: {POLICY}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

#[test]
fn console_errors_report_console_error_uncaught_exceptions_and_policy_violations() {
    let Some(page) = open("/noisy") else {
        return;
    };
    assert_eq!(
        page.find("#status").text(),
        "loaded",
        "the policy blocks the inline script"
    );

    let errors = page.console_errors();
    let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
    let has = |source: &str, text: &str| {
        errors
            .iter()
            .any(|entry| entry.source == source && entry.message.contains(text))
    };
    assert!(
        has("console-api", "marker: console.error was called"),
        "{listed:#?}"
    );
    assert!(
        has("javascript", "Uncaught Error: marker: nobody caught this"),
        "{listed:#?}"
    );
    assert!(
        has(
            "security",
            "Content Security Policy directive 'script-src 'self''"
        ),
        "{listed:#?}"
    );
    assert_eq!(errors.len(), 3, "{listed:#?}");
    assert_eq!(page.console_errors(), [], "each entry is reported once");
}

#[test]
fn typing_and_clicking_change_the_page_and_a_clean_page_has_no_console_errors() {
    let Some(page) = open("/greeter") else {
        return;
    };
    assert_eq!(page.find("#greeting").text(), "");

    page.find("#name").type_text("Ada");
    assert_eq!(page.find("#name").property("value").as_deref(), Some("Ada"));
    page.find("#greet").click();
    let greeting = page.wait_for_text("#greeting", "Hello, Ada!");

    assert_eq!(greeting.text(), "Hello, Ada!");
    assert!(page.body_text().contains("Greeter"), "{}", page.body_text());
    assert_eq!(page.current_url(), format!("{}/greeter", site()));
    let name = page.find("#name");
    assert_eq!(name.attribute("autocomplete").as_deref(), Some("off"));
    name.clear();
    assert_eq!(name.property("value").as_deref(), Some(""));
    assert_eq!(page.console_errors(), []);
}

#[test]
fn scripts_take_arguments_and_give_back_json() {
    let Some(page) = open("/greeter") else {
        return;
    };

    let answer = page.execute(
        "return {sum: arguments[0] + 1, title: document.title, tag: arguments[1]}",
        [json!(41), json!("x")],
    );

    assert_eq!(answer, json!({"sum": 42, "title": "greeter", "tag": "x"}));
}

#[test]
fn a_screenshot_is_a_png_of_the_fixed_window_size_under_the_target_folder() {
    let Some(page) = open("/greeter") else {
        return;
    };

    let path = page.screenshot("testkit-browser-greeter");

    assert_eq!(
        path.file_name().unwrap(),
        "testkit-browser-greeter.png",
        "{}",
        path.display()
    );
    let folder = path.parent().unwrap();
    assert_eq!(folder.file_name().unwrap(), "screenshots");
    assert!(
        folder.parent().unwrap().join("CACHEDIR.TAG").is_file(),
        "{} is not in Cargo's target folder",
        path.display()
    );
    let png = fs_err::read(&path).unwrap();
    assert!(
        png.starts_with(PNG_SIGNATURE),
        "{:?}",
        &png[..png.len().min(16)]
    );
    // The IHDR chunk comes first: width and height, big-endian, at bytes 16..24.
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((width, height), (WINDOW_WIDTH_PIXELS, WINDOW_HEIGHT_PIXELS));
}

#[test]
fn a_screenshot_name_with_a_path_in_it_is_refused() {
    let Some(page) = open("/greeter") else {
        return;
    };

    let message = panic_message(|| drop(page.screenshot("../escape")));

    assert!(
        message.contains("screenshot name \"../escape\" must be letters, digits"),
        "{message}"
    );
}

#[test]
fn first_contentful_paint_is_a_positive_time() {
    let Some(page) = open("/greeter") else {
        return;
    };

    let paint = page.first_contentful_paint_ms();

    assert!(paint.is_finite() && paint > 0.0, "{paint}");
}

#[test]
fn waiting_in_vain_fails_with_the_url_and_the_text_of_the_page() {
    let Some(mut page) = open("/greeter") else {
        return;
    };
    page.set_wait_timeout(Duration::from_millis(300));

    let absent = panic_message(|| drop(page.wait_for("#never")));
    let wrong_text = panic_message(|| drop(page.wait_for_text("h1", "Farewell")));

    for text in [&absent, &wrong_text] {
        assert!(text.contains("300ms"), "{text}");
        assert!(
            text.contains(&format!("page URL: {}/greeter", site())),
            "{text}"
        );
        assert!(text.contains("page text:\nGreeter"), "{text}");
    }
    assert!(
        absent.contains("waiting for an element matching `#never`"),
        "{absent}"
    );
    assert!(
        wrong_text.contains(r#"`h1` showed the text "Farewell""#)
            && wrong_text.contains(r#"the matches' texts: ["Greeter"]"#),
        "{wrong_text}"
    );
}

/// The message `work` panics with; fails the test when it does not panic.
fn panic_message(work: impl FnOnce()) -> String {
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .expect_err("it fails the test");
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|text| (*text).to_owned()))
        .unwrap_or_default()
}

/// The ids of the processes whose folder in /proc (`/proc/PID`) passes `matching`.
fn processes(matching: impl Fn(&Path) -> bool) -> Vec<u32> {
    fs_err::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_string_lossy().parse::<u32>().ok()?;
            matching(&entry.path()).then_some(pid)
        })
        .collect()
}

/// The process ids whose process group is `group`.
fn processes_in_group(group: u32) -> Vec<u32> {
    let group = group.to_string();
    processes(|folder| {
        // Fields after the name in parentheses: state, parent, process group, ...
        fs_err::read_to_string(folder.join("stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, fields)| fields.split_whitespace().nth(2))
                == Some(group.as_str())
        })
    })
}

/// The process ids whose command line mentions `needle` (a profile folder).
fn processes_mentioning(needle: &Path) -> Vec<u32> {
    let needle = needle.to_string_lossy();
    processes(|folder| {
        fs_err::read(folder.join("cmdline")).is_ok_and(|command_line| {
            String::from_utf8_lossy(&command_line).contains(needle.as_ref())
        })
    })
}

/// Wait until neither the process group `group` nor any process naming `profile` is left.
fn assert_processes_end(group: u32, profile: &Path) {
    let ended = skillbox_testkit::wait_until(PROCESS_EXIT_LIMIT, Duration::from_millis(50), || {
        processes_in_group(group).is_empty() && processes_mentioning(profile).is_empty()
    });
    assert!(
        ended,
        "left running after {PROCESS_EXIT_LIMIT:?}: group {group}: {:?}; naming {}: {:?}",
        processes_in_group(group),
        profile.display(),
        processes_mentioning(profile)
    );
}

#[test]
fn dropping_a_browser_ends_chromedriver_and_every_chromium_it_started() {
    let started = Instant::now();
    let Some(browser) = Browser::start() else {
        return;
    };
    let browser_ready = started.elapsed();
    let page = browser.new_page();
    page.goto(&format!("{}/greeter", site()));
    let first_page_ready = started.elapsed();
    eprintln!(
        "timing: Browser::start {} ms, then new_page + goto: {} ms in all",
        browser_ready.as_millis(),
        first_page_ready.as_millis()
    );
    let group = browser.process_group();
    let profile = page.profile_dir().to_owned();
    assert!(
        processes_in_group(group).len() > 2,
        "chromedriver and Chromium run in group {group}: {:?}",
        processes_in_group(group)
    );
    assert!(!processes_mentioning(&profile).is_empty());

    drop(page);
    drop(browser);

    assert_processes_end(group, &profile);
    assert!(!profile.exists(), "{} is left", profile.display());
}

/// Run as a child by the next test: starts a browser with a page and exits without dropping
/// them, as a test binary does with [`Browser::shared`]. Does nothing in a normal run.
#[test]
fn helper_forgets_a_running_browser() {
    if std::env::var_os(HELPER_VARIABLE).is_none_or(|name| name != "forget") {
        return;
    }
    let browser = Browser::start().expect("the parent test checked that there is a browser");
    let page = browser.new_page();
    page.goto(&format!("{}/greeter", site()));
    println!(
        "GROUP={} PROFILE={}",
        browser.process_group(),
        page.profile_dir().display()
    );
    std::mem::forget(page);
    std::mem::forget(browser);
}

/// This test binary, running the test `name` of this module alone with `environment`.
fn run_this_binary(name: &str, environment: &[(&str, &str)]) -> std::process::Output {
    // The test binary names a test by its module path without the crate: `browser::name`.
    let module = module_path!()
        .split_once("::")
        .map_or(module_path!(), |(_, module)| module);
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &format!("{module}::{name}"),
            "--nocapture",
            "--test-threads=1",
        ])
        .env_remove("SKILLBOX_REQUIRE_BROWSER")
        .env_remove("SKILLBOX_SKIP_BROWSER")
        .envs(environment.iter().copied())
        .output()
        .unwrap()
}

#[test]
fn a_browser_never_dropped_ends_with_its_test_binary() {
    if Browser::shared().is_none() {
        return;
    }
    let output = run_this_binary(
        "helper_forgets_a_running_browser",
        &[(HELPER_VARIABLE, "forget")],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|line| Some(line.split_once("GROUP=")?.1))
        .unwrap_or_else(|| panic!("no GROUP= line in {stdout}"));
    let (group, profile) = line.split_once(" PROFILE=").unwrap();

    assert_processes_end(group.parse().unwrap(), Path::new(profile));
    // The forgotten page could not remove its profile folder.
    fs_err::remove_dir_all(profile).unwrap();
}

#[test]
fn skip_variable_skips_with_the_reason_and_require_variable_overrides_it() {
    let test = "typing_and_clicking_change_the_page_and_a_clean_page_has_no_console_errors";

    let skipped = run_this_binary(test, &[("SKILLBOX_SKIP_BROWSER", "1")]);
    let stderr = String::from_utf8_lossy(&skipped.stderr);
    assert!(skipped.status.success(), "{stderr}");
    assert!(
        stderr.contains("skipped: the browser is missing: SKILLBOX_SKIP_BROWSER is set"),
        "{stderr}"
    );

    let required = run_this_binary(
        test,
        &[
            ("SKILLBOX_SKIP_BROWSER", "1"),
            ("SKILLBOX_REQUIRE_BROWSER", "1"),
        ],
    );
    let stderr = String::from_utf8_lossy(&required.stderr);
    assert!(!required.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "SKILLBOX_REQUIRE_BROWSER is set but the browser is missing: SKILLBOX_SKIP_BROWSER is set"
        ),
        "{stderr}"
    );
}
