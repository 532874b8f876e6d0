//! What a project folder may not hold for an install to touch it: a cloned repository (or
//! anyone who can write the project) controls every entry of it, so the folders an install
//! writes into and deletes from, and the manifest and lock it reads and replaces, must be the
//! project's own, never symbolic links that send the writes, deletions or reads elsewhere (the
//! user's skills folder, another project, `~/.ssh`, a credentials file whose lines a parse
//! error would print).
//!
//! The user's own scope (`--global`, the home folder) is the user's: links there (dotfiles
//! kept in a repository) are followed as they are.

use std::path::{Component, Path};

use crate::error::InstallError;
use crate::scope::InstallScope;

/// Refuse a project whose manifest or lock is a link, or whose `.agents` or `.agents/skills`
/// is one (or not a folder).
///
/// # Errors
/// [`InstallError::Refused`] naming the entry and what it points to.
pub(crate) fn check_project(scope: &InstallScope) -> Result<(), InstallError> {
    if scope.global {
        return Ok(());
    }
    for file in [&scope.manifest, &scope.lock] {
        if is_link(file) {
            return Err(InstallError::refused(
                file.display().to_string(),
                format!(
                    "it is a symbolic link (to `{}`); a project's manifest and lock must be files of its own, which skillbox neither reads through nor replaces; replace the link with the file",
                    link_target(file)
                ),
            ));
        }
    }
    check_real_folders(scope, &scope.install_folder)
}

/// Refuse an agent's skills folder (or a folder above it, inside the project) that is a link
/// or not a folder.
///
/// # Errors
/// As [`check_project`].
pub(crate) fn check_agent_folder(
    scope: &InstallScope,
    agent_folder: &Path,
) -> Result<(), InstallError> {
    if scope.global {
        return Ok(());
    }
    check_real_folders(scope, agent_folder)
}

/// Each folder from the project down to `folder` that exists must be a real folder.
fn check_real_folders(scope: &InstallScope, folder: &Path) -> Result<(), InstallError> {
    let Ok(relative) = folder.strip_prefix(&scope.base) else {
        return Ok(());
    };
    let mut path = scope.base.clone();
    for component in relative.components() {
        let Component::Normal(part) = component else {
            continue;
        };
        path.push(part);
        match fs_err::symlink_metadata(&path) {
            Ok(metadata) if metadata.is_symlink() => {
                return Err(InstallError::refused(
                    path.display().to_string(),
                    format!(
                        "it is a symbolic link (to `{}`); skillbox installs only into folders of the project itself, so that it never writes or deletes anything elsewhere; replace the link with a folder",
                        link_target(&path)
                    ),
                ));
            }
            Ok(metadata) if !metadata.is_dir() => {
                return Err(InstallError::refused(
                    path.display().to_string(),
                    "it is not a folder; move it away first",
                ));
            }
            Ok(_) => {}
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

/// Whether `path` is a symbolic link.
pub(crate) fn is_link(path: &Path) -> bool {
    fs_err::symlink_metadata(path).is_ok_and(|metadata| metadata.is_symlink())
}

fn link_target(path: &Path) -> String {
    fs_err::read_link(path)
        .map(|target| target.display().to_string())
        .unwrap_or_default()
}

/// A `path` from a manifest or lock (a skill's folder inside its source) that stays inside the
/// source: `/`-separated plain names, or empty for the source's root.
///
/// # Errors
/// The reason, for the caller's message.
pub(crate) fn check_source_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Ok(());
    }
    let plain = !path.starts_with('/')
        && !path.contains('\0')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    if plain {
        Ok(())
    } else {
        Err(format!(
            "`{path}` is not a folder path inside the source (names separated by `/`, no `.`, `..`, leading `/` or empty parts)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_paths_stay_inside() {
        // A backslash is a plain character of a name here, not a separator.
        for good in ["", "skills/pdf", "a", "x.y/z-1", "a\\..\\b"] {
            assert!(check_source_path(good).is_ok(), "{good}");
        }
        for bad in ["..", "../x", "a/../../b", "/etc", "a//b", "a/./b", "a/"] {
            assert!(check_source_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn links_in_a_project_are_refused_but_not_in_the_home_folder() {
        let temp = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let scope = InstallScope::project(temp.path());
        check_project(&scope).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), temp.path().join(".agents")).unwrap();
        let error = check_project(&scope).unwrap_err().to_string();
        assert!(
            error.contains(".agents") && error.contains("symbolic link"),
            "{error}"
        );
        let home = InstallScope {
            global: true,
            ..scope.clone()
        };
        check_project(&home).unwrap();
        std::fs::remove_file(temp.path().join(".agents")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &scope.manifest).unwrap();
        let error = check_project(&scope).unwrap_err().to_string();
        assert!(error.contains("skillbox.toml"), "{error}");
        assert!(!error.contains("root:"), "{error}");
    }
}
