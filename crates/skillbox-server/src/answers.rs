//! What answers may cost. A request of a few hundred bytes can ask for a large answer (a
//! `read_blob` of 16 MiB), so answers are bounded like request bodies are:
//! - the bytes blob reads return are taken from the large-body budget before they are
//!   fetched (`skillbox_services::BudgetShare`, the `ReadBudget` of the protocol call, shared
//!   with `/mcp`), beyond the first
//!   `FREE_READ_BYTES` of each request (or batch), and held until the whole answer has been
//!   handed to the connection ([`Answer`]); past the budget the read gets -32000 with
//!   `retry_after_ms`;
//! - the answers of one batch stop being collected at [`MAX_BATCH_ANSWER_BYTES`]
//!   (see `server.rs`).

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper::body::{Frame, SizeHint};
pub(crate) use skillbox_services::budget::{BudgetShare, budget_spent};

/// Most bytes of answers one batch collects. The requests after that are not run; each gets
/// -32000 saying to send it again in another batch.
pub const MAX_BATCH_ANSWER_BYTES: usize = 32 * 1024 * 1024;
/// Bytes of an answer handed to the connection at a time. hyper asks for the next piece only
/// when it has room to write it, so the budget an answer holds is given back once nearly all of
/// it has gone to the client.
const ANSWER_PIECE_BYTES: usize = 64 * 1024;
/// A JSON answer handed to the connection in pieces, holding its budget share until the last
/// piece has been taken.
#[derive(Debug)]
pub(crate) struct Answer {
    bytes: Bytes,
    sent: usize,
    _share: BudgetShare,
}

impl Answer {
    /// The 200 response carrying `json`.
    pub(crate) fn response(json: Vec<u8>, share: BudgetShare) -> Response {
        let answer = Answer {
            bytes: Bytes::from(json),
            sent: 0,
            _share: share,
        };
        (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            Body::new(answer),
        )
            .into_response()
    }
}

impl hyper::body::Body for Answer {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.sent == this.bytes.len() {
            return Poll::Ready(None);
        }
        let end = this
            .sent
            .saturating_add(ANSWER_PIECE_BYTES)
            .min(this.bytes.len());
        let piece = this.bytes.slice(this.sent..end);
        this.sent = end;
        Poll::Ready(Some(Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.sent == self.bytes.len()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact((self.bytes.len() - self.sent) as u64)
    }
}

/// A response body that keeps `held` (a request's budget share) until the body has been sent
/// or dropped.
pub(crate) struct Holding<T> {
    pub(crate) body: Body,
    pub(crate) _held: T,
}

impl<T: Unpin> hyper::body::Body for Holding<T> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
