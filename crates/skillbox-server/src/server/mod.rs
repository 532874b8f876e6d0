//! The HTTP side: `router(state)` (driven directly by tests) and `serve` (binds, shuts down
//! gracefully). JSON-RPC 2.0 at `POST /rpc`, `GET /healthz`, the DNS-rebinding and cross-site
//! checks, bearer-token auth when a token is set, body limits, a bound on large requests in
//! flight, a per-request timeout, and a timeout for reading request headers.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use skillbox_mcp::{AnswerBudget, McpOptions, SkillsMcpServer};
use skillbox_services::credentials::{bearer_token, token_matches};
use skillbox_services::{BlockingPool, DataDir, RunLimits, Services};
use skillbox_tools::registry::{self, Offer, ParamsSize};
use skillbox_tools::{
    Arguments, CallContext, CallStatus, Content, Door, DoorPolicy, LiveProvider, ServerPool,
    ServerPoolConfig, SkillsProvider, ToolOutcome, ToolProfile,
};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::access::{AccessPolicy, check_access, json_body_refusal};
use crate::answers::{Answer, BudgetShare, Holding, budget_spent};
use crate::auth_throttle::{AuthThrottle, FailedAuthCounter, TokenVerdict, client_address};
use crate::metrics::{Metrics, count_mcp_calls, count_requests};
use crate::protocol::{
    self, MAX_PARAMS_BYTES, MAX_RUN_PARAMS_BYTES, Rejected, RpcBody, RpcError, RpcRequest, failure,
    parse_request,
};
use crate::stalled_writes::StallTimeout;

mod listening;
mod rpc_door;

pub use listening::{
    SHUTDOWN_GRACE, ServeError, bind, check_listen, serve, serve_listener, serve_on,
    serve_with_grace,
};
pub(crate) use rpc_door::dispatch;
use rpc_door::rpc;

pub use crate::answers::MAX_BATCH_ANSWER_BYTES;
pub use crate::protocol::MAX_BATCH_REQUESTS;

/// Largest request body accepted, in bytes (a `create_blob` payload is the big case).
pub const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;
/// Bodies larger than this (or of unknown length) are large: they need a share of
/// [`LARGE_BODIES_BUDGET_BYTES`] before they are read.
pub const LARGE_BODY_BYTES: usize = 1024 * 1024;
/// Bytes of large bodies the server holds at once (two `create_blob` calls of the largest size);
/// past this, large requests get 503 with `Retry-After` instead of more memory being used.
pub const LARGE_BODIES_BUDGET_BYTES: usize = 2 * MAX_REQUEST_BYTES;
/// Longest a request may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
/// Longest a client may take to send a request's line and headers (also how long an idle
/// keep-alive connection stays open).
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(15);
/// Longest a write of an answer may stay blocked because the client reads nothing; past it
/// the connection is closed (see `stalled_writes.rs`).
pub const DEFAULT_SEND_STALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest a call that reads skill files (`read_skill_file`, `describe_skill` with `detail:
/// "full"`) may take: it runs on the door policy's blocking pool, and one held up by a slow or
/// stalled file system (core refuses FIFOs and devices at once) is given up after this.
pub const DEFAULT_CATALOG_CALL_BUDGET: Duration =
    skillbox_services::blocking::DEFAULT_BLOCKING_BUDGET;
/// How often expired blobs are removed.
pub const BLOB_SWEEP_INTERVAL: Duration = Duration::from_secs(10 * 60);

/// What every request can reach.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The catalog and the tool dispatcher in effect, with the state's services: every method
    /// is answered through it. Hot reload swaps it whole ([`AppState::live`]); a request takes
    /// it once ([`AppState::provider`]) and answers from that snapshot.
    live: Arc<LiveProvider>,
    /// The blob store and the folder of run inputs (the same the provider answers with).
    /// Private: replacing them alone would leave the provider with the old ones.
    services: Arc<Services>,
    /// The one run queue and blocking pool of every door of this server (`/rpc`, `/mcp`, the
    /// web app): every tool call goes through it.
    policy: Arc<DoorPolicy>,
    /// When set, every request needs `Authorization: Bearer <token>`. Private: `access` was
    /// derived from it, so changing one alone would turn the `Host` check off unseen.
    token: Option<String>,
    /// Which `Host` and `Origin` headers are answered.
    access: Arc<AccessPolicy>,
    /// Bytes of large request bodies that may be in flight.
    large_bodies: Arc<Semaphore>,
    header_read_timeout: Duration,
    send_stall_timeout: Duration,
    /// What `GET /metrics` shows: requests counted by the doors, gauges read from the live
    /// provider and the services.
    metrics: Arc<Metrics>,
    /// How often one client address may present a wrong token, at every door behind the
    /// token (the web app's too), and the counter of what it refused (shown by `metrics`).
    auth_throttle: Arc<AuthThrottle>,
    /// MCP over streamable HTTP at `/mcp`, when on ([`AppState::with_mcp`]).
    mcp: Option<McpDoor>,
    /// The web app at `/`, when on ([`AppState::with_web`]).
    #[cfg(feature = "web")]
    web: Option<skillbox_web::WebApp>,
}

