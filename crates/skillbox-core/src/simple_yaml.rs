//! A fast reader for the plain subset of YAML that nearly all frontmatter is written in: one
//! mapping of `key: value` lines whose values are single-line strings (plain, or quoted without
//! escapes), or a block of such lines indented one level under a key (`metadata:`).
//!
//! Parsing a 500-byte frontmatter with the full YAML parser costs about 100,000 instructions,
//! half of what validating a skill costs in all. This reader builds the same [`YamlNode`] tree
//! (values, positions, spans) for the subset in a few thousand. Anything outside the subset,
//! however harmless (a comment, a number, a list, a continued line, a duplicate key, a tab), makes
//! it answer `None`, and the full parser reads the document, so every error and every corner of
//! YAML keeps the full parser's behaviour. Tests compare both readers on generated documents and
//! on every skill at hand (the corpus written for the tests, the examples, the fixtures).

use indexmap::IndexMap;

use crate::diagnostic::TextPosition;
use crate::yaml::{YamlNode, YamlValue};

/// Plain scalars that YAML (or a lenient number parser) may read as something other than a
/// string; compared without regard to case. Such a value is left to the full parser.
const NON_STRING_WORDS: &[&str] = &[
    "null", "true", "false", "yes", "no", "on", "off", "y", "n", "inf", "infinity", "nan",
];

/// The tree of `source` when it is in the plain subset, else `None` (parse it in full).
/// `line_offset` is added to every line, as [`crate::yaml::parse_document`] does.
pub(crate) fn parse(source: &str, line_offset: u64) -> Option<YamlNode> {
    if !is_plain_text(source) {
        return None;
    }
    let mut lines = Lines::new(source);
    let first = lines.peek_entry()?;
    // The document's mapping starts at its first key; a document that does not start with a key
    // (a blank first line) is left to the full parser.
    if first.start != 0 || first.indent != 0 {
        return None;
    }
    let mut fields: IndexMap<String, YamlNode> = IndexMap::new();
    while let Some(line) = lines.next_entry() {
        if line.indent != 0 {
            return None;
        }
        let entry = parse_entry(&line, line_offset)?;
        let node = match entry.value {
            Some(value) => {
                // A more indented line after a value would continue it.
                if lines.peek_entry().is_some_and(|next| next.indent > 0) {
                    return None;
                }
                value
            }
            None => parse_nested_mapping(&mut lines, line_offset, entry.key_position)?,
        };
        if fields.insert(entry.key, node).is_some() {
            return None;
        }
    }
    Some(YamlNode {
        value: YamlValue::Mapping(fields),
        position: Some(TextPosition {
            line: 1 + line_offset,
            column: 1,
        }),
        raw: None,
        key_position: None,
        byte_span: Some((0, 0)),
    })
}

/// The block of `key: value` lines indented under a key whose value is empty.
fn parse_nested_mapping(
    lines: &mut Lines<'_>,
    line_offset: u64,
    key_position: TextPosition,
) -> Option<YamlNode> {
    let first = lines.peek_entry()?;
    let indent = first.indent;
    if indent == 0 {
        // An empty value (null) is left to the full parser.
        return None;
    }
    let mut fields: IndexMap<String, YamlNode> = IndexMap::new();
    let mut first_key = None;
    while let Some(next) = lines.peek_entry() {
        if next.indent == 0 {
            break;
        }
        if next.indent != indent {
            return None;
        }
        let line = lines.next_entry()?;
        let entry = parse_entry(&line, line_offset)?;
        let value = entry.value?;
        if lines
            .peek_entry()
            .is_some_and(|following| following.indent > indent)
        {
            return None;
        }
        first_key.get_or_insert((entry.key_position, line.start + line.indent));
        if fields.insert(entry.key, value).is_some() {
            return None;
        }
    }
    let (position, offset) = first_key?;
    Some(YamlNode {
        value: YamlValue::Mapping(fields),
        position: Some(position),
        raw: None,
        key_position: Some(key_position),
        byte_span: Some((offset, 0)),
    })
}

/// One line of the document: where it starts, its indentation in spaces, and its text after
/// the indentation.
#[derive(Clone, Copy)]
struct Line<'a> {
    start: usize,
    number: u64,
    indent: usize,
    text: &'a str,
}

/// The lines of a document, skipping empty ones.
struct Lines<'a> {
    source: &'a str,
    position: usize,
    number: u64,
    peeked: Option<Option<Line<'a>>>,
}

