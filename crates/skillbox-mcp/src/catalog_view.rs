//! What of the catalog MCP shows, built from one provider snapshot: tools (through the one
//! dispatcher), prompts (skills a person may invoke), resources (every file of every skill a
//! model may see), and skills-extension entries. Nothing here awaits; file reads happen on
//! the caller's blocking thread.

use std::sync::Arc;

use base64::Engine;
use rmcp::ErrorData;
use rmcp::model::{
    JsonObject, Prompt, PromptArgument, ReadResourceResult, Resource, ResourceContents,
    Skill as SkillEntry, SkillFrontmatter, SkillResource as SkillEntryFile, SkillResources, Tool,
    ToolAnnotations,
};
use serde_json::Value;
use skillbox_core::skill::is_safe_skill_name;
use skillbox_core::{CatalogError, Skill};
use skillbox_services::ReadBudget;
use skillbox_tools::provider::declared_argument_names;
use skillbox_tools::registry::{self, Offer};
use skillbox_tools::{SkillsProvider, ToolProfile};

use crate::uri;

/// Largest file `resources/read` returns, in bytes (the skills extension's per-skill total).
pub const MAX_RESOURCE_BYTES: u64 = 16 * 1024 * 1024;
/// Most files of one skill the skills extension lets a host accept.
pub const MAX_SKILL_FILES: usize = 512;
/// The prompt argument offered by skills that declare no named arguments (`$ARGUMENTS`).
pub const FREE_ARGUMENTS: &str = "arguments";
/// The name every skill's instructions file has in URIs, whatever its spelling on disk.
pub const SKILL_MD: &str = "SKILL.md";

/// The tools of a profile in MCP's shape, with hints for the ones that only read.
#[must_use]
pub fn tools(provider: &SkillsProvider, profile: ToolProfile) -> Vec<Tool> {
    registry::offered(provider, Offer::Profile(profile))
        .iter()
        .map(|tool| mcp_tool(provider, tool))
        .collect()
}

/// One tool in MCP's shape, with its annotations, and its output schema when its answers are
/// objects of a fixed shape (a built-in's typed result): the door then sends every successful
/// answer as structured content matching it.
pub fn mcp_tool(provider: &SkillsProvider, tool: &registry::ToolRef) -> Tool {
    let spec = tool.spec(provider);
    let schema: JsonObject = match spec.parameters {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    };
    let facts = tool.facts().annotations;
    let annotations = ToolAnnotations::new()
        .read_only(facts.read_only)
        .destructive(facts.destructive)
        .open_world(facts.open_world);
    let mcp_tool = Tool::new(spec.name, spec.description, Arc::new(schema)).annotate(annotations);
    match tool.output_schema() {
        Some(Value::Object(output)) => mcp_tool.with_raw_output_schema(Arc::new(output.clone())),
        _ => mcp_tool,
    }
}

/// Skills a person may invoke as prompts: `user-invocable` (the default) and with a name that
/// passes the safe-name rule. `disable-model-invocation: true` skills are included: they are
/// exactly the ones meant to be started by a person.
pub fn prompt_skills(provider: &SkillsProvider) -> impl Iterator<Item = &Arc<Skill>> {
    provider
        .catalog()
        .latest()
        .filter(|skill| skill.user_invocable() && is_safe_skill_name(skill.name()))
}

/// One skill as a prompt: its declared `arguments`, or one free-text argument described by
/// `argument-hint`.
#[must_use]
pub fn prompt(skill: &Skill) -> Prompt {
    let names = declared_argument_names(skill);
    let arguments = if names.is_empty() {
        let mut argument = PromptArgument::new(FREE_ARGUMENTS).with_required(false);
        argument = argument.with_description(match &skill.properties.argument_hint {
            Some(hint) => format!("What to pass the skill: {hint}"),
            None => "Anything the skill should work on (optional)".to_owned(),
        });
        vec![argument]
    } else {
        names
            .into_iter()
            .map(|name| PromptArgument::new(name).with_required(false))
            .collect()
    };
    let mut prompt = Prompt::new(
        skill.name(),
        Some(skill.description.clone()),
        Some(arguments),
    );
    if let Some(title) = &skill.title {
        prompt = prompt.with_title(title.clone());
    }
    prompt
}

