//! Git hosting for the tests of installing skills from repositories: real repositories built
//! with the `git` CLI ([`GitRepo`]), served over smart HTTP by git's own `http-backend` run as
//! a CGI program ([`GitHttpServer`], optionally behind a token), and over the git protocol by
//! `git daemon` ([`GitDaemon`]). Servers listen on 127.0.0.1 with port 0 and kill the git
//! processes they started when dropped.
//!
//! Every git process here runs with an empty `HOME`, no system config and no inherited `GIT_*`
//! variables ([`isolate_git`]): the machine's git settings, or a git hook running the tests
//! (which sets `GIT_DIR` and `GIT_INDEX_FILE`), cannot change what the tests see.
//!
//! One concept per file: isolated git commands (`isolated_git`), the repositories
//! (`git_repo`), the folder a server serves them from (`served_repositories`), the process
//! groups of the git processes a server starts (`process_groups`), the smart-HTTP server
//! (`http_server`) and the `git daemon` (`daemon`).

mod daemon;
mod git_repo;
mod http_server;
mod isolated_git;
mod process_groups;
mod served_repositories;

pub use crate::local_http::ReceivedRequest;
pub use daemon::GitDaemon;
pub use git_repo::GitRepo;
pub use http_server::GitHttpServer;
pub use isolated_git::{git_command, isolate_git};

#[cfg(test)]
mod tests;
