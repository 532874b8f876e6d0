//! Who may use the pages, and which requests may change anything.
//!
//! - Without a token the server answers loopback names only (the server's `Host` check), and
//!   pages need nothing more.
//! - With a token, pages need a session: `/login` takes the token and sets an `HttpOnly`,
//!   `SameSite=Strict` cookie holding a random session id. `Authorization: Bearer <token>`
//!   works too, for scripts. A session ends after [`SESSION_IDLE_LIFETIME`] unused, or
//!   [`SESSION_ABSOLUTE_LIFETIME`] after it was made, whichever comes first.
//! - Tokens presented (the form's, a bearer header's) are compared through the server's
//!   [`TokenGuard`], which bounds how often one client may present a wrong one. A valid
//!   session cookie is not a token and is never held back by it.
//! - Every state-changing request is a `POST` with `Content-Type: application/json` and the
//!   page's CSRF token in `X-Skillbox-Csrf`. A page on another origin can send neither
//!   without a CORS preflight, which is never granted.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Query, Request, State};
use axum::http::{Extensions, HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use skillbox_services::credentials::{bearer_token, token_matches};

use crate::pages;
use crate::request_body::{LimitedBody, MAX_SMALL_BODY_BYTES};
use crate::{WebError, WebState};

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "skillbox_session";
/// The header state-changing requests carry the page's CSRF token in.
pub const CSRF_HEADER: &str = "x-skillbox-csrf";
/// Sessions kept at once; the oldest are forgotten past this (their pages ask for the token
/// again).
pub const MAX_SESSIONS: usize = 10_000;
/// How long a session lasts unused: a browser left alone for longer signs in again. Long
/// enough for a working day with the page open in a tab.
pub const SESSION_IDLE_LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);
/// How long a session lasts at most, however busy: a session id copied from a browser (or a
/// log) stops working within this. The cookie's `Max-Age` says the same to the browser.
pub const SESSION_ABSOLUTE_LIFETIME: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// Largest body of the sign-in form (the token and the page to go back to), in bytes.
pub const MAX_LOGIN_BODY_BYTES: usize = 64 * 1024;
/// Bytes of randomness in a session id and in the server's secret.
const SECRET_BYTES: usize = 32;

/// How long sessions last ([`SESSION_IDLE_LIFETIME`], [`SESSION_ABSOLUTE_LIFETIME`] unless
/// set otherwise, as tests do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLifetimes {
    /// Unused for this long, a session ends.
    pub idle: Duration,
    /// This long after it was made, a session ends however it is used.
    pub absolute: Duration,
}

impl Default for SessionLifetimes {
    fn default() -> Self {
        SessionLifetimes {
            idle: SESSION_IDLE_LIFETIME,
            absolute: SESSION_ABSOLUTE_LIFETIME,
        }
    }
}

/// How the server compares a token a client presents, and bounds how often one client may
/// present a wrong one. The server gives the web app its own (one bound for every door); the
/// client is found in the request's extensions, where the server put it.
pub trait TokenGuard: Send + Sync {
    /// Compare a presented token with `matches` for the client that sent a request with these
    /// `extensions`, unless that client presented wrong tokens too often lately: then the
    /// token is not compared at all, so a right guess among many tells the guesser nothing.
    fn check(&self, extensions: &Extensions, matches: &dyn Fn() -> bool) -> TokenCheck;
}

/// What [`TokenGuard::check`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenCheck {
    /// The token is the server's.
    Right,
    /// The token is not the server's.
    Wrong,
    /// Not compared: the client presented wrong tokens too often lately, and may try again
    /// after this long.
    Throttled {
        /// How long until the client may try again.
        retry_after: Duration,
    },
}

/// A [`TokenGuard`] that compares every token and bounds nothing (a web app given none).
#[derive(Debug, Clone, Copy, Default)]
pub struct UnboundedComparison;

impl TokenGuard for UnboundedComparison {
    fn check(&self, _extensions: &Extensions, matches: &dyn Fn() -> bool) -> TokenCheck {
        if matches() {
            TokenCheck::Right
        } else {
            TokenCheck::Wrong
        }
    }
}

/// The token rule of the pages: the token, the sessions made with it, and the secret CSRF
/// tokens are derived from.
pub struct Auth {
    token: Option<String>,
    secret: String,
    sessions: Mutex<SessionSet>,
    lifetimes: SessionLifetimes,
    guard: Arc<dyn TokenGuard>,
}

/// Sessions by id, and their ids in the order they were made, to forget the oldest first.
#[derive(Default)]
struct SessionSet {
    ids: HashMap<String, SessionTimes>,
    order: VecDeque<String>,
}