/// The argument text a prompt's arguments make for substitution: the declared names in order
/// (a value with spaces quoted, so it stays one argument), or the free text.
///
/// # Errors
/// An argument the prompt does not declare.
pub fn prompt_arguments(
    skill: &Skill,
    given: Option<&JsonObject>,
) -> Result<Option<String>, ErrorData> {
    let names = declared_argument_names(skill);
    let Some(given) = given.filter(|given| !given.is_empty()) else {
        return Ok(None);
    };
    let text = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    if names.is_empty() {
        if let Some(unknown) = given.keys().find(|key| *key != FREE_ARGUMENTS) {
            return Err(ErrorData::invalid_params(
                format!(
                    "prompt `{}` takes one argument, `{FREE_ARGUMENTS}`; `{unknown}` is not one of its arguments",
                    skill.name()
                ),
                None,
            ));
        }
        return Ok(given.get(FREE_ARGUMENTS).map(text));
    }
    if let Some(unknown) = given.keys().find(|key| !names.contains(key)) {
        return Err(ErrorData::invalid_params(
            format!(
                "`{unknown}` is not an argument of prompt `{}`; its arguments are: {}",
                skill.name(),
                names.join(", ")
            ),
            None,
        ));
    }
    let words: Vec<String> = names
        .iter()
        .map(|name| quote_argument(&given.get(name).map(text).unwrap_or_default()))
        .collect();
    Ok(Some(words.join(" ")))
}

/// One argument as a word the skill's argument splitting
/// ([`skillbox_tools::substitution::split_arguments`], shell-like) reads back whole: in double
/// quotes, with `\` and `"` escaped, when it is empty or holds a space, a quote or a backslash.
fn quote_argument(value: &str) -> String {
    if !value.is_empty()
        && !value.contains(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '\\'))
    {
        return value.to_owned();
    }
    let mut quoted = String::with_capacity(value.len() + 2);
    quoted.push('"');
    for c in value.chars() {
        if matches!(c, '"' | '\\') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// The relative path a URI path names on disk: `SKILL.md` is the skill's instructions file
/// whatever its spelling.
fn disk_path<'a>(skill: &'a Skill, path: &'a str) -> &'a str {
    if path == SKILL_MD {
        &skill.skill_md_name
    } else {
        path
    }
}

/// The URI path of a file on disk (the inverse of [`disk_path`]).
fn uri_path<'a>(skill: &Skill, path: &'a str) -> &'a str {
    if path == skill.skill_md_name {
        SKILL_MD
    } else {
        path
    }
}

/// The MIME type of a file by its name; `SKILL.md` and other markdown are `text/markdown`.
#[must_use]
pub fn mime_type(path: &str) -> String {
    if path.rsplit('.').next().is_some_and(|extension| {
        extension.eq_ignore_ascii_case("md") || extension.eq_ignore_ascii_case("markdown")
    }) {
        return "text/markdown".to_owned();
    }
    mime_guess::from_path(path)
        .first_raw()
        .unwrap_or("application/octet-stream")
        .to_owned()
}

/// Every file of a skill as resources, `SKILL.md` first, then by path.
pub fn skill_resources(skill: &Skill) -> impl Iterator<Item = Resource> + '_ {
    let (files, _) = skill.resources();
    let instructions = files
        .iter()
        .filter(move |file| file.path == skill.skill_md_name);
    let others = files
        .iter()
        .filter(move |file| file.path != skill.skill_md_name);
    instructions.chain(others).map(move |file| {
        let path = uri_path(skill, &file.path);
        let name = if path == SKILL_MD {
            skill.name().to_owned()
        } else {
            format!("{}/{path}", skill.name())
        };
        let mut resource = Resource::new(uri::file_uri(skill.name(), path), name)
            .with_mime_type(mime_type(path))
            .with_size(file.size_bytes);
        if path == SKILL_MD {
            resource = resource.with_description(skill.description.clone());
        }
        resource
    })
}

