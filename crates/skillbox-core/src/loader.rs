//! Loading one skill from its source: `SKILL.md` frontmatter, `skill.toml`, `tools.json`, and
//! the checks that tie them to the files that exist. Loading is lenient: anything that can be
//! understood loads with its diagnostics; only a skill with no usable `SKILL.md` is skipped.

use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::error::CatalogError;
use crate::frontmatter;
use crate::limits::CatalogLimits;
use crate::properties::{PropertiesContext, ValidationMode, interpret_parsed};
use crate::skill::{Skill, SkillFormat, SkillId, SkillParts};
use crate::skill_servers::{
    CODEX_SIDECAR_FILE, MCP_JSON_FILE, ServerDeclaration, parse_codex_sidecar, parse_mcp_json,
};
use crate::skill_toml::{SKILL_MANIFEST_FILE, SkillManifest, parse_skill_manifest};
use crate::source::{SkillSource, contained_relative_path, read_head_of};
use crate::tools_json::{TOOLS_MANIFEST_FILE, ToolDefinition, parse_tools_manifest};

/// Names accepted for the skill's instructions file, in order of preference.
pub const SKILL_MD_NAMES: &[&str] = &["SKILL.md", "skill.md"];
/// Most bytes of a body's start kept with each skill for the search index
/// ([`crate::Skill::body_lead`]): a heading and the first paragraph or two.
pub const BODY_LEAD_BYTES: usize = 300;

/// What to load and how.
#[derive(Debug, Clone)]
pub struct LoadRequest<'a> {
    /// Where the files are.
    pub source: SkillSource,
    /// The skill folder as shown to people (for archives, a path inside the archive).
    pub directory: PathBuf,
    /// The folder's own name.
    pub folder_name: String,
    /// The parent folder's name (for the `<name>/<version>/` layout).
    pub parent_folder_name: Option<String>,
    /// What discovery already saw in the folder, saving a file check each.
    pub listing: Option<FolderListing>,
    /// The folder's descriptor while discovery holds it open: `SKILL.md`, `skill.toml`,
    /// `tools.json` and the files they name are then looked up relative to it instead of
    /// opening the folder again.
    pub folder: Option<BorrowedFd<'a>>,
    /// The skill's `SKILL.md` (a regular file) when discovery already has it open.
    pub skill_md: Option<&'a std::fs::File>,
    /// The root the skill was found under.
    pub root: &'a Path,
    /// The root's position in the catalog.
    pub root_index: usize,
    /// Size limits.
    pub limits: &'a CatalogLimits,
    /// Lenient or strict rules.
    pub mode: ValidationMode,
}

/// The files at a skill folder's top level that loading cares about, as discovery saw them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FolderListing {
    /// Which `SKILL.md` spelling is present.
    pub skill_md: Option<&'static str>,
    /// `skill.toml` is present.
    pub has_skill_manifest: bool,
    /// `tools.json` is present.
    pub has_tools_manifest: bool,
    /// `.mcp.json` (servers the skill needs, in Claude's plugin shape) is present.
    pub has_mcp_json: bool,
}

impl FolderListing {
    /// Note one top-level file name.
    pub fn note(&mut self, name: &str) {
        match name {
            SKILL_MANIFEST_FILE => self.has_skill_manifest = true,
            TOOLS_MANIFEST_FILE => self.has_tools_manifest = true,
            MCP_JSON_FILE => self.has_mcp_json = true,
            _ => {
                if let Some(known) = SKILL_MD_NAMES.iter().find(|known| **known == name) {
                    // `SKILL.md` wins over `skill.md` when both exist.
                    if self.skill_md != Some(SKILL_MD_NAMES[0]) {
                        self.skill_md = Some(known);
                    }
                }
            }
        }
    }

    fn from_source(source: &SkillSource) -> Self {
        FolderListing {
            skill_md: SKILL_MD_NAMES
                .iter()
                .copied()
                .find(|name| source.is_file(name)),
            has_skill_manifest: source.is_file(SKILL_MANIFEST_FILE),
            has_tools_manifest: source.is_file(TOOLS_MANIFEST_FILE),
            has_mcp_json: source.is_file(MCP_JSON_FILE),
        }
    }
}

