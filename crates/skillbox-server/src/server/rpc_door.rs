//! The `/rpc` door: JSON-RPC 2.0 requests and batches read without building a tree of them,
//! each method answered through the door policy, and the answers written out (a snapshot's
//! rendered answer copied as its text).

use super::*;

/// Answer a body. Each answer is serialized as soon as it is made; a batch stops running its
/// requests once its answers hold [`MAX_BATCH_ANSWER_BYTES`]. The answer keeps the budget its
/// blob reads took until it has been handed to the connection.
pub(super) async fn rpc(State(state): State<Arc<AppState>>, body: Bytes) -> Response {
    let started = Instant::now();
    let mut share = BudgetShare::new(&state.large_bodies, LARGE_BODIES_BUDGET_BYTES);
    let answer = match protocol::parse_body(&body) {
        Err(error) => {
            state
                .metrics
                .record_rpc_call(None, Some(error.code), started);
            Some(to_json(&RpcAnswer::error(Value::Null, error)))
        }
        Ok(RpcBody::Batch(entries)) => {
            let mut answers = Vec::new();
            for entry in entries {
                let entry = entry.get().as_bytes();
                let response = if answers.len() < MAX_BATCH_ANSWER_BYTES {
                    answer(&state, entry, &mut share).await
                } else {
                    not_run(&state, entry, answers.len())
                };
                if let Some(response) = response {
                    answers.push(if answers.is_empty() { b'[' } else { b',' });
                    response.write(&mut answers);
                }
            }
            (!answers.is_empty()).then(|| {
                answers.push(b']');
                answers
            })
        }
        Ok(RpcBody::Single(entry)) => answer(&state, entry, &mut share)
            .await
            .map(|response| to_json(&response)),
    };
    drop(body);
    match answer {
        Some(answer) => Answer::response(answer, share),
        None => StatusCode::NO_CONTENT.into_response(),
    }
}

fn to_json(answer: &RpcAnswer) -> Vec<u8> {
    let mut json = Vec::new();
    answer.write(&mut json);
    json
}

fn write_json(json: &mut Vec<u8>, value: &impl serde::Serialize) {
    // Writing JSON into memory cannot fail.
    let _ = serde_json::to_writer(json, value);
}

/// One JSON-RPC response: its id, and the result or the error. Written as
/// `{"jsonrpc":"2.0","id":…,"result":…}` with a result rendered once for the snapshot copied
/// as it is, never serialized again.
struct RpcAnswer {
    id: Value,
    outcome: Result<Content, RpcError>,
}

impl RpcAnswer {
    fn error(id: Value, error: RpcError) -> Self {
        RpcAnswer {
            id,
            outcome: Err(error),
        }
    }

    fn write(&self, json: &mut Vec<u8>) {
        json.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        write_json(json, &self.id);
        match &self.outcome {
            Ok(content) => {
                json.extend_from_slice(br#","result":"#);
                match content.rendered_json() {
                    Some(rendered) => json.extend_from_slice(rendered.get().as_bytes()),
                    None => write_json(json, &**content),
                }
            }
            Err(error) => {
                json.extend_from_slice(br#","error":"#);
                write_json(json, error);
            }
        }
        json.push(b'}');
    }
}

/// The answer to a request that could not be read, counted as a call of no method.
fn unreadable(state: &AppState, rejected: Rejected, started: Instant) -> Option<RpcAnswer> {
    state
        .metrics
        .record_rpc_call(None, Some(rejected.error.code), started);
    Some(RpcAnswer::error(rejected.id, rejected.error))
}

/// The answer to a batch entry that is not run because the batch's answers are already large.
fn not_run(state: &AppState, entry: &[u8], answered_bytes: usize) -> Option<RpcAnswer> {
    let started = Instant::now();
    let id = match parse_request(entry) {
        Ok(request) => {
            let method = Some(&*request.method);
            state
                .metrics
                .record_rpc_call(method, Some(protocol::SERVER_BUSY), started);
            request.id?
        }
        Err(rejected) => return unreadable(state, *rejected, started),
    };
    Some(RpcAnswer::error(
        id,
        RpcError::new(
            protocol::SERVER_BUSY,
            format!(
                "not run: the answers before it in this batch already hold {answered_bytes} bytes, and a batch's answers may hold {MAX_BATCH_ANSWER_BYTES}; send this request again in another batch"
            ),
        ),
    ))
}

/// Answer one request; `None` for notifications (which get no reply, even on error).
async fn answer(state: &AppState, entry: &[u8], share: &mut BudgetShare) -> Option<RpcAnswer> {
    let started = Instant::now();
    let request = match parse_request(entry) {
        Ok(request) => request,
        Err(rejected) => return unreadable(state, *rejected, started),
    };
    let RpcRequest { id, method, params } = request;
    let outcome = dispatch(state, &method, params, share).await;
    let code = outcome.as_ref().err().map(|error| error.code);
    state.metrics.record_rpc_call(Some(&method), code, started);
    let id = id?;
    Some(RpcAnswer { id, outcome })
}

/// The Skills Protocol methods, through the door policy. Each method's params are measured
/// within its own limit before anything is decoded: only `create_blob` takes tens of MiB (read
/// straight from the body, never built into a tree), runs take a few MiB, the rest a few KiB;
/// params too large, too deep or with too many values are refused first. A blob read takes the
/// bytes it returns from the large-body budget into `share` before fetching them.
///
/// # Errors
/// The JSON-RPC error to answer with.
pub(crate) async fn dispatch(
    state: &AppState,
    method: &str,
    params: Option<&RawValue>,
    share: &mut BudgetShare,
) -> Result<Content, RpcError> {
    let provider = state.provider();
    let Some(tool) = registry::lookup(&provider, Offer::Rpc, method) else {
        let methods: Vec<String> = registry::offered(&provider, Offer::Rpc)
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect();
        return Err(RpcError::new(
            protocol::METHOD_NOT_FOUND,
            format!(
                "unknown method `{method}`; the methods are {}",
                methods.join(", ")
            ),
        ));
    };
    let arguments = match (params, tool.facts().params_size) {
        (None, _) => Arguments::None,
        (Some(params), ParamsSize::Body) => Arguments::Text(params.get()),
        (Some(params), ParamsSize::Small) => {
            protocol::check_params(method, params, MAX_PARAMS_BYTES)?;
            Arguments::Text(params.get())
        }
        (Some(params), ParamsSize::Run) => {
            protocol::check_params(method, params, MAX_RUN_PARAMS_BYTES)?;
            Arguments::Text(params.get())
        }
    };
    let outcome = state
        .policy
        .call(
            &provider,
            method,
            arguments,
            CallContext::new(Door::Rpc, Offer::Rpc, share),
        )
        .await;
    rpc_result(outcome)
}

/// A tool outcome as a JSON-RPC result or error.
fn rpc_result(outcome: ToolOutcome) -> Result<Content, RpcError> {
    let code = match outcome.status {
        CallStatus::Ok => return Ok(outcome.content),
        CallStatus::InvalidParams | CallStatus::Failed => protocol::INVALID_PARAMS,
        CallStatus::UnknownTool => protocol::METHOD_NOT_FOUND,
        CallStatus::Busy { retry_after_ms } => {
            return Err(RpcError::busy_for(outcome.message(), retry_after_ms));
        }
        CallStatus::TimedOut => protocol::TIMED_OUT,
        _ => protocol::INTERNAL_ERROR,
    };
    Err(RpcError::new(code, outcome.message()))
}
