//! Text as one word a POSIX shell reads back whole (quoted by `shlex`): the commands skillbox
//! prints for a person to paste (`skillbox trust …`, a server's command line, the next steps
//! after `skillbox new`), and the one command an eval hands `bash`. One rule for all of them, so
//! a name with a quote, a space or a `$` cannot turn a suggested command into another.

use crate::printable::printable_line;

/// `text` as one shell word: as it is when it holds only characters a shell leaves alone, else
/// quoted. The word is exact (a shell gives back `text`), so it is fit for a command that runs;
/// a NUL, which no shell word can hold, is kept as it is and makes the command fail to start.
#[must_use]
pub fn shell_word(text: &str) -> String {
    shlex::Quoter::new()
        .allow_nul(true)
        .quote(text)
        .map_or_else(|_| text.to_owned(), std::borrow::Cow::into_owned)
}

/// `text` as one shell word for a person to read and paste: control, bidi and invisible
/// characters shown as visible escapes first ([`printable_line`]), then quoted.
#[must_use]
pub fn printable_shell_word(text: &str) -> String {
    shell_word(&printable_line(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_come_back_whole_from_a_shell_split() {
        for text in [
            "plain/path-1.0",
            "two words",
            "it's",
            "$HOME",
            "a\"b",
            "",
            "x=y,z",
        ] {
            let word = shell_word(text);
            assert_eq!(shlex::split(&word), Some(vec![text.to_owned()]), "{word}");
        }
        assert_eq!(shell_word("/home/u/skills"), "/home/u/skills");
        assert_eq!(printable_shell_word("a\u{1b}[2Jb"), "\"a\\\\u{1b}[2Jb\"");
    }
}
