//! The skill model: one [`Skill`] per loaded skill folder or archive, whatever its format.
//! Metadata is read at discovery; the body and the resource list are read on first use and
//! cached, so a catalog of thousands of skills costs little more than their frontmatter.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::Serialize;

use crate::diagnostic::Diagnostic;
use crate::error::CatalogError;
use crate::properties::SkillProperties;
use crate::skill_toml::{SkillKind, SkillManifest};
use crate::source::SkillSource;
use crate::tools_json::ToolDefinition;

// The name rule lives with the other name rules; other crates still reach it from here.
pub use crate::names::is_safe_skill_name;

/// A skill's identity: its name and, when it has one, its semantic version.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct SkillId {
    /// Skill name (agentskills name, or the dotted Skills Protocol id).
    pub name: String,
    /// Version from `skill.toml`, or from a frontmatter `version` that is valid semver.
    pub version: Option<semver::Version>,
}

impl fmt::Display for SkillId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.version {
            Some(version) => write!(f, "{}@{version}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// Which format a skill is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkillFormat {
    /// `SKILL.md` (optionally with `tools.json`).
    AgentSkill,
    /// `skill.toml` + `SKILL.md`.
    SkillsProtocol,
}

/// How a skill's resource files are grouped for listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceGroup {
    /// Under `scripts/`.
    Scripts,
    /// Under `references/`.
    References,
    /// Under `assets/`.
    Assets,
    /// Under `examples/`.
    Examples,
    /// Anything else.
    Other,
}

impl ResourceGroup {
    /// The group a relative path belongs to, by its first folder.
    #[must_use]
    pub fn of(relative_path: &str) -> Self {
        match relative_path.split('/').next() {
            Some("scripts") if relative_path.contains('/') => ResourceGroup::Scripts,
            Some("references") if relative_path.contains('/') => ResourceGroup::References,
            Some("assets") if relative_path.contains('/') => ResourceGroup::Assets,
            Some("examples") if relative_path.contains('/') => ResourceGroup::Examples,
            _ => ResourceGroup::Other,
        }
    }
}

/// One file of a skill.
#[derive(Debug, Serialize)]
pub struct SkillResource {
    /// Path relative to the skill folder, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Group for listings.
    pub group: ResourceGroup,
    #[serde(skip)]
    sha256: OnceLock<Result<String, String>>,
}

impl SkillResource {
    fn new(path: String, size_bytes: u64) -> Self {
        let group = ResourceGroup::of(&path);
        SkillResource {
            path,
            size_bytes,
            group,
            sha256: OnceLock::new(),
        }
    }
}

/// A skill body read from disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillBody {
    /// The markdown after the frontmatter, trimmed.
    pub text: Arc<str>,
    /// Whether the body was cut at the size limit.
    pub truncated: bool,
}

/// Everything the catalog knows about one skill.
#[derive(Debug)]
pub struct Skill {
    /// Identity.
    pub id: SkillId,
    /// Format.
    pub format: SkillFormat,
    /// For Skills Protocol skills: the `SKILL.md` `name`, a human title.
    pub title: Option<String>,
    /// What the skill does and when to use it (manifest description, else frontmatter).
    pub description: String,
    /// The skill folder (for archives: the archive path joined with the folder name).
    pub directory: PathBuf,
    /// Path of `SKILL.md` (virtual for archives).
    pub skill_md_path: PathBuf,
    /// `SKILL.md` file name as found (`SKILL.md` or `skill.md`).
    pub skill_md_name: String,
    /// The root the skill was found under.
    pub root: PathBuf,
    /// Position of that root in the catalog's root list (higher wins on conflicts).
    pub root_index: usize,
    /// Interpreted frontmatter.
    pub properties: SkillProperties,
    /// `skill.toml`, when present and usable.
    pub manifest: Option<SkillManifest>,
    /// Tools from `tools.json`.
    pub tools: Vec<ToolDefinition>,
    /// Problems found while loading (warnings and errors; the skill is usable regardless).
    pub diagnostics: Vec<Diagnostic>,
    /// Where the files are read from.
    pub source: SkillSource,
    pub(crate) body_offset: u64,
    /// The first part of the body, as read with the frontmatter (see [`Skill::body_lead`]).
    body_lead: Box<str>,
    /// [`Skill::visible_to_model`], worked out once: every model-facing path asks, a search
    /// once per skill it matches (thousands per query in a large library).
    visible_to_model: bool,
    pub(crate) max_body_bytes: u64,
    pub(crate) max_resources: usize,
    body: OnceLock<Result<SkillBody, String>>,
    resources: OnceLock<(Vec<SkillResource>, bool)>,
    resolved_skill_md: OnceLock<PathBuf>,
}

