//! The pool of running skill servers, and one server's life: started on the first hold,
//! restarted on the next call after a crash or an idle stop, stopped when no holder keeps it.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use skillbox_core::source::SkillSource;
use skillbox_core::{ServerDeclaration, ServerTransport, Skill};
use skillbox_exec::{Executor, SkillCopy};

use super::connection::Connection;
use super::connection::RunningPlace;
use super::holds::{Placed, ServerHolds};
use super::tools::{MAX_OFFERED_NAME_CHARS, ServerTool, offered_tools, result_outcome, shown_name};
use super::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_RUNNING_SERVERS, DEFAULT_START_TIMEOUT,
    MAX_SERVERS_PER_LOAD, NAME_SEPARATOR,
};
use crate::approval::{Approval, ApprovalDecision, ApprovalRequest};
use crate::outcome::{CallStatus, ToolOutcome};
use crate::provider::SkillsProvider;
use crate::registry::{self, Offer};

/// How long servers may take, and stay idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerPoolConfig {
    /// Longest a start may take (`initialize` and `tools/list`).
    pub start_timeout: Duration,
    /// Longest one tool call may take.
    pub call_timeout: Duration,
    /// A server unused this long is stopped (and started again by its next call).
    pub idle_timeout: Duration,
    /// Servers started as processes that run at once at most; past it, a start is refused.
    pub max_running: usize,
}

impl Default for ServerPoolConfig {
    fn default() -> Self {
        ServerPoolConfig {
            start_timeout: DEFAULT_START_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_running: DEFAULT_MAX_RUNNING_SERVERS,
        }
    }
}

/// Which server: a server is its skill's (its folder, its trust, its secrets, its network
/// grant), its name and its declaration, so the conversations that load one skill share it.
/// An HTTP server two skills declare is two connections: each reaches it under its own
/// skill's grant, and is checked against it (sharing one would let a skill without the grant
/// use the connection a granted skill opened).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ServerKey {
    skill: String,
    /// Which copy of its name the skill is: what grants by name it gets depends on it.
    copy: SkillCopy,
    folder: PathBuf,
    /// The device and inode of the folder the skill was loaded from (none for an archive): a
    /// path names whichever folder is there when it is resolved, and two skills whose paths
    /// resolve alike but were loaded from different folders never share a server.
    folder_identity: Option<(u64, u64)>,
    name: String,
    transport: String,
}

impl ServerKey {
    fn of(skill: &Skill, copy: SkillCopy, declaration: &ServerDeclaration) -> Self {
        ServerKey {
            skill: skill.name().to_owned(),
            copy,
            folder: skill
                .resolved_skill_md_path()
                .parent()
                .map(PathBuf::from)
                .unwrap_or_default(),
            folder_identity: match &skill.source {
                SkillSource::Directory(folder) => Some(folder.device_and_inode()),
                SkillSource::Archive(_) => None,
            },
            name: declaration.name.clone(),
            transport: serde_json::to_string(&declaration.transport).unwrap_or_default(),
        }
    }
}

/// One server a skill declares, as the runtime keeps it.
pub struct SkillServer {
    pub(super) key: ServerKey,
    pub(super) declaration: ServerDeclaration,
    /// The skill that declared it (its folder, its trust, its secrets and network policy).
    pub(super) skill: Arc<Skill>,
    /// Which copy of its name the skill is ([`SkillCopy`]): grants by name reach only the
    /// copy in effect that no other root contests.
    pub(super) copy: SkillCopy,
    pub(super) executor: Arc<Executor>,
    config: ServerPoolConfig,
    /// How many servers of its pool run as processes now (shared by the pool's servers).
    running_processes: Arc<AtomicUsize>,
    /// The connection, when started; the lock is also the start's (one start at a time).
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    tools: RwLock<Arc<[ServerTool]>>,
    /// Tools the server listed that are not offered, and why.
    skipped: RwLock<Vec<String>>,
    /// Bumped whenever the tools change.
    generation: AtomicU64,
    last_used: Mutex<Instant>,
    /// A re-listing after `tools/list_changed` runs; another notification meanwhile only
    /// asks for one more after it.
    relisting: AtomicBool,
    relist_again: AtomicBool,
    /// Told when the tools change (the holders' callbacks).
    watchers: Mutex<Vec<Weak<dyn Fn() + Send + Sync>>>,
}

