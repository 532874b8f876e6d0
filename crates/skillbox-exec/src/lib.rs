//! skillbox-exec: everything that runs code. Scripts (`use_skill`) and tool handlers
//! (`tools.json`) run through one [`Executor`], under one [`sandbox::SandboxPolicy`], with
//! timeouts, output caps, process-tree cleanup and an audit line per execution.

pub mod audit;
pub mod error;
pub mod executor;
pub mod interpreter;
pub mod output;
pub mod private_directory;
pub mod process;
pub mod sandbox;
pub mod workers;

pub use error::{ErrorType, ExecError};
pub use executor::{Executor, ExecutorConfig, RunOptions, ScriptResult, SkillCopy, ToolCallResult};
pub use sandbox::{HelperCommand, HostSupport, SandboxLevel, SandboxMode, SandboxPolicy};
pub use workers::WorkerPoolConfig;
