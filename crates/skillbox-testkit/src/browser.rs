//! Headless Chromium for browser tests: Debian's `chromium` driven over WebDriver by its
//! `chromedriver`, as `scripts/setup-browser.sh` provisions them (once per machine). A blocking
//! API for plain `#[test]` functions: every call runs on the testkit's runtime
//! ([`crate::runtime`]), so call it from a test's own thread, never from inside async code.
//!
//! ```no_run
//! use skillbox_testkit::browser::Browser;
//!
//! let Some(browser) = Browser::shared() else { return }; // skipped, with the reason on stderr
//! let page = browser.new_page();
//! page.goto("http://127.0.0.1:7878/");
//! page.find("#prompt").type_text("hello");
//! page.find("button[type=submit]").click();
//! page.wait_for_text("#answer", "hello");
//! assert_eq!(page.console_errors(), []);
//! page.screenshot("playground");
//! ```
//!
//! One `chromedriver` serves every page of a [`Browser`]; each [`Page`] is its own WebDriver
//! session, hence its own Chromium with a fresh profile folder. `chromedriver` and every
//! Chromium process it starts share one process group, killed when the [`Browser`] is dropped
//! or, for [`Browser::shared`], when the test binary exits.

use std::fmt;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant};

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

/// Width of every page's window in CSS pixels, fixed so screenshots are comparable.
pub const WINDOW_WIDTH_PIXELS: u32 = 1280;
/// Height of every page's window in CSS pixels.
pub const WINDOW_HEIGHT_PIXELS: u32 = 900;
/// How long [`Page::wait_for`] and its kin wait unless told otherwise.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long `chromedriver` may take to say which port it listens on and answer `/status`.
const DRIVER_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a starting `chromedriver`'s `/status` is asked.
const DRIVER_STATUS_POLL: Duration = Duration::from_millis(50);
/// The upper bound of one WebDriver command (a new session starts a browser: seconds on a
/// loaded machine), so a hung browser fails its test instead of hanging the suite.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// How long Chromium may take to load a page before `goto` fails.
const PAGE_LOAD_TIMEOUT_MILLISECONDS: u64 = 30_000;
/// How often the `wait_for` family looks again.
const WAIT_POLL: Duration = Duration::from_millis(50);
/// How much of a page's text a failure message quotes.
const QUOTED_BODY_CHARACTERS: usize = 2_000;
/// What `chromedriver` prints on stdout once it listens, followed by the port and a period.
const DRIVER_LISTENING: &str = "was started successfully on port ";

/// Chromium's switches for every page. `--disable-background-networking` and its kin keep it
/// from calling home: on a closed network those connections fail, many at a time.
const CHROMIUM_SWITCHES: &[&str] = &[
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
    "--lang=en-US",
];

/// A running `chromedriver` with Chromium at hand.
#[derive(Debug)]
pub struct Browser {
    chromium: PathBuf,
    webdriver_url: String,
    /// chromedriver's stderr; removed as the process group ends.
    log: PathBuf,
    driver: DriverProcess,
}

/// The bash wrapper leading `chromedriver`'s process group: closing its stdin (on drop, or
/// when the test binary exits) makes it kill the whole group, itself included.
#[derive(Debug)]
struct DriverProcess {
    wrapper: Child,
    stdin: Option<ChildStdin>,
}

impl Drop for DriverProcess {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.wrapper.wait();
    }
}

