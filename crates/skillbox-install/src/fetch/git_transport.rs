//! The connections of a git fetch, guarded. Skillbox opens `git://` and ssh connections itself
//! (gitoxide's own would wait forever for a server that stalls) and wraps the bodies of
//! gitoxide's HTTP client, so that on every transport:
//!
//! - a server that stays silent for longer than [`InstallLimits::network_timeout`] (connecting
//!   included) ends the fetch with a clear error;
//! - what a server sends before it is asked for objects (its capabilities and the refs it
//!   advertises, which a hostile server can make endless) is bounded by
//!   [`InstallLimits::max_advertised_bytes`] while it is read, before it fills memory.
//!
//! The pack that follows is bounded by the fetch itself (its size on disk is watched).
//! Over ssh, skillbox runs `ssh` the way gitoxide would; a `core.sshCommand` or
//! `GIT_SSH_COMMAND` of your own is run by gitoxide instead, with that command's own limits.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gix::bstr::ByteSlice;
use gix_transport::client::blocking_io::Transport;
use gix_transport::client::blocking_io::http::{GetResponse, Http, PostBodyDataKind, PostResponse};
use gix_transport::client::git::ConnectMode;

use crate::limits::InstallLimits;

/// Why a guarded connection was cut short, kept for the fetch's error message (gitoxide's own
/// wraps the cause in several layers of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CutShort {
    /// The server sent nothing (or took no data) for this long.
    Silent(Duration),
    /// The server sent more than this many bytes before it was asked for objects.
    Advertisement(u64),
}

/// What the guarded connections of one fetch found, shared with them.
#[derive(Debug, Default)]
pub(crate) struct FetchWatch {
    cut_short: Mutex<Option<CutShort>>,
}

impl FetchWatch {
    fn record(&self, why: CutShort) {
        if let Ok(mut cut_short) = self.cut_short.lock() {
            cut_short.get_or_insert(why);
        }
    }

    /// Why a connection of the fetch was cut short, if one was.
    pub(crate) fn cut_short(&self) -> Option<CutShort> {
        self.cut_short.lock().ok().and_then(|cut_short| *cut_short)
    }
}

/// The state one connection's reader and writer share.
#[derive(Debug)]
struct Guard {
    /// Whether the client has asked for objects (written a `want` line): from then on what
    /// the server sends is the pack.
    asked_for_objects: AtomicBool,
    /// Bytes received before that.
    advertised: AtomicU64,
    limits: InstallLimits,
    watch: Arc<FetchWatch>,
}

impl Guard {
    fn new(limits: &InstallLimits, watch: &Arc<FetchWatch>) -> Arc<Guard> {
        Arc::new(Guard {
            asked_for_objects: AtomicBool::new(false),
            advertised: AtomicU64::new(0),
            limits: *limits,
            watch: Arc::clone(watch),
        })
    }

    /// Count `bytes` received; an error once the advertisement is past its limit.
    fn received(&self, bytes: usize) -> std::io::Result<()> {
        if self.asked_for_objects.load(Ordering::Relaxed) {
            return Ok(());
        }
        let total = self.advertised.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
        let limit = self.limits.max_advertised_bytes;
        if total > limit {
            self.watch.record(CutShort::Advertisement(limit));
            return Err(std::io::Error::other(format!(
                "the server sent more than {limit} bytes of refs and capabilities before any object was asked for"
            )));
        }
        Ok(())
    }

    /// The error for a wait that timed out.
    fn silent(&self) -> std::io::Error {
        let limit = self.limits.network_timeout;
        self.watch.record(CutShort::Silent(limit));
        std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("the server sent nothing for {} s", limit.as_secs()),
        )
    }

    /// A timeout of the stream as this guard's error; other errors as they are.
    fn map_error(&self, error: std::io::Error) -> std::io::Error {
        match error.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => self.silent(),
            _ => error,
        }
    }
}

