//! Only what the store made may be in its folder.

use std::os::unix::fs::PermissionsExt;

use crate::blobs::{BlobStore, DEFAULT_BLOB_TTL};

#[test]
fn a_folder_holding_what_the_store_did_not_make_is_refused_and_left_alone() {
    let folder = tempfile::tempdir().unwrap();
    let notes = folder.path().join("notes.txt");
    fs_err::write(&notes, "keep me").unwrap();
    fs_err::set_permissions(&notes, std::fs::Permissions::from_mode(0o644)).unwrap();
    let error = BlobStore::local(folder.path(), DEFAULT_BLOB_TTL)
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("holds `notes.txt`"), "{error}");
    assert!(error.contains("--blob-store"), "{error}");
    let mode = fs_err::metadata(&notes).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o644, "the file was touched");
    assert!(!folder.path().join("data").exists());
    // A new folder, and one the store made, are fine.
    let fresh = folder.path().join("fresh");
    BlobStore::local(&fresh, DEFAULT_BLOB_TTL).unwrap();
    BlobStore::local(&fresh, DEFAULT_BLOB_TTL).unwrap();
}
