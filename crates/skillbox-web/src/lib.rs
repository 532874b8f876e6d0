//! skillbox-web: the web app `skillbox serve` answers at `/`. Six pages over the live provider
//! every other door answers from: the catalog, one skill as a model and its author see it, a
//! playground that calls any tool through the one dispatcher, a chat with the agent loop, the
//! recent runs, and the reports `skillbox eval` wrote into the same data folder. Pages are rendered on the server from compiled-in templates; one small
//! script and one stylesheet are embedded too, so nothing is fetched from elsewhere.
//!
//! Skill content is untrusted: templates escape it, markdown is sanitised, the script puts it
//! in the page as text, and a strict Content-Security-Policy stops whatever slips through.
//! The design is in `docs/design/web.md`.

mod assets;
pub mod auth;
mod catalog_pages;
pub mod chat;
mod eval_files;
mod evals;
mod event_stream;
mod pages;
mod playground;
pub mod render;
pub mod request_body;
mod runs;

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use skillbox_services::Services;
use skillbox_services::blocking::BlockingError;
use skillbox_tools::{DoorPolicy, LiveProvider, SkillsProvider};
use tokio::sync::Semaphore;

pub use auth::Auth;
pub use chat::{ChatModel, ChatSetup};

/// The Content-Security-Policy of every page: scripts, styles and fonts only from this server's
/// `/assets/`, no inline script or style, no frames, forms posting only here.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/// Catalog event streams open at once (each open catalog page holds one); past this a page
/// is told to try again and shows the list as it was. Each stream holds a connection and a
/// task (20 to 30 KiB of the server's memory), and nothing else bounded them.
pub const MAX_CATALOG_STREAMS: usize = 256;
/// Bytes of large answers (pages, raw files) the web app holds at once while clients read
/// them. A client reading slowly, or not at all until the server's send-stall timeout, holds
/// its answer: 64 such requests for a 15 MiB file held 1.1 GB. Past this, a large answer is
/// refused with 503 and `Retry-After`, and its memory is freed at once.
pub const ANSWERS_BUDGET_BYTES: usize = 128 * 1024 * 1024;
/// Answers smaller than this are not counted against [`ANSWERS_BUDGET_BYTES`].
pub const COUNTED_ANSWER_BYTES: usize = 64 * 1024;
/// What a client is told when the answers budget is spent.
pub(crate) const BUSY_ANSWERING: &str =
    "the server is sending many large answers to slow clients; try again in a moment";
/// The `Retry-After` of an answer refused for the budget, in seconds.
const BUSY_RETRY_AFTER_SECONDS: u64 = 2;
/// Bytes handed to the connection at a time from a counted answer: its share of the budget is
/// held until the last piece is taken.
const ANSWER_PIECE_BYTES: usize = 64 * 1024;
/// Largest request body the web app reads, in bytes: a playground call's (its arguments with
/// the JSON around them). Each endpoint reads at most its own bound
/// ([`request_body`]), most of them a few KiB; this one is the backstop of every route. The
/// server's own bound is far larger (for `/rpc`'s blobs): eight 60 MiB calls at once had held
/// 660 MB.
pub const MAX_BODY_BYTES: usize = playground::MAX_CALL_BODY_BYTES;

/// What the web app is given by the server that mounts it.
pub struct WebConfig {
    /// The server's token: with one, pages need a session made at `/login` (or a bearer
    /// header). An empty token is no token.
    pub token: Option<String>,
    /// The chat page's models and agent settings.
    pub chat: ChatSetup,
    /// Compares the tokens `/login` and bearer headers present, and bounds how often one
    /// client may present a wrong one (the server's, shared with its other doors).
    /// `None` compares without any bound.
    pub token_guard: Option<Arc<dyn auth::TokenGuard>>,
}

/// The web app: its state, and the routes [`WebApp::router`] serves it with.
#[derive(Clone)]
pub struct WebApp {
    state: Arc<WebState>,
}

/// What every page can reach.
pub(crate) struct WebState {
    pub(crate) live: Arc<LiveProvider>,
    pub(crate) services: Arc<Services>,
    pub(crate) auth: Auth,
    pub(crate) chat: chat::ChatHub,
    /// The server's door policy: tool calls go through it, and page reads use its blocking
    /// pool (one pool for every door).
    pub(crate) policy: Arc<DoorPolicy>,
    /// Places for catalog event streams ([`MAX_CATALOG_STREAMS`]).
    pub(crate) catalog_streams: Arc<Semaphore>,
    /// Bytes of large answers held ([`ANSWERS_BUDGET_BYTES`]).
    pub(crate) answers: Arc<Semaphore>,
    /// Cancelled when the server stops: event streams end, turns are cancelled.
    pub(crate) shutdown: tokio_util::sync::CancellationToken,
    /// The data folder's `evals/`, where `skillbox eval` writes its runs.
    pub(crate) evals: eval_files::EvalsFolder,
    /// Places for eval pages being read and rendered ([`evals::MAX_EVAL_PAGES_AT_ONCE`]).
    pub(crate) eval_pages: Arc<Semaphore>,
}