impl Browser {
    /// One browser for the whole test binary, started on first use (see [`Browser::start`]);
    /// its processes end when the binary exits. `None`, with the reason on stderr, when it
    /// cannot be provisioned or `SKILLBOX_SKIP_BROWSER` is set, unless
    /// `SKILLBOX_REQUIRE_BROWSER` is set (CI), which fails the test instead.
    #[must_use]
    pub fn shared() -> Option<&'static Browser> {
        static BROWSER: OnceLock<Result<Browser, String>> = OnceLock::new();
        match BROWSER.get_or_init(try_start) {
            Ok(browser) => Some(browser),
            Err(reason) => skip(reason),
        }
    }

    /// A browser of its own: provisions Chromium and chromedriver when missing
    /// (`scripts/setup-browser.sh`: a no-op once installed), starts `chromedriver` on a free
    /// port of 127.0.0.1 and waits until it answers. Dropping it kills `chromedriver` and every
    /// Chromium it started. `None` as for [`Browser::shared`]; fails the test when the browser is
    /// installed but does not start.
    #[must_use]
    pub fn start() -> Option<Browser> {
        try_start().map_or_else(|reason| skip(&reason), Some)
    }

    /// The WebDriver endpoint, `http://127.0.0.1:PORT`.
    #[must_use]
    pub fn webdriver_url(&self) -> &str {
        &self.webdriver_url
    }

    /// The id of the process group holding `chromedriver` and its Chromium processes.
    #[must_use]
    pub fn process_group(&self) -> u32 {
        self.driver.wrapper.id()
    }

    /// Open a new page: a WebDriver session with its own Chromium and a fresh, empty profile
    /// folder, its window [`WINDOW_WIDTH_PIXELS`] by [`WINDOW_HEIGHT_PIXELS`], recording the
    /// console for [`Page::console_errors`].
    #[must_use]
    #[track_caller]
    pub fn new_page(&self) -> Page<'_> {
        let profile = tempfile::Builder::new()
            .prefix("skillbox-chromium-")
            .tempdir()
            .expect("a temporary profile folder for Chromium");
        let mut arguments: Vec<String> = CHROMIUM_SWITCHES
            .iter()
            .map(|&switch| switch.to_owned())
            .collect();
        // Chromium refuses to run as root inside its sandbox; anyone else keeps the sandbox.
        if rustix::process::geteuid().is_root() {
            arguments.push("--no-sandbox".to_owned());
        }
        arguments.push(format!(
            "--window-size={WINDOW_WIDTH_PIXELS},{WINDOW_HEIGHT_PIXELS}"
        ));
        arguments.push(format!("--user-data-dir={}", profile.path().display()));
        let capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": { "binary": self.chromium, "args": arguments },
            "goog:loggingPrefs": { "browser": "ALL" },
            "timeouts": { "pageLoad": PAGE_LOAD_TIMEOUT_MILLISECONDS, "script": COMMAND_TIMEOUT.as_millis() },
        });
        let Value::Object(capabilities) = capabilities else {
            unreachable!("json! of an object literal is an object")
        };
        let connect = async {
            // chromedriver listens on loopback: plain HTTP, no TLS stack.
            ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(capabilities)
                .connect(&self.webdriver_url)
                .await
                .map_err(|error| error.to_string())
        };
        let client = match block_on(connect) {
            Ok(client) => client,
            Err(error) => panic!(
                "starting Chromium through chromedriver failed: {error}\nchromedriver's log ({}):\n{}",
                self.log.display(),
                fs_err::read_to_string(&self.log).unwrap_or_default()
            ),
        };
        let page = Page {
            _browser: self,
            client: Some(client),
            profile,
            wait_timeout: DEFAULT_WAIT_TIMEOUT,
        };
        page.fit_viewport();
        page
    }
}

/// One browser tab in a WebDriver session of its own. Every method fails the test, with a
/// message naming what was asked and the page's URL and text, instead of returning an error.
/// Dropping it ends the session (its Chromium exits) and removes its profile folder.
pub struct Page<'browser> {
    _browser: &'browser Browser,
    client: Option<Client>,
    profile: tempfile::TempDir,
    wait_timeout: Duration,
}

impl fmt::Debug for Page<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Page")
            .field("profile", &self.profile.path())
            .field("wait_timeout", &self.wait_timeout)
            .finish_non_exhaustive()
    }
}

impl Drop for Page<'_> {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = block_on(client.close());
        }
    }
}

