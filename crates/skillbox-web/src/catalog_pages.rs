//! The catalog pages: the skills list (filtered and paged on the server, so 10,000 skills cost
//! one page of rows), one skill as its author and a model see it, the file viewer, raw files,
//! and the event stream that tells open pages the catalog was reloaded.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;

use askama::Template;
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde::Deserialize;
use skillbox_core::{Diagnostic, Skill, SkillKind};
use skillbox_tools::SkillsProvider;

use crate::auth::Visitor;
use crate::pages::{Layout, render};
use crate::render::{FileView, MAX_VIEWED_BYTES, is_image_path, markdown_html, view_file};
use crate::{
    ApiError, BUSY_ANSWERING, COUNTED_ANSWER_BYTES, MAX_CATALOG_STREAMS, WebError, WebState,
    on_blocking_thread,
};

/// Rows of the skills list per page.
pub const SKILLS_PER_PAGE: usize = 50;
/// Longest search text taken, in characters (the rest is ignored).
const MAX_QUERY_CHARS: usize = 200;
/// Largest raw file served, in bytes.
const MAX_RAW_BYTES: u64 = 16 * 1024 * 1024;
/// The policy of raw skill files: nothing in them runs, even opened on their own.
const RAW_FILE_POLICY: &str =
    "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox";

/// The list's filters, as the query string carries them.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct SkillFilter {
    #[serde(default)]
    q: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    errors: String,
    #[serde(default)]
    page: Option<usize>,
    /// `rows`: only the rows and the pager, for the search box's updates.
    #[serde(default)]
    fragment: String,
}

impl SkillFilter {
    fn query_words(&self) -> Vec<String> {
        self.q
            .chars()
            .take(MAX_QUERY_CHARS)
            .collect::<String>()
            .to_lowercase()
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    }

    fn matches(&self, skill: &Skill, words: &[String]) -> bool {
        let kind_matches = match self.kind.as_str() {
            "action" => skill.kind() == SkillKind::Action,
            "instruction" => skill.kind() == SkillKind::Instruction,
            _ => true,
        };
        let errors_match = match self.errors.as_str() {
            "yes" => skill.has_errors(),
            "no" => !skill.has_errors(),
            "any-diagnostic" => !skill.diagnostics.is_empty(),
            _ => true,
        };
        kind_matches
            && errors_match
            && (self.namespace.is_empty() || skill.namespace() == self.namespace)
            && (words.is_empty() || {
                let haystack = format!(
                    "{} {} {}",
                    skill.name(),
                    skill.title.as_deref().unwrap_or_default(),
                    skill.description
                )
                .to_lowercase();
                words.iter().all(|word| haystack.contains(word.as_str()))
            })
    }

    /// The query string of this filter on another page.
    fn on_page(&self, page: usize) -> String {
        let mut pairs = Vec::new();
        for (name, value) in [
            ("q", &self.q),
            ("kind", &self.kind),
            ("namespace", &self.namespace),
            ("errors", &self.errors),
        ] {
            if !value.is_empty() {
                pairs.push(format!("{name}={}", encode_component(value)));
            }
        }
        pairs.push(format!("page={page}"));
        format!("/skills?{}", pairs.join("&"))
    }
}

/// One row of the list.
pub(crate) struct SkillRow {
    name: String,
    version: Option<String>,
    title: Option<String>,
    description: String,
    kind: String,
    namespace: String,
    format: &'static str,
    model_invocable: bool,
    user_invocable: bool,
    tools: usize,
    errors: usize,
    warnings: usize,
    versions: usize,
}

impl SkillRow {
    fn of(skill: &Skill, versions: usize) -> Self {
        let errors = skill
            .diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.is_error())
            .count();
        SkillRow {
            name: skill.name().to_owned(),
            version: skill.version_label(),
            title: skill.title.clone(),
            description: skill.description.clone(),
            kind: skill.kind().to_string(),
            namespace: skill.namespace().to_owned(),
            format: format_label(skill),
            model_invocable: skill.model_invocable(),
            user_invocable: skill.user_invocable(),
            tools: skill.tools.len(),
            errors,
            warnings: skill.diagnostics.len() - errors,
            versions,
        }
    }

    fn link(&self) -> String {
        format!("/skills/{}", encode_component(&self.name))
    }
}

