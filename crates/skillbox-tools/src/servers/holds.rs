//! What one conversation holds: the servers its loads started, and the ones its user
//! approved. Dropped, its servers stop unless another holder keeps them.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::pool::{ServerKey, SkillServer};
use super::tools::ServerTool;

/// The servers one conversation (an agent's, an MCP session's) holds.
#[derive(Default)]
pub struct ServerHolds {
    servers: Mutex<Vec<Arc<SkillServer>>>,
    approved: Mutex<BTreeSet<ServerKey>>,
    /// Bumped when a server is added or let go.
    changes: AtomicU64,
    /// Called when the tools held change (a server added, or its tool list changed).
    watcher: Mutex<Option<Arc<dyn Fn() + Send + Sync>>>,
}

impl std::fmt::Debug for ServerHolds {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ServerHolds")
            .field(
                "servers",
                &self.servers.lock().map(|servers| servers.len()).ok(),
            )
            .finish_non_exhaustive()
    }
}

impl ServerHolds {
    /// Holding nothing.
    #[must_use]
    pub fn new() -> Self {
        ServerHolds::default()
    }

    /// Call `watcher` whenever the tools held change: a door with a client to tell sends
    /// `notifications/tools/list_changed`.
    pub fn on_change(&self, watcher: Arc<dyn Fn() + Send + Sync>) {
        if let Ok(servers) = self.servers.lock() {
            for server in servers.iter() {
                server.watch(&watcher);
            }
        }
        if let Ok(mut slot) = self.watcher.lock() {
            *slot = Some(watcher);
        }
    }

    /// Bumped whenever the tools held change: what a cached tool list is checked against.
    #[must_use]
    pub fn generation(&self) -> u64 {
        let servers = self.servers.lock().map_or(0, |servers| {
            servers
                .iter()
                .map(|server| server.generation())
                .fold(0_u64, u64::wrapping_add)
        });
        servers.wrapping_add(self.changes.load(Ordering::SeqCst) << 32)
    }

    /// Whether it holds no server.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.servers
            .lock()
            .map_or(true, |servers| servers.is_empty())
    }

    /// The servers held, in the order they were loaded.
    #[must_use]
    pub fn servers(&self) -> Vec<Arc<SkillServer>> {
        self.servers
            .lock()
            .map(|servers| servers.clone())
            .unwrap_or_default()
    }

    /// Every tool of the servers held, in order.
    #[must_use]
    pub fn tools(&self) -> Vec<(Arc<SkillServer>, ServerTool)> {
        self.servers()
            .into_iter()
            .flat_map(|server| {
                let tools = server.tools();
                tools
                    .iter()
                    .map(|tool| (Arc::clone(&server), tool.clone()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The held tool offered as `name`.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<(Arc<SkillServer>, ServerTool)> {
        self.servers().into_iter().find_map(|server| {
            let tools = server.tools();
            let tool = tools.iter().find(|tool| tool.offered_name == name)?.clone();
            Some((server, tool))
        })
    }

    /// Let every server go (those no other holder keeps stop now).
    pub fn release(&self) {
        let released = self
            .servers
            .lock()
            .map(|mut servers| std::mem::take(&mut *servers))
            .unwrap_or_default();
        if !released.is_empty() {
            self.changes.fetch_add(1, Ordering::SeqCst);
            self.notify();
        }
        drop(released);
    }

    pub(super) fn held(&self, key: &ServerKey) -> Option<Arc<SkillServer>> {
        self.servers
            .lock()
            .ok()?
            .iter()
            .find(|server| server.key == *key)
            .cloned()
    }

    pub(super) fn approved(&self, key: &ServerKey) -> bool {
        self.approved
            .lock()
            .is_ok_and(|approved| approved.contains(key))
    }

    pub(super) fn approve(&self, key: ServerKey) {
        if let Ok(mut approved) = self.approved.lock() {
            approved.insert(key);
        }
    }

    pub(super) fn keep(&self, server: Arc<SkillServer>) {
        if let Some(watcher) = self.watcher.lock().ok().and_then(|slot| slot.clone()) {
            server.watch(&watcher);
        }
        if let Ok(mut servers) = self.servers.lock() {
            if servers.iter().any(|held| Arc::ptr_eq(held, &server)) {
                return;
            }
            servers.push(server);
        }
        self.changes.fetch_add(1, Ordering::SeqCst);
        self.notify();
    }

    fn notify(&self) {
        if let Some(watcher) = self.watcher.lock().ok().and_then(|slot| slot.clone()) {
            watcher();
        }
    }
}
