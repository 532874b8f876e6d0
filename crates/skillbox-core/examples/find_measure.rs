//! Search benchmark (run through `bench/find.sh`): quality and speed of the skill search index.
//!
//! ```text
//! find_measure QUERIES.json ROOT... [--builds N] [--query-runs M]
//! ```
//!
//! Loads one catalog over the roots (later roots win, as on the command line), then:
//! * builds the index `N` times from the loaded catalog (median and spread of the build);
//! * runs every labelled query `M` times (p50 and p99 per query call);
//! * scores recall@1 and recall@5 for the index and, side by side, for a keyword baseline: the
//!   skills ranked by how many of the query's lower-cased words occur in their name and
//!   description (what a model or person gets by filtering a list for words).
//!
//! Prints one JSON object on stdout; exits 1 on errors.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillbox_core::search::SkillIndex;
use skillbox_core::{CatalogOptions, Skill, SkillCatalog, SkillRoot};

fn fail(message: &str) -> ! {
    eprintln!("find_measure: error: {message}");
    std::process::exit(1);
}

struct Labelled {
    query: String,
    expect: Vec<String>,
}

fn percentile(sorted: &[Duration], fraction: f64) -> f64 {
    let position = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[position].as_secs_f64() * 1e6
}

/// The keyword baseline: skills ranked by the number of distinct query words (lower-cased,
/// three letters or more) found in `name description`, ties by name.
fn keyword_rank<'a>(skills: &'a [Arc<Skill>], query: &str) -> Vec<&'a str> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, &str)> = skills
        .iter()
        .map(|skill| {
            let text = format!("{} {}", skill.name(), skill.description).to_lowercase();
            let count = words
                .iter()
                .filter(|word| text.contains(word.as_str()))
                .count();
            (count, skill.name())
        })
        .filter(|(count, _)| *count > 0)
        .collect();
    scored.sort_by(|left, right| right.0.cmp(&left.0).then(left.1.cmp(right.1)));
    scored.into_iter().map(|(_, name)| name).collect()
}

fn main() {
    let mut positional = Vec::new();
    let mut builds = 15usize;
    let mut query_runs = 50usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut count = |name: &str| -> usize {
            args.next()
                .and_then(|value| value.parse().ok())
                .unwrap_or_else(|| fail(&format!("{name} needs a whole number")))
        };
        match arg.as_str() {
            "--builds" => builds = count("--builds").max(1),
            "--query-runs" => query_runs = count("--query-runs").max(1),
            other if other.starts_with("--") => fail(&format!("unknown option {other}")),
            _ => positional.push(arg),
        }
    }
    if positional.len() < 2 {
        fail("usage: find_measure QUERIES.json ROOT... [--builds N] [--query-runs M]");
    }
    let queries_text =
        fs_err::read_to_string(&positional[0]).unwrap_or_else(|error| fail(&error.to_string()));
    let queries_json: Value =
        serde_json::from_str(&queries_text).unwrap_or_else(|error| fail(&error.to_string()));
    let labelled: Vec<Labelled> = queries_json["queries"]
        .as_array()
        .unwrap_or_else(|| fail("the queries file needs a `queries` list"))
        .iter()
        .map(|entry| Labelled {
            query: entry["query"].as_str().unwrap_or_default().to_owned(),
            expect: entry["expect"]
                .as_array()
                .map(|names| {
                    names
                        .iter()
                        .filter_map(|name| name.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();

    let options = CatalogOptions {
        roots: positional[1..]
            .iter()
            .map(|root| SkillRoot::explicit(PathBuf::from(root)))
            .collect(),
        ..CatalogOptions::default()
    };
    let load_started = Instant::now();
    let catalog = SkillCatalog::load(&options).unwrap_or_else(|error| fail(&error.to_string()));
    let load_ms = load_started.elapsed().as_secs_f64() * 1e3;
    let latest: Vec<Arc<Skill>> = catalog.latest().cloned().collect();

    let mut build_times = Vec::new();
    let mut index = SkillIndex::build(&latest);
    for _ in 0..builds {
        let started = Instant::now();
        index = SkillIndex::build(&latest);
        build_times.push(started.elapsed());
    }
    build_times.sort();

    let mut query_times = Vec::new();
    let mut found_at_1 = 0;
    let mut found_at_5 = 0;
    let mut keyword_at_1 = 0;
    let mut keyword_at_5 = 0;
    let mut misses = Vec::new();
    for labelled in &labelled {
        let results = index
            .search(&labelled.query, 5, |_| true)
            .unwrap_or_else(|error| fail(&format!("{:?}: {error}", labelled.query)));
        let names: Vec<&str> = results.hits.iter().map(|hit| hit.skill.name()).collect();
        let expected = |name: &&str| labelled.expect.iter().any(|wanted| wanted == name);
        if names.first().is_some_and(expected) {
            found_at_1 += 1;
        }
        if names.iter().any(expected) {
            found_at_5 += 1;
        } else {
            misses.push(json!({"query": labelled.query, "expect": labelled.expect, "got": names}));
        }
        let keyword = keyword_rank(&latest, &labelled.query);
        if keyword.first().is_some_and(expected) {
            keyword_at_1 += 1;
        }
        if keyword.iter().take(5).any(expected) {
            keyword_at_5 += 1;
        }
        for _ in 0..query_runs {
            let started = Instant::now();
            let results = index.search(&labelled.query, 5, |_| true);
            query_times.push(started.elapsed());
            std::hint::black_box(results.map(|results| results.hits.len()).ok());
        }
    }
    query_times.sort();
    let total = labelled.len() as f64;
    let report = json!({
        "skills": latest.len(),
        "queries": labelled.len(),
        "load_ms": load_ms,
        "build_ms": {
            "median": build_times[build_times.len() / 2].as_secs_f64() * 1e3,
            "min": build_times[0].as_secs_f64() * 1e3,
            "max": build_times[build_times.len() - 1].as_secs_f64() * 1e3,
            "runs": build_times.len(),
        },
        "query_us": {
            "p50": percentile(&query_times, 0.5),
            "p99": percentile(&query_times, 0.99),
            "calls": query_times.len(),
        },
        "recall": {
            "bm25_at_1": f64::from(found_at_1) / total,
            "bm25_at_5": f64::from(found_at_5) / total,
            "keyword_at_1": f64::from(keyword_at_1) / total,
            "keyword_at_5": f64::from(keyword_at_5) / total,
        },
        "misses": misses,
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
