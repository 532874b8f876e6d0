//! `define_tool` and `remove_tool` (seed 000 section 8): a model writes a JavaScript handler
//! and gets a tool, callable at once. A defined tool is a real Skill Tools folder (SKILL.md,
//! tools.json, scripts/<name>.mjs) loaded by the ordinary skill loader, so it runs through
//! the same executor, schema check and sandbox as any skill's tool. Offered only when the
//! operator enables it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use skillbox_core::{Skill, ToolDefinition};
use skillbox_services::params::NonBlank;

use crate::effect::{CallIntent, ToolEffect};
use crate::outcome::ToolOutcome;
use crate::provider::SkillsProvider;
use crate::registry::{
    self, Annotations, ApprovalSubject, ParamsSize, PrepareFuture, Prepared, Profiles, ReadsFiles,
    RunsCode, Tool, ToolFacts,
};

/// A tool created with `define_tool`: a real Skill Tools folder, loaded like any other.
#[derive(Debug, Clone)]
pub(crate) struct DefinedTool {
    pub(crate) skill: Arc<Skill>,
    pub(crate) tool: ToolDefinition,
    folder: PathBuf,
    persistent: bool,
}

/// The tools defined so far, shared by the providers hot reloads build, so a reload does not
/// forget them.
pub(crate) type DefinedTools = Arc<RwLock<BTreeMap<String, DefinedTool>>>;

const FACTS: ToolFacts = ToolFacts {
    profiles: Profiles::SKILLS,
    runs_code: RunsCode::Never,
    reads_files: ReadsFiles::Always,
    mutating: true,
    loads_skills: false,
    needs_services: false,
    params_size: ParamsSize::Run,
    annotations: Annotations::ACTS,
};

/// `define_tool`.
#[derive(Debug, Clone, Copy)]
pub struct DefineTool;

/// Its parameters.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DefineToolParams {
    /// Tool name (lowercase letters, digits and underscores)
    name: NonBlank,
    /// What the tool does
    description: NonBlank,
    /// JSON string of parameter definitions, e.g. {"text": {"type": "string", "description": "…"}}
    #[serde(default)]
    #[schemars(with = "String")]
    parameters: Option<Value>,
    /// Body of `async function handler(args)` in JavaScript; return a JSON-serializable value
    code: NonBlank,
    /// "true" to save the tool as a skill on disk
    #[serde(default)]
    #[schemars(schema_with = "persistent_schema")]
    persistent: Option<Value>,
}

fn persistent_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": ["true", "false"] })
}

/// The tool defined: callable at once.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DefineToolResult {
    /// Its name.
    defined: String,
    /// Whether it was saved as a skill on disk.
    persistent: bool,
    /// The folder it was saved in, when persistent.
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
}

/// The tool removed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RemoveToolResult {
    /// Its name.
    removed: String,
    /// Whether it had been saved on disk (its folder is removed too).
    persistent: bool,
}

impl Tool for DefineTool {
    const NAME: &'static str = "define_tool";
    const DESCRIPTION: &'static str = "Create a new tool at runtime from a JavaScript handler body. It is callable at once; with persistent \"true\" it is saved as a Skill Tools skill.";
    const FACTS: ToolFacts = FACTS;
    type Params<'a> = DefineToolParams;
    type Result = DefineToolResult;

    fn enabled(&self, provider: &SkillsProvider) -> bool {
        provider.options().define_tools
    }

    fn intent(&self, _provider: &SkillsProvider, _params: &Self::Params<'_>) -> CallIntent {
        CallIntent {
            skill: None,
            effect: Some(ToolEffect::ChangesTools),
        }
    }

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: DefineToolParams,
    ) -> PrepareFuture<'a> {
        Box::pin(std::future::ready(check_definition(provider, &params).map(
            |definition| {
                let subject = ApprovalSubject::default();
                let provider = Arc::clone(provider);
                Prepared::reads_files("writing the tool's folder", move || {
                    define(&provider, definition)
                })
                .approved_first(subject)
            },
        )))
    }
}

/// A definition that passed its checks.
struct Definition {
    name: String,
    skill_name: String,
    description: String,
    code: String,
    parameters: Value,
    persistent: bool,
}