/// The parts a loader assembles into a [`Skill`].
pub(crate) struct SkillParts {
    pub id: SkillId,
    pub format: SkillFormat,
    pub title: Option<String>,
    pub description: String,
    pub directory: PathBuf,
    pub skill_md_name: String,
    pub root: PathBuf,
    pub root_index: usize,
    pub properties: SkillProperties,
    pub manifest: Option<SkillManifest>,
    pub tools: Vec<ToolDefinition>,
    pub diagnostics: Vec<Diagnostic>,
    pub source: SkillSource,
    pub body_offset: u64,
    pub body_lead: Box<str>,
    pub max_body_bytes: u64,
    pub max_resources: usize,
}

impl Skill {
    /// The skill's folder relative to its root, `/`-separated (`openai/skill-creator`); the
    /// folder's own name when the root is the skill itself. Names the copy whatever its name:
    /// a door takes it where a skill name goes ([`crate::SkillCatalog::find_by_path`]).
    #[must_use]
    pub fn path_in_root(&self) -> String {
        match self.directory.strip_prefix(&self.root) {
            Ok(relative) if !relative.as_os_str().is_empty() => relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            _ => self
                .directory
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }

    pub(crate) fn from_parts(parts: SkillParts) -> Self {
        let visible_to_model =
            !parts.properties.disable_model_invocation && is_safe_skill_name(&parts.id.name);
        Skill {
            skill_md_path: parts.directory.join(&parts.skill_md_name),
            id: parts.id,
            format: parts.format,
            title: parts.title,
            description: parts.description,
            directory: parts.directory,
            skill_md_name: parts.skill_md_name,
            root: parts.root,
            root_index: parts.root_index,
            properties: parts.properties,
            manifest: parts.manifest,
            tools: parts.tools,
            diagnostics: parts.diagnostics,
            source: parts.source,
            body_offset: parts.body_offset,
            body_lead: parts.body_lead,
            visible_to_model,
            max_body_bytes: parts.max_body_bytes,
            max_resources: parts.max_resources,
            body: OnceLock::new(),
            resources: OnceLock::new(),
            resolved_skill_md: OnceLock::new(),
        }
    }

    /// The skill name (the id's name).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.id.name
    }

    /// The first part of the body (at most [`crate::loader::BODY_LEAD_BYTES`], trimmed): what the
    /// loader read anyway with the frontmatter, kept for the search index so that indexing never
    /// reads a file. Empty when the body starts past the first read.
    #[must_use]
    pub fn body_lead(&self) -> &str {
        &self.body_lead
    }

    /// A version label for listings: the semver id version, else the frontmatter `version` or
    /// `metadata.version` as written.
    #[must_use]
    pub fn version_label(&self) -> Option<String> {
        self.id
            .version
            .as_ref()
            .map(ToString::to_string)
            .or_else(|| self.properties.version.clone())
            .or_else(|| {
                self.properties
                    .metadata
                    .get("version")
                    .and_then(|value| value.as_str())
                    .map(str::to_owned)
            })
    }

    /// Action or instruction: `skill.toml` says; otherwise a skill with tools is an action.
    #[must_use]
    pub fn kind(&self) -> SkillKind {
        match &self.manifest {
            Some(manifest) => manifest.kind,
            None if !self.tools.is_empty() => SkillKind::Action,
            None => SkillKind::Instruction,
        }
    }

    /// The namespace: `skill.toml`'s (the first dotted segment of its name), else the first
    /// dotted segment of the skill's name (the whole name when it has no dot).
    #[must_use]
    pub fn namespace(&self) -> &str {
        match &self.manifest {
            Some(manifest) => manifest.namespace(),
            None => self.name().split('.').next().unwrap_or_default(),
        }
    }

    /// Whether the model may invoke the skill (`disable-model-invocation` is not set).
    #[must_use]
    pub fn model_invocable(&self) -> bool {
        !self.properties.disable_model_invocation
    }