/// When a session was made and last used.
#[derive(Debug, Clone, Copy)]
struct SessionTimes {
    opened: Instant,
    used: Instant,
}

impl SessionTimes {
    fn expired(&self, lifetimes: SessionLifetimes, now: Instant) -> bool {
        now.saturating_duration_since(self.used) >= lifetimes.idle
            || now.saturating_duration_since(self.opened) >= lifetimes.absolute
    }
}

impl SessionSet {
    /// Forget every expired session.
    fn remove_expired(&mut self, lifetimes: SessionLifetimes, now: Instant) {
        let before = self.ids.len();
        self.ids.retain(|_, times| !times.expired(lifetimes, now));
        if self.ids.len() != before {
            let ids = &self.ids;
            self.order.retain(|id| ids.contains_key(id));
        }
    }
}

/// Why a request's credentials let it in or not.
pub(crate) enum Admission {
    /// In, as this visitor.
    Visitor(Visitor),
    /// No valid session, and no right token.
    Stranger,
    /// A token was presented, but its client presented wrong ones too often lately.
    Throttled(Duration),
}

/// Who a request comes from, as the pages see it.
#[derive(Clone, Debug)]
pub(crate) struct Visitor {
    /// The CSRF token its pages carry.
    pub(crate) csrf: String,
    /// Whether it signed in with a session (so the page shows "sign out").
    pub(crate) signed_in: bool,
}

impl Auth {
    /// The rule for a server with or without a token.
    ///
    /// # Errors
    /// When the system gives no randomness for the secret CSRF tokens are made from.
    pub fn new(token: Option<String>) -> Result<Self, crate::WebError> {
        let secret = random_hex().ok_or_else(|| {
            crate::WebError::Internal(
                "the system gives no randomness for the web app's secrets (getrandom failed)"
                    .into(),
            )
        })?;
        Ok(Auth {
            token: token.filter(|token| !token.is_empty()),
            secret,
            sessions: Mutex::default(),
            lifetimes: SessionLifetimes::default(),
            guard: Arc::new(UnboundedComparison),
        })
    }

    /// The same rule with sessions lasting `lifetimes`.
    #[must_use]
    pub fn with_session_lifetimes(mut self, lifetimes: SessionLifetimes) -> Self {
        self.lifetimes = lifetimes;
        self
    }

    /// The same rule comparing tokens through `guard`.
    #[must_use]
    pub fn with_token_guard(mut self, guard: Arc<dyn TokenGuard>) -> Self {
        self.guard = guard;
        self
    }

    /// Whether the pages need a token.
    #[must_use]
    pub fn token_required(&self) -> bool {
        self.token.is_some()
    }

    /// The CSRF token for a session id (or for the server, without a token).
    fn csrf_for(&self, session: &str) -> String {
        let mut digest = Sha256::new();
        digest.update(b"skillbox web csrf\0");
        digest.update(self.secret.as_bytes());
        digest.update(b"\0");
        digest.update(session.as_bytes());
        hex::encode(digest.finalize())
    }

    /// Who sent a request with these `headers` and `extensions`: a valid session first (no
    /// token is compared for it), then a bearer token through the guard.
    pub(crate) fn admit(&self, headers: &HeaderMap, extensions: &Extensions) -> Admission {
        let Some(token) = &self.token else {
            return Admission::Visitor(Visitor {
                csrf: self.csrf_for(""),
                signed_in: false,
            });
        };
        if let Some(session) = session_cookie(headers)
            && self.session_is_live(&session)
        {
            return Admission::Visitor(Visitor {
                csrf: self.csrf_for(&session),
                signed_in: true,
            });
        }
        let Some(presented) = presented_bearer(headers) else {
            return Admission::Stranger;
        };
        match self
            .guard
            .check(extensions, &|| token_matches(presented, token))
        {
            TokenCheck::Right => Admission::Visitor(Visitor {
                csrf: self.csrf_for("bearer"),
                signed_in: false,
            }),
            TokenCheck::Wrong => Admission::Stranger,
            TokenCheck::Throttled { retry_after } => Admission::Throttled(retry_after),
        }
    }

    /// Who sent `headers`, or `None` when the pages need a token and it has none (or its
    /// client is held back).
    #[cfg(test)]
    fn visitor(&self, headers: &HeaderMap) -> Option<Visitor> {
        match self.admit(headers, &Extensions::new()) {
            Admission::Visitor(visitor) => Some(visitor),
            Admission::Stranger | Admission::Throttled(_) => None,
        }
    }

    /// Whether `session` is a session of this server that has not expired; it counts as used
    /// now. An expired one is forgotten.
    fn session_is_live(&self, session: &str) -> bool {
        self.session_is_live_at(session, Instant::now())
    }

