//! One MCP client connection to a skill's server: the sandboxed child over its pipes, or
//! streamable HTTP; initialized and its tools listed within the start timeout.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, ready};

use rmcp::model::{ClientConfig, Implementation, PaginatedRequestParams};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use skillbox_core::ServerTransport;
use skillbox_core::Skill;
use skillbox_exec::executor::{ServerLaunch, ServerProcess};
use skillbox_exec::{ExecError, Executor};
use tokio::io::{AsyncRead, ReadBuf};

use super::pool::SkillServer;
use super::{MAX_MESSAGE_BYTES, MAX_TOOL_PAGES, MAX_TOOLS_PER_SERVER};

/// Hears what a server announces: a changed tool list is listed again (coalesced, so a flood
/// of notifications costs one listing at a time).
pub(super) struct Listener {
    pub(super) server: Weak<SkillServer>,
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("skillbox", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(server) = self.server.upgrade() {
            server.tools_changed();
        }
    }
}

/// A place among the servers a pool runs as processes, held while one runs; given back when
/// dropped.
#[derive(Debug)]
pub(super) struct RunningPlace(Arc<AtomicUsize>);

impl RunningPlace {
    /// A place of `count`, unless `max` are taken.
    pub(super) fn take(count: &Arc<AtomicUsize>, max: usize) -> Option<Self> {
        count
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |taken| {
                (taken < max).then_some(taken + 1)
            })
            .ok()?;
        Some(RunningPlace(Arc::clone(count)))
    }
}

impl Drop for RunningPlace {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A live connection. Dropped, the client stops and the server's process tree is killed.
pub(super) struct Connection {
    service: RunningService<RoleClient, Listener>,
    process: Option<Mutex<ServerProcess>>,
    /// Its place among the processes the pool runs (given back after the process is killed).
    _place: Option<RunningPlace>,
}

/// Run `work` with the server's executor and skill on the blocking pool: the trust gate and
/// the look at the skill's folder read files.
async fn off_the_async_threads<T: Send + 'static>(
    server: &SkillServer,
    work: impl FnOnce(&Executor, &Skill) -> Result<T, ExecError> + Send + 'static,
) -> Result<T, String> {
    let executor = std::sync::Arc::clone(&server.executor);
    let skill = std::sync::Arc::clone(&server.skill);
    tokio::task::spawn_blocking(move || work(&executor, &skill))
        .await
        .map_err(|error| format!("starting it failed: {error}"))?
        .map_err(|error| error.message)
}

