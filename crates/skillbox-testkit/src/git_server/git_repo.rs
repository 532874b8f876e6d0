//! [`GitRepo`]: a real repository built with the `git` CLI in a temporary folder, configured to
//! be served as a forge serves one.

use std::path::{Path, PathBuf};

use super::isolated_git::{git_command, run_git};

/// A git repository with a working tree in a temporary folder (removed when dropped), on the
/// branch `main`, configured to be served: any commit can be fetched by its id, partial clones
/// (`--filter`) are allowed, and pushes over HTTP are refused.
#[derive(Debug)]
pub struct GitRepo {
    work_tree: PathBuf,
    home: PathBuf,
    _folder: tempfile::TempDir,
}

impl Default for GitRepo {
    fn default() -> Self {
        Self::new()
    }
}

impl GitRepo {
    /// An empty repository (no commits yet) on the branch `main`.
    #[must_use]
    pub fn new() -> Self {
        let folder = tempfile::Builder::new()
            .prefix("skillbox-git-repo-")
            .tempdir()
            .expect("a temporary folder");
        let home = folder.path().join("home");
        let work_tree = folder.path().join("repo");
        fs_err::create_dir_all(&home).expect("a home folder for git");
        let mut init = git_command(&home);
        init.args(["init", "--quiet", "--initial-branch=main"])
            .arg(&work_tree);
        run_git(init, "git init");
        let repo = GitRepo {
            work_tree,
            home,
            _folder: folder,
        };
        for (key, value) in [
            ("uploadpack.allowFilter", "true"),
            ("uploadpack.allowAnySHA1InWant", "true"),
            ("uploadpack.allowReachableSHA1InWant", "true"),
            ("uploadpack.allowTipSHA1InWant", "true"),
            ("http.receivepack", "false"),
        ] {
            repo.git(&["config", key, value]);
        }
        repo
    }

    /// The working tree.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.work_tree
    }

    /// The repository itself (`.git` in the working tree), what the servers serve.
    #[must_use]
    pub fn git_dir(&self) -> PathBuf {
        self.work_tree.join(".git")
    }

    /// Run `git arguments…` in the working tree (isolated as [`isolate_git`] says), failing the
    /// test when it fails; its stdout, trimmed.
    pub fn git(&self, arguments: &[&str]) -> String {
        let mut command = git_command(&self.home);
        command.current_dir(&self.work_tree).args(arguments);
        run_git(command, &format!("git {}", arguments.join(" ")))
    }

    /// Write `files` (path relative to the working tree, text), creating folders on the way.
    /// Nothing is committed until [`GitRepo::commit`].
    pub fn write(&self, files: &[(&str, &str)]) {
        crate::write_tree(&self.work_tree, files);
    }

    /// Write one executable file (mode 755, which git records as `100755`).
    pub fn write_executable(&self, path: &str, text: &str) {
        use std::os::unix::fs::PermissionsExt as _;
        self.write(&[(path, text)]);
        let path = self.work_tree.join(path);
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|error| panic!("cannot make {} executable: {error}", path.display()));
    }

    /// Make `path` a symbolic link to `target` (as written: relative, absolute or dangling).
    pub fn symlink(&self, path: &str, target: &str) {
        let link = self.work_tree.join(path);
        if let Some(parent) = link.parent() {
            fs_err::create_dir_all(parent).expect("the folder of a symbolic link");
        }
        std::os::unix::fs::symlink(target, &link)
            .unwrap_or_else(|error| panic!("cannot link {} to {target}: {error}", link.display()));
    }

    /// Remove a file, link or folder (with its contents) from the working tree.
    pub fn remove(&self, path: &str) {
        let path = self.work_tree.join(path);
        let metadata = fs_err::symlink_metadata(&path).expect("the path to remove exists");
        if metadata.is_dir() {
            fs_err::remove_dir_all(&path).expect("the folder can be removed");
        } else {
            fs_err::remove_file(&path).expect("the file can be removed");
        }
    }

    /// Commit everything in the working tree (additions, changes, removals; an empty commit
    /// when nothing changed) on the current branch; the new commit's full 40-hex id.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "--all"]);
        self.git(&["commit", "--quiet", "--allow-empty", "--message", message]);
        self.rev_parse("HEAD")
    }

    /// Tag the current commit (a lightweight tag, as `git tag name`).
    pub fn tag(&self, name: &str) {
        self.git(&["tag", name]);
    }

    /// Tag the current commit with an annotated tag (a tag object, as releases usually are).
    pub fn annotated_tag(&self, name: &str, message: &str) {
        self.git(&["tag", "--annotate", "--message", message, name]);
    }

    /// Create the branch `name` at the current commit and switch to it: later commits go there.
    pub fn branch(&self, name: &str) {
        self.git(&["switch", "--quiet", "--create", name]);
    }

    /// Switch to the existing branch `name` (the working tree follows).
    pub fn checkout(&self, name: &str) {
        self.git(&["switch", "--quiet", name]);
    }

    /// The full commit id `revision` (a branch, tag, `HEAD~1`) names.
    #[must_use]
    pub fn rev_parse(&self, revision: &str) -> String {
        self.git(&["rev-parse", "--verify", &format!("{revision}^{{commit}}")])
    }
}
