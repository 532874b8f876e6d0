//! Property tests for the frontmatter parser and the manifest parsers: no input panics or hangs
//! (arbitrary bytes, invalid UTF-8, alias bombs, deep nesting), well-formed frontmatter
//! round-trips, `split` finds the right delimiters, and diagnostics point inside the file.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::FileFailurePersistence;
use skillbox_core::diagnostic::{Diagnostic, DiagnosticCode};
use skillbox_core::frontmatter::{FrontmatterSplitError, ParsedFrontmatter, parse_head, split};
use skillbox_core::limits::MAX_FRONTMATTER_BYTES;
use skillbox_core::properties::{PropertiesContext, ValidationMode, interpret};
use skillbox_core::skill_toml::parse_skill_manifest;
use skillbox_core::tools_json::parse_tools_manifest;
use skillbox_core::yaml::{YamlNode, YamlValue};

/// Generous bound for one small input; parsing one takes microseconds, so only a hang trips it.
const PER_INPUT: Duration = Duration::from_secs(2);

// ---------------------------------------------------------------------------------------------
// Shared checks

/// Lines of a text as positions count them: one more than its line breaks, which are `\n`,
/// `\r\n` and (for YAML, whose positions the diagnostics carry) a lone `\r`.
fn line_count(bytes: &[u8]) -> u64 {
    let breaks = bytes
        .iter()
        .enumerate()
        .filter(|(index, byte)| {
            **byte == b'\n' || (**byte == b'\r' && bytes.get(index + 1) != Some(&b'\n'))
        })
        .count();
    breaks as u64 + 1
}

fn check_diagnostic(diagnostic: &Diagnostic, lines: u64) -> Result<(), TestCaseError> {
    check_diagnostic_columns_from(diagnostic, lines, 1)
}

/// Like [`check_diagnostic`], with the smallest column accepted.
fn check_diagnostic_columns_from(
    diagnostic: &Diagnostic,
    lines: u64,
    first_column: u64,
) -> Result<(), TestCaseError> {
    prop_assert!(
        !diagnostic.message.trim().is_empty(),
        "empty message: {diagnostic:?}"
    );
    if let Some(line) = diagnostic.line {
        prop_assert!(
            (1..=lines + 1).contains(&line),
            "line {line} outside a text of {lines} lines: {diagnostic:?}"
        );
    }
    if let Some(column) = diagnostic.column {
        prop_assert!(
            column >= first_column,
            "column {column} is not {first_column}-based: {diagnostic:?}"
        );
    }
    Ok(())
}

