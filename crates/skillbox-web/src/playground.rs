//! The playground: every tool the registry offers, a form made from its JSON Schema by the
//! page's script, and calls sent through the door policy every door uses.

use std::sync::Arc;
use std::time::Instant;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use skillbox_services::params::{ShapeLimits, check_shape};
use skillbox_tools::registry::{self, Offer};
use skillbox_tools::{Arguments, CallContext, CallStatus, Door, SkillsProvider, Unbudgeted};

use crate::auth::Visitor;
use crate::pages::{Layout, render};
use crate::request_body::LimitedBody;
use crate::{ApiError, WebError, WebState};

/// Largest arguments object a call may send, in bytes of JSON.
pub const MAX_CALL_ARGUMENTS_BYTES: usize = 1024 * 1024;
/// Largest body of a call: its arguments and room for the tool's name and the JSON around
/// them.
pub const MAX_CALL_BODY_BYTES: usize = MAX_CALL_ARGUMENTS_BYTES + 64 * 1024;
/// Deepest nesting of a call's arguments (as `/rpc` allows).
pub const MAX_ARGUMENTS_DEPTH: usize = 64;
/// Most JSON values in a call's arguments (as `/rpc` allows).
pub const MAX_ARGUMENTS_VALUES: usize = 100_000;

/// `/playground?tool=…&skill=…`: which tool to open first.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct PlaygroundQuery {
    #[serde(default)]
    tool: String,
    #[serde(default)]
    skill: String,
}

#[derive(Template)]
#[template(path = "playground.html")]
struct PlaygroundPage {
    layout: Layout,
    tool: String,
    skill: String,
    sandbox: &'static str,
}

/// `GET /playground`: the page; the script fetches the tools and builds the forms.
pub(crate) async fn playground_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
    Query(query): Query<PlaygroundQuery>,
) -> Response {
    let provider = state.provider();
    render(
        &PlaygroundPage {
            layout: Layout::for_visitor(&visitor, "playground", "Playground".into()),
            tool: query.tool,
            skill: query.skill,
            sandbox: provider.executor().sandbox_level().as_str(),
        },
        StatusCode::OK,
    )
}

/// Every tool the playground may call, each once, in the registry's order: the skills
/// profile's, the Skills Protocol's, the skills' own, each with its owner and whether it runs
/// code (the page marks those).
fn all_tools(provider: &SkillsProvider) -> Vec<Value> {
    registry::offered(provider, Offer::Everything)
        .iter()
        .map(|tool| {
            let spec = tool.spec(provider);
            let facts = tool.facts();
            let group = match (tool.owner(), facts.profiles.skills) {
                (Some(_), _) => "tools.json",
                (None, true) => "skills",
                (None, false) => "protocol",
            };
            json!({
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
                "group": group,
                "skill": tool.owner().map(|skill| skill.name()),
                "runs_code": tool.runs_code(provider),
            })
        })
        .collect()
}

/// `GET /api/tools`: the tools with their schemas, and the skills `use_skill` may name.
pub(crate) async fn tools(State(state): State<Arc<WebState>>) -> Json<Value> {
    let provider = state.provider();
    let skills: Vec<&str> = provider
        .catalog()
        .latest_visible_to_model()
        .map(|skill| skill.name())
        .collect();
    Json(json!({
        "tools": all_tools(&provider),
        "skills": skills,
        "sandbox": provider.executor().sandbox_level().as_str(),
    }))
}

/// `POST /api/call`'s body, read without building a JSON tree: the arguments stay raw text
/// until the door policy decodes them into the tool's parameters.
#[derive(Debug, Deserialize)]
struct CallRequest<'a> {
    #[serde(borrow)]
    tool: std::borrow::Cow<'a, str>,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
}

/// `POST /api/call`: one tool call through the door policy, as any door makes it (the same
/// run queue, blocking pool and answers), with how long it took and the sandbox level code
/// runs at.
pub(crate) async fn call(
    State(state): State<Arc<WebState>>,
    LimitedBody(body): LimitedBody<MAX_CALL_BODY_BYTES>,
) -> Response {
    let request: CallRequest<'_> = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(error) => {
            return ApiError(WebError::BadRequest(format!(
                "the body must be {{\"tool\": NAME, \"arguments\": {{...}}}}: {error}"
            )))
            .into_response();
        }
    };
    let arguments = match request.arguments {
        None => Arguments::None,
        Some(raw) => {
            let limits = ShapeLimits {
                max_bytes: MAX_CALL_ARGUMENTS_BYTES,
                max_depth: MAX_ARGUMENTS_DEPTH,
                max_values: MAX_ARGUMENTS_VALUES,
            };
            if let Err(message) = check_shape(
                "`arguments`",
                raw.get(),
                limits,
                "put large content in a blob (create_blob)",
            ) {
                return ApiError(WebError::BadRequest(message)).into_response();
            }
            Arguments::Text(raw.get())
        }
    };
    let provider = state.provider();
    let started = Instant::now();
    let mut budget = Unbudgeted;
    let outcome = state
        .policy
        .call(
            &provider,
            &request.tool,
            arguments,
            CallContext::new(Door::Playground, Offer::Everything, &mut budget),
        )
        .await;
    match outcome.status {
        CallStatus::UnknownTool => {
            return ApiError(WebError::NotFound(outcome.message())).into_response();
        }
        CallStatus::Busy { retry_after_ms } => {
            let mut response = ApiError(WebError::Busy(outcome.message())).into_response();
            let seconds = retry_after_ms.div_ceil(1000).max(1);
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            return response;
        }
        _ => {}
    }
    Json(json!({
        "tool": request.tool,
        "content": outcome.content,
        "is_error": outcome.is_error(),
        "duration_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        "sandbox": provider.executor().sandbox_level().as_str(),
    }))
    .into_response()
}