thread_local! {
    /// The buffer each loading thread reads `SKILL.md` heads into, kept between skills.
    static HEAD_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What loading one skill produced.
#[derive(Debug)]
pub enum LoadOutcome {
    /// The skill loaded (possibly with diagnostics), ready to share: it is allocated once, by
    /// the thread that loads it.
    Loaded(Arc<Skill>),
    /// The skill could not be understood; these diagnostics say why.
    Skipped(Vec<Diagnostic>),
}

/// The file a skill's name comes from: `skill.toml` for a Skills Protocol skill, else its
/// `SKILL.md`.
pub(crate) fn name_file(format: SkillFormat, directory: &Path, skill_md_path: &Path) -> PathBuf {
    match format {
        SkillFormat::SkillsProtocol => directory.join(SKILL_MANIFEST_FILE),
        SkillFormat::AgentSkill => skill_md_path.to_path_buf(),
    }
}

/// Load one skill.
#[must_use]
pub fn load_skill(request: &LoadRequest<'_>) -> LoadOutcome {
    let listing = request
        .listing
        .unwrap_or_else(|| FolderListing::from_source(&request.source));
    let Some(skill_md_name) = listing.skill_md.map(str::to_owned) else {
        return LoadOutcome::Skipped(vec![
            Diagnostic::error(
                DiagnosticCode::SkillMdMissing,
                "missing required file `SKILL.md`",
            )
            .in_file(&request.directory)
            .with_hint(
                "every skill folder needs a `SKILL.md` with `name` and `description` frontmatter",
            ),
        ]);
    };
    let skill_md_path = request.directory.join(&skill_md_name);
    let max_bytes = request.limits.max_frontmatter_bytes;
    let parsed = HEAD_BUFFER.with_borrow_mut(|buffer| {
        let head = match request.skill_md {
            Some(file) => read_head_of(file, max_bytes, frontmatter::head_is_complete, buffer)
                .map_err(|error| {
                    CatalogError::Io(format!(
                        "cannot read `{}`: {error}",
                        skill_md_path.display()
                    ))
                }),
            None => request.source.read_head_into(
                request.folder,
                &skill_md_name,
                max_bytes,
                frontmatter::head_is_complete,
                buffer,
            ),
        };
        match head {
            Ok((filled, truncated)) => {
                frontmatter::parse_head(&buffer[..filled], truncated, max_bytes).map(|parsed| {
                    let lead = body_lead(&buffer[..filled], parsed.body_offset);
                    (parsed, lead)
                })
            }
            Err(error) => Err(Diagnostic::error(
                DiagnosticCode::PathUnreadable,
                error.to_string(),
            )),
        }
    });
    let (parsed, body_lead) = match parsed {
        Ok(parsed) => parsed,
        Err(diagnostic) => return LoadOutcome::Skipped(vec![diagnostic.in_file(&skill_md_path)]),
    };

    let mut diagnostics = Vec::new();
    let has_manifest_file = listing.has_skill_manifest;
    let (manifest, declared_id) = if has_manifest_file {
        load_manifest(request, &mut diagnostics)
    } else {
        (None, None)
    };
    let (mut properties, property_diagnostics) = interpret_parsed(
        &parsed.fields,
        Arc::clone(&parsed.yaml),
        PropertiesContext {
            directory_name: Some(&request.folder_name),
            has_skill_manifest: has_manifest_file,
            mode: request.mode,
        },
    );
    diagnostics.extend(
        property_diagnostics
            .into_iter()
            .map(|d| d.in_file(&skill_md_path)),
    );
    let file_positions: Vec<_> = match parsed.fields.get("files").map(|node| &node.value) {
        Some(crate::yaml::YamlValue::Sequence(items)) => items
            .iter()
            .map(crate::yaml::YamlNode::field_position)
            .collect(),
        _ => Vec::new(),
    };
    for (index, file) in properties.files.iter().enumerate() {
        if let Some(problem) = file_problem(request, &file.path) {
            diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::FilesEntryInvalid,
                    format!("`files[{index}]` names `{}`, which {problem}", file.path),
                )
                .in_file(&skill_md_path)
                .at(file_positions.get(index).copied().flatten())
                .for_field(format!("files[{index}].path"))
                .with_hint("list paths relative to the skill folder of files that exist in it"),
            );
        }
    }
    let tools = if request.mode == ValidationMode::Strict {
        Vec::new()
    } else {
        load_tools(request, listing.has_tools_manifest, &mut diagnostics)
    };
    if request.mode != ValidationMode::Strict {
        let mut declared = load_mcp_json(request, listing.has_mcp_json, &mut diagnostics);
        declared.extend(load_codex_sidecar(request, &mut diagnostics));
        let mut merge_diagnostics = Vec::new();
        properties.mcp_servers = crate::skill_servers::merge(
            std::mem::take(&mut properties.mcp_servers),
            declared,
            &mut merge_diagnostics,
        );
        diagnostics.extend(
            merge_diagnostics
                .into_iter()
                .map(|diagnostic| diagnostic.in_file(&skill_md_path)),
        );
        for server in &properties.mcp_servers {
            if let Some(note) = crate::skill_servers::package_note(server) {
                diagnostics.push(note.in_file(request.directory.join(&server.declared_in)));
            }
        }
    }

    let (id, title, description, format) = match &manifest {
        Some(manifest) => {
            check_manifest_folder(request, manifest, &mut diagnostics);
            (
                SkillId {
                    name: manifest.name.clone(),
                    version: Some(manifest.version.clone()),
                },
                properties.name.clone(),
                if manifest.description.is_empty() {
                    properties
                        .description
                        .clone()
                        .or_else(|| properties.short_description.clone())
                        .unwrap_or_default()
                } else {
                    manifest.description.clone()
                },
                SkillFormat::SkillsProtocol,
            )
        }
        // A skill.toml too broken to use still names the skill, when it says a name.
        None if has_manifest_file => (
            SkillId {
                name: declared_id.unwrap_or_else(|| request.folder_name.clone()),
                version: None,
            },
            properties.name.clone(),
            properties
                .description
                .clone()
                .or_else(|| properties.short_description.clone())
                .unwrap_or_default(),
            SkillFormat::SkillsProtocol,
        ),
        None => {
            let name = properties
                .name
                .as_deref()
                .map(crate::properties::nfkc)
                .unwrap_or_else(|| request.folder_name.clone());
            let version = properties
                .version
                .as_deref()
                .and_then(|text| semver::Version::parse(text).ok());
            (
                SkillId { name, version },
                None,
                properties.description.clone().unwrap_or_default(),
                SkillFormat::AgentSkill,
            )
        }
    };
    let name_file = name_file(format, &request.directory, &skill_md_path);
    // The name rules of `SKILL.md` already looked at a frontmatter name.
    let checked = format == SkillFormat::AgentSkill && properties.name.is_some();
    check_name_is_safe(&id.name, &name_file, checked, &mut diagnostics);
    LoadOutcome::Loaded(Arc::new(Skill::from_parts(SkillParts {
        id,
        format,
        title,
        description,
        directory: request.directory.clone(),
        skill_md_name,
        root: request.root.to_path_buf(),
        root_index: request.root_index,
        properties,
        manifest,
        tools,
        diagnostics,
        source: request.source.clone(),
        body_offset: parsed.body_offset,
        body_lead,
        max_body_bytes: request.limits.max_body_bytes,
        max_resources: request.limits.max_resources_per_skill,
    })))
}