/// Every node's line lies within `first..=last`.
fn check_node_lines(node: &YamlNode, first: u64, last: u64) -> Result<(), TestCaseError> {
    for position in [node.position, node.key_position].into_iter().flatten() {
        prop_assert!(
            (first..=last).contains(&position.line),
            "node at line {} outside the frontmatter (lines {first}..={last}): {node:?}",
            position.line
        );
        prop_assert!(position.column >= 1, "node at column 0: {node:?}");
    }
    match &node.value {
        YamlValue::Sequence(items) => {
            for item in items {
                check_node_lines(item, first, last)?;
            }
        }
        YamlValue::Mapping(entries) => {
            for item in entries.values() {
                check_node_lines(item, first, last)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The text `parse_head` decodes: the bytes, or for a truncated head the valid prefix when only
/// an incomplete character at the end is wrong.
fn decoded(head: &[u8], truncated: bool) -> Option<&str> {
    match std::str::from_utf8(head) {
        Ok(text) => Some(text),
        Err(error) if truncated && error.error_len().is_none() => {
            std::str::from_utf8(&head[..error.valid_up_to()]).ok()
        }
        Err(_) => None,
    }
}

/// Run `parse_head` and `interpret` on one head and check everything that must hold whatever
/// the input: no panic, non-empty messages, positions inside the file, the body offset after a
/// closing delimiter line, and a bounded time.
fn check_head(head: &[u8], truncated: bool) -> Result<Option<ParsedFrontmatter>, TestCaseError> {
    let started = Instant::now();
    let outcome = parse_head(head, truncated, MAX_FRONTMATTER_BYTES);
    let lines = line_count(head);
    let parsed = match outcome {
        Err(diagnostic) => {
            check_diagnostic(&diagnostic, lines)?;
            prop_assert!(diagnostic.is_error(), "{diagnostic:?}");
            None
        }
        Ok(parsed) => {
            let text = decoded(head, truncated);
            prop_assert!(text.is_some(), "accepted bytes that are not UTF-8");
            let text = text.unwrap_or_default();
            let body_offset = usize::try_from(parsed.body_offset)
                .map_err(|_| TestCaseError::fail("body offset beyond usize"))?;
            prop_assert!(body_offset <= text.len());
            prop_assert!(text.is_char_boundary(body_offset));
            // The text before the body ends with the closing `---` line.
            let before = text[..body_offset]
                .strip_suffix('\n')
                .unwrap_or(&text[..body_offset]);
            let before = before.strip_suffix('\r').unwrap_or(before);
            let closing = before.rsplit('\n').next().unwrap_or(before);
            prop_assert_eq!(closing.trim_end(), "---");
            let closing_line = line_count(before.as_bytes());
            for node in parsed.fields.values() {
                check_node_lines(node, 2, closing_line)?;
            }
            for mode in [ValidationMode::Lenient, ValidationMode::Strict] {
                for has_skill_manifest in [false, true] {
                    let context = PropertiesContext {
                        directory_name: Some("some-skill"),
                        has_skill_manifest,
                        mode,
                    };
                    let (_, diagnostics) = interpret(&parsed.fields, context);
                    for diagnostic in &diagnostics {
                        check_diagnostic(diagnostic, lines)?;
                    }
                }
            }
            Some(parsed)
        }
    };
    prop_assert!(
        started.elapsed() < PER_INPUT,
        "parsing {} bytes took {:?}",
        head.len(),
        started.elapsed()
    );
    Ok(parsed)
}

// ---------------------------------------------------------------------------------------------
// Strategies for hostile input

/// Pieces that YAML, the delimiter search and the UTF-8 check care about, including invalid and
/// cut UTF-8 sequences, a BOM, NUL and lone carriage returns.
const HEAD_TOKENS: &[&[u8]] = &[
    b"---",
    b"--- ",
    b"\n",
    b"\n",
    b"\n",
    b"\r\n",
    b"\r",
    b" ",
    b"  ",
    b"\t",
    b"a",
    b"x y",
    b"name",
    b"description",
    b"metadata",
    b"files",
    b"allowed-tools",
    b"required_environment_variables",
    b"user-invocable",
    b"path",
    b":",
    b": ",
    b"- ",
    b"-",
    b"[",
    b"]",
    b"{",
    b"}",
    b", ",
    b"&a ",
    b"*a",
    b"&b ",
    b"*b",
    b"<<: ",
    b"'",
    b"\"",
    b"\\",
    b"\\u12",
    b"#",
    b" # c",
    b"|",
    b"|-",
    b">",
    b"!",
    b"!!str ",
    b"!!binary ",
    b"? ",
    b"%YAML 1.2",
    b"...",
    b"1.10",
    b"0x1F",
    b"true",
    b"null",
    b"~",
    b"\xc3\xa9",
    b"\xe6\x97\xa5",
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"\xef\xbb\xbf",
    b"\x00",
    b"\xe2\x80\xa8",
];

const HEAD_PREFIXES: &[&[u8]] = &[
    b"",
    b"---\n",
    b"---\n",
    b"---\n",
    b"---\r\n",
    b"\xef\xbb\xbf---\n",
    b"--- \n",
    b"---\nname: a\ndescription: b\n",
];

const HEAD_SUFFIXES: &[&[u8]] = &[
    b"",
    b"\n---\n",
    b"\n---\n",
    b"\n---",
    b"\n---\r\n# Body\n---\n",
    b"\n--- \nbody \xff",
];

fn tokens_to_bytes(prefix: &[u8], tokens: &[&[u8]], suffix: &[u8]) -> Vec<u8> {
    let mut bytes = prefix.to_vec();
    for token in tokens {
        bytes.extend_from_slice(token);
    }
    bytes.extend_from_slice(suffix);
    bytes
}

/// Heads that mostly get past the delimiter search, so the YAML parser sees hostile input.
fn yamlish_head() -> impl Strategy<Value = Vec<u8>> {
    (
        select(HEAD_PREFIXES),
        prop::collection::vec(select(HEAD_TOKENS), 0..64),
        select(HEAD_SUFFIXES),
    )
        .prop_map(|(prefix, tokens, suffix)| tokens_to_bytes(prefix, &tokens, suffix))
}

fn any_head() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..512),
        prop::collection::vec(any::<u8>(), 0..64).prop_map(|mut bytes| {
            let mut head = b"---\n".to_vec();
            head.append(&mut bytes);
            head.extend_from_slice(b"\n---\n");
            head
        }),
        yamlish_head(),
        yamlish_head(),
    ]
}

// ---------------------------------------------------------------------------------------------
// Strategies for well-formed frontmatter

/// How a generated value is written in YAML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

/// Characters YAML allows unescaped (its `c-printable` set), less the ones YAML 1.1 read as
/// line breaks and the BOM, which stay escaped.
fn is_yaml_printable(c: char) -> bool {
    let printable = matches!(
        c,
        '\u{20}'..='\u{7e}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..
    );
    printable && !matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}')
}

/// A plain scalar that YAML keeps as written: it starts with a letter or digit, has no `: `,
/// ` #`, flow indicators or quotes, and no space at either end.
fn is_safe_plain(value: &str) -> bool {
    let mut chars = value.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " _.()/+-".contains(c))
        && !value.ends_with(' ')
        && !value.contains("  ")
}

fn double_quoted(value: &str) -> String {
    let mut quoted = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            '\0' => quoted.push_str("\\0"),
            c if is_yaml_printable(c) => quoted.push(c),
            c if u32::from(c) <= 0xffff => quoted.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => quoted.push_str(&format!("\\U{:08X}", u32::from(c))),
        }
    }
    quoted.push('"');
    quoted
}

