//! `skillbox find`: search the skills for a task with the index a model's `find_skills` uses.

use std::process::ExitCode;

use serde::Serialize;
use skillbox_core::printable::{printable, printable_line};
use skillbox_core::search::MAX_SEARCH_LIMIT;

use crate::EXIT_USAGE;
use crate::arguments::{FindArguments, GlobalOptions};
use crate::output::{indent, print_json, print_text};
use crate::setup::Setup;

/// One skill found, as `--json` prints it.
#[derive(Serialize)]
struct FoundSkill<'a> {
    name: &'a str,
    description: &'a str,
    score: f64,
    /// Whether a model may see it (only with `--all` can this be false).
    visible_to_model: bool,
    path: String,
}

/// What `--json` prints.
#[derive(Serialize)]
struct FoundView<'a> {
    query: &'a str,
    skills: Vec<FoundSkill<'a>>,
    /// Skills matching at least one word (of those searched).
    matched: usize,
    #[serde(skip_serializing_if = "is_zero")]
    ignored_words: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// Run the command. Exits 0 with hits, 1 with none (as `grep` does), 2 for a bad query.
pub fn run(global: &GlobalOptions, arguments: &FindArguments) -> anyhow::Result<ExitCode> {
    let query = arguments.query.join(" ");
    if !(1..=MAX_SEARCH_LIMIT).contains(&arguments.limit) {
        eprintln!(
            "error: --limit must be from 1 to {MAX_SEARCH_LIMIT}, not {}",
            arguments.limit
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let catalog = Setup::new(global, &[])?.catalog()?;
    let results = match catalog
        .search_index()
        .search(&query, arguments.limit, |skill| {
            arguments.all || skill.visible_to_model()
        }) {
        Ok(results) => results,
        Err(error) => {
            eprintln!("error: QUERY: {error}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let found = !results.hits.is_empty();
    if arguments.json {
        print_json(&FoundView {
            query: &query,
            skills: results
                .hits
                .iter()
                .map(|hit| FoundSkill {
                    name: hit.skill.name(),
                    description: &hit.skill.description,
                    score: hit.shown_score(),
                    visible_to_model: hit.skill.visible_to_model(),
                    path: hit.skill.skill_md_path.display().to_string(),
                })
                .collect(),
            matched: results.matched,
            ignored_words: results.ignored_terms,
        })?;
    } else {
        let mut text = String::new();
        for (rank, hit) in results.hits.iter().enumerate() {
            let hidden = if hit.skill.visible_to_model() {
                ""
            } else {
                "  (hidden from models)"
            };
            text.push_str(&format!(
                "{:>2}. {}  {:.2}{hidden}\n{}\n",
                rank + 1,
                printable_line(hit.skill.name()),
                hit.score,
                indent(&printable_line(&hit.skill.description), 4)
            ));
        }
        if found {
            text.push_str(&format!(
                "\n{} of {} matching skill(s); `skillbox show NAME` shows one.\n",
                results.hits.len(),
                results.matched
            ));
        } else {
            text.push_str(&format!(
                "No skill matches `{}` among {} skill(s); try other words.\n",
                printable(&query),
                catalog.search_index().len()
            ));
        }
        if results.ignored_terms > 0 {
            text.push_str(&format!(
                "note: only the first {} distinct words were searched ({} ignored)\n",
                skillbox_core::search::MAX_QUERY_TERMS,
                results.ignored_terms
            ));
        }
        print_text(&text)?;
    }
    Ok(if found {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
