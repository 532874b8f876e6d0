//! Finding the skills in a fetched source: the source itself when it is one skill; the skill
//! folders a Claude or Codex plugin declares (`.claude-plugin/plugin.json`,
//! `.codex-plugin/plugin.json`: `skills`, default `skills/`); the plugins a marketplace
//! (`.claude-plugin/marketplace.json`) holds in the same source; else every skill folder below
//! it, including the agents' hidden folders (`.claude/skills`, `.agents/skills`, …). Each skill
//! found is validated as `skillbox validate` would, and its links must stay inside it. Every
//! folder searched and every skill found must lie inside the source's folder: one reached
//! through a link that leaves it (a committed `.agents/skills` pointing at the user's own
//! skills) is refused, never read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use skillbox_core::catalog::{CatalogOptions, SkillCatalog, SkillRoot};
use skillbox_core::source::SkillSource;
use skillbox_core::{DiagnosticCode, Severity, ValidationReport};

use crate::error::InstallError;
use crate::fetch::tree::link_resolves_inside;

/// Hidden folders that hold skills in a repository.
const HIDDEN_SKILL_FOLDERS: &[&str] = &[
    ".claude/skills",
    ".agents/skills",
    ".codex/skills",
    ".opencode/skills",
    ".github/skills",
    ".cursor/skills",
    ".gemini/skills",
    ".windsurf/skills",
];
/// Largest plugin or marketplace manifest read.
const MAX_PLUGIN_MANIFEST_BYTES: u64 = 1024 * 1024;

/// One skill found in a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSkill {
    /// Its name (from its frontmatter), which names its install folder.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its folder in the fetched copy.
    pub folder: PathBuf,
    /// Its folder relative to the source's root (`/`-separated).
    pub path_in_source: String,
    /// The skills it requires (`requires`), installed with it.
    pub requires: Vec<String>,
}

/// The skills in the fetched tree `root` (the source's root is `source_root`; `root` may be a
/// sub-path of it), named `source_text` in messages.
///
/// # Errors
/// [`InstallError::NotFound`] when there are none, [`InstallError::Invalid`] for a skill that
/// does not validate, [`InstallError::Refused`] for a link leaving a skill.
pub fn find_skills(
    root: &Path,
    source_root: &Path,
    source_text: &str,
) -> Result<Vec<FoundSkill>, InstallError> {
    find_skills_with(root, source_root, source_text, true)
}