/// The style actually used: the requested one when it can express the value, else double quotes.
fn usable_style(value: &str, style: Style) -> Style {
    let usable = match style {
        Style::Plain => is_safe_plain(value),
        Style::Single => value.chars().all(is_yaml_printable),
        Style::Literal => {
            !value.ends_with('\n') && value.chars().all(|c| c == '\n' || is_yaml_printable(c))
        }
        Style::Double => true,
    };
    if usable { style } else { Style::Double }
}

/// `value` written as the YAML value of a key indented by `indent` spaces.
fn render_value(value: &str, style: Style, indent: usize, newline: &str) -> String {
    match usable_style(value, style) {
        Style::Plain => value.to_owned(),
        Style::Single => format!("'{}'", value.replace('\'', "''")),
        Style::Double => double_quoted(value),
        Style::Literal => {
            // An explicit indentation indicator, so leading spaces in the value stay content.
            let prefix = " ".repeat(indent + 2);
            let mut block = String::from("|2-");
            for line in value.split('\n') {
                block.push_str(newline);
                block.push_str(&prefix);
                block.push_str(line);
            }
            block
        }
    }
}

/// Text pieces chosen to trip quoting and delimiter handling.
const VALUE_PIECES: &[&str] = &[
    "---",
    "--- ",
    "...",
    ": ",
    " #",
    "#",
    "'",
    "\"",
    "\\",
    "\t",
    "\n",
    "\r",
    "\0",
    "\u{1b}",
    "\u{85}",
    "\u{feff}",
    "\u{2028}",
    "\u{fffe}",
    "é",
    "日本語",
    "😀",
    "*a",
    "&a",
    "[",
    "]",
    "{",
    "}",
    "|",
    ">",
    "%",
    "@",
    "`",
    "!",
    "?",
    "- ",
    " ",
    "text",
    "Use when",
    "1.10",
    "true",
    "null",
];

fn value_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,40}",
        "[a-zA-Z0-9][a-zA-Z0-9 _.()/+-]{0,30}[a-zA-Z0-9._)]",
        prop::collection::vec(select(VALUE_PIECES), 0..8).prop_map(|pieces| pieces.concat()),
        prop::collection::vec("[ -~]{0,12}", 1..5).prop_map(|lines| lines.join("\n")),
        select(
            &[
                "1.10", "1.0", "2.0", "007", "-1", "1e3", "0x1F", "0o17", "true", "false", "True",
                "null", "Null", "NULL", "yes", "on", "12:30", "1_000", ".5",
            ][..]
        )
        .prop_map(str::to_owned),
    ]
}

fn style() -> impl Strategy<Value = Style> {
    select(&[Style::Plain, Style::Single, Style::Double, Style::Literal][..])
}

fn skill_name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9]{0,10}(-[a-z0-9]{1,8}){0,3}".prop_filter("a YAML null", |name| name != "null")
}

fn body_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        select(
            &[
                "---\n",
                "--- \n",
                "---",
                "# Title\n",
                "text",
                " ",
                "\n",
                "\r\n",
                "name: other\n",
                "...\n",
                "é",
            ][..],
        ),
        0..12,
    )
    .prop_map(|pieces| pieces.concat())
}

/// A generated `SKILL.md` with what it was generated from.
#[derive(Debug, Clone)]
struct Generated {
    name: String,
    description: String,
    metadata: BTreeMap<String, String>,
    text: String,
    /// The YAML between the delimiters.
    yaml: String,
    body: String,
}

/// A YAML-null plain scalar (the core schema's spellings).
fn is_null_word(value: &str) -> bool {
    matches!(value, "null" | "Null" | "NULL")
}

fn generated_skill() -> impl Strategy<Value = Generated> {
    (
        (skill_name(), style()),
        (value_text(), style()),
        prop::collection::btree_map("[a-z][a-z0-9_]{0,8}", (value_text(), style()), 0..5),
        body_text(),
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        select(&["---", "--- ", "---\t"][..]),
    )
        .prop_map(
            |(
                (name, name_style),
                (description, description_style),
                metadata,
                body,
                (crlf, bom, comments, bare_closing),
                closing,
            )| {
                let newline = if crlf { "\r\n" } else { "\n" };
                let comment = |style: Style| {
                    if comments && style != Style::Literal {
                        " # a comment: with --- in it"
                    } else {
                        ""
                    }
                };
                let mut yaml = String::new();
                yaml.push_str("name: ");
                yaml.push_str(&render_value(&name, name_style, 0, newline));
                yaml.push_str(comment(usable_style(&name, name_style)));
                yaml.push_str(newline);
                yaml.push_str("description: ");
                yaml.push_str(&render_value(&description, description_style, 0, newline));
                yaml.push_str(comment(usable_style(&description, description_style)));
                yaml.push_str(newline);
                if !metadata.is_empty() {
                    yaml.push_str("metadata:");
                    yaml.push_str(newline);
                    for (key, (value, style)) in &metadata {
                        yaml.push_str("  ");
                        yaml.push_str(key);
                        yaml.push_str(": ");
                        yaml.push_str(&render_value(value, *style, 2, newline));
                        yaml.push_str(comment(usable_style(value, *style)));
                        yaml.push_str(newline);
                    }
                }
                let mut text = String::new();
                if bom {
                    text.push('\u{feff}');
                }
                text.push_str("---");
                text.push_str(newline);
                text.push_str(&yaml);
                text.push_str(closing);
                // A closing line at the very end of the file may lack its newline.
                if !(body.is_empty() && bare_closing) {
                    text.push_str(newline);
                }
                text.push_str(&body);
                let metadata = metadata
                    .into_iter()
                    .map(|(key, (value, _))| (key, value))
                    .collect();
                Generated {
                    name,
                    description,
                    metadata,
                    text,
                    yaml,
                    body,
                }
            },
        )
}

