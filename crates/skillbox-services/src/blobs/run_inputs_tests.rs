//! Runs get readable copies; the store stays private.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::blobs::{BlobError, BlobStore, DEFAULT_BLOB_TTL};

#[tokio::test]
async fn the_store_is_private_and_runs_get_readable_copies() {
    let folder = tempfile::tempdir().unwrap();
    let root = folder.path().join("blobs");
    let store = BlobStore::local(&root, DEFAULT_BLOB_TTL).unwrap();
    let meta = store.create("private", "text/plain", None).await.unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let id = meta.blob_id.strip_prefix("blob:").unwrap();
    assert_eq!(mode(&root), 0o700);
    assert_eq!(mode(&root.join("data").join(id)), 0o600);
    assert_eq!(mode(&root.join("meta").join(format!("{id}.json"))), 0o600);
    let copies = folder.path().join("copies");
    std::fs::create_dir(&copies).unwrap();
    let copy = store.copy_for_run(&meta, &copies).await.unwrap();
    assert_eq!(mode(&copy), 0o644);
    assert_eq!(fs_err::read_to_string(&copy).unwrap(), "private");
    assert!(matches!(
        store.meta("blob:00000000000000000000000000000000").await,
        Err(BlobError::NotFound(_))
    ));
    // Swept after its metadata was read.
    fs_err::remove_file(root.join("data").join(id)).unwrap();
    assert!(matches!(
        store.copy_for_run(&meta, &copies).await,
        Err(BlobError::NotFound(_))
    ));
}