/// A reader of what a server sends: bytes are counted against the advertisement limit as they
/// are taken, and once past it every read fails.
struct LimitedRead<R> {
    inner: R,
    guard: Arc<Guard>,
}

impl<R> LimitedRead<R> {
    fn new(inner: R, guard: &Arc<Guard>) -> Self {
        LimitedRead {
            inner,
            guard: Arc::clone(guard),
        }
    }
}

impl<R: BufRead> Read for LimitedRead<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let count = available.len().min(buffer.len());
        buffer[..count].copy_from_slice(&available[..count]);
        self.consume(count);
        Ok(count)
    }
}

impl<R: BufRead> BufRead for LimitedRead<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.guard.received(0)?;
        let guard = &self.guard;
        self.inner
            .fill_buf()
            .map_err(|error| guard.map_error(error))
    }

    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount);
        // Past the limit, the next read fails.
        let _ = self.guard.received(amount);
    }
}

/// A writer of what the client sends, watching for its first `want` line.
struct WatchedWrite<W> {
    inner: W,
    scanner: PacketScanner,
    guard: Arc<Guard>,
}

impl<W: Write> Write for WatchedWrite<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let written = self
            .inner
            .write(bytes)
            .map_err(|error| self.guard.map_error(error))?;
        if self.scanner.feed(&bytes[..written]) {
            self.guard.asked_for_objects.store(true, Ordering::Relaxed);
        }
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner
            .flush()
            .map_err(|error| self.guard.map_error(error))
    }
}

impl<W> WatchedWrite<W> {
    fn new(inner: W, guard: &Arc<Guard>) -> Self {
        WatchedWrite {
            inner,
            scanner: PacketScanner::default(),
            guard: Arc::clone(guard),
        }
    }
}

/// Reads the git packet lines (`LLLL` hex length, then the payload) a client writes, as they
/// are written in pieces, and tells when one starts with `want `.
#[derive(Debug, Default)]
struct PacketScanner {
    header: Vec<u8>,
    /// Payload bytes still to come of the current line.
    remaining: usize,
    /// The start of the current line's payload (up to five bytes).
    start: Vec<u8>,
    /// Not packet lines after all: stop looking.
    lost: bool,
}

impl PacketScanner {
    /// Read `bytes`; whether a line starting with `want ` was completed or begun in them.
    fn feed(&mut self, mut bytes: &[u8]) -> bool {
        const WANT: &[u8] = b"want ";
        let mut saw_want = false;
        while !bytes.is_empty() && !self.lost {
            if self.remaining == 0 {
                let needed = 4 - self.header.len();
                let take = needed.min(bytes.len());
                self.header.extend_from_slice(&bytes[..take]);
                bytes = &bytes[take..];
                if self.header.len() < 4 {
                    break;
                }
                let length = std::str::from_utf8(&self.header)
                    .ok()
                    .and_then(|hex| usize::from_str_radix(hex, 16).ok());
                self.header.clear();
                match length {
                    // Flush, delimiter and response-end lines carry no payload.
                    Some(0..=3) => {}
                    Some(length) => {
                        self.remaining = length - 4;
                        self.start.clear();
                    }
                    None => self.lost = true,
                }
            } else {
                let take = self.remaining.min(bytes.len());
                let wanted = WANT.len().saturating_sub(self.start.len()).min(take);
                self.start.extend_from_slice(&bytes[..wanted]);
                if self.start == WANT {
                    saw_want = true;
                }
                self.remaining -= take;
                bytes = &bytes[take..];
            }
        }
        saw_want
    }
}

/// Bytes of a child's output, read on a thread of their own so that a wait for them can end.
struct ChildOutput {
    chunks: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    pending: Vec<u8>,
    offset: usize,
    timeout: Duration,
    /// The child, killed and reaped when the connection is dropped.
    child: std::process::Child,
}

impl Read for ChildOutput {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let count = available.len().min(buffer.len());
        buffer[..count].copy_from_slice(&available[..count]);
        self.consume(count);
        Ok(count)
    }
}

