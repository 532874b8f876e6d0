//! A call checked and ready: the work it does once admitted ([`Job`]), who is asked to approve
//! it ([`ApprovalSubject`]), and what the door policy needs of it ([`Prepared`]).

use std::future::Future;
use std::pin::Pin;

use skillbox_core::Skill;
use skillbox_services::ReadBudget;

use crate::effect::ToolEffect;
use crate::outcome::ToolOutcome;

/// A future of a tool's work.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>>;

/// Work that runs with the caller's answer budget (blob reads take from it).
pub type BudgetedWork<'a> = Box<dyn FnOnce(&'a mut dyn ReadBudget) -> ToolFuture<'a> + Send + 'a>;

/// What a call does once admitted.
pub enum Job<'a> {
    /// Already answered (from memory, while preparing).
    Answered(ToolOutcome),
    /// File reads: on the blocking pool, within its time budget. `what` says what is read,
    /// for the message when the budget runs out.
    Blocking {
        /// What the work is doing, as in "while {what}".
        what: &'static str,
        /// The work.
        work: Box<dyn FnOnce() -> ToolOutcome + Send + 'static>,
    },
    /// Async work (runs, blob reads and writes) with the caller's answer budget.
    Async(BudgetedWork<'a>),
}

impl std::fmt::Debug for Job<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Job::Answered(outcome) => formatter.debug_tuple("Answered").field(outcome).finish(),
            Job::Blocking { what, .. } => formatter
                .debug_struct("Blocking")
                .field("what", what)
                .finish_non_exhaustive(),
            Job::Async(_) => formatter.write_str("Async"),
        }
    }
}

/// Who is asked to approve a call, and what to show them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApprovalSubject {
    /// The skill whose code would run, when known.
    pub skill: Option<String>,
    /// One line saying what would run; by default "call `tool` of skill `s` with {arguments}".
    pub summary: Option<String>,
}

impl ApprovalSubject {
    /// The code of `skill` would run.
    #[must_use]
    pub fn skill(skill: &Skill) -> Self {
        ApprovalSubject {
            skill: Some(skill.name().to_owned()),
            summary: None,
        }
    }
}

/// A call checked and ready: what it needs from the door policy, and its job.
#[derive(Debug)]
pub struct Prepared<'a> {
    /// It takes a place in the run queue.
    pub(crate) runs_code: bool,
    /// The approval hook is asked first, with this.
    pub(crate) approval: Option<ApprovalSubject>,
    /// The work.
    pub(crate) job: Job<'a>,
    /// What the call changes when it succeeds ([`Tool::intent`]): the door policy attaches it
    /// to the outcome.
    pub(crate) effect: Option<ToolEffect>,
}

impl<'a> Prepared<'a> {
    /// Answered while preparing, from memory.
    #[must_use]
    pub fn answered(outcome: ToolOutcome) -> Self {
        Prepared {
            runs_code: false,
            approval: None,
            job: Job::Answered(outcome),
            effect: None,
        }
    }

    /// File reads on the blocking pool.
    #[must_use]
    pub fn reads_files(
        what: &'static str,
        work: impl FnOnce() -> ToolOutcome + Send + 'static,
    ) -> Self {
        Prepared {
            runs_code: false,
            approval: None,
            job: Job::Blocking {
                what,
                work: Box::new(work),
            },
            effect: None,
        }
    }

    /// Async work that runs no code (blob reads and writes), with the caller's budget.
    #[must_use]
    pub fn asynchronous(
        work: impl FnOnce(&'a mut dyn ReadBudget) -> ToolFuture<'a> + Send + 'a,
    ) -> Self {
        Prepared {
            runs_code: false,
            approval: None,
            job: Job::Async(Box::new(work)),
            effect: None,
        }
    }

    /// Code to run: approved first, then admitted to the run queue.
    #[must_use]
    pub fn runs_code(subject: ApprovalSubject, work: ToolFuture<'a>) -> Self {
        Prepared {
            runs_code: true,
            approval: Some(subject),
            job: Job::Async(Box::new(move |_| work)),
            effect: None,
        }
    }

    /// Ask the approval hook first (a call that changes what the runtime offers).
    #[must_use]
    pub fn approved_first(mut self, subject: ApprovalSubject) -> Self {
        self.approval = Some(subject);
        self
    }
}

/// A future preparing a call.
pub type PrepareFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Prepared<'a>, ToolOutcome>> + Send + 'a>>;
