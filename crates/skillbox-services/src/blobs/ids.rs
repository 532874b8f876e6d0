//! Blob ids and the object keys they name: an id is `blob:` and 32 hex digits, so no id can
//! name anything but a blob's objects.

/// The object key for an id, or `None` for ids that are not ours (no path tricks possible).
pub(super) fn key(blob_id: &str) -> Option<String> {
    object_key(blob_id.strip_prefix("blob:")?)
}

/// The object key for the part of an id after `blob:` (as object names hold it): 32 hex
/// digits, lower-cased; `None` for anything else.
pub(super) fn object_key(id: &str) -> Option<String> {
    (id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit())).then(|| id.to_ascii_lowercase())
}