impl<'a> Lines<'a> {
    fn new(source: &'a str) -> Self {
        Lines {
            source,
            position: 0,
            number: 0,
            peeked: None,
        }
    }

    /// The next non-empty line, without consuming it.
    fn peek_entry(&mut self) -> Option<Line<'a>> {
        if let Some(peeked) = self.peeked {
            return peeked;
        }
        let line = self.read_entry();
        self.peeked = Some(line);
        line
    }

    /// The next non-empty line.
    fn next_entry(&mut self) -> Option<Line<'a>> {
        match self.peeked.take() {
            Some(peeked) => peeked,
            None => self.read_entry(),
        }
    }

    fn read_entry(&mut self) -> Option<Line<'a>> {
        while self.position < self.source.len() {
            let start = self.position;
            let rest = &self.source[start..];
            let length = rest.find('\n').unwrap_or(rest.len());
            self.position = start + length + 1;
            self.number += 1;
            let line = &rest[..length];
            if line.is_empty() {
                continue;
            }
            let text = line.trim_start_matches(' ');
            return Some(Line {
                start,
                number: self.number,
                indent: line.len() - text.len(),
                text,
            });
        }
        None
    }
}

/// A `key:` line: the key, where it is, and its value when the line has one.
struct Entry {
    key: String,
    key_position: TextPosition,
    value: Option<YamlNode>,
}

fn parse_entry(line: &Line<'_>, line_offset: u64) -> Option<Entry> {
    let colon = line.text.find(':')?;
    let key = &line.text[..colon];
    if !is_simple_key(key) {
        return None;
    }
    let line_number = line.number + line_offset;
    // Columns count characters; the indentation and the key are ASCII.
    let key_column = line.indent as u64 + 1;
    let key_position = TextPosition {
        line: line_number,
        column: key_column,
    };
    let after = &line.text[colon + 1..];
    if after.trim_end_matches(' ').is_empty() {
        return Some(Entry {
            key: key.to_owned(),
            key_position,
            value: None,
        });
    }
    // `key:value` is one plain scalar, not an entry.
    let value_text = after.strip_prefix(' ')?.trim_start_matches(' ');
    let value_start = line.start + line.indent + colon + 1 + (after.len() - value_text.len());
    let (text, token_bytes) = parse_scalar(value_text)?;
    let column = key_column + (colon + 1 + after.len() - value_text.len()) as u64;
    Some(Entry {
        key: key.to_owned(),
        key_position,
        value: Some(YamlNode {
            value: YamlValue::String(text.to_owned()),
            position: Some(TextPosition {
                line: line_number,
                column,
            }),
            raw: None,
            key_position: Some(key_position),
            byte_span: Some((value_start, token_bytes)),
        }),
    })
}

/// A single-line string scalar and the bytes of its token (with quotes), when `text` (the rest
/// of the line) is exactly one such scalar.
fn parse_scalar(text: &str) -> Option<(&str, usize)> {
    let first = text.chars().next()?;
    match first {
        '"' | '\'' => {
            let inner = &text[1..];
            let end = inner.find(first)?;
            let value = &inner[..end];
            let after = &inner[end + 1..];
            // Escapes, doubled quotes and anything after the closing quote (a comment) are
            // left to the full parser.
            if (first == '"' && value.contains('\\')) || !after.trim_end_matches(' ').is_empty() {
                return None;
            }
            Some((value, end + 2))
        }
        _ => {
            if !(first.is_alphabetic() || matches!(first, '_' | '/' | '(' | '$')) {
                return None;
            }
            let value = text.trim_end_matches(' ');
            if value.contains(": ") || value.contains(" #") || value.ends_with(':') {
                return None;
            }
            if NON_STRING_WORDS
                .iter()
                .any(|word| value.eq_ignore_ascii_case(word))
            {
                return None;
            }
            Some((value, value.len()))
        }
    }
}

/// Keys of ASCII letters, digits, `_` and `-`, starting with a letter or `_`, that read as
/// strings.
fn is_simple_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
        && !NON_STRING_WORDS
            .iter()
            .any(|word| key.eq_ignore_ascii_case(word))
}

