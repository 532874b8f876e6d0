//! Writing blobs and reading samples of them back.

use super::*;
use crate::blobs::{DEFAULT_BLOB_TTL, MAX_KIND_BYTES};

/// A read as `read_blob` makes it: the metadata, then only the bytes returned.
pub(crate) async fn read(
    store: &BlobStore,
    blob_id: &str,
    mode: ReadMode,
    max_bytes: Option<u64>,
) -> Result<BlobSample, BlobError> {
    let meta = store.meta(blob_id).await?;
    store
        .read_range(&meta, mode.range(meta.size_bytes, max_bytes))
        .await
}

#[tokio::test]
async fn create_and_read_head_tail_full_and_binary() {
    let folder = tempfile::tempdir().unwrap();
    let store = BlobStore::local(folder.path(), DEFAULT_BLOB_TTL).unwrap();
    let meta = store
        .create("hello world", "text/plain", None)
        .await
        .unwrap();
    assert_eq!(meta.size_bytes, 11);
    let head = read(&store, &meta.blob_id, ReadMode::Head, Some(5))
        .await
        .unwrap();
    assert_eq!(
        (head.text().as_deref(), head.truncated),
        (Some("hello"), true)
    );
    let tail = read(&store, &meta.blob_id, ReadMode::Tail, Some(5))
        .await
        .unwrap();
    assert_eq!((tail.text().as_deref(), tail.offset), (Some("world"), 6));
    let full = read(&store, &meta.blob_id, ReadMode::Full, None)
        .await
        .unwrap();
    assert_eq!(
        (full.text().as_deref(), full.truncated),
        (Some("hello world"), false)
    );
    let binary = store
        .create("AAEC/w==", "application/octet-stream", Some("base64"))
        .await
        .unwrap();
    let binary_read = read(&store, &binary.blob_id, ReadMode::Full, None)
        .await
        .unwrap();
    assert_eq!(
        (binary_read.text(), &binary_read.bytes[..]),
        (None, &[0, 1, 2, 0xff][..])
    );
    for bad in ["blob:nope", "../etc/passwd", "blob:../../x"] {
        assert!(matches!(
            read(&store, bad, ReadMode::Head, None).await,
            Err(BlobError::NotFound(_))
        ));
    }
    assert!(matches!(
        store.create("%%%", "x", Some("base64")).await,
        Err(BlobError::Invalid(_))
    ));
}

#[tokio::test]
async fn kinds_are_short_mime_types_and_oversized_records_are_not_read() {
    let folder = tempfile::tempdir().unwrap();
    let store = BlobStore::local(folder.path(), DEFAULT_BLOB_TTL).unwrap();
    for kind in ["", "a\u{1}b", &"k".repeat(MAX_KIND_BYTES + 1)] {
        assert!(matches!(
            store.create("x", kind, None).await,
            Err(BlobError::Invalid(message)) if message.contains("`kind`")
        ));
    }
    let meta = store
        .create("x", "text/plain; charset=utf-8", None)
        .await
        .unwrap();
    // A record an older version wrote with a huge kind is refused, not read into answers.
    let id = meta.blob_id.strip_prefix("blob:").unwrap();
    let huge = serde_json::to_vec(&BlobMeta {
        kind: "k".repeat(1024 * 1024),
        ..meta.clone()
    })
    .unwrap();
    std::fs::write(folder.path().join(format!("meta/{id}.json")), huge).unwrap();
    assert!(matches!(
        read(&store, &meta.blob_id, ReadMode::Head, None).await,
        Err(BlobError::Storage(message)) if message.contains("more than the 65536")
    ));
}

#[tokio::test]
async fn a_sample_is_text_when_only_its_ends_cut_a_character() {
    let folder = tempfile::tempdir().unwrap();
    let store = BlobStore::local(folder.path(), DEFAULT_BLOB_TTL).unwrap();
    // "é" is two bytes: a head of 2 bytes cuts the second "é" in half.
    let meta = store.create("aéé", "text/plain", None).await.unwrap();
    let head = read(&store, &meta.blob_id, ReadMode::Head, Some(4))
        .await
        .unwrap();
    assert_eq!(head.text().as_deref(), Some("a\u{e9}\u{fffd}"));
    // The same bytes whole are not text: a blob that is not UTF-8 is binary.
    let cut = store
        .create_bytes(head.bytes.clone(), "text/plain")
        .await
        .unwrap();
    let whole = read(&store, &cut.blob_id, ReadMode::Full, None)
        .await
        .unwrap();
    assert_eq!((whole.truncated, whole.text()), (false, None));
    // A cut sample holding a NUL byte is binary.
    let nul = store
        .create_bytes(
            bytes::Bytes::from_static(b"\0\xc3\xa9\xc3\xa9"),
            "application/octet-stream",
        )
        .await
        .unwrap();
    let sample = read(&store, &nul.blob_id, ReadMode::Head, Some(4))
        .await
        .unwrap();
    assert_eq!((sample.truncated, sample.text()), (true, None));
}
