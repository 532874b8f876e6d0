//! the Responses API (being written: the request body and stream reader follow [`super::chat`]).

use serde_json::Value;

use crate::model::{ModelError, ModelRequest, ModelResponse};

/// The streaming request body.
#[must_use]
pub fn request_body(request: &ModelRequest<'_>) -> Value {
    serde_json::json!({ "model": request.model, "stream": true })
}

/// Read a whole (not streamed) response.
///
/// # Errors
/// Always, until written.
pub fn parse_response(body: &Value) -> Result<ModelResponse, ModelError> {
    Err(ModelError::Malformed {
        detail: super::excerpt(&body.to_string()),
    })
}

/// Reads a the Responses API event stream.
#[derive(Debug, Default)]
pub struct ResponsesStream {}

impl super::StreamDecoder for ResponsesStream {
    fn event(
        &mut self,
        _event: &str,
        _data: &str,
        _on_text: &mut dyn FnMut(&str),
    ) -> Result<bool, ModelError> {
        Ok(false)
    }

    fn finish(self: Box<Self>) -> Result<ModelResponse, ModelError> {
        Err(ModelError::Truncated {
            detail: "not written yet".to_owned(),
        })
    }
}
