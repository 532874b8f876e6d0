//! Full-text search over a catalog's skills, so that a model can find a skill the prompt had
//! no room to list (`find_skills`), and a person can find one on the command line.
//!
//! The index holds the copy in effect of every skill ([`SkillCatalog::latest`]) in four fields,
//! each ranked with BM25 by the `bm25` crate and summed with a weight:
//!
//! | field | text | weight |
//! |---|---|---|
//! | name | the name split on `-`, `.`, `_`, and the title of a Skills Protocol skill | [`NAME_WEIGHT`] |
//! | description | the description | [`DESCRIPTION_WEIGHT`] |
//! | details | `argument-hint`, the namespace, the names of the skill's tools | [`DETAILS_WEIGHT`] |
//! | body | the body's first [`crate::loader::BODY_LEAD_BYTES`] bytes | [`BODY_WEIGHT`] |
//!
//! Text is split at every character that is neither a letter nor a digit, then each word goes
//! through the crate's tokenizer: text folded to ASCII
//! (so `résumé` finds `resume`, and Cyrillic or CJK text is searchable in transliteration),
//! lower case, English stop words dropped, Snowball (Porter 2) stemming (`converting` finds
//! `convert`). The index is built once per catalog snapshot, in memory, from text the loader
//! already read: a hot reload makes a new catalog and so a new index.

use std::sync::Arc;

use bm25::{DefaultTokenizer, Language, Tokenizer};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::skill::Skill;

/// Longest query searched, in bytes: a description of a task is a sentence or two.
pub const MAX_QUERY_BYTES: usize = 4 * 1024;
/// Most distinct words of a query that are searched; the rest are reported as ignored.
pub const MAX_QUERY_TERMS: usize = 32;
/// Most hits one search returns.
pub const MAX_SEARCH_LIMIT: usize = 50;
/// Hits returned when no limit is given.
pub const DEFAULT_SEARCH_LIMIT: usize = 5;

/// Weight of a match in the name: a skill named for the task is the best hit.
pub const NAME_WEIGHT: f32 = 3.0;
/// Weight of a match in the description, which says what the skill does and when to use it.
pub const DESCRIPTION_WEIGHT: f32 = 2.0;
/// Weight of a match in the argument hint, namespace or tool names.
pub const DETAILS_WEIGHT: f32 = 1.0;
/// Weight of a match in the start of the body.
pub const BODY_WEIGHT: f32 = 0.5;

/// Most bytes of one field indexed: a spec description is at most 1,024 characters and a
/// name 64, but lenient loading and `argument-hint` (inside 64 KiB of frontmatter) or a long
/// list of tools have no such bound, and a hostile catalog would grow the index with them.
pub const MAX_FIELD_BYTES: usize = 2 * 1024;

/// Fields per skill.
const FIELDS: usize = 4;
const FIELD_WEIGHTS: [f32; FIELDS] = [NAME_WEIGHT, DESCRIPTION_WEIGHT, DETAILS_WEIGHT, BODY_WEIGHT];

/// Why a query cannot be searched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// Nothing but white space.
    #[error(
        "the query is empty: give a few words that describe the task, e.g. \"convert a PDF to text\""
    )]
    EmptyQuery,
    /// Longer than [`MAX_QUERY_BYTES`].
    #[error(
        "the query is {bytes} bytes long and at most {MAX_QUERY_BYTES} are searched: give a few words that describe the task"
    )]
    QueryTooLong {
        /// Bytes given.
        bytes: usize,
    },
    /// No word is left once punctuation, control characters and stop words are dropped.
    #[error(
        "the query has no words to search for (only punctuation, control characters or common words such as \"the\"): give words that describe the task"
    )]
    NoSearchTerms,
    /// The limit is outside `1..=MAX_SEARCH_LIMIT`.
    #[error("the limit must be from 1 to {MAX_SEARCH_LIMIT}, not {limit}")]
    BadLimit {
        /// The limit given.
        limit: usize,
    },
}

/// One skill found.
#[derive(Debug, Clone)]
pub struct SearchHit<'a> {
    /// The skill (the copy in effect).
    pub skill: &'a Arc<Skill>,
    /// Its weighted BM25 score: higher is better; only comparable within one search.
    pub score: f32,
}

impl SearchHit<'_> {
    /// The score to three decimals, as answers show it.
    #[must_use]
    pub fn shown_score(&self) -> f64 {
        (f64::from(self.score) * 1000.0).round() / 1000.0
    }
}

/// What a search found.
#[derive(Debug, Clone)]
pub struct SearchResults<'a> {
    /// The best hits, best first (ties by name), at most the limit asked for.
    pub hits: Vec<SearchHit<'a>>,
    /// How many skills matched at least one word, among those the caller keeps.
    pub matched: usize,
    /// Distinct query words past [`MAX_QUERY_TERMS`] that were not searched.
    pub ignored_terms: usize,
}

