//! What a 2026-07-28 `subscriptions/listen` filter may hold: only files of skills served here,
//! and a bounded total of URI bytes (a listen stream keeps its filter while it stays open).

use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::model::SubscriptionFilter;
use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot};
use skillbox_exec::{Executor, ExecutorConfig, SandboxMode, SandboxPolicy};
use skillbox_mcp::server::MAX_LISTEN_URI_BYTES;
use skillbox_mcp::{McpOptions, SkillsMcpServer};
use skillbox_tools::{LiveProvider, ProviderOptions, SkillsProvider};

#[test]
fn listen_filters_keep_served_skills_within_a_size() {
    let runtime = skillbox_testkit::runtime();
    let _inside = runtime.enter();
    let temp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(temp.path().join("served")).unwrap();
    std::fs::write(
        temp.path().join("served/SKILL.md"),
        "---\nname: served\ndescription: A served skill.\n---\nBody.\n",
    )
    .unwrap();
    std::fs::create_dir_all(temp.path().join("hidden")).unwrap();
    std::fs::write(
        temp.path().join("hidden/SKILL.md"),
        "---\nname: hidden\ndescription: Hidden.\ndisable-model-invocation: true\n---\nBody.\n",
    )
    .unwrap();
    let executor = Executor::new(ExecutorConfig {
        helper: None,
        policy: SandboxPolicy {
            mode: SandboxMode::Off,
            ..SandboxPolicy::default()
        },
        ..ExecutorConfig::default()
    })
    .unwrap();
    let catalog = SkillCatalog::load(&CatalogOptions {
        roots: vec![SkillRoot::explicit(temp.path())],
        ..CatalogOptions::default()
    })
    .unwrap();
    let live = LiveProvider::new(SkillsProvider::new(
        Arc::new(catalog),
        Arc::new(executor),
        ProviderOptions::default(),
    ));
    let server = SkillsMcpServer::new(live, McpOptions::default());

    let mut uris = vec![
        "skill://served/SKILL.md".to_owned(),
        "skill://hidden/SKILL.md".to_owned(),
        "skill://made-up/SKILL.md".to_owned(),
        "file:///etc/passwd".to_owned(),
    ];
    // Then far more bytes of served URIs than a filter keeps.
    let long = format!("skill://served/{}.md", "x".repeat(4000));
    uris.extend(std::iter::repeat_n(long.clone(), 100));
    let requested = SubscriptionFilter::builder()
        .resource_subscriptions(uris)
        .build();
    let accepted = server
        .accepted_subscription_filter(&requested)
        .unwrap()
        .resource_subscriptions
        .unwrap();
    assert_eq!(accepted[0], "skill://served/SKILL.md");
    assert!(
        accepted
            .iter()
            .all(|uri| uri.starts_with("skill://served/"))
    );
    let total: usize = accepted.iter().map(String::len).sum();
    assert!(total <= MAX_LISTEN_URI_BYTES, "{total}");
    assert!(accepted.len() > 10, "{}", accepted.len());
}
