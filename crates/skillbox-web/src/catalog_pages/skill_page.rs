//! One skill's page (`GET /skills/{name}`), as its author and a model see it: the rendered
//! body, the frontmatter, the versions, the file tree, the tools, the diagnostics, the MCP
//! servers it declares, and the exact text `load_skill` returns.

use std::sync::Arc;

use askama::Template;
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use skillbox_core::Skill;
use skillbox_tools::SkillsProvider;

use super::rows::{DiagnosticRow, SkillRow};
use super::skill_lookup::{VersionQuery, find_skill};
use crate::auth::Visitor;
use crate::pages::{Layout, encode_component, encode_path, human_size, render};
use crate::render::{is_image_path, markdown_html};
use crate::{WebError, WebState, on_blocking_thread};

/// One tool of a skill, as the page lists it.
struct ToolRow {
    name: String,
    description: String,
    handler: Option<String>,
    schema: String,
    required: Vec<String>,
}

/// One line of the file tree: a folder (no link) or a file.
struct FileRow {
    path: String,
    name: String,
    depth: usize,
    size: String,
    link: Option<String>,
}

/// The tree's lines for sorted file paths: each folder once, before its files.
fn tree_rows(files: Vec<(String, u64)>, link: &dyn Fn(&str) -> String) -> Vec<FileRow> {
    let mut rows = Vec::with_capacity(files.len());
    let mut open: Vec<String> = Vec::new();
    for (path, size_bytes) in files {
        let parts: Vec<&str> = path.split('/').collect();
        let folders = &parts[..parts.len() - 1];
        let shared = open
            .iter()
            .zip(folders)
            .take_while(|(open, folder)| open.as_str() == **folder)
            .count();
        open.truncate(shared);
        for (depth, folder) in folders.iter().enumerate().skip(shared) {
            rows.push(FileRow {
                path: folders[..=depth].join("/"),
                name: format!("{folder}/"),
                depth,
                size: String::new(),
                link: None,
            });
            open.push((*folder).to_owned());
        }
        rows.push(FileRow {
            name: parts[parts.len() - 1].to_owned(),
            depth: folders.len(),
            size: human_size(size_bytes),
            link: Some(link(&path)),
            path,
        });
    }
    rows
}

#[derive(Template)]
#[template(path = "skill.html")]
struct SkillPage {
    layout: Layout,
    row: SkillRow,
    skill_md: String,
    directory: String,
    body_html: String,
    frontmatter: Vec<(String, String)>,
    versions: Vec<(String, String, bool)>,
    files: Vec<FileRow>,
    files_cut: bool,
    tools: Vec<ToolRow>,
    diagnostics: Vec<DiagnosticRow>,
    load_text: String,
    load_note: Option<String>,
    allowed_tools: Vec<String>,
    argument_hint: Option<String>,
    model: Option<String>,
    context: Option<String>,
    /// MCP servers it declares: name, how it is reached (command or URL), the file declaring it.
    servers: Vec<(String, String, String)>,
    /// Skills loaded with it.
    requires: Vec<String>,
}

