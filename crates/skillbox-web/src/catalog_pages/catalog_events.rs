//! The catalog's change events (`GET /api/catalog/events`): one each time the catalog is
//! reloaded, so open catalog pages show an edited skill without a manual refresh.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};

use crate::event_stream::async_stream_of;
use crate::{ApiError, MAX_CATALOG_STREAMS, WebError, WebState};

/// `GET /api/catalog/events`: an event each time the catalog is reloaded, so open catalog
/// pages show an edited skill without a manual refresh.
pub(crate) async fn catalog_events(State(state): State<Arc<WebState>>) -> Response {
    let Ok(permit) = Arc::clone(&state.catalog_streams).try_acquire_owned() else {
        return ApiError(WebError::Busy(format!(
            "{MAX_CATALOG_STREAMS} pages follow the catalog already; close some"
        )))
        .into_response();
    };
    let mut changes = state.live.subscribe();
    let first = state.live.generation();
    let live = Arc::clone(&state.live);
    let stream = async_stream_of(move |sender| async move {
        let hello = Event::default()
            .event("catalog")
            .data(serde_json::json!({ "generation": first }).to_string());
        if sender.send(Ok::<_, Infallible>(hello)).await.is_err() {
            return;
        }
        loop {
            let generation = match changes.recv().await {
                Ok(change) => change.generation,
                // Behind by more than the backlog: the generation in effect now.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => live.generation(),
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            let event = Event::default()
                .event("catalog")
                .data(serde_json::json!({ "generation": generation }).to_string());
            if sender.send(Ok(event)).await.is_err() {
                return;
            }
        }
    });
    // The place is held as long as the page reads the stream.
    let stream = futures_util::StreamExt::map(stream, move |event| {
        let _held = &permit;
        event
    });
    let stream =
        futures_util::StreamExt::take_until(stream, state.shutdown.clone().cancelled_owned());
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}
