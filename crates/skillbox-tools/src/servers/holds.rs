//! What one conversation holds: the servers its loads started, and the ones its user
//! approved. Dropped, its servers stop unless another holder keeps them.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::pool::{ServerKey, SkillServer};
use super::tools::ServerTool;

/// The servers one conversation (an agent's, an MCP session's) holds.
#[derive(Default)]
pub struct ServerHolds {
    servers: Mutex<Vec<Arc<SkillServer>>>,
    approved: Mutex<BTreeSet<ServerKey>>,
    /// Which server each tool name offered belongs to: the first to offer it keeps it while it
    /// lists it, so a server whose tools change cannot take a name another server's tool was
    /// offered by.
    owners: Mutex<HashMap<String, ServerKey>>,
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

    /// Every tool of the servers held, in order, each name once: where two servers offer a
    /// tool by one name, the one that offered it first keeps it while it lists it (else the
    /// one held first), and [`ServerHolds::find`] calls that one.
    #[must_use]
    pub fn tools(&self) -> Vec<(Arc<SkillServer>, ServerTool)> {
        self.offered()
            .into_iter()
            .filter_map(|(server, tools, index)| {
                let tool = tools.get(index)?.clone();
                Some((server, tool))
            })
            .collect()
    }

    /// The held tool offered as `name`.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<(Arc<SkillServer>, ServerTool)> {
        self.offered()
            .into_iter()
            .find_map(|(server, tools, index)| {
                let tool = tools.get(index).filter(|tool| tool.offered_name == name)?;
                Some((Arc::clone(&server), tool.clone()))
            })
    }

    /// The tools offered, in order, as each server's tool list now and the place of the tool
    /// in it. Each name goes to the server that owns it while that one lists it; else to the
    /// first server held that lists it, which owns it from then on.
    fn offered(&self) -> Vec<(Arc<SkillServer>, Arc<[ServerTool]>, usize)> {
        let listed: Vec<(Arc<SkillServer>, Arc<[ServerTool]>, usize)> = self
            .servers()
            .into_iter()
            .flat_map(|server| {
                let tools = server.tools();
                (0..tools.len())
                    .map(|index| (Arc::clone(&server), Arc::clone(&tools), index))
                    .collect::<Vec<_>>()
            })
            .collect();
        let name_of = |position: usize| {
            listed
                .get(position)
                .and_then(|(_, tools, index)| tools.get(*index))
                .map(|tool| tool.offered_name.as_str())
        };
        let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        for position in 0..listed.len() {
            if let Some(name) = name_of(position) {
                by_name.entry(name).or_default().push(position);
            }
        }
        let Ok(mut owners) = self.owners.lock() else {
            return Vec::new();
        };
        let mut kept = BTreeSet::new();
        for (name, positions) in &by_name {
            let key_at = |position: &usize| listed.get(*position).map(|(server, _, _)| &server.key);
            let owned = owners.get(*name).and_then(|owner| {
                positions
                    .iter()
                    .find(|position| key_at(position) == Some(owner))
            });
            let Some(position) = owned.or(positions.first()) else {
                continue;
            };
            if let Some(key) = key_at(position) {
                owners.insert((*name).to_owned(), key.clone());
            }
            kept.insert(*position);
        }
        drop(owners);
        listed
            .into_iter()
            .enumerate()
            .filter(|(position, _)| kept.contains(position))
            .map(|(_, entry)| entry)
            .collect()
    }

    /// Let every server go (those no other holder keeps stop now).
    pub fn release(&self) {
        let released = self
            .servers
            .lock()
            .map(|mut servers| std::mem::take(&mut *servers))
            .unwrap_or_default();
        if let Ok(mut owners) = self.owners.lock() {
            owners.clear();
        }
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