/// The start of the body as the head read already holds it (no extra read): at most
/// [`BODY_LEAD_BYTES`], cut at a character boundary, trimmed. The search index uses it.
fn body_lead(head: &[u8], body_offset: u64) -> Box<str> {
    let start = usize::try_from(body_offset)
        .unwrap_or(usize::MAX)
        .min(head.len());
    let end = start.saturating_add(BODY_LEAD_BYTES).min(head.len());
    let bytes = &head[start..end];
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        // Cut inside a character (or not text at all): keep the valid part.
        Err(error) => std::str::from_utf8(&bytes[..error.valid_up_to()]).unwrap_or_default(),
    };
    Box::from(text.trim())
}

/// An error for a name no model may see ([`crate::names::unsafe_name_reason`]), wherever it
/// came from (`name`, the folder, `skill.toml`), unless the name rules already reported it
/// (`checked`: the name is the frontmatter's, which they looked at).
fn check_name_is_safe(name: &str, file: &Path, checked: bool, diagnostics: &mut Vec<Diagnostic>) {
    let Some(reason) = crate::names::unsafe_name_reason(name) else {
        return;
    };
    let reported = checked
        && diagnostics.iter().any(|diagnostic| {
            matches!(
                diagnostic.code,
                DiagnosticCode::NameInvalidCharacters | DiagnosticCode::NameTooLong
            )
        });
    if reported {
        return;
    }
    diagnostics.push(
        Diagnostic::error(
            DiagnosticCode::NameInvalidCharacters,
            format!(
                "skill name `{}` is never offered to a model or run: {reason}",
                crate::printable::printable(name)
            ),
        )
        .in_file(file)
        .for_field("name")
        .with_hint("name the skill with letters, digits, `-`, `_` and `.` only"),
    );
}

