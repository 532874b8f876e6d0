//! One file of a skill (`GET /skills/{name}/files/{*path}`): highlighted, shown as an image, or
//! described, with a link to its bytes.

use std::sync::Arc;

use askama::Template;
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::skill_lookup::{VersionQuery, find_skill, not_a_file};
use crate::auth::Visitor;
use crate::pages::{Layout, encode_component, encode_path, human_size, render};
use crate::render::{FileView, MAX_VIEWED_BYTES, view_file};
use crate::{WebError, WebState, on_blocking_thread};

/// `/skills/{name}/files/{*path}`.
#[derive(Template)]
#[template(path = "file.html")]
struct FilePage {
    layout: Layout,
    skill: String,
    skill_link: String,
    path: String,
    size: String,
    raw_link: String,
    view: FileView,
    cut: bool,
}

/// `GET /skills/{name}/files/{*path}`: one file, highlighted, shown as an image, or described.
pub(crate) async fn file_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
    Path((name, path)): Path<(String, String)>,
    Query(query): Query<VersionQuery>,
) -> Result<Response, WebError> {
    let provider = state.provider();
    let skill = find_skill(&provider, &name, query.version.as_deref())?;
    let (view, size, cut) = on_blocking_thread(&state, {
        let skill = Arc::clone(&skill);
        let path = path.clone();
        move || -> Result<_, WebError> {
            let (resources, _) = skill.resources();
            let size = resources
                .iter()
                .find(|resource| resource.path == path)
                .map(|resource| resource.size_bytes)
                .ok_or_else(|| not_a_file(&skill, &path))?;
            let (bytes, cut) = skill
                .source
                .read_file(&path, MAX_VIEWED_BYTES)
                .map_err(|error| WebError::NotFound(error.to_string()))?;
            Ok((view_file(&path, bytes), size, cut))
        }
    })
    .await??;
    let version_query = query
        .version
        .as_deref()
        .filter(|version| !version.is_empty())
        .map(|version| format!("?version={}", encode_component(version)))
        .unwrap_or_default();
    let skill_link = format!("/skills/{}{version_query}", encode_component(skill.name()));
    let page = FilePage {
        layout: Layout::for_visitor(&visitor, "skills", format!("{path} · {}", skill.name())),
        raw_link: format!(
            "/skills/{}/raw/{}{version_query}",
            encode_component(skill.name()),
            encode_path(&path)
        ),
        skill: skill.name().to_owned(),
        skill_link,
        size: human_size(size),
        path,
        view,
        cut,
    };
    Ok(render(&page, StatusCode::OK))
}
