//! Skill names as a model and a person see them: which names are safe to show, use in a path and
//! run ([`unsafe_name_reason`]), which characters make a name unsafe, said precisely (an
//! invisible character cannot be shown, so it is named by code point and kind), and which names
//! look alike.
//!
//! Look-alike names are found with the confusable *skeleton* of Unicode Technical Standard #39
//! (`unicode-security`, the unicode-rs implementation rustc's `confusable_idents` lint uses):
//! two names whose skeletons are equal can be mistaken for each other, such as `pdf` and `рdf`
//! with a Cyrillic `р`, or `pdf` and `pdf` with a zero-width space.

use std::collections::HashMap;
use std::fmt::Write;

use rayon::prelude::*;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_script::UnicodeScript;
use unicode_security::skeleton;

use crate::printable::needs_escaping;

/// A character for a message: as itself in backquotes when it can be seen (`` `_` ``), else by
/// code point and kind, since it cannot be shown: `U+202E (a bidirectional-text override or
/// isolate)`.
#[must_use]
pub fn describe_character(c: char) -> String {
    if !needs_escaping(c)
        && !c.is_whitespace()
        && get_general_category(c) != GeneralCategory::Format
    {
        return format!("`{c}`");
    }
    let kind = match c {
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => "a zero-width character",
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => {
            "a bidirectional-text override or isolate"
        }
        '\u{200E}' | '\u{200F}' | '\u{061C}' => "a bidirectional-text mark",
        _ if c.is_control() => "a control character",
        _ if c.is_whitespace() => "a space",
        _ => "an invisible formatting character",
    };
    format!("U+{:04X} ({kind})", u32::from(c))
}

/// Every distinct character of `text` that `is_bad` refuses, described
/// ([`describe_character`]) and joined for a message: `` U+200B (a zero-width character) and `_` ``.
#[must_use]
pub fn describe_characters(text: &str, is_bad: impl Fn(char) -> bool) -> String {
    let mut seen: Vec<char> = Vec::new();
    for c in text.chars().filter(|c| is_bad(*c)) {
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    let described: Vec<String> = seen.into_iter().map(describe_character).collect();
    match described.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The non-ASCII letters of a name with their script (`U+0440, a Cyrillic letter`), for saying
/// why two names look alike; empty for an ASCII name.
#[must_use]
pub fn foreign_letters(name: &str) -> String {
    let mut text = String::new();
    let mut seen: Vec<char> = Vec::new();
    for c in name
        .chars()
        .filter(|c| !c.is_ascii() && c.is_alphanumeric())
    {
        if seen.contains(&c) {
            continue;
        }
        seen.push(c);
        if !text.is_empty() {
            text.push_str(", ");
        }
        let _ = write!(
            text,
            "U+{:04X} `{c}`, a {} letter",
            u32::from(c),
            c.script().full_name()
        );
    }
    text
}

/// The TR39 confusable skeleton of a name.
fn name_skeleton(name: &str) -> String {
    skeleton(name).collect()
}

/// Groups of two or more distinct names that share a skeleton (look alike), each group in the
/// order the names were given, groups in the order of their first name. Skeletons are computed
/// on all cores (most of the cost, for thousands of names).
#[must_use]
pub fn confusable_groups<'a>(names: &[&'a str]) -> Vec<Vec<&'a str>> {
    let skeletons: Vec<String> = names.par_iter().map(|name| name_skeleton(name)).collect();
    let mut groups: Vec<Vec<&'a str>> = Vec::new();
    let mut group_of: HashMap<&str, usize> = HashMap::with_capacity(names.len());
    for (name, skeleton) in names.iter().zip(&skeletons) {
        let group = *group_of.entry(skeleton).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        if !groups[group].contains(name) {
            groups[group].push(name);
        }
    }
    groups.retain(|group| group.len() > 1);
    groups
}

/// Longest skill name that is shown to a model or run.
pub const MAX_SAFE_NAME_CHARS: usize = 128;

/// Why a skill name is not safe to show to a model, use in a path or run, or `None` when it is:
/// letters, digits, `-`, `_` and `.` only (so no separators, whitespace, control, zero-width or
/// bidi characters), at most [`MAX_SAFE_NAME_CHARS`], not starting with `.` or `-`, no `..`.
/// Lenient loading keeps a skill with such a name listed with its diagnostics, but nothing
/// offers it to a model or runs it.
#[must_use]
pub fn unsafe_name_reason(name: &str) -> Option<String> {
    if name.is_empty() {
        Some("it is empty".to_owned())
    } else if name.chars().count() > MAX_SAFE_NAME_CHARS {
        Some(format!(
            "it is longer than {MAX_SAFE_NAME_CHARS} characters"
        ))
    } else if !name.chars().all(is_safe_name_character) {
        Some(format!(
            "it contains {}",
            describe_characters(name, |c| !is_safe_name_character(c))
        ))
    } else if name.starts_with(['.', '-']) || name.contains("..") {
        Some("it starts with `.` or `-`, or holds `..`".to_owned())
    } else {
        None
    }
}

/// Whether a character may appear in a safe skill name: a letter, a digit, `-`, `_` or `.`.
fn is_safe_name_character(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// Whether [`unsafe_name_reason`] finds nothing.
#[must_use]
pub fn is_safe_skill_name(name: &str) -> bool {
    unsafe_name_reason(name).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_are_named_by_code_point_and_kind() {
        assert_eq!(
            describe_character('\u{200B}'),
            "U+200B (a zero-width character)"
        );
        assert_eq!(
            describe_character('\u{202E}'),
            "U+202E (a bidirectional-text override or isolate)"
        );
        assert_eq!(
            describe_character('\u{00AD}'),
            "U+00AD (an invisible formatting character)"
        );
        assert_eq!(describe_character('\n'), "U+000A (a control character)");
        assert_eq!(describe_character(' '), "U+0020 (a space)");
        assert_eq!(describe_character('\u{3000}'), "U+3000 (a space)");
        assert_eq!(describe_character('_'), "`_`");
        assert_eq!(
            describe_characters("a\u{200B}b\u{200B}_c", |c| !c.is_alphanumeric()),
            "U+200B (a zero-width character) and `_`"
        );
    }

    #[test]
    fn look_alike_names_group_by_skeleton() {
        let groups = confusable_groups(&[
            "pdf",
            "\u{0440}df",
            "docx",
            "pdf\u{200B}",
            "paypal",
            "p\u{0430}yp\u{0430}l",
            "unrelated",
        ]);
        assert_eq!(
            groups,
            vec![
                vec!["pdf", "\u{0440}df", "pdf\u{200B}"],
                vec!["paypal", "p\u{0430}yp\u{0430}l"]
            ]
        );
        assert_eq!(
            foreign_letters("\u{0440}df"),
            "U+0440 `\u{0440}`, a Cyrillic letter"
        );
        assert!(confusable_groups(&["pdf", "pdf", "docx"]).is_empty());
    }
}