    fn session_is_live_at(&self, session: &str, now: Instant) -> bool {
        let Ok(mut sessions) = self.sessions.lock() else {
            return false;
        };
        let Some(times) = sessions.ids.get_mut(session) else {
            return false;
        };
        if times.expired(self.lifetimes, now) {
            sessions.ids.remove(session);
            sessions.order.retain(|known| known != session);
            return false;
        }
        times.used = now;
        true
    }

    /// A new session id, remembered; expired sessions are forgotten first, then the oldest
    /// past [`MAX_SESSIONS`].
    fn open_session(&self) -> Option<String> {
        self.open_session_at(Instant::now())
    }

    fn open_session_at(&self, now: Instant) -> Option<String> {
        let id = random_hex()?;
        let mut sessions = self.sessions.lock().ok()?;
        sessions.remove_expired(self.lifetimes, now);
        while sessions.order.len() >= MAX_SESSIONS {
            if let Some(oldest) = sessions.order.pop_front() {
                sessions.ids.remove(&oldest);
            }
        }
        sessions.ids.insert(
            id.clone(),
            SessionTimes {
                opened: now,
                used: now,
            },
        );
        sessions.order.push_back(id.clone());
        Some(id)
    }

    /// The `Set-Cookie` value of a new session: it lasts in the browser as long as it can on
    /// the server ([`SessionLifetimes::absolute`]).
    fn session_cookie_header(&self, session: &str) -> String {
        format!(
            "{SESSION_COOKIE}={session}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}",
            self.lifetimes.absolute.as_secs()
        )
    }

    fn close_session(&self, id: &str) {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.ids.remove(id);
            sessions.order.retain(|known| known != id);
        }
    }
}

/// The token an `Authorization: Bearer` header presents.
#[must_use]
pub fn presented_bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(bearer_token)
}

/// The session cookie's value among the request's `Cookie` headers (parsed by `cookie`; a
/// malformed pair is skipped, never the whole header).
fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|cookie| cookie.name() == SESSION_COOKIE)
        .map(|cookie| cookie.value().to_owned())
}

/// [`SECRET_BYTES`] from the system's random source, in hex; `None` when it has none.
fn random_hex() -> Option<String> {
    let mut bytes = [0u8; SECRET_BYTES];
    getrandom::fill(&mut bytes).ok()?;
    Some(hex::encode(bytes))
}

/// Route layer of every page and endpoint but `/login` and the assets: a visitor the token
/// rule lets in goes on (as a request extension); pages send the others to `/login`, endpoints
/// answer 401. State-changing requests also need JSON and the CSRF header.
pub(crate) async fn require_session(
    State(state): State<Arc<WebState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let visitor = match state.auth.admit(request.headers(), request.extensions()) {
        Admission::Visitor(visitor) => Some(visitor),
        Admission::Stranger => None,
        Admission::Throttled(retry_after) => {
            let refusal = too_many_attempts(retry_after);
            return if request.uri().path().starts_with("/api/") {
                crate::ApiError(refusal).into_response()
            } else {
                refusal.into_response()
            };
        }
    };
    let Some(visitor) = visitor else {
        let path = request.uri().path();
        if request.method() == Method::GET && !path.starts_with("/api/") {
            let wanted = request
                .uri()
                .path_and_query()
                .map_or("/", |wanted| wanted.as_str());
            let target = format!("/login?next={}", crate::pages::encode_path(wanted));
            return Redirect::to(&target).into_response();
        }
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            axum::Json(serde_json::json!({
                "error": "sign in at /login, or send `Authorization: Bearer <token>`"
            })),
        )
            .into_response();
    };
    if request.method() != Method::GET
        && request.method() != Method::HEAD
        && let Some(refusal) = csrf_refusal(request.headers(), &visitor)
    {
        return refusal;
    }
    request.extensions_mut().insert(visitor);
    next.run(request).await
}

/// Why a state-changing request is refused, if it is: it must be JSON (forms other pages
/// could post are refused) and carry the page's CSRF token. `/logout` is a form-less `POST`
/// the page's script sends the same way.
fn csrf_refusal(headers: &HeaderMap, visitor: &Visitor) -> Option<Response> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"));
    let presented = headers
        .get(CSRF_HEADER)
        .and_then(|value| value.to_str().ok());
    let refusal = |message: &str| {
        (
            StatusCode::FORBIDDEN,
            axum::Json(serde_json::json!({ "error": message })),
        )
            .into_response()
    };
    if !is_json {
        return Some(refusal(
            "state-changing requests must send JSON with `Content-Type: application/json`",
        ));
    }
    if !presented.is_some_and(|presented| token_matches(presented, &visitor.csrf)) {
        return Some(refusal(
            "missing or wrong CSRF token: send the page's `X-Skillbox-Csrf` header (reload the page to get a fresh one)",
        ));
    }
    None
}

