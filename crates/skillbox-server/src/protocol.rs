//! JSON-RPC 2.0 wire types and rules, with no I/O: what a valid request is, how errors look,
//! which codes mean what.

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use skillbox_services::ServiceError;
use skillbox_services::params::{ShapeLimits, check_shape};

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
/// Server-defined: too many executions (or large requests) in flight; retry later.
pub const SERVER_BUSY: i64 = -32000;
/// Server-defined: the request took longer than its time budget and was given up.
pub const TIMED_OUT: i64 = -32001;
/// Milliseconds a busy client is told to wait before it tries again: `retry_after_ms` in the
/// -32000 error's data, and the `Retry-After` header (in seconds) of a 503.
pub const RETRY_AFTER_MS: u64 = skillbox_services::RETRY_AFTER_MS;

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

    /// `-32000` the server is busy, with `retry_after_ms` ([`RETRY_AFTER_MS`]) in its data.
    pub fn busy(message: impl Into<String>) -> Self {
        Self::busy_for(message, RETRY_AFTER_MS)
    }

    /// `-32000` the server is busy, with this `retry_after_ms` in its data.
    pub fn busy_for(message: impl Into<String>, retry_after_ms: u64) -> Self {
        RpcError {
            data: Some(json!({ "retry_after_ms": retry_after_ms })),
            ..Self::new(SERVER_BUSY, message)
        }
    }
}

/// The codes of the services' errors: -32602 for the caller's mistakes, -32000 with
/// `data.retry_after_ms` for a busy runtime, -32603 for failures inside; messages as they are.
impl From<ServiceError> for RpcError {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::InvalidParams(message) => RpcError::invalid_params(message),
            ServiceError::Busy {
                message,
                retry_after_ms,
            } => RpcError::busy_for(message, retry_after_ms),
            ServiceError::Internal(message) => RpcError::internal(message),
            other => RpcError::internal(other.to_string()),
        }
    }
}

/// Most requests one batch may hold. A longer batch is refused after reading this many entries
/// plus one, without looking at the rest.
pub const MAX_BATCH_REQUESTS: usize = 100;
/// Longest method name accepted, in bytes (the real ones are far shorter).
pub const MAX_METHOD_BYTES: usize = 128;
/// Largest `params` of the catalog methods and `read_blob`, in bytes of JSON.
pub const MAX_PARAMS_BYTES: usize = 64 * 1024;
/// Largest `params` of `execute_skill` and `run_code`, in bytes of JSON (code up to 1 MiB plus
/// arguments).
pub const MAX_RUN_PARAMS_BYTES: usize = 8 * 1024 * 1024;
/// Most JSON values in one request's `params` (counted from its commas and brackets, so an
/// upper bound). Parsed params cost about 100 bytes per value, so this keeps one request's
/// parameters to about 10 MB of memory however its bytes are arranged.
pub const MAX_PARAMS_VALUES: usize = 100_000;
/// Deepest nesting of arrays and objects in one request's `params`.
pub const MAX_PARAMS_DEPTH: usize = 64;

/// A body as received: one request or a batch, each entry still unparsed JSON (borrowed from
/// the body, so nothing is built for entries that are refused).
#[derive(Debug)]
pub enum RpcBody<'a> {
    /// One request (or anything that is not an array), not yet checked: [`parse_request`]
    /// reads it in one pass.
    Single(&'a [u8]),
    /// A batch of at most [`MAX_BATCH_REQUESTS`] entries.
    Batch(Vec<&'a RawValue>),
}

/// Split a body into its requests, checking that a batch is JSON and neither empty nor longer
/// than [`MAX_BATCH_REQUESTS`]. No JSON value is built: entries stay raw.
///
/// # Errors
/// `-32700` for a body that is not JSON, `-32600` for an empty or too long batch.
pub fn parse_body(body: &[u8]) -> Result<RpcBody<'_>, RpcError> {
    let not_json = |error: serde_json::Error| {
        RpcError::new(PARSE_ERROR, format!("the body is not valid JSON: {error}"))
    };
    let is_batch = body
        .iter()
        .find(|byte| !byte.is_ascii_whitespace())
        .is_some_and(|byte| *byte == b'[');
    if !is_batch {
        return Ok(RpcBody::Single(body));
    }
    let too_long = std::cell::Cell::new(false);
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let entries = serde::Deserializer::deserialize_seq(
        &mut deserializer,
        BatchVisitor {
            too_long: &too_long,
        },
    )
    .and_then(|entries| deserializer.end().map(|()| entries));
    match entries {
        _ if too_long.get() => Err(RpcError::new(
            INVALID_REQUEST,
            format!(
                "a batch may hold at most {MAX_BATCH_REQUESTS} requests; send the rest in further batches"
            ),
        )),
        Err(error) => Err(not_json(error)),
        Ok(entries) if entries.is_empty() => Err(RpcError::new(
            INVALID_REQUEST,
            "an empty batch is not a request",
        )),
        Ok(entries) => Ok(RpcBody::Batch(entries)),
    }
}