fn format_label(skill: &Skill) -> &'static str {
    match skill.format {
        skillbox_core::SkillFormat::AgentSkill => "SKILL.md",
        skillbox_core::SkillFormat::SkillsProtocol => "skill.toml",
    }
}

/// A folder that could not be loaded, with why.
pub(crate) struct SkippedRow {
    path: String,
    diagnostics: Vec<DiagnosticRow>,
}

/// A diagnostic as the pages show it.
pub(crate) struct DiagnosticRow {
    severity: String,
    code: String,
    location: String,
    message: String,
    hint: Option<String>,
}

impl DiagnosticRow {
    fn of(diagnostic: &Diagnostic, base: Option<&std::path::Path>) -> Self {
        let file = diagnostic.file.as_ref().map(|file| {
            base.and_then(|base| file.strip_prefix(base).ok())
                .unwrap_or(file)
                .display()
                .to_string()
        });
        let location = match (file, diagnostic.line, diagnostic.column) {
            (Some(file), Some(line), Some(column)) => format!("{file}:{line}:{column}"),
            (Some(file), Some(line), None) => format!("{file}:{line}"),
            (Some(file), None, _) => file,
            (None, _, _) => String::new(),
        };
        DiagnosticRow {
            severity: diagnostic.severity.to_string(),
            code: diagnostic.code.as_str().to_owned(),
            location,
            message: diagnostic.message.clone(),
            hint: diagnostic.hint.clone(),
        }
    }
}

#[derive(Template)]
#[template(path = "skills.html")]
struct SkillsPage {
    layout: Layout,
    list: SkillList,
    filter: SkillFilter,
    namespaces: Vec<(String, usize)>,
    skipped: Vec<SkippedRow>,
    total_skills: usize,
}

#[derive(Template)]
#[template(path = "skill_rows.html")]
struct SkillList {
    rows: Vec<SkillRow>,
    matched: usize,
    page: usize,
    pages: usize,
    previous: Option<String>,
    next: Option<String>,
}

/// `GET /` and `GET /skills`: the list, filtered and paged; `?fragment=rows` answers the rows
/// alone for the search box.
pub(crate) async fn skills_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
    Query(filter): Query<SkillFilter>,
) -> Response {
    let provider = state.provider();
    let catalog = provider.catalog();
    let words = filter.query_words();
    let matching: Vec<&Arc<Skill>> = catalog
        .latest()
        .filter(|skill| filter.matches(skill, &words))
        .collect();
    let pages = matching.len().div_ceil(SKILLS_PER_PAGE).max(1);
    let page = filter.page.unwrap_or(1).clamp(1, pages);
    let rows = matching
        .iter()
        .skip((page - 1) * SKILLS_PER_PAGE)
        .take(SKILLS_PER_PAGE)
        .map(|skill| SkillRow::of(skill, catalog.versions(skill.name()).count()))
        .collect();
    let list = SkillList {
        rows,
        matched: matching.len(),
        page,
        pages,
        previous: (page > 1).then(|| filter.on_page(page - 1)),
        next: (page < pages).then(|| filter.on_page(page + 1)),
    };
    if filter.fragment == "rows" {
        return render(&list, StatusCode::OK);
    }
    let mut namespace_counts: BTreeMap<&str, usize> = BTreeMap::new();
    for skill in catalog.latest() {
        *namespace_counts.entry(skill.namespace()).or_default() += 1;
    }
    // A namespace of one skill is just its name: the select lists the shared ones.
    let namespaces = namespace_counts
        .into_iter()
        .filter(|(name, count)| *count > 1 || *name == filter.namespace)
        .map(|(name, count)| (name.to_owned(), count))
        .collect();
    let skipped = catalog
        .skipped()
        .iter()
        .map(|skipped| SkippedRow {
            path: skipped.path.display().to_string(),
            diagnostics: skipped
                .diagnostics
                .iter()
                .map(|diagnostic| DiagnosticRow::of(diagnostic, None))
                .collect(),
        })
        .collect();
    let page = SkillsPage {
        layout: Layout::for_visitor(&visitor, "skills", "Skills".into()),
        total_skills: catalog.latest().count(),
        list,
        filter,
        namespaces,
        skipped,
    };
    render(&page, StatusCode::OK)
}

