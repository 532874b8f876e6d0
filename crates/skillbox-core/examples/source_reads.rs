//! What one read of a loaded skill's files costs (run through `bench/source_reads.sh`): a
//! top-level file, a nested file, `is_file` of a nested file, `sha256`, and listing a skill of
//! 60 files, each through `SkillSource` as the servers call it. Each operation runs in rounds
//! of `SOURCE_READS_CALLS` calls (default 20,000; listings a twentieth of that), interleaved,
//! `SOURCE_READS_ROUNDS` times (default 7); the median round gives the time per call.
//!
//! With `SOURCE_READS_CATALOG` naming a folder of skills (such as `bench/out/skills-10k` from
//! `bench/catalog.sh`), loading it is timed too, `SOURCE_READS_LOADS` times (default 5): loading
//! records each folder's identity and looks up the files `tools.json` and `skill.toml` name.
//!
//! Prints one line per operation, `operation<TAB>nanoseconds per call`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::path::Path;
use std::time::Instant;

use skillbox_core::{CatalogOptions, Skill, SkillCatalog, SkillRoot};

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// One skill with `SKILL.md` and 60 files, 20 of them two folders deep.
fn skill_tree(root: &Path) {
    let skill = root.join("reads");
    write(
        &skill.join("SKILL.md"),
        "---\nname: reads\ndescription: Files to read.\n---\nBody.\n",
    );
    for index in 0..20 {
        write(&skill.join(format!("top-{index}.md")), "top\n");
        write(&skill.join(format!("scripts/run-{index}.py")), "print(1)\n");
        write(&skill.join(format!("references/deep/{index}.md")), "deep\n");
    }
}

type Operation<'a> = (&'static str, usize, Box<dyn Fn() + 'a>);

fn main() {
    let calls = knob("SOURCE_READS_CALLS", 20_000);
    let rounds = knob("SOURCE_READS_ROUNDS", 7);
    let temp = tempfile::tempdir().unwrap();
    skill_tree(temp.path());
    let catalog = SkillCatalog::load(&CatalogOptions {
        roots: vec![SkillRoot::explicit(temp.path())],
        ..CatalogOptions::default()
    })
    .unwrap();
    let skill: &Skill = catalog.get("reads").unwrap();
    let source = &skill.source;
    let operations: Vec<Operation<'_>> = vec![
        (
            "read_file top-level",
            calls,
            Box::new(|| assert!(source.read_file("top-7.md", 1024).is_ok())),
        ),
        (
            "read_file nested",
            calls,
            Box::new(|| assert!(source.read_file("references/deep/7.md", 1024).is_ok())),
        ),
        (
            "is_file nested",
            calls,
            Box::new(|| assert!(source.is_file("scripts/run-7.py"))),
        ),
        (
            "sha256 nested",
            calls,
            Box::new(|| assert!(source.sha256("scripts/run-7.py").is_ok())),
        ),
        (
            "list_files (61 files)",
            calls / 20,
            Box::new(|| assert_eq!(source.list_files(1000).0.len(), 61)),
        ),
    ];
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); operations.len()];
    for _ in 0..rounds {
        for (index, (_, count, operation)) in operations.iter().enumerate() {
            let started = Instant::now();
            for _ in 0..*count {
                operation();
            }
            samples[index].push(started.elapsed().as_secs_f64() * 1e9 / *count as f64);
        }
    }
    for ((name, _, _), times) in operations.iter().zip(samples) {
        println!("{name}\t{:.0}", median(times));
    }
    if let Ok(catalog) = std::env::var("SOURCE_READS_CATALOG") {
        let loads = knob("SOURCE_READS_LOADS", 5);
        let options = CatalogOptions {
            roots: vec![SkillRoot::explicit(&catalog)],
            ..CatalogOptions::default()
        };
        let mut times = Vec::new();
        let mut skills = 0;
        for _ in 0..loads {
            let started = Instant::now();
            skills = SkillCatalog::load(&options).unwrap().len();
            times.push(started.elapsed().as_secs_f64() * 1e9);
        }
        println!("catalog load ({skills} skills)\t{:.0}", median(times));
    }
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}
