//! The sweep removes what killed servers left, and nothing else.

use crate::blobs::reading::tests::read;
use crate::blobs::{BlobStore, DEFAULT_BLOB_TTL, DEFAULT_ORPHAN_GRACE, ReadMode};

#[tokio::test]
async fn the_sweep_removes_staged_uploads_a_killed_server_left() {
    let folder = tempfile::tempdir().unwrap();
    let store = BlobStore::local(folder.path(), DEFAULT_BLOB_TTL).unwrap();
    let kept = store.create("kept", "text/plain", None).await.unwrap();
    let data = folder.path().join("data");
    let (old, fresh, other) = (
        data.join(format!("{}#3", "ab".repeat(16))),
        data.join(format!("{}#4", "cd".repeat(16))),
        data.join("notes#5"),
    );
    for path in [&old, &fresh, &other] {
        fs_err::write(path, "part of an upload").unwrap();
    }
    let long_ago = std::time::SystemTime::now() - 2 * DEFAULT_ORPHAN_GRACE;
    for path in [&old, &other] {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
    }
    assert_eq!(store.sweep().await.unwrap(), 1);
    assert!(!old.exists(), "a killed upload's staged file was kept");
    assert!(fresh.exists(), "an upload in progress was removed");
    assert!(
        other.exists(),
        "a file that is not a staged upload was removed"
    );
    let full = read(&store, &kept.blob_id, ReadMode::Full, None)
        .await
        .unwrap();
    assert_eq!(full.text().as_deref(), Some("kept"));
}