/// `?version=` on the skill pages.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct VersionQuery {
    version: Option<String>,
}

fn find_skill(
    provider: &SkillsProvider,
    name: &str,
    version: Option<&str>,
) -> Result<Arc<Skill>, WebError> {
    let version = version.filter(|version| !version.is_empty());
    provider
        .catalog()
        .find(name, version)
        .cloned()
        .map_err(|error| {
            let hint = provider
                .catalog()
                .closest_name(name)
                .map(|closest| format!(" Did you mean `{closest}`?"))
                .unwrap_or_default();
            WebError::NotFound(format!("{error}.{hint}"))
        })
}

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

/// `/skills/{name}/files/{*path}`.
#[derive(Template)]
#[template(path = "file.html")]
struct FilePage {
    layout: Layout,
    skill: String,
    skill_link: String,
    path: String,
    size: String,
    raw_link: String,
    view: FileView,
    cut: bool,
}

/// `GET /skills/{name}/files/{*path}`: one file, highlighted, shown as an image, or described.
pub(crate) async fn file_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
    Path((name, path)): Path<(String, String)>,
    Query(query): Query<VersionQuery>,
) -> Result<Response, WebError> {
    let provider = state.provider();
    let skill = find_skill(&provider, &name, query.version.as_deref())?;
    let (view, size, cut) = on_blocking_thread(&state, {
        let skill = Arc::clone(&skill);
        let path = path.clone();
        move || -> Result<_, WebError> {
            let (resources, _) = skill.resources();
            let size = resources
                .iter()
                .find(|resource| resource.path == path)
                .map(|resource| resource.size_bytes)
                .ok_or_else(|| not_a_file(&skill, &path))?;
            let (bytes, cut) = skill
                .source
                .read_file(&path, MAX_VIEWED_BYTES)
                .map_err(|error| WebError::NotFound(error.to_string()))?;
            Ok((view_file(&path, bytes), size, cut))
        }
    })
    .await??;
    let version_query = query
        .version
        .as_deref()
        .filter(|version| !version.is_empty())
        .map(|version| format!("?version={}", encode_component(version)))
        .unwrap_or_default();
    let skill_link = format!("/skills/{}{version_query}", encode_component(skill.name()));
    let page = FilePage {
        layout: Layout::for_visitor(&visitor, "skills", format!("{path} · {}", skill.name())),
        raw_link: format!(
            "/skills/{}/raw/{}{version_query}",
            encode_component(skill.name()),
            encode_path(&path)
        ),
        skill: skill.name().to_owned(),
        skill_link,
        size: human_size(size),
        path,
        view,
        cut,
    };
    Ok(render(&page, StatusCode::OK))
}

fn not_a_file(skill: &Skill, path: &str) -> WebError {
    WebError::NotFound(format!(
        "`{path}` is not a file of skill `{}`; its page lists its files",
        skill.name()
    ))
}

/// `GET /skills/{name}/raw/{*path}`: a file's bytes. Images are shown inline; anything else is
/// an attachment. Either way its policy sandboxes it, so an HTML or SVG file opened on its own
/// runs nothing.
pub(crate) async fn raw_file(
    State(state): State<Arc<WebState>>,
    Path((name, path)): Path<(String, String)>,
    Query(query): Query<VersionQuery>,
) -> Result<Response, WebError> {
    let provider = state.provider();
    let skill = find_skill(&provider, &name, query.version.as_deref())?;
    let bytes = on_blocking_thread(&state, {
        let skill = Arc::clone(&skill);
        let path = path.clone();
        let answers = Arc::clone(&state.answers);
        move || -> Result<Vec<u8>, WebError> {
            let (resources, _) = skill.resources();
            let Some(listed) = resources.iter().find(|resource| resource.path == path) else {
                return Err(not_a_file(&skill, &path));
            };
            // Refused before it is read when it is too large, or when the answers budget has
            // no room for it.
            let too_large = || {
                WebError::BadRequest(format!(
                    "`{path}` is larger than {MAX_RAW_BYTES} bytes; read it from the skill's folder"
                ))
            };
            if listed.size_bytes > MAX_RAW_BYTES {
                return Err(too_large());
            }
            let listed_size = usize::try_from(listed.size_bytes).unwrap_or(usize::MAX);
            if listed_size >= COUNTED_ANSWER_BYTES && listed_size > answers.available_permits() {
                return Err(WebError::Busy(BUSY_ANSWERING.into()));
            }
            let (bytes, cut) = skill
                .source
                .read_file(&path, MAX_RAW_BYTES)
                .map_err(|error| WebError::NotFound(error.to_string()))?;
            if cut {
                return Err(too_large());
            }
            Ok(bytes)
        }
    })
    .await??;
    let image = is_image_path(&path);
    let content_type = if image {
        mime_guess::from_path(&path)
            .first_raw()
            .unwrap_or("application/octet-stream")
    } else {
        "application/octet-stream"
    };
    let file_name: String = path
        .rsplit('/')
        .next()
        .unwrap_or("file")
        .chars()
        .filter(|character| character.is_ascii_graphic() && !matches!(character, '"' | '\\' | ';'))
        .collect();
    let disposition = if image {
        "inline".to_owned()
    } else {
        format!("attachment; filename=\"{file_name}\"")
    };
    let mut response = (StatusCode::OK, bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(RAW_FILE_POLICY),
    );
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}

