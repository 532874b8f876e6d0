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