/// The `/mcp` endpoint and what ends its sessions when the server stops.
#[derive(Clone)]
struct McpDoor {
    service: StreamableHttpService<SkillsMcpServer, LocalSessionManager>,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for McpDoor {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("McpDoor").finish_non_exhaustive()
    }
}

impl AppState {
    /// State over a data folder, with the defaults: run limits from the cores, only loopback
    /// host names (unless a token is set), the default timeouts. The provider answers with the
    /// services of `data` (whatever services it had). An empty token is no token: it would
    /// turn the `Host` check off and accept `Bearer ` with nothing after it.
    #[must_use]
    pub fn new(provider: Arc<SkillsProvider>, data: &DataDir, token: Option<String>) -> Self {
        let token = token.filter(|token| !token.is_empty());
        let access = Arc::new(AccessPolicy::new(Vec::new(), token.is_some()));
        let services = Arc::new(Services::new(data, RunLimits::default()));
        let live = LiveProvider::new(provider.with_services(Arc::clone(&services)));
        let policy = Arc::new(DoorPolicy::new(RunLimits::default()));
        let auth_throttle = Arc::new(AuthThrottle::new(FailedAuthCounter::default()));
        AppState {
            metrics: Arc::new(Metrics::new(
                Arc::clone(&live),
                Arc::clone(&policy),
                auth_throttle.counter().clone(),
            )),
            auth_throttle,
            live,
            services,
            policy,
            token,
            access,
            large_bodies: Arc::new(Semaphore::new(LARGE_BODIES_BUDGET_BYTES)),
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            send_stall_timeout: DEFAULT_SEND_STALL_TIMEOUT,
            mcp: None,
            #[cfg(feature = "web")]
            web: None,
        }
    }

    /// Also serve MCP over streamable HTTP at `/mcp` with the tools of `profile` and at most
    /// `max_sessions` sessions (and as many listen streams), from the same live provider as
    /// `/rpc`, behind the same `Host`/`Origin` checks and token; its tool calls that run code
    /// queue with the state's run limits, and its resource and blob reads take from the same
    /// answer budget, held until each response has been sent. Must be called inside a tokio
    /// runtime.
    #[must_use]
    pub fn with_mcp(mut self, profile: ToolProfile, max_sessions: usize) -> Self {
        let shutdown = CancellationToken::new();
        let options = McpOptions {
            profile,
            // The same run queue and blocking pool as every other door of the server.
            policy: Arc::clone(&self.policy),
            door: Door::McpHttp,
            max_sessions,
        };
        let service = skillbox_mcp::http_service(
            Arc::clone(&self.live),
            options,
            skillbox_mcp::MAX_HTTP_REQUEST_BYTES,
            shutdown.clone(),
        );
        self.mcp = Some(McpDoor { service, shutdown });
        self
    }

    /// Also serve the web app at `/` (skills, playground, chat, runs) from the same live
    /// provider and services, behind the same `Host`/`Origin` checks; with a token, its pages
    /// ask for it once and keep a session cookie.
    ///
    /// # Errors
    /// [`ServeError::Web`] when the web app cannot be set up (no randomness for its secrets).
    #[cfg(feature = "web")]
    pub fn with_web(mut self, chat: skillbox_web::ChatSetup) -> Result<Self, ServeError> {
        let web = skillbox_web::WebApp::new(
            Arc::clone(&self.live),
            Arc::clone(&self.services),
            Arc::clone(&self.policy),
            skillbox_web::WebConfig {
                token: self.token.clone(),
                chat,
                token_guard: Some(Arc::new(WebTokenGuard(Arc::clone(&self.auth_throttle)))),
            },
        )
        .map_err(|error| ServeError::Web(error.to_string()))?;
        self.web = Some(web);
        Ok(self)
    }

    /// The bearer token every request needs, if any (never empty).
    #[must_use]
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The live provider: what hot reload swaps (`skillbox_tools::watch_roots`).
    #[must_use]
    pub fn live(&self) -> &Arc<LiveProvider> {
        &self.live
    }