impl std::fmt::Debug for SkillServer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SkillServer")
            .field("name", &self.declaration.name)
            .field("skill", &self.skill.name())
            .finish_non_exhaustive()
    }
}

impl SkillServer {
    /// Its name, the prefix of its tools'.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.declaration.name
    }

    /// The skill that declared it.
    #[must_use]
    pub fn skill_name(&self) -> &str {
        self.skill.name()
    }

    /// What it is, exactly: the command and arguments it runs with and where, or its URL.
    #[must_use]
    pub fn describe(&self) -> String {
        match &self.declaration.transport {
            ServerTransport::Stdio { command, args, .. } => {
                let mut words = vec![skillbox_core::shell_words::printable_shell_word(command)];
                words.extend(
                    args.iter()
                        .map(|arg| skillbox_core::shell_words::printable_shell_word(arg)),
                );
                format!("`{}` in {}", words.join(" "), self.key.folder.display())
            }
            ServerTransport::StreamableHttp { url } => url.clone(),
        }
    }

    /// Its tools as offered now.
    #[must_use]
    pub fn tools(&self) -> Arc<[ServerTool]> {
        self.tools
            .read()
            .map(|tools| Arc::clone(&tools))
            .unwrap_or_else(|_| Arc::from(Vec::new()))
    }

    /// Bumped whenever its tools change.
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    pub(super) fn watch(&self, watcher: &Arc<dyn Fn() + Send + Sync>) {
        if let Ok(mut watchers) = self.watchers.lock() {
            watchers.retain(|watcher| watcher.strong_count() > 0);
            watchers.push(Arc::downgrade(watcher));
        }
    }

    fn set_tools(&self, listed: Vec<rmcp::model::Tool>) {
        let (tools, skipped) = offered_tools(self.name(), listed);
        if let Ok(mut current) = self.tools.write() {
            *current = Arc::from(tools);
        }
        if let Ok(mut current) = self.skipped.write() {
            *current = skipped;
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
        let watchers: Vec<_> = self
            .watchers
            .lock()
            .map(|watchers| watchers.iter().filter_map(Weak::upgrade).collect())
            .unwrap_or_default();
        for watcher in watchers {
            watcher();
        }
    }

    /// The server said its tools changed: list them again, one listing at a time.
    pub(super) fn tools_changed(self: &Arc<Self>) {
        self.relist_again.store(true, Ordering::SeqCst);
        if self.relisting.swap(true, Ordering::SeqCst) {
            return;
        }
        let server = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let Some(current) = server.upgrade() else {
                    return;
                };
                current.relist_again.store(false, Ordering::SeqCst);
                let connection = current.connection.lock().await.clone();
                if let Some(connection) = connection {
                    let listed =
                        tokio::time::timeout(current.config.start_timeout, connection.list_tools())
                            .await;
                    if let Ok(Ok(tools)) = listed {
                        current.set_tools(tools);
                    }
                }
                // Floods are paced: one listing per quarter second at most.
                tokio::time::sleep(Duration::from_millis(250)).await;
                if !current.relist_again.load(Ordering::SeqCst) {
                    current.relisting.store(false, Ordering::SeqCst);
                    return;
                }
            }
        });
    }

    /// The running connection, starting the server when it is not running (the first hold,
    /// or the call after a crash or an idle stop), within the start timeout.
    async fn connection(self: &Arc<Self>) -> Result<Arc<Connection>, String> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref()
            && connection.alive()
        {
            return Ok(Arc::clone(connection));
        }
        *slot = None;
        // A process counts against the pool's bound from its start to its end.
        let place = match &self.declaration.transport {
            ServerTransport::Stdio { .. } => Some(
                RunningPlace::take(&self.running_processes, self.config.max_running).ok_or_else(
                    || {
                        format!(
                            "skillbox runs {} MCP servers already, as many as it may at once; it starts when one of them stops",
                            self.config.max_running
                        )
                    },
                )?,
            ),
            ServerTransport::StreamableHttp { .. } => None,
        };
        let started = Instant::now();
        let opened = tokio::time::timeout(self.config.start_timeout, async {
            let connection = Connection::open(self, place).await?;
            let tools = connection.list_tools().await?;
            Ok::<_, String>((connection, tools))
        })
        .await;
        let (connection, tools) = match opened {
            Ok(Ok(opened)) => opened,
            Ok(Err(reason)) => return Err(reason),
            Err(_) => {
                return Err(format!(
                    "it did not answer `initialize` and `tools/list` within {} s",
                    self.config.start_timeout.as_secs_f32()
                ));
            }
        };
        tracing::info!(
            server = self.name(),
            skill = self.skill_name(),
            tools = tools.len(),
            start_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "skill MCP server started"
        );
        self.set_tools(tools);
        let connection = Arc::new(connection);
        *slot = Some(Arc::clone(&connection));
        self.touch();
        tokio::spawn(stop_when_idle(
            Arc::downgrade(self),
            Arc::downgrade(&connection),
        ));
        Ok(connection)
    }

    fn touch(&self) {
        if let Ok(mut last_used) = self.last_used.lock() {
            *last_used = Instant::now();
        }
    }

    fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .map(|last_used| last_used.elapsed())
            .unwrap_or_default()
    }

    /// Call its tool `tool` (the server's own name for it) with `arguments`.
    pub(crate) async fn call(
        self: &Arc<Self>,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> ToolOutcome {
        let started = Instant::now();
        self.touch();
        let outcome = match self.connection().await {
            Err(reason) => ToolOutcome::with_status(
                CallStatus::Failed,
                format!(
                    "the MCP server `{}` of skill `{}` is unavailable: {reason}",
                    self.name(),
                    self.skill_name()
                ),
            ),
            Ok(connection) => {
                let request = rmcp::model::CallToolRequestParams::new(tool.to_owned())
                    .with_arguments(arguments);
                let answer = tokio::time::timeout(
                    self.config.call_timeout,
                    connection.peer().call_tool(request),
                )
                .await;
                match answer {
                    Ok(Ok(result)) => result_outcome(result),
                    Ok(Err(error)) => {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        let why = connection.ended().map_or_else(
                            || error.to_string(),
                            |how| format!("the server ended: {how}"),
                        );
                        ToolOutcome::with_status(
                            CallStatus::Failed,
                            format!(
                                "the MCP server `{}` did not answer the call of `{tool}`: {why}; it starts again on the next call",
                                self.name()
                            ),
                        )
                    }
                    Err(_) => {
                        // A server that does not answer in time is stopped: the next call
                        // starts it afresh.
                        self.stop_if_current(&connection).await;
                        ToolOutcome::with_status(
                            CallStatus::TimedOut,
                            format!(
                                "the MCP server `{}` did not answer the call of `{tool}` within {} s; it was stopped and starts again on the next call",
                                self.name(),
                                self.config.call_timeout.as_secs()
                            ),
                        )
                    }
                }
            }
        };
        self.touch();
        self.executor.audit_server_call(
            self.skill_name(),
            tool,
            started.elapsed(),
            outcome.is_error(),
        );
        outcome
    }

    async fn stop_if_current(&self, connection: &Arc<Connection>) {
        let mut slot = self.connection.lock().await;
        if slot
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(current, connection))
        {
            *slot = None;
        }
    }
}

