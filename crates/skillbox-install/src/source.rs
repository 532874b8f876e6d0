//! What a SOURCE argument names: a local path, a git repository (with a reference and a
//! sub-path), an archive URL, or a `.well-known/agent-skills/` index.
//!
//! The forms:
//!
//! | form | kind |
//! |---|---|
//! | `./skills/pdf`, `/abs/path`, `~/x`, `pdf.skill`, `bundle.tar.gz` | a folder or archive here |
//! | `https://host/o/r.git[/sub/path][@ref or #ref]` | git over HTTP(S) |
//! | `ssh://…`, `git@host:o/r.git…`, `git://…`, `file://…` (same suffixes) | git |
//! | `owner/repo[/sub/path][@ref]` | git at the forge host (`SKILLBOX_FORGE`, default GitHub) |
//! | `https://…/x.zip`, `.skill`, `.tar.gz`, `.tgz` | an archive |
//! | `https://host[/base]/.well-known/agent-skills[/index.json]` | a discovery index |
//! | `https://host[/base]` | its discovery index, else a git repository there |

use std::path::{Path, PathBuf};

use skillbox_trust::lockfile::SourceKind;

use crate::error::InstallError;

/// The environment variable naming the forge host `owner/repo` sources resolve on.
pub const FORGE_ENVIRONMENT_VARIABLE: &str = "SKILLBOX_FORGE";
/// The forge `owner/repo` resolves on without [`FORGE_ENVIRONMENT_VARIABLE`].
pub const DEFAULT_FORGE: &str = "https://github.com";
/// The path of a discovery index below a site.
pub const WELL_KNOWN_PATH: &str = ".well-known/agent-skills";

/// A parsed SOURCE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSpec {
    /// The text as the manifest records it.
    pub text: String,
    /// Where to fetch from.
    pub location: Location,
    /// The folder inside the source to look in (`/`-separated, empty for its root).
    pub subpath: String,
    /// A branch, tag or commit asked for (git only).
    pub reference: Option<String>,
}

/// Where a source's files come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A folder or archive file on this machine (absolute).
    Path(PathBuf),
    /// A git repository URL (no reference or sub-path).
    Git(String),
    /// An archive at a URL.
    Archive(String),
    /// A discovery index URL (`…/.well-known/agent-skills/index.json`).
    WellKnown(String),
    /// An HTTP(S) site that may publish an index, or be a git repository.
    Site(String),
}

impl Location {
    /// The lock's kind for this location (a site is recorded as what it turned out to be).
    #[must_use]
    pub fn kind(&self) -> SourceKind {
        match self {
            Location::Path(_) => SourceKind::Path,
            Location::Git(_) => SourceKind::Git,
            Location::Archive(_) => SourceKind::Archive,
            Location::WellKnown(_) | Location::Site(_) => SourceKind::WellKnown,
        }
    }
}

/// Archive endings understood.
const ARCHIVE_ENDINGS: &[&str] = &[".zip", ".skill", ".tar.gz", ".tgz"];

/// Whether a name ends like an archive.
#[must_use]
pub fn is_archive_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ARCHIVE_ENDINGS.iter().any(|ending| lower.ends_with(ending))
}

