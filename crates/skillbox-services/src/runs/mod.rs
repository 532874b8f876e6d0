//! `execute_skill` and `run_code` in two steps: a plan, which checks the parameters, the skills
//! and the input blobs without running or copying anything (each problem is a
//! [`ServiceError::InvalidParams`](crate::error::ServiceError::InvalidParams) naming the parameter), and the run, which the door policy
//! starts once the call has its place in the run queue ([`RunGate`]): inputs copied, the run
//! done by the caller's executor, the outcome turned into a Run object (a failing skill is a
//! successful answer with `status: "failed"`).
//!
//! One file per concept: `limits` (what one run may ask for, and [`RunLimits`]), `run_queue`
//! ([`RunGate`]), `plan` (`Services::plan_execute_skill` and `Services::plan_run_code`),
//! `planned_run` ([`PlannedRun::run`]), `input_blobs` (a run's inputs checked, copied and
//! removed) and `run_object` (the Run object a run answers with).

mod input_blobs;
mod limits;
mod plan;
mod planned_run;
mod run_object;
mod run_queue;

pub use limits::{
    DEFAULT_MAX_INPUT_BYTES, MAX_CODE_BYTES, MAX_INPUT_BLOBS, MAX_MOUNTED_SKILLS, MAX_RUN_TIMEOUT,
    RunLimits,
};
pub use planned_run::PlannedRun;
pub use run_queue::RunGate;

#[cfg(test)]
mod tests;
