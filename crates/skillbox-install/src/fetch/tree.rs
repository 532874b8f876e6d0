//! Writing a fetched tree (a git tree, an archive's entries) into a private staging folder,
//! entry by entry, under limits and with every name checked before it becomes a path.
//!
//! Names must be plain relative paths (no `.`, `..`, empty or absolute parts, no NUL, UTF-8),
//! `.git` folders are dropped, files are created new (never over an entry, never through a
//! link), and links are made last, only when their target stays inside the tree, so no entry
//! is ever written through one.

use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::InstallError;
use crate::limits::InstallLimits;

/// A tree being written into `root`.
pub(crate) struct TreeWriter<'limits> {
    root: PathBuf,
    source_text: String,
    limits: &'limits InstallLimits,
    entries: usize,
    bytes: u64,
    links: BTreeMap<String, String>,
}

impl<'limits> TreeWriter<'limits> {
    /// A writer into the empty folder `root`, for messages about `source_text`.
    pub(crate) fn new(root: &Path, source_text: &str, limits: &'limits InstallLimits) -> Self {
        TreeWriter {
            root: root.to_path_buf(),
            source_text: source_text.to_owned(),
            limits,
            entries: 0,
            bytes: 0,
            links: BTreeMap::new(),
        }
    }

    fn refused(&self, message: String) -> InstallError {
        InstallError::refused(self.source_text.clone(), message)
    }

    /// The checked relative path of an entry, or `None` for entries that are skipped (`.git`).
    fn checked(&mut self, name: &[u8]) -> Result<Option<String>, InstallError> {
        self.entries += 1;
        if self.entries > self.limits.max_source_entries {
            return Err(self.refused(format!(
                "it holds more than {} entries",
                self.limits.max_source_entries
            )));
        }
        let Ok(text) = std::str::from_utf8(name) else {
            return Err(self.refused(format!(
                "entry `{}` has a name that is not UTF-8",
                String::from_utf8_lossy(name)
            )));
        };
        let trimmed = text.trim_end_matches('/');
        if trimmed.is_empty() || trimmed.starts_with('/') || trimmed.contains('\0') {
            return Err(self.refused(format!(
                "entry `{text}` is not a relative path inside the source"
            )));
        }
        let parts: Vec<&str> = trimmed.split('/').collect();
        if parts
            .iter()
            .any(|part| part.is_empty() || *part == "." || *part == ".." || part.contains('\\'))
        {
            return Err(self.refused(format!(
                "entry `{text}` would leave the source (an empty, `.` or `..` part)"
            )));
        }
        // `.GIT` is `.git` on a case-insensitive disk (macOS, Windows): dropped alike, so a
        // fetched tree never makes the folder it lands in a repository with its own config.
        if parts.iter().any(|part| part.eq_ignore_ascii_case(".git")) {
            return Ok(None);
        }
        if let Some(link) = self
            .links
            .keys()
            .find(|link| trimmed.starts_with(&format!("{link}/")))
        {
            return Err(self.refused(format!("entry `{text}` lies under the link `{link}`")));
        }
        Ok(Some(trimmed.to_owned()))
    }

    /// A folder.
    pub(crate) fn folder(&mut self, name: &[u8]) -> Result<(), InstallError> {
        let Some(relative) = self.checked(name)? else {
            return Ok(());
        };
        let path = self.root.join(&relative);
        fs_err::create_dir_all(&path).map_err(|error| InstallError::io("create", &path, error))
    }