/// Why a path named by the skill is unusable, or `None` when it is a file inside the skill.
fn file_problem(request: &LoadRequest<'_>, path: &str) -> Option<&'static str> {
    if contained_relative_path(path).is_err() {
        Some("leaves the skill folder")
    } else if !request.source.is_file_in(request.folder, path) {
        Some("does not exist in the skill folder")
    } else {
        None
    }
}

/// Read `skill.toml`: the manifest when usable, and otherwise the `name` it declares, if any.
fn load_manifest(
    request: &LoadRequest<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Option<SkillManifest>, Option<String>) {
    let path = request.directory.join(SKILL_MANIFEST_FILE);
    let text = match read_sidecar(
        request,
        SKILL_MANIFEST_FILE,
        request.limits.max_skill_manifest_bytes,
    ) {
        Ok(text) => text,
        Err(diagnostic) => {
            diagnostics.push(diagnostic.in_file(&path));
            return (None, None);
        }
    };
    let (manifest, manifest_diagnostics) = parse_skill_manifest(&text);
    diagnostics.extend(manifest_diagnostics.into_iter().map(|d| d.in_file(&path)));
    let Some(manifest) = manifest else {
        let declared = toml::from_str::<toml::Table>(&text)
            .ok()
            .and_then(|table| {
                table
                    .get("name")
                    .and_then(|name| name.as_str().map(str::to_owned))
            })
            .filter(|name| !name.trim().is_empty());
        return (None, declared);
    };
    if let Some(runtime) = &manifest.runtime
        && let Some(problem) = file_problem(request, &runtime.entrypoint)
    {
        diagnostics.push(
            Diagnostic::error(
                DiagnosticCode::ManifestField,
                format!(
                    "`runtime.entrypoint` names `{}`, which {problem}",
                    runtime.entrypoint
                ),
            )
            .in_file(&path)
            .for_field("runtime.entrypoint")
            .with_hint("point `entrypoint` at the Python file that defines the export function"),
        );
    }
    (Some(manifest), None)
}

/// Skills Protocol folders are named after the id, or `<id>/<version>/` when several versions
/// coexist; anything else still loads, with a warning.
fn check_manifest_folder(
    request: &LoadRequest<'_>,
    manifest: &SkillManifest,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let version = manifest.version.to_string();
    let named_for_id = request.folder_name == manifest.name;
    let versioned = request.folder_name == version
        && request.parent_folder_name.as_deref() == Some(manifest.name.as_str());
    if !named_for_id && !versioned {
        diagnostics.push(
            Diagnostic::warning(
                DiagnosticCode::ManifestField,
                format!(
                    "folder `{}` holds skill `{}`; expected `{}/` or `{}/{}/`",
                    request.folder_name, manifest.name, manifest.name, manifest.name, version
                ),
            )
            .in_file(request.directory.join(SKILL_MANIFEST_FILE))
            .for_field("name")
            .with_hint("name the folder after the skill id (and its version, when several versions coexist)"),
        );
    }
}

fn load_tools(
    request: &LoadRequest<'_>,
    present: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<ToolDefinition> {
    if !present {
        return Vec::new();
    }
    let path = request.directory.join(TOOLS_MANIFEST_FILE);
    let text = match read_sidecar(
        request,
        TOOLS_MANIFEST_FILE,
        request.limits.max_tools_manifest_bytes,
    ) {
        Ok(text) => text,
        Err(diagnostic) => {
            diagnostics.push(diagnostic.in_file(&path));
            return Vec::new();
        }
    };
    let (tools, tool_diagnostics) = parse_tools_manifest(&text);
    diagnostics.extend(tool_diagnostics.into_iter().map(|d| d.in_file(&path)));
    for (index, tool) in tools.iter().enumerate() {
        if let Some(script) = &tool.script
            && let Some(problem) = file_problem(request, script)
        {
            diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::ToolScriptInvalid,
                    format!("tool `{}`: handler `{script}` {problem}", tool.name),
                )
                .in_file(&path)
                .at(tool.position)
                .for_field(format!("tools[{index}].script"))
                .with_hint("point `script` at the handler file, relative to the skill folder"),
            );
        }
    }
    tools
}