/// Collects batch entries as raw JSON and gives up after [`MAX_BATCH_REQUESTS`] + 1.
struct BatchVisitor<'flag> {
    too_long: &'flag std::cell::Cell<bool>,
}

impl<'de> Visitor<'de> for BatchVisitor<'_> {
    type Value = Vec<&'de RawValue>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("an array of requests")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut sequence: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = sequence.next_element::<&'de RawValue>()? {
            if entries.len() == MAX_BATCH_REQUESTS {
                self.too_long.set(true);
                return Err(serde::de::Error::custom("the batch is too long"));
            }
            entries.push(entry);
        }
        Ok(entries)
    }
}

/// A request as received: validated envelope, params still raw (each method decodes its own,
/// within its own limits).
#[derive(Debug, Clone)]
pub struct RpcRequest<'a> {
    /// The id to echo; `None` for a notification (no reply).
    pub id: Option<Value>,
    /// The method name.
    pub method: String,
    /// The params object, raw; `None` when absent or null.
    pub params: Option<&'a RawValue>,
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

/// The members of a request object, unparsed; other members are skipped without being built.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// A member that is present, `null` included (so `"id": null` differs from no id).
fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

fn first_byte(raw: &RawValue) -> u8 {
    first_byte_of(raw.get().as_bytes())
}

fn first_byte_of(text: &[u8]) -> u8 {
    text.iter()
        .copied()
        .find(|byte| !byte.is_ascii_whitespace())
        .unwrap_or_default()
}

/// The error for a request that is not a valid request object: -32700 when it is not JSON at
/// all (checked again, without building anything, only on this error path), -32600 otherwise.
fn not_a_request(entry: &[u8], message: impl FnOnce() -> String) -> Box<Rejected> {
    let error = match serde_json::from_slice::<serde::de::IgnoredAny>(entry) {
        Err(error) => RpcError::new(PARSE_ERROR, format!("the body is not valid JSON: {error}")),
        Ok(_) => RpcError::new(INVALID_REQUEST, message()),
    };
    rejected(error, Value::Null)
}