impl SourceSpec {
    /// Parse SOURCE as given on the command line or in the manifest; relative paths are taken
    /// from `base` (the project folder).
    ///
    /// # Errors
    /// [`InstallError::BadSource`] naming the forms that work.
    pub fn parse(text: &str, base: &Path) -> Result<SourceSpec, InstallError> {
        let bad = |message: &str| InstallError::BadSource {
            source_text: text.to_owned(),
            message: message.to_owned(),
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(bad(
                "it is empty; name a folder, a git URL, `owner/repo`, an archive URL or a `.well-known/agent-skills/` URL",
            ));
        }
        if trimmed.chars().any(char::is_control) {
            return Err(bad("it contains control characters"));
        }
        let spec = |location, subpath: String, reference: Option<String>| SourceSpec {
            text: trimmed.to_owned(),
            location,
            subpath,
            reference,
        };
        if let Some(path) = local_path(trimmed, base) {
            return Ok(spec(Location::Path(path), String::new(), None));
        }
        let lower = trimmed.to_ascii_lowercase();
        let is_git_scheme = ["ssh://", "git://", "file://", "git+ssh://"]
            .iter()
            .any(|scheme| lower.starts_with(scheme))
            || is_scp_like(trimmed);
        if is_git_scheme {
            // A password in the URL would be written to the manifest and lock (and printed).
            if url::Url::parse(trimmed).is_ok_and(|parsed| parsed.password().is_some()) {
                return Err(bad(
                    "it carries a password; use your SSH agent or git credential helper",
                ));
            }
            let (repository, subpath, reference) = split_git(trimmed);
            return Ok(spec(
                Location::Git(repository),
                check_subpath(&subpath).map_err(|message| bad(&message))?,
                reference,
            ));
        }
        if lower.starts_with("https://") || lower.starts_with("http://") {
            let parsed = url::Url::parse(trimmed)
                .map_err(|error| bad(&format!("it is not a valid URL ({error})")))?;
            if !parsed.username().is_empty() || parsed.password().is_some() {
                return Err(bad(
                    "it carries credentials; give a token in the environment (see `skillbox add --help`) or use your git credential helper",
                ));
            }
            let path = parsed.path().to_owned();
            if path.contains(".git/")
                || path.ends_with(".git")
                || trimmed.contains(".git@")
                || trimmed.contains(".git#")
            {
                let (repository, subpath, reference) = split_git(trimmed);
                return Ok(spec(
                    Location::Git(repository),
                    check_subpath(&subpath).map_err(|message| bad(&message))?,
                    reference,
                ));
            }
            if is_archive_name(&path) {
                return Ok(spec(
                    Location::Archive(trimmed.to_owned()),
                    String::new(),
                    None,
                ));
            }
            if let Some(position) = path.find(&format!("/{WELL_KNOWN_PATH}")) {
                let mut index = parsed.clone();
                index.set_query(None);
                index.set_fragment(None);
                index.set_path(&format!(
                    "{}/{WELL_KNOWN_PATH}/index.json",
                    &path[..position]
                ));
                return Ok(spec(
                    Location::WellKnown(index.to_string()),
                    String::new(),
                    None,
                ));
            }
            let (site, reference) = match trimmed.rsplit_once('#') {
                Some((site, reference)) if !reference.is_empty() => {
                    (site.to_owned(), Some(reference.to_owned()))
                }
                _ => (trimmed.to_owned(), None),
            };
            return Ok(spec(Location::Site(site), String::new(), reference));
        }
        if let Some(shorthand) = forge_shorthand(trimmed) {
            let (owner_repo, subpath, reference) = shorthand;
            let forge = std::env::var(FORGE_ENVIRONMENT_VARIABLE)
                .ok()
                .filter(|forge| !forge.is_empty())
                .unwrap_or_else(|| DEFAULT_FORGE.to_owned());
            let repository = format!("{}/{owner_repo}.git", forge.trim_end_matches('/'));
            return Ok(spec(
                Location::Git(repository),
                check_subpath(&subpath).map_err(|message| bad(&message))?,
                reference,
            ));
        }
        Err(bad(
            "it is not an existing path, a URL, or `owner/repo`; forms: `./folder`, `pdf.skill`, `https://host/o/r.git@v1`, `owner/repo/skills/pdf@main`, `https://host/.well-known/agent-skills/`",
        ))
    }

    /// The same source at another reference (for `update` and the lock).
    #[must_use]
    pub fn with_reference(mut self, reference: Option<String>) -> SourceSpec {
        self.reference = reference;
        self
    }

    /// The location's text (a URL or path) for the lock and messages.
    #[must_use]
    pub fn location_text(&self) -> String {
        match &self.location {
            Location::Path(path) => path.display().to_string(),
            Location::Git(url)
            | Location::Archive(url)
            | Location::WellKnown(url)
            | Location::Site(url) => url.clone(),
        }
    }
}

/// A path on this machine, when `text` names one that exists or is written as a path.
fn local_path(text: &str, base: &Path) -> Option<PathBuf> {
    let expanded = if let Some(rest) = text.strip_prefix("~/") {
        std::env::var_os("HOME").map(|home| PathBuf::from(home).join(rest))?
    } else {
        PathBuf::from(text)
    };
    let written_as_path = text.starts_with("./")
        || text.starts_with("../")
        || text.starts_with('/')
        || text.starts_with("~/")
        || text == "."
        || text == "..";
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        base.join(expanded)
    };
    let exists = !text.contains("://") && absolute.exists();
    (written_as_path || exists).then(|| std::path::absolute(&absolute).unwrap_or(absolute))
}

/// `user@host:path` (scp-like git), not a URL.
fn is_scp_like(text: &str) -> bool {
    let Some((before, after)) = text.split_once(':') else {
        return false;
    };
    before.contains('@') && !before.contains('/') && !after.starts_with("//") && !after.is_empty()
}