fn mapping(node: &YamlNode) -> Option<&indexmap::IndexMap<String, YamlNode>> {
    match &node.value {
        YamlValue::Mapping(entries) => Some(entries),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// A reference model of `split`, line by line

/// Where the first line after an optional BOM is `---` and the next such line, by a plain scan.
fn reference_split(text: &str) -> Result<(usize, usize, usize), FrontmatterSplitError> {
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut lines = Vec::new();
    let mut position = start;
    while position < text.len() {
        let end = text[position..]
            .find('\n')
            .map_or(text.len(), |index| position + index + 1);
        let line = text[position..end].trim_end_matches('\n');
        let line = line.strip_suffix('\r').unwrap_or(line);
        lines.push((position, end, line));
        position = end;
    }
    match lines.first() {
        Some((_, _, line)) if line.trim_end() == "---" => {}
        _ => return Err(FrontmatterSplitError::Missing),
    }
    let yaml_start = lines[0].1;
    lines[1..]
        .iter()
        .find(|(_, _, line)| line.trim_end() == "---")
        .map(|(line_start, line_end, _)| (yaml_start, *line_start, *line_end))
        .ok_or(FrontmatterSplitError::Unclosed)
}

fn split_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::collection::vec(
            select(
                &[
                    "---", "--- ", "----", " ---", "-- -", "\n", "\n", "\r\n", "\r", "a", "é",
                    "\u{feff}", "\t", "'", "\"", "name: x", ": ",
                ][..]
            ),
            0..24
        )
        .prop_map(|pieces| pieces.concat()),
    ]
}

// ---------------------------------------------------------------------------------------------
// Properties