/// Validate one request object (a batch entry, or a whole body), reading it once.
///
/// # Errors
/// `-32700` for text that is not JSON, `-32600` for a malformed envelope, `-32602` for
/// params that are not an object.
pub fn parse_request(entry: &[u8]) -> Result<RpcRequest<'_>, Box<Rejected>> {
    if first_byte_of(entry) != b'{' {
        return Err(not_a_request(entry, || {
            "a request must be a JSON object".to_owned()
        }));
    }
    let envelope: Envelope<'_> = serde_json::from_slice(entry)
        .map_err(|error| not_a_request(entry, || format!("not a valid request object: {error}")))?;
    let id = match envelope.id {
        None => None,
        Some(raw) if matches!(first_byte(raw), b'"' | b'-' | b'0'..=b'9' | b'n') => {
            Some(serde_json::from_str::<Value>(raw.get()).map_err(|error| {
                rejected(
                    RpcError::new(INVALID_REQUEST, format!("`id` is not valid: {error}")),
                    Value::Null,
                )
            })?)
        }
        Some(_) => {
            return Err(rejected(
                RpcError::new(INVALID_REQUEST, "`id` must be a string, a number or null"),
                Value::Null,
            ));
        }
    };
    let id_for_errors = id.clone().unwrap_or(Value::Null);
    let invalid = |message: &str| {
        rejected(
            RpcError::new(INVALID_REQUEST, message),
            id_for_errors.clone(),
        )
    };
    let short_string = |raw: &RawValue, max_bytes: usize| {
        (first_byte(raw) == b'"' && raw.get().len() <= max_bytes + 2)
            .then(|| serde_json::from_str::<String>(raw.get()).ok())
            .flatten()
    };
    match envelope.jsonrpc.and_then(|raw| short_string(raw, 8)) {
        Some(version) if version == "2.0" => {}
        _ => return Err(invalid("`jsonrpc` must be exactly \"2.0\"")),
    }
    let method = match envelope.method {
        Some(raw) if first_byte(raw) == b'"' => {
            short_string(raw, MAX_METHOD_BYTES).ok_or_else(|| {
                invalid(&format!(
                    "`method` is longer than {MAX_METHOD_BYTES} bytes; no method has such a name"
                ))
            })?
        }
        _ => return Err(invalid("`method` must be a string")),
    };
    let params = match envelope.params {
        None => None,
        Some(raw) => match first_byte(raw) {
            b'{' => Some(raw),
            b'n' => None,
            b'[' => {
                return Err(rejected(
                    RpcError::invalid_params(
                        "`params` must be an object: this server takes named parameters only",
                    ),
                    id_for_errors,
                ));
            }
            _ => return Err(invalid("`params` must be an object")),
        },
    };
    Ok(RpcRequest { id, method, params })
}

/// Measure a method's params before anything is decoded from them: params larger than
/// `max_bytes`, with more than [`MAX_PARAMS_VALUES`] values or nested deeper than
/// [`MAX_PARAMS_DEPTH`] are refused cheaply. The door policy decodes them afterwards.
///
/// # Errors
/// `-32602` naming the method and the limit.
pub fn check_params(method: &str, params: &RawValue, max_bytes: usize) -> Result<(), RpcError> {
    let hint = if max_bytes > MAX_PARAMS_BYTES {
        "put large inputs in a blob (create_blob) and pass its id in `input_blobs`"
    } else {
        "these parameters are short names and numbers"
    };
    check_shape(
        &format!("the params of `{method}`"),
        params.get(),
        ShapeLimits {
            max_bytes,
            max_depth: MAX_PARAMS_DEPTH,
            max_values: MAX_PARAMS_VALUES,
        },
        hint,
    )
    .map_err(RpcError::invalid_params)
}