impl Page<'_> {
    fn client(&self) -> &Client {
        self.client
            .as_ref()
            .expect("the client lives until the page is dropped")
    }

    /// Run one WebDriver command, failing the test with `what` and the page's state when it
    /// fails or takes longer than the command timeout.
    #[track_caller]
    fn run<T, E: fmt::Display>(
        &self,
        what: &str,
        command: impl Future<Output = Result<T, E>>,
    ) -> T {
        match block_on(command) {
            Ok(value) => value,
            Err(error) => panic!("{what} failed: {error}\n{}", self.describe()),
        }
    }

    /// The current URL and the start of the page's visible text, for failure messages.
    fn describe(&self) -> String {
        let url = block_on(self.client().current_url())
            .map_or_else(|error| format!("(unknown: {error})"), |url| url.to_string());
        let text = block_on(self.client().execute(
            "return document.body ? document.body.innerText : '(no body)'",
            Vec::new(),
        ))
        .map_or_else(
            |error| format!("(unknown: {error})"),
            |value| value.as_str().unwrap_or_default().to_owned(),
        );
        let quoted: String = text.chars().take(QUOTED_BODY_CHARACTERS).collect();
        let cut = if quoted.len() < text.len() {
            "\n[...]"
        } else {
            ""
        };
        format!("page URL: {url}\npage text:\n{quoted}{cut}")
    }

    /// Size the window so that the viewport, which the window's frame makes smaller than
    /// `--window-size` says, is [`WINDOW_WIDTH_PIXELS`] by [`WINDOW_HEIGHT_PIXELS`].
    #[track_caller]
    fn fit_viewport(&self) {
        let frame = self.execute(
            "return [window.outerWidth - window.innerWidth, window.outerHeight - window.innerHeight]",
            [],
        );
        let frame_pixels = |index: usize| {
            frame[index]
                .as_u64()
                .and_then(|pixels| u32::try_from(pixels).ok())
                .unwrap_or_else(|| panic!("the window's frame is not a size in pixels: {frame}"))
        };
        self.run(
            "sizing the window",
            self.client().set_window_size(
                WINDOW_WIDTH_PIXELS + frame_pixels(0),
                WINDOW_HEIGHT_PIXELS + frame_pixels(1),
            ),
        );
    }

    /// The profile folder of this page's Chromium (removed when the page is dropped).
    #[must_use]
    pub fn profile_dir(&self) -> &Path {
        self.profile.path()
    }

    /// Change how long the `wait_for` family waits on this page (default
    /// [`DEFAULT_WAIT_TIMEOUT`]).
    pub fn set_wait_timeout(&mut self, timeout: Duration) {
        self.wait_timeout = timeout;
    }

    /// Load `url` and wait for its `load` event.
    #[track_caller]
    pub fn goto(&self, url: &str) {
        self.run(&format!("loading {url}"), self.client().goto(url));
    }

    /// The URL the page shows now.
    #[must_use]
    #[track_caller]
    pub fn current_url(&self) -> String {
        self.run("reading the current URL", self.client().current_url())
            .to_string()
    }

    /// The page's visible text (`document.body.innerText`).
    #[must_use]
    #[track_caller]
    pub fn body_text(&self) -> String {
        let text = self.execute("return document.body ? document.body.innerText : ''", []);
        text.as_str().unwrap_or_default().to_owned()
    }

    /// The first element matching the CSS selector `css`; fails the test when there is none
    /// (use [`Page::wait_for`] for elements that appear later).
    #[must_use]
    #[track_caller]
    pub fn find(&self, css: &str) -> Element<'_> {
        let element = self.run(
            &format!("finding `{css}`"),
            self.client().find(Locator::Css(css)),
        );
        Element {
            page: self,
            element,
            css: css.to_owned(),
        }
    }

    /// Every element matching the CSS selector `css`, in document order (none is no failure).
    #[must_use]
    #[track_caller]
    pub fn find_all(&self, css: &str) -> Vec<Element<'_>> {
        self.run(
            &format!("finding every `{css}`"),
            self.client().find_all(Locator::Css(css)),
        )
        .into_iter()
        .map(|element| Element {
            page: self,
            element,
            css: css.to_owned(),
        })
        .collect()
    }

    /// Wait until an element matches `css` and return the first; fails the test, with the
    /// page's URL and text, when none has appeared within the wait timeout.
    #[track_caller]
    pub fn wait_for(&self, css: &str) -> Element<'_> {
        self.wait_until(&format!("an element matching `{css}`"), || {
            self.find_all(css).into_iter().next()
        })
    }

    /// Wait until an element matching `css` has a visible text containing `text`, and return
    /// it; fails the test as [`Page::wait_for`] does, quoting the texts of the matches seen last.
    #[track_caller]
    pub fn wait_for_text(&self, css: &str, text: &str) -> Element<'_> {
        let seen = std::cell::RefCell::new(Vec::new());
        let found = self.try_wait_until(|| {
            let matches = self.find_all(css);
            // A page's script may replace a match between finding and reading it (a stale
            // element): that match has no text yet, and the next poll finds the new one.
            let texts: Vec<String> = matches
                .iter()
                .map(|element| block_on(element.element.text()).unwrap_or_default())
                .collect();
            let position = texts.iter().position(|candidate| candidate.contains(text));
            *seen.borrow_mut() = texts;
            position.and_then(|index| matches.into_iter().nth(index))
        });
        found.unwrap_or_else(|| {
            panic!(
                "no element matching `{css}` showed the text {text:?} within {:?}; the matches' texts: {:?}\n{}",
                self.wait_timeout,
                seen.borrow(),
                self.describe()
            )
        })
    }

    /// Call `probe` until it gives a value or the wait timeout passes (`None`).
    fn try_wait_until<T>(&self, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
        let deadline = Instant::now() + self.wait_timeout;
        loop {
            if let Some(value) = probe() {
                return Some(value);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(WAIT_POLL);
        }
    }

    /// [`Page::try_wait_until`], failing the test with `what` and the page's state on timeout.
    #[track_caller]
    fn wait_until<T>(&self, what: &str, probe: impl FnMut() -> Option<T>) -> T {
        self.try_wait_until(probe).unwrap_or_else(|| {
            panic!(
                "timed out after {:?} waiting for {what}\n{}",
                self.wait_timeout,
                self.describe()
            )
        })
    }

    /// Run `script` (a function body: `return` gives its value; the arguments are in
    /// `arguments`) in the page and return its value as JSON.
    #[track_caller]
    pub fn execute(&self, script: &str, arguments: impl IntoIterator<Item = Value>) -> Value {
        self.run(
            "running a script in the page",
            self.client()
                .execute(script, arguments.into_iter().collect()),
        )
    }

    /// Save a PNG of the window to `<target>/screenshots/<name>.png` and return its path.
    /// `<target>` is Cargo's target folder. `name` may hold letters, digits, `-`, `_` and `.`.
    #[track_caller]
    pub fn screenshot(&self, name: &str) -> PathBuf {
        assert!(
            !name.is_empty()
                && !name.starts_with('.')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')),
            "screenshot name {name:?} must be letters, digits, '-', '_' or '.', not starting with '.'"
        );
        let png = self.run("taking a screenshot", self.client().screenshot());
        let folder = target_dir().join("screenshots");
        let path = folder.join(format!("{name}.png"));
        fs_err::create_dir_all(&folder).expect("the screenshot folder can be created");
        fs_err::write(&path, png).expect("the screenshot can be written");
        path
    }

    /// The console messages of level `SEVERE` logged since the previous call (or since the
    /// session began): `console.error`, uncaught exceptions, Content-Security-Policy
    /// violations, failed loads (a missing `/favicon.ico` too). Read through chromedriver's
    /// log endpoint, which hands each entry out once.
    #[must_use]
    #[track_caller]
    pub fn console_errors(&self) -> Vec<ConsoleEntry> {
        let entries = self.run(
            "reading the browser console",
            self.client().issue_cmd(BrowserLog),
        );
        let Value::Array(entries) = entries else {
            panic!("chromedriver's browser log is not a list: {entries}")
        };
        entries
            .iter()
            .filter(|entry| entry["level"] == "SEVERE")
            .map(|entry| ConsoleEntry {
                source: entry["source"].as_str().unwrap_or_default().to_owned(),
                message: entry["message"].as_str().unwrap_or_default().to_owned(),
            })
            .collect()
    }

    /// When the page first painted text or an image (`first-contentful-paint`), in
    /// milliseconds from the start of its navigation; waits for it as [`Page::wait_for`] does
    /// (a page with nothing to paint never has one).
    #[must_use]
    #[track_caller]
    pub fn first_contentful_paint_ms(&self) -> f64 {
        self.wait_until("the first contentful paint", || {
            self.execute(
                "const paint = performance.getEntriesByName('first-contentful-paint')[0]; \
                 return paint ? paint.startTime : null",
                [],
            )
            .as_f64()
        })
    }
}