/// The direct children of a folder of a skill (`relative` empty for the skill's own folder):
/// files with their metadata, folders as `inode/directory`.
///
/// # Errors
/// -32602 when no file of the skill lies in that folder (it is not a folder of the skill).
pub fn directory_children(skill: &Skill, relative: &str) -> Result<Vec<Resource>, ErrorData> {
    let prefix = if relative.is_empty() {
        String::new()
    } else {
        format!("{relative}/")
    };
    let (files, _) = skill.resources();
    let mut children: Vec<Resource> = Vec::new();
    let mut folders: Vec<&str> = Vec::new();
    let mut any = false;
    for file in files {
        let Some(rest) = file.path.strip_prefix(&prefix) else {
            continue;
        };
        any = true;
        match rest.split_once('/') {
            Some((folder, _)) => {
                if !folders.contains(&folder) {
                    folders.push(folder);
                }
            }
            None => {
                let path = uri_path(skill, &file.path);
                children.push(
                    Resource::new(uri::file_uri(skill.name(), path), rest.to_owned())
                        .with_mime_type(mime_type(path))
                        .with_size(file.size_bytes),
                );
            }
        }
    }
    if !any {
        return Err(ErrorData::invalid_params(
            format!(
                "`{}` is not a folder of skill `{}`",
                uri::directory_uri(skill.name(), relative),
                skill.name()
            ),
            None,
        ));
    }
    children.extend(folders.into_iter().map(|folder| {
        Resource::new(
            uri::directory_uri(skill.name(), &format!("{prefix}{folder}")),
            folder.to_owned(),
        )
        .with_mime_type(rmcp::model::DIRECTORY_MIME_TYPE)
    }));
    Ok(children)
}

/// Read one file of a skill a model may see, as text when it is UTF-8 without control
/// characters and as base64 otherwise, its size taken from `budget` first.
/// Blocks on the file system: call it off the async threads.
///
/// # Errors
/// -32602 (the version maps it) for a URI that is not a listed file of a visible skill, a
/// folder, or a file over [`MAX_RESOURCE_BYTES`]; -32603 when the file cannot be read.
pub fn read(
    provider: &SkillsProvider,
    uri: &str,
    budget: &mut dyn ReadBudget,
) -> Result<ReadResourceResult, ErrorData> {
    let (skill, path, file_size) = read_target(provider, uri)?;
    let on_disk = disk_path(&skill, &path).to_owned();
    if file_size > MAX_RESOURCE_BYTES {
        return Err(ErrorData::invalid_params(
            format!(
                "`{uri}` is {file_size} bytes, over the {MAX_RESOURCE_BYTES} bytes a resource read returns"
            ),
            None,
        ));
    }
    budget
        .take(file_size)
        .map_err(|busy| ErrorData::internal_error(busy.to_string(), None))?;
    let (bytes, cut) = skill
        .source
        .read_file(&on_disk, MAX_RESOURCE_BYTES)
        .map_err(|error| read_error(uri, &error))?;
    if cut {
        return Err(ErrorData::invalid_params(
            format!("`{uri}` grew past the {MAX_RESOURCE_BYTES} bytes a resource read returns"),
            None,
        ));
    }
    let mime = mime_type(&path);
    // Text only when JSON holds it at about its size: control characters are escaped as six
    // bytes each, so a file of them goes as base64 (4/3 of its size) instead.
    let bytes = match String::from_utf8(bytes) {
        Ok(text)
            if !text.contains(|c: char| c.is_control() && !matches!(c, '\n' | '\r' | '\t')) =>
        {
            return Ok(ReadResourceResult::new(vec![
                ResourceContents::text(text, uri).with_mime_type(mime),
            ]));
        }
        Ok(text) => text.into_bytes(),
        Err(error) => error.into_bytes(),
    };
    let contents =
        ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri)
            .with_mime_type(mime);
    Ok(ReadResourceResult::new(vec![contents]))
}