/// An error response.
#[must_use]
pub fn failure(id: Value, error: RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillbox_services::params::JsonShape;

    fn raw(text: &str) -> &RawValue {
        serde_json::from_str(text).unwrap()
    }

    fn request(text: &str) -> Result<RpcRequest<'_>, Box<Rejected>> {
        parse_request(text.as_bytes())
    }

    #[test]
    fn envelope_rules() {
        assert!(request(r#"{"jsonrpc": "2.0", "method": "m", "id": 1}"#).is_ok());
        let notification = request(r#"{"jsonrpc": "2.0", "method": "m"}"#).unwrap();
        assert_eq!(notification.id, None);
        let null_id = request(r#"{"jsonrpc": "2.0", "method": "m", "id": null}"#).unwrap();
        assert_eq!(null_id.id, Some(Value::Null));
        let rejected = request(r#"{"jsonrpc": "1.0", "method": "m", "id": 7}"#).unwrap_err();
        assert_eq!(
            (rejected.error.code, rejected.id),
            (INVALID_REQUEST, json!(7))
        );
        let rejected = request(r#"{"jsonrpc": "2.0", "method": "m", "id": [1]}"#).unwrap_err();
        assert_eq!(
            (rejected.error.code, rejected.id),
            (INVALID_REQUEST, Value::Null)
        );
        let rejected =
            request(r#"{"jsonrpc": "2.0", "method": "m", "params": [1], "id": 1}"#).unwrap_err();
        assert_eq!(rejected.error.code, INVALID_PARAMS);
        assert_eq!(request("5").unwrap_err().error.code, INVALID_REQUEST);
        // A whole body is read once; what is not JSON at all is still a parse error.
        for broken in [
            "{not json",
            r#"{"jsonrpc": "2.0", "method": "m""#,
            r#"{"id": 1} x"#,
            "[1",
        ] {
            assert_eq!(
                request(broken).unwrap_err().error.code,
                PARSE_ERROR,
                "{broken}"
            );
        }
        let duplicate = request(r#"{"jsonrpc": "2.0", "method": "m", "method": "n"}"#);
        assert_eq!(duplicate.unwrap_err().error.code, INVALID_REQUEST);
        let long_method = format!(
            r#"{{"jsonrpc": "2.0", "id": 1, "method": "{}"}}"#,
            "m".repeat(MAX_METHOD_BYTES + 1)
        );
        let rejected = request(&long_method).unwrap_err();
        assert!(
            rejected.error.message.contains("longer than"),
            "{rejected:?}"
        );
    }

    #[test]
    fn service_errors_keep_their_messages_and_get_the_protocol_codes() {
        assert_eq!(
            RpcError::from(ServiceError::invalid_params("parameter `x`")),
            RpcError::invalid_params("parameter `x`")
        );
        let busy = RpcError::from(ServiceError::busy("retry in a moment"));
        assert_eq!(busy, RpcError::busy("retry in a moment"));
        assert_eq!(
            (busy.code, busy.data),
            (SERVER_BUSY, Some(json!({"retry_after_ms": RETRY_AFTER_MS})))
        );
        assert_eq!(
            RpcError::from(ServiceError::internal("failed")),
            RpcError::internal("failed")
        );
    }

    #[test]
    fn batches_stop_being_read_past_the_limit() {
        let entry = r#"{"jsonrpc": "2.0", "method": "m"}"#;
        let batch = |count: usize| format!("[{}]", vec![entry; count].join(","));
        let full = batch(MAX_BATCH_REQUESTS);
        let Ok(RpcBody::Batch(entries)) = parse_body(full.as_bytes()) else {
            panic!("a full batch is a batch");
        };
        assert_eq!(entries.len(), MAX_BATCH_REQUESTS);
        // Past the limit the rest is never read: even a broken tail gives the batch error.
        let long = format!(
            "[{}, this is not JSON",
            vec![entry; MAX_BATCH_REQUESTS + 1].join(",")
        );
        let error = parse_body(long.as_bytes()).unwrap_err();
        assert_eq!(error.code, INVALID_REQUEST);
        assert!(error.message.contains("at most 100 requests"), "{error:?}");
        assert_eq!(parse_body(b" [] ").unwrap_err().code, INVALID_REQUEST);
        assert_eq!(parse_body(b"[1,").unwrap_err().code, PARSE_ERROR);
        assert_eq!(parse_body(b"[1] x").unwrap_err().code, PARSE_ERROR);
        assert!(matches!(parse_body(b" 7 "), Ok(RpcBody::Single(_))));
    }

    #[test]
    fn params_are_measured_before_they_are_built() {
        assert_eq!(
            JsonShape::of(r#"{"a": [1, 2, {"b": "x,[{"}], "c": "\"["}"#),
            JsonShape {
                values: 7,
                depth: 3
            }
        );
        let params = |text: &str| check_params("list_skills", raw(text), 1024);
        assert!(params(r#"{"limit": 2}"#).is_ok());
        let too_big = params(&format!(r#"{{"x": "{}"}}"#, "a".repeat(2000))).unwrap_err();
        assert!(too_big.message.contains("at most 1024"), "{too_big:?}");
        let deep = format!(r#"{{"x": {}{}}}"#, "[".repeat(100), "]".repeat(100));
        let too_deep = params(&deep).unwrap_err();
        assert!(too_deep.message.contains("nest 101 levels"), "{too_deep:?}");
        let many = format!(
            r#"{{"x": [{}]}}"#,
            vec!["0"; MAX_PARAMS_VALUES + 1].join(",")
        );
        let too_many = check_params("run_code", raw(&many), usize::MAX).unwrap_err();
        assert!(too_many.message.contains("JSON values"), "{too_many:?}");
    }
}
