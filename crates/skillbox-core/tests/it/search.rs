//! The search index over a catalog: ranking by field, stemming, name parts, hidden skills,
//! reloads, and every kind of bad query (empty, huge, control characters, other scripts).

use skillbox_core::search::{MAX_QUERY_BYTES, MAX_SEARCH_LIMIT, SearchError};
use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot};

use crate::{load, skill_md, write};

/// A catalog of a few skills whose words overlap in different fields.
fn library() -> (tempfile::TempDir, SkillCatalog) {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path();
    write(
        &root.join("slack-gif-creator/SKILL.md"),
        &skill_md(
            "slack-gif-creator",
            "Make animated GIFs sized for Slack reactions.",
        ),
    );
    write(
        &root.join("image-resizer/SKILL.md"),
        "---\nname: image-resizer\ndescription: Resize pictures.\nargument-hint: \"[width] [height]\"\n---\n# Resizer\n\nAlso handles GIF files and converting them to PNG.\n",
    );
    write(
        &root.join("pdf_tools/SKILL.md"),
        "---\nname: pdf_tools\ndescription: Extract text and tables from PDF documents.\n---\nBody.\n",
    );
    write(
        &root.join("meeting-notes/SKILL.md"),
        &skill_md(
            "meeting-notes",
            "Summarise meeting transcripts into decisions and actions. Пишет протокол встречи. 会议纪要",
        ),
    );
    write(
        &root.join("secret-deploy/SKILL.md"),
        "---\nname: secret-deploy\ndescription: Deploy GIF servers to production.\ndisable-model-invocation: true\n---\nBody.\n",
    );
    let catalog = load(&[root]);
    (temp, catalog)
}

fn names(catalog: &SkillCatalog, query: &str) -> Vec<String> {
    catalog
        .search_index()
        .search(query, MAX_SEARCH_LIMIT, |_| true)
        .unwrap()
        .hits
        .iter()
        .map(|hit| hit.skill.name().to_owned())
        .collect()
}

#[test]
fn a_match_in_the_name_and_description_outranks_one_in_the_body() {
    let (_temp, catalog) = library();
    let results = catalog
        .search_index()
        .search("animated gif", 5, |_| true)
        .unwrap();
    let ranked: Vec<&str> = results.hits.iter().map(|hit| hit.skill.name()).collect();
    assert_eq!(
        ranked,
        ["slack-gif-creator", "secret-deploy", "image-resizer"]
    );
    assert!(results.hits[0].score > results.hits[1].score);
    assert_eq!(results.matched, 3);
    assert_eq!(results.ignored_terms, 0);
}

#[test]
fn stemming_and_name_parts_find_skills_in_other_word_forms() {
    let (_temp, catalog) = library();
    // `extracting` is stemmed to `extract`; `pdf_tools` is split at `_`; `resizing` finds
    // `resizer` only through the name, which is split at `-`.
    assert_eq!(names(&catalog, "extracting tables")[0], "pdf_tools");
    assert_eq!(names(&catalog, "tools")[0], "pdf_tools");
    assert_eq!(names(&catalog, "IMAGE")[0], "image-resizer");
    // The argument hint is searched too.
    assert_eq!(names(&catalog, "width")[0], "image-resizer");
}

#[test]
fn the_caller_decides_which_skills_may_be_returned() {
    let (_temp, catalog) = library();
    let visible = catalog
        .search_index()
        .search("deploy gif servers", 5, |skill| skill.visible_to_model())
        .unwrap();
    let ranked: Vec<&str> = visible.hits.iter().map(|hit| hit.skill.name()).collect();
    assert!(!ranked.contains(&"secret-deploy"), "{ranked:?}");
    assert!(!ranked.is_empty());
    assert_eq!(names(&catalog, "deploy gif servers")[0], "secret-deploy");
}

#[test]
fn queries_in_other_scripts_find_text_in_those_scripts() {
    let (_temp, catalog) = library();
    assert_eq!(names(&catalog, "протокол встречи"), ["meeting-notes"]);
    assert_eq!(names(&catalog, "会议"), ["meeting-notes"]);
    // A script no skill is written in finds nothing, without an error.
    let none = catalog
        .search_index()
        .search("ελληνικά", 5, |_| true)
        .unwrap();
    assert!(none.hits.is_empty());
    assert_eq!(none.matched, 0);
}