    /// A regular file with `content`, at most `declared_size` bytes when known.
    pub(crate) fn file(
        &mut self,
        name: &[u8],
        content: &mut dyn Read,
        executable: bool,
    ) -> Result<(), InstallError> {
        let Some(relative) = self.checked(name)? else {
            return Ok(());
        };
        let path = self.root.join(&relative);
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent)
                .map_err(|error| InstallError::io("create", parent, error))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(i32::try_from(rustix::fs::OFlags::NOFOLLOW.bits()).unwrap_or(0))
            .open(&path)
            .map_err(|error| {
                if error.kind() == std::io::ErrorKind::AlreadyExists {
                    self.refused(format!("entry `{relative}` appears twice"))
                } else {
                    InstallError::io("write", &path, error)
                }
            })?;
        let remaining = self.limits.max_source_bytes.saturating_sub(self.bytes);
        let written = std::io::copy(&mut content.take(remaining.saturating_add(1)), &mut file)
            .map_err(|error| InstallError::io("write", &path, error))?;
        self.bytes += written;
        if self.bytes > self.limits.max_source_bytes {
            return Err(self.refused(format!(
                "it unpacks to more than {} bytes",
                self.limits.max_source_bytes
            )));
        }
        let mode = if executable { 0o755 } else { 0o644 };
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|error| InstallError::io("write", &path, error))?;
        Ok(())
    }

    /// Refuse a file of `size` bytes before it is read into memory when it is more than what
    /// is left of the bytes the source may unpack to.
    pub(crate) fn check_size(&self, path: &str, size: u64) -> Result<(), InstallError> {
        let remaining = self.limits.max_source_bytes.saturating_sub(self.bytes);
        if size > remaining {
            return Err(self.refused(format!(
                "it unpacks to more than {} bytes (`{path}` alone is {size})",
                self.limits.max_source_bytes
            )));
        }
        Ok(())
    }

    /// A symbolic link to `target`, made by [`TreeWriter::finish`] once every entry is written.
    pub(crate) fn link(&mut self, name: &[u8], target: &[u8]) -> Result<(), InstallError> {
        let Some(relative) = self.checked(name)? else {
            return Ok(());
        };
        let target = std::str::from_utf8(target).map_err(|_| {
            self.refused(format!("link `{relative}` has a target that is not UTF-8"))
        })?;
        if !link_stays_inside(&relative, target) {
            return Err(self.refused(format!(
                "link `{relative}` points to `{target}`, outside the source"
            )));
        }
        self.links.insert(relative, target.to_owned());
        Ok(())
    }

    /// Make the links; no more entries follow. Each link must still resolve inside the tree
    /// when the other links are followed as the system follows them (`a/l -> ..` makes
    /// `b -> a/l/../..` leave the tree, though each looks inside on its own).
    pub(crate) fn finish(self) -> Result<(), InstallError> {
        if let Some((relative, target)) = escaping_link(&self.links) {
            return Err(self.refused(format!(
                "link `{relative}` points to `{target}`, which leaves the source through its other links"
            )));
        }
        for (relative, target) in &self.links {
            let path = self.root.join(relative);
            if let Some(parent) = path.parent() {
                fs_err::create_dir_all(parent)
                    .map_err(|error| InstallError::io("create", parent, error))?;
            }
            fs_err::os::unix::fs::symlink(target, &path)
                .map_err(|error| InstallError::io("create the link", &path, error))?;
        }
        Ok(())
    }
}

/// Whether a link at `relative` (inside some root) pointing to `target` resolves, lexically,
/// to a path inside that root.
pub(crate) fn link_stays_inside(relative: &str, target: &str) -> bool {
    if target.is_empty() || target.starts_with('/') {
        return false;
    }
    let mut depth: Vec<&str> = relative.split('/').collect();
    depth.pop();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if depth.pop().is_none() {
                    return false;
                }
            }
            other => depth.push(other),
        }
    }
    true
}

/// Most links followed while resolving one link (as the system's `MAXSYMLINKS`).
const MAX_LINK_HOPS: usize = 40;

