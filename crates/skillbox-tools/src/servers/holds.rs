//! What one conversation holds: the servers its loads started, and the ones its user
//! approved. Dropped, its servers stop unless another holder keeps them.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::pool::{ServerKey, SkillServer};
use super::tools::{MAX_OFFERED_NAME_CHARS, ServerTool, qualified_name};

/// Where one tool of a held server goes.
pub(super) struct Placement {
    /// Its server.
    pub(super) server: Arc<SkillServer>,
    /// The tool, under the name it goes by (`server__tool`, or `skill__server__tool`).
    pub(super) tool: ServerTool,
    /// `server__tool`, whichever name it goes by.
    pub(super) plain_name: String,
    /// It goes by `skill__server__tool`: servers of other skills share its name.
    pub(super) qualified: bool,
    /// Offered, or why not.
    pub(super) outcome: Placed,
}

/// Whether a held server's tool is offered.
pub(super) enum Placed {
    /// Offered under its name.
    Offered,
    /// Its name would be longer than providers take.
    TooLong,
    /// Another server of the same skill offers the name, and keeps it.
    KeptBy(Arc<SkillServer>),
    /// Servers of these skills offer the name: none of them gets it.
    Unclear(Vec<String>),
}

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

    /// Every tool of the servers held, in order, each name once, under the name it goes by
    /// (see [`ServerHolds::placements`]); [`ServerHolds::find`] calls the one of a name.
    #[must_use]
    pub fn tools(&self) -> Vec<(Arc<SkillServer>, ServerTool)> {
        self.placements()
            .into_iter()
            .filter(|placement| matches!(placement.outcome, Placed::Offered))
            .map(|placement| (placement.server, placement.tool))
            .collect()
    }

    /// The held tool offered as `name`.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<(Arc<SkillServer>, ServerTool)> {
        self.tools()
            .into_iter()
            .find(|(_, tool)| tool.offered_name == name)
    }

    /// Why `name` answers no held tool although servers list it: servers of more than one
    /// skill offer it, so each goes by its skill's name. The message says which to call.
    #[must_use]
    pub fn unclear_name(&self, name: &str) -> Option<String> {
        let named: Vec<String> = self
            .placements()
            .into_iter()
            .filter(|placement| {
                placement.qualified
                    && placement.plain_name == name
                    && matches!(placement.outcome, Placed::Offered)
            })
            .map(|placement| {
                format!(
                    "`{}` (skill `{}`)",
                    placement.tool.offered_name,
                    placement.server.skill_name()
                )
            })
            .collect();
        (!named.is_empty()).then(|| {
            format!(
                "`{name}` is the name of tools of MCP servers of more than one skill, so each goes by its skill's name: call {}, as the skill whose instructions you follow",
                named.join(" or ")
            )
        })
    }

    /// Where each tool of the servers held goes, in order. A tool goes by `server__tool`
    /// unless servers of another skill held here share its server's name or offer that name
    /// too, or a tool of such a server had that name: then by `skill__server__tool`, so that a
    /// name never reaches a server of a skill that did not declare it, nor passes to another
    /// server when its own starts going by its skill's name. A name of that form outranks a plain one; a name still offered
    /// by servers of two skills is given to neither; among one skill's servers, a name goes to
    /// the server that owns it while that one lists it, else to the first held that lists it,
    /// which owns it from then on.
    pub(super) fn placements(&self) -> Vec<Placement> {
        let listed: Vec<(Arc<SkillServer>, Arc<[ServerTool]>)> = self
            .servers()
            .into_iter()
            .map(|server| {
                let tools = server.tools();
                (server, tools)
            })
            .collect();
        let mut skills_by_server: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        let mut skills_by_name: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        for (server, tools) in &listed {
            skills_by_server
                .entry(server.name())
                .or_default()
                .insert(server.skill_name());
            for tool in tools.iter() {
                skills_by_name
                    .entry(tool.offered_name.as_str())
                    .or_default()
                    .insert(server.skill_name());
            }
        }
        let shared = |names: &HashMap<&str, BTreeSet<&str>>, name: &str| {
            names.get(name).is_some_and(|skills| skills.len() > 1)
        };
        // The plain names that say no server for sure: offered by servers of more than one
        // skill, or by a server whose name servers of another skill have. Every tool offered
        // under one goes by its skill's name, so none passes to another server either.
        let mut unclear: BTreeSet<&str> = BTreeSet::new();
        for (server, tools) in &listed {
            let server_shared = shared(&skills_by_server, server.name());
            for tool in tools.iter() {
                let name = tool.offered_name.as_str();
                if server_shared || shared(&skills_by_name, name) {
                    unclear.insert(name);
                }
            }
        }
        let mut placements: Vec<Placement> = Vec::new();
        for (server, tools) in &listed {
            for tool in tools.iter() {
                let qualified = unclear.contains(tool.offered_name.as_str());
                let mut placed = tool.clone();
                if qualified {
                    placed.offered_name = qualified_name(server.skill_name(), &tool.offered_name);
                }
                let outcome = if placed.offered_name.chars().count() > MAX_OFFERED_NAME_CHARS {
                    Placed::TooLong
                } else {
                    Placed::Offered
                };
                placements.push(Placement {
                    server: Arc::clone(server),
                    plain_name: tool.offered_name.clone(),
                    tool: placed,
                    qualified,
                    outcome,
                });
            }
        }
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (position, placement) in placements.iter().enumerate() {
            if matches!(placement.outcome, Placed::Offered) {
                by_name
                    .entry(placement.tool.offered_name.clone())
                    .or_default()
                    .push(position);
            }
        }
        let Ok(mut owners) = self.owners.lock() else {
            return Vec::new();
        };
        let mut decisions: Vec<(usize, Placed)> = Vec::new();
        for (name, positions) in &by_name {
            // Names of the form `skill__server__tool` outrank plain ones.
            let qualified: Vec<usize> = positions
                .iter()
                .copied()
                .filter(|position| placements[*position].qualified)
                .collect();
            let contenders = if qualified.is_empty() {
                positions.clone()
            } else {
                qualified
            };
            let skills: BTreeSet<&str> = contenders
                .iter()
                .map(|position| placements[*position].server.skill_name())
                .collect();
            if skills.len() > 1 {
                owners.remove(name);
                let skills: Vec<String> = skills.into_iter().map(str::to_owned).collect();
                for position in positions {
                    decisions.push((*position, Placed::Unclear(skills.clone())));
                }
                continue;
            }
            let owned = owners.get(name).and_then(|owner| {
                contenders
                    .iter()
                    .copied()
                    .find(|position| placements[*position].server.key == *owner)
            });
            let Some(kept) = owned.or(contenders.first().copied()) else {
                continue;
            };
            owners.insert(name.clone(), placements[kept].server.key.clone());
            for position in positions {
                if *position != kept {
                    let keeper = Arc::clone(&placements[kept].server);
                    decisions.push((*position, Placed::KeptBy(keeper)));
                }
            }
        }
        drop(owners);
        for (position, outcome) in decisions {
            if let Some(placement) = placements.get_mut(position) {
                placement.outcome = outcome;
            }
        }
        placements
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