impl BufRead for ChildOutput {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.offset >= self.pending.len() {
            match self.chunks.recv_timeout(self.timeout) {
                Ok(chunk) => {
                    self.pending = chunk?;
                    self.offset = 0;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    // The guard turns this into its message; the child goes now, not at drop.
                    let _ = self.child.kill();
                    return Err(std::io::ErrorKind::TimedOut.into());
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Ok(&[]),
            }
        }
        Ok(&self.pending[self.offset..])
    }

    fn consume(&mut self, amount: usize) {
        self.offset = (self.offset + amount).min(self.pending.len());
    }
}

impl Drop for ChildOutput {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How much of a child's output one read on its reading thread takes.
const CHILD_READ_BYTES: usize = 64 * 1024;

/// Read `output` on a thread of its own into a channel (a few chunks deep, so a slow reader
/// holds the child back rather than filling memory).
fn read_on_a_thread(
    mut output: impl Read + Send + 'static,
) -> std::io::Result<std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>> {
    let (send, receive) = std::sync::mpsc::sync_channel(4);
    std::thread::Builder::new()
        .name("git ssh output".into())
        .spawn(move || {
            let mut buffer = vec![0u8; CHILD_READ_BYTES];
            loop {
                match output.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(count) => {
                        if send.send(Ok(buffer[..count].to_vec())).is_err() {
                            break;
                        }
                    }
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(error) => {
                        let _ = send.send(Err(error));
                        break;
                    }
                }
            }
        })?;
    Ok(receive)
}

/// A `git://` connection to the daemon `url` names: connecting, and every wait after, bounded
/// by the network timeout; what it sends before objects are asked for, by the advertisement
/// limit.
///
/// # Errors
/// When the host cannot be resolved or reached in time.
pub(crate) fn daemon_transport(
    url: &gix::Url,
    version: gix_transport::Protocol,
    limits: &InstallLimits,
    watch: &Arc<FetchWatch>,
) -> std::io::Result<Box<dyn Transport + Send>> {
    let host = url
        .host()
        .ok_or_else(|| std::io::Error::other("the URL names no host"))?;
    let port = url.port.unwrap_or(DEFAULT_DAEMON_PORT);
    let guard = Guard::new(limits, watch);
    let mut last_error = std::io::Error::other(format!("`{host}` resolves to no address"));
    let mut connected = None;
    for address in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, limits.network_timeout) {
            Ok(stream) => {
                connected = Some(stream);
                break;
            }
            Err(error) => last_error = guard.map_error(error),
        }
    }
    let stream = connected.ok_or(last_error)?;
    stream.set_read_timeout(Some(limits.network_timeout))?;
    stream.set_write_timeout(Some(limits.network_timeout))?;
    let writer = stream.try_clone()?;
    let connection = gix_transport::client::git::blocking_io::Connection::new(
        LimitedRead::new(BufReader::new(stream), &guard),
        WatchedWrite::new(writer, &guard),
        version,
        url.path.clone(),
        Some((host.to_owned(), url.port)),
        ConnectMode::Daemon,
        false,
    )
    .custom_url(Some(url.to_bstring()));
    Ok(Box::new(connection))
}

/// The port of a git daemon when a `git://` URL names none.
const DEFAULT_DAEMON_PORT: u16 = 9418;

