//! The run queue's counts, the logs preview, bounded timeouts and output kinds.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::run_object::{kind_for, logs_preview};
use super::*;

#[tokio::test]
async fn the_gate_counts_runs_executing_and_waiting() {
    let gate = Arc::new(RunGate::new(RunLimits {
        max_concurrent: 1,
        max_queued: 1,
        max_input_bytes: 0,
    }));
    assert_eq!((gate.running(), gate.queued()), (0, 0));
    let turn = gate.enter().await.unwrap();
    assert_eq!((gate.running(), gate.queued()), (1, 0));
    let waiter = tokio::spawn({
        let gate = Arc::clone(&gate);
        async move { gate.enter().await.map(drop) }
    });
    while gate.queued() == 0 {
        tokio::task::yield_now().await;
    }
    assert_eq!((gate.running(), gate.queued()), (1, 1));
    assert!(gate.enter().await.is_err(), "the queue is full");
    assert_eq!((gate.running(), gate.queued()), (1, 1));
    drop(turn);
    waiter.await.unwrap().unwrap();
    assert_eq!((gate.running(), gate.queued()), (0, 0));
}

#[test]
fn long_logs_keep_their_beginning_and_end() {
    let logs = format!(
        "{}{}{}",
        "a".repeat(3000),
        "b".repeat(10_000),
        "c".repeat(3000)
    );
    let preview = logs_preview(&logs);
    assert!(preview.starts_with(&"a".repeat(2000)));
    assert!(preview.ends_with(&"c".repeat(3000)));
    assert!(preview.contains("[… 8000 characters of logs omitted …]"));
    assert_eq!(logs_preview("short"), "short");
}

#[test]
fn timeouts_are_bounded() {
    use crate::params::{Arguments, decode};
    use crate::protocol::ExecuteSkillParams;
    let decoded: ExecuteSkillParams = decode(
        "execute_skill",
        Arguments::Value(&json!({"name": "report", "timeout_ms": 1500})),
    )
    .unwrap();
    assert_eq!(
        decoded.timeout_ms.map(|timeout| timeout.0),
        Some(Duration::from_millis(1500))
    );
    for bad in [
        json!(0),
        json!(-1),
        json!(1.5),
        json!("10"),
        json!(10_000_000),
    ] {
        let error = decode::<ExecuteSkillParams>(
            "execute_skill",
            Arguments::Value(&json!({ "name": "report", "timeout_ms": bad })),
        )
        .unwrap_err();
        assert_eq!(
            error.0,
            "parameter `timeout_ms` must be a whole number of milliseconds from 1 to 240000",
            "{bad}"
        );
    }
}

#[test]
fn output_kinds_follow_extensions() {
    assert_eq!(kind_for("report.MD"), "text/markdown");
    assert_eq!(kind_for("nested/data.csv"), "text/csv");
    assert_eq!(kind_for("blob"), "application/octet-stream");
}