/// Whether every character is one [`is_plain_character`] accepts; ASCII text is checked a
/// block of bytes at a time.
fn is_plain_text(source: &str) -> bool {
    const BLOCK_BYTES: usize = 16;
    let bytes = source.as_bytes();
    let ascii = bytes.chunks(BLOCK_BYTES).all(|block| {
        block.iter().fold(true, |plain, byte| {
            plain & (*byte == b'\n' || (0x20..0x7F).contains(byte))
        })
    });
    ascii || source.chars().all(is_plain_character)
}

/// Characters this reader accepts anywhere: printable ones without tabs, carriage returns, byte
/// order marks or Unicode line separators, whose handling is left to the full parser.
fn is_plain_character(character: char) -> bool {
    matches!(character,
        '\n'
        | '\u{20}'..='\u{7E}'
        | '\u{A0}'..='\u{2027}'
        | '\u{202A}'..='\u{D7FF}'
        | '\u{E000}'..='\u{FEFE}'
        | '\u{FF00}'..='\u{FFFD}'
        | '\u{10000}'..='\u{10FFFF}')
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use proptest::sample::select;

    use super::parse;
    use crate::yaml::parse_in_full;

    /// When the fast reader answers, its tree is exactly the full parser's (values, positions,
    /// key positions, spans); when the full parser fails, the fast reader must not answer.
    fn assert_agrees(document: &str) -> bool {
        let Some(fast) = parse(document, 1) else {
            return false;
        };
        assert_eq!(
            Ok(fast),
            parse_in_full(document, 1),
            "document:\n{document}"
        );
        true
    }

    #[test]
    fn typical_frontmatter_takes_the_fast_path_with_the_full_parsers_tree() {
        for document in [
            "name: pdf-tools\ndescription: Fill PDF forms. Use when the user's file is a form (not a scan).\n",
            "name: a\ndescription: \"Quoted: with a colon\"\nlicense: 'Apache-2.0'\nmetadata:\n  author: me\n  version: \"1.0\"\ncompatibility: Needs git\n",
            "name_x: äb-c ü\ndescription:   spaced out   \nmetadata:\n    deep: four spaces\n\n    after-blank: yes-ish\nlast: $HOME/x (y)\n",
            "allowed-tools: Read Grep\nmodel: claude-x\n\n\nargument-hint: /path [a|b]\n",
        ] {
            assert!(assert_agrees(document), "not taken:\n{document}");
        }
    }

    #[test]
    fn anything_outside_the_subset_goes_to_the_full_parser() {
        for document in [
            "\nname: a\n",
            "name: a\n# comment\n",
            "name: a # comment\n",
            "version: 1.10\n",
            "flag: true\n",
            "value: Null\n",
            "value: nan\n",
            "empty:\n",
            "empty:\nnext: x\n",
            "name: a\n  continued\n",
            "name: a\n\n  continued after a blank line\n",
            "meta:\n  a: x\n    b: deeper\n",
            "meta:\n    a: x\n  b: shallower\n",
            "meta:\n  nested:\n    a: x\n",
            "list:\n  - a\n",
            "flow: [a, b]\n",
            "name: a\nname: b\n",
            "meta:\n  a: x\n  a: y\n",
            "description: Use when: X\n",
            "key:value\n",
            "escaped: \"a\\nb\"\n",
            "doubled: 'it''s'\n",
            "unclosed: \"abc\n",
            "after: \"abc\" # note\n",
            "tab:\tx\n",
            "crlf: x\r\n",
            "bom: \u{feff}x\n",
            "star: *alias\n",
            "anchor: &a x\n",
            "block: |\n  text\n",
            "\"quoted key\": x\n",
            "true: x\n",
            "---\nname: a\n",
            "name: a\n...\n",
        ] {
            assert!(parse(document, 1).is_none(), "taken:\n{document}");
        }
    }

    fn key() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            15 => select(vec![
                "name", "description", "license", "metadata", "version", "allowed-tools", "x_y",
                "_a", "Author2",
            ]),
            1 => select(vec!["true", "Null", "a b", "a:b", "é", "", "-x", "<<"]),
        ]
    }

    fn separator() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            15 => select(vec![": ", ":  "]),
            1 => select(vec![":", " : ", ":\t"]),
        ]
    }

    fn value() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            12 => select(vec![
                "plain words",
                "Ünïcode wörds — ok",
                "it's fine",
                "C# and F#",
                "http://example.com/x",
                "a: \"quoted\" inside?",
                "\"double: quoted\"",
                "'single # quoted'",
                "\"\"",
                "''",
                "$ARGUMENTS",
                "(x) [y] {z}",
                "/path, with commas",
                "_x",
                "trailing   ",
                "yes-ish",
                "Use when needed.",
            ]),
            1 => select(vec![
                "a: b",
                "a #b",
                "ends:",
                "1.10",
                "007",
                "1e3",
                "true",
                "yes",
                "NaN",
                "~",
                "\"with \\\" escape\"",
                "\"new\\nline\"",
                "'it''s'",
                "\"unclosed",
                "[a, b]",
                "{a: 1}",
                "- item",
                "&anchor x",
                "*alias",
                "!tag x",
                "|",
                ">",
                "%x",
                "@x",
                "`x`",
                "\"a\" trailing",
                "",
            ]),
        ]
    }

    /// One top-level entry: `key: value`, or a key with a block of nested entries.
    fn entry() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => (key(), separator(), value()).prop_map(|(k, s, v)| format!("{k}{s}{v}")),
            1 => (
                key(),
                prop_oneof![4 => Just("  "), 1 => Just("    "), 1 => Just(" ")],
                prop::collection::vec((key(), separator(), value()), 0..4),
            )
                .prop_map(|(k, indent, nested)| {
                    let mut text = format!("{k}:");
                    for (nk, s, v) in nested {
                        text.push_str(&format!("\n{indent}{nk}{s}{v}"));
                    }
                    text
                }),
        ]
    }

    /// Lines that break the subset when slipped in anywhere.
    fn stray_line() -> impl Strategy<Value = &'static str> {
        select(vec![
            "",
            " ",
            "# comment",
            "  continued text",
            "   deeper",
            "- item",
            "---",
            "...",
            "\t",
            "key:\r",
        ])
    }

    /// A document of entries, sometimes with a stray line slipped in.
    fn document() -> impl Strategy<Value = String> {
        (
            prop::collection::vec(entry(), 1..8),
            prop::option::weighted(0.2, (stray_line(), any::<prop::sample::Index>())),
            any::<bool>(),
        )
            .prop_map(|(entries, stray, final_newline)| {
                let mut lines: Vec<&str> =
                    entries.iter().flat_map(|entry| entry.split('\n')).collect();
                if let Some((line, at)) = stray {
                    lines.insert(at.index(lines.len() + 1), line);
                }
                let mut document = lines.join("\n");
                if final_newline {
                    document.push('\n');
                }
                document
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        /// Whenever the fast reader answers, the full parser agrees exactly.
        #[test]
        fn the_fast_reader_never_disagrees_with_the_full_parser(document in document()) {
            if !document.trim().is_empty() {
                assert_agrees(&document);
            }
        }
    }

    /// The property above would hold vacuously if the fast reader never answered: a good share
    /// of the generated documents must take the fast path.
    #[test]
    fn the_generated_documents_often_take_the_fast_path() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let strategy = document();
        let taken = (0..1000)
            .filter(|_| {
                let document = strategy.new_tree(&mut runner).unwrap().current();
                !document.trim().is_empty() && assert_agrees(&document)
            })
            .count();
        assert!(
            taken >= 100,
            "only {taken} of 1000 generated documents took the fast path"
        );
    }

    /// Every skill's frontmatter at hand (the corpus written for the tests, the examples and
    /// the test fixtures): the fast reader agrees with the full parser wherever it answers, and
    /// it answers for most.
    #[test]
    fn the_fast_reader_agrees_on_every_skill_at_hand() {
        let repository = skillbox_testkit::repo_root();
        let corpus = skillbox_testkit::SkillCorpus::write();
        let mut seen = 0;
        let mut fast = 0;
        for root in [
            corpus.root().to_path_buf(),
            repository.join("examples"),
            repository.join("tests/fixtures"),
        ] {
            for entry in walkdir::WalkDir::new(root).into_iter().flatten() {
                let name = entry.file_name().to_string_lossy();
                if !name.eq_ignore_ascii_case("skill.md") {
                    continue;
                }
                let Ok(text) = fs_err::read_to_string(entry.path()) else {
                    continue;
                };
                let Ok(block) = crate::frontmatter::split(&text) else {
                    continue;
                };
                seen += 1;
                if assert_agrees(block.yaml) {
                    fast += 1;
                }
            }
        }
        assert!(seen >= 40, "only {seen} skills found");
        assert!(fast * 2 >= seen, "the fast path took only {fast} of {seen}");
    }
}
