//! Finding the YAML frontmatter of a `SKILL.md` and turning it into fields.
//!
//! The frontmatter is the text between a first line `---` and the next line that is exactly
//! `---`. Unlike skills-ref (which splits the whole file on every `---`), a `---` inside a value
//! or a horizontal rule in the body does not end it. Only the head of the file is read at
//! discovery ([`parse_head`] gets at most the frontmatter limit); the body is read later on demand.

use std::sync::Arc;

use indexmap::IndexMap;

use crate::diagnostic::{Diagnostic, DiagnosticCode, TextPosition};
use crate::yaml::{self, YamlNode, YamlValue};

/// The frontmatter block located in a file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterBlock<'a> {
    /// The YAML between the delimiters.
    pub yaml: &'a str,
    /// Lines before the YAML's first line (the opening `---`, and nothing else).
    pub line_offset: u64,
    /// Byte offset in the text where the body starts (after the closing `---` line).
    pub body_offset: usize,
}

/// Why no frontmatter block could be located.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontmatterSplitError {
    /// The text does not start with a `---` line.
    Missing,
    /// No closing `---` line follows.
    Unclosed,
}

const UTF8_BOM: &str = "\u{feff}";

/// Locate the frontmatter block in `text`.
///
/// # Errors
/// [`FrontmatterSplitError::Missing`] when the first line is not `---`,
/// [`FrontmatterSplitError::Unclosed`] when no later line is `---`.
pub fn split(text: &str) -> Result<FrontmatterBlock<'_>, FrontmatterSplitError> {
    let start = if text.starts_with(UTF8_BOM) {
        UTF8_BOM.len()
    } else {
        0
    };
    let mut lines = LineCursor::new(text, start);
    match lines.next() {
        Some((_, line)) if is_delimiter(line) => {}
        _ => return Err(FrontmatterSplitError::Missing),
    }
    let yaml_start = lines.position;
    while let Some((line_start, line)) = lines.next() {
        if is_delimiter(line) {
            return Ok(FrontmatterBlock {
                yaml: &text[yaml_start..line_start],
                line_offset: 1,
                body_offset: lines.position,
            });
        }
    }
    Err(FrontmatterSplitError::Unclosed)
}

/// Whether `head` (the first bytes of a file) already holds a closing `---` line, so reading
/// more is not needed to parse the frontmatter.
#[must_use]
pub fn head_is_complete(head: &[u8]) -> bool {
    // Skip the opening line, then look at each complete line (one followed by a newline: a
    // last line without one may still be growing) and stop at the first delimiter.
    let mut newlines = memchr::memchr_iter(b'\n', head);
    let Some(first_newline) = newlines.next() else {
        return false;
    };
    let mut start = first_newline + 1;
    for end in newlines {
        let line = &head[start..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.trim_ascii_end() == b"---" {
            return true;
        }
        start = end + 1;
    }
    false
}

fn is_delimiter(line: &str) -> bool {
    line.trim_end() == "---"
}

struct LineCursor<'a> {
    text: &'a str,
    position: usize,
}

impl<'a> LineCursor<'a> {
    fn new(text: &'a str, position: usize) -> Self {
        LineCursor { text, position }
    }

    /// The next line without its terminator, and where it starts.
    fn next(&mut self) -> Option<(usize, &'a str)> {
        if self.position >= self.text.len() {
            return None;
        }
        let start = self.position;
        let rest = &self.text[start..];
        let (line, advance) = match rest.find('\n') {
            Some(index) => (&rest[..index], index + 1),
            None => (rest, rest.len()),
        };
        self.position += advance;
        Some((start, line.strip_suffix('\r').unwrap_or(line)))
    }
}

/// The head of a `SKILL.md` as read at discovery.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedFrontmatter {
    /// Top-level fields in file order.
    pub fields: IndexMap<String, YamlNode>,
    /// The YAML text between the delimiters.
    pub yaml: Arc<str>,
    /// Byte offset of the body in the file.
    pub body_offset: u64,
}

