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

/// Each asset's `ETag`, in the order of [`ASSETS`], hashed once: assets never change while the
/// server runs.
fn etags() -> &'static [String] {
    static ETAGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    ETAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|asset| {
                let digest = Sha256::digest((asset.body)().as_bytes());
                format!("\"{}\"", hex::encode(&digest[..12]))
            })
            .collect()
    })
}

/// `GET /assets/{name}`, with an `ETag` so a reload costs a 304.
pub(crate) async fn asset(Path(name): Path<String>, headers: HeaderMap) -> Response {
    let Some(index) = ASSETS.iter().position(|asset| asset.name == name) else {
        return (StatusCode::NOT_FOUND, "no such asset").into_response();
    };
    let asset = &ASSETS[index];
    let etag = &etags()[index];
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
    let mut response = (StatusCode::OK, cache, (asset.body)()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    response
}
