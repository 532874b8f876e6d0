//! The audit log: one JSON line per execution, appended to a file. It records what ran and how
//! it ended, never argument values, output or environment (so never secrets).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

/// One execution, as logged.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// Milliseconds since the Unix epoch.
    pub timestamp_ms: u128,
    /// `script` or `tool`.
    pub kind: &'static str,
    /// Skill name.
    pub skill: String,
    /// Script path or tool name.
    pub target: String,
    /// Number of arguments (values are not logged).
    pub argument_count: usize,
    /// Wall time.
    pub duration_ms: u64,
    /// Exit code, when the process ran.
    pub exit_code: Option<i32>,
    /// Bytes the script wrote to stdout.
    pub stdout_bytes: u64,
    /// Bytes the script wrote to stderr.
    pub stderr_bytes: u64,
    /// Whether either stream was cut.
    pub truncated: bool,
    /// Sandbox level the execution ran at.
    pub sandbox_level: crate::sandbox::SandboxLevel,
    /// `success` or the error type.
    pub outcome: String,
}

/// An append-only JSON-lines audit log.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    file: Mutex<fs_err::File>,
}

impl AuditLog {
    /// Open (or create) the log for appending.
    ///
    /// # Errors
    /// When the file cannot be opened (the message names it).
    pub fn open(path: &Path) -> std::io::Result<Self> {
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            fs_err::create_dir_all(parent)?;
        }
        let file = fs_err::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(AuditLog {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// The log's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one record; failures are logged, never fatal to the execution.
    pub fn append(&self, record: &AuditRecord) {
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        line.push(b'\n');
        let Ok(mut file) = self.file.lock() else {
            return;
        };
        if let Err(error) = file.write_all(&line) {
            tracing::warn!(%error, "cannot write the audit log");
        }
    }
}

/// Milliseconds since the Unix epoch.
#[must_use]
pub fn now_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis())
        .unwrap_or(0)
}