    /// Whether a model may see the skill at all (its listing, files, tools, prompt line): it is
    /// model-invocable and its name is safe to show and to run ([`is_safe_skill_name`]). Every
    /// model-facing path filters by this.
    #[must_use]
    pub fn visible_to_model(&self) -> bool {
        self.visible_to_model
    }

    /// Whether a person may invoke it from user-facing listings.
    #[must_use]
    pub fn user_invocable(&self) -> bool {
        self.properties.user_invocable
    }

    /// Whether any loading diagnostic is an error.
    #[must_use]
    pub fn has_errors(&self) -> bool {
        crate::diagnostic::has_errors(&self.diagnostics)
    }

    /// Environment variables the skill declares it needs (`permissions.secrets` and the
    /// frontmatter's `required_environment_variables`), deduplicated.
    #[must_use]
    pub fn declared_secrets(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .manifest
            .iter()
            .flat_map(|manifest| manifest.permissions.secrets.iter().cloned())
            .chain(self.properties.declared_secrets.iter().cloned())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The absolute path of `SKILL.md` with symlinks resolved (as prompts show it), computed
    /// once; archived skills keep their virtual path.
    pub fn resolved_skill_md_path(&self) -> &PathBuf {
        self.resolved_skill_md.get_or_init(|| {
            fs_err::canonicalize(&self.skill_md_path).unwrap_or_else(|_| self.skill_md_path.clone())
        })
    }

    /// Record the folder's canonical path as discovery found it (each link on the way
    /// resolved, `SKILL.md` a file in it), so that [`Skill::resolved_skill_md_path`] needs no
    /// lookup of its own.
    pub(crate) fn note_resolved_directory(&self, canonical_directory: &Path) {
        let _ = self
            .resolved_skill_md
            .set(canonical_directory.join(&self.skill_md_name));
    }

    /// Whether the skill comes from a packaged archive (read-only, in memory).
    #[must_use]
    pub fn is_archived(&self) -> bool {
        matches!(self.source, SkillSource::Archive(_))
    }

    /// The body (markdown after the frontmatter), read on first use and cached.
    ///
    /// # Errors
    /// When the file can no longer be read or is not UTF-8.
    pub fn body(&self) -> Result<SkillBody, CatalogError> {
        self.body
            .get_or_init(|| self.read_body())
            .clone()
            .map_err(CatalogError::Io)
    }

    fn read_body(&self) -> Result<SkillBody, String> {
        let (bytes, truncated) = self
            .source
            .read_file_from(&self.skill_md_name, self.body_offset, self.max_body_bytes)
            .map_err(|error| error.to_string())?;
        let text = decode_text(bytes, truncated).ok_or_else(|| {
            CatalogError::NotText {
                path: self.skill_md_path.clone(),
            }
            .to_string()
        })?;
        Ok(SkillBody {
            text: Arc::from(text.trim()),
            truncated,
        })
    }

    /// Every file of the skill (sorted by path), listed on first use and cached; the flag says
    /// whether the list was cut at the per-skill limit.
    pub fn resources(&self) -> (&[SkillResource], bool) {
        let (resources, more) = self.resources.get_or_init(|| {
            let (files, more) = self.source.list_files(self.max_resources);
            (
                files
                    .into_iter()
                    .map(|file| SkillResource::new(file.relative_path, file.size_bytes))
                    .collect(),
                more,
            )
        });
        (resources, *more)
    }

    /// The sha256 of a resource (hex), computed on first request and cached.
    ///
    /// # Errors
    /// When the path is not one of the skill's files or cannot be read.
    pub fn resource_sha256(&self, relative_path: &str) -> Result<String, CatalogError> {
        let (resources, _) = self.resources();
        let resource = resources
            .iter()
            .find(|resource| resource.path == relative_path)
            .ok_or_else(|| CatalogError::FileNotFound {
                path: self.directory.join(relative_path),
            })?;
        resource
            .sha256
            .get_or_init(|| {
                let digest = self
                    .source
                    .sha256(&resource.path)
                    .map_err(|error| error.to_string())?;
                Ok(hex::encode(digest))
            })
            .clone()
            .map_err(CatalogError::Io)
    }

    /// Read a file of the skill as text (at most `max_bytes`; the flag says it was cut).
    ///
    /// # Errors
    /// When the path escapes the skill, is missing, or is not UTF-8.
    pub fn read_text_file(
        &self,
        relative_path: &str,
        max_bytes: u64,
    ) -> Result<(String, bool), CatalogError> {
        let (bytes, truncated) = self.source.read_file(relative_path, max_bytes)?;
        decode_text(bytes, truncated)
            .map(|text| (text, truncated))
            .ok_or_else(|| CatalogError::NotText {
                path: self.directory.join(relative_path),
            })
    }
}

/// Bytes as UTF-8 text; when the read was cut (`truncated`), a character split by the cut is
/// dropped rather than making the text invalid. `None` for text that is not UTF-8.
fn decode_text(bytes: Vec<u8>, truncated: bool) -> Option<String> {
    match String::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(error) if truncated && error.utf8_error().error_len().is_none() => {
            let valid = error.utf8_error().valid_up_to();
            let mut bytes = error.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).ok()
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups() {
        assert_eq!(ResourceGroup::of("scripts/a.py"), ResourceGroup::Scripts);
        assert_eq!(
            ResourceGroup::of("references/x/y.md"),
            ResourceGroup::References
        );
        assert_eq!(ResourceGroup::of("assets/logo.png"), ResourceGroup::Assets);
        assert_eq!(ResourceGroup::of("examples/e.md"), ResourceGroup::Examples);
        assert_eq!(ResourceGroup::of("scripts"), ResourceGroup::Other);
        assert_eq!(ResourceGroup::of("SKILL.md"), ResourceGroup::Other);
    }

    #[test]
    fn id_display() {
        let id = SkillId {
            name: "text.stats".into(),
            version: Some(semver::Version::new(0, 10, 0)),
        };
        assert_eq!(id.to_string(), "text.stats@0.10.0");
    }
}

/// A skill as one row of a listing: identity, description, where it is, what it offers.
#[derive(Debug, Clone, Serialize)]
pub struct SkillSummary {
    /// Name (or dotted id).
    pub name: String,
    /// Version label, when there is one.
    pub version: Option<String>,
    /// Whether this is the newest version of the skill in the catalog.
    pub latest: bool,
    /// Display title (Skills Protocol skills).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does and when to use it.
    pub description: String,
    /// Format.
    pub format: SkillFormat,
    /// Action or instruction.
    pub kind: SkillKind,
    /// The skill folder (or archive).
    pub path: PathBuf,
    /// The `SKILL.md` file.
    pub skill_md: PathBuf,
    /// The root it was found under.
    pub root: PathBuf,
    /// Whether it comes from a packaged archive.
    pub archived: bool,
    /// Names of its `tools.json` tools.
    pub tools: Vec<String>,
    /// Whether the model may invoke it.
    pub model_invocable: bool,
    /// Whether a person may invoke it.
    pub user_invocable: bool,
    /// Error-level diagnostics.
    pub errors: usize,
    /// Warning-level diagnostics.
    pub warnings: usize,
    /// Names of the MCP servers it declares it needs (`mcp-servers`, `.mcp.json`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<String>,
    /// Skills it requires (`requires`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
}

impl Skill {
    /// The listing row for this skill; `latest` says whether it is the newest version.
    #[must_use]
    pub fn summary(&self, latest: bool) -> SkillSummary {
        let count = |severity| {
            self.diagnostics
                .iter()
                .filter(|d| d.severity == severity)
                .count()
        };
        SkillSummary {
            name: self.id.name.clone(),
            version: self.version_label(),
            latest,
            title: self.title.clone(),
            description: self.description.clone(),
            format: self.format,
            kind: self.kind(),
            path: self.directory.clone(),
            skill_md: self.skill_md_path.clone(),
            root: self.root.clone(),
            archived: self.is_archived(),
            tools: self.tools.iter().map(|tool| tool.name.clone()).collect(),
            model_invocable: self.model_invocable(),
            user_invocable: self.user_invocable(),
            errors: count(crate::diagnostic::Severity::Error),
            warnings: count(crate::diagnostic::Severity::Warning),
            mcp_servers: self
                .properties
                .mcp_servers
                .iter()
                .map(|server| server.name.clone())
                .collect(),
            requires: self.properties.requires.clone(),
        }
    }
}