/// Parse the frontmatter from the first bytes of a file (`truncated` when the file goes on).
///
/// # Errors
/// A diagnostic without the file name (the caller adds it): not UTF-8, no or unclosed
/// frontmatter, larger than `max_bytes`, invalid YAML, or not a mapping.
pub fn parse_head(
    head: &[u8],
    truncated: bool,
    max_bytes: u64,
) -> Result<ParsedFrontmatter, Diagnostic> {
    let text = match std::str::from_utf8(head) {
        Ok(text) => text,
        // A multi-byte character cut by the read limit is not an encoding error.
        Err(error) if truncated && error.error_len().is_none() => {
            std::str::from_utf8(&head[..error.valid_up_to()]).unwrap_or_default()
        }
        Err(error) => {
            let line = 1 + head[..error.valid_up_to()]
                .iter()
                .filter(|byte| **byte == b'\n')
                .count() as u64;
            return Err(Diagnostic::error(
                DiagnosticCode::EncodingInvalid,
                format!(
                    "`SKILL.md` is not valid UTF-8 (invalid byte at offset {})",
                    error.valid_up_to()
                ),
            )
            .at(Some(TextPosition { line, column: 1 }))
            .with_hint("save the file as UTF-8"));
        }
    };
    let block = match split(text) {
        Ok(block) => block,
        Err(FrontmatterSplitError::Missing) => {
            return Err(Diagnostic::error(
                DiagnosticCode::FrontmatterMissing,
                "`SKILL.md` must start with YAML frontmatter: a `---` line, the fields, then another `---` line",
            )
            .at(Some(TextPosition { line: 1, column: 1 }))
            .with_hint("add `---`, `name: <skill-name>`, `description: <what it does and when to use it>`, `---` at the top"));
        }
        Err(FrontmatterSplitError::Unclosed) if truncated => {
            return Err(Diagnostic::error(
                DiagnosticCode::FrontmatterTooLarge,
                format!("no closing `---` within the first {max_bytes} bytes of `SKILL.md`"),
            )
            .with_hint("keep the frontmatter short and close it with a `---` line; long text belongs in the body"));
        }
        Err(FrontmatterSplitError::Unclosed) => {
            return Err(Diagnostic::error(
                DiagnosticCode::FrontmatterUnclosed,
                "the frontmatter opened by `---` on line 1 is never closed",
            )
            .at(Some(TextPosition { line: 1, column: 1 }))
            .with_hint("add a line with only `---` after the last field"));
        }
    };
    let document = yaml::parse_document(block.yaml, block.line_offset).map_err(|error| {
        let hint = colon_hint(block.yaml, block.line_offset, error.position).unwrap_or_else(|| {
            "fix the YAML syntax; quote values that contain `: `, `#` or start with `[`, `{`, `*`, `&`, `!`".to_owned()
        });
        Diagnostic::error(
            DiagnosticCode::YamlInvalid,
            format!("invalid YAML in frontmatter: {}", error.message),
        )
        .at(error.position)
        .with_hint(hint)
    })?;
    let body_offset = block.body_offset as u64;
    match document.value {
        YamlValue::Mapping(fields) => Ok(ParsedFrontmatter {
            fields,
            yaml: Arc::from(block.yaml),
            body_offset,
        }),
        YamlValue::Null => Ok(ParsedFrontmatter {
            fields: IndexMap::new(),
            yaml: Arc::from(block.yaml),
            body_offset,
        }),
        _ => Err(Diagnostic::error(
            DiagnosticCode::FrontmatterNotMapping,
            format!(
                "frontmatter must be a mapping of fields, found a {}",
                document.type_name()
            ),
        )
        .at(document.position)
        .with_hint("write one `field: value` per line between the `---` lines")),
    }
}

