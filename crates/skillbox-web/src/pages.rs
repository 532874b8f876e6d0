//! What every page shares: the layout's values, rendering a template into a response, the
//! error, login and not-found pages, sizes written for people, and links with their parts
//! percent-encoded.

use askama::Template;

use crate::auth::Visitor;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

/// The layout's values: the title, the navigation entry to mark, the CSRF token the script
/// sends, and whether a "sign out" button is shown.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub(crate) title: String,
    pub(crate) active: &'static str,
    pub(crate) csrf: String,
    pub(crate) signed_in: bool,
}

impl Layout {
    /// The layout values every page shares, for this visitor.
    pub(crate) fn for_visitor(visitor: &Visitor, active: &'static str, title: String) -> Self {
        Layout {
            title,
            active,
            csrf: visitor.csrf.clone(),
            signed_in: visitor.signed_in,
        }
    }

    /// The layout of pages shown before (or without) a visitor: no token, no navigation mark.
    pub(crate) fn bare(title: &str) -> Self {
        Layout {
            title: title.to_owned(),
            active: "",
            csrf: String::new(),
            signed_in: false,
        }
    }

    /// The navigation entries: path, label, and whether it is the current page.
    pub(crate) fn navigation(&self) -> [(&'static str, &'static str, bool); 5] {
        [
            ("/skills", "Skills", self.active == "skills"),
            ("/playground", "Playground", self.active == "playground"),
            ("/chat", "Chat", self.active == "chat"),
            ("/runs", "Runs", self.active == "runs"),
            ("/evals", "Evals", self.active == "evals"),
        ]
    }
}

/// A template rendered into an HTML response with `status`, or the error page when rendering
/// fails.
pub(crate) fn render(template: &impl Template, status: StatusCode) -> Response {
    match template.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(error) => {
            tracing::error!(%error, "a page could not be rendered");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                Html("<!doctype html><title>skillbox</title><p>This page could not be rendered; the server's log says why.</p>".to_owned()),
            )
                .into_response()
        }
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    layout: Layout,
    status: u16,
    message: &'a str,
}

/// The error page: the status and a message saying what to do.
pub(crate) fn error_page(status: StatusCode, message: &str) -> Response {
    render(
        &ErrorPage {
            layout: Layout::bare(status.canonical_reason().unwrap_or("Error")),
            status: status.as_u16(),
            message,
        },
        status,
    )
}

/// Any path the web app does not answer.
pub(crate) async fn not_found(uri: axum::http::Uri) -> Response {
    error_page(
        StatusCode::NOT_FOUND,
        &format!(
            "Nothing is served at `{}`. The skills are listed at /skills.",
            uri.path()
        ),
    )
}

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage<'a> {
    layout: Layout,
    next: &'a str,
    message: Option<&'a str>,
}

/// The token form.
pub(crate) fn login_page(next: &str, message: Option<&str>, status: StatusCode) -> Response {
    render(
        &LoginPage {
            layout: Layout::bare("Sign in"),
            next,
            message,
        },
        status,
    )
}

/// A size for people: bytes, KiB or MiB.
pub(crate) fn human_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    match bytes {
        bytes if bytes < KIB => format!("{bytes} B"),
        bytes if bytes < KIB * KIB => format!("{:.1} KiB", bytes as f64 / KIB as f64),
        bytes => format!("{:.1} MiB", bytes as f64 / (KIB * KIB) as f64),
    }
}

/// What stays literal in a path segment or query value: letters, digits and `-_.~`
/// (RFC 3986's unreserved characters).
const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// `text` percent-encoded for one path segment or query value.
pub(crate) fn encode_component(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, COMPONENT).to_string()
}

/// A relative path percent-encoded segment by segment (the slashes kept).
pub(crate) fn encode_path(path: &str) -> String {
    path.split('/')
        .map(encode_component)
        .collect::<Vec<_>>()
        .join("/")
}