/// 256 cases by default (a few seconds in a debug build); `PROPTEST_CASES` asks for more.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// Arbitrary bytes (mostly invalid UTF-8, or YAML-shaped with broken pieces) never panic,
    /// whether the head is complete or cut by the read limit, and errors say something and point
    /// inside the file.
    #[test]
    fn parse_head_accepts_or_rejects_any_bytes(head in any_head(), truncated in any::<bool>()) {
        check_head(&head, truncated)?;
    }

    /// A generated head cut at any place (as the read limit cuts a file) never panics, and a cut
    /// inside a multi-byte character is not an encoding error.
    #[test]
    fn parse_head_survives_any_cut(
        skill in generated_skill(),
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes = skill.text.as_bytes();
        let cut = cut.index(bytes.len() + 1);
        let head = &bytes[..cut];
        if let Err(diagnostic) = parse_head(head, true, cut as u64) {
            prop_assert_ne!(diagnostic.code, DiagnosticCode::EncodingInvalid, "{:?}", diagnostic);
        }
        check_head(head, true)?;
    }

    /// Well-formed frontmatter with quoted, plain and block values round-trips: the fields hold
    /// the generated text, the body offset points at the generated body, and `interpret` reads
    /// the same values.
    #[test]
    fn well_formed_frontmatter_round_trips(skill in generated_skill()) {
        let parsed = check_head(skill.text.as_bytes(), false)?;
        let parsed = parsed.ok_or_else(|| {
            let error = parse_head(skill.text.as_bytes(), false, MAX_FRONTMATTER_BYTES);
            TestCaseError::fail(format!("rejected: {error:?}\n{}", skill.text))
        })?;
        let fields = &parsed.fields;
        prop_assert_eq!(fields["name"].scalar_text(), Some(skill.name.clone()));
        prop_assert_eq!(fields["description"].scalar_text(), Some(skill.description.clone()));
        let body_offset = usize::try_from(parsed.body_offset).unwrap();
        prop_assert_eq!(&skill.text[body_offset..], skill.body.as_str());
        if skill.metadata.is_empty() {
            prop_assert!(!fields.contains_key("metadata"));
        } else {
            let entries = mapping(&fields["metadata"]);
            prop_assert!(entries.is_some(), "metadata is not a mapping");
            let entries = entries.unwrap();
            prop_assert_eq!(entries.len(), skill.metadata.len());
            for (key, value) in &skill.metadata {
                let text = entries[key].scalar_text();
                prop_assert_eq!(text, Some(value.clone()), "metadata.{}", key);
            }
        }

        let context = PropertiesContext {
            directory_name: Some(&skill.name),
            has_skill_manifest: false,
            mode: ValidationMode::Strict,
        };
        let (properties, diagnostics) = interpret(fields, context);
        prop_assert_eq!(properties.name.as_deref(), Some(skill.name.as_str()));
        let description = skill.description.trim();
        let description_is_null = is_null_word(&skill.description)
            && fields["description"].value == YamlValue::Null;
        let expected = (!description.is_empty() && !description_is_null).then_some(description);
        prop_assert_eq!(properties.description.as_deref(), expected);
        for (key, value) in &skill.metadata {
            prop_assert_eq!(
                properties.metadata.get(key),
                Some(&serde_json::Value::String(value.clone()))
            );
        }
        // A valid name equal to its folder, a description and metadata: nothing to complain about
        // except an empty description.
        let errors: Vec<_> = diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.is_error())
            .map(|diagnostic| diagnostic.code)
            .collect();
        if expected.is_some() {
            prop_assert!(errors.is_empty(), "{:?}", diagnostics);
        } else {
            prop_assert_eq!(errors, vec![DiagnosticCode::FieldEmpty]);
        }
    }

    /// Only the plain spellings of null parse as null; everything else the generator writes is
    /// text (or a number or boolean whose source text is kept).
    #[test]
    fn only_null_words_are_null(value in value_text(), style in style()) {
        let text = format!(
            "---\nname: a\ndescription: {}\n---\n",
            render_value(&value, style, 0, "\n")
        );
        let parsed = check_head(text.as_bytes(), false)?;
        prop_assert!(parsed.is_some(), "rejected:\n{}", text);
        let parsed = parsed.unwrap();
        let plain = usable_style(&value, style) == Style::Plain;
        prop_assert_eq!(
            parsed.fields["description"].value == YamlValue::Null,
            plain && is_null_word(&value),
            "{}", text
        );
    }

    /// `split` agrees with a line-by-line reference: the frontmatter is the text between the
    /// first line and the next line that is exactly `---`, and the body starts after it.
    #[test]
    fn split_matches_reference(text in split_text()) {
        let expected = reference_split(&text);
        match split(&text) {
            Ok(block) => {
                prop_assert!(block.body_offset <= text.len());
                let yaml_start = block.yaml.as_ptr() as usize - text.as_ptr() as usize;
                let yaml_end = yaml_start + block.yaml.len();
                prop_assert!(yaml_end <= block.body_offset);
                prop_assert_eq!(&text[yaml_start..yaml_end], block.yaml);
                prop_assert_eq!(block.line_offset, 1);
                prop_assert_eq!(Ok((yaml_start, yaml_end, block.body_offset)), expected);
                // No line of the YAML is itself a delimiter.
                prop_assert!(block.yaml.split('\n').all(|line| line.trim_end() != "---"));
            }
            Err(error) => prop_assert_eq!(Err(error), expected),
        }
    }

    /// In generated frontmatter, `---` inside quoted or block values and in the body never moves
    /// the end of the frontmatter.
    #[test]
    fn split_ends_at_the_generated_delimiter(skill in generated_skill()) {
        let block = split(&skill.text);
        prop_assert!(block.is_ok(), "{:?}", block);
        let block = block.unwrap();
        prop_assert_eq!(block.yaml, skill.yaml.as_str());
        prop_assert_eq!(&skill.text[block.body_offset..], skill.body.as_str());
    }

    /// Breaking generated frontmatter by inserting a hostile piece anywhere gives either fields
    /// or a diagnostic whose line lies inside the file, and YAML errors point inside the block.
    #[test]
    fn diagnostics_point_inside_the_file(
        skill in generated_skill(),
        at in any::<prop::sample::Index>(),
        piece in select(HEAD_TOKENS),
    ) {
        let mut bytes = skill.text.into_bytes();
        let at = at.index(bytes.len() + 1);
        bytes.splice(at..at, piece.iter().copied());
        check_head(&bytes, false)?;
        if let Err(diagnostic) = parse_head(&bytes, false, MAX_FRONTMATTER_BYTES)
            && diagnostic.code == DiagnosticCode::YamlInvalid
            && let Ok(text) = std::str::from_utf8(&bytes)
            && let Ok(block) = split(text)
        {
            let before = &text[..block.body_offset];
            let before = before.strip_suffix('\n').unwrap_or(before);
            let closing_line = line_count(before.strip_suffix('\r').unwrap_or(before).as_bytes());
            if let Some(line) = diagnostic.line {
                prop_assert!(
                    (2..=closing_line).contains(&line),
                    "YAML error at line {} outside the frontmatter (lines 2..={}): {:?}",
                    line, closing_line, diagnostic
                );
            }
        }
    }

    /// `tools.json` parsing never panics and its diagnostics point inside the text.
    #[test]
    fn tools_manifest_never_panics(text in manifest_text(JSON_TOKENS)) {
        let lines = line_count(text.as_bytes());
        let (tools, diagnostics) = parse_tools_manifest(&text);
        for diagnostic in &diagnostics {
            check_diagnostic_columns_from(diagnostic, lines, 1)?;
        }
        for tool in &tools {
            prop_assert!(skillbox_core::tools_json::is_valid_tool_name(&tool.name));
        }
    }

    /// Each tool's position is where its declaration starts in the array, whatever brackets,
    /// commas, quotes and escapes the strings before it hold and whatever other elements sit
    /// between the tools.
    #[test]
    fn tool_positions_point_at_their_declaration(
        entries in prop::collection::vec(tools_entry(), 0..6),
        spacing in prop::collection::vec(select(&["", " ", "\n", "\r\n", "\t", "\n  "][..]), 16),
    ) {
        let mut text = String::from("[");
        let mut tool_offsets = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            if index > 0 {
                text.push(',');
            }
            text.push_str(spacing[index % spacing.len()]);
            let element = match entry {
                ToolsEntry::Tool(description) => {
                    tool_offsets.push(text.len());
                    format!(
                        "{{\"name\": \"tool{index}\",{}\"description\": {}}}",
                        spacing[(index + 1) % spacing.len()],
                        serde_json::Value::String(description.clone())
                    )
                }
                ToolsEntry::Other(json) => (*json).to_owned(),
            };
            text.push_str(&element);
            text.push_str(spacing[(index + 2) % spacing.len()]);
        }
        text.push(']');
        let (tools, _) = parse_tools_manifest(&text);
        prop_assert_eq!(tools.len(), tool_offsets.len(), "{}", text);
        for (tool, offset) in tools.iter().zip(&tool_offsets) {
            let before = &text[..*offset];
            let line = before.matches('\n').count() as u64 + 1;
            let line_start = before.rfind('\n').map_or(0, |index| index + 1);
            let column = before[line_start..].chars().count() as u64 + 1;
            prop_assert_eq!(
                tool.position.map(|position| (position.line, position.column)),
                Some((line, column)),
                "{} in {}", tool.name, text
            );
        }
    }

    /// `skill.toml` parsing never panics and its diagnostics point inside the text.
    #[test]
    fn skill_manifest_never_panics(text in manifest_text(TOML_TOKENS)) {
        let lines = line_count(text.as_bytes());
        let (_, diagnostics) = parse_skill_manifest(&text);
        for diagnostic in &diagnostics {
            check_diagnostic(diagnostic, lines)?;
        }
    }
}