impl Connection {
    /// Start (stdio) or reach (HTTP) the server and initialize it, holding `place` while it
    /// runs. No timeout here: the caller bounds the whole start.
    pub(super) async fn open(
        server: &std::sync::Arc<SkillServer>,
        place: Option<RunningPlace>,
    ) -> Result<Self, String> {
        let listener = Listener {
            server: std::sync::Arc::downgrade(server),
        };
        match &server.declaration.transport {
            ServerTransport::Stdio {
                command,
                args,
                env,
                env_values,
            } => {
                let launch_name = server.declaration.name.clone();
                let (command, args, env, env_values) = (
                    command.clone(),
                    args.clone(),
                    env.clone(),
                    env_values.clone(),
                );
                let copy = server.copy;
                let mut process = off_the_async_threads(server, move |executor, skill| {
                    executor.start_server(
                        skill,
                        copy,
                        ServerLaunch {
                            name: &launch_name,
                            command: &command,
                            args: &args,
                            env: &env,
                            env_values: &env_values,
                        },
                    )
                })
                .await?;
                let Some((stdout, stdin)) = process.take_pipes() else {
                    return Err("it started without its pipes".to_owned());
                };
                let transport = AsyncRwTransport::new_client(BoundedLines::new(stdout), stdin)
                    .with_max_line_length(MAX_MESSAGE_BYTES);
                match listener.serve(transport).await {
                    Ok(service) => Ok(Connection {
                        service,
                        process: Some(Mutex::new(process)),
                        _place: place,
                    }),
                    Err(error) => {
                        // Give a crashing server a moment to be seen as ended.
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        let ended = process.ended();
                        Err(match ended {
                            Some(how) => format!("it did not initialize: {how}"),
                            None => format!("it did not initialize: {error}"),
                        })
                    }
                }
            }
            ServerTransport::StreamableHttp { url } => {
                let name = server.declaration.name.clone();
                let copy = server.copy;
                off_the_async_threads(server, move |executor, skill| {
                    executor.check_server_reach(skill, copy, &name)
                })
                .await?;
                // `skillbox mcp` builds no other HTTPS client: without a provider installed
                // first, building this one panics.
                skillbox_services::tls::install_crypto_provider();
                let client = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|error| format!("no HTTP client: {error}"))?;
                // One message is bounded as over stdio (an SSE event or a JSON answer).
                let transport = StreamableHttpClientTransport::with_client(
                    client,
                    StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .max_sse_event_size(MAX_MESSAGE_BYTES)
                        .max_json_response_size(MAX_MESSAGE_BYTES),
                );
                let service = listener
                    .serve(transport)
                    .await
                    .map_err(|error| format!("it did not initialize at {url}: {error}"))?;
                Ok(Connection {
                    service,
                    process: None,
                    _place: place,
                })
            }
        }
    }

    /// The server's side of the connection.
    pub(super) fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// Whether it can still answer: the client runs and the process (stdio) lives.
    pub(super) fn alive(&self) -> bool {
        !self.service.is_closed() && self.ended().is_none()
    }

    /// How its process ended, when it has.
    pub(super) fn ended(&self) -> Option<String> {
        let process = self.process.as_ref()?;
        process.lock().ok()?.ended()
    }

    /// Its tools, at most [`MAX_TOOLS_PER_SERVER`] from [`MAX_TOOL_PAGES`] pages.
    pub(super) async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, String> {
        let mut tools = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_TOOL_PAGES {
            let params = cursor.take().map(|cursor| {
                let mut params = PaginatedRequestParams::default();
                params.cursor = Some(cursor);
                params
            });
            let page = self
                .peer()
                .list_tools(params)
                .await
                .map_err(|error| format!("tools/list failed: {error}"))?;
            tools.extend(page.tools);
            if tools.len() >= MAX_TOOLS_PER_SERVER {
                tools.truncate(MAX_TOOLS_PER_SERVER);
                break;
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        Ok(tools)
    }
}

/// A server's standard output as the connection reads it: a line (one message) longer than
/// [`MAX_MESSAGE_BYTES`] is a read error, which ends the connection. (The transport alone would
/// drop the line and go on, leaving the call it answered waiting out the call timeout.)
struct BoundedLines<R> {
    inner: R,
    /// Bytes of the line read so far.
    line_bytes: usize,
}

impl<R> BoundedLines<R> {
    fn new(inner: R) -> Self {
        BoundedLines {
            inner,
            line_bytes: 0,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buffer.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(context, buffer))?;
        // The first piece continues the line read before; each later one starts a line.
        let mut pieces = buffer.filled()[before..].split(|byte| *byte == b'\n');
        let mut line = this
            .line_bytes
            .saturating_add(pieces.next().map_or(0, <[u8]>::len));
        let mut longest = line;
        for piece in pieces {
            line = piece.len();
            longest = longest.max(line);
        }
        this.line_bytes = line;
        if longest > MAX_MESSAGE_BYTES {
            // A read that fails hands on nothing.
            buffer.set_filled(before);
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("the server sent a message longer than {MAX_MESSAGE_BYTES} bytes"),
            )));
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn read_all(bytes: Vec<u8>) -> std::io::Result<usize> {
        let mut read = Vec::new();
        BoundedLines::new(bytes.as_slice())
            .read_to_end(&mut read)
            .await
    }

    #[tokio::test]
    async fn a_line_past_the_bound_is_an_error_and_many_short_ones_are_not() {
        let short_lines = b"{\"jsonrpc\": \"2.0\"}\n".repeat(MAX_MESSAGE_BYTES / 10);
        assert_eq!(
            read_all(short_lines.clone()).await.unwrap(),
            short_lines.len()
        );
        let mut long = b"{}\n".to_vec();
        long.extend(vec![b'x'; MAX_MESSAGE_BYTES + 1]);
        let error = read_all(long).await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        // Exactly at the bound, with its newline, is a message still.
        let mut exact = vec![b'x'; MAX_MESSAGE_BYTES];
        exact.push(b'\n');
        assert!(read_all(exact).await.is_ok());
    }
}
