//! The door policy: the one entry every door calls with a tool call, and the one place that
//! decides what happens around it, in one order (see `docs/design/one-way-in.md`):
//!
//! 1. the registry finds the tool among those the caller is offered;
//! 2. the arguments are decoded into the tool's typed parameters;
//! 3. the tool prepares the call without side effects (finds its skill, its blobs);
//! 4. the approval hook, when the caller has one, is asked about calls that run code or
//!    change what the runtime offers;
//! 5. a call that runs code takes a place in the one run queue, or is refused as busy;
//! 6. the job runs: in place, on the blocking pool (file reads, within a time budget), or on
//!    the async side with the caller's answer budget;
//! 7. the call is logged and counted.
//!
//! A door keeps only what is about its wire: decoding requests, encoding the [`ToolOutcome`].

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use skillbox_exec::ErrorType;
use skillbox_services::blocking::{BlockingError, BlockingPool};
use skillbox_services::{ReadBudget, RunGate, RunLimits, ServiceError, Unbudgeted};

use crate::approval::{Approval, ApprovalDecision, ApprovalRequest};
use crate::effect::{LoadedSkill, ToolEffect};
use crate::outcome::{CallStatus, ToolOutcome};
use crate::params::Arguments;
use crate::provider::SkillsProvider;
use crate::registry::{self, Job, Offer, Prepared, ToolRef};
use crate::servers::{ServerHolds, ServerPool, ServerReport, ServerStatus, render_reports};

/// The door a call came through: for logs and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// `POST /rpc`.
    Rpc,
    /// MCP over streamable HTTP (`/mcp`).
    McpHttp,
    /// `skillbox mcp` on stdio.
    McpStdio,
    /// The web playground (`POST /api/call`).
    Playground,
    /// A model's call in the web chat.
    WebChat,
    /// A model's call in `skillbox ask` or `chat`, or a library's agent.
    Agent,
    /// `skillbox call`.
    Cli,
    /// A Rust program calling the `skillbox` library.
    Library,
    /// The Python package `skillbox`.
    Python,
    /// The Node package `skillbox`.
    Node,
}

impl Door {
    /// The door's label in logs and metrics.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Door::Rpc => "rpc",
            Door::McpHttp => "mcp",
            Door::McpStdio => "mcp_stdio",
            Door::Playground => "playground",
            Door::WebChat => "web_chat",
            Door::Agent => "agent",
            Door::Cli => "cli",
            Door::Library => "library",
            Door::Python => "python",
            Door::Node => "node",
        }
    }

    /// Every door's label, for metrics that list them.
    pub const LABELS: [&'static str; 10] = [
        "rpc",
        "mcp",
        "mcp_stdio",
        "playground",
        "web_chat",
        "agent",
        "cli",
        "library",
        "python",
        "node",
    ];
}

/// What a door's client may want to hear of beside the answers (MCP clients get these as
/// `notifications/message` at the level they set).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DoorNotice {
    /// A skill's MCP server did not start when its skill was loaded (the load goes on
    /// without it).
    ServerUnavailable {
        /// The skill that declares it.
        skill: String,
        /// The server's name.
        server: String,
        /// Why, as the load's answer says it.
        reason: String,
    },
    /// A call that runs code was refused without running: the approval hook denied it, the
    /// run queue was full, the skill is not trusted, the sandbox could not be set up, or the
    /// script is not the skill's to run.
    RunRefused {
        /// The tool called.
        tool: String,
        /// Why, as the call's answer says it.
        reason: String,
    },
}

/// Where a door hears of [`DoorNotice`]s (an MCP session, to tell its client).
pub trait DoorNotices: Send + Sync {
    /// Take one notice; must not block (a client is told in the background).
    fn notice(&self, notice: DoorNotice);
}

