//! Integration tests of the MCP server through the crate's public API: `subscriptions` holds
//! what a `subscriptions/listen` filter may hold.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod subscriptions;