impl WebState {
    /// The provider in effect now; a request answers from this one snapshot.
    pub(crate) fn provider(&self) -> Arc<SkillsProvider> {
        self.live.current()
    }
}

impl std::fmt::Debug for WebApp {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("WebApp").finish_non_exhaustive()
    }
}

impl WebApp {
    /// The web app over the live provider, the services and the door policy the other doors
    /// answer with.
    ///
    /// # Errors
    /// When the system gives no randomness for its secrets.
    pub fn new(
        live: Arc<LiveProvider>,
        services: Arc<Services>,
        policy: Arc<DoorPolicy>,
        config: WebConfig,
    ) -> Result<Self, WebError> {
        let mut auth = Auth::new(config.token)?;
        if let Some(guard) = config.token_guard {
            auth = auth.with_token_guard(guard);
        }
        let chat = chat::ChatHub::new(config.chat, Arc::clone(&live), Arc::clone(&policy));
        // `skillbox eval --data-dir D` writes its reports in `D/evals/`.
        let evals =
            eval_files::EvalsFolder::new(services.data_folder().join(eval_files::EVALS_FOLDER));
        // The syntax set takes tens of milliseconds to load: not on the first file's request.
        std::thread::spawn(render::warm_up);
        Ok(WebApp {
            state: Arc::new(WebState {
                live,
                services,
                auth,
                chat,
                policy,
                catalog_streams: Arc::new(Semaphore::new(MAX_CATALOG_STREAMS)),
                answers: Arc::new(Semaphore::new(ANSWERS_BUDGET_BYTES)),
                shutdown: tokio_util::sync::CancellationToken::new(),
                evals,
                eval_pages: Arc::new(Semaphore::new(evals::MAX_EVAL_PAGES_AT_ONCE)),
            }),
        })
    }

    /// The pages, their JSON and event endpoints and the assets, behind the session check and
    /// with the security headers. The server merges this beside `/rpc`, inside its `Host` and
    /// `Origin` checks.
    pub fn router(&self) -> Router {
        let state = Arc::clone(&self.state);
        let pages = Router::new()
            .route("/", get(catalog_pages::skills_page))
            .route("/skills", get(catalog_pages::skills_page))
            .route("/skills/{name}", get(catalog_pages::skill_page))
            .route(
                "/skills/{name}/files/{*path}",
                get(catalog_pages::file_page),
            )
            .route("/skills/{name}/raw/{*path}", get(catalog_pages::raw_file))
            .route("/playground", get(playground::playground_page))
            .route("/chat", get(chat::chat_page))
            .route("/chat/{id}", get(chat::chat_page_for))
            .route("/runs", get(runs::runs_page))
            .route("/blobs/{id}", get(runs::download_blob))
            .route("/evals", get(evals::evals_page))
            .route("/evals/{run}", get(evals::eval_run_page))
            .route(
                "/evals/{run}/transcripts/{id}",
                get(evals::eval_transcript_page),
            )
            .route("/api/catalog/events", get(catalog_pages::catalog_events))
            .route("/api/tools", get(playground::tools))
            .route("/api/call", post(playground::call))
            .route("/api/chat", post(chat::create_conversation))
            .route("/api/chat/{id}/turns", post(chat::start_turn))
            .route("/api/chat/{id}/events", get(chat::events))
            .route("/api/chat/{id}/stop", post(chat::stop_turn))
            .route(
                "/api/chat/{id}/approvals/{number}",
                post(chat::answer_approval),
            )
            .route("/logout", post(auth::logout))
            .route_layer(middleware::from_fn_with_state(
                Arc::clone(&state),
                auth::require_session,
            ));
        Router::new()
            .route(
                "/login",
                get(auth::login_page)
                    .post(auth::login)
                    .layer(DefaultBodyLimit::max(auth::MAX_LOGIN_BODY_BYTES)),
            )
            .route("/assets/{name}", get(assets::asset))
            .merge(pages)
            .fallback(pages::not_found)
            .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
            .layer(middleware::from_fn_with_state(
                Arc::clone(&state),
                hold_answer_budget,
            ))
            .layer(middleware::from_fn(security_headers))
            .with_state(state)
    }

    /// The server is stopping: end the event streams (open pages would hold a graceful
    /// shutdown forever) and cancel the running turns.
    pub fn shutdown(&self) {
        self.state.shutdown.cancel();
        self.state.chat.cancel_all();
    }
}

/// Layer: the security headers on every answer. A handler that set its own policy (raw skill
/// files) keeps it.
async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Not `no-referrer`: with it Chromium sends `Origin: null` on the page's own form posts
    // (the login), which the server's Origin check rightly refuses.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// Layer: a large answer of known size (a page, a raw file) holds its size in
