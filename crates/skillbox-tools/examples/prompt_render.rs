//! Prompt rendering benchmark (run through `bench/prompt.sh`).
//!
//! Times, in this one process, what skills-ref's `to_prompt(dirs)` does for a tree of skills:
//!
//! * `load+render`: `SkillCatalog::load` (discovery, reading and parsing every `SKILL.md`, plus
//!   the resource listing, `tools.json` and validation that skills-ref does not do), building a
//!   `SkillsProvider`, and `system_prompt(PromptFormat::Xml)`;
//! * `render`: `system_prompt(PromptFormat::Xml)` alone, from a provider built once.
//!
//! The executor a provider needs is built once, before any timing (sandbox off, no helper).
//!
//! ```text
//! prompt_render ROOT [--runs N] [--warmup W] [--render-runs M]
//!                    [--xml-out FILE] [--dirs-out FILE]
//! ```
//!
//! `--xml-out` writes the XML exactly as rendered (for the byte comparison with skills-ref);
//! `--dirs-out` writes the folders of `provider.model_skills()`, one a line, in the provider's
//! order: the list to hand to `to_prompt`. Prints one JSON object on stdout. Exits 1 on errors,
//! or when two runs render different text.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot};
use skillbox_exec::{Executor, ExecutorConfig, SandboxMode, SandboxPolicy};
use skillbox_tools::{PromptFormat, ProviderOptions, SkillsProvider};

struct Arguments {
    root: PathBuf,
    runs: usize,
    warmup: usize,
    render_runs: usize,
    xml_out: Option<PathBuf>,
    dirs_out: Option<PathBuf>,
}

fn fail(message: &str) -> ! {
    eprintln!("prompt_render: error: {message}");
    std::process::exit(1);
}

fn parse_arguments() -> Arguments {
    let mut arguments = Arguments {
        root: PathBuf::new(),
        runs: 20,
        warmup: 2,
        render_runs: 200,
        xml_out: None,
        dirs_out: None,
    };
    let mut root = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let arg = arg.to_string_lossy().into_owned();
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| fail(&format!("{name} needs a value")))
        };
        let mut count = |name: &str| {
            value(name)
                .to_string_lossy()
                .parse::<usize>()
                .unwrap_or_else(|_| fail(&format!("{name} needs a whole number")))
        };
        match arg.as_str() {
            "--runs" => arguments.runs = count("--runs").max(1),
            "--warmup" => arguments.warmup = count("--warmup"),
            "--render-runs" => arguments.render_runs = count("--render-runs").max(1),
            "--xml-out" => arguments.xml_out = Some(PathBuf::from(value("--xml-out"))),
            "--dirs-out" => arguments.dirs_out = Some(PathBuf::from(value("--dirs-out"))),
            other if other.starts_with("--") => fail(&format!("unknown option {other}")),
            _ if root.is_none() => root = Some(PathBuf::from(arg)),
            other => fail(&format!("unexpected argument {other}")),
        }
    }
    arguments.root = root.unwrap_or_else(|| {
        fail("usage: prompt_render ROOT [--runs N] [--warmup W] [--render-runs M] [--xml-out FILE] [--dirs-out FILE]")
    });
    arguments
}

fn load_catalog(root: &std::path::Path) -> Arc<SkillCatalog> {
    let options = CatalogOptions {
        roots: vec![SkillRoot::explicit(root)],
        ..CatalogOptions::default()
    };
    let catalog = SkillCatalog::load(&options)
        .unwrap_or_else(|error| fail(&format!("loading {}: {error}", root.display())));
    Arc::new(catalog)
}

/// Median, min, max and mean of a list of seconds, plus the list itself.
fn summary(mut seconds: Vec<f64>) -> Value {
    let times = seconds.clone();
    seconds.sort_by(f64::total_cmp);
    let n = seconds.len();
    let median = if n % 2 == 1 {
        seconds[n / 2]
    } else {
        (seconds[n / 2 - 1] + seconds[n / 2]) / 2.0
    };
    json!({
        "runs": n,
        "median": median,
        "min": seconds[0],
        "max": seconds[n - 1],
        "mean": seconds.iter().sum::<f64>() / n as f64,
        "times": times,
    })
}