/// `GET /skills/{name}`: the rendered body, frontmatter, versions, files, tools, diagnostics
/// and the exact text `load_skill` returns.
pub(crate) async fn skill_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
    Path(name): Path<String>,
    Query(query): Query<VersionQuery>,
) -> Result<Response, WebError> {
    let provider = state.provider();
    let skill = find_skill(&provider, &name, query.version.as_deref())?;
    let versions: Vec<(String, String, bool)> = provider
        .catalog()
        .versions(&name)
        .map(|other| {
            let label = other
                .version_label()
                .unwrap_or_else(|| "unversioned".into());
            let link = format!(
                "/skills/{}?version={}",
                encode_component(other.name()),
                encode_component(&label)
            );
            (label, link, Arc::ptr_eq(other, &skill))
        })
        .collect();
    let version_query = skill
        .id
        .version
        .as_ref()
        .map(|version| format!("?version={}", encode_component(&version.to_string())))
        .unwrap_or_default();
    let file_link = {
        let base = format!("/skills/{}", encode_component(skill.name()));
        let version_query = version_query.clone();
        move |path: &str, raw: bool| {
            format!(
                "{base}/{}/{}{version_query}",
                if raw { "raw" } else { "files" },
                encode_path(path)
            )
        }
    };
    // The body is rendered where it is read, on a blocking thread: a large body takes a
    // second, which would hold up every other request on the runtime's few threads. The text
    // `load_skill` returns is made there too (it reads the skill's folder).
    let (body_html, files, files_cut, (load_text, load_note)) = on_blocking_thread(&state, {
        let skill = Arc::clone(&skill);
        let file_link = file_link.clone();
        let provider = Arc::clone(&provider);
        move || {
            let load =
                tokio::runtime::Handle::current().block_on(load_skill_text(&provider, &skill));
            let body_html = match skill.body() {
                Ok(body) => {
                    let link = |path: &str| file_link(path, is_image_path(path));
                    markdown_html(&body.text, &link)
                }
                Err(error) => format!(
                    "<p class=\"error\">{}</p>",
                    ammonia::clean_text(&error.to_string())
                ),
            };
            let (resources, cut) = skill.resources();
            (
                body_html,
                resources
                    .iter()
                    .map(|resource| (resource.path.clone(), resource.size_bytes))
                    .collect::<Vec<_>>(),
                cut,
                load,
            )
        }
    })
    .await?;
    let files = tree_rows(files, &|path| file_link(path, false));
    let tools = skill
        .tools
        .iter()
        .map(|tool| ToolRow {
            name: tool.name.clone(),
            description: tool.description.clone(),
            handler: tool.script.clone(),
            schema: serde_json::to_string_pretty(&tool.input_schema).unwrap_or_default(),
            required: tool
                .required_parameters()
                .into_iter()
                .map(str::to_owned)
                .collect(),
        })
        .collect();
    let frontmatter = skill
        .properties
        .raw()
        .iter()
        .map(|(key, value)| {
            let shown = match value {
                serde_json::Value::String(text) => text.clone(),
                other => serde_json::to_string(other).unwrap_or_default(),
            };
            (key.clone(), shown)
        })
        .collect();
    let properties = &skill.properties;
    let page = SkillPage {
        layout: Layout::for_visitor(&visitor, "skills", skill.name().to_owned()),
        row: SkillRow::of(&skill, versions.len()),
        skill_md: skill.skill_md_name.clone(),
        directory: skill.directory.display().to_string(),
        body_html,
        frontmatter,
        versions,
        files,
        files_cut,
        tools,
        diagnostics: skill
            .diagnostics
            .iter()
            .map(|diagnostic| DiagnosticRow::of(diagnostic, Some(&skill.directory)))
            .collect(),
        load_text,
        load_note,
        allowed_tools: properties.allowed_tools.clone(),
        argument_hint: properties.argument_hint.clone(),
        model: properties.model.clone(),
        context: properties.context.clone(),
        servers: properties
            .mcp_servers
            .iter()
            .map(|server| {
                let reached = match &server.transport {
                    skillbox_core::ServerTransport::Stdio { command, args, .. } => {
                        std::iter::once(command.as_str())
                            .chain(args.iter().map(String::as_str))
                            .collect::<Vec<_>>()
                            .join(" ")
                    }
                    skillbox_core::ServerTransport::StreamableHttp { url } => url.clone(),
                };
                (server.name.clone(), reached, server.declared_in.clone())
            })
            .collect(),
        requires: properties.requires.clone(),
    };
    Ok(render(&page, StatusCode::OK))
}

/// The text `load_skill` returns for `skill`, and a note when the page's copy differs from a
/// model's in any way (its commands are never run for a page view).
async fn load_skill_text(
    provider: &SkillsProvider,
    skill: &Arc<Skill>,
) -> (String, Option<String>) {
    let mut notes = Vec::new();
    if !skill.visible_to_model() {
        notes.push("This skill is hidden from models: `load_skill` refuses it. A person invoking `/name` gets this text.".to_owned());
    }
    let commands_on = provider.runs_commands_on_load();
    if commands_on {
        notes.push(
            "This server runs `!`command`` lines when a skill loads; they are shown here unrun."
                .to_owned(),
        );
    }
    let unrun = provider.without_commands();
    let text = match unrun.skill_instructions(skill, None).await {
        Ok(text) => text,
        Err(message) => {
            notes.push(message);
            String::new()
        }
    };
    let note = (!notes.is_empty()).then(|| notes.join(" "));
    (text, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_shows_each_folder_once_before_its_files() {
        let rows = tree_rows(
            vec![
                ("SKILL.md".into(), 10),
                ("assets/a.csv".into(), 1),
                ("scripts/lib/x.py".into(), 2),
                ("scripts/run.py".into(), 3),
            ],
            &|path| format!("/f/{path}"),
        );
        let shown: Vec<(String, usize)> = rows
            .iter()
            .map(|row| (row.name.clone(), row.depth))
            .collect();
        assert_eq!(
            shown,
            [
                ("SKILL.md".to_owned(), 0),
                ("assets/".to_owned(), 0),
                ("a.csv".to_owned(), 1),
                ("scripts/".to_owned(), 0),
                ("lib/".to_owned(), 1),
                ("x.py".to_owned(), 2),
                ("run.py".to_owned(), 1),
            ]
        );
    }
}
