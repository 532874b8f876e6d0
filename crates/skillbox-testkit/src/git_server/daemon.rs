//! [`GitDaemon`]: the git protocol, answered by a `git daemon --inetd` started for each
//! connection on a port this listens on itself.

use std::os::fd::OwnedFd;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use super::git_repo::GitRepo;
use super::isolated_git::git_command;
use super::process_groups::ProcessGroups;
use super::served_repositories::{RepositoryPaths, ServedRepositories};

/// How long one `git daemon` connection may last before its processes are killed.
const DAEMON_CONNECTION_TIMEOUT: Duration = Duration::from_secs(120);
/// `git daemon --timeout`: seconds a connection may stay idle.
const DAEMON_IDLE_TIMEOUT_SECONDS: u32 = 60;

/// A `git daemon` serving [`GitRepo`]s as `git://127.0.0.1:PORT/owner/name.git`. `git daemon`
/// cannot say which port it took, so this listens itself and starts `git daemon --inetd` for
/// each connection, with the connection as its standard input and output.
#[derive(Debug)]
pub struct GitDaemon {
    port: u16,
    repositories: ServedRepositories,
    pub(super) processes: Arc<ProcessGroups>,
    accept_loop: tokio::task::AbortHandle,
}

impl GitDaemon {
    /// A daemon with no repositories yet.
    #[must_use]
    pub fn start() -> Self {
        let (listener, port) = crate::local_http::bind_loopback();
        let repositories = ServedRepositories::new();
        let processes = Arc::new(ProcessGroups::default());
        let paths = repositories.paths.clone();
        let started = Arc::clone(&processes);
        let accept_loop = crate::local_http::spawn_accept_loop(listener, move |stream| {
            serve_daemon_connection(stream, paths.clone(), Arc::clone(&started))
        });
        GitDaemon {
            port,
            repositories,
            processes,
            accept_loop,
        }
    }

    /// Serve `repo` as `name.git` (`name` like `owner/name`); later commits to `repo` are
    /// served too. `repo` must outlive its use through the daemon.
    pub fn add_repo(&self, name: &str, repo: &GitRepo) {
        self.repositories.add(name, repo);
    }

    /// `git://127.0.0.1:PORT/NAME.git`, the clone URL of a repository added as `name`.
    #[must_use]
    pub fn url(&self, name: &str) -> String {
        format!("{}/{name}.git", self.base_url())
    }

    /// `git://127.0.0.1:PORT`.
    #[must_use]
    pub fn base_url(&self) -> String {
        format!("git://127.0.0.1:{}", self.port)
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        self.accept_loop.abort();
        self.processes.stop();
    }
}

async fn serve_daemon_connection(
    stream: tokio::net::TcpStream,
    paths: RepositoryPaths,
    processes: Arc<ProcessGroups>,
) {
    // The daemon reads and writes the socket itself, blocking.
    let Ok(socket) = stream.into_std() else {
        return;
    };
    if socket.set_nonblocking(false).is_err() {
        return;
    }
    let input = OwnedFd::from(socket);
    let Ok(output) = input.try_clone() else {
        return;
    };
    let mut command = git_command(&paths.home);
    command
        .args([
            "daemon",
            "--inetd",
            "--export-all",
            "--enable=upload-pack",
            "--informative-errors",
            "--log-destination=stderr",
        ])
        .arg(format!("--timeout={DAEMON_IDLE_TIMEOUT_SECONDS}"))
        .arg(format!("--base-path={}", paths.root.display()))
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::from(input))
        .stdout(Stdio::from(output))
        .stderr(Stdio::piped());
    let Ok((child, guard)) = processes.spawn(command.into()) else {
        return;
    };
    if let Ok(Ok(output)) =
        tokio::time::timeout(DAEMON_CONNECTION_TIMEOUT, child.wait_with_output()).await
    {
        guard.finished();
        if !output.stderr.is_empty() {
            eprintln!(
                "git daemon: {}",
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
        }
    }
}