/// Split a git URL into the repository, the sub-path after `.git`, and a trailing `@ref` or
/// `#ref`.
fn split_git(text: &str) -> (String, String, Option<String>) {
    let (rest, reference) = if let Some((rest, reference)) = text.rsplit_once('#') {
        (rest.to_owned(), Some(reference.to_owned()))
    } else {
        // `@ref` counts only after the last `/` (so `git@host:` and `user@` stay put).
        match text.rfind('@') {
            Some(at) if text[at..].find('/').is_none() && text[..at].contains('/') => {
                (text[..at].to_owned(), Some(text[at + 1..].to_owned()))
            }
            _ => (text.to_owned(), None),
        }
    };
    let reference = reference.filter(|reference| !reference.is_empty());
    match rest.find(".git/") {
        Some(end) => (
            rest[..end + 4].to_owned(),
            rest[end + 5..].trim_matches('/').to_owned(),
            reference,
        ),
        None => (rest, String::new(), reference),
    }
}

/// `owner/repo[/sub/path][@ref]`.
fn forge_shorthand(text: &str) -> Option<(String, String, Option<String>)> {
    let (path, reference) = match text.rsplit_once('@') {
        Some((path, reference)) if !reference.contains('/') => (path, Some(reference.to_owned())),
        _ => (text, None),
    };
    let mut parts = path.split('/');
    let owner = parts.next()?;
    let repository = parts.next()?;
    let valid = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if !valid(owner) || !valid(repository) {
        return None;
    }
    let repository = repository.strip_suffix(".git").unwrap_or(repository);
    let subpath: Vec<&str> = parts.collect();
    Some((
        format!("{owner}/{repository}"),
        subpath.join("/"),
        reference.filter(|reference| !reference.is_empty()),
    ))
}

/// A sub-path that stays inside the source.
fn check_subpath(subpath: &str) -> Result<String, String> {
    let trimmed = subpath.trim_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    if trimmed
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return Err(format!(
            "its path `{subpath}` must be a plain folder path inside the source (no `.`, `..` or `//`)"
        ));
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> SourceSpec {
        SourceSpec::parse(text, Path::new("/nonexistent-base")).unwrap()
    }

    #[test]
    fn git_urls_split_into_repository_path_and_reference() {
        let spec = parse("https://example.com/o/r.git/skills/pdf@v1.2.0");
        assert_eq!(
            spec.location,
            Location::Git("https://example.com/o/r.git".into())
        );
        assert_eq!(spec.subpath, "skills/pdf");
        assert_eq!(spec.reference.as_deref(), Some("v1.2.0"));

        let spec = parse("file:///tmp/one.git#main");
        assert_eq!(spec.location, Location::Git("file:///tmp/one.git".into()));
        assert_eq!(spec.reference.as_deref(), Some("main"));

        let spec = parse("git@example.com:o/r.git/skills/x");
        assert_eq!(
            spec.location,
            Location::Git("git@example.com:o/r.git".into())
        );
        assert_eq!(spec.subpath, "skills/x");
        assert_eq!(spec.reference, None);
    }

    #[test]
    fn shorthand_uses_the_forge() {
        let spec = parse("anthropics/skills/skills/pdf@main");
        assert_eq!(
            spec.location,
            Location::Git(format!("{DEFAULT_FORGE}/anthropics/skills.git"))
        );
        assert_eq!(spec.subpath, "skills/pdf");
        assert_eq!(spec.reference.as_deref(), Some("main"));
    }

    #[test]
    fn archives_and_indexes_are_recognised() {
        assert!(matches!(
            parse("https://example.com/a/pdf.tar.gz").location,
            Location::Archive(_)
        ));
        assert_eq!(
            parse("https://example.com/docs/.well-known/agent-skills/").location,
            Location::WellKnown(
                "https://example.com/docs/.well-known/agent-skills/index.json".into()
            )
        );
        assert!(matches!(
            parse("https://example.com").location,
            Location::Site(_)
        ));
    }

    #[test]
    fn bad_sources_say_what_works() {
        for bad in [
            "",
            "o/../r",
            "https://user:pw@example.com/r.git",
            "https://x.com/r.git/a/../b",
            "ssh://git:hunter2@example.com/o/r.git",
        ] {
            let error = SourceSpec::parse(bad, Path::new("/"))
                .unwrap_err()
                .to_string();
            assert!(error.contains("not understood"), "{bad}: {error}");
        }
    }
}
