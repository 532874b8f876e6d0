//! The Run object a run answers with: its status and summary, its output (or the error), its
//! `out/` files stored as output blobs, and a preview of its logs.

use serde_json::{Value, json};
use skillbox_exec::executor::python_run::{
    MAX_OUTPUT_BYTES_TOTAL, PythonRunOutcome, RunFailure, open_output_file,
};

use crate::Services;
use crate::blobs::BlobError;

/// Characters of the logs returned in `logs_preview`: from the beginning, then from the end.
const LOG_PREVIEW_HEAD: usize = 2_000;
const LOG_PREVIEW_TAIL: usize = 6_000;
/// Characters of an error message repeated in the summary.
const SUMMARY_MESSAGE_CHARS: usize = 200;

/// Turn an outcome into a Run, storing `out/` files as output blobs.
pub(super) async fn run_object(
    services: &Services,
    label: &str,
    outcome: PythonRunOutcome,
) -> Value {
    let mut result = outcome.result.clone();
    let mut logs = outcome.logs_preview.clone();
    let mut output_files = Vec::new();
    for file in &outcome.output_files {
        // What the client is told; host paths in the details go to the log only.
        let stored = match open_output_file(file) {
            Ok(opened) => services
                .blobs
                .create_from_reader(
                    tokio::fs::File::from_std(opened),
                    kind_for(&file.name),
                    MAX_OUTPUT_BYTES_TOTAL,
                )
                .await
                .map_err(|error| match error {
                    BlobError::Storage(details) => {
                        tracing::error!(file = %file.name, %details, "an output file could not be stored");
                        "blob storage failed inside the server; the server's log has the details"
                            .to_owned()
                    }
                    other => other.to_string(),
                }),
            Err(error) => {
                tracing::error!(file = %file.name, %error, "an output file could not be opened");
                Err("it could not be read back from the run's folder; the server's log has the details".to_owned())
            }
        };
        match stored {
            Ok(meta) => output_files.push(json!({
                "path": format!("out/{}", file.name),
                "blob_id": meta.blob_id,
                "kind": meta.kind,
                "size_bytes": meta.size_bytes,
            })),
            Err(error) => {
                if result.is_ok() {
                    result = Err(RunFailure {
                        error_type: "OutputNotStored".to_owned(),
                        message: format!(
                            "the run completed but `out/{}` could not be stored as a blob: {error}",
                            file.name
                        ),
                    });
                }
            }
        }
    }
    for skipped in &outcome.skipped_outputs {
        if !logs.is_empty() && !logs.ends_with('\n') {
            logs.push('\n');
        }
        logs.push_str(&format!("skillbox: not collected: {skipped}\n"));
    }
    run_json(
        label,
        &result,
        outcome.duration_ms,
        logs,
        output_files,
        outcome.sandbox,
    )
}

pub(super) fn run_json(
    label: &str,
    result: &Result<Value, RunFailure>,
    duration_ms: u64,
    logs: String,
    output_files: Vec<Value>,
    sandbox: skillbox_exec::SandboxLevel,
) -> Value {
    let run_id = format!("run_{}", &uuid::Uuid::new_v4().simple().to_string()[..16]);
    let blob_count = output_files.len();
    let mut run = json!({
        "run_id": run_id,
        "duration_ms": duration_ms,
        "sandbox": sandbox,
    });
    match result {
        Ok(output) => {
            run["status"] = json!("completed");
            run["summary"] = json!(format!(
                "{label} completed in {duration_ms} ms{}.",
                match blob_count {
                    0 => String::new(),
                    1 => "; 1 output blob".to_owned(),
                    count => format!("; {count} output blobs"),
                }
            ));
            run["output"] = output.clone();
        }
        Err(failure) => {
            run["status"] = json!("failed");
            run["summary"] = json!(format!(
                "{label} failed: {}: {}",
                failure.error_type,
                shorten(&failure.message, SUMMARY_MESSAGE_CHARS)
            ));
            run["error"] = json!({ "type": failure.error_type, "message": failure.message });
        }
    }
    run["output_blobs"] = Value::Array(
        output_files
            .iter()
            .filter_map(|file| file.get("blob_id").cloned())
            .collect(),
    );
    run["output_files"] = Value::Array(output_files);
    run["logs_preview"] = json!(logs_preview(&logs));
    run
}

/// The logs' beginning and end, with the middle cut out when they are long.
pub(super) fn logs_preview(logs: &str) -> String {
    let count = logs.chars().count();
    if count <= LOG_PREVIEW_HEAD + LOG_PREVIEW_TAIL {
        return logs.to_owned();
    }
    let head: String = logs.chars().take(LOG_PREVIEW_HEAD).collect();
    let tail: String = logs.chars().skip(count - LOG_PREVIEW_TAIL).collect();
    format!(
        "{head}\n[… {} characters of logs omitted …]\n{tail}",
        count - LOG_PREVIEW_HEAD - LOG_PREVIEW_TAIL
    )
}

fn shorten(text: &str, max_chars: usize) -> String {
    let first_line = text.lines().next().unwrap_or_default();
    if first_line.chars().count() <= max_chars && first_line.len() == text.len() {
        return text.to_owned();
    }
    let mut short: String = first_line.chars().take(max_chars).collect();
    short.push('…');
    short
}

/// A MIME type for an output file, by its extension.
pub(super) fn kind_for(name: &str) -> &'static str {
    let extension = std::path::Path::new(name)
        .extension()
        .and_then(|extension| extension.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("txt" | "log") => "text/plain",
        Some("md" | "markdown") => "text/markdown",
        Some("csv") => "text/csv",
        Some("tsv") => "text/tab-separated-values",
        Some("json") => "application/json",
        Some("jsonl" | "ndjson") => "application/x-ndjson",
        Some("html" | "htm") => "text/html",
        Some("xml") => "application/xml",
        Some("yaml" | "yml") => "application/yaml",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("zip") => "application/zip",
        _ => "application/octet-stream",
    }
}