/// Whether the link at `relative` pointing to `target` resolves inside the root, following
/// the root's other links (`links`: path to target, every path `/`-separated from the root) as
/// the system does: a link met on the way is replaced by its target before the path goes on,
/// so `..` after it climbs from where it points, not from where it sits. A chain that loops or
/// is longer than [`MAX_LINK_HOPS`] counts as leaving.
pub(crate) fn link_resolves_inside(
    relative: &str,
    target: &str,
    links: &BTreeMap<String, String>,
) -> bool {
    let mut folder: Vec<String> = relative.split('/').map(str::to_owned).collect();
    folder.pop();
    // The parts still to walk; a link met is replaced by its target's parts.
    let mut pending: VecDeque<String> = VecDeque::new();
    let queue = |pending: &mut VecDeque<String>, target: &str| {
        if target.is_empty() || target.starts_with('/') {
            return false;
        }
        for part in target.split('/').rev() {
            pending.push_front(part.to_owned());
        }
        true
    };
    if !queue(&mut pending, target) {
        return false;
    }
    let mut hops = 0;
    while let Some(part) = pending.pop_front() {
        match part.as_str() {
            "" | "." => {}
            ".." => {
                if folder.pop().is_none() {
                    return false;
                }
            }
            name => {
                folder.push(name.to_owned());
                if let Some(next) = links.get(&folder.join("/")) {
                    hops += 1;
                    folder.pop();
                    if hops > MAX_LINK_HOPS || !queue(&mut pending, next) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// The first link of `links` that does not resolve inside their root
/// ([`link_resolves_inside`]).
pub(crate) fn escaping_link(links: &BTreeMap<String, String>) -> Option<(&str, &str)> {
    links
        .iter()
        .find(|(relative, target)| !link_resolves_inside(relative, target, links))
        .map(|(relative, target)| (relative.as_str(), target.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_must_resolve_inside() {
        assert!(link_stays_inside("a/b", "c"));
        assert!(link_stays_inside("a/b", "../c"));
        assert!(!link_stays_inside("a/b", "../../c"));
        assert!(!link_stays_inside("a", "/etc/passwd"));
        assert!(!link_stays_inside("a", "../x"));
    }

    #[test]
    fn links_are_resolved_through_the_other_links() {
        let links = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(path, target)| ((*path).to_owned(), (*target).to_owned()))
                .collect()
        };
        // `d/l1` goes up one folder; each `d/l1/..` climbs two where it looks like none.
        let chain = links(&[("d/l1", ".."), ("l2", "d/l1/../d/l1/../../etc/passwd")]);
        assert!(link_stays_inside("l2", "d/l1/../d/l1/../../etc/passwd"));
        assert!(!link_resolves_inside("l2", &chain["l2"], &chain));
        assert_eq!(escaping_link(&chain).map(|(path, _)| path), Some("l2"));
        // Chains that stay inside, and loops.
        let fine = links(&[("a", "b"), ("b", "c/d"), ("c/e", "../a"), ("x", "c/e")]);
        assert_eq!(escaping_link(&fine), None);
        let looping = links(&[("a", "b"), ("b", "a")]);
        assert!(escaping_link(&looping).is_some());
        let self_loop = links(&[("a/b", "../a/b")]);
        assert!(escaping_link(&self_loop).is_some());
    }

    #[test]
    fn a_git_folder_in_any_case_is_dropped() {
        let temp = tempfile::tempdir().unwrap();
        let limits = InstallLimits::default();
        let mut writer = TreeWriter::new(temp.path(), "test", &limits);
        for name in [&b".GIT/config"[..], b"a/.Git/hooks/x", b".git/config"] {
            writer.file(name, &mut &b"x"[..], false).unwrap();
        }
        writer.finish().unwrap();
        assert_eq!(fs_err::read_dir(temp.path()).unwrap().count(), 0);
    }

    #[test]
    fn entries_are_checked_before_they_become_paths() {
        let temp = tempfile::tempdir().unwrap();
        let limits = InstallLimits::default();
        let mut writer = TreeWriter::new(temp.path(), "test", &limits);
        for bad in [&b"../x"[..], b"/abs", b"a/../../b", b"", b"a//b"] {
            let error = writer.file(bad, &mut &b"x"[..], false).unwrap_err();
            assert!(error.to_string().contains("refused `test`"), "{error}");
        }
        writer.link(b"out", b"sub").unwrap();
        let error = writer.file(b"out/x", &mut &b"x"[..], false).unwrap_err();
        assert!(error.to_string().contains("under the link"), "{error}");
        writer.file(b"ok/file", &mut &b"x"[..], true).unwrap();
        let error = writer.file(b"ok/file", &mut &b"y"[..], true).unwrap_err();
        assert!(error.to_string().contains("twice"), "{error}");
        writer.file(b".git/config", &mut &b"x"[..], false).unwrap();
        writer.finish().unwrap();
        assert!(!temp.path().join(".git").exists());
        assert!(temp.path().join("out").is_symlink());
    }
}
