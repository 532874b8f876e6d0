//! skillbox-mcp: the MCP door. [`SkillsMcpServer`] serves a live catalog as MCP tools (through
//! the one dispatcher), prompts, resources and the skills extension
//! (`io.modelcontextprotocol/skills`), over stdio ([`serve_stdio`]) or streamable HTTP
//! ([`http_service`], mounted at `/mcp` by `skillbox serve`). The wire protocol is rmcp's.

pub mod catalog_view;
pub mod server;
pub mod uri;

use std::sync::{Arc, Mutex};

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
pub use server::{DEFAULT_MAX_SESSIONS, McpOptions, SkillsMcpServer};
use skillbox_services::{BudgetShare, ReadBudget, ServiceError};
use skillbox_tools::LiveProvider;
use tokio_util::sync::CancellationToken;

/// Largest MCP request body over HTTP, in bytes. MCP requests are small (tool arguments, a
/// URI); rmcp parses a body into a JSON tree before answering, which took about 80 times the
/// body's size in memory, so a 64 MiB body (the `/rpc` limit) peaked near 5 GB.
pub const MAX_HTTP_REQUEST_BYTES: usize = 1024 * 1024;

/// The share of the server's answer budget one HTTP request holds: the door in front of
/// `/mcp` puts it in the request's extensions and keeps it until the response has been sent,
/// and the reads the request answers (resources, blobs) take the bytes they return from it
/// before fetching them. A request without one (stdio) reads unbudgeted.
#[derive(Debug, Clone)]
pub struct AnswerBudget(Arc<Mutex<BudgetShare>>);

impl AnswerBudget {
    /// A request's budget over this share.
    #[must_use]
    pub fn new(share: BudgetShare) -> Self {
        AnswerBudget(Arc::new(Mutex::new(share)))
    }
}

impl ReadBudget for AnswerBudget {
    fn take(&mut self, bytes: u64) -> Result<(), ServiceError> {
        self.0
            .lock()
            .map_err(|_| ServiceError::internal("the answer budget is unavailable"))?
            .take(bytes)
    }
}

/// Errors of the MCP door.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The client went away or spoke something that is not MCP before the handshake ended.
    #[error("the MCP session did not start: {0}")]
    Start(String),
    /// The session ended abnormally.
    #[error("the MCP session failed: {0}")]
    ClientSession(String),
}

/// Serve MCP over this process's stdin and stdout until stdin closes. stdout carries protocol
/// messages only: log to stderr, and never let a child process inherit stdout.
///
/// # Errors
/// When the session cannot start or ends with an error.
pub async fn serve_stdio(live: Arc<LiveProvider>, options: McpOptions) -> Result<(), McpError> {
    let server = SkillsMcpServer::new(live, options);
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| McpError::Start(error.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|error| McpError::ClientSession(error.to_string()))?;
    Ok(())
}

/// The streamable HTTP endpoint as a tower service, for a router to mount (at `/mcp`). The
/// caller's own layers check `Host`, `Origin` and the token, so rmcp's built-in host check is
/// off here: one policy guards `/rpc` and `/mcp` alike. Sessions (2025 revisions) are kept in
/// memory; 2026-07-28 requests are served statelessly. Cancelling `shutdown` ends every
/// session.
#[must_use]
pub fn http_service(
    live: Arc<LiveProvider>,
    options: McpOptions,
    max_request_bytes: usize,
    shutdown: CancellationToken,
) -> StreamableHttpService<SkillsMcpServer, LocalSessionManager> {
    let server = SkillsMcpServer::new(live, options);
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(max_request_bytes)
        .with_cancellation_token(shutdown);
    StreamableHttpService::new(
        move || Ok(server.session()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