/// Who asks, and what they may use.
pub struct CallContext<'c> {
    /// The door.
    pub door: Door,
    /// The tools the caller may call.
    pub offer: Offer<'c>,
    /// What blob reads may return ([`Unbudgeted`] for a door with one caller).
    pub budget: &'c mut dyn ReadBudget,
    /// Asked before calls that run code or change the tools, when the door has a person to ask.
    pub approval: Option<&'c dyn Approval>,
    /// The skill servers the caller's conversation holds: a `load_skill` starts the loaded
    /// skill's servers into it, and their tools are the caller's. `None`: a door without
    /// conversations (`/rpc`, `skillbox call`) never starts servers.
    pub servers: Option<&'c ServerHolds>,
    /// Told of servers that did not start and runs refused, when the door's client listens.
    pub notices: Option<&'c dyn DoorNotices>,
}

impl std::fmt::Debug for CallContext<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("CallContext")
            .field("door", &self.door)
            .field("offer", &self.offer)
            .finish_non_exhaustive()
    }
}

impl<'c> CallContext<'c> {
    /// A caller at `door` offered `offer`, with `budget` and no approval hook.
    pub fn new(door: Door, offer: Offer<'c>, budget: &'c mut dyn ReadBudget) -> Self {
        CallContext {
            door,
            offer,
            budget,
            approval: None,
            servers: None,
            notices: None,
        }
    }

    /// The same caller, telling `notices` of what its client may want to hear of.
    #[must_use]
    pub fn with_notices(mut self, notices: &'c dyn DoorNotices) -> Self {
        self.notices = Some(notices);
        self
    }

    /// The same caller, holding skill servers in `servers`.
    #[must_use]
    pub fn with_servers(mut self, servers: &'c ServerHolds) -> Self {
        self.servers = Some(servers);
        self
    }

    /// The same caller, asking `approval` first.
    #[must_use]
    pub fn with_approval(mut self, approval: &'c dyn Approval) -> Self {
        self.approval = Some(approval);
        self
    }
}

/// The one run queue and the one blocking pool of a process, and the order they are applied
/// in. Every door of a server shares one (`Arc`).
#[derive(Debug, Clone)]
pub struct DoorPolicy {
    runs: Arc<RunGate>,
    blocking: BlockingPool,
    servers: Arc<ServerPool>,
}

impl Default for DoorPolicy {
    fn default() -> Self {
        DoorPolicy::new(RunLimits::default())
    }
}

impl DoorPolicy {
    /// A policy with these run limits and the default blocking pool.
    #[must_use]
    pub fn new(limits: RunLimits) -> Self {
        DoorPolicy {
            runs: Arc::new(RunGate::new(limits)),
            blocking: BlockingPool::default(),
            servers: Arc::new(ServerPool::default()),
        }
    }

    /// The same, starting skill servers with `pool`'s settings.
    #[must_use]
    pub fn with_server_pool(mut self, pool: ServerPool) -> Self {
        self.servers = Arc::new(pool);
        self
    }

    /// The skill servers running for this process's conversations.
    #[must_use]
    pub fn servers(&self) -> &ServerPool {
        &self.servers
    }

    /// The same, with this blocking pool (a server's own budget).
    #[must_use]
    pub fn with_blocking_pool(mut self, pool: BlockingPool) -> Self {
        self.blocking = pool;
        self
    }

    /// The run queue: its limits, and how many runs execute and wait now.
    #[must_use]
    pub fn runs(&self) -> &RunGate {
        &self.runs
    }

    /// The blocking pool, for a door's own file reads (web pages, MCP resources).
    #[must_use]
    pub fn blocking(&self) -> &BlockingPool {
        &self.blocking
    }

