//! Small text helpers shared by the crates above.

/// Cut `text` to at most `max_bytes` at a character boundary; whether anything was cut.
pub fn cut_at(text: &mut String, max_bytes: usize) -> bool {
    if text.len() <= max_bytes {
        return false;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    true
}