#[test]
fn bad_queries_get_errors_that_say_what_to_do() {
    let (_temp, catalog) = library();
    let index = catalog.search_index();
    let error = |query: &str, limit: usize| index.search(query, limit, |_| true).unwrap_err();
    assert_eq!(error("", 5), SearchError::EmptyQuery);
    assert_eq!(error(" \t\n ", 5), SearchError::EmptyQuery);
    assert_eq!(error("the and of", 5), SearchError::NoSearchTerms);
    assert_eq!(
        error("\u{0}\u{7}\u{1b}\u{7f}\u{9b}", 5),
        SearchError::NoSearchTerms
    );
    // A terminal escape leaves a word (`31m`) that matches nothing: no hits, no error.
    assert!(
        index
            .search("\u{1b}[31m", 5, |_| true)
            .unwrap()
            .hits
            .is_empty()
    );
    let huge = "gif ".repeat(25_600);
    assert_eq!(
        error(&huge, 5),
        SearchError::QueryTooLong { bytes: 102_400 }
    );
    assert_eq!(error("gif", 0), SearchError::BadLimit { limit: 0 });
    assert_eq!(
        error("gif", MAX_SEARCH_LIMIT + 1),
        SearchError::BadLimit {
            limit: MAX_SEARCH_LIMIT + 1
        }
    );
    for message in [
        SearchError::EmptyQuery.to_string(),
        SearchError::QueryTooLong { bytes: 102_400 }.to_string(),
        SearchError::NoSearchTerms.to_string(),
    ] {
        assert!(
            message.contains("words that describe the task"),
            "{message}"
        );
    }
    assert!(
        error(&huge, 5)
            .to_string()
            .contains(&MAX_QUERY_BYTES.to_string())
    );
}

#[test]
fn control_characters_inside_a_query_only_separate_words() {
    let (_temp, catalog) = library();
    assert_eq!(names(&catalog, "\u{0}pdf\u{7}tables\u{1b}")[0], "pdf_tools");
}

#[test]
fn words_past_the_term_limit_are_counted_as_ignored() {
    let (_temp, catalog) = library();
    let words: Vec<String> = (0..40).map(|n| format!("word{n}x")).collect();
    let query = format!("{} gif", words.join(" "));
    let results = catalog.search_index().search(&query, 5, |_| true).unwrap();
    // 41 distinct terms, 32 searched: `gif` (the last) is among the ignored.
    assert_eq!(results.ignored_terms, 9);
    assert!(results.hits.is_empty());
    let repeated = format!("{} gif", "pdf ".repeat(500));
    let results = catalog
        .search_index()
        .search(&repeated, 5, |_| true)
        .unwrap();
    assert_eq!(results.ignored_terms, 0);
    assert_eq!(results.hits[0].skill.name(), "pdf_tools");
}

#[test]
fn a_reloaded_catalog_searches_the_new_texts() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path();
    write(
        &root.join("notes/SKILL.md"),
        &skill_md("notes", "Keep meeting notes."),
    );
    let options = CatalogOptions {
        roots: vec![SkillRoot::explicit(root)],
        ..CatalogOptions::default()
    };
    let first = SkillCatalog::load(&options).unwrap();
    assert_eq!(names(&first, "meeting"), ["notes"]);
    write(
        &root.join("notes/SKILL.md"),
        &skill_md("notes", "Draft release announcements."),
    );
    let second = SkillCatalog::reload(&options, &first).unwrap();
    assert!(names(&second, "meeting").is_empty());
    assert_eq!(names(&second, "announcement"), ["notes"]);
    // The first snapshot keeps its own index.
    assert_eq!(names(&first, "meeting"), ["notes"]);
}

#[test]
fn an_empty_catalog_finds_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let catalog = load(&[temp.path()]);
    let results = catalog.search_index().search("gif", 5, |_| true).unwrap();
    assert!(results.hits.is_empty());
    assert!(catalog.search_index().is_empty());
}

#[test]
fn only_the_first_part_of_a_long_field_is_indexed() {
    let temp = tempfile::tempdir().unwrap();
    let filler: String = (0..6_000).map(|n| format!("filler{n} ")).collect();
    write(
        &temp.path().join("long-hint/SKILL.md"),
        &format!(
            "---\nname: long-hint\ndescription: A skill.\nargument-hint: \"firstword {filler} lastword\"\n---\nBody.\n"
        ),
    );
    let catalog = load(&[temp.path()]);
    assert_eq!(names(&catalog, "firstword"), ["long-hint"]);
    assert!(names(&catalog, "lastword").is_empty());
    assert!(names(&catalog, "filler5999").is_empty());
}