    /// The provider in effect now: take it once per request.
    #[must_use]
    pub fn provider(&self) -> Arc<SkillsProvider> {
        self.live.current()
    }

    /// The run and blob services every door answers with.
    #[must_use]
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// The door policy every door of this server calls tools through.
    #[must_use]
    pub fn policy(&self) -> &Arc<DoorPolicy> {
        &self.policy
    }

    /// The same state with other run limits: a new run queue (and the input bound of runs).
    /// Call it before [`AppState::with_mcp`] and `with_web`, which take the policy as it is.
    #[must_use]
    pub fn with_run_limits(mut self, limits: RunLimits) -> Self {
        self.set_policy(
            DoorPolicy::new(limits)
                .with_blocking_pool(self.policy.blocking().clone())
                .with_server_pool(ServerPool::new(self.policy.servers().config())),
        );
        self.services = Arc::new(Services::new_like(&self.services, limits));
        // The same live provider, so a door or watcher that holds it already follows.
        let provider = self
            .live
            .current()
            .with_services(Arc::clone(&self.services));
        self.live.replace(provider, Vec::new());
        self
    }

    fn set_policy(&mut self, policy: DoorPolicy) {
        self.policy = Arc::new(policy);
        self.metrics = Arc::new(Metrics::new(
            Arc::clone(&self.live),
            Arc::clone(&self.policy),
            self.auth_throttle.counter().clone(),
        ));
    }

    /// Also answer requests addressed to these host names (checked with
    /// [`crate::access::allowed_host_name`]) and from pages served from them. Giving any turns
    /// the `Host` check on even when a token is set.
    #[must_use]
    pub fn with_allowed_hosts(mut self, names: Vec<String>) -> Self {
        self.access = Arc::new(AccessPolicy::new(names, self.token.is_some()));
        self
    }

    /// Give up calls that read files after `budget` instead of [`DEFAULT_CATALOG_CALL_BUDGET`].
    /// Call it before [`AppState::with_mcp`] and `with_web`, which take the policy as it is.
    #[must_use]
    pub fn with_catalog_budget(mut self, budget: Duration) -> Self {
        let pool = BlockingPool::new(skillbox_services::blocking::MAX_BLOCKING_IN_FLIGHT, budget);
        let policy = DoorPolicy::new(self.policy.runs().limits())
            .with_blocking_pool(pool)
            .with_server_pool(ServerPool::new(self.policy.servers().config()));
        self.set_policy(policy);
        self
    }

    /// Start skill servers with `config` (start and idle timeouts).
    /// Call it before [`AppState::with_mcp`] and `with_web`, which take the policy as it is.
    #[must_use]
    pub fn with_server_config(mut self, config: ServerPoolConfig) -> Self {
        let policy = DoorPolicy::new(self.policy.runs().limits())
            .with_blocking_pool(self.policy.blocking().clone())
            .with_server_pool(ServerPool::new(config));
        self.set_policy(policy);
        self
    }

    /// Close connections whose request headers take longer than `timeout` to arrive, instead of
    /// [`DEFAULT_HEADER_READ_TIMEOUT`].
    #[must_use]
    pub fn with_header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Close connections whose client reads nothing of its answer for `timeout`, instead of
    /// [`DEFAULT_SEND_STALL_TIMEOUT`].
    #[must_use]
    pub fn with_send_stall_timeout(mut self, timeout: Duration) -> Self {
        self.send_stall_timeout = timeout;
        self
    }
}