/// The servers of `.mcp.json`, when the folder has one.
fn load_mcp_json(
    request: &LoadRequest<'_>,
    present: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<ServerDeclaration> {
    if !present {
        return Vec::new();
    }
    load_server_file(request, MCP_JSON_FILE, parse_mcp_json, diagnostics)
}

/// The servers of Codex's `agents/openai.yaml`, when the skill has one (looked up here, not by
/// discovery: it is in a subfolder).
fn load_codex_sidecar(
    request: &LoadRequest<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<ServerDeclaration> {
    if !request
        .source
        .is_file_in(request.folder, CODEX_SIDECAR_FILE)
    {
        return Vec::new();
    }
    load_server_file(
        request,
        CODEX_SIDECAR_FILE,
        parse_codex_sidecar,
        diagnostics,
    )
}

/// The servers `parse` reads from the skill's `file`, its problems (and a file that cannot be
/// read) added to `diagnostics` in that file.
fn load_server_file(
    request: &LoadRequest<'_>,
    file: &str,
    parse: fn(&str) -> (Vec<ServerDeclaration>, Vec<Diagnostic>),
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<ServerDeclaration> {
    let path = request.directory.join(file);
    match read_sidecar(request, file, request.limits.max_tools_manifest_bytes) {
        Ok(text) => {
            let (servers, problems) = parse(&text);
            diagnostics.extend(
                problems
                    .into_iter()
                    .map(|diagnostic| diagnostic.in_file(&path)),
            );
            servers
        }
        Err(diagnostic) => {
            diagnostics.push(diagnostic.in_file(&path));
            Vec::new()
        }
    }
}

fn read_sidecar(
    request: &LoadRequest<'_>,
    file: &str,
    max_bytes: u64,
) -> Result<String, Diagnostic> {
    let (bytes, truncated) = request
        .source
        .read_file_in(request.folder, file, 0, max_bytes)
        .map_err(|error| Diagnostic::error(DiagnosticCode::PathUnreadable, error.to_string()))?;
    if truncated {
        return Err(Diagnostic::error(
            DiagnosticCode::FileTooLarge,
            format!("`{file}` is larger than {max_bytes} bytes and was not read"),
        )
        .with_hint("keep manifests small; move data into separate files"));
    }
    String::from_utf8(bytes).map_err(|_| {
        Diagnostic::error(
            DiagnosticCode::EncodingInvalid,
            format!("`{file}` is not valid UTF-8"),
        )
        .with_hint("save the file as UTF-8")
    })
}
