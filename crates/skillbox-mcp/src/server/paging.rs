//! Pages of the listings: every list continues after the last key it returned, so a cursor
//! stays meaningful across a reload and across replicas.

use super::*;

/// A page of `items` (in ascending order of `key`) after the opaque `cursor`, which holds the
/// key of the last item of the previous page: a reload between two pages neither repeats nor
/// skips an item that stayed, as an offset would.
pub(super) fn page<T>(
    items: impl Iterator<Item = T>,
    key: impl Fn(&T) -> String,
    cursor: Option<&str>,
    per_page: usize,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let after = match cursor {
        None => None,
        Some(cursor) => Some(decode_cursor(cursor).ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "cursor `{cursor}` was not made by this server; start again without a cursor"
                ),
                None,
            )
        })?),
    };
    let mut items: Vec<T> = items
        .skip_while(|item| after.as_ref().is_some_and(|after| key(item) <= *after))
        .take(per_page + 1)
        .collect();
    let next = (items.len() > per_page).then(|| {
        items.truncate(per_page);
        items.last().map(|item| encode_cursor(&key(item)))
    });
    Ok((items, next.flatten()))
}

/// A cursor holding a key: `k1.` and the key's bytes in hex.
pub(super) fn encode_cursor(key: &str) -> String {
    format!("k1.{}", hex::encode(key))
}

pub(super) fn decode_cursor(cursor: &str) -> Option<String> {
    let hex = cursor.strip_prefix("k1.")?;
    String::from_utf8(hex::decode(hex).ok()?).ok()
}

pub(super) fn cursor_of(request: Option<&PaginatedRequestParams>) -> Option<&str> {
    request.and_then(|request| request.cursor.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_continue_after_the_last_key_across_a_reload() {
        let key = |item: &&str| (*item).to_owned();
        let before = ["a", "b", "c", "d"];
        let (first, cursor) = page(before.into_iter(), key, None, 2).unwrap();
        assert_eq!(first, ["a", "b"]);
        let cursor = cursor.unwrap();
        // A reload removed `a` and added `bb`: the next page neither repeats `b` nor skips `bb`.
        let after = ["b", "bb", "c", "d"];
        let (second, cursor) = page(after.into_iter(), key, Some(&cursor), 2).unwrap();
        assert_eq!(second, ["bb", "c"]);
        let (third, last) = page(after.into_iter(), key, cursor.as_deref(), 2).unwrap();
        assert_eq!((third, last), (vec!["d"], None));
        assert!(page(after.into_iter(), key, Some("12"), 2).is_err());
        assert!(page(after.into_iter(), key, Some("k1.zz"), 2).is_err());
    }
}