fn check_definition(
    provider: &SkillsProvider,
    params: &DefineToolParams,
) -> Result<Definition, ToolOutcome> {
    let name = params.name.0.trim();
    if !skillbox_core::tools_json::is_valid_tool_name(name) {
        return Err(ToolOutcome::invalid_params(format!(
            "parameter `name`: `{name}` must match ^[a-z][a-z0-9_]*$"
        )));
    }
    if registry::is_reserved(name) {
        return Err(ToolOutcome::invalid_params(format!(
            "`{name}` is a built-in tool and cannot be redefined"
        )));
    }
    let skill_name = name.replace('_', "-");
    if name_exists_in_catalog(provider, name, &skill_name) {
        return Err(ToolOutcome::invalid_params(format!(
            "`{name}` already exists in the skill catalog (as a skill or a skill's tool), and a defined tool never replaces one; choose another name"
        )));
    }
    let description = params.description.0.trim();
    let code = &params.code.0;
    let parameters = match &params.parameters {
        None | Some(Value::Null) => json!({}),
        Some(Value::String(text)) if text.trim().is_empty() => json!({}),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(value @ Value::Object(_)) => value,
            _ => {
                return Err(ToolOutcome::invalid_params(
                    "parameter `parameters` must be a JSON object (as a string) mapping names to {type, description}",
                ));
            }
        },
        Some(value @ Value::Object(_)) => value.clone(),
        Some(_) => {
            return Err(ToolOutcome::invalid_params(
                "parameter `parameters` must be a JSON object (as a string)",
            ));
        }
    };
    let persistent = matches!(&params.persistent, Some(Value::String(flag)) if flag == "true")
        || params.persistent == Some(Value::Bool(true));
    if persistent && provider.options().persistent_tools_root.is_none() {
        return Err(ToolOutcome::invalid_params(
            "persistent tools need a writable tools root, and none is configured; define the tool without `persistent`",
        ));
    }
    Ok(Definition {
        name: name.to_owned(),
        skill_name,
        description: description.to_owned(),
        code: code.to_owned(),
        parameters,
        persistent,
    })
}

/// Whether a defined tool would replace something of the catalog: a skill named `name` or
/// `skill_name` (hidden or not: a persistent tool's folder would shadow it on the next load),
/// or a tool any skill declares.
fn name_exists_in_catalog(provider: &SkillsProvider, name: &str, skill_name: &str) -> bool {
    let catalog = provider.catalog();
    let skills = catalog.skills().iter().chain(catalog.shadowed());
    catalog.get(name).is_some()
        || catalog.get(skill_name).is_some()
        || skills
            .into_iter()
            .any(|skill| skill.tools.iter().any(|tool| tool.name == name))
}

/// Write the tool's folder, load it and make it callable.
fn define(provider: &SkillsProvider, definition: Definition) -> ToolOutcome {
    let Definition {
        name,
        skill_name,
        description,
        code,
        parameters,
        persistent,
    } = definition;
    let options = provider.options();
    let folder = match (&options.persistent_tools_root, persistent) {
        (Some(root), true) => root.join(&skill_name),
        _ => options
            .session_tools_root
            .join(format!(
                "{}-{}",
                std::process::id(),
                next_definition_number()
            ))
            .join(&skill_name),
    };
    if persistent && folder.exists() {
        return ToolOutcome::invalid_params(format!(
            "a skill folder `{}` already exists; choose another tool name",
            folder.display()
        ));
    }
    let manifest = json!([{ "name": name, "description": description, "script": format!("scripts/{name}.mjs"), "parameters": parameters }]);
    let skill_md = format!(
        "---\nname: {skill_name}\ndescription: {}\n---\n# {name}\n\nA tool created at runtime with define_tool. Call `{name}` directly.\n",
        serde_json::to_string(&description).unwrap_or_default()
    );
    let handler = format!("export default async function handler(args) {{\n{code}\n}}\n");
    if let Err(error) = write_tool_folder(&folder, &skill_md, &manifest, &name, &handler) {
        return ToolOutcome::failed(format!("cannot write tool `{name}`: {error}"));
    }
    let (skill, tool) = match load_defined_skill(&folder, &skill_name) {
        Ok(found) => found,
        Err(message) => {
            let _ = fs_err::remove_dir_all(&folder);
            return ToolOutcome::invalid_params(format!("tool `{name}` is not valid: {message}"));
        }
    };
    let Ok(mut defined) = provider.defined_tools().write() else {
        return ToolOutcome::failed("the tool registry is unavailable");
    };
    if let Some(previous) = defined.insert(
        name.clone(),
        DefinedTool {
            skill,
            tool,
            folder: folder.clone(),
            persistent,
        },
    ) && previous.folder != folder
    {
        // A redefinition replaces the earlier tool and its folder.
        let _ = fs_err::remove_dir_all(&previous.folder);
    }
    ToolOutcome::answer(&DefineToolResult {
        defined: name,
        persistent,
        path: persistent.then(|| folder.to_string_lossy().into_owned()),
    })
}

