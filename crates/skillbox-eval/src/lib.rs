//! skillbox-eval: does a skill trigger when it should, and does it make answers better? Trigger
//! evals offer each query to a model with the real catalog, exactly as `skillbox ask` would,
//! and record which skill it reaches for; task evals run skill-creator's `evals.json` tasks
//! through the agent loop with and without the skill and grade them (checks that need no model
//! first, a judge model for sentences); description tuning proposes rewrites and keeps the one
//! that does best on held-out queries. Every model response is cached by request digest, so a
//! re-run is free and reproducible. See `docs/design/eval.md`.

pub mod cache;
pub mod calls;
pub mod error;
pub mod grade;
pub mod improve;
pub mod output_files;
pub mod report;
pub mod runner;
pub mod suite;
pub mod task;
pub mod trigger;

pub use cache::{CacheUse, CachedModel, ResponseCache};
pub use error::EvalError;
pub use report::{EvalReport, SkillEvalReport};
pub use runner::{
    EvalPlan, EvalRunner, EvalTarget, ImprovePlan, ModelSetup, Progress, ProviderFactory,
};
pub use suite::{SkillEvals, TaskSuite, TriggerQuery};