/// [`find_skills`], validating each skill only when `validate`: without, a tree holding only
/// the skills' `SKILL.md` files (a git source's outline) gives the names and descriptions to
/// choose from; the skills chosen are validated once written whole.
///
/// # Errors
/// As [`find_skills`].
pub(crate) fn find_skills_with(
    root: &Path,
    source_root: &Path,
    source_text: &str,
    validate: bool,
) -> Result<Vec<FoundSkill>, InstallError> {
    let roots = skill_roots(root, source_text)?;
    let real_source = fs_err::canonicalize(source_root).map_err(|error| {
        InstallError::fetch(source_text, format!("it cannot be read ({error})"))
    })?;
    for folder in &roots {
        check_inside(folder, source_root, &real_source, source_text)?;
    }
    let catalog = SkillCatalog::load(&CatalogOptions {
        roots: roots.iter().map(SkillRoot::explicit).collect(),
        ..CatalogOptions::default()
    })
    .map_err(|error| InstallError::refused(source_text, error.to_string()))?;
    let report = ValidationReport::from_catalog(&catalog);
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for skill in catalog.skills().iter().chain(catalog.shadowed()) {
        if !matches!(skill.source, SkillSource::Directory(_)) {
            continue;
        }
        check_inside(&skill.directory, source_root, &real_source, source_text)?;
        let name = skill.name().to_owned();
        let path_in_source = relative(&skill.directory, source_root);
        let unsafe_name = skillbox_core::names::unsafe_name_reason(&name).filter(|_| validate);
        if let Some(problem) = unsafe_name {
            return Err(InstallError::Invalid {
                name,
                source_text: source_text.to_owned(),
                diagnostics: format!("  its name cannot name an install folder: {problem}"),
            });
        }
        if !seen.insert(name.clone()) {
            return Err(InstallError::refused(
                source_text,
                format!(
                    "two skills are named `{name}` (one at `{path_in_source}`); add them one at a time with a path, e.g. `SOURCE/{path_in_source}`"
                ),
            ));
        }
        // The install folder is named after the skill, so a fetched folder named otherwise
        // (a repository's root, a staging folder) is no error here.
        let errors: Vec<String> = report
            .skills
            .iter()
            .filter(|entry| entry.path == skill.directory)
            .flat_map(|entry| &entry.diagnostics)
            .filter(|diagnostic| {
                diagnostic.severity == Severity::Error
                    && diagnostic.code != DiagnosticCode::NameDirectoryMismatch
                    // A skill it requires may be installed already, or come from elsewhere:
                    // `add` resolves `requires` against the source and the lock.
                    && diagnostic.code != DiagnosticCode::RequiresInvalid
            })
            .map(|diagnostic| format!("  {diagnostic}"))
            .collect();
        if validate && !errors.is_empty() {
            return Err(InstallError::Invalid {
                name,
                source_text: source_text.to_owned(),
                diagnostics: errors.join("\n"),
            });
        }
        found.push(FoundSkill {
            description: skill.description.clone(),
            name,
            folder: skill.directory.clone(),
            path_in_source,
            requires: skill.properties.requires.clone(),
        });
    }
    if found.is_empty() {
        return Err(InstallError::NotFound {
            message: format!(
                "no skills found in `{source_text}`; a skill is a folder with a `SKILL.md` (checked {})",
                roots
                    .iter()
                    .map(|root| format!("`{}`", relative(root, source_root)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

/// The folders to look for skills in.
fn skill_roots(root: &Path, source_text: &str) -> Result<Vec<PathBuf>, InstallError> {
    if root.join("SKILL.md").is_file() {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut roots = Vec::new();
    let marketplace = root.join(".claude-plugin/marketplace.json");
    if marketplace.is_file() {
        for plugin in marketplace_plugins(&marketplace, root, source_text)? {
            roots.extend(plugin_skill_folders(&plugin, source_text)?);
        }
    }
    roots.extend(plugin_skill_folders(root, source_text)?);
    if roots.is_empty() {
        roots.push(root.to_path_buf());
        for hidden in HIDDEN_SKILL_FOLDERS {
            let folder = root.join(hidden);
            if folder.is_dir() {
                roots.push(folder);
            }
        }
    }
    roots.dedup();
    Ok(roots)
}

/// The skill folders a plugin at `plugin` declares (none when it is not a plugin).
fn plugin_skill_folders(plugin: &Path, source_text: &str) -> Result<Vec<PathBuf>, InstallError> {
    let mut folders = Vec::new();
    for manifest in [".claude-plugin/plugin.json", ".codex-plugin/plugin.json"] {
        let path = plugin.join(manifest);
        if !path.is_file() {
            continue;
        }
        let document = read_json(&path, source_text)?;
        match document.get("skills") {
            None => folders.push(plugin.join("skills")),
            Some(serde_json::Value::String(folder)) => {
                folders.push(contained(plugin, folder, &path, source_text)?);
            }
            Some(serde_json::Value::Array(list)) => {
                for folder in list {
                    let folder = folder.as_str().ok_or_else(|| {
                        InstallError::refused(
                            source_text,
                            format!("`{}`: `skills` must hold paths", path.display()),
                        )
                    })?;
                    folders.push(contained(plugin, folder, &path, source_text)?);
                }
            }
            Some(_) => {
                return Err(InstallError::refused(
                    source_text,
                    format!(
                        "`{}`: `skills` must be a path or a list of paths",
                        path.display()
                    ),
                ));
            }
        }
    }
    folders.retain(|folder| folder.is_dir());
    folders.dedup();
    Ok(folders)
}

/// The plugin folders of a marketplace that lie in the same source (plugins published
/// elsewhere are named in a note, to add by their own source).
fn marketplace_plugins(
    marketplace: &Path,
    root: &Path,
    source_text: &str,
) -> Result<Vec<PathBuf>, InstallError> {
    let document = read_json(marketplace, source_text)?;
    let plugin_root = document
        .pointer("/metadata/pluginRoot")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    let mut plugins = Vec::new();
    let Some(list) = document
        .get("plugins")
        .and_then(serde_json::Value::as_array)
    else {
        return Ok(plugins);
    };
    for plugin in list {
        let name = plugin
            .get("name")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("(unnamed)");
        match plugin.get("source") {
            Some(serde_json::Value::String(relative)) => {
                let base = if relative.starts_with("./") || plugin_root.is_empty() {
                    root.to_path_buf()
                } else {
                    contained(root, plugin_root, marketplace, source_text)?
                };
                plugins.push(contained(&base, relative, marketplace, source_text)?);
            }
            Some(other) => {
                tracing::warn!(
                    plugin = name,
                    source = %other,
                    "a marketplace plugin published elsewhere; add it by its own source"
                );
            }
            None => {}
        }
    }
    Ok(plugins)
}

fn read_json(path: &Path, source_text: &str) -> Result<serde_json::Value, InstallError> {
    let metadata =
        fs_err::symlink_metadata(path).map_err(|error| InstallError::io("read", path, error))?;
    if !metadata.is_file() || metadata.len() > MAX_PLUGIN_MANIFEST_BYTES {
        return Err(InstallError::refused(
            source_text,
            format!(
                "`{}` is not a regular file of at most {MAX_PLUGIN_MANIFEST_BYTES} bytes",
                path.display()
            ),
        ));
    }
    let text = fs_err::read(path).map_err(|error| InstallError::io("read", path, error))?;
    serde_json::from_slice(&text).map_err(|error| {
        InstallError::refused(
            source_text,
            format!("`{}` is not valid JSON: {error}", path.display()),
        )
    })
}

/// `relative` (from a manifest at `manifest`) under `base`, refused when it leaves it.
fn contained(
    base: &Path,
    relative: &str,
    manifest: &Path,
    source_text: &str,
) -> Result<PathBuf, InstallError> {
    let clean = relative.trim_start_matches("./").trim_end_matches('/');
    if clean.is_empty() {
        return Ok(base.to_path_buf());
    }
    if clean.starts_with('/') || clean.split('/').any(|part| part == ".." || part.is_empty()) {
        return Err(InstallError::refused(
            source_text,
            format!(
                "`{}` names `{relative}`, which leaves the source",
                manifest.display()
            ),
        ));
    }
    Ok(base.join(clean))
}

/// Refuse links inside a skill (as its inventory lists them) that point out of it, on their
/// own or through its other links.
pub(crate) fn check_links(
    inventory: &skillbox_trust::digest::FolderInventory,
    name: &str,
    source_text: &str,
) -> Result<(), InstallError> {
    for (path, target) in &inventory.links {
        if !link_resolves_inside(path, target, &inventory.links) {
            return Err(InstallError::refused(
                source_text,
                format!(
                    "skill `{name}` has a link `{path}` to `{target}`, outside the skill; only links inside a skill are installed"
                ),
            ));
        }
    }
    Ok(())
}

/// Most entries walked looking for the links of one folder ([`check_folder_links`]).
const MAX_LINK_WALK_ENTRIES: usize = 100_000;
/// Deepest folder nesting walked looking for links.
const MAX_LINK_WALK_DEPTH: usize = 64;

/// Refuse a skill folder on disk (fetched, or in the store) holding a link that leaves it, on
/// its own or through its other links, before its files are stored or placed: the folder is
/// walked without reading a file or following a link.
///
/// # Errors
/// [`InstallError::Refused`] naming the link, or the folder when it cannot be walked.
pub(crate) fn check_folder_links(
    folder: &Path,
    name: &str,
    source_text: &str,
) -> Result<(), InstallError> {
    // A link at the folder itself (a skill folder linked in a source) is followed, as every
    // read of the folder does.
    let links = walk_links(folder, &mut |_, _| {}).map_err(|message| {
        InstallError::refused(source_text, format!("skill `{name}`: {message}"))
    })?;
    if let Some((path, target)) = crate::fetch::tree::escaping_link(&links) {
        return Err(InstallError::refused(
            source_text,
            format!(
                "skill `{name}` has a link `{path}` to `{target}`, outside the skill; only links inside a skill are installed"
            ),
        ));
    }
    Ok(())
}

/// Walk `folder` without reading a file or following a link, calling `visit` with each entry's
/// `/`-separated path and kind; the links met (path to target). At most
/// [`MAX_LINK_WALK_ENTRIES`] entries, [`MAX_LINK_WALK_DEPTH`] folders deep.
///
/// # Errors
/// The reason, for the caller's message.
pub(crate) fn walk_links(
    folder: &Path,
    visit: &mut dyn FnMut(&str, std::fs::FileType),
) -> Result<BTreeMap<String, String>, String> {
    fn walk(
        folder: &Path,
        prefix: &str,
        depth: usize,
        entries: &mut usize,
        links: &mut BTreeMap<String, String>,
        visit: &mut dyn FnMut(&str, std::fs::FileType),
    ) -> Result<(), String> {
        if depth > MAX_LINK_WALK_DEPTH {
            return Err(format!("`{prefix}` is nested too deep"));
        }
        let listing = fs_err::read_dir(folder).map_err(|error| error.to_string())?;
        for entry in listing {
            let entry = entry.map_err(|error| error.to_string())?;
            *entries += 1;
            if *entries > MAX_LINK_WALK_ENTRIES {
                return Err(format!(
                    "it holds more than {MAX_LINK_WALK_ENTRIES} entries"
                ));
            }
            let entry_name = entry.file_name().to_string_lossy().into_owned();
            let relative = if prefix.is_empty() {
                entry_name
            } else {
                format!("{prefix}/{entry_name}")
            };
            let kind = entry.file_type().map_err(|error| error.to_string())?;
            visit(&relative, kind);
            if kind.is_symlink() {
                let target = fs_err::read_link(entry.path()).map_err(|error| error.to_string())?;
                links.insert(relative, target.to_string_lossy().into_owned());
            } else if kind.is_dir() {
                walk(&entry.path(), &relative, depth + 1, entries, links, visit)?;
            }
        }
        Ok(())
    }
    let mut links = BTreeMap::new();
    walk(folder, "", 0, &mut 0, &mut links, visit)?;
    Ok(links)
}

/// Refuse a folder (a root searched, a skill found) of a source tree that lies outside the
/// tree (`real_source`, with links resolved): reached through a link that leaves it (a
/// committed `.agents/skills` pointing at the user's own skills, say). Nothing of a source is
/// read from outside the folder it was named by.
fn check_inside(
    folder: &Path,
    source_root: &Path,
    real_source: &Path,
    source_text: &str,
) -> Result<(), InstallError> {
    let real = fs_err::canonicalize(folder).map_err(|error| {
        InstallError::refused(
            source_text,
            format!(
                "`{}` cannot be read ({error})",
                relative(folder, source_root)
            ),
        )
    })?;
    if real.starts_with(real_source) {
        return Ok(());
    }
    // The link on the way, to name it.
    let mut path = source_root.to_path_buf();
    let mut link = None;
    if let Ok(inside) = folder.strip_prefix(source_root) {
        for part in inside.components() {
            path.push(part);
            if crate::guard::is_link(&path) {
                link = Some((
                    relative(&path, source_root),
                    fs_err::read_link(&path)
                        .map(|target| target.display().to_string())
                        .unwrap_or_default(),
                ));
                break;
            }
        }
    }
    let message = match link {
        Some((path, target)) => format!(
            "`{path}` is a link to `{target}`, outside the source; a source's skills must lie inside the folder named, so nothing is read through a link that leaves it"
        ),
        None => format!(
            "`{}` lies outside the source; a source's skills must lie inside the folder named",
            relative(folder, source_root)
        ),
    };
    Err(InstallError::refused(source_text, message))
}

/// `path` relative to `base`, `/`-separated.
pub(crate) fn relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .map(|relative| {
            relative
                .components()
                .map(|component| component.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        })
        .unwrap_or_default()
}
