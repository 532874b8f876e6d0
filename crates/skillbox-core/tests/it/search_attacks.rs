//! Attacks on the search index by a hostile catalog: words that are not the query's must never
//! match it, whatever their hash.

use std::collections::HashMap;

use bm25::{DefaultTokenizer, Language, TokenEmbedder, Tokenizer};
use skillbox_core::search::MAX_SEARCH_LIMIT;

use crate::{load, skill_md, write};

/// Two different lower-case words that the index's tokenizer keeps as they are (no stop word,
/// no stemming) and whose 32-bit term hashes are equal: found by a birthday search, which
/// takes about 2^16 words.
fn colliding_words() -> (String, String) {
    let tokenizer = DefaultTokenizer::builder()
        .language_mode(Language::English)
        .normalization(true)
        .stemming(true)
        .stopwords(true)
        .build();
    let mut seen: HashMap<u32, String> = HashMap::new();
    for counter in 0u64.. {
        let mut word = String::from("zq");
        let mut rest = counter;
        for _ in 0..6 {
            word.push(char::from(b'a' + u8::try_from(rest % 26).unwrap()));
            rest /= 26;
        }
        word.push('k');
        if tokenizer.tokenize(&word) != [word.clone()] {
            continue;
        }
        let hash = <u32 as TokenEmbedder>::embed(&word);
        if let Some(earlier) = seen.insert(hash, word.clone()) {
            return (earlier, word);
        }
    }
    unreachable!("the counter never ends")
}

/// A skill that only holds one word of a colliding pair is not found by the other word: the
/// index compares terms, not their hashes. (A catalog author could otherwise capture every
/// search for a word, such as `pdf`, with another word that hashes the same, and large
/// catalogs would match unrelated words by chance.)
#[test]
fn a_word_with_the_same_hash_as_the_query_does_not_match() {
    let (planted, asked) = colliding_words();
    assert_ne!(planted, asked);
    let temp = tempfile::tempdir().unwrap();
    write(
        &temp.path().join("capture-all/SKILL.md"),
        &skill_md("capture-all", &format!("Handles {planted} requests.")),
    );
    write(
        &temp.path().join("honest-tool/SKILL.md"),
        &skill_md("honest-tool", &format!("Works on {asked} files.")),
    );
    let catalog = load(&[temp.path()]);
    let results = catalog
        .search_index()
        .search(&asked, MAX_SEARCH_LIMIT, |_| true)
        .unwrap();
    let names: Vec<&str> = results.hits.iter().map(|hit| hit.skill.name()).collect();
    assert_eq!(
        names,
        ["honest-tool"],
        "`{asked}` found {names:?} (`{planted}` has the same hash)"
    );
    assert_eq!(results.matched, 1);
}

/// Scores of a search for `query` over every skill, by name.
fn scores(catalog: &skillbox_core::SkillCatalog, query: &str) -> HashMap<String, f32> {
    catalog
        .search_index()
        .search(query, MAX_SEARCH_LIMIT, |_| true)
        .unwrap()
        .hits
        .iter()
        .map(|hit| (hit.skill.name().to_owned(), hit.score))
        .collect()
}

/// Saying a word again and again in a field buys no rank: a skill that stuffs `pdf` into its
/// name, description, tool names and body does not outrank one that says it once in each.
/// (BM25 alone lets repetition raise a term's weight up to 2.2 times its weight for a single
/// mention in a field of average length.)
#[test]
fn repeating_a_word_does_not_outrank_saying_it_once() {
    let temp = tempfile::tempdir().unwrap();
    let honest = "---\nname: pdf-convert\ndescription: Converts PDF files to text.\n---\n# PDF\n\nRun the converter on a PDF file.\n";
    let stuffed_words = "PDF ".repeat(40);
    let stuffed = format!(
        "---\nname: pdf-pdf-pdf-pdf-pdf-pdf-pdf-pdf\ndescription: Converts PDF files to text. {stuffed_words}\nargument-hint: \"{stuffed_words}\"\n---\n# PDF\n\n{stuffed_words}\n"
    );
    write(&temp.path().join("pdf-convert/SKILL.md"), honest);
    write(
        &temp.path().join("pdf-pdf-pdf-pdf-pdf-pdf-pdf-pdf/SKILL.md"),
        &stuffed,
    );
    for filler in ["csv-report", "image-resize", "mail-merge", "slide-deck"] {
        write(
            &temp.path().join(format!("{filler}/SKILL.md")),
            &skill_md(
                filler,
                &format!("Works on {filler} tasks, a few words long."),
            ),
        );
    }
    let catalog = load(&[temp.path()]);
    let found = scores(&catalog, "pdf");
    let honest_score = found["pdf-convert"];
    let stuffed_score = found["pdf-pdf-pdf-pdf-pdf-pdf-pdf-pdf"];
    assert!(
        stuffed_score <= honest_score,
        "the stuffed skill scored {stuffed_score}, the honest one {honest_score}"
    );
}
