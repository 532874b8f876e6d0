//! JSON-RPC 2.0 wire types and rules, with no I/O: what a valid request is, how errors look,
//! which codes mean what.

use serde::Serialize;
use serde_json::{Value, json};

/// The body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// Not a valid request object (wrong `jsonrpc`, missing `method`, bad `id`, empty batch).
pub const INVALID_REQUEST: i64 = -32600;
/// No such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Missing or ill-typed parameters, unknown skill or blob, bad cursor, path escapes.
pub const INVALID_PARAMS: i64 = -32602;
/// Something failed inside the server.
pub const INTERNAL_ERROR: i64 = -32603;
/// Server-defined: too many executions in flight; retry later.
pub const SERVER_BUSY: i64 = -32000;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcError {
    /// The code.
    pub code: i64,
    /// What went wrong and what to do.
    pub message: String,
    /// Extra data, when there is any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// A new error.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32602` invalid params.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// `-32603` internal error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }
}

/// A request as received: validated envelope, raw params.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcRequest {
    /// The id to echo; `None` for a notification (no reply).
    pub id: Option<Value>,
    /// The method name.
    pub method: String,
    /// The params object (absent params become an empty object).
    pub params: serde_json::Map<String, Value>,
}

/// A request that failed validation: the error, and the id to answer with (`null` when the id
/// itself is unusable).
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The error to send.
    pub error: RpcError,
    /// The id to send it with.
    pub id: Value,
}

fn rejected(error: RpcError, id: Value) -> Box<Rejected> {
    Box::new(Rejected { error, id })
}

/// Validate one request object.
///
/// # Errors
/// `-32600` for a malformed envelope, `-32602` for params that are not an object.
pub fn parse_request(value: Value) -> Result<RpcRequest, Box<Rejected>> {
    let Value::Object(mut object) = value else {
        return Err(rejected(
            RpcError::new(INVALID_REQUEST, "a request must be a JSON object"),
            Value::Null,
        ));
    };
    let id = object.remove("id");
    let id_for_errors = match &id {
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => id.clone(),
        Some(_) => {
            return Err(rejected(
                RpcError::new(INVALID_REQUEST, "`id` must be a string, a number or null"),
                Value::Null,
            ));
        }
        None => Value::Null,
    };
    let invalid = |message: &str| {
        rejected(
            RpcError::new(INVALID_REQUEST, message),
            id_for_errors.clone(),
        )
    };
    match object.remove("jsonrpc") {
        Some(Value::String(version)) if version == "2.0" => {}
        _ => return Err(invalid("`jsonrpc` must be exactly \"2.0\"")),
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        _ => return Err(invalid("`method` must be a string")),
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(params)) => params,
        Some(Value::Array(_)) => {
            return Err(rejected(
                RpcError::invalid_params(
                    "`params` must be an object: this server takes named parameters only",
                ),
                id_for_errors,
            ));
        }
        Some(_) => return Err(invalid("`params` must be an object")),
    };
    Ok(RpcRequest { id, method, params })
}

/// A success response.
#[must_use]
pub fn success(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error response.
#[must_use]
pub fn failure(id: Value, error: RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_rules() {
        assert!(parse_request(json!({"jsonrpc": "2.0", "method": "m", "id": 1})).is_ok());
        let notification = parse_request(json!({"jsonrpc": "2.0", "method": "m"})).unwrap();
        assert_eq!(notification.id, None);
        let rejected =
            parse_request(json!({"jsonrpc": "1.0", "method": "m", "id": 7})).unwrap_err();
        assert_eq!(
            (rejected.error.code, rejected.id),
            (INVALID_REQUEST, json!(7))
        );
        let rejected =
            parse_request(json!({"jsonrpc": "2.0", "method": "m", "id": [1]})).unwrap_err();
        assert_eq!(
            (rejected.error.code, rejected.id),
            (INVALID_REQUEST, Value::Null)
        );
        let rejected =
            parse_request(json!({"jsonrpc": "2.0", "method": "m", "params": [1], "id": 1}))
                .unwrap_err();
        assert_eq!(rejected.error.code, INVALID_PARAMS);
        assert_eq!(
            parse_request(json!(5)).unwrap_err().error.code,
            INVALID_REQUEST
        );
    }
}