fn main() {
    let arguments = parse_arguments();
    let workspace = tempfile::tempdir().unwrap_or_else(|error| fail(&format!("temp dir: {error}")));
    let started = Instant::now();
    let executor = Arc::new(
        Executor::new(ExecutorConfig {
            helper: None,
            policy: SandboxPolicy {
                mode: SandboxMode::Off,
                ..SandboxPolicy::default()
            },
            workspace_root: workspace.path().join("workspaces"),
            ..ExecutorConfig::default()
        })
        .unwrap_or_else(|error| fail(&format!("executor: {}", error.message))),
    );
    let executor_seconds = started.elapsed().as_secs_f64();

    // One complete pass, untimed: the reference text, and what the outputs are written from.
    let catalog = load_catalog(&arguments.root);
    let provider = SkillsProvider::new(
        Arc::clone(&catalog),
        Arc::clone(&executor),
        ProviderOptions::default(),
    );
    let reference = provider.system_prompt(PromptFormat::Xml);
    let model_skills = provider.model_skills();
    if let Some(path) = &arguments.xml_out {
        std::fs::write(path, &reference)
            .unwrap_or_else(|error| fail(&format!("writing {}: {error}", path.display())));
    }
    if let Some(path) = &arguments.dirs_out {
        let mut dirs = String::new();
        for skill in &model_skills {
            let dir = skill.directory.to_str().unwrap_or_else(|| {
                fail(&format!(
                    "skill folder is not UTF-8: {}",
                    skill.directory.display()
                ))
            });
            if dir.contains('\n') {
                fail(&format!("skill folder holds a newline: {dir:?}"));
            }
            dirs.push_str(dir);
            dirs.push('\n');
        }
        std::fs::write(path, dirs)
            .unwrap_or_else(|error| fail(&format!("writing {}: {error}", path.display())));
    }

    // load+render: everything `to_prompt` does, from nothing.
    let mut load_seconds = Vec::with_capacity(arguments.runs);
    let mut load_render_seconds = Vec::with_capacity(arguments.runs);
    let mut differing_runs = 0usize;
    for run in 0..arguments.warmup + arguments.runs {
        let started = Instant::now();
        let catalog = load_catalog(&arguments.root);
        let loaded = started.elapsed();
        let provider =
            SkillsProvider::new(catalog, Arc::clone(&executor), ProviderOptions::default());
        let text = provider.system_prompt(PromptFormat::Xml);
        let total = started.elapsed();
        drop(provider);
        if text != reference {
            differing_runs += 1;
        }
        if run >= arguments.warmup {
            load_seconds.push(loaded.as_secs_f64());
            load_render_seconds.push(total.as_secs_f64());
        }
    }

    // render only, from the provider built above.
    let mut render_seconds = Vec::with_capacity(arguments.render_runs);
    for run in 0..arguments.warmup + arguments.render_runs {
        let started = Instant::now();
        let text = provider.system_prompt(PromptFormat::Xml);
        let elapsed = started.elapsed();
        if text != reference {
            differing_runs += 1;
        }
        if run >= arguments.warmup {
            render_seconds.push(elapsed.as_secs_f64());
        }
    }

    let report = json!({
        "root": arguments.root.display().to_string(),
        "catalog_skills": catalog.len(),
        "model_skills": model_skills.len(),
        "xml_bytes": reference.len(),
        "rayon_threads": std::env::var("RAYON_NUM_THREADS").ok(),
        "executor_seconds": executor_seconds,
        "load": summary(load_seconds),
        "load_render": summary(load_render_seconds),
        "render": summary(render_seconds),
        "differing_runs": differing_runs,
    });
    println!("{report}");
    if differing_runs > 0 {
        fail(&format!(
            "{differing_runs} run(s) rendered a different text"
        ));
    }
}