/// An element of a [`Page`].
pub struct Element<'page> {
    page: &'page Page<'page>,
    element: fantoccini::elements::Element,
    css: String,
}

impl fmt::Debug for Element<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Element")
            .field("css", &self.css)
            .finish_non_exhaustive()
    }
}

impl Element<'_> {
    /// Click it (in its middle, as a person would: it must be visible and not covered).
    #[track_caller]
    pub fn click(&self) {
        self.page
            .run(&format!("clicking `{}`", self.css), self.element.click());
    }

    /// Type `text` into it, as keystrokes after what it already holds.
    #[track_caller]
    pub fn type_text(&self, text: &str) {
        self.page.run(
            &format!("typing into `{}`", self.css),
            self.element.send_keys(text),
        );
    }

    /// Empty an input or text area.
    #[track_caller]
    pub fn clear(&self) {
        self.page
            .run(&format!("clearing `{}`", self.css), self.element.clear());
    }

    /// Its visible text.
    #[must_use]
    #[track_caller]
    pub fn text(&self) -> String {
        self.page.run(
            &format!("reading the text of `{}`", self.css),
            self.element.text(),
        )
    }

    /// The value of its attribute `name`, if it has one.
    #[must_use]
    #[track_caller]
    pub fn attribute(&self, name: &str) -> Option<String> {
        self.page.run(
            &format!("reading the attribute {name:?} of `{}`", self.css),
            self.element.attr(name),
        )
    }

    /// The value of its DOM property `name` (`value` of an input), if set.
    #[must_use]
    #[track_caller]
    pub fn property(&self, name: &str) -> Option<String> {
        self.page.run(
            &format!("reading the property {name:?} of `{}`", self.css),
            self.element.prop(name),
        )
    }
}

