//! Sources on this machine that a project's manifest or lock names: a folder or archive path,
//! or a `file://` git repository. A cloned repository writes its manifest and lock, so what
//! they name is the repository's choice, not the user's. A source outside the project is read
//! only when the user named it to `skillbox add` in that project, which is recorded in the
//! user's own trust file ([`TrustStore::confirm_local_source`]), never in the project. A
//! repository inside the project must not lead git elsewhere: no link out of it, no
//! `alternates` or `commondir` file, no `.git` file pointing at another repository.
//!
//! The user's own scope (`--global`) is the user's: its manifest and lock are trusted.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use skillbox_trust::TrustStore;

use crate::error::InstallError;
use crate::scope::InstallScope;
use crate::source::{Location, SourceSpec};

/// Files by which a git repository takes objects or refs from another one.
const REDIRECTING_GIT_FILES: &[&str] = &["alternates", "http-alternates", "commondir"];

/// A place on this machine a source names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LocalPlace {
    /// A folder or an archive file.
    Path(PathBuf),
    /// A git repository (`file://`).
    Repository(PathBuf),
    /// A `file:` URL whose path cannot be told (another host, a relative path).
    Unknown,
}

impl LocalPlace {
    /// The place `spec` names on this machine, when it names one.
    pub(crate) fn of(spec: &SourceSpec) -> Option<LocalPlace> {
        match &spec.location {
            Location::Path(path) => Some(LocalPlace::Path(path.clone())),
            Location::Git(url)
                if url
                    .get(..5)
                    .is_some_and(|s| s.eq_ignore_ascii_case("file:")) =>
            {
                Some(repository_git_reads(url).map_or(LocalPlace::Unknown, LocalPlace::Repository))
            }
            _ => None,
        }
    }

    /// The real path (links resolved; spelled out without `..` when it does not exist).
    fn real_path(&self) -> Option<PathBuf> {
        match self {
            LocalPlace::Path(path) | LocalPlace::Repository(path) => Some(real_path(path)),
            LocalPlace::Unknown => None,
        }
    }
}

/// The folder git reads for the `file:` URL `url`, parsed as git parses it: the path taken
/// byte for byte (no percent-decoding, no `..` taken away by spelling, so that a `..` after a
/// link leads where the file system takes it); `None` for a URL git would not read as a
/// folder of this machine (one naming a host, say).
fn repository_git_reads(url: &str) -> Option<PathBuf> {
    let parsed = gix::url::parse(url.as_bytes()).ok()?;
    if parsed.scheme != gix::url::Scheme::File
        || parsed.host.is_some()
        || parsed.user.is_some()
        || parsed.port.is_some()
    {
        return None;
    }
    let path = gix::path::from_bstr(&parsed.path).ok()?;
    path.is_absolute().then(|| path.into_owned())
}

/// `path` with its links resolved; when it cannot be (it does not exist), absolute with `.`
/// and `..` taken away by spelling.
fn real_path(path: &Path) -> PathBuf {
    if let Ok(real) = fs_err::canonicalize(path) {
        return real;
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut clean = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other.as_os_str()),
        }
    }
    clean
}

/// The real path of a local source outside the project (or one whose place cannot be told:
/// `None` inside), for a project scope; `None` for the user's scope and other sources.
pub(crate) fn outside_project(scope: &InstallScope, spec: &SourceSpec) -> Option<Option<PathBuf>> {
    if scope.global {
        return None;
    }
    let place = LocalPlace::of(spec)?;
    let base = real_path(&scope.base);
    match place.real_path() {
        Some(real) if real.starts_with(&base) => None,
        real => Some(real),
    }
}

/// Refuse a local source that the entry `name` of the project file `named_in` (its manifest
/// or lock) names, unless it lies inside the project (and, for a repository, leads nowhere
/// else) or the user confirmed it for this project with `skillbox add`. The message names
/// neither what the folder holds nor its digest.
///
/// # Errors
/// [`InstallError::Refused`].
pub(crate) fn check_named_source(
    scope: &InstallScope,
    trust: Option<&TrustStore>,
    spec: &SourceSpec,
    name: &str,
    named_in: &Path,
) -> Result<(), InstallError> {
    if scope.global {
        return Ok(());
    }
    let Some(place) = LocalPlace::of(spec) else {
        return Ok(());
    };
    match outside_project(scope, spec) {
        None => {
            if let LocalPlace::Repository(path) = &place {
                check_repository(&real_path(path), &spec.text)?;
            }
            Ok(())
        }
        Some(Some(real))
            if trust.is_some_and(|trust| trust.local_source_confirmed(&scope.lock, &real)) =>
        {
            Ok(())
        }
        Some(_) => {
            let what = if matches!(place, LocalPlace::Path(_)) {
                "a folder or archive"
            } else {
                "a git repository"
            };
            Err(InstallError::refused(
                spec.text.clone(),
                format!(
                    "`{name}` in `{}` names {what} of this machine outside the project; a project's manifest and lock are the project's own (a cloned repository writes them), so skillbox reads such a source only when you named it to `skillbox add` in this project. If you mean to copy that folder's skills into this project, run `skillbox add {}` yourself",
                    named_in.display(),
                    spec.text
                ),
            ))
        }
    }
}

