//! Hot reload: the provider in effect is swapped whole, a held snapshot keeps answering from
//! its catalog, and the watcher reloads after files under a root change.

use std::sync::Arc;
use std::time::Duration;

use skillbox_core::{CatalogOptions, SkillRoot};
use skillbox_tools::{LiveProvider, ProviderOptions, ReloadCounts, SkillsProvider, watch_roots};

use crate::support::{catalog, executor, temp_root};

fn write_skill(root: &std::path::Path, name: &str, description: &str) {
    let folder = root.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n"),
    )
    .unwrap();
}

/// A live provider over the skills in `root`.
fn live_over(root: &std::path::Path) -> Arc<LiveProvider> {
    LiveProvider::new(SkillsProvider::new(
        catalog(&[root]),
        executor(),
        ProviderOptions::default(),
    ))
}

/// Catalog options with `root` as the only root.
fn options_of(root: &std::path::Path) -> CatalogOptions {
    CatalogOptions {
        roots: vec![SkillRoot::explicit(root)],
        ..CatalogOptions::default()
    }
}

#[test]
fn a_reload_swaps_the_whole_provider_and_held_snapshots_stay() {
    let root = temp_root();
    write_skill(root.path(), "first", "The first.");
    let live = live_over(root.path());
    let held = live.current();
    let mut changes = live.subscribe();
    write_skill(root.path(), "second", "The second.");
    let options = options_of(root.path());
    let change = live
        .reload(&options, vec![root.path().join("second/SKILL.md")])
        .unwrap();
    assert_eq!(change.generation, 1);
    assert_eq!(changes.try_recv().unwrap(), change);
    assert!(live.current().find_model_skill("second", None).is_ok());
    assert!(held.find_model_skill("second", None).is_err());
    assert!(Arc::ptr_eq(live.current().executor(), held.executor()));
}

#[test]
fn reloads_are_counted_by_how_they_ended() {
    let root = temp_root();
    write_skill(root.path(), "first", "The first.");
    let live = live_over(root.path());
    let options = options_of(root.path());
    // Putting a provider in effect is not a reload.
    live.replace(SkillsProvider::clone(&live.current()), Vec::new());
    assert_eq!(live.reloads(), ReloadCounts::default());
    live.reload(&options, Vec::new()).unwrap();
    live.reload(&options, Vec::new()).unwrap();
    let gone = options_of(&root.path().join("gone"));
    assert!(live.reload(&gone, Vec::new()).is_err());
    assert_eq!(
        live.reloads(),
        ReloadCounts {
            succeeded: 2,
            failed: 1
        }
    );
}

#[test]
fn the_watcher_reloads_after_a_write_settles() {
    let root = temp_root();
    write_skill(root.path(), "first", "The first.");
    let runtime = skillbox_testkit::runtime();
    let live = live_over(root.path());
    let options = options_of(root.path());
    let _guard = runtime.enter();
    let _watcher = watch_roots(Arc::clone(&live), options).unwrap();
    let mut changes = live.subscribe();
    write_skill(root.path(), "first", "Edited.");
    let change = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(5), changes.recv()).await })
        .expect("a reload within 5 s")
        .unwrap();
    assert!(
        change
            .changed_paths
            .iter()
            .any(|path| path.ends_with("first/SKILL.md")),
        "{change:?}"
    );
    assert_eq!(
        live.current()
            .find_model_skill("first", None)
            .unwrap()
            .description,
        "Edited."
    );
}

#[test]
fn writes_without_pause_cost_a_reload_per_gap_at_most() {
    let root = temp_root();
    write_skill(root.path(), "busy", "Version 0.");
    let runtime = skillbox_testkit::runtime();
    let live = live_over(root.path());
    let options = options_of(root.path());
    let _guard = runtime.enter();
    let _watcher = watch_roots(Arc::clone(&live), options).unwrap();
    // A write every 60 ms for 1.5 s: each settles (40 ms) before the next.
    let started = std::time::Instant::now();
    let mut version = 0;
    while started.elapsed() < Duration::from_millis(1500) {
        version += 1;
        write_skill(root.path(), "busy", &format!("Version {version}."));
        std::thread::sleep(Duration::from_millis(60));
    }
    std::thread::sleep(Duration::from_millis(600));
    // 1.5 s at one reload per 250 ms at most, plus the first and the last.
    let reloads = live.generation();
    assert!(
        (1..=9).contains(&reloads),
        "{reloads} reloads for {version} writes"
    );
    assert_eq!(
        live.current()
            .find_model_skill("busy", None)
            .unwrap()
            .description,
        format!("Version {version}.")
    );
}

#[test]
fn list_cursors_stay_valid_across_a_reload() {
    let root = temp_root();
    for name in ["alpha", "gamma", "delta"] {
        write_skill(root.path(), name, "A skill.");
    }
    let live = live_over(root.path());
    let page = |arguments: serde_json::Value| {
        let outcome = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(skillbox_tools::call_once(
                &live.current(),
                "list_skills",
                &arguments,
            ));
        assert!(!outcome.is_error(), "{outcome:?}");
        outcome.content
    };
    let first = page(serde_json::json!({"limit": 1}));
    let names = |page: &serde_json::Value| -> Vec<String> {
        page["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|skill| skill["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&first), ["alpha"]);
    // A reload adds `beta` (after the cursor) and removes `alpha` (before it).
    std::fs::remove_dir_all(root.path().join("alpha")).unwrap();
    write_skill(root.path(), "beta", "A skill.");
    let options = options_of(root.path());
    live.reload(&options, Vec::new()).unwrap();
    let second = page(serde_json::json!({"limit": 2, "cursor": first["next_cursor"]}));
    assert_eq!(names(&second), ["beta", "delta"]);
}