    /// Call the tool `name` with `arguments` for the caller `context`, from the snapshot
    /// `provider`. Never panics: every problem is a [`ToolOutcome`] with its status.
    pub async fn call(
        &self,
        provider: &Arc<SkillsProvider>,
        name: &str,
        arguments: Arguments<'_>,
        context: CallContext<'_>,
    ) -> ToolOutcome {
        let started = Instant::now();
        let CallContext {
            door,
            offer,
            budget,
            approval,
            servers,
            notices,
        } = context;
        let Some(tool) = registry::lookup_held(provider, offer, servers, name) else {
            // A name servers of several skills offer goes by each skill's: say which to call.
            let outcome = servers
                .and_then(|servers| servers.unclear_name(name))
                .map_or_else(
                    || registry::unknown_tool(provider, offer, name),
                    |message| ToolOutcome::with_status(CallStatus::UnknownTool, message),
                );
            record(door, "unknown", &outcome, started);
            return outcome;
        };
        let mut outcome = self
            .answer(provider, &tool, arguments, budget, approval)
            .await;
        if tool.types_failures() {
            if let Some(kind) = outcome.error_type_of_status() {
                outcome = outcome.with_error_type(kind);
            }
            outcome = outcome.as_execution_result();
        }
        // A skill was loaded: its servers (and those of the skills it requires) start for the
        // caller's conversation, and the load's answer says what became of each.
        if let Some(servers) = servers
            && let Some(ToolEffect::LoadsSkill(loaded)) = &outcome.effect
            && let Some(reports) = self.hold_reports(provider, loaded, servers, approval).await
        {
            if let Some(notices) = notices {
                for report in &reports {
                    if let ServerStatus::Unavailable(reason) = &report.status {
                        notices.notice(DoorNotice::ServerUnavailable {
                            skill: report.skill.clone(),
                            server: report.server.clone(),
                            reason: reason.clone(),
                        });
                    }
                }
            }
            outcome.append_text(&render_reports(&reports));
        }
        if let Some(notices) = notices
            && tool.runs_code(provider)
            && let Some(reason) = refusal(&outcome)
        {
            notices.notice(DoorNotice::RunRefused {
                tool: tool.name().to_owned(),
                reason,
            });
        }
        record(door, tool.metric_label(), &outcome, started);
        outcome
    }

    /// Start the servers the `loaded` skill and the skills it requires declare, for a
    /// conversation holding `servers` (asking `approval` once per server), and say what became
    /// of each; `None` when they declare none. A call whose effect loads a skill does this
    /// through [`DoorPolicy::call`]; an agent calls it for a skill loaded another way (a fork,
    /// a person's `/name`).
    pub async fn hold_servers(
        &self,
        provider: &SkillsProvider,
        loaded: &LoadedSkill,
        servers: &ServerHolds,
        approval: Option<&dyn Approval>,
    ) -> Option<String> {
        self.hold_reports(provider, loaded, servers, approval)
            .await
            .map(|reports| render_reports(&reports))
    }

    /// [`DoorPolicy::hold_servers`], saying what became of each server as a report.
    async fn hold_reports(
        &self,
        provider: &SkillsProvider,
        loaded: &LoadedSkill,
        servers: &ServerHolds,
        approval: Option<&dyn Approval>,
    ) -> Option<Vec<ServerReport>> {
        if !loaded.declares_servers() {
            return None;
        }
        Some(
            self.servers
                .hold(provider, &loaded.with_requirements, servers, approval)
                .await,
        )
    }

