//! The server's token, as every door checks it: a bearer token in `Authorization`, compared
//! in time that does not depend on where a guess differs.

/// The token an `Authorization` header's value presents with the `Bearer` scheme (the scheme
/// is case-insensitive, the token is not).
#[must_use]
pub fn bearer_token(authorization: &str) -> Option<&str> {
    authorization
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, presented)| presented)
}

/// Whether `presented` is `token`, compared in constant time for tokens of its length
/// (`subtle`: where a guess first differs does not change how long the comparison takes).
#[must_use]
pub fn token_matches(presented: &str, token: &str) -> bool {
    subtle::ConstantTimeEq::ct_eq(presented.as_bytes(), token.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_read_and_compared_exactly() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert!(token_matches("abc", "abc"));
        assert!(!token_matches("abd", "abc"));
        assert!(!token_matches("ab", "abc"));
    }
}