/// Stop `server`'s `connection` once no call used it for the idle timeout (unless it was
/// replaced or the server is gone meanwhile).
async fn stop_when_idle(server: Weak<SkillServer>, connection: Weak<Connection>) {
    loop {
        let wait = {
            let Some(server) = server.upgrade() else {
                return;
            };
            let Some(current) = connection.upgrade() else {
                return;
            };
            let idle = server.idle_for();
            if idle >= server.config.idle_timeout {
                tracing::info!(server = server.name(), "stopping an idle skill MCP server");
                server.stop_if_current(&current).await;
                return;
            }
            server.config.idle_timeout - idle
        };
        tokio::time::sleep(wait).await;
    }
}

/// What became of one server a load asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerReport {
    /// The skill that declares it.
    pub skill: String,
    /// The server's name.
    pub server: String,
    /// Ready, or why not.
    pub status: ServerStatus,
}

/// A server's state after a load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStatus {
    /// Running: the names its tools are offered by, and the tools left out with why.
    Ready {
        /// Offered names.
        tools: Vec<String>,
        /// Left out.
        skipped: Vec<String>,
        /// What else the model needs to know of its names (why they carry the skill's).
        notes: Vec<String>,
    },
    /// Not running, and why.
    Unavailable(String),
}

/// The servers running in one process, by key; each kept alive only by its holders.
#[derive(Debug, Default)]
pub struct ServerPool {
    config: ServerPoolConfig,
    running: Mutex<HashMap<ServerKey, Weak<SkillServer>>>,
    /// How many of its servers run as processes now.
    running_processes: Arc<AtomicUsize>,
}