const JSON_TOKENS: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "\"name\"",
    "\"description\"",
    "\"script\"",
    "\"parameters\"",
    "\"type\"",
    "\"string\"",
    "\"number\"",
    "\"object\"",
    "\"array\"",
    "\"optional\"",
    "\"enum\"",
    "\"items\"",
    "\"properties\"",
    "\"required\"",
    "\"count_words\"",
    "\"Bad Name\"",
    "\"../x.sh\"",
    "\"/abs\"",
    "\"é\"",
    "true",
    "null",
    "1",
    "-0.5e3",
    "\"",
    "\\",
    "\n",
    " ",
    "é",
    "日",
];

const TOML_TOKENS: &[&str] = &[
    "name",
    "version",
    "description",
    "kind",
    "[runtime]",
    "[permissions]",
    "[[x]]",
    "language",
    "entrypoint",
    "export",
    "secrets",
    "network",
    " = ",
    "=",
    "\"acme.reports.build\"",
    "\"1.2.3\"",
    "\"action\"",
    "\"instruction\"",
    "\"python\"",
    "\"code/main.py\"",
    "\"../up\"",
    "[\"API_TOKEN\"]",
    "[",
    "]",
    "{",
    "}",
    ",",
    "\"",
    "'",
    "\"\"\"",
    "#",
    "\n",
    "\n",
    " ",
    "1",
    "1979-05-27",
    "inf",
    "é",
    "日本",
    "😀",
    "\u{feff}",
    "\r",
    "\\",
    "\\u00e9",
];

/// One element of a generated `tools.json` array.
#[derive(Debug, Clone)]
enum ToolsEntry {
    Tool(String),
    Other(&'static str),
}

/// Pieces of a description that a naive scan for `,` and brackets would miscount.
const JSON_STRING_PIECES: &[&str] = &["[", "]", "{", "}", ",", "\"", "\\", "\\\"", "é", "x", "\n"];

/// Elements that are not tools (skipped with a diagnostic) but still take an index.
const JSON_OTHER_ELEMENTS: &[&str] = &[
    "1",
    "null",
    "\"a, [b] {c}\"",
    "[1, [2, {\"x\": \"]\"}]]",
    "{\"x\": \"}, {\"}",
    "\"\\\\\"",
];

fn tools_entry() -> impl Strategy<Value = ToolsEntry> {
    let description = prop_oneof![
        "\\PC{0,20}",
        prop::collection::vec(select(JSON_STRING_PIECES), 0..10).prop_map(|pieces| pieces.concat()),
    ];
    prop_oneof![
        // A tool needs a non-empty description; the generated part follows a fixed start.
        3 => description.prop_map(|text| ToolsEntry::Tool(format!("Does {text}"))),
        1 => select(JSON_OTHER_ELEMENTS).prop_map(ToolsEntry::Other),
    ]
}

fn manifest_text(tokens: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::collection::vec(select(tokens), 0..48).prop_map(|pieces| pieces.concat()),
        prop::collection::vec(select(tokens), 0..48).prop_map(|pieces| pieces.join(" ")),
    ]
}

// ---------------------------------------------------------------------------------------------
// Alias bombs and deep nesting (deterministic)

/// Nodes in a parsed tree (what alias expansion costs in memory).
fn node_count(node: &YamlNode) -> usize {
    1 + match &node.value {
        YamlValue::Sequence(items) => items.iter().map(node_count).sum(),
        YamlValue::Mapping(entries) => entries.values().map(node_count).sum(),
        _ => 0,
    }
}

