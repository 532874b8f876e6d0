//! Integration tests of what the suites share, through the crate's public API: `browser` holds
//! the headless-Chromium harness against pages served on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod browser;