/// One posting: a skill holding a term, and the term's weight there (the field weight times
/// BM25's inverse document frequency times its term frequency, saturated and normalised by the
/// field's length; a term counts once per field, see [`SkillIndex::build`]).
#[derive(Debug, Clone, Copy)]
struct Posting {
    skill: u32,
    weight: f32,
}

/// Every field's terms, each with the skills that hold it, by the term's number in the
/// index's [`Vocabulary`].
#[derive(Default)]
struct Postings(Vec<Vec<Posting>>);

/// Distinct terms, each numbered in the order first seen. Terms are compared as text, never by
/// a hash: the crate's embeddings name terms by a 32-bit hash that a catalog author can make
/// collide with any word (so that a skill would match a query for `pdf` without holding it),
/// and that large catalogs collide by chance.
#[derive(Default)]
struct Vocabulary {
    numbers: FxHashMap<Box<str>, u32>,
    terms: Vec<Box<str>>,
}

impl Vocabulary {
    /// The number of `term`, given one if it is new.
    fn number(&mut self, term: String) -> u32 {
        if let Some(number) = self.numbers.get(term.as_str()) {
            return *number;
        }
        let number = u32::try_from(self.terms.len()).unwrap_or(u32::MAX);
        let term = term.into_boxed_str();
        self.numbers.insert(term.clone(), number);
        self.terms.push(term);
        number
    }
}

/// The search index of one catalog snapshot.
///
/// The `bm25` crate finds the words ([`DefaultTokenizer`]: folding, stop words, stemming),
/// which are numbered in a [`Vocabulary`]; each posting carries BM25's weight of the term in that
/// field, computed as the crate's `Embedder` computes it (a test checks they agree) times the
/// crate scorer's inverse document frequency. The crate's own embedder and scorer are not run:
/// the embedder tokenizes each text again and the scorer scans the whole embedding of every
/// skill holding any query word, which took 845 ms to build and 2.8 ms per query over 10,000
/// skills; a memo of each distinct word and posting lists summed into one array take a
/// fraction of that (`BENCHMARKS.md`).
pub struct SkillIndex {
    skills: Vec<Arc<Skill>>,
    /// The number of each term, the position of its postings.
    numbers: FxHashMap<Box<str>, u32>,
    postings: Postings,
    tokenizer: DefaultTokenizer,
}

impl std::fmt::Debug for SkillIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillIndex")
            .field("skills", &self.skills.len())
            .field("terms", &self.postings.0.len())
            .finish_non_exhaustive()
    }
}

/// The terms found for each raw word seen (lower-cased), by their numbers in a [`Vocabulary`],
/// so that each distinct word of a catalog goes through folding, stop words and stemming once.
type TermMemo = FxHashMap<String, Vec<u32>>;

/// The terms of a run of skills, numbered in a vocabulary of their own.
struct TokenizedSkills {
    vocabulary: Vocabulary,
    fields: Vec<[Vec<u32>; FIELDS]>,
}

/// Skills tokenized per parallel job (each job starts an empty [`TermMemo`] and
/// [`Vocabulary`]).
const SKILLS_PER_TOKENIZING_JOB: usize = 1024;

/// BM25's term-frequency saturation, `bm25::Embedder`'s default.
const K1: f32 = 1.2;
/// BM25's length normalisation, `bm25::Embedder`'s default.
const B: f32 = 0.75;

