//! Request bodies of the JSON endpoints: each endpoint names the most bytes it reads, a body
//! declared larger is refused before any of it is read, one sent in chunks is refused as soon
//! as it passes the bound, and what is read is decoded straight into the endpoint's typed
//! struct (serde skips members it does not know without building them), never into a JSON
//! tree, as `/rpc` reads its bodies. Before, every endpoint took up to 2 MiB whatever it
//! needed, so a conversation's "stop" read and parsed a 2 MiB body to ignore it.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use crate::{ApiError, WebError};

/// Bodies of the endpoints that take a few small fields (a model's label, an approval's
/// answer) or none (stop, sign out), in bytes.
pub const MAX_SMALL_BODY_BYTES: usize = 4 * 1024;

/// A request body of at most `MAX_BYTES` bytes, read whole. Larger bodies get 413 with a
/// message naming the bound.
#[derive(Debug)]
pub(crate) struct LimitedBody<const MAX_BYTES: usize>(pub(crate) Bytes);

impl<S: Send + Sync, const MAX_BYTES: usize> FromRequest<S> for LimitedBody<MAX_BYTES> {
    type Rejection = ApiError;

    async fn from_request(request: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let too_large = |size: String| {
            ApiError(WebError::TooLarge(format!(
                "the request body is {size} bytes; this endpoint reads at most {MAX_BYTES}"
            )))
        };
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|length| length.to_str().ok()?.parse::<u64>().ok());
        if let Some(declared) = declared
            && declared > MAX_BYTES as u64
        {
            return Err(too_large(declared.to_string()));
        }
        // The pieces as they came, joined once at the end: growing one buffer as they come
        // would hold up to three times the body while it is copied.
        let mut pieces = Vec::new();
        let mut length = 0;
        let mut stream = request.into_body().into_data_stream();
        while let Some(piece) = stream.next().await {
            let piece = piece.map_err(|error| {
                ApiError(WebError::BadRequest(format!(
                    "the request body could not be read: {error}"
                )))
            })?;
            length += piece.len();
            if length > MAX_BYTES {
                return Err(too_large(format!("over {MAX_BYTES}")));
            }
            pieces.push(piece);
        }
        if pieces.len() == 1 {
            return Ok(LimitedBody(pieces.swap_remove(0)));
        }
        let mut body = Vec::with_capacity(length);
        for piece in pieces {
            body.extend_from_slice(&piece);
        }
        Ok(LimitedBody(Bytes::from(body)))
    }
}

/// A JSON body of at most `MAX_BYTES` bytes decoded into `T`. A body that is not the JSON `T`
/// reads gets 400 naming what is wrong (a missing member, a wrong type).
#[derive(Debug)]
pub(crate) struct JsonBody<T, const MAX_BYTES: usize>(pub(crate) T);

impl<S: Send + Sync, T: DeserializeOwned, const MAX_BYTES: usize> FromRequest<S>
    for JsonBody<T, MAX_BYTES>
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let LimitedBody(bytes) = LimitedBody::<MAX_BYTES>::from_request(request, state).await?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|error| {
                ApiError(WebError::BadRequest(format!(
                    "the body is not the JSON this endpoint reads: {error}"
                )))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Answer {
        approve: bool,
    }

    async fn decode<const MAX: usize>(
        body: Body,
        declared: Option<usize>,
    ) -> Result<Answer, (u16, String)> {
        let mut request = Request::builder().method("POST").uri("/x");
        if let Some(declared) = declared {
            request = request.header(header::CONTENT_LENGTH, declared);
        }
        let request = request.body(body).unwrap();
        JsonBody::<Answer, MAX>::from_request(request, &())
            .await
            .map(|JsonBody(answer)| answer)
            .map_err(|ApiError(error)| (error.status().as_u16(), error.to_string()))
    }

    #[tokio::test]
    async fn bodies_are_bounded_before_and_while_they_are_read() {
        let body = br#"{"approve": true, "unknown": [[[1, 2, {"deep": null}]]]}"#;
        assert_eq!(
            decode::<64>(Body::from(&body[..]), Some(body.len())).await,
            Ok(Answer { approve: true })
        );
        // Declared too large: refused unread.
        let (status, message) = decode::<16>(Body::empty(), Some(2 * 1024 * 1024))
            .await
            .unwrap_err();
        assert_eq!(status, 413);
        assert!(
            message.contains("2097152") && message.contains("at most 16"),
            "{message}"
        );
        // Sent in pieces without a length: refused once past the bound.
        let pieces = futures_util::stream::iter(
            (0..1000).map(|_| Ok::<_, std::io::Error>(Bytes::from_static(b"[[[[[[[[[["))),
        );
        let (status, message) = decode::<64>(Body::from_stream(pieces), None)
            .await
            .unwrap_err();
        assert_eq!(status, 413, "{message}");
        // Within the bound but not what the endpoint reads: 400 naming the member.
        let (status, message) = decode::<64>(Body::from("{}"), None).await.unwrap_err();
        assert_eq!(status, 400);
        assert!(message.contains("`approve`"), "{message}");
    }
}
