//! Argument substitution in skill bodies (seed 003): `$ARGUMENTS` (the raw string),
//! `$ARGUMENTS[N]` and `$N` (0-based, shell-style split), `$name` for names the frontmatter's
//! `arguments` field declares, and `${SKILL_DIR}` (also `${CLAUDE_SKILL_DIR}`). One pass: text
//! that substitution inserts is never scanned again.

/// Split arguments as a shell would: whitespace separates, quotes group, backslash escapes.
#[must_use]
pub fn split_arguments(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    current.push(next);
                    in_word = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            (None, c) => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(current);
    }
    words
}

/// What substitution produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Substituted {
    /// The text, at most the `max_bytes` asked for.
    pub text: String,
    /// Whether any argument placeholder was used.
    pub used_arguments: bool,
    /// Whether the text reached `max_bytes` and was cut there (the rest was never built).
    pub cut: bool,
}

/// Substitute arguments into a body. `raw` is the argument string as given (`None` when the
/// skill was loaded without arguments); `names` are the frontmatter's declared argument names.
/// When the body has no placeholder, `ARGUMENTS: <raw>` is appended. The text stops at
/// `max_bytes` (a body of many `$0` with long arguments would otherwise multiply them).
#[must_use]
pub fn substitute(
    body: &str,
    raw: Option<&str>,
    names: &[String],
    skill_directory: &str,
    max_bytes: usize,
) -> Substituted {
    let mut substituted = substitute_text(body, raw, names, skill_directory, max_bytes);
    if !substituted.cut {
        substituted.cut = finish(
            &mut substituted.text,
            raw,
            substituted.used_arguments,
            max_bytes,
        );
    }
    substituted
}

/// End a substitution whose whole body is in `text`: `ARGUMENTS: <raw>` appended when no
/// placeholder used the arguments (`used`), then the text cut to `max_bytes`. Whether anything
/// was cut.
pub fn finish(text: &mut String, raw: Option<&str>, used: bool, max_bytes: usize) -> bool {
    append_unused_arguments(text, raw, used);
    cut_at(text, max_bytes)
}

pub use skillbox_core::text::cut_at;

/// Append `ARGUMENTS: <raw>` when arguments were given and no placeholder used them.
fn append_unused_arguments(output: &mut String, raw: Option<&str>, used: bool) {
    let raw_text = raw.unwrap_or("");
    if !used && !raw_text.trim().is_empty() {
        output.push_str("\n\nARGUMENTS: ");
        output.push_str(raw_text);
    }
}

/// Substitute placeholders in one piece of text, stopping at `max_bytes` of output (callers
/// combining pieces decide about `ARGUMENTS:` themselves).
#[must_use]
pub fn substitute_text(
    body: &str,
    raw: Option<&str>,
    names: &[String],
    skill_directory: &str,
    max_bytes: usize,
) -> Substituted {
    let raw_text = raw.unwrap_or("");
    let words = split_arguments(raw_text);
    let word = |index: usize| words.get(index).cloned().unwrap_or_default();
    let mut output = String::with_capacity((body.len() + raw_text.len()).min(max_bytes));
    let mut used_arguments = false;
    let mut rest = body;
    while let Some(position) = rest.find('$') {
        if cut_at(&mut output, max_bytes) {
            return Substituted {
                text: output,
                used_arguments,
                cut: true,
            };
        }
        output.push_str(&rest[..position]);
        let after = &rest[position + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS[") {
            let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
            if !digits.is_empty() && tail[digits.len()..].starts_with(']') {
                output.push_str(&word(digits.parse().unwrap_or(usize::MAX)));
                used_arguments = true;
                rest = &tail[digits.len() + 1..];
                continue;
            }
        }
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            output.push_str(raw_text);
            used_arguments = true;
            rest = tail;
            continue;
        }
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() {
            output.push_str(&word(digits.parse().unwrap_or(usize::MAX)));
            used_arguments = true;
            rest = &after[digits.len()..];
            continue;
        }
        if let Some(tail) = ["{SKILL_DIR}", "{CLAUDE_SKILL_DIR}", "{SKILLBOX_SKILL_DIR}"]
            .iter()
            .find_map(|token| after.strip_prefix(token))
        {
            output.push_str(skill_directory);
            rest = tail;
            continue;
        }
        let identifier: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        if let Some(index) = names
            .iter()
            .position(|name| *name == identifier)
            .filter(|_| !identifier.is_empty())
        {
            output.push_str(&word(index));
            used_arguments = true;
            rest = &after[identifier.len()..];
            continue;
        }
        output.push('$');
        rest = after;
    }
    output.push_str(rest);
    let cut = cut_at(&mut output, max_bytes);
    Substituted {
        text: output,
        used_arguments,
        cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn placeholders() {
        let names = vec!["issue".to_owned(), "format".to_owned()];
        let cases = [
            ("Fix issue $ARGUMENTS now", Some("123"), "Fix issue 123 now"),
            (
                "First $0, second $1, third $2.",
                Some("a \"b c\" d"),
                "First a, second b c, third d.",
            ),
            (
                "Index $ARGUMENTS[1] and $ARGUMENTS[9]!",
                Some("x y"),
                "Index y and !",
            ),
            (
                "Issue $issue as $format",
                Some("42 json"),
                "Issue 42 as json",
            ),
            (
                "No placeholder here.",
                Some("extra words"),
                "No placeholder here.\n\nARGUMENTS: extra words",
            ),
            ("No placeholder, no args.", None, "No placeholder, no args."),
            ("Costs $5 and $HOME stays", None, "Costs  and $HOME stays"),
            ("Dir: ${SKILL_DIR}/x", None, "Dir: /skills/demo/x"),
            (
                "Once: $ARGUMENTS",
                Some("$ARGUMENTS $0"),
                "Once: $ARGUMENTS $0",
            ),
        ];
        for (body, raw, expected) in cases {
            assert_eq!(
                substitute(body, raw, &names, "/skills/demo", usize::MAX).text,
                expected,
                "{body}"
            );
        }
    }

    #[test]
    fn output_stops_at_the_cap_on_a_character_boundary() {
        let body = "é$0".repeat(1000);
        let capped = substitute(&body, Some("ab"), &[], "/d", 101);
        assert!(capped.cut && capped.used_arguments);
        assert_eq!(capped.text.len(), 100, "never half a character");
        let whole = substitute(&body, Some("ab"), &[], "/d", usize::MAX);
        assert!(!whole.cut);
        assert!(whole.text.starts_with(&capped.text));
        let appended = substitute("plain", Some("long arguments"), &[], "/d", 10);
        assert_eq!(
            (appended.text.as_str(), appended.cut),
            ("plain\n\nARG", true)
        );
    }

    #[test]
    fn shell_style_splitting() {
        assert_eq!(
            split_arguments(r#"a "b c" 'd e' f\ g"#),
            vec!["a", "b c", "d e", "f g"]
        );
        assert_eq!(split_arguments("  "), Vec::<String>::new());
        assert_eq!(split_arguments(r#""""#), vec![""]);
    }
}
