//! The number of open MCP sessions is bounded: a session past the cap is refused, and a
//! closed one makes room.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;

use skillbox_core::{CatalogOptions, SkillCatalog};
use skillbox_exec::{Executor, ExecutorConfig, SandboxMode, SandboxPolicy};
use skillbox_llm::{LiveProvider, ProviderOptions, SkillsProvider};
use skillbox_mcp::{McpOptions, SkillsMcpServer};

#[test]
fn sessions_past_the_cap_are_refused_until_one_closes() {
    let runtime = skillbox_testkit::runtime();
    let _inside = runtime.enter();
    let executor = Executor::new(ExecutorConfig {
        helper: None,
        policy: SandboxPolicy {
            mode: SandboxMode::Off,
            ..SandboxPolicy::default()
        },
        ..ExecutorConfig::default()
    })
    .unwrap();
    let catalog = SkillCatalog::load(&CatalogOptions::default()).unwrap();
    let live = LiveProvider::new(SkillsProvider::new(
        Arc::new(catalog),
        Arc::new(executor),
        ProviderOptions::default(),
    ));
    let server = SkillsMcpServer::new(
        live,
        McpOptions {
            max_sessions: 3,
            ..McpOptions::default()
        },
    );
    // The server itself is the first session.
    let second = server.session().unwrap();
    let third = server.session().unwrap();
    let refused = server.session().unwrap_err();
    assert!(
        refused.to_string().contains("3 MCP sessions are open"),
        "{refused}"
    );
    drop(second);
    let again = server.session().unwrap();
    drop((third, again));
}
