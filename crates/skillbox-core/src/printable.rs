//! Text from skills (names, descriptions, versions, file and folder names) shown to a person in
//! a terminal. A skill author controls that text: an escape sequence in it could retitle the
//! terminal or rewrite what is on screen, a newline in a folder name could forge a line of a
//! report, and bidi or zero-width characters can make one name look like another. Human output
//! passes every such field through [`printable`]; JSON output keeps the exact text.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether a character must not reach a terminal as it is: control characters (C0, DEL, C1,
/// newlines and tabs included, since a field is one line), the line and paragraph separators,
/// the interlinear annotation marks, and every character Unicode lets a display draw as
/// nothing (`Default_Ignorable_Code_Point`): bidi marks, embeddings, overrides and isolates,
/// zero-width characters, the soft hyphen, the Hangul fillers, the byte-order mark, the tag
/// characters and the variation selectors, in which text can be smuggled past a reader one
/// byte per invisible character.
#[must_use]
pub fn needs_escaping(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'..='\u{1160}'
                | '\u{17B4}'..='\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFFB}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// `text` with every character [`needs_escaping`] written as a visible escape (`\n`, `\t`,
/// `\u{1b}`), unchanged (and not copied) when there is none.
#[must_use]
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escaping) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => escaped.push_str("\\n"),
            '\t' => escaped.push_str("\\t"),
            '\r' => escaped.push_str("\\r"),
            c if needs_escaping(c) => {
                let _ = write!(escaped, "\\u{{{:x}}}", u32::from(c));
            }
            c => escaped.push(c),
        }
    }
    Cow::Owned(escaped)
}

/// A field for one line of human output: runs of whitespace (newlines included) become one
/// space, as a multi-line YAML description reads on one line, then [`printable`].
#[must_use]
pub fn printable_line(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    printable(&flat).into_owned()
}

/// Multi-line text (a skill's body) for a terminal: newlines and tabs kept, every other
/// character [`needs_escaping`] escaped.
#[must_use]
pub fn printable_block(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c != '\n' && c != '\t' && needs_escaping(c))
    {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.split('\n')
            .map(|line| {
                line.split('\t')
                    .map(|part| printable(part).into_owned())
                    .collect::<Vec<_>>()
                    .join("\t")
            })
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// A path as [`printable`] text.
#[must_use]
pub fn printable_path(path: &std::path::Path) -> String {
    printable(&path.to_string_lossy()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_text_is_borrowed_and_hostile_text_is_escaped() {
        assert!(matches!(printable("pdf-tools 1.0"), Cow::Borrowed(_)));
        assert_eq!(printable("ünïcode ok"), "ünïcode ok");
        assert_eq!(
            printable("a\u{1b}]0;pwned\u{7}b"),
            "a\\u{1b}]0;pwned\\u{7}b"
        );
        assert_eq!(printable("line\nok     fake"), "line\\nok     fake");
        assert_eq!(printable("x\u{202e}gpj.exe"), "x\\u{202e}gpj.exe");
        assert_eq!(printable("zero\u{200b}width"), "zero\\u{200b}width");
        assert_eq!(printable("alm\u{61c}"), "alm\\u{61c}");
        assert_eq!(printable("a\u{2028}b"), "a\\u{2028}b");
        assert_eq!(printable("tag\u{e0041}"), "tag\\u{e0041}");
        assert_eq!(
            printable("Paris\u{e0131}\u{fe0f}soft\u{ad}\u{3164}"),
            "Paris\\u{e0131}\\u{fe0f}soft\\u{ad}\\u{3164}"
        );
        assert_eq!(printable("c1\u{9b}31m"), "c1\\u{9b}31m");
        assert_eq!(
            printable_line("Folded\n  description\u{1b}[2J"),
            "Folded description\\u{1b}[2J"
        );
        assert_eq!(
            printable_block("# Title\n\tcode\u{1b}]0;t\u{7}\n"),
            "# Title\n\tcode\\u{1b}]0;t\\u{7}\n"
        );
    }
}
