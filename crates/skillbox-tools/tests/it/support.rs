use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot};
use skillbox_exec::{Executor, ExecutorConfig, SandboxMode, SandboxPolicy};
pub use skillbox_testkit::{repo_root, runtime, write_tree};
use skillbox_tools::{ProviderOptions, SkillsProvider, ToolOutcome};

/// A catalog over `roots`, lowest precedence first.
pub fn catalog(roots: &[&Path]) -> Arc<SkillCatalog> {
    Arc::new(
        SkillCatalog::load(&CatalogOptions {
            roots: roots
                .iter()
                .map(|root| SkillRoot::explicit(*root))
                .collect(),
            ..CatalogOptions::default()
        })
        .unwrap(),
    )
}

/// The sandbox is the execution crate's concern and tested there; dispatch tests run scripts
/// without it so they need no helper binary.
pub fn executor() -> Arc<Executor> {
    let workspaces =
        std::env::temp_dir().join(format!("skillbox-tools-tests-{}", std::process::id()));
    Arc::new(
        Executor::new(ExecutorConfig {
            helper: None,
            policy: SandboxPolicy {
                mode: SandboxMode::Off,
                ..SandboxPolicy::default()
            },
            workspace_root: workspaces,
            ..ExecutorConfig::default()
        })
        .unwrap(),
    )
}

pub fn examples_provider(options: ProviderOptions) -> SkillsProvider {
    SkillsProvider::new(
        catalog(&[&repo_root().join("examples/skills")]),
        executor(),
        options,
    )
}

/// Replace the machine-specific repository path in rendered text.
pub fn portable(text: &str) -> String {
    text.replace(&repo_root().display().to_string(), "[REPO]")
}

/// Answer one tool call through the provider's real dispatcher.
pub fn call(provider: &SkillsProvider, tool: &str, arguments: Value) -> ToolOutcome {
    let provider = std::sync::Arc::new(provider.clone());
    runtime().block_on(skillbox_tools::call_once(&provider, tool, &arguments))
}

/// A temporary skill root the sandbox user can read.
pub fn temp_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        root.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    root
}
