//! The approval hook: before any call that runs code (`use_skill`, a `tools.json` handler, a
//! protocol run, a `load_skill` whose commands run, a `context: fork` sub-agent) or changes
//! what the runtime offers (`define_tool`), the host approves or denies it. The door policy
//! asks it; each door brings its own (the terminal, a card in the web page, a fixed answer).

use serde::Serialize;
use serde_json::Value;

/// A call waiting for approval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApprovalRequest {
    /// The tool called.
    pub tool: String,
    /// The skill whose code would run, when known.
    pub skill: Option<String>,
    /// The call's arguments (parsed).
    pub arguments: Value,
    /// One line saying what would run, written by the tool.
    pub summary: String,
}

impl ApprovalRequest {
    /// One line saying what would run, for a prompt.
    #[must_use]
    pub fn summary(&self) -> String {
        self.summary.clone()
    }
}

/// What the host decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run it.
    Approve,
    /// Do not run it; the model is told why.
    Deny {
        /// Why (shown to the model).
        reason: String,
    },
}

/// Decides whether a call that runs code may run.
#[async_trait::async_trait]
pub trait Approval: Send + Sync {
    /// Approve or deny `request`.
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalDecision;
}

/// A fixed answer for every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// Every call runs.
    Allow,
    /// No call that runs code runs.
    Deny,
}

/// How calls that run code are decided, as a person configures it: a fixed answer, or ask
/// (each door asks in its own way: the terminal, a card in the web page).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Every call runs.
    Allow,
    /// No call that runs code runs.
    Deny,
    /// The person is asked before each one.
    Ask,
}

impl ApprovalMode {
    /// The mode named `allow`, `deny` or `ask`.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "allow" => Some(ApprovalMode::Allow),
            "deny" => Some(ApprovalMode::Deny),
            "ask" => Some(ApprovalMode::Ask),
            _ => None,
        }
    }

    /// Its name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Allow => "allow",
            ApprovalMode::Deny => "deny",
            ApprovalMode::Ask => "ask",
        }
    }

    /// The fixed answer, or `None` when the person is asked.
    #[must_use]
    pub fn policy(self) -> Option<ApprovalPolicy> {
        match self {
            ApprovalMode::Allow => Some(ApprovalPolicy::Allow),
            ApprovalMode::Deny => Some(ApprovalPolicy::Deny),
            ApprovalMode::Ask => None,
        }
    }
}

#[async_trait::async_trait]
impl Approval for ApprovalPolicy {
    async fn decide(&self, _request: &ApprovalRequest) -> ApprovalDecision {
        match self {
            ApprovalPolicy::Allow => ApprovalDecision::Approve,
            ApprovalPolicy::Deny => ApprovalDecision::Deny {
                reason: "the approval policy denies running code".to_owned(),
            },
        }
    }
}