/// The common mistake `description: Use when: X` (an unquoted `: ` inside a value) gets a hint
/// that names the field and shows the quoted form.
fn colon_hint(yaml: &str, line_offset: u64, position: Option<TextPosition>) -> Option<String> {
    let error_line = position?.line.checked_sub(line_offset)?;
    // The parser may report the line of the value or the one after it; look at both.
    let candidates = [error_line, error_line.saturating_sub(1)];
    for line_number in candidates {
        let index = usize::try_from(line_number.checked_sub(1)?).ok()?;
        let Some(line) = yaml.lines().nth(index) else {
            continue;
        };
        let Some((key, value)) = line.split_once(": ") else {
            continue;
        };
        let key = key.trim();
        let value = value.trim();
        let plain = !value.starts_with(['"', '\'', '|', '>', '[', '{']);
        if plain && value.contains(": ") && !key.is_empty() && !key.contains(' ') {
            let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
            return Some(format!(
                "the value of `{key}` contains `: `, which YAML reads as a new mapping; quote the whole value: {key}: \"{escaped}\""
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_finds_block_and_body() {
        let text = "---\nname: a\n---\n# Body\n---\nmore\n";
        let block = split(text).unwrap();
        assert_eq!(block.yaml, "name: a\n");
        assert_eq!(&text[block.body_offset..], "# Body\n---\nmore\n");
    }

    #[test]
    fn split_ignores_dashes_inside_values_and_handles_crlf_and_bom() {
        let text = "\u{feff}---\r\ndescription: a---b\r\n---\r\nbody";
        let block = split(text).unwrap();
        assert_eq!(block.yaml, "description: a---b\r\n");
        assert_eq!(&text[block.body_offset..], "body");
    }

    #[test]
    fn split_errors() {
        assert_eq!(
            split("# no frontmatter"),
            Err(FrontmatterSplitError::Missing)
        );
        assert_eq!(split(""), Err(FrontmatterSplitError::Missing));
        assert_eq!(
            split("---\nname: a\n"),
            Err(FrontmatterSplitError::Unclosed)
        );
        assert_eq!(
            split("----\nname: a\n---\n"),
            Err(FrontmatterSplitError::Missing)
        );
    }

    #[test]
    fn head_completeness() {
        assert!(head_is_complete(b"---\nname: a\n---\n"));
        assert!(head_is_complete(b"---\r\nname: a\r\n---\r\nbody"));
        assert!(!head_is_complete(b"---\nname: a\n---"));
        assert!(!head_is_complete(b"---\nname: a\n"));
        assert!(!head_is_complete(b"---\n"));
        assert!(!head_is_complete(b""));
    }

    #[test]
    fn colon_mistake_gets_quoting_hint() {
        let error = parse_head(
            b"---\nname: a\ndescription: Use when: X\n---\n",
            false,
            1000,
        )
        .unwrap_err();
        assert_eq!(error.code, DiagnosticCode::YamlInvalid);
        assert_eq!(
            error.hint.as_deref(),
            Some(
                "the value of `description` contains `: `, which YAML reads as a new mapping; quote the whole value: description: \"Use when: X\""
            )
        );
    }

    #[test]
    fn truncated_head_reports_too_large() {
        let error = parse_head(b"---\nname: a\ndescription: b", true, 25).unwrap_err();
        assert_eq!(error.code, DiagnosticCode::FrontmatterTooLarge);
    }

    #[test]
    fn invalid_utf8_reports_line() {
        let error = parse_head(b"---\nname: a\xff\n---\n", false, 100).unwrap_err();
        assert_eq!(error.code, DiagnosticCode::EncodingInvalid);
        assert_eq!(error.line, Some(2));
    }

    #[test]
    fn non_mapping_is_reported() {
        let error = parse_head(b"---\n- a\n- b\n---\n", false, 100).unwrap_err();
        assert_eq!(error.code, DiagnosticCode::FrontmatterNotMapping);
    }
}