/// `/login?next=…`.
#[derive(Deserialize)]
pub(crate) struct LoginQuery {
    next: Option<String>,
}

/// The login form's fields.
#[derive(Deserialize)]
pub(crate) struct LoginForm {
    token: String,
    next: Option<String>,
}

/// `GET /login`: the token form (or straight on without a token).
pub(crate) async fn login_page(
    State(state): State<Arc<WebState>>,
    Query(query): Query<LoginQuery>,
) -> Response {
    let next = safe_next(query.next.as_deref());
    if !state.auth.token_required() {
        return Redirect::to(&next).into_response();
    }
    pages::login_page(&next, None, StatusCode::OK)
}

/// The answer to a client held back by the token guard: 429 with `Retry-After`.
fn too_many_attempts(retry_after: Duration) -> WebError {
    let seconds = u64::try_from(retry_after.as_millis().div_ceil(1000))
        .unwrap_or(u64::MAX)
        .max(1);
    WebError::TooManyAttempts {
        message: format!(
            "too many wrong tokens came from your address lately; try again in {seconds} s"
        ),
        retry_after_seconds: seconds,
    }
}

/// `POST /login`: a session for the right token, the form again with a message otherwise
/// (429 with `Retry-After` while the client is held back for wrong tokens). The form is the
/// one state-changing request without the CSRF header (there is no session yet); the
/// server's `Origin` check still refuses other sites' pages.
pub(crate) async fn login(
    State(state): State<Arc<WebState>>,
    extensions: Extensions,
    form: Result<Form<LoginForm>, FormRejection>,
) -> Response {
    let form = match form {
        Ok(Form(form)) => form,
        Err(rejection) => {
            let message = if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                format!("The form is larger than the {MAX_LOGIN_BODY_BYTES} bytes sign-in reads.")
            } else {
                format!("The form could not be read: {rejection}")
            };
            return pages::login_page("/", Some(&message), rejection.status());
        }
    };
    let next = safe_next(form.next.as_deref());
    let Some(token) = &state.auth.token else {
        return Redirect::to(&next).into_response();
    };
    let presented = form.token.trim();
    match state
        .auth
        .guard
        .check(&extensions, &|| token_matches(presented, token))
    {
        TokenCheck::Right => {}
        TokenCheck::Wrong => {
            // A wrong guess costs its sender time, not the server (the guard bounds how
            // many one address may make; this slows each connection's).
            tokio::time::sleep(Duration::from_millis(300)).await;
            return pages::login_page(
                &next,
                Some(
                    "That is not the server's token. It is the value of SKILLBOX_TOKEN (or --token) where `skillbox serve` runs.",
                ),
                StatusCode::UNAUTHORIZED,
            );
        }
        TokenCheck::Throttled { retry_after } => {
            let refusal = too_many_attempts(retry_after);
            let mut page = pages::login_page(&next, Some(&refusal.to_string()), refusal.status());
            refusal.add_retry_after(&mut page);
            return page;
        }
    }
    let Some(session) = state.auth.open_session() else {
        return pages::error_page(StatusCode::INTERNAL_SERVER_ERROR, "cannot open a session");
    };
    (
        [(
            header::SET_COOKIE,
            state.auth.session_cookie_header(&session),
        )],
        Redirect::to(&next),
    )
        .into_response()
}

/// `POST /logout`: the session forgotten and its cookie cleared. The body (`{}`) says
/// nothing; a larger one than a few KiB is refused.
pub(crate) async fn logout(
    State(state): State<Arc<WebState>>,
    headers: HeaderMap,
    _body: LimitedBody<MAX_SMALL_BODY_BYTES>,
) -> Response {
    if let Some(session) = session_cookie(&headers) {
        state.auth.close_session(&session);
    }
    (
        [(
            header::SET_COOKIE,
            format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"),
        )],
        axum::Json(serde_json::json!({ "signed_out": true })),
    )
        .into_response()
}

