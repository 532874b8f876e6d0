//! skillbox-server: the Skills Protocol over JSON-RPC 2.0 at `POST /rpc`. It is a thin door over
//! the provider's dispatcher (`SkillsProvider::protocol_call_within`), which answers the runs and
//! blobs from `skillbox-services`; the server keeps the HTTP and JSON-RPC concerns. The router is
//! a plain function of the state, so tests drive it with or without a socket.

pub mod access;
mod answers;
pub mod auth_throttle;
mod metrics;
pub mod protocol;
pub mod server;
mod stalled_writes;

pub use access::AccessPolicy;
pub use server::{
    AppState, ServeError, bind, check_listen, router, serve, serve_listener, serve_on,
    serve_with_grace,
};
/// The run and blob services live below the dispatcher, in `skillbox-services`; they are
/// re-exported here under the paths they had when they lived in this crate.
pub use skillbox_services::{BlobError, BlobStore, DataDir, RunGate, RunLimits, Services};
pub use skillbox_services::{blobs, data_dir, runs};