/// The skill, URI path and size of the listed file a URI names, in a skill a model may see.
///
/// # Errors
/// As [`read`], for everything but the file's size and content.
pub fn read_target(
    provider: &SkillsProvider,
    uri: &str,
) -> Result<(Arc<Skill>, String, u64), ErrorData> {
    let (skill, path) = uri::locate(provider, uri).map_err(|error| match error {
        uri::LocateError::NoSkill(_) => not_found(format!("{error} ({uri})")),
        uri::LocateError::Uri(_) => not_found(error),
    })?;
    if path.is_empty() {
        return Err(ErrorData::invalid_params(
            format!(
                "`{uri}` is the skill's folder; read `{uri}/SKILL.md`, or list the folder with resources/directory/read"
            ),
            None,
        ));
    }
    let on_disk = disk_path(&skill, &path);
    let (files, _) = skill.resources();
    let Some(file) = files.iter().find(|file| file.path == on_disk) else {
        if files
            .iter()
            .any(|file| file.path.starts_with(&format!("{on_disk}/")))
        {
            return Err(ErrorData::invalid_params(
                format!("`{uri}` is a folder; list it with resources/directory/read"),
                None,
            ));
        }
        return Err(not_found(format!(
            "skill `{}` has no file `{path}` ({uri}); resources/list or skills/get lists its files",
            skill.name()
        )));
    };
    let size = file.size_bytes;
    Ok((skill, path, size))
}

/// The skills-extension entry of a skill: the URI of its `SKILL.md`, the frontmatter as
/// written, and every file with its digest and size. `None` (with the reason) for a skill the
/// extension cannot carry: one whose frontmatter `name` differs from its name (a Skills
/// Protocol title), or with more files or bytes than hosts must accept. Blocks on the file
/// system (digests): call it off the async threads.
pub fn skill_entry(provider: &SkillsProvider, skill: &Skill) -> Result<SkillEntry, String> {
    let segment = uri::skill_segment(provider, skill);
    let raw = skill.properties.raw();
    let frontmatter_name = raw.get("name").and_then(Value::as_str).unwrap_or_default();
    if frontmatter_name != skill.name() {
        return Err(format!(
            "its frontmatter name `{frontmatter_name}` is not its name `{}`",
            skill.name()
        ));
    }
    let description = raw
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (files, more) = skill.resources();
    if more || files.len() > MAX_SKILL_FILES {
        return Err(format!(
            "it has more than {MAX_SKILL_FILES} files, more than hosts must accept"
        ));
    }
    let total: u64 = files.iter().map(|file| file.size_bytes).sum();
    if total > MAX_RESOURCE_BYTES {
        return Err(format!(
            "its files hold {total} bytes, more than the {MAX_RESOURCE_BYTES} hosts must accept"
        ));
    }
    let mut entries = Vec::with_capacity(files.len());
    for file in files {
        let digest = skill
            .resource_sha256(&file.path)
            .map_err(|error| format!("`{}` cannot be read: {error}", file.path))?;
        entries.push(SkillEntryFile::new(
            uri::file_uri(&segment, uri_path(skill, &file.path)),
            format!("sha256:{digest}"),
            file.size_bytes,
        ));
    }
    let mut frontmatter = SkillFrontmatter::new(skill.name(), description);
    for (key, value) in raw {
        if key != "name" && key != "description" {
            frontmatter = frontmatter.with_field(key.clone(), value.clone());
        }
    }
    let entry = SkillEntry::new(
        uri::file_uri(&segment, SKILL_MD),
        frontmatter,
        SkillResources::Files(entries),
    );
    entry.validate().map_err(|error| error.to_string())?;
    Ok(entry)
}

/// A failed read of a listed file: gone, replaced or no longer a regular file since it was
/// listed is the caller's "not found" (reload and list again); only an I/O failure is internal.
fn read_error(uri: &str, error: &CatalogError) -> ErrorData {
    match error {
        CatalogError::Io(_) => {
            ErrorData::internal_error(format!("cannot read `{uri}`: {error}"), None)
        }
        _ => not_found(format!("`{uri}` cannot be served now: {error}")),
    }
}

fn not_found(message: impl std::fmt::Display) -> ErrorData {
    ErrorData::resource_not_found(message.to_string(), None)
}

#[cfg(test)]
mod tests {
    use skillbox_tools::substitution::split_arguments;

    use super::quote_argument;

    #[test]
    fn quoted_arguments_split_back_whole() {
        let values = [
            "plain",
            "two words",
            "",
            "it's",
            "say \"hi\"",
            "back\\slash",
            "tab\tand\nnewline",
            "ünïcode wörds",
        ];
        let line: Vec<String> = values.iter().map(|value| quote_argument(value)).collect();
        assert_eq!(split_arguments(&line.join(" ")), values);
    }
}
