//! The playground: every tool the dispatcher answers, a form made from its JSON Schema by the
//! page's script, and calls sent through the same `handle_tool_call` every door uses.

use std::sync::Arc;
use std::time::Instant;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};
use skillbox_tools::{SkillsProvider, ToolProfile};

use crate::auth::Visitor;
use crate::pages::{Layout, render};
use crate::{ApiError, WebError, WebState, on_blocking_thread};

/// Largest arguments object a call may send, in bytes of JSON.
pub const MAX_CALL_ARGUMENTS_BYTES: usize = 1024 * 1024;

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

/// Every tool a model could be offered here, each once: the skills profile's, then the
/// Skills Protocol's, each with the skill that owns it (for tools.json tools).
fn all_tools(provider: &SkillsProvider) -> Vec<Value> {
    let mut seen = std::collections::BTreeSet::new();
    let mut tools = Vec::new();
    for (profile, group) in [
        (ToolProfile::Skills, "skills"),
        (ToolProfile::Protocol, "protocol"),
    ] {
        for spec in provider.tools(profile) {
            if !seen.insert(spec.name.clone()) {
                continue;
            }
            let owner = provider
                .tool_owner(&spec.name)
                .map(|skill| skill.name().to_owned());
            tools.push(json!({
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
                "group": if owner.is_some() { "tools.json" } else { group },
                "skill": owner,
                "runs_code": provider.runs_code(&spec.name),
            }));
        }
    }
    tools
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

/// `POST /api/call`'s body.
#[derive(Debug, Deserialize)]
pub(crate) struct CallRequest {
    tool: String,
    #[serde(default)]
    arguments: Value,
}

/// `POST /api/call`: one tool call through the dispatcher, with how long it took and the
/// sandbox level code runs at. Calls that read skill files run on a blocking thread.
pub(crate) async fn call(
    State(state): State<Arc<WebState>>,
    Json(request): Json<CallRequest>,
) -> Result<Json<Value>, ApiError> {
    let provider = state.provider();
    let arguments = match request.arguments {
        Value::Null => json!({}),
        object @ Value::Object(_) => object,
        _ => {
            return Err(WebError::BadRequest(
                "`arguments` must be a JSON object of the tool's parameters".into(),
            )
            .into());
        }
    };
    if arguments.to_string().len() > MAX_CALL_ARGUMENTS_BYTES {
        return Err(WebError::BadRequest(format!(
            "`arguments` is over {MAX_CALL_ARGUMENTS_BYTES} bytes; put large content in a blob (create_blob)"
        ))
        .into());
    }
    let known = provider.offers_tool(ToolProfile::Skills, &request.tool)
        || provider.offers_tool(ToolProfile::Protocol, &request.tool);
    if !known {
        return Err(WebError::NotFound(format!(
            "no tool is named `{}`; GET /api/tools lists them",
            request.tool
        ))
        .into());
    }
    let started = Instant::now();
    let outcome = if SkillsProvider::reads_skill_files(&request.tool, &arguments) {
        let provider = Arc::clone(&provider);
        let (tool, arguments) = (request.tool.clone(), arguments.clone());
        on_blocking_thread(&state, move || provider.catalog_call(&tool, &arguments)).await?
    } else {
        provider.handle_tool_call(&request.tool, &arguments).await
    };
    Ok(Json(json!({
        "tool": request.tool,
        "content": outcome.content,
        "is_error": outcome.is_error,
        "duration_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        "sandbox": provider.executor().sandbox_level().as_str(),
    })))
}
