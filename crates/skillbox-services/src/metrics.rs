//! What the services count for an operator: blob bytes written and read, runs the queue
//! refused, and how long runs took by outcome. The counts are process-wide (one process serves
//! one data folder), so the store and the queue record them with one call and no field of
//! their own; a server registers them for `GET /metrics` with [`register`]. The gauges that
//! describe a queue now (runs executing, runs waiting) are read from the [`crate::RunGate`]
//! itself when scraped.

use std::sync::LazyLock;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use serde_json::Value;

/// Upper bounds of the run duration buckets, in seconds: from a warm tool call (milliseconds)
/// to the longest run a caller may ask for ([`crate::runs::MAX_RUN_TIMEOUT`], 240 s).
pub const RUN_DURATION_BUCKETS_SECONDS: [f64; 14] = [
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 240.0,
];

/// How a run ended, as the label of its duration.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RunOutcome {
    /// `completed`, `failed` or `timed_out`: three values whatever the runs do.
    outcome: &'static str,
}

/// One tool call as the door policy counts it: the door it came through, the tool (a
/// built-in's name, `skill_tool` or `unknown`: a fixed set however clients name tools) and
/// how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ToolCallLabels {
    door: &'static str,
    tool: &'static str,
    status: &'static str,
}

/// Upper bounds of the tool-call duration buckets, in seconds: from a catalog answer
/// (microseconds) to a long run.
pub const TOOL_CALL_DURATION_BUCKETS_SECONDS: [f64; 12] = [
    0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0, 240.0,
];

/// The door of a tool call, as the label of its duration.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DoorLabel {
    door: &'static str,
}

struct ServiceMetrics {
    blob_written_bytes: Counter,
    blob_read_bytes: Counter,
    runs_rejected: Counter,
    run_duration: Family<RunOutcome, Histogram, fn() -> Histogram>,
    tool_calls: Family<ToolCallLabels, Counter>,
    tool_call_duration: Family<DoorLabel, Histogram, fn() -> Histogram>,
}

static METRICS: LazyLock<ServiceMetrics> = LazyLock::new(|| ServiceMetrics {
    blob_written_bytes: Counter::default(),
    blob_read_bytes: Counter::default(),
    runs_rejected: Counter::default(),
    run_duration: Family::new_with_constructor(|| Histogram::new(RUN_DURATION_BUCKETS_SECONDS)),
    tool_calls: Family::default(),
    tool_call_duration: Family::new_with_constructor(|| {
        Histogram::new(TOOL_CALL_DURATION_BUCKETS_SECONDS)
    }),
});

/// Count a tool call the door policy answered (labels from fixed sets only), and time it
/// (approval and queue waits included: what the caller waited).
pub fn tool_call(
    door: &'static str,
    tool: &'static str,
    status: &'static str,
    took: std::time::Duration,
) {
    METRICS
        .tool_calls
        .get_or_create(&ToolCallLabels { door, tool, status })
        .inc();
    METRICS
        .tool_call_duration
        .get_or_create(&DoorLabel { door })
        .observe(took.as_secs_f64());
}

/// Count bytes stored as blobs (committed, so visible).
pub(crate) fn blob_bytes_written(bytes: u64) {
    METRICS.blob_written_bytes.inc_by(bytes);
}

/// Count bytes read from the blob store (answers, downloads, copies for runs).
pub(crate) fn blob_bytes_read(bytes: u64) {
    METRICS.blob_read_bytes.inc_by(bytes);
}

/// Count a run the full queue refused.
pub(crate) fn run_rejected() {
    METRICS.runs_rejected.inc();
}

/// Record a Run object's duration under its outcome.
pub(crate) fn run_finished(run: &Value) {
    let outcome = match run.get("status").and_then(Value::as_str) {
        Some("completed") => "completed",
        _ if run.pointer("/error/type").and_then(Value::as_str) == Some("Timeout") => "timed_out",
        _ => "failed",
    };
    let milliseconds = run.get("duration_ms").and_then(Value::as_u64).unwrap_or(0);
    #[allow(clippy::cast_precision_loss)] // durations are far below 2^52 ms
    let seconds = milliseconds as f64 / 1000.0;
    METRICS
        .run_duration
        .get_or_create(&RunOutcome { outcome })
        .observe(seconds);
}

/// Register the services' counts in `registry` (names with the `skillbox_` prefix). They are
/// the process's: every registry given them shows the same numbers.
pub fn register(registry: &mut Registry) {
    let metrics = &*METRICS;
    registry.register_with_unit(
        "skillbox_blob_written",
        "Bytes stored as blobs (counted once the blob is committed)",
        Unit::Bytes,
        metrics.blob_written_bytes.clone(),
    );
    registry.register_with_unit(
        "skillbox_blob_read",
        "Bytes read from the blob store: read_blob answers, downloads and copies for runs",
        Unit::Bytes,
        metrics.blob_read_bytes.clone(),
    );
    registry.register(
        "skillbox_runs_rejected",
        "Runs refused at once because the run queue was full (the caller got busy, retry)",
        metrics.runs_rejected.clone(),
    );
    registry.register_with_unit(
        "skillbox_run_duration",
        "How long runs took (their own duration_ms, queue wait excluded), by outcome: completed, failed, timed_out",
        Unit::Seconds,
        metrics.run_duration.clone(),
    );
    registry.register(
        "skillbox_tool_calls",
        "Tool calls the door policy answered, by door, tool (built-in name, skill_tool or unknown) and status",
        metrics.tool_calls.clone(),
    );
    registry.register_with_unit(
        "skillbox_tool_call_duration",
        "How long tool calls took as their callers waited (approval and run-queue waits included), by door",
        Unit::Seconds,
        metrics.tool_call_duration.clone(),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn encoded() -> String {
        let mut registry = Registry::default();
        register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap_or_default();
        text
    }

    fn sample(text: &str, name: &str) -> f64 {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or(0.0)
    }

    #[test]
    fn runs_are_timed_under_their_outcome() {
        let before = encoded();
        run_finished(&json!({"status": "completed", "duration_ms": 20}));
        run_finished(
            &json!({"status": "failed", "duration_ms": 1500, "error": {"type": "Timeout"}}),
        );
        run_finished(
            &json!({"status": "failed", "duration_ms": 3, "error": {"type": "ValueError"}}),
        );
        let after = encoded();
        for outcome in ["completed", "timed_out", "failed"] {
            let name = format!("skillbox_run_duration_seconds_count{{outcome=\"{outcome}\"}}");
            assert!(
                sample(&after, &name) >= sample(&before, &name) + 1.0,
                "{outcome}:\n{after}"
            );
        }
        // The 20 ms run lands in the 25 ms bucket (other tests of this binary may add more).
        let bucket = "skillbox_run_duration_seconds_bucket{le=\"0.025\",outcome=\"completed\"}";
        assert!(
            sample(&after, bucket) >= sample(&before, bucket) + 1.0,
            "{after}"
        );
    }
}