/// The server's routes, with the access checks, auth, body limits, timeout and tracing.
///
/// The `Host`/`Origin` checks and auth wrap every route; endpoints that take a JSON body get
/// the `Content-Type` check and the large-body bound as one route layer.
///
/// Each layer gets only the part of the state it needs, and handlers share the state behind an
/// `Arc`: cloning the whole state for every layer of every request showed in profiles.
pub fn router(state: AppState) -> Router {
    let json_body = |route: axum::routing::MethodRouter<Arc<AppState>>| {
        route.route_layer(middleware::from_fn_with_state(
            Arc::clone(&state.large_bodies),
            accept_json_body,
        ))
    };
    let metrics = Arc::clone(&state.metrics);
    let mut routes = Router::new()
        .route("/rpc", json_body(post(rpc)))
        .route("/healthz", get(healthz))
        .route("/metrics", get(scrape_metrics));
    if let Some(door) = &state.mcp {
        routes = routes.merge(
            Router::new()
                .route_service("/mcp", door.service.clone())
                .route_layer(middleware::from_fn(end_sessions_with_no_content))
                .route_layer(middleware::from_fn_with_state(
                    Arc::clone(&state.large_bodies),
                    hold_answer_budget,
                ))
                .route_layer(middleware::from_fn_with_state(
                    Arc::clone(&metrics),
                    count_mcp_calls,
                )),
        );
    }
    let access = Arc::clone(&state.access);
    #[cfg(feature = "web")]
    let web = state.web.clone();
    // Without a token there is nothing to check: no layer, so `/healthz` and the rest pay
    // nothing for the throttle.
    if let Some(token) = state.token() {
        let door = Arc::new(TokenDoor {
            token: Arc::from(token),
            throttle: Arc::clone(&state.auth_throttle),
        });
        routes = routes.layer(middleware::from_fn_with_state(door, require_token));
    }
    let routes: Router = routes.with_state(Arc::new(state));
    // The web app checks its own sessions (a cookie made with the token, or the bearer).
    #[cfg(feature = "web")]
    let routes = match web {
        Some(web) => routes.merge(web.router()),
        None => routes,
    };
    routes
        .layer(middleware::from_fn_with_state(access, check_access))
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ))
        .layer(middleware::from_fn_with_state(metrics, count_requests))
        .layer(tower_http::trace::TraceLayer::new_for_http())
}

/// Route layer of `/mcp`: each request gets a share of the answer budget (the one `/rpc`'s
/// large bodies and blob reads use) that its resource and blob reads take from, held until the
/// response body has been sent, as `/rpc` answers hold theirs.
async fn hold_answer_budget(
    State(budget): State<Arc<Semaphore>>,
    mut request: Request,
    next: Next,
) -> Response {
    let share = AnswerBudget::new(BudgetShare::new(&budget, LARGE_BODIES_BUDGET_BYTES));
    request.extensions_mut().insert(share.clone());
    next.run(request)
        .await
        .map(|body| axum::body::Body::new(Holding { body, _held: share }))
}

/// Route layer of `/mcp`: a session ended with `DELETE` is answered 204 (No Content). rmcp
/// answers 202, which the official Python SDK takes for a failure ("Session termination
/// failed: 202"): it accepts 200 and 204, and the transport spec has nothing to accept.
async fn end_sessions_with_no_content(request: Request, next: Next) -> Response {
    let ends_session = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if ends_session && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
        *response.body_mut() = axum::body::Body::empty();
        response.headers_mut().remove(header::CONTENT_LENGTH);
    }
    response
}

/// Route layer for endpoints that take a JSON body, before the body is read: the body must be
/// declared as JSON (415 otherwise), and one over [`LARGE_BODY_BYTES`] (by its
/// `Content-Length`, or of unknown length) takes its size from the large-body budget or gets
/// 503 with `Retry-After` when the budget is spent. Memory for bodies is then bounded by the
/// budget plus small bodies.
async fn accept_json_body(
    State(large_bodies): State<Arc<Semaphore>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(refusal) = json_body_refusal(request.headers()) {
        return refusal;
    }
    let cost = match body_length(request.headers()) {
        BodyLength::Known(length) if length <= LARGE_BODY_BYTES => {
            return next.run(request).await;
        }
        BodyLength::Known(length) if length > MAX_REQUEST_BYTES => {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                Json(json!({"error": format!(
                    "the body is {length} bytes; at most {MAX_REQUEST_BYTES} are accepted (send large content in several blobs)"
                )})),
            )
                .into_response();
        }
        BodyLength::Known(length) => length,
        BodyLength::Unknown => MAX_REQUEST_BYTES,
    };
    let permits = u32::try_from(cost).unwrap_or(u32::MAX);
    let Ok(_reserved) = large_bodies.try_acquire_many_owned(permits) else {
        tracing::warn!(
            bytes = cost,
            "large request refused: the large-body budget is spent"
        );
        let error = budget_spent(
            &format!(
                "request bodies over {LARGE_BODY_BYTES} bytes (and the bytes blob reads return)"
            ),
            LARGE_BODIES_BUDGET_BYTES,
        );
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(
                header::RETRY_AFTER,
                (protocol::RETRY_AFTER_MS / 1000).to_string(),
            )],
            Json(failure(Value::Null, error.into())),
        )
            .into_response();
    };
    next.run(request).await
}

#[derive(Debug, PartialEq, Eq)]
enum BodyLength {
    Known(usize),
    Unknown,
}