fn scalar_bytes(node: &YamlNode) -> usize {
    match &node.value {
        YamlValue::String(text) => text.len(),
        YamlValue::Sequence(items) => items.iter().map(scalar_bytes).sum(),
        YamlValue::Mapping(entries) => entries
            .iter()
            .map(|(key, value)| key.len() + scalar_bytes(value))
            .sum(),
        _ => 0,
    }
}

/// Largest tree any accepted frontmatter may expand to (the parser's node budget is 100 000).
const MAX_ACCEPTED_NODES: usize = 200_000;

/// Parse a hostile head and check that an accepted tree stays small and an error is well
/// formed; returns the accepted tree's node count or the diagnostic.
fn parse_hostile(head: &[u8]) -> Result<usize, Box<Diagnostic>> {
    let outcome = parse_head(head, false, MAX_FRONTMATTER_BYTES);
    let lines = line_count(head);
    match outcome {
        Ok(parsed) => {
            let nodes: usize = parsed.fields.values().map(node_count).sum();
            assert!(
                nodes <= MAX_ACCEPTED_NODES,
                "accepted a tree of {nodes} nodes"
            );
            let bytes: usize = parsed.fields.values().map(scalar_bytes).sum();
            assert!(
                bytes <= 8 * 1024 * 1024,
                "accepted {bytes} bytes of scalars"
            );
            Ok(nodes)
        }
        Err(diagnostic) => {
            if let Err(error) = check_diagnostic(&diagnostic, lines) {
                panic!("{error}");
            }
            Err(Box::new(diagnostic))
        }
    }
}

/// Billion laughs: `a0` a scalar, each `aK` a list of `fan_out` aliases of `aK-1`.
fn laughs(fan_out: usize, depth: usize, block: bool) -> String {
    let mut text = String::from("---\nname: laughs\ndescription: x\na0: &a0 lol\n");
    for level in 1..=depth {
        let previous = level - 1;
        if block {
            text.push_str(&format!("a{level}: &a{level}\n"));
            for _ in 0..fan_out {
                text.push_str(&format!("  - *a{previous}\n"));
            }
        } else {
            let items = vec![format!("*a{previous}"); fan_out].join(", ");
            text.push_str(&format!("a{level}: &a{level} [{items}]\n"));
        }
    }
    text.push_str("---\n");
    text
}

/// Merge-key bomb: each mapping merges the previous one `fan_out` times.
fn merge_laughs(fan_out: usize, depth: usize) -> String {
    let mut text = String::from("---\nname: merges\ndescription: x\nm0: &m0 {k0: v}\n");
    for level in 1..=depth {
        let previous = level - 1;
        let merged = vec![format!("*m{previous}"); fan_out].join(", ");
        text.push_str(&format!(
            "m{level}: &m{level} {{<<: [{merged}], k{level}: {{inner: *m{previous}}}}}\n"
        ));
    }
    text.push_str("---\n");
    text
}

fn leaves(node: &YamlNode) -> usize {
    match &node.value {
        YamlValue::Sequence(items) => items.iter().map(leaves).sum(),
        YamlValue::Mapping(entries) => entries.values().map(leaves).sum(),
        _ => 1,
    }
}

#[test]
fn small_aliases_expand_fully() {
    for (fan_out, depth) in [(2usize, 1usize), (2, 4), (3, 4), (10, 2), (2, 10)] {
        for block in [false, true] {
            let text = laughs(fan_out, depth, block);
            let outcome = parse_hostile(text.as_bytes());
            assert!(
                outcome.is_ok(),
                "fan-out {fan_out}, depth {depth}: {outcome:?}"
            );
            let parsed = parse_head(text.as_bytes(), false, MAX_FRONTMATTER_BYTES).unwrap();
            let expected = fan_out.pow(u32::try_from(depth).unwrap());
            assert_eq!(leaves(&parsed.fields[&format!("a{depth}")]), expected);
        }
    }
}

/// Alias bombs of several shapes are refused. Each one stops at a parser budget (about 100 000
/// replayed events), so each takes a bounded, small amount of work whatever its nominal size.
#[test]
fn alias_bombs_are_rejected() {
    let started = Instant::now();
    let bombs = [
        // (fan-out, depth, block style): 10^9, 2^40, 32^8 and 10^9 nodes once expanded.
        laughs(10, 9, false),
        laughs(2, 40, false),
        laughs(32, 8, false),
        laughs(10, 9, true),
        merge_laughs(2, 40),
    ];
    for bomb in &bombs {
        let outcome = parse_hostile(bomb.as_bytes());
        assert!(outcome.is_err(), "accepted an alias bomb:\n{bomb}");
    }
    // Loose: a hang or an exponential blow-up takes far longer than this.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "alias bombs took {:?}",
        started.elapsed()
    );
}

