//! Fetching a source's files into a private staging folder: git, archives, `.well-known`
//! indexes, local folders. Nothing fetched runs; every name is checked before it becomes a
//! path ([`tree`]).

pub(crate) mod git;
pub(crate) mod git_transport;
pub mod http;
pub mod origin;
pub(crate) mod tree;
pub(crate) mod unpack;
pub(crate) mod well_known;
