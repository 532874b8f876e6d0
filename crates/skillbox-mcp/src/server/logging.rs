//! `logging/setLevel` and what a session's client hears at the level it set, as
//! `notifications/message` (logger `skillbox`): catalog reloads and the skills they dropped or
//! could not load (info, or warning when a skill went), a skill server that did not start and
//! why (warning), a run refused without running (warning). A client that never sets a level
//! hears none of these. rmcp marks MCP logging deprecated (SEP-2577); clients of the 2025
//! revisions still use it, and the official conformance suite checks it.
#![allow(deprecated)]

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use serde_json::json;
use skillbox_tools::{DoorNotice, DoorNotices};

use super::*;

/// The name messages are sent under.
const LOGGER: &str = "skillbox";

/// A level's rank: a message is sent when its rank is at least the rank of the level set.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The level a session's client set with `logging/setLevel`: none until it sets one.
#[derive(Debug, Default)]
pub(super) struct ClientLogLevel(Mutex<Option<LoggingLevel>>);

/// The server's capabilities with `logging` declared.
pub(super) fn with_logging(
    mut capabilities: rmcp::model::ServerCapabilities,
) -> rmcp::model::ServerCapabilities {
    capabilities.logging = Some(rmcp::model::JsonObject::default());
    capabilities
}

impl ClientSession {
    /// Send `data` at `level` to this session's client when it asked for messages of that
    /// level, in the background (a client that reads nothing holds up no call).
    pub(super) fn log(&self, level: LoggingLevel, data: Value) {
        let wanted = self
            .log_level
            .0
            .lock()
            .ok()
            .and_then(|set| *set)
            .is_some_and(|set| rank(level) >= rank(set));
        if !wanted {
            return;
        }
        let Some(peer) = self.peer.get().cloned() else {
            return;
        };
        if peer.is_transport_closed() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let message = LoggingMessageNotificationParam::new(level, data).with_logger(LOGGER);
            let _ =
                tokio::time::timeout(NOTIFY_TIMEOUT, peer.notify_logging_message(message)).await;
        });
    }

    /// Tell the client of a reload: what it dropped and could not load.
    pub(super) fn log_reload(&self, change: &CatalogChange, skills: usize) {
        let level = if change.dropped.is_empty() && change.not_loaded.is_empty() {
            LoggingLevel::Info
        } else {
            LoggingLevel::Warning
        };
        let not_loaded: Vec<Value> = change
            .not_loaded
            .iter()
            .map(|(path, reason)| json!({"path": path.display().to_string(), "reason": reason}))
            .collect();
        self.log(
            level,
            json!({
                "event": "catalog_reloaded",
                "message": reload_message(change, skills),
                "generation": change.generation,
                "skills": skills,
                "dropped": change.dropped,
                "not_loaded": not_loaded,
            }),
        );
    }
}

/// One sentence for a person reading the client's log.
fn reload_message(change: &CatalogChange, skills: usize) -> String {
    let mut message = format!("the skills were reloaded: {skills} served");
    if !change.dropped.is_empty() {
        message.push_str(&format!(
            "; no longer served: {}",
            change
                .dropped
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !change.not_loaded.is_empty() {
        message.push_str(&format!(
            "; {} folder(s) could not be loaded",
            change.not_loaded.len()
        ));
    }
    message
}

impl DoorNotices for ClientSession {
    fn notice(&self, notice: DoorNotice) {
        let data = match notice {
            DoorNotice::ServerUnavailable {
                skill,
                server,
                reason,
            } => json!({
                "event": "server_unavailable",
                "message": format!("the MCP server `{server}` of skill `{skill}` did not start: {reason}"),
                "skill": skill,
                "server": server,
                "reason": reason,
            }),
            DoorNotice::RunRefused { tool, reason } => json!({
                "event": "run_refused",
                "message": format!("a call of `{tool}` was refused: {reason}"),
                "tool": tool,
                "reason": reason,
            }),
            other => json!({"event": "notice", "message": format!("{other:?}")}),
        };
        self.log(LoggingLevel::Warning, data);
    }
}

impl SkillsMcpServer {
    /// `logging/setLevel`: from now on this session's client hears messages of this level and
    /// above.
    pub(super) fn set_log_level(
        &self,
        request: SetLevelRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.remember_peer(&context.peer);
        let mut level = self.session.log_level.0.lock().map_err(|_| {
            ErrorData::internal_error("the session's log level is unavailable", None)
        })?;
        *level = Some(request.level);
        Ok(())
    }
}