/// An ssh connection to the repository `url` names, running `ssh` as gitoxide would (with
/// `GIT_PROTOCOL` for protocol version 2) and `git-upload-pack` on the server: every wait for
/// its output bounded by the network timeout (the child is killed then), what it sends before
/// objects are asked for by the advertisement limit.
///
/// # Errors
/// When the user or host could be read as an option of `ssh`, a path as one of the server's
/// command, or `ssh` cannot be started.
pub(crate) fn ssh_transport(
    url: &gix::Url,
    version: gix_transport::Protocol,
    limits: &InstallLimits,
    watch: &Arc<FetchWatch>,
) -> std::io::Result<Box<dyn Transport + Send>> {
    use gix::url::ArgumentSafety;
    let refuse = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, what);
    let destination = match (url.user_as_argument(), url.host_as_argument()) {
        (
            ArgumentSafety::Usable(user),
            ArgumentSafety::Usable(host) | ArgumentSafety::Dangerous(host),
        ) => {
            format!("{user}@{host}")
        }
        (ArgumentSafety::Absent, ArgumentSafety::Usable(host)) => host.to_owned(),
        (ArgumentSafety::Dangerous(user), _) => {
            return Err(refuse(format!(
                "the user name `{user}` could be read as an option of ssh"
            )));
        }
        (_, ArgumentSafety::Dangerous(host)) => {
            return Err(refuse(format!(
                "the host name `{host}` could be read as an option of ssh"
            )));
        }
        (_, ArgumentSafety::Absent) => return Err(refuse("the URL names no host".to_owned())),
    };
    let path = gix::url::expand_path::for_shell(url.path.clone());
    if path.trim().first() == Some(&b'-') {
        return Err(refuse(format!(
            "the path `{path}` could be read as an option of the server's command"
        )));
    }
    let mut command = std::process::Command::new("ssh");
    if version != gix_transport::Protocol::V1 {
        command
            .args(["-o", "SendEnv=GIT_PROTOCOL"])
            .env("GIT_PROTOCOL", format!("version={}", version as usize));
    }
    if let Some(port) = url.port {
        command.arg(format!("-p{port}"));
    }
    command
        .arg(destination)
        .arg("git-upload-pack")
        .arg(&*gix::quote::single(path.as_bstr()).to_os_str_lossy())
        .env("LANG", "C")
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit());
    let mut child = command.spawn().map_err(|error| {
        std::io::Error::new(error.kind(), format!("cannot start `ssh`: {error}"))
    })?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(std::io::Error::other("`ssh` started without its pipes"));
    };
    let chunks = match read_on_a_thread(stdout) {
        Ok(chunks) => chunks,
        Err(error) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(error);
        }
    };
    let guard = Guard::new(limits, watch);
    let output = ChildOutput {
        chunks,
        pending: Vec::new(),
        offset: 0,
        timeout: limits.network_timeout,
        child,
    };
    let connection = gix_transport::client::git::blocking_io::Connection::new(
        LimitedRead::new(output, &guard),
        WatchedWrite::new(stdin, &guard),
        version,
        path,
        None::<(String, Option<u16>)>,
        ConnectMode::Process,
        false,
    )
    .custom_url(Some(url.to_bstring()));
    Ok(Box::new(connection))
}

/// gitoxide's HTTP client with its response bodies guarded: the advertisement limit holds for
/// the refs a server lists, over `GET` (protocol 1) or `POST` (protocol 2's `ls-refs`).
pub(crate) struct GuardedHttp<H> {
    inner: H,
    guard: Arc<Guard>,
}

impl<H> GuardedHttp<H> {
    /// Guard `inner`'s bodies.
    pub(crate) fn new(inner: H, limits: &InstallLimits, watch: &Arc<FetchWatch>) -> Self {
        GuardedHttp {
            inner,
            guard: Guard::new(limits, watch),
        }
    }
}

impl<H: Http> Http for GuardedHttp<H> {
    type Headers = H::Headers;
    type ResponseBody = LimitedBody<H::ResponseBody>;
    type PostBody = WatchedBody<H::PostBody>;

