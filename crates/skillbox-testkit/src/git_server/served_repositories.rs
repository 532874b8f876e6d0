//! The folder a git server serves repositories from: `owner/name.git` links to [`GitRepo`]s,
//! and the `HOME` of the server's git processes.

use std::path::PathBuf;

use super::git_repo::GitRepo;

/// The folder a server serves repositories from (`owner/name.git` links to the repositories),
/// removed when dropped: owned by the server, not by its tasks, which may outlive it a little.
#[derive(Debug)]
pub(super) struct ServedRepositories {
    pub(super) paths: RepositoryPaths,
    _folder: tempfile::TempDir,
}

/// Where a server's tasks find the served repositories, and the `HOME` of its git processes.
#[derive(Debug, Clone)]
pub(super) struct RepositoryPaths {
    pub(super) root: PathBuf,
    pub(super) home: PathBuf,
}

impl ServedRepositories {
    pub(super) fn new() -> Self {
        let folder = tempfile::Builder::new()
            .prefix("skillbox-git-server-")
            .tempdir()
            .expect("a temporary folder");
        let root = folder.path().join("repositories");
        let home = folder.path().join("home");
        fs_err::create_dir_all(&root).expect("the served folder");
        fs_err::create_dir_all(&home).expect("a home folder for git");
        ServedRepositories {
            paths: RepositoryPaths { root, home },
            _folder: folder,
        }
    }

    /// Serve `repo` as `name.git` (a link, so later commits are served too); a repository
    /// served under `name` before is replaced.
    pub(super) fn add(&self, name: &str, repo: &GitRepo) {
        assert!(
            !name.is_empty()
                && !name.starts_with('/')
                && !name.ends_with(".git")
                && name
                    .split('/')
                    .all(|part| !part.is_empty() && part != "." && part != ".."),
            "a served repository is named like `owner/name` (no `.git`), not `{name}`"
        );
        let link = self.paths.root.join(format!("{name}.git"));
        if let Some(parent) = link.parent() {
            fs_err::create_dir_all(parent).expect("the owner's folder");
        }
        if fs_err::symlink_metadata(&link).is_ok() {
            fs_err::remove_file(&link).expect("the old link can be removed");
        }
        std::os::unix::fs::symlink(repo.git_dir(), &link)
            .unwrap_or_else(|error| panic!("cannot link {}: {error}", link.display()));
    }
}
