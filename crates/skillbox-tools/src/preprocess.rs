//! `` !`command` `` preprocessing of skill bodies (seed 003), opt-in. A body is cut into text
//! and command pieces: inline `` !`cmd` `` where the `!` starts a line or follows whitespace,
//! and fenced blocks opened by a ```` ```! ```` line. Commands run through the executor (same
//! sandbox and limits as scripts); their output replaces them; failures become `[error: …]`
//! markers. Argument substitution applies to the text pieces only, so neither the commands
//! (no argument injection into a shell) nor their output (no re-scanning) are rewritten.

/// A piece of a skill body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text, kept (and substituted).
    Text(String),
    /// A command line whose output replaces it.
    Command(String),
}

/// Cut a body into text and command pieces.
#[must_use]
pub fn pieces(body: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut lines = body.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if line.trim_end() == "```!" {
            let mut block = String::new();
            let mut closed = false;
            for inner in lines.by_ref() {
                if inner.trim_end() == "```" {
                    closed = true;
                    break;
                }
                block.push_str(inner);
            }
            if closed {
                flush(&mut pieces, &mut text);
                pieces.push(Piece::Command(block.trim_end().to_owned()));
                continue;
            }
            // An unclosed fence stays text.
            text.push_str(line);
            text.push_str(&block);
            continue;
        }
        inline_commands(line, &mut pieces, &mut text);
    }
    flush(&mut pieces, &mut text);
    pieces
}

fn flush(pieces: &mut Vec<Piece>, text: &mut String) {
    if !text.is_empty() {
        pieces.push(Piece::Text(std::mem::take(text)));
    }
}

fn inline_commands(line: &str, pieces: &mut Vec<Piece>, text: &mut String) {
    let mut rest = line;
    let mut previous: Option<char> = text.chars().last().or(Some('\n'));
    while let Some(index) = rest.find("!`") {
        let before = &rest[..index];
        let preceded_ok = before
            .chars()
            .last()
            .or(previous)
            .is_none_or(char::is_whitespace);
        let after = &rest[index + 2..];
        match (preceded_ok, after.find('`')) {
            (true, Some(end))
                if !after[..end].trim().is_empty() && !after[..end].contains('\n') =>
            {
                text.push_str(before);
                flush(pieces, text);
                pieces.push(Piece::Command(after[..end].trim().to_owned()));
                rest = &after[end + 1..];
                previous = Some('`');
            }
            _ => {
                text.push_str(&rest[..index + 2]);
                rest = after;
                previous = Some('`');
            }
        }
    }
    text.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_inline_and_fenced_commands() {
        let body = "Branch: !`git branch --show-current`\nKEY=!`not a command`\n```!\ndate\nuname -s\n```\nEnd `code` here\n";
        assert_eq!(
            pieces(body),
            vec![
                Piece::Text("Branch: ".into()),
                Piece::Command("git branch --show-current".into()),
                Piece::Text("\nKEY=!`not a command`\n".into()),
                Piece::Command("date\nuname -s".into()),
                Piece::Text("End `code` here\n".into()),
            ]
        );
    }

    #[test]
    fn line_start_and_unclosed_cases() {
        assert_eq!(pieces("!`ls`"), vec![Piece::Command("ls".into())]);
        assert_eq!(pieces("!`unclosed"), vec![Piece::Text("!`unclosed".into())]);
        assert_eq!(
            pieces("```!\nno end\n"),
            vec![Piece::Text("```!\nno end\n".into())]
        );
    }
}