impl SkillIndex {
    /// Index `skills` (each name once: pass the copies in effect). The texts come from memory,
    /// so no file is read; words are found on every core.
    ///
    /// A term counts once in a field however often it is written there (the field's length
    /// still counts every word): with BM25's own term frequency, a skill that wrote `pdf` forty
    /// times in each field scored 1.8 times one that said it once in each, so a catalog could
    /// buy rank by stuffing words; name and description are a few words, where repeating one
    /// says nothing more.
    #[must_use]
    pub fn build<'a>(skills: impl IntoIterator<Item = &'a Arc<Skill>>) -> Self {
        let skills: Vec<Arc<Skill>> = skills.into_iter().cloned().collect();
        let tokenizer = word_finder();
        // Long stretches per job, so that each memo sees most of the vocabulary.
        let jobs: Vec<TokenizedSkills> = skills
            .par_chunks(SKILLS_PER_TOKENIZING_JOB)
            .map(|chunk| {
                let mut memo = TermMemo::default();
                let mut vocabulary = Vocabulary::default();
                let fields = chunk
                    .iter()
                    .map(|skill| {
                        field_texts(skill)
                            .map(|text| terms_of(&tokenizer, &text, &mut memo, &mut vocabulary))
                    })
                    .collect();
                TokenizedSkills { vocabulary, fields }
            })
            .collect();
        // Each job's numbers, renumbered in one vocabulary.
        let mut vocabulary = Vocabulary::default();
        let mut terms: Vec<[Vec<u32>; FIELDS]> = Vec::with_capacity(skills.len());
        for job in jobs {
            let renumbered: Vec<u32> = job
                .vocabulary
                .terms
                .into_iter()
                .map(|term| vocabulary.number(term.into_string()))
                .collect();
            for mut fields in job.fields {
                for term in fields.iter_mut().flatten() {
                    *term = renumbered
                        .get(usize::try_from(*term).unwrap_or(usize::MAX))
                        .copied()
                        .unwrap_or(u32::MAX);
                }
                terms.push(fields);
            }
        }
        let mut postings = Postings(vec![Vec::new(); vocabulary.terms.len()]);
        let skills_total = terms.len() as f32;
        for (field, field_weight) in FIELD_WEIGHTS.iter().enumerate() {
            let total: usize = terms.iter().map(|fields| fields[field].len()).sum();
            let average_length = (total as f32 / skills_total.max(1.0)).max(1.0);
            let mut field_postings: Vec<Vec<Posting>> = vec![Vec::new(); vocabulary.terms.len()];
            let mut sorted = Vec::new();
            for (position, fields) in terms.iter().enumerate() {
                let skill = document_id(position);
                let length = fields[field].len() as f32;
                sorted.clear();
                sorted.extend_from_slice(&fields[field]);
                sorted.sort_unstable();
                // Each term once, however often the field says it: repeating a word buys no
                // rank, and the words repeated still count in the field's length.
                sorted.dedup();
                let weight = saturated_frequency(1.0, length, average_length);
                for term in &sorted {
                    if let Some(list) = usize::try_from(*term)
                        .ok()
                        .and_then(|term| field_postings.get_mut(term))
                    {
                        list.push(Posting { skill, weight });
                    }
                }
            }
            for (held, mut list) in postings.0.iter_mut().zip(field_postings) {
                let rarity = inverse_document_frequency(skills_total, list.len() as f32);
                for posting in &mut list {
                    posting.weight *= rarity * field_weight;
                }
                held.append(&mut list);
            }
        }
        SkillIndex {
            skills,
            numbers: vocabulary.numbers,
            postings,
            tokenizer,
        }
    }

    /// Skills indexed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// Whether no skill is indexed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The `limit` skills that best match `query`, among those `keep` accepts (a model's
    /// search keeps only the skills it may see).
    ///
    /// # Errors
    /// A [`SearchError`] for an empty, too long or wordless query, or a limit out of range.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        keep: impl Fn(&Skill) -> bool,
    ) -> Result<SearchResults<'_>, SearchError> {
        if !(1..=MAX_SEARCH_LIMIT).contains(&limit) {
            return Err(SearchError::BadLimit { limit });
        }
        if query.len() > MAX_QUERY_BYTES {
            return Err(SearchError::QueryTooLong { bytes: query.len() });
        }
        if query.trim().is_empty() {
            return Err(SearchError::EmptyQuery);
        }
        // The query's distinct terms, in the order first written.
        let mut words = Vocabulary::default();
        terms_of(&self.tokenizer, query, &mut TermMemo::default(), &mut words);
        let mut words = words.terms;
        if words.is_empty() {
            return Err(SearchError::NoSearchTerms);
        }
        let ignored_terms = words.len().saturating_sub(MAX_QUERY_TERMS);
        words.truncate(MAX_QUERY_TERMS);
        let mut scores = vec![0f32; self.skills.len()];
        let mut touched = Vec::new();
        for word in &words {
            let held = self
                .numbers
                .get(word)
                .and_then(|number| usize::try_from(*number).ok())
                .and_then(|number| self.postings.0.get(number));
            for posting in held.into_iter().flatten() {
                let Some(score) = usize::try_from(posting.skill)
                    .ok()
                    .and_then(|position| scores.get_mut(position))
                else {
                    continue;
                };
                if *score == 0.0 {
                    touched.push(posting.skill);
                }
                *score += posting.weight;
            }
        }
        let mut hits: Vec<SearchHit<'_>> = touched
            .into_iter()
            .filter_map(|id| {
                let position = usize::try_from(id).ok()?;
                let skill = self.skills.get(position)?;
                keep(skill).then_some(SearchHit {
                    skill,
                    score: scores[position],
                })
            })
            .collect();
        let matched = hits.len();
        let best_first = |left: &SearchHit<'_>, right: &SearchHit<'_>| {
            right
                .score
                .total_cmp(&left.score)
                .then_with(|| left.skill.name().cmp(right.skill.name()))
        };
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, best_first);
            hits.truncate(limit);
        }
        hits.sort_by(best_first);
        Ok(SearchResults {
            hits,
            matched,
            ignored_terms,
        })
    }
}

