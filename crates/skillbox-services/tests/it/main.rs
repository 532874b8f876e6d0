//! Integration tests of the run and blob services through the crate's public API:
//! `object_storage` holds the blob store on a real S3-compatible server.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod object_storage;