/// The body's length from `Content-Length`; a request with neither it nor
/// `Transfer-Encoding` has no body. `Transfer-Encoding` wins over `Content-Length` (a body sent
/// in chunks is read by its chunks, whatever length it also declares), here as in hyper, so a
/// small declared length cannot slip a large body past the budget behind any server.
fn body_length(headers: &HeaderMap) -> BodyLength {
    if headers.contains_key(header::TRANSFER_ENCODING) {
        return BodyLength::Unknown;
    }
    match headers.get(header::CONTENT_LENGTH) {
        Some(length) => length
            .to_str()
            .ok()
            .and_then(|length| length.parse().ok())
            .map_or(BodyLength::Unknown, BodyLength::Known),
        None => BodyLength::Known(0),
    }
}

/// What the layer in front of `/rpc`, `/mcp`, `/metrics` and `/healthz` checks tokens with.
struct TokenDoor {
    token: Arc<str>,
    throttle: Arc<AuthThrottle>,
}

/// Layer, when a token is set: a request needs `Authorization: Bearer <token>` (401
/// otherwise). A presented token is compared through the throttle: from an address that
/// presented too many wrong ones lately it is not compared, and the request gets 429 with
/// `Retry-After`.
async fn require_token(
    State(door): State<Arc<TokenDoor>>,
    request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(bearer_token);
    let verdict = match presented {
        None => TokenVerdict::Wrong,
        Some(presented) => door.throttle.check(
            client_address(request.extensions()),
            crate::metrics::RequestDoor::of_path(request.uri().path()),
            || token_matches(presented, &door.token),
        ),
    };
    match verdict {
        TokenVerdict::Right => next.run(request).await,
        TokenVerdict::Wrong => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            Json(json!({"error": "missing or wrong bearer token: send `Authorization: Bearer <token>`"})),
        )
            .into_response(),
        TokenVerdict::Throttled(retry_after) => {
            let seconds = retry_after.as_millis().div_ceil(1000).max(1);
            (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, seconds.to_string())],
                Json(json!({"error": format!(
                    "too many wrong tokens came from your address lately; try again in {seconds} s"
                )})),
            )
                .into_response()
        }
    }
}

/// The web app's token checks (`/login`, bearer headers) through the server's throttle, so one
/// address's wrong tokens count alike at every door.
#[cfg(feature = "web")]
struct WebTokenGuard(Arc<AuthThrottle>);

#[cfg(feature = "web")]
impl skillbox_web::auth::TokenGuard for WebTokenGuard {
    fn check(
        &self,
        extensions: &axum::http::Extensions,
        matches: &dyn Fn() -> bool,
    ) -> skillbox_web::auth::TokenCheck {
        use skillbox_web::auth::TokenCheck;
        match self.0.check(
            client_address(extensions),
            crate::metrics::RequestDoor::Web,
            matches,
        ) {
            TokenVerdict::Right => TokenCheck::Right,
            TokenVerdict::Wrong => TokenCheck::Wrong,
            TokenVerdict::Throttled(retry_after) => TokenCheck::Throttled { retry_after },
        }
    }
}

/// `GET /metrics`, behind the same checks and token as `/rpc`.
async fn scrape_metrics(State(state): State<Arc<AppState>>) -> Response {
    crate::metrics::scrape(&state.metrics)
}

async fn healthz(State(state): State<Arc<AppState>>) -> Json<Value> {
    let skills = state.provider().catalog().latest_visible_to_model().count();
    Json(json!({ "status": "ok", "skills": skills }))
}

/// Handlers run on a multi-threaded runtime: the futures they await must be `Send`.
#[allow(dead_code)]
fn handler_futures_are_send(state: &AppState) {
    fn is_send<T: Send>(_: T) {}
    let provider = state.provider();
    let mut budget = skillbox_tools::Unbudgeted;
    is_send(state.policy.call(
        &provider,
        "x",
        Arguments::None,
        CallContext::new(Door::Rpc, Offer::Rpc, &mut budget),
    ));
    let mut share = BudgetShare::new(&state.large_bodies, LARGE_BODIES_BUDGET_BYTES);
    is_send(dispatch(state, "x", None, &mut share));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunked_body_is_of_unknown_length_whatever_length_it_declares() {
        let headers = |pairs: &[(header::HeaderName, &'static str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(name, header::HeaderValue::from_static(value));
            }
            headers
        };
        let chunked = (header::TRANSFER_ENCODING, "chunked");
        let declared = (header::CONTENT_LENGTH, "2");
        assert_eq!(
            body_length(&headers(&[declared.clone(), chunked.clone()])),
            BodyLength::Unknown
        );
        assert_eq!(body_length(&headers(&[chunked])), BodyLength::Unknown);
        assert_eq!(body_length(&headers(&[declared])), BodyLength::Known(2));
        assert_eq!(body_length(&headers(&[])), BodyLength::Known(0));
    }
}
