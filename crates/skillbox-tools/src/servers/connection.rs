//! One MCP client connection to a skill's server: the sandboxed child over its pipes, or
//! streamable HTTP; initialized and its tools listed within the start timeout.

use std::sync::{Mutex, Weak};

use rmcp::model::{ClientConfig, Implementation, PaginatedRequestParams};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use skillbox_core::ServerTransport;
use skillbox_exec::SkillCopy;
use skillbox_exec::executor::{ServerLaunch, ServerProcess};

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

/// A live connection. Dropped, the client stops and the server's process tree is killed.
pub(super) struct Connection {
    service: RunningService<RoleClient, Listener>,
    process: Option<Mutex<ServerProcess>>,
}

impl Connection {
    /// Start (stdio) or reach (HTTP) the server and initialize it. No timeout here: the
    /// caller bounds the whole start.
    pub(super) async fn open(server: &std::sync::Arc<SkillServer>) -> Result<Self, String> {
        let listener = Listener {
            server: std::sync::Arc::downgrade(server),
        };
        match &server.declaration.transport {
            ServerTransport::Stdio { command, args, env } => {
                let executor = std::sync::Arc::clone(&server.executor);
                let skill = std::sync::Arc::clone(&server.skill);
                let launch_name = server.declaration.name.clone();
                let (command, args, env) = (command.clone(), args.clone(), env.clone());
                let mut process = tokio::task::spawn_blocking(move || {
                    executor.start_server(
                        &skill,
                        SkillCopy::InEffect,
                        ServerLaunch {
                            name: &launch_name,
                            command: &command,
                            args: &args,
                            env: &env,
                        },
                    )
                })
                .await
                .map_err(|error| format!("starting it failed: {error}"))?
                .map_err(|error| error.message)?;
                let Some((stdout, stdin)) = process.take_pipes() else {
                    return Err("it started without its pipes".to_owned());
                };
                let transport = AsyncRwTransport::new_client(stdout, stdin)
                    .with_max_line_length(MAX_MESSAGE_BYTES);
                match listener.serve(transport).await {
                    Ok(service) => Ok(Connection {
                        service,
                        process: Some(Mutex::new(process)),
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
                server
                    .executor
                    .check_server_reach(&server.skill, &server.declaration.name)
                    .map_err(|error| error.message)?;
                let client = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|error| format!("no HTTP client: {error}"))?;
                let transport = StreamableHttpClientTransport::with_client(
                    client,
                    StreamableHttpClientTransportConfig::with_uri(url.as_str()),
                );
                let service = listener
                    .serve(transport)
                    .await
                    .map_err(|error| format!("it did not initialize at {url}: {error}"))?;
                Ok(Connection {
                    service,
                    process: None,
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