impl ServerPool {
    /// An empty pool.
    #[must_use]
    pub fn new(config: ServerPoolConfig) -> Self {
        ServerPool {
            config,
            running: Mutex::default(),
            running_processes: Arc::default(),
        }
    }

    /// Its settings.
    #[must_use]
    pub fn config(&self) -> ServerPoolConfig {
        self.config
    }

    /// Servers some holder keeps now (running, or stopped while idle).
    #[must_use]
    pub fn held_servers(&self) -> usize {
        self.running.lock().map_or(0, |running| {
            running
                .values()
                .filter(|server| server.strong_count() > 0)
                .count()
        })
    }

    fn server(
        &self,
        provider: &SkillsProvider,
        skill: &Arc<Skill>,
        declaration: &ServerDeclaration,
    ) -> Arc<SkillServer> {
        let key = ServerKey::of(
            skill,
            SkillCopy::in_catalog(provider.catalog(), skill),
            declaration,
        );
        let Ok(mut running) = self.running.lock() else {
            return self.new_server(provider, skill, declaration, key);
        };
        running.retain(|_, server| server.strong_count() > 0);
        if let Some(server) = running.get(&key).and_then(Weak::upgrade) {
            return server;
        }
        let server = self.new_server(provider, skill, declaration, key.clone());
        running.insert(key, Arc::downgrade(&server));
        server
    }

    fn new_server(
        &self,
        provider: &SkillsProvider,
        skill: &Arc<Skill>,
        declaration: &ServerDeclaration,
        key: ServerKey,
    ) -> Arc<SkillServer> {
        Arc::new(SkillServer {
            copy: key.copy,
            key,
            declaration: declaration.clone(),
            skill: Arc::clone(skill),
            executor: Arc::clone(provider.executor()),
            config: self.config,
            running_processes: Arc::clone(&self.running_processes),
            connection: tokio::sync::Mutex::new(None),
            tools: RwLock::new(Arc::from(Vec::new())),
            skipped: RwLock::default(),
            generation: AtomicU64::new(0),
            last_used: Mutex::new(Instant::now()),
            relisting: AtomicBool::new(false),
            relist_again: AtomicBool::new(false),
            watchers: Mutex::default(),
        })
    }

    /// Start the servers `skills` declare (the loaded skill and those it requires), for
    /// `holds`: each is asked of `approval` first (once per holder, one question at a time),
    /// then all are started or shared at once (a load waits for its slowest server, not for
    /// the sum of them), at most [`MAX_SERVERS_PER_LOAD`], and kept by `holds` once they run.
    /// Says what became of each, in the order they are declared.
    pub(crate) async fn hold(
        &self,
        provider: &SkillsProvider,
        skills: &[Arc<Skill>],
        holds: &ServerHolds,
        approval: Option<&dyn Approval>,
    ) -> Vec<ServerReport> {
        let mut reports: Vec<Option<ServerReport>> = Vec::new();
        // The servers to start (or that run already), with the place of their report.
        let mut starting: Vec<(usize, Arc<SkillServer>)> = Vec::new();
        let mut new_servers = 0_usize;
        for skill in skills {
            for declaration in &skill.properties.mcp_servers {
                let report = |status| ServerReport {
                    skill: skill.name().to_owned(),
                    server: declaration.name.clone(),
                    status,
                };
                let key = ServerKey::of(
                    skill,
                    SkillCopy::in_catalog(provider.catalog(), skill),
                    declaration,
                );
                if let Some(server) = holds.held(&key) {
                    starting.push((reports.len(), server));
                    reports.push(None);
                    continue;
                }
                new_servers += 1;
                if new_servers > MAX_SERVERS_PER_LOAD {
                    reports.push(Some(report(ServerStatus::Unavailable(format!(
                        "one load starts at most {MAX_SERVERS_PER_LOAD} servers, and the skill and those it requires declare more"
                    )))));
                    continue;
                }
                let server = self.server(provider, skill, declaration);
                if let Some(approval) = approval
                    && !holds.approved(&key)
                {
                    let request = ApprovalRequest {
                        tool: "mcp_server".to_owned(),
                        skill: Some(skill.name().to_owned()),
                        arguments: json!({ "server": declaration.name }),
                        summary: format!(
                            "start the MCP server `{}` of skill `{}`: {}",
                            declaration.name,
                            skill.name(),
                            server.describe()
                        ),
                    };
                    if let ApprovalDecision::Deny { reason } = approval.decide(&request).await {
                        reports.push(Some(report(ServerStatus::Unavailable(format!(
                            "the user did not allow it to start ({reason})"
                        )))));
                        continue;
                    }
                    holds.approve(key.clone());
                }
                starting.push((reports.len(), server));
                reports.push(None);
            }
        }
        let outcomes = start_all(starting.iter().map(|(_, server)| Arc::clone(server))).await;
        // Kept in the order declared: where two servers of one skill offer a tool by one
        // name, the one held first keeps it, whichever started first. Each is reported once
        // all are held: a server of another skill held later can change the names its tools
        // go by.
        for ((_, server), outcome) in starting.iter().zip(&outcomes) {
            if outcome.is_ok() {
                holds.keep(Arc::clone(server));
            }
        }
        for ((index, server), outcome) in starting.into_iter().zip(outcomes) {
            let status = match outcome {
                Ok(()) => ready(provider, holds, &server),
                Err(reason) => ServerStatus::Unavailable(reason),
            };
            if let Some(slot) = reports.get_mut(index) {
                *slot = Some(ServerReport {
                    skill: server.skill_name().to_owned(),
                    server: server.name().to_owned(),
                    status,
                });
            }
        }
        reports.into_iter().flatten().collect()
    }
}