/// The crate's tokenizer, set for English: ASCII folding, stop words, stemming.
fn word_finder() -> DefaultTokenizer {
    DefaultTokenizer::builder()
        .language_mode(Language::English)
        .normalization(true)
        .stemming(true)
        .stopwords(true)
        .build()
}

/// The terms of `text`, by their numbers in `vocabulary`: split at every character that is
/// neither a letter nor a digit (so a name's `-`, `.`, `_` parts, `snake_case` and `file.txt`
/// are found part by part, and control characters are only separators), lower-cased, then
/// once per distinct word (`memo`) through the crate's tokenizer.
fn terms_of(
    tokenizer: &DefaultTokenizer,
    text: &str,
    memo: &mut TermMemo,
    vocabulary: &mut Vocabulary,
) -> Vec<u32> {
    let mut terms = Vec::new();
    let mut lower = String::new();
    for raw in text.split(|c: char| !c.is_alphanumeric()) {
        if raw.is_empty() {
            continue;
        }
        lower.clear();
        lower.extend(raw.chars().flat_map(char::to_lowercase));
        match memo.get(lower.as_str()) {
            Some(found) => terms.extend_from_slice(found),
            None => {
                let found: Vec<u32> = tokenizer
                    .tokenize(&lower)
                    .into_iter()
                    .map(|word| vocabulary.number(word))
                    .collect();
                terms.extend_from_slice(&found);
                memo.insert(lower.clone(), found);
            }
        }
    }
    terms
}

/// BM25's weight of a term found `frequency` times in a field of `length` terms, where fields
/// average `average_length`: what `bm25::Embedder` gives each term of a text.
fn saturated_frequency(frequency: f32, length: f32, average_length: f32) -> f32 {
    frequency * (K1 + 1.0) / (frequency + K1 * (1.0 - B + B * length / average_length))
}

/// BM25's inverse document frequency of a term held by `holding` of `total` skills, as the
/// `bm25` crate's scorer computes it.
fn inverse_document_frequency(total: f32, holding: f32) -> f32 {
    (1.0 + (total - holding + 0.5) / (holding + 0.5)).ln()
}

/// The four texts of a skill, in the order of [`FIELD_WEIGHTS`].
fn field_texts(skill: &Skill) -> [String; FIELDS] {
    let mut name = skill.name().replace('-', " ");
    if let Some(title) = &skill.title {
        name.push(' ');
        name.push_str(title);
    }
    let mut details = String::new();
    if let Some(hint) = &skill.properties.argument_hint {
        details.push_str(hint);
    }
    let namespace = skill.namespace();
    if namespace != skill.name() {
        details.push(' ');
        details.push_str(namespace);
    }
    for tool in &skill.tools {
        details.push(' ');
        details.push_str(&tool.name);
    }
    [
        name,
        skill.description.clone(),
        details,
        skill.body_lead().to_owned(),
    ]
    .map(|mut text| {
        crate::text::cut_at(&mut text, MAX_FIELD_BYTES);
        text
    })
}

/// A skill's position as the scorer's document id (a catalog never holds 4 billion skills).
fn document_id(position: usize) -> u32 {
    u32::try_from(position).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use bm25::{EmbedderBuilder, Tokenizer};

    use super::{B, K1, saturated_frequency};

    /// Text already split into words, one space apart.
    #[derive(Default)]
    struct Spaced;

    impl Tokenizer for Spaced {
        fn tokenize(&self, input_text: &str) -> Vec<String> {
            input_text.split(' ').map(str::to_owned).collect()
        }
    }

    /// The weights the index computes are the ones `bm25::Embedder` gives the same terms.
    #[test]
    fn term_weights_agree_with_the_crate_embedder() {
        let average_length = 3.5;
        let embedder = EmbedderBuilder::<u32, Spaced>::with_avgdl(average_length)
            .k1(K1)
            .b(B)
            .build();
        let text = "gif gif slack make gif animate";
        let embedding = embedder.embed(text);
        let length = 6.0;
        for (word, frequency) in [("gif", 3.0), ("slack", 1.0), ("animate", 1.0)] {
            let index = <u32 as bm25::TokenEmbedder>::embed(word);
            let crate_weight = embedding
                .0
                .iter()
                .find(|term| term.index == index)
                .unwrap()
                .value;
            let ours = saturated_frequency(frequency, length, average_length);
            assert!(
                (crate_weight - ours).abs() < 1e-6,
                "{word}: {crate_weight} != {ours}"
            );
        }
    }
}
