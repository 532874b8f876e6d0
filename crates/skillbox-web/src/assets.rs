//! The page's script, stylesheets and icon, compiled into the binary: nothing is fetched from
//! elsewhere, so the app works offline and no third party sees who uses it.

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: fn() -> &'static str,
}

const ASSETS: [Asset; 4] = [
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        body: || include_str!("../assets/app.js"),
    },
    Asset {
        name: "app.css",
        content_type: "text/css; charset=utf-8",
        body: || include_str!("../assets/app.css"),
    },
    Asset {
        name: "highlight.css",
        content_type: "text/css; charset=utf-8",
        body: crate::render::highlight_css,
    },
    Asset {
        name: "favicon.svg",
        content_type: "image/svg+xml",
        body: || include_str!("../assets/favicon.svg"),
    },
];

/// `GET /assets/{name}`, with an `ETag` so a reload costs a 304.
pub(crate) async fn asset(Path(name): Path<String>, headers: HeaderMap) -> Response {
    let Some(asset) = ASSETS.iter().find(|asset| asset.name == name) else {
        return (StatusCode::NOT_FOUND, "no such asset").into_response();
    };
    let body = (asset.body)();
    let digest = Sha256::digest(body.as_bytes());
    let etag = format!("\"{}\"", hex::encode(&digest[..12]));
    let cache = [
        (header::ETAG, etag.clone()),
        (header::CACHE_CONTROL, "no-cache".to_owned()),
    ];
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|value| value.as_bytes() == etag.as_bytes());
    if unchanged {
        return (StatusCode::NOT_MODIFIED, cache).into_response();
    }
    let mut response = (StatusCode::OK, cache, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    response
}