/// A console message from [`Page::console_errors`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleEntry {
    /// Where it came from: `console-api` (`console.error`), `javascript` (an uncaught
    /// exception), `security` (a CSP violation), `network` (a failed load), ...
    pub source: String,
    /// The message, starting with the URL and line of its origin.
    pub message: String,
}

impl fmt::Display for ConsoleEntry {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "[{}] {}", self.source, self.message)
    }
}

/// chromedriver's log command (`POST /session/{id}/se/log`) for the `browser` log.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/se/log",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(json!({ "type": "browser" }).to_string()),
        )
    }
}

/// Run `future` on the testkit's runtime, bounded by the command timeout.
fn block_on<T, E: fmt::Display>(future: impl Future<Output = Result<T, E>>) -> Result<T, String> {
    // The timer is made inside the runtime: `timeout` needs one at hand when it is called.
    match crate::runtime().block_on(async { tokio::time::timeout(COMMAND_TIMEOUT, future).await }) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!(
            "no answer from chromedriver within {COMMAND_TIMEOUT:?}"
        )),
    }
}

/// The browser could not be had for `reason`: fails the test when `SKILLBOX_REQUIRE_BROWSER`
/// is set (CI), else says on stderr that the test is skipped.
fn skip<T>(reason: &str) -> Option<T> {
    assert!(
        std::env::var_os("SKILLBOX_REQUIRE_BROWSER").is_none(),
        "SKILLBOX_REQUIRE_BROWSER is set but the browser is missing: {reason}"
    );
    eprintln!("skipped: the browser is missing: {reason}");
    None
}