/// Refuse a repository (inside the project) that can lead git elsewhere: a `.git` that is a
/// file or a link, a folder that is not a repository (git would then try `NAME.git` beside it),
/// a link leaving it, or a file by which git takes objects or refs from another repository.
fn check_repository(folder: &Path, source_text: &str) -> Result<(), InstallError> {
    let refuse = |message: String| InstallError::refused(source_text, message);
    let dot_git = folder.join(".git");
    let git_folder = match fs_err::symlink_metadata(&dot_git) {
        Ok(metadata) if metadata.is_dir() => dot_git,
        Ok(_) => {
            return Err(refuse(
                "its `.git` is a file or a link, which can send git to another repository; a repository in the project must hold its own `.git` folder".to_owned(),
            ));
        }
        Err(_) => folder.to_path_buf(),
    };
    let is_repository = fs_err::symlink_metadata(git_folder.join("HEAD"))
        .is_ok_and(|metadata| metadata.is_file())
        && fs_err::symlink_metadata(git_folder.join("objects"))
            .is_ok_and(|metadata| metadata.is_dir());
    if !is_repository {
        return Err(refuse(
            "it is not a git repository (no `HEAD` file and `objects` folder of its own)"
                .to_owned(),
        ));
    }
    let mut redirecting = None;
    let links = crate::discover::walk_links(&git_folder, &mut |relative, _| {
        let file_name = relative.rsplit('/').next().unwrap_or(relative);
        if redirecting.is_none() && REDIRECTING_GIT_FILES.contains(&file_name) {
            redirecting = Some(relative.to_owned());
        }
    })
    .map_err(refuse)?;
    if let Some(file) = redirecting {
        return Err(refuse(format!(
            "its `{file}` makes git read another repository; a repository in the project must hold its own objects"
        )));
    }
    refuse_escaping_links(&links, "the repository").map_err(refuse)
}

/// The first link of `links` (paths inside a folder and their targets) that leaves the folder,
/// on its own or through the others, as a message.
fn refuse_escaping_links(links: &BTreeMap<String, String>, what: &str) -> Result<(), String> {
    match crate::fetch::tree::escaping_link(links) {
        Some((path, target)) => Err(format!(
            "`{path}` is a link to `{target}`, outside {what}; nothing is read through a link that leaves it"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelled_out_paths_lose_their_dots() {
        assert_eq!(
            real_path(Path::new("/nonexistent-x/a/../../b/./c")),
            PathBuf::from("/b/c")
        );
    }

    #[test]
    fn file_urls_name_repositories() {
        let spec = |text: &str| SourceSpec::parse(text, Path::new("/")).unwrap();
        assert_eq!(
            LocalPlace::of(&spec("file:///srv/skills.git")),
            Some(LocalPlace::Repository(PathBuf::from("/srv/skills.git")))
        );
        assert_eq!(
            LocalPlace::of(&spec("FILE://elsewhere/skills.git")),
            Some(LocalPlace::Unknown)
        );
        assert_eq!(LocalPlace::of(&spec("https://example.com/o/r.git")), None);
        // As git reads them: no `..` taken away by spelling, no percent-decoding.
        assert_eq!(
            LocalPlace::of(&spec("file:///srv/link/../skills.git")),
            Some(LocalPlace::Repository(PathBuf::from(
                "/srv/link/../skills.git"
            )))
        );
        assert_eq!(
            LocalPlace::of(&spec("file:///srv/%2e%2e/skills.git")),
            Some(LocalPlace::Repository(PathBuf::from(
                "/srv/%2e%2e/skills.git"
            )))
        );
        assert_eq!(
            LocalPlace::of(&spec("file://localhost/srv/skills.git")),
            Some(LocalPlace::Unknown)
        );
    }
}