/// [`ANSWERS_BUDGET_BYTES`] until the client has taken it; when the budget is spent it is
/// refused with 503 instead. Streams (events, blob downloads) are sent as they are made and
/// pass as they are.
async fn hold_answer_budget(
    axum::extract::State(state): axum::extract::State<Arc<WebState>>,
    request: Request,
    next: Next,
) -> Response {
    use futures_util::StreamExt;
    let response = next.run(request).await;
    let Some(size) = axum::body::HttpBody::size_hint(response.body()).exact() else {
        return response;
    };
    let Ok(size) = usize::try_from(size) else {
        return response;
    };
    if size < COUNTED_ANSWER_BYTES {
        return response;
    }
    let share = u32::try_from(size).ok().and_then(|share| {
        Arc::clone(&state.answers)
            .try_acquire_many_owned(share)
            .ok()
    });
    let Some(share) = share else {
        tracing::warn!(
            size,
            "a large answer was refused: the answers budget is spent"
        );
        let mut refusal = WebError::Busy(BUSY_ANSWERING.into()).into_response();
        refusal.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(BUSY_RETRY_AFTER_SECONDS),
        );
        return refusal;
    };
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, size).await else {
        return WebError::Internal("the answer could not be sent".into()).into_response();
    };
    let pieces: Vec<axum::body::Bytes> = (0..bytes.len())
        .step_by(ANSWER_PIECE_BYTES)
        .map(|start| bytes.slice(start..bytes.len().min(start + ANSWER_PIECE_BYTES)))
        .collect();
    let body = futures_util::stream::iter(pieces).map(move |piece| {
        let _held = &share;
        Ok::<_, std::convert::Infallible>(piece)
    });
    let mut response = Response::from_parts(parts, axum::body::Body::from_stream(body));
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    response
}

/// A page or endpoint that failed: the status and the message a person can act on. Pages show
/// it in the layout, JSON endpoints as `{"error": message}`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebError {
    /// Nothing under that name: a skill, file, conversation, blob.
    #[error("{0}")]
    NotFound(String),
    /// The request is malformed; the message names the parameter.
    #[error("{0}")]
    BadRequest(String),
    /// What was asked for is there but cannot be read (an eval report this server cannot
    /// parse, a file that is a link); the message says why.
    #[error("{0}")]
    Unreadable(String),
    /// The request's body is larger than its endpoint reads; the message names the bound.
    #[error("{0}")]
    TooLarge(String),
    /// The client presented wrong tokens too often lately: it may try again after this many
    /// seconds.
    #[error("{message}")]
    TooManyAttempts {
        /// What the client is told.
        message: String,
        /// Seconds until it may try again (`Retry-After`).
        retry_after_seconds: u64,
    },
    /// The server is busy (file reads, chat turns); try again.
    #[error("{0}")]
    Busy(String),
    /// A failure on the server's side.
    #[error("{0}")]
    Internal(String),
}

impl WebError {
    fn status(&self) -> StatusCode {
        match self {
            WebError::NotFound(_) => StatusCode::NOT_FOUND,
            WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
            WebError::Unreadable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            WebError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            WebError::TooManyAttempts { .. } => StatusCode::TOO_MANY_REQUESTS,
            WebError::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            WebError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// An error from a JSON endpoint.
pub(crate) struct ApiError(pub(crate) WebError);

impl From<WebError> for ApiError {
    fn from(error: WebError) -> Self {
        ApiError(error)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.0.status(),
            axum::Json(serde_json::json!({ "error": self.0.to_string() })),
        )
            .into_response();
        self.0.add_retry_after(&mut response);
        response
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let mut response = pages::error_page(self.status(), &self.to_string());
        self.add_retry_after(&mut response);
        response
    }
}

impl WebError {
    /// `Retry-After` on the answer of an error that says when to try again.
    pub(crate) fn add_retry_after(&self, response: &mut Response) {
        if let WebError::TooManyAttempts {
            retry_after_seconds,
            ..
        } = self
        {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_seconds));
        }
    }
}

/// Run `read` (anything that touches the disk: skill files, transcripts, the audit log) on
/// the door policy's blocking pool, within its budget, so the async threads never wait on the
/// disk.
pub(crate) async fn on_blocking_thread<T: Send + 'static>(
    state: &WebState,
    read: impl FnOnce() -> T + Send + 'static,
) -> Result<T, WebError> {
    state
        .policy
        .blocking()
        .run(read)
        .await
        .map_err(|error| match error {
            BlockingError::OverBudget { .. } => {
                WebError::Busy("reading files took too long; try again".into())
            }
            other => WebError::Internal(format!("the file read failed: {other}")),
        })
}

/// Where the audit log of the provider's executor is, if it keeps one.
pub(crate) fn audit_log_path(provider: &SkillsProvider) -> Option<PathBuf> {
    provider.executor().audit_log_path().map(PathBuf::from)
}
