//! A skill file's bytes (`GET /skills/{name}/raw/{*path}`): images inline, anything else an
//! attachment, each under a policy that runs nothing, within the answers budget.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::skill_lookup::{VersionQuery, find_skill, not_a_file};
use crate::render::is_image_path;
use crate::{BUSY_ANSWERING, COUNTED_ANSWER_BYTES, WebError, WebState, on_blocking_thread};

/// Largest raw file served, in bytes.
const MAX_RAW_BYTES: u64 = 16 * 1024 * 1024;
/// The policy of raw skill files: nothing in them runs, even opened on their own.
const RAW_FILE_POLICY: &str =
    "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox";

/// `GET /skills/{name}/raw/{*path}`: a file's bytes. Images are shown inline; anything else is
/// an attachment. Either way its policy sandboxes it, so an HTML or SVG file opened on its own
/// runs nothing.
pub(crate) async fn raw_file(
    State(state): State<Arc<WebState>>,
    Path((name, path)): Path<(String, String)>,
    Query(query): Query<VersionQuery>,
) -> Result<Response, WebError> {
    let provider = state.provider();
    let skill = find_skill(&provider, &name, query.version.as_deref())?;
    let bytes = on_blocking_thread(&state, {
        let skill = Arc::clone(&skill);
        let path = path.clone();
        let answers = Arc::clone(&state.answers);
        move || -> Result<Vec<u8>, WebError> {
            let (resources, _) = skill.resources();
            let Some(listed) = resources.iter().find(|resource| resource.path == path) else {
                return Err(not_a_file(&skill, &path));
            };
            // Refused before it is read when it is too large, or when the answers budget has
            // no room for it.
            let too_large = || {
                WebError::BadRequest(format!(
                    "`{path}` is larger than {MAX_RAW_BYTES} bytes; read it from the skill's folder"
                ))
            };
            if listed.size_bytes > MAX_RAW_BYTES {
                return Err(too_large());
            }
            let listed_size = usize::try_from(listed.size_bytes).unwrap_or(usize::MAX);
            if listed_size >= COUNTED_ANSWER_BYTES && listed_size > answers.available_permits() {
                return Err(WebError::Busy(BUSY_ANSWERING.into()));
            }
            let (bytes, cut) = skill
                .source
                .read_file(&path, MAX_RAW_BYTES)
                .map_err(|error| WebError::NotFound(error.to_string()))?;
            if cut {
                return Err(too_large());
            }
            Ok(bytes)
        }
    })
    .await??;
    let image = is_image_path(&path);
    let content_type = if image {
        mime_guess::from_path(&path)
            .first_raw()
            .unwrap_or("application/octet-stream")
    } else {
        "application/octet-stream"
    };
    let file_name: String = path
        .rsplit('/')
        .next()
        .unwrap_or("file")
        .chars()
        .filter(|character| character.is_ascii_graphic() && !matches!(character, '"' | '\\' | ';'))
        .collect();
    let disposition = if image {
        "inline".to_owned()
    } else {
        format!("attachment; filename=\"{file_name}\"")
    };
    let mut response = (StatusCode::OK, bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(RAW_FILE_POLICY),
    );
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}