/// Where to go after signing in: a path on this server only (never `//host` or a URL).
fn safe_next(next: Option<&str>) -> String {
    next.filter(|next| {
        next.starts_with('/')
            && !next.starts_with("//")
            && !next.contains('\\')
            && !next.chars().any(char::is_control)
    })
    .unwrap_or("/")
    .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_server() {
        assert_eq!(safe_next(Some("/skills?q=a")), "/skills?q=a");
        assert_eq!(safe_next(Some("//evil.example/")), "/");
        assert_eq!(safe_next(Some("https://evil.example/")), "/");
        assert_eq!(safe_next(Some("/\\evil.example")), "/");
        assert_eq!(safe_next(None), "/");
    }

    #[test]
    fn sessions_are_known_until_closed_and_csrf_differs_per_session() {
        let auth = Auth::new(Some("secret".into())).unwrap();
        let id = auth.open_session().unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            format!("other=1; {SESSION_COOKIE}={id}").parse().unwrap(),
        );
        let visitor = auth.visitor(&headers).unwrap();
        assert!(visitor.signed_in);
        assert_ne!(visitor.csrf, auth.csrf_for("another"));
        auth.close_session(&id);
        assert!(auth.visitor(&headers).is_none());
        assert!(auth.visitor(&HeaderMap::new()).is_none());
        let mut bearer = HeaderMap::new();
        bearer.insert(header::AUTHORIZATION, "bearer secret".parse().unwrap());
        assert!(auth.visitor(&bearer).is_some());
    }

    fn with_session(id: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            format!("{SESSION_COOKIE}={id}").parse().unwrap(),
        );
        headers
    }

    #[test]
    fn sessions_end_when_idle_or_old_and_are_forgotten() {
        let lifetimes = SessionLifetimes {
            idle: Duration::from_secs(60),
            absolute: Duration::from_secs(300),
        };
        let auth = Auth::new(Some("secret".into()))
            .unwrap()
            .with_session_lifetimes(lifetimes);
        let start = Instant::now();
        let at = |seconds: u64| start + Duration::from_secs(seconds);
        // Used every 50 s, a session lives until its absolute lifetime.
        let busy = auth.open_session_at(start).unwrap();
        for seconds in (50..300).step_by(50) {
            assert!(auth.session_is_live_at(&busy, at(seconds)), "{seconds} s");
        }
        assert!(!auth.session_is_live_at(&busy, at(300)));
        // Left alone for its idle lifetime, it ends, and stays ended.
        let idle = auth.open_session_at(start).unwrap();
        assert!(auth.session_is_live_at(&idle, at(59)));
        assert!(!auth.session_is_live_at(&idle, at(119)));
        assert!(!auth.session_is_live_at(&idle, at(120)));
        // Expired sessions nobody presents again are forgotten when the next one opens.
        let forgotten = auth.open_session_at(start).unwrap();
        let fresh = auth.open_session_at(at(200)).unwrap();
        let sessions = auth.sessions.lock().unwrap();
        assert!(!sessions.ids.contains_key(&forgotten));
        assert!(!sessions.ids.contains_key(&busy));
        assert!(!sessions.ids.contains_key(&idle));
        assert_eq!(sessions.ids.len(), 1);
        assert_eq!(sessions.order, [fresh]);
    }

    #[test]
    fn the_cookie_lasts_as_long_as_the_session_can() {
        let auth = Auth::new(Some("secret".into())).unwrap();
        assert_eq!(
            auth.session_cookie_header("abc"),
            "skillbox_session=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=604800"
        );
        assert_eq!(SESSION_ABSOLUTE_LIFETIME.as_secs(), 604_800);
    }

    /// A guard that holds every client back.
    struct HoldingBack;

    impl TokenGuard for HoldingBack {
        fn check(&self, _extensions: &Extensions, _matches: &dyn Fn() -> bool) -> TokenCheck {
            TokenCheck::Throttled {
                retry_after: Duration::from_millis(1500),
            }
        }
    }

    #[test]
    fn a_held_back_client_is_told_when_to_retry_but_its_sessions_go_on() {
        let auth = Auth::new(Some("secret".into()))
            .unwrap()
            .with_token_guard(Arc::new(HoldingBack));
        let session = auth.open_session().unwrap();
        let mut headers = with_session(&session);
        headers.insert(header::AUTHORIZATION, "Bearer secret".parse().unwrap());
        assert!(matches!(
            auth.admit(&headers, &Extensions::new()),
            Admission::Visitor(Visitor {
                signed_in: true,
                ..
            })
        ));
        headers.remove(header::COOKIE);
        let Admission::Throttled(retry_after) = auth.admit(&headers, &Extensions::new()) else {
            panic!("the bearer was compared");
        };
        let WebError::TooManyAttempts {
            retry_after_seconds,
            message,
        } = too_many_attempts(retry_after)
        else {
            panic!("not a 429");
        };
        assert_eq!(retry_after_seconds, 2);
        assert!(message.contains("try again in 2 s"), "{message}");
    }
}