    fn get(
        &mut self,
        url: &str,
        base_url: &str,
        headers: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> gix::Result<GetResponse<Self::Headers, Self::ResponseBody>> {
        let response = self.inner.get(url, base_url, headers)?;
        Ok(GetResponse {
            headers: response.headers,
            body: LimitedBody(LimitedRead::new(response.body, &self.guard)),
        })
    }

    fn post(
        &mut self,
        url: &str,
        base_url: &str,
        headers: impl IntoIterator<Item = impl AsRef<str>>,
        body: PostBodyDataKind,
    ) -> gix::Result<PostResponse<Self::Headers, Self::ResponseBody, Self::PostBody>> {
        let response = self.inner.post(url, base_url, headers, body)?;
        Ok(PostResponse {
            post_body: WatchedBody(WatchedWrite::new(response.post_body, &self.guard)),
            headers: response.headers,
            body: LimitedBody(LimitedRead::new(response.body, &self.guard)),
        })
    }

    fn configure(&mut self, config: &dyn std::any::Any) -> gix::Result {
        self.inner.configure(config)
    }

    fn redirected_base_url(&self) -> Option<String> {
        self.inner.redirected_base_url()
    }
}

/// A response body of [`GuardedHttp`].
pub(crate) struct LimitedBody<B>(LimitedRead<B>);

impl<B: BufRead> Read for LimitedBody<B> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buffer)
    }
}

impl<B: BufRead> BufRead for LimitedBody<B> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.0.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.0.consume(amount);
    }
}

/// A request body of [`GuardedHttp`].
pub(crate) struct WatchedBody<W>(WatchedWrite<W>);

impl<W: Write> Write for WatchedBody<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(payload: &str) -> Vec<u8> {
        format!("{:04x}{payload}", payload.len() + 4).into_bytes()
    }

    #[test]
    fn the_first_want_line_is_seen_however_the_lines_are_cut() {
        let mut lines = Vec::new();
        lines.extend(packet("command=fetch\n"));
        lines.extend(b"0001");
        lines.extend(packet("thin-pack\n"));
        lines.extend(packet("want 0123456789012345678901234567890123456789\n"));
        lines.extend(b"0000");
        for piece in [1, 2, 3, 4, 5, 7, lines.len()] {
            let mut scanner = PacketScanner::default();
            let saw = lines
                .chunks(piece)
                .map(|chunk| scanner.feed(chunk))
                .collect::<Vec<bool>>();
            assert!(saw.iter().any(|saw| *saw), "pieces of {piece}");
        }
        let mut listing = PacketScanner::default();
        let mut refs = Vec::new();
        refs.extend(packet("command=ls-refs\n"));
        refs.extend(b"0001");
        refs.extend(packet("ref-prefix refs/heads/want \n"));
        refs.extend(packet("wantonly\n"));
        refs.extend(b"0000");
        assert!(!listing.feed(&refs));
    }

    #[test]
    fn an_advertisement_past_its_limit_fails_the_reads_and_is_recorded() {
        let limits = InstallLimits {
            max_advertised_bytes: 10,
            ..InstallLimits::default()
        };
        let watch = Arc::new(FetchWatch::default());
        let guard = Guard::new(&limits, &watch);
        let mut reader = LimitedRead::new(std::io::Cursor::new(vec![b'x'; 100]), &guard);
        let mut buffer = [0u8; 8];
        assert_eq!(reader.read(&mut buffer).unwrap(), 8);
        assert_eq!(reader.read(&mut buffer).unwrap(), 8);
        let error = reader.read(&mut buffer).unwrap_err().to_string();
        assert!(error.contains("more than 10 bytes"), "{error}");
        assert_eq!(watch.cut_short(), Some(CutShort::Advertisement(10)));

        // Once objects are asked for, the pack is not counted.
        let watch = Arc::new(FetchWatch::default());
        let guard = Guard::new(&limits, &watch);
        let mut writer = WatchedWrite::new(Vec::new(), &guard);
        writer
            .write_all(&packet("want 0123456789012345678901234567890123456789\n"))
            .unwrap();
        let mut reader = LimitedRead::new(std::io::Cursor::new(vec![b'x'; 100]), &guard);
        let mut all = Vec::new();
        reader.read_to_end(&mut all).unwrap();
        assert_eq!(all.len(), 100);
        assert_eq!(watch.cut_short(), None);
    }
}
