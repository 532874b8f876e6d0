//! skillbox-server: the Skills Protocol over JSON-RPC 2.0 at `POST /rpc`, with blobs and runs. The router
//! is a plain function of the state, so tests drive it with or without a socket.

pub mod access;
mod answers;
pub mod blobs;
pub mod data_dir;
pub mod protocol;
pub mod runs;
pub mod server;
mod stalled_writes;

pub use access::AccessPolicy;
pub use blobs::{BlobError, BlobStore};
pub use data_dir::DataDir;
pub use runs::{RunGate, RunLimits};
pub use server::{
    AppState, ServeError, bind, check_listen, router, serve, serve_listener, serve_on,
    serve_with_grace,
};