/// Provision and start; `Err` with the reason when the browser cannot be provisioned.
fn try_start() -> Result<Browser, String> {
    if std::env::var_os("SKILLBOX_SKIP_BROWSER").is_some() {
        return Err("SKILLBOX_SKIP_BROWSER is set".to_owned());
    }
    let [chromium, chromedriver] = crate::set_up_keys(
        "scripts/setup-browser.sh",
        None,
        ["CHROMIUM", "CHROMEDRIVER"],
    )
    .ok_or("scripts/setup-browser.sh failed (its message is above)")?;
    Ok(launch(chromium, &chromedriver))
}

/// Start `chromedriver --port=0` in a process group of its own under a bash wrapper that
/// kills the group when its stdin closes (the [`Browser`] is dropped or the test binary exits),
/// read the port it chose, and wait until `/status` answers.
fn launch(chromium: PathBuf, chromedriver: &Path) -> Browser {
    use std::os::unix::process::CommandExt;

    let log = tempfile::Builder::new()
        .prefix("skillbox-chromedriver-")
        .suffix(".log")
        .tempfile()
        .expect("a temporary file for chromedriver's log")
        .into_temp_path()
        .keep()
        .expect("chromedriver's log is kept until the wrapper removes it");
    // Background jobs of a non-interactive bash stay in its process group and read
    // /dev/null, so only `cat` holds the pipe; `kill -KILL 0` then ends the whole group. The
    // wrapper removes the log: a shared browser is never dropped.
    let script = r#""$@" --port=0 2>"$LOG" & cat >/dev/null; rm -f "$LOG"; kill -KILL 0"#;
    let mut wrapper = Command::new("bash")
        .args(["-c", script, "chromedriver-guard"])
        .arg(chromedriver)
        .env("LOG", &log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("bash runs");
    let stdout = wrapper
        .stdout
        .take()
        .expect("the wrapper's stdout is piped");
    let stdin = wrapper.stdin.take();
    // From here on, a failed start kills the group as this guard is dropped.
    let driver = DriverProcess { wrapper, stdin };

    // chromedriver prints its port on stdout; the reader then drains the pipe until it closes.
    let (port_sender, port_receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some((_, rest)) = line.split_once(DRIVER_LISTENING) {
                let _ = port_sender.send(rest.trim_end_matches('.').parse::<u16>());
            }
        }
    });
    let startup_log = || fs_err::read_to_string(&log).unwrap_or_default();
    let port = match port_receiver.recv_timeout(DRIVER_STARTUP_TIMEOUT) {
        Ok(Ok(port)) => port,
        Ok(Err(error)) => panic!(
            "chromedriver printed an unreadable port ({error}); its log: {}",
            startup_log()
        ),
        Err(_) => panic!(
            "chromedriver did not say which port it listens on within {DRIVER_STARTUP_TIMEOUT:?}; its log: {}",
            startup_log()
        ),
    };
    let ready = crate::wait_until(DRIVER_STARTUP_TIMEOUT, DRIVER_STATUS_POLL, || {
        crate::answers_ok(port, "/status")
    });
    assert!(
        ready,
        "chromedriver on port {port} did not answer /status within {DRIVER_STARTUP_TIMEOUT:?}; its log: {}",
        startup_log()
    );
    Browser {
        chromium,
        webdriver_url: format!("http://127.0.0.1:{port}"),
        log,
        driver,
    }
}

/// Cargo's target folder: `CARGO_TARGET_DIR` when absolute, else the nearest folder above the
/// running test executable that holds Cargo's `CACHEDIR.TAG`, else `<repository>/target`.
fn target_dir() -> PathBuf {
    if let Some(folder) = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from)
        && folder.is_absolute()
    {
        return folder;
    }
    std::env::current_exe()
        .ok()
        .and_then(|executable| {
            executable
                .ancestors()
                .find(|folder| folder.join("CACHEDIR.TAG").is_file())
                .map(Path::to_path_buf)
        })
        .unwrap_or_else(|| crate::repo_root().join("target"))
}
