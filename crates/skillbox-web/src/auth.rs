//! Who may use the pages, and which requests may change anything.
//!
//! - Without a token the server answers loopback names only (the server's `Host` check), and
//!   pages need nothing more.
//! - With a token, pages need a session: `/login` takes the token and sets an `HttpOnly`,
//!   `SameSite=Strict` cookie holding a random session id. `Authorization: Bearer <token>`
//!   works too, for scripts.
//! - Every state-changing request is a `POST` with `Content-Type: application/json` and the
//!   page's CSRF token in `X-Skillbox-Csrf`. A page on another origin can send neither
//!   without a CORS preflight, which is never granted.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::Form;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use skillbox_services::credentials::{bearer_token, token_matches};

use crate::WebState;
use crate::pages;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "skillbox_session";
/// The header state-changing requests carry the page's CSRF token in.
pub const CSRF_HEADER: &str = "x-skillbox-csrf";
/// Sessions kept at once; the oldest are forgotten past this (their pages ask for the token
/// again).
pub const MAX_SESSIONS: usize = 10_000;
/// Bytes of randomness in a session id and in the server's secret.
const SECRET_BYTES: usize = 32;

/// The token rule of the pages: the token, the sessions made with it, and the secret CSRF
/// tokens are derived from.
pub struct Auth {
    token: Option<String>,
    secret: String,
    sessions: Mutex<SessionSet>,
}

/// Session ids in the order they were made, to forget the oldest first.
#[derive(Default)]
struct SessionSet {
    ids: HashSet<String>,
    order: std::collections::VecDeque<String>,
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
        })
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

    /// Who sent `headers`, or `None` when the pages need a token and it has none.
    pub(crate) fn visitor(&self, headers: &HeaderMap) -> Option<Visitor> {
        let Some(token) = &self.token else {
            return Some(Visitor {
                csrf: self.csrf_for(""),
                signed_in: false,
            });
        };
        if presented_bearer(headers).is_some_and(|presented| token_matches(presented, token)) {
            return Some(Visitor {
                csrf: self.csrf_for("bearer"),
                signed_in: false,
            });
        }
        let session = session_cookie(headers)?;
        let known = self
            .sessions
            .lock()
            .is_ok_and(|sessions| sessions.ids.contains(session));
        known.then(|| Visitor {
            csrf: self.csrf_for(session),
            signed_in: true,
        })
    }

    /// A new session id, remembered.
    fn open_session(&self) -> Option<String> {
        let id = random_hex()?;
        let mut sessions = self.sessions.lock().ok()?;
        while sessions.order.len() >= MAX_SESSIONS {
            if let Some(oldest) = sessions.order.pop_front() {
                sessions.ids.remove(&oldest);
            }
        }
        sessions.ids.insert(id.clone());
        sessions.order.push_back(id.clone());
        Some(id)
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

fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value)
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
    let Some(visitor) = state.auth.visitor(request.headers()) else {
        let path = request.uri().path();
        if request.method() == Method::GET && !path.starts_with("/api/") {
            let wanted = request
                .uri()
                .path_and_query()
                .map_or("/", |wanted| wanted.as_str());
            let target = format!("/login?next={}", crate::catalog_pages::encode_path(wanted));
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

/// `POST /login`: a session for the right token, the form again with a message otherwise.
/// The form is the one state-changing request without the CSRF header (there is no session
/// yet); the server's `Origin` check still refuses other sites' pages.
pub(crate) async fn login(
    State(state): State<Arc<WebState>>,
    Form(form): Form<LoginForm>,
) -> Response {
    let next = safe_next(form.next.as_deref());
    let Some(token) = &state.auth.token else {
        return Redirect::to(&next).into_response();
    };
    if !token_matches(form.token.trim(), token) {
        // A wrong guess costs its sender time, not the server.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        return pages::login_page(
            &next,
            Some(
                "That is not the server's token. It is the value of SKILLBOX_TOKEN (or --token) where `skillbox serve` runs.",
            ),
            StatusCode::UNAUTHORIZED,
        );
    }
    let Some(session) = state.auth.open_session() else {
        return pages::error_page(StatusCode::INTERNAL_SERVER_ERROR, "cannot open a session");
    };
    (
        [(
            header::SET_COOKIE,
            format!("{SESSION_COOKIE}={session}; Path=/; HttpOnly; SameSite=Strict"),
        )],
        Redirect::to(&next),
    )
        .into_response()
}

/// `POST /logout`: the session forgotten and its cookie cleared.
pub(crate) async fn logout(State(state): State<Arc<WebState>>, headers: HeaderMap) -> Response {
    if let Some(session) = session_cookie(&headers) {
        state.auth.close_session(session);
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
}