/// Start (or find running) every server of `servers` at once; the outcome of each, in order.
async fn start_all(servers: impl Iterator<Item = Arc<SkillServer>>) -> Vec<Result<(), String>> {
    let mut started = tokio::task::JoinSet::new();
    let mut outcomes = Vec::new();
    for (position, server) in servers.enumerate() {
        outcomes.push(Err("starting it failed".to_owned()));
        started.spawn(async move { (position, server.connection().await.map(|_| ())) });
    }
    while let Some(joined) = started.join_next().await {
        if let Ok((position, outcome)) = joined
            && let Some(slot) = outcomes.get_mut(position)
        {
            *slot = outcome;
        }
    }
    outcomes
}

/// A running `server` as `holds` offers it: its tools under the names they go by (see
/// [`ServerHolds::placements`]), less those whose name a built-in has or another server
/// keeps, each of those said with the tools the server lists but skillbox does not offer. A
/// skill's own tool of the same name gives way to the server's (see [`registry::lookup_held`]),
/// and that is said too, as is why its names carry its skill's.
fn ready(
    provider: &SkillsProvider,
    holds: &ServerHolds,
    server: &Arc<SkillServer>,
) -> ServerStatus {
    let placements = holds.placements();
    let mut tools = Vec::new();
    let mut notes = Vec::new();
    let mut skipped = server
        .skipped
        .read()
        .map(|skipped| skipped.clone())
        .unwrap_or_default();
    let mut qualified = false;
    for placement in placements
        .iter()
        .filter(|placement| Arc::ptr_eq(&placement.server, server))
    {
        let name = &placement.tool.offered_name;
        let own = shown_name(&placement.tool.tool_name);
        qualified |= placement.qualified;
        match &placement.outcome {
            Placed::TooLong => skipped.push(format!(
                "`{own}`: servers of other skills offer `{}` too, so it would go by `{name}`, longer than {MAX_OFFERED_NAME_CHARS} characters",
                placement.plain_name
            )),
            Placed::KeptBy(holder) => skipped.push(format!(
                "`{own}`: `{name}` is the name of a tool of the server `{}` (skill `{}`), which keeps it",
                holder.name(),
                holder.skill_name()
            )),
            Placed::Unclear(skills) => skipped.push(format!(
                "`{own}`: servers of the skills {} all offer `{name}`, so none of them is offered by it",
                skills
                    .iter()
                    .map(|skill| format!("`{skill}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Placed::Offered => {
                let other = registry::lookup(provider, Offer::Everything, name);
                if matches!(other, Some(registry::ToolRef::Builtin(_))) {
                    skipped.push(format!(
                        "`{own}`: `{name}` is the name of a built-in tool, which keeps it"
                    ));
                    continue;
                }
                if let Some(shadowed) = other.as_ref().and_then(registry::ToolRef::owner) {
                    skipped.push(format!(
                        "the tool `{name}` of skill `{}` is not offered while this server's is",
                        shadowed.name()
                    ));
                }
                tools.push(name.clone());
            }
        }
    }
    if qualified {
        let others: BTreeSet<&str> = placements
            .iter()
            .filter(|placement| {
                placement.server.skill_name() != server.skill_name()
                    && (placement.server.name() == server.name()
                        || placements.iter().any(|mine| {
                            Arc::ptr_eq(&mine.server, server)
                                && mine.qualified
                                && mine.plain_name == placement.plain_name
                        }))
            })
            .map(|placement| placement.server.skill_name())
            .collect();
        let why = if others.is_empty() {
            "a server named like one of its skill's is held for another skill too".to_owned()
        } else {
            format!(
                "servers of other skills held here ({}) have the same names",
                others
                    .iter()
                    .map(|skill| format!("`{skill}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        notes.push(format!(
            "its tools go by `{}{NAME_SEPARATOR}{}{NAME_SEPARATOR}…` where {why}: a call by `{}{NAME_SEPARATOR}…` alone would not say which skill's server is meant",
            server.skill_name(),
            server.name(),
            server.name(),
        ));
    }
    ServerStatus::Ready {
        tools,
        skipped,
        notes,
    }
}

/// What a load says of its servers, appended to the instructions it returns.
#[must_use]
pub fn render_reports(reports: &[ServerReport]) -> String {
    let mut text = String::from("## MCP servers\n");
    for report in reports {
        match &report.status {
            ServerStatus::Ready {
                tools,
                skipped,
                notes,
            } => {
                text.push_str(&format!(
                    "- `{}` (skill `{}`) is running; its tools: {}\n",
                    report.server,
                    report.skill,
                    if tools.is_empty() {
                        "none".to_owned()
                    } else {
                        tools.iter().map(|tool| format!("`{tool}`")).collect::<Vec<_>>().join(", ")
                    }
                ));
                for note in notes {
                    text.push_str(&format!("  - {note}\n"));
                }
                for note in skipped {
                    text.push_str(&format!("  - left out: {note}\n"));
                }
            }
            ServerStatus::Unavailable(reason) => text.push_str(&format!(
                "- `{}` (skill `{}`) is unavailable: {reason}. Go on without its tools, or tell the user what is missing.\n",
                report.server, report.skill
            )),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_skill(root: &std::path::Path) -> Arc<Skill> {
        let catalog = skillbox_core::SkillCatalog::load(&skillbox_core::CatalogOptions {
            roots: vec![skillbox_core::SkillRoot::explicit(root)],
            ..skillbox_core::CatalogOptions::default()
        })
        .unwrap();
        Arc::clone(catalog.get("weather").unwrap())
    }

    /// A folder replaced at the same path (a link swapped, a folder renamed away and another
    /// put there) is another folder: its skill gets its own server, though its path and its
    /// declaration read the same.
    #[test]
    fn a_folder_replaced_at_the_same_path_is_another_server() {
        let temp = tempfile::tempdir().unwrap();
        let skill_md = "---\nname: weather\ndescription: Weather.\n---\nBody.\n";
        let root = temp.path().join("root");
        let folder = root.join("weather");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("SKILL.md"), skill_md).unwrap();
        let declaration = ServerDeclaration {
            name: "forecast".to_owned(),
            transport: ServerTransport::Stdio {
                command: "python3".to_owned(),
                args: vec!["server.py".to_owned()],
                env: Vec::new(),
                env_values: Default::default(),
            },
            declared_in: ".mcp.json".to_owned(),
        };
        let first = load_skill(&root);
        let again = load_skill(&root);
        assert_eq!(
            ServerKey::of(&first, SkillCopy::InEffect, &declaration),
            ServerKey::of(&again, SkillCopy::InEffect, &declaration),
            "the same folder loaded twice shares its server"
        );

        std::fs::rename(&folder, temp.path().join("moved-away")).unwrap();
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("SKILL.md"), skill_md).unwrap();
        let replaced = load_skill(&root);
        let (before, after) = (
            ServerKey::of(&first, SkillCopy::InEffect, &declaration),
            ServerKey::of(&replaced, SkillCopy::InEffect, &declaration),
        );
        assert_eq!(before.folder, after.folder);
        assert_ne!(before, after);
    }
}
