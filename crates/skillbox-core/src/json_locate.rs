//! Where a value sits in a JSON text, so that a diagnostic about `tools[3].parameters.count` can
//! point at its line and column (serde_json keeps no positions). Only called on text that
//! already parsed as JSON, and only when there is something to report.

/// One step of a path into a JSON document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonStep<'a> {
    /// An element of an array.
    Index(usize),
    /// A member of an object, by key.
    Key(&'a str),
}

/// The byte offset where each element of the array that is the whole document starts; empty
/// when the document is not an array.
pub(crate) fn array_element_offsets(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut offsets = Vec::new();
    let mut at = skip_whitespace(bytes, 0);
    if bytes.get(at) != Some(&b'[') {
        return offsets;
    }
    at = skip_whitespace(bytes, at + 1);
    while !matches!(bytes.get(at), None | Some(b']')) {
        offsets.push(at);
        let Some(end) = skip_value(bytes, at) else {
            break;
        };
        at = skip_whitespace(bytes, end);
        if bytes.get(at) != Some(&b',') {
            break;
        }
        at = skip_whitespace(bytes, at + 1);
    }
    offsets
}

/// The byte offset of the value at `path` from the value starting at byte `start` of `text`
/// (0 and leading whitespace for the whole document), or of its key when the last step is a
/// [`JsonStep::Key`]; `None` when the path is not there.
pub(crate) fn locate(text: &str, start: usize, path: &[JsonStep<'_>]) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = skip_whitespace(bytes, start);
    let mut key_start = None;
    for step in path {
        key_start = None;
        match (*step, *bytes.get(at)?) {
            (JsonStep::Index(wanted), b'[') => {
                at = skip_whitespace(bytes, at + 1);
                for _ in 0..wanted {
                    at = skip_whitespace(bytes, skip_value(bytes, at)?);
                    if bytes.get(at) != Some(&b',') {
                        return None;
                    }
                    at = skip_whitespace(bytes, at + 1);
                }
                if matches!(bytes.get(at), None | Some(b']')) {
                    return None;
                }
            }
            (JsonStep::Key(wanted), b'{') => {
                at = skip_whitespace(bytes, at + 1);
                loop {
                    if bytes.get(at) != Some(&b'"') {
                        return None;
                    }
                    let key_end = skip_string(bytes, at)?;
                    let found = key_equals(&text[at..key_end], wanted);
                    let start = at;
                    at = skip_whitespace(bytes, key_end);
                    if bytes.get(at) != Some(&b':') {
                        return None;
                    }
                    at = skip_whitespace(bytes, at + 1);
                    if found {
                        key_start = Some(start);
                        break;
                    }
                    at = skip_whitespace(bytes, skip_value(bytes, at)?);
                    if bytes.get(at) != Some(&b',') {
                        return None;
                    }
                    at = skip_whitespace(bytes, at + 1);
                }
            }
            _ => return None,
        }
    }
    Some(key_start.unwrap_or(at))
}

/// Whether a quoted JSON string (quotes included) spells `wanted`.
fn key_equals(quoted: &str, wanted: &str) -> bool {
    let inner = &quoted[1..quoted.len() - 1];
    if inner.contains('\\') {
        serde_json::from_str::<String>(quoted).is_ok_and(|key| key == wanted)
    } else {
        inner == wanted
    }
}

fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The offset just past the string starting at `at` (its opening quote).
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    let mut index = at + 1;
    while let Some(byte) = bytes.get(index) {
        match byte {
            b'\\' => index += 2,
            b'"' => return Some(index + 1),
            _ => index += 1,
        }
    }
    None
}

/// The offset just past the value starting at `at`.
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => skip_string(bytes, at),
        b'[' | b'{' => {
            let mut depth = 0usize;
            let mut index = at;
            while let Some(byte) = bytes.get(index) {
                match byte {
                    b'"' => {
                        index = skip_string(bytes, index)?;
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(index + 1);
                        }
                    }
                    _ => {}
                }
                index += 1;
            }
            None
        }
        _ => {
            let mut index = at;
            while bytes.get(index).is_some_and(|byte| {
                !matches!(byte, b',' | b']' | b'}') && !byte.is_ascii_whitespace()
            }) {
                index += 1;
            }
            Some(index)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::JsonStep::{Index, Key};
    use super::*;

    #[test]
    fn finds_keys_and_elements() {
        let text = r#"[ {"name": "a", "p": {"x": 1}},
  {"name": "b", "p": {"a\"b": [1, {"y": "}"}], "z": 2}} ]"#;
        let at = |path: &[JsonStep<'_>]| locate(text, 0, path).map(|offset| &text[offset..]);
        assert!(at(&[Index(1)]).unwrap().starts_with(r#"{"name": "b""#));
        assert!(
            at(&[Index(1), Key("p"), Key("z")])
                .unwrap()
                .starts_with(r#""z": 2"#)
        );
        assert!(
            at(&[Index(1), Key("p"), Key("a\"b")])
                .unwrap()
                .starts_with(r#""a\"b""#)
        );
        assert!(
            at(&[Index(0), Key("p"), Key("x")])
                .unwrap()
                .starts_with(r#""x": 1"#)
        );
        assert_eq!(at(&[Index(2)]), None);
        assert_eq!(at(&[Index(0), Key("missing")]), None);
        assert_eq!(at(&[Index(0), Index(0)]), None);
        // From an element's own offset.
        let second = array_element_offsets(text)[1];
        let from_the_start = locate(text, 0, &[Index(1), Key("p"), Key("z")]);
        assert!(from_the_start.is_some());
        assert_eq!(locate(text, second, &[Key("p"), Key("z")]), from_the_start);
    }

    #[test]
    fn finds_each_element_of_the_top_array() {
        let text = "\n [ {\"a\": [1, \"],\"]}, \"x,y\" ,\n[[]], 12 , true]";
        let starts: Vec<&str> = array_element_offsets(text)
            .into_iter()
            .map(|offset| &text[offset..offset + 3])
            .collect();
        assert_eq!(starts, vec!["{\"a", "\"x,", "[[]", "12 ", "tru"]);
        assert!(array_element_offsets("[ ]").is_empty());
        assert!(array_element_offsets("{\"a\": [1]}").is_empty());
    }
}