fn next_definition_number() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Write a defined tool's skill folder, readable by the sandbox user.
fn write_tool_folder(
    folder: &Path,
    skill_md: &str,
    manifest: &Value,
    name: &str,
    handler: &str,
) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let scripts = folder.join("scripts");
    fs_err::create_dir_all(&scripts)?;
    let mut parent = Some(scripts.as_path());
    while let Some(directory) = parent {
        if directory.starts_with(std::env::temp_dir()) || directory.starts_with(folder) {
            let _ = fs_err::set_permissions(directory, std::fs::Permissions::from_mode(0o755));
        }
        parent = directory
            .parent()
            .filter(|parent| parent.starts_with(folder.parent().unwrap_or(folder)));
    }
    for (path, text) in [
        (folder.join("SKILL.md"), skill_md.to_owned()),
        (
            folder.join("tools.json"),
            serde_json::to_string_pretty(manifest).unwrap_or_default(),
        ),
        (scripts.join(format!("{name}.mjs")), handler.to_owned()),
    ] {
        fs_err::write(&path, text)?;
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
    }
    Ok(())
}

/// Load a defined tool's folder through the ordinary skill loader.
fn load_defined_skill(
    folder: &Path,
    skill_name: &str,
) -> Result<(Arc<Skill>, ToolDefinition), String> {
    let limits = skillbox_core::CatalogLimits::default();
    let root = folder.parent().unwrap_or(folder);
    let source =
        skillbox_core::source::SkillSource::directory(folder).map_err(|error| error.to_string())?;
    let request = skillbox_core::loader::LoadRequest {
        source,
        directory: folder.to_path_buf(),
        folder_name: skill_name.to_owned(),
        parent_folder_name: None,
        listing: None,
        folder: None,
        skill_md: None,
        root,
        root_index: usize::MAX,
        limits: &limits,
        mode: skillbox_core::ValidationMode::Lenient,
    };
    match skillbox_core::loader::load_skill(&request) {
        skillbox_core::loader::LoadOutcome::Loaded(skill) => {
            let errors: Vec<String> = skill
                .diagnostics
                .iter()
                .filter(|d| d.is_error())
                .map(|d| d.message.clone())
                .collect();
            if !errors.is_empty() {
                return Err(errors.join("; "));
            }
            let tool = skill.tools.first().cloned().ok_or("no tool was declared")?;
            Ok((skill, tool))
        }
        skillbox_core::loader::LoadOutcome::Skipped(diagnostics) => Err(diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join("; ")),
    }
}

/// `remove_tool`.
#[derive(Debug, Clone, Copy)]
pub struct RemoveTool;

/// Its parameters.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RemoveToolParams {
    /// Tool name to remove
    name: String,
}

impl Tool for RemoveTool {
    const NAME: &'static str = "remove_tool";
    const DESCRIPTION: &'static str =
        "Remove a tool created with define_tool. Built-in tools cannot be removed.";
    const FACTS: ToolFacts = FACTS;
    type Params<'a> = RemoveToolParams;
    type Result = RemoveToolResult;

    fn enabled(&self, provider: &SkillsProvider) -> bool {
        provider.options().define_tools
    }

    fn intent(&self, _provider: &SkillsProvider, _params: &Self::Params<'_>) -> CallIntent {
        CallIntent {
            skill: None,
            effect: Some(ToolEffect::ChangesTools),
        }
    }

    fn prepare<'a>(
        &'a self,
        provider: &'a Arc<SkillsProvider>,
        params: RemoveToolParams,
    ) -> PrepareFuture<'a> {
        let name = params.name;
        if registry::is_reserved(&name) {
            return Box::pin(std::future::ready(Err(ToolOutcome::invalid_params(
                format!("`{name}` is a built-in tool and cannot be removed"),
            ))));
        }
        let provider = Arc::clone(provider);
        Box::pin(std::future::ready(Ok(Prepared::reads_files(
            "removing the tool's folder",
            move || remove(&provider, &name),
        )
        .approved_first(ApprovalSubject::default()))))
    }
}

fn remove(provider: &SkillsProvider, name: &str) -> ToolOutcome {
    let removed = provider
        .defined_tools()
        .write()
        .ok()
        .and_then(|mut defined| defined.remove(name));
    match (removed, provider.owned_skill_tool(name)) {
        (Some(removed), _) => {
            let _ = fs_err::remove_dir_all(&removed.folder);
            ToolOutcome::answer(&RemoveToolResult {
                removed: name.to_owned(),
                persistent: removed.persistent,
            })
        }
        (None, Some((skill, _))) => ToolOutcome::invalid_params(format!(
            "tool `{name}` comes from skill `{}`; only tools created with define_tool can be removed",
            skill.name()
        )),
        (None, None) => ToolOutcome::invalid_params(format!("no tool named `{name}` was defined")),
    }
}