    async fn answer<'a>(
        &self,
        provider: &'a Arc<SkillsProvider>,
        tool: &'a ToolRef,
        arguments: Arguments<'a>,
        budget: &'a mut dyn ReadBudget,
        approval: Option<&dyn Approval>,
    ) -> ToolOutcome {
        let prepared = match tool.prepare(provider, arguments).await {
            Ok(prepared) => prepared,
            Err(outcome) => return outcome,
        };
        let Prepared {
            runs_code,
            approval: subject,
            job,
            effect,
        } = prepared;
        if let (Some(hook), Some(subject)) = (approval, subject) {
            // The summary says what would run; the arguments go with it whole, and each
            // door shows every one of them (see `approval.rs`).
            let arguments = arguments_value(arguments);
            let summary = subject.summary.unwrap_or_else(|| match &subject.skill {
                Some(skill) => format!("call `{}` of skill `{skill}`", tool.name()),
                None => format!("call `{}`", tool.name()),
            });
            let request = ApprovalRequest {
                tool: tool.name().to_owned(),
                skill: subject.skill,
                arguments,
                summary,
            };
            if let ApprovalDecision::Deny { reason } = hook.decide(&request).await {
                return denied(&reason);
            }
        }
        let _turn = if runs_code {
            match self.runs.enter().await {
                Ok(turn) => Some(turn),
                Err(busy) => return ToolOutcome::from_service(Err(busy)),
            }
        } else {
            None
        };
        let mut outcome = match job {
            Job::Answered(outcome) => outcome,
            Job::Blocking { what, work } => match self.blocking.run(work).await {
                Ok(outcome) => outcome,
                Err(BlockingError::OverBudget { budget }) => ToolOutcome::with_status(
                    CallStatus::TimedOut,
                    format!(
                        "`{}` did not finish within {} ms while {what}; the server goes on answering other calls, but this one will fail the same way until that is fixed",
                        tool.name(),
                        budget.as_millis()
                    ),
                ),
                Err(error) => ToolOutcome::from_service(Err(ServiceError::internal_failure(
                    "a file read",
                    &error,
                ))),
            },
            Job::Async(work) => work(budget).await,
        };
        // What the call changed goes with a successful answer, for whoever keeps state.
        if !outcome.is_error() {
            outcome.effect = effect;
        }
        outcome
    }

    /// Wait for a place in the run queue for work that runs code outside a tool call (MCP
    /// `prompts/get` with commands): the same queue tool calls wait in.
    ///
    /// # Errors
    /// The busy error when the queue is full.
    pub async fn admit(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ServiceError> {
        self.runs.enter().await
    }
}

/// The answer to a call the approval hook denied, telling the model not to retry it.
#[must_use]
pub fn denied(reason: &str) -> ToolOutcome {
    ToolOutcome::with_status(
        CallStatus::Denied,
        format!(
            "the user did not allow this call ({reason}); do not call it again: go on without it or tell the user what you would need"
        ),
    )
}

/// Why a call that runs code was refused without running, when it was: a denial or a full
/// queue, or a kind of failure that says the code was not let run.
fn refusal(outcome: &ToolOutcome) -> Option<String> {
    let refused = matches!(outcome.status, CallStatus::Denied | CallStatus::Busy { .. })
        || outcome
            .content
            .get("errorType")
            .and_then(Value::as_str)
            .is_some_and(|kind| {
                [
                    ErrorType::Untrusted,
                    ErrorType::SandboxUnavailable,
                    ErrorType::ScriptNotAllowed,
                ]
                .iter()
                .any(|refused| refused.as_str() == kind)
            });
    refused.then(|| outcome.message())
}

/// A call's arguments as a value, for the approval hook (which shows them).
fn arguments_value(arguments: Arguments<'_>) -> Value {
    match arguments {
        Arguments::Value(value) => value.clone(),
        Arguments::Text(text) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
        }
        Arguments::None => Value::Object(serde_json::Map::new()),
    }
}

fn record(door: Door, tool: &'static str, outcome: &ToolOutcome, started: Instant) {
    let status = outcome.status.label();
    let elapsed = started.elapsed();
    skillbox_services::metrics::tool_call(door.label(), tool, status, elapsed);
    tracing::debug!(
        door = door.label(),
        tool,
        status,
        duration_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
        "tool call"
    );
}

/// Call a tool once, as a door with a single caller and no person to ask does (`skillbox
/// call`, tests): through a default policy, offered everything, without a budget.
pub async fn call_once(
    provider: &Arc<SkillsProvider>,
    name: &str,
    arguments: &Value,
) -> ToolOutcome {
    let mut budget = Unbudgeted;
    DoorPolicy::default()
        .call(
            provider,
            name,
            Arguments::from(arguments),
            CallContext::new(Door::Cli, Offer::Everything, &mut budget),
        )
        .await
}