/// `GET /api/catalog/events`: an event each time the catalog is reloaded, so open catalog
/// pages show an edited skill without a manual refresh.
pub(crate) async fn catalog_events(State(state): State<Arc<WebState>>) -> Response {
    let Ok(permit) = Arc::clone(&state.catalog_streams).try_acquire_owned() else {
        return ApiError(WebError::Busy(format!(
            "{MAX_CATALOG_STREAMS} pages follow the catalog already; close some"
        )))
        .into_response();
    };
    let mut changes = state.live.subscribe();
    let first = state.live.generation();
    let live = Arc::clone(&state.live);
    let stream = async_stream_of(move |sender| async move {
        let hello = Event::default()
            .event("catalog")
            .data(serde_json::json!({ "generation": first }).to_string());
        if sender.send(Ok::<_, Infallible>(hello)).await.is_err() {
            return;
        }
        loop {
            let generation = match changes.recv().await {
                Ok(change) => change.generation,
                // Behind by more than the backlog: the generation in effect now.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => live.generation(),
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            let event = Event::default()
                .event("catalog")
                .data(serde_json::json!({ "generation": generation }).to_string());
            if sender.send(Ok(event)).await.is_err() {
                return;
            }
        }
    });
    // The place is held as long as the page reads the stream.
    let stream = futures_util::StreamExt::map(stream, move |event| {
        let _held = &permit;
        event
    });
    let stream =
        futures_util::StreamExt::take_until(stream, state.shutdown.clone().cancelled_owned());
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// A stream fed by a task: `produce` sends into a small channel until the receiver is gone.
/// The task is dropped as soon as the receiver is (the page closed), not at its next send:
/// a producer waiting for a change that never comes would otherwise hold what it holds (its
/// place among the open streams) for good.
pub(crate) fn async_stream_of<T, F, Fut>(produce: F) -> impl Stream<Item = T>
where
    T: Send + 'static,
    F: FnOnce(tokio::sync::mpsc::Sender<T>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (sender, receiver) = tokio::sync::mpsc::channel(16);
    let watcher = sender.clone();
    let producer = produce(sender);
    tokio::spawn(async move {
        tokio::select! {
            () = producer => {}
            () = watcher.closed() => {}
        }
    });
    futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|item| (item, receiver))
    })
}

/// A size for people: bytes, KiB or MiB.
pub(crate) fn human_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    match bytes {
        bytes if bytes < KIB => format!("{bytes} B"),
        bytes if bytes < KIB * KIB => format!("{:.1} KiB", bytes as f64 / KIB as f64),
        bytes => format!("{:.1} MiB", bytes as f64 / (KIB * KIB) as f64),
    }
}

/// What stays literal in a path segment or query value: letters, digits and `-_.~`
/// (RFC 3986's unreserved characters).
const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// `text` percent-encoded for one path segment or query value.
pub(crate) fn encode_component(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, COMPONENT).to_string()
}

/// A relative path percent-encoded segment by segment (the slashes kept).
pub(crate) fn encode_path(path: &str) -> String {
    path.split('/')
        .map(encode_component)
        .collect::<Vec<_>>()
        .join("/")
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