#[test]
fn huge_anchors_are_bounded() {
    let started = Instant::now();
    // A 60 000-character anchor name, used many times.
    let anchor = "n".repeat(60_000);
    let mut text = format!("---\nname: a\ndescription: x\nbig: &{anchor} v\nuses: [");
    text.push_str(&vec![format!("*{anchor}"); 16].join(", "));
    text.push_str("]\n---\n");
    let _ = parse_hostile(text.as_bytes());

    // A 1 MiB scalar behind one anchor, aliased 64 times (64 MiB if copied naively).
    let value = "x".repeat(1024 * 1024);
    let mut text = format!("---\nname: a\ndescription: x\nbig: &b {value}\nuses: [");
    text.push_str(&vec!["*b"; 64].join(", "));
    text.push_str("]\n---\n");
    let _ = parse_hostile(text.as_bytes());

    // More anchors than the parser's anchor budget.
    let mut text = String::from("---\nname: a\ndescription: x\n");
    for index in 0..5_000 {
        text.push_str(&format!("k{index}: &a{index} v{index}\n"));
    }
    text.push_str("---\n");
    let _ = parse_hostile(text.as_bytes());

    // An anchor on a big collection, aliased by later big collections.
    let mut text = String::from("---\nname: a\ndescription: x\nbase: &base [");
    text.push_str(&vec!["item"; 5_000].join(", "));
    text.push_str("]\n");
    for index in 0..50 {
        text.push_str(&format!("copy{index}: [*base, *base]\n"));
    }
    text.push_str("---\n");
    let outcome = parse_hostile(text.as_bytes());
    assert!(
        outcome.is_err(),
        "500 000 expanded items were accepted ({outcome:?})"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "huge anchors took {:?}",
        started.elapsed()
    );
}

/// Stack a thread gets by default, and so each rayon worker that loads skills.
const DEFAULT_THREAD_STACK_BYTES: usize = 2 * 1024 * 1024;

/// Run `check` on a thread with the default stack size, whatever `RUST_MIN_STACK` says.
fn on_default_stack(check: impl FnOnce() + Send + 'static) {
    let outcome = match std::thread::Builder::new()
        .stack_size(DEFAULT_THREAD_STACK_BYTES)
        .spawn(check)
    {
        Ok(thread) => thread.join(),
        Err(error) => panic!("cannot start a thread: {error}"),
    };
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

fn nested_head(shape: &str) -> String {
    format!("---\nname: deep\ndescription: x\nmetadata: {shape}\n---\n")
}

/// 10 000 levels of flow sequences (open, closed, mixed with mappings) are refused without
/// exhausting the stack.
#[test]
fn very_deep_flow_sequences_are_rejected() {
    on_default_stack(|| {
        let started = Instant::now();
        let depth = 10_000;
        let shapes = [
            format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
            format!("{}x{}", "[".repeat(depth), "]".repeat(depth)),
            "[".repeat(depth),
            format!("{}{}", "[{a: ".repeat(depth / 2), "}]".repeat(depth / 2)),
        ];
        for shape in &shapes {
            let outcome = parse_hostile(nested_head(shape).as_bytes());
            assert!(outcome.is_err(), "accepted {}…", &shape[..20]);
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "deep nesting took {:?}",
            started.elapsed()
        );
    });
}

/// Nesting within the depth budget parses; the depth is what a frontmatter may need and more.
#[test]
fn moderate_nesting_is_accepted() {
    on_default_stack(|| {
        for depth in [1, 8, 20] {
            let shape = format!("{}x{}", "[".repeat(depth), "]".repeat(depth));
            let outcome = parse_hostile(nested_head(&shape).as_bytes());
            assert!(outcome.is_ok(), "depth {depth}: {outcome:?}");
        }
    });
}

/// Every nesting shape past the parser's depth budget (24) is refused on a thread with the
/// default 2 MiB stack, in debug builds too (about 32 KiB of stack per level there).
#[test]
fn nesting_past_the_depth_budget_fits_the_default_stack() {
    on_default_stack(|| {
        for depth in [25, 64, 65, 100, 1_000, 10_000] {
            let mut block = String::new();
            for level in 1..=depth {
                block.push_str(&format!("\n{}k{level}:", " ".repeat(level)));
            }
            let shapes = [
                block,
                format!("{}x{}", "{a: ".repeat(depth), "}".repeat(depth)),
                format!("{}x{}", "[".repeat(depth), "]".repeat(depth)),
                format!("{}x{}", "- ".repeat(depth), ""),
            ];
            for shape in &shapes {
                let outcome = parse_hostile(nested_head(shape).as_bytes());
                assert!(outcome.is_err(), "depth {depth} accepted");
            }
        }
    });
}

/// Parser messages travel without their position; cutting the position off must not cut the
/// message (an alias-budget message quotes "(defined at line 5, column 9) (used at …)").
#[test]
fn yaml_messages_are_not_cut_mid_sentence() {
    let error = parse_head(
        laughs(10, 9, false).as_bytes(),
        false,
        MAX_FRONTMATTER_BYTES,
    )
    .unwrap_err();
    let opened = error.message.matches('(').count();
    let closed = error.message.matches(')').count();
    assert_eq!(opened, closed, "{}", error.message);
}

/// Columns are 1-based everywhere, including `tools.json` errors at a line's start (serde_json
/// reports column 0 there).
#[test]
fn tools_manifest_columns_are_one_based() {
    for text in ["", "\n", "[\n"] {
        let (_, diagnostics) = parse_tools_manifest(text);
        for diagnostic in diagnostics {
            assert_ne!(diagnostic.column, Some(0), "{text:?}: {diagnostic:?}");
        }
    }
}
