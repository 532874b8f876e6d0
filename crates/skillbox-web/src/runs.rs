//! The runs page: the Run objects `execute_skill` and `run_code` answered lately (from any
//! door), the executor's audit log, and downloads of output blobs.

use std::sync::Arc;

use askama::Template;
use axum::Extension;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::Value;
use skillbox_services::BlobError;

use crate::auth::Visitor;
use crate::pages::{Layout, render};
use crate::pages::{encode_component, human_size};
use crate::{WebError, WebState, audit_log_path, on_blocking_thread};

/// Bytes read from the end of the audit log (its newest lines).
pub const AUDIT_TAIL_BYTES: u64 = 256 * 1024;
/// Audit lines shown.
pub const MAX_AUDIT_ROWS: usize = 200;

/// A JSON value as a cell: text as it is, nothing for null, anything else as JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A Run object as a row.
struct RunRow {
    id: String,
    when: String,
    method: String,
    skill: String,
    status: String,
    summary: String,
    duration_ms: String,
    sandbox: String,
    logs: String,
    blobs: Vec<(String, String, String)>,
}

impl RunRow {
    fn of(entry: &Value) -> Self {
        let run = &entry["run"];
        let blobs = run["output_files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|file| {
                let id = file["blob_id"].as_str()?;
                Some((
                    file["path"].as_str().unwrap_or(id).to_owned(),
                    format!("/blobs/{}", encode_component(id)),
                    file["size_bytes"]
                        .as_u64()
                        .map(human_size)
                        .unwrap_or_default(),
                ))
            })
            .collect();
        RunRow {
            id: shown(&run["run_id"]),
            when: entry["finished_ms"]
                .as_u64()
                .map(clock_time)
                .unwrap_or_default(),
            method: shown(&entry["method"]),
            skill: shown(&entry["skill"]),
            status: shown(&run["status"]),
            summary: shown(&run["summary"]),
            duration_ms: shown(&run["duration_ms"]),
            sandbox: shown(&run["sandbox"]),
            logs: shown(&run["logs_preview"]),
            blobs,
        }
    }
}

/// An audit line as a row.
struct AuditRow {
    when: String,
    kind: String,
    skill: String,
    target: String,
    outcome: String,
    exit_code: String,
    duration_ms: String,
    sandbox: String,
    output: String,
}

impl AuditRow {
    fn of(line: &Value) -> Self {
        AuditRow {
            when: line["timestampMs"]
                .as_u64()
                .map(clock_time)
                .unwrap_or_default(),
            kind: shown(&line["kind"]),
            skill: shown(&line["skill"]),
            target: shown(&line["target"]),
            outcome: shown(&line["outcome"]),
            exit_code: shown(&line["exitCode"]),
            duration_ms: shown(&line["durationMs"]),
            sandbox: shown(&line["sandboxLevel"]),
            output: format!(
                "{} out, {} err{}",
                human_size(line["stdoutBytes"].as_u64().unwrap_or(0)),
                human_size(line["stderrBytes"].as_u64().unwrap_or(0)),
                if line["truncated"].as_bool() == Some(true) {
                    ", cut"
                } else {
                    ""
                }
            ),
        }
    }
}

#[derive(Template)]
#[template(path = "runs.html")]
struct RunsPage {
    layout: Layout,
    runs: Vec<RunRow>,
    audit: Vec<AuditRow>,
    audit_path: Option<String>,
    audit_error: Option<String>,
}

/// `GET /runs`.
pub(crate) async fn runs_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
) -> Result<Response, WebError> {
    let runs = state
        .services
        .recent_runs()
        .iter()
        .map(RunRow::of)
        .collect();
    let path = audit_log_path(&state.provider());
    let (audit, audit_error) = match path.clone() {
        None => (Vec::new(), None),
        Some(path) => match on_blocking_thread(&state, move || read_audit_tail(&path)).await? {
            Ok(lines) => (lines.iter().map(AuditRow::of).collect(), None),
            Err(error) => (Vec::new(), Some(error)),
        },
    };
    Ok(render(
        &RunsPage {
            layout: Layout::for_visitor(&visitor, "runs", "Runs".into()),
            runs,
            audit,
            audit_path: path.map(|path| path.display().to_string()),
            audit_error,
        },
        StatusCode::OK,
    ))
}

/// The newest [`MAX_AUDIT_ROWS`] lines of the audit log, newest first (lines that are not
/// JSON are skipped: a line being written as it is read).
fn read_audit_tail(path: &std::path::Path) -> Result<Vec<Value>, String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = fs_open(path)?;
    let length = file
        .metadata()
        .map_err(|error| format!("cannot read `{}`: {error}", path.display()))?
        .len();
    let start = length.saturating_sub(AUDIT_TAIL_BYTES);
    file.seek(SeekFrom::Start(start))
        .map_err(|error| format!("cannot read `{}`: {error}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(AUDIT_TAIL_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("cannot read `{}`: {error}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if start > 0 && !lines.is_empty() {
        // The first line was cut by the window.
        lines.remove(0);
    }
    Ok(lines
        .iter()
        .rev()
        .filter_map(|line| serde_json::from_str(line).ok())
        .take(MAX_AUDIT_ROWS)
        .collect())
}

/// The audit log opened for reading, never through a link planted in its place.
fn fs_open(path: &std::path::Path) -> Result<fs_err::File, String> {
    use fs_err::os::unix::fs::OpenOptionsExt;
    fs_err::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|error| error.to_string())
}

/// `GET /blobs/{id}`: a blob's bytes as a download, streamed.
pub(crate) async fn download_blob(
    State(state): State<Arc<WebState>>,
    Path(id): Path<String>,
) -> Result<Response, WebError> {
    let blobs = state.services.blobs();
    let failed = |error: BlobError| match error {
        BlobError::NotFound(_) => WebError::NotFound(format!(
            "no blob is named `{id}` (blobs expire; the runs page lists the recent ones)"
        )),
        other => WebError::Internal(other.to_string()),
    };
    let meta = blobs.meta(&id).await.map_err(failed)?;
    let stream = blobs.stream(&meta).await.map_err(failed)?;
    let body = Body::from_stream(stream.map(|chunk| chunk.map_err(std::io::Error::other)));
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(meta.size_bytes));
    let file_name: String = meta
        .blob_id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{file_name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}

/// A Unix time in milliseconds as an HTTP date (UTC).
pub(crate) fn clock_time(unix_ms: u64) -> String {
    // An HTTP date ends with year 9999 (`httpdate` panics past it); a time read from a file
    // may be anything.
    if unix_ms >= YEAR_10000_UNIX_MS {
        return format!("{unix_ms} ms after 1970-01-01");
    }
    httpdate::fmt_http_date(std::time::UNIX_EPOCH + std::time::Duration::from_millis(unix_ms))
}

/// The first millisecond of year 10000: the first an HTTP date cannot show.
const YEAR_10000_UNIX_MS: u64 = 253_402_300_800_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_times_are_http_dates() {
        assert_eq!(clock_time(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(clock_time(951_782_400_000), "Tue, 29 Feb 2000 00:00:00 GMT");
        // A time from a hostile file, past what an HTTP date holds: said, not a panic.
        assert_eq!(
            clock_time(u64::MAX),
            "18446744073709551615 ms after 1970-01-01"
        );
    }
}
