//! The MCP server handler: every request takes the provider in effect once
//! ([`LiveProvider::current`]) and answers from that snapshot, so a reload in the middle of a
//! request never mixes two catalogs. Tool calls go through the door policy every door uses
//! (`DoorPolicy::call`), and so do the run queue and the blocking pool of everything else
//! that reads files or runs commands here. Reloads are announced to every connected session
//! (`list_changed`, and `resources/updated` for subscribed files), and to 2026-07-28 clients
//! through their `subscriptions/listen` streams.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    CompletionInfo, ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    GetSkillRequestParams, GetSkillResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, PromptMessage, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse, Reference,
    Resource, ResourceTemplate, Role, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use skillbox_services::{ReadBudget, Unbudgeted};
use skillbox_tools::registry::{self, Offer};
use skillbox_tools::{
    Arguments, CallContext, CallStatus, CatalogChange, Door, DoorPolicy, LiveProvider,
    PromptFormat, SkillsProvider, ToolProfile,
};
use tokio::sync::broadcast;

use crate::AnswerBudget;
use crate::catalog_view::{self, FREE_ARGUMENTS};
use crate::uri;

/// Resources per `resources/list` page.
pub const RESOURCES_PER_PAGE: usize = 1000;
/// Skills per `skills/list` page (each entry hashes every file of its skill).
pub const SKILLS_PER_PAGE: usize = 50;
/// Prompts per `prompts/list` page.
pub const PROMPTS_PER_PAGE: usize = 1000;
/// Sessions open at once by default (each holds its subscriptions and rmcp's queues; idle
/// HTTP sessions live for minutes).
pub const DEFAULT_MAX_SESSIONS: usize = 1024;
/// Resources one session may subscribe to.
pub const MAX_SUBSCRIPTIONS: usize = 1024;
/// Bytes of URIs one listen stream's filter may hold in all.
pub const MAX_LISTEN_URI_BYTES: usize = 64 * 1024;
/// Longest URI a subscription may name, in bytes.
pub const MAX_SUBSCRIBED_URI_BYTES: usize = 4096;
/// Longest one notification may wait for a session's queue: a client that reads nothing must
/// not hold up the others' notifications.
pub const NOTIFY_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);

/// What the server offers, and the bounds that keep one client from taking it over.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// Which tools: the skills profile or the 8 Skills Protocol tools.
    pub profile: ToolProfile,
    /// The door policy every call goes through: its run queue (calls that may run code wait
    /// there, or get a "busy, retry" error result) and its blocking pool (file reads). A
    /// server shares one between all its doors.
    pub policy: Arc<DoorPolicy>,
    /// The door's name in logs and metrics (stdio or HTTP).
    pub door: Door,
    /// MCP sessions (`initialize`d) open at once, and 2026-07-28 `subscriptions/listen`
    /// streams open at once (counted apart); a new one past this is refused. One-shot
    /// stateless requests are not counted.
    pub max_sessions: usize,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions {
            profile: ToolProfile::Skills,
            policy: Arc::new(DoorPolicy::default()),
            door: Door::McpStdio,
            max_sessions: DEFAULT_MAX_SESSIONS,
        }
    }
}

/// What all sessions share.
struct Shared {
    live: Arc<LiveProvider>,
    options: McpOptions,
    sessions: Mutex<Vec<Weak<Session>>>,
    /// Sessions `initialize`d and not yet ended.
    open_sessions: Arc<AtomicUsize>,
    /// `subscriptions/listen` streams open.
    open_listens: AtomicUsize,
    instructions: Mutex<Option<(u64, Arc<str>)>>,
}

/// One connected client (stdio has one; streamable HTTP one per MCP session, or per request
/// when stateless).
struct Session {
    peer: OnceLock<Peer<RoleServer>>,
    subscribed: Mutex<BTreeSet<String>>,
    /// The count this session holds a place in once `initialize`d.
    counted_in: OnceLock<Arc<AtomicUsize>>,
}

impl Session {
    fn new() -> Self {
        Session {
            peer: OnceLock::new(),
            subscribed: Mutex::default(),
            counted_in: OnceLock::new(),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(open) = self.counted_in.get() {
            open.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Holds a place among the open listen streams while the stream lasts.
struct ListenPlace<'a>(&'a AtomicUsize);

impl Drop for ListenPlace<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Take one of `limit` places counted by `open`, or say how many are open.
fn take_place(open: &AtomicUsize, limit: usize) -> Result<(), usize> {
    open.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |count| {
        (count < limit).then_some(count + 1)
    })
    .map(|_| ())
}

/// The MCP door over a live provider. Clone it for each session ([`SkillsMcpServer::session`]).
#[derive(Clone)]
pub struct SkillsMcpServer {
    shared: Arc<Shared>,
    session: Arc<Session>,
}

impl std::fmt::Debug for SkillsMcpServer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SkillsMcpServer")
            .field("options", &self.shared.options)
            .finish_non_exhaustive()
    }
}

impl SkillsMcpServer {
    /// A server over `live`. Starts the task that announces reloads to connected sessions, so
    /// it must be called inside a tokio runtime.
    #[must_use]
    pub fn new(live: Arc<LiveProvider>, options: McpOptions) -> Self {
        let shared = Arc::new(Shared {
            live,
            options,
            sessions: Mutex::default(),
            open_sessions: Arc::default(),
            open_listens: AtomicUsize::new(0),
            instructions: Mutex::default(),
        });
        tokio::spawn(announce_reloads(
            Arc::downgrade(&shared),
            shared.live.subscribe(),
        ));
        SkillsMcpServer {
            shared,
            session: Arc::new(Session::new()),
        }
    }

    /// The handler for a new session (or one stateless request): the same catalog and
    /// options, its own peer and subscriptions. It takes a place among the open sessions only
    /// when `initialize`d.
    #[must_use]
    pub fn session(&self) -> Self {
        SkillsMcpServer {
            shared: Arc::clone(&self.shared),
            session: Arc::new(Session::new()),
        }
    }

    /// Count this session among the open ones, or refuse it when
    /// [`McpOptions::max_sessions`] are open.
    fn count_session(&self) -> Result<(), ErrorData> {
        if self.session.counted_in.get().is_some() {
            return Ok(());
        }
        let open = &self.shared.open_sessions;
        take_place(open, self.shared.options.max_sessions).map_err(|count| {
            tracing::warn!(count, "MCP session refused: too many sessions are open");
            ErrorData::internal_error(
                format!("{count} MCP sessions are open, the most this server keeps; end one (DELETE the session) or retry later"),
                None,
            )
        })?;
        if self.session.counted_in.set(Arc::clone(open)).is_err() {
            open.fetch_sub(1, Ordering::SeqCst);
        }
        Ok(())
    }

    /// Run blocking work (file reads, digests) on the door policy's blocking pool, never on
    /// the async threads.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> Result<T, ErrorData> + Send + 'static,
    ) -> Result<T, ErrorData> {
        self.shared
            .options
            .policy
            .blocking()
            .run(work)
            .await
            .map_err(|error| ErrorData::internal_error(format!("the request {error}"), None))?
    }

    fn provider(&self) -> Arc<SkillsProvider> {
        self.shared.live.current()
    }

    fn remember_peer(&self, peer: &Peer<RoleServer>) {
        if self.session.peer.set(peer.clone()).is_ok()
            && let Ok(mut sessions) = self.shared.sessions.lock()
        {
            sessions.retain(|session| session.strong_count() > 0);
            sessions.push(Arc::downgrade(&self.session));
        }
    }

    /// The server's instructions: the skills section of the system prompt, rendered once per
    /// catalog generation.
    fn instructions(&self) -> Arc<str> {
        let generation = self.shared.live.generation();
        if let Ok(cached) = self.shared.instructions.lock()
            && let Some((cached_generation, text)) = cached.as_ref()
            && *cached_generation == generation
        {
            return Arc::clone(text);
        }
        let text: Arc<str> = Arc::from(self.provider().system_prompt(PromptFormat::Markdown));
        if let Ok(mut cached) = self.shared.instructions.lock() {
            *cached = Some((generation, Arc::clone(&text)));
        }
        text
    }
}

/// Send what each reload changed to every session still connected.
async fn announce_reloads(shared: Weak<Shared>, mut changes: broadcast::Receiver<CatalogChange>) {
    loop {
        let change = match changes.recv().await {
            Ok(change) => Some(change),
            Err(broadcast::error::RecvError::Lagged(_)) => None,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let sessions: Vec<Arc<Session>> = match shared.sessions.lock() {
            Ok(mut sessions) => {
                sessions.retain(|session| session.strong_count() > 0);
                sessions.iter().filter_map(Weak::upgrade).collect()
            }
            Err(_) => return,
        };
        // Which files changed matters only to sessions with subscriptions.
        let any_subscribed = sessions.iter().any(|session| {
            session
                .subscribed
                .lock()
                .is_ok_and(|subscribed| !subscribed.is_empty())
        });
        let changed = if any_subscribed {
            changed_uris(&shared.live.current(), change.as_ref())
        } else {
            None
        };
        for session in sessions {
            let Some(peer) = session.peer.get() else {
                continue;
            };
            if peer.is_transport_closed() {
                continue;
            }
            // Each send may wait for a full queue; a session that reads nothing is skipped
            // after NOTIFY_TIMEOUT rather than holding up every other session.
            let stalled = tokio::time::timeout(NOTIFY_TIMEOUT, async {
                let _ = peer.notify_tool_list_changed().await;
                let _ = peer.notify_prompt_list_changed().await;
                let _ = peer.notify_resource_list_changed().await;
            })
            .await
            .is_err();
            if stalled {
                tracing::debug!("a session reads no notifications; skipped");
                continue;
            }
            let subscribed: Vec<String> = session
                .subscribed
                .lock()
                .map(|subscribed| {
                    subscribed
                        .iter()
                        .filter(|uri| {
                            changed
                                .as_ref()
                                .is_none_or(|changed| changed.contains(*uri))
                        })
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            for uri in subscribed {
                let sent = tokio::time::timeout(
                    NOTIFY_TIMEOUT,
                    peer.notify_resource_updated(
                        rmcp::model::ResourceUpdatedNotificationParam::new(uri),
                    ),
                )
                .await;
                if sent.is_err() {
                    break;
                }
            }
        }
    }
}

/// The URIs of the files a reload's change touched, among the skills now served; `None` when
/// unknown (a lagging receiver), meaning anything may have changed.
fn changed_uris(
    provider: &SkillsProvider,
    change: Option<&CatalogChange>,
) -> Option<BTreeSet<String>> {
    let change = change?;
    let mut uris = BTreeSet::new();
    for skill in provider.model_skills() {
        for path in &change.changed_paths {
            if let Ok(relative) = path.strip_prefix(&skill.directory) {
                let relative = relative.to_string_lossy();
                let relative = if relative == skill.skill_md_name {
                    catalog_view::SKILL_MD.to_owned()
                } else {
                    relative.into_owned()
                };
                if !relative.is_empty() {
                    uris.insert(uri::file_uri(skill.name(), &relative));
                }
            }
        }
    }
    Some(uris)
}

/// The answer budget of the HTTP request a call came in (see [`AnswerBudget`]), or none for
/// a door with one client (stdio).
fn request_budget(context: &RequestContext<RoleServer>) -> Box<dyn ReadBudget> {
    match context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<AnswerBudget>())
    {
        Some(budget) => Box::new(budget.clone()),
        None => Box::new(Unbudgeted),
    }
}

/// A page of `items` (in ascending order of `key`) after the opaque `cursor`, which holds the
/// key of the last item of the previous page: a reload between two pages neither repeats nor
/// skips an item that stayed, as an offset would.
fn page<T>(
    items: impl Iterator<Item = T>,
    key: impl Fn(&T) -> String,
    cursor: Option<&str>,
    per_page: usize,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let after = match cursor {
        None => None,
        Some(cursor) => Some(decode_cursor(cursor).ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "cursor `{cursor}` was not made by this server; start again without a cursor"
                ),
                None,
            )
        })?),
    };
    let mut items: Vec<T> = items
        .skip_while(|item| after.as_ref().is_some_and(|after| key(item) <= *after))
        .take(per_page + 1)
        .collect();
    let next = (items.len() > per_page).then(|| {
        items.truncate(per_page);
        items.last().map(|item| encode_cursor(&key(item)))
    });
    Ok((items, next.flatten()))
}

/// A cursor holding a key: `k1.` and the key's bytes in hex.
fn encode_cursor(key: &str) -> String {
    format!("k1.{}", hex::encode(key))
}

fn decode_cursor(cursor: &str) -> Option<String> {
    let hex = cursor.strip_prefix("k1.")?;
    String::from_utf8(hex::decode(hex).ok()?).ok()
}

fn cursor_of(request: Option<&PaginatedRequestParams>) -> Option<&str> {
    request.and_then(|request| request.cursor.as_deref())
}

impl ServerHandler for SkillsMcpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_completions()
            .enable_skills_with_directory_read()
            .build();
        let mut info =
            ServerConfig::new(capabilities).with_instructions(self.instructions().to_string());
        info.server_info = Implementation::new("skillbox", env!("CARGO_PKG_VERSION"))
            .with_title("skillbox: Agent Skills");
        info
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, ErrorData> {
        self.count_session()?;
        context.peer.set_peer_info(request.clone());
        self.remember_peer(&context.peer);
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.remember_peer(&context.peer);
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if let Some(cursor) = cursor_of(request.as_ref()) {
            return Err(ErrorData::invalid_params(
                format!(
                    "cursor `{cursor}` was not made by this server: tools/list has one page; start again without a cursor"
                ),
                None,
            ));
        }
        let provider = self.provider();
        Ok(ListToolsResult::with_all_items(catalog_view::tools(
            &provider,
            self.shared.options.profile,
        )))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        let provider = self.provider();
        let profile = self.shared.options.profile;
        registry::lookup(&provider, Offer::Profile(profile), name)?;
        catalog_view::tools(&provider, profile)
            .into_iter()
            .find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let provider = self.provider();
        let options = &self.shared.options;
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let mut budget = request_budget(&context);
        let outcome = options
            .policy
            .call(
                &provider,
                &request.name,
                Arguments::Value(&arguments),
                CallContext::new(
                    options.door,
                    Offer::Profile(options.profile),
                    budget.as_mut(),
                ),
            )
            .await;
        if outcome.status == CallStatus::UnknownTool {
            return Err(ErrorData::invalid_params(outcome.message(), None));
        }
        let text = outcome.text();
        let mut result = if outcome.is_error() {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        if outcome.content.is_object() {
            result.structured_content = Some(outcome.content);
        }
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let provider = self.provider();
        let prompts =
            catalog_view::prompt_skills(&provider).map(|skill| catalog_view::prompt(skill));
        let (prompts, next) = page(
            prompts,
            |prompt| prompt.name.clone(),
            cursor_of(request.as_ref()),
            PROMPTS_PER_PAGE,
        )?;
        let mut result = ListPromptsResult::with_all_items(prompts);
        result.next_cursor = next;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let provider = self.provider();
        let Some(skill) = catalog_view::prompt_skills(&provider)
            .find(|skill| skill.name() == request.name)
            .cloned()
        else {
            return Err(ErrorData::invalid_params(
                format!(
                    "no prompt named `{}`; prompts/list lists them",
                    request.name
                ),
                None,
            ));
        };
        let arguments = catalog_view::prompt_arguments(&skill, request.arguments.as_ref())?;
        let description = skill.description.clone();
        let text = if provider.runs_commands_on_load() {
            // A body whose commands run waits for a place in the run queue, as load_skill
            // does, and runs them here: holding a blocking place for them would keep file
            // reads waiting behind the commands.
            let _turn = self
                .shared
                .options
                .policy
                .admit()
                .await
                .map_err(|busy| ErrorData::internal_error(busy.to_string(), None))?;
            provider
                .skill_instructions(&skill, arguments.as_deref())
                .await
                .map_err(|message| ErrorData::internal_error(message, None))?
        } else {
            // Reads the body: off the async threads.
            self.blocking(move || {
                provider
                    .instructions_without_commands(&skill, arguments.as_deref())
                    .map_err(|message| ErrorData::internal_error(message, None))
            })
            .await?
        };
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description(description)
                .into(),
        )
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let provider = self.provider();
        let cursor = cursor_of(request.as_ref()).map(str::to_owned);
        self.blocking(move || {
            let skills = provider.model_skills();
            // Keyed by skill name, then SKILL.md first, then path: the order pages follow.
            let resources = skills.iter().flat_map(|skill| {
                let mut entries: Vec<(String, Resource)> = catalog_view::skill_resources(skill)
                    .map(|resource| {
                        let rank = u8::from(resource.name != skill.name());
                        (
                            format!("{}\0{rank}\0{}", skill.name(), resource.name),
                            resource,
                        )
                    })
                    .collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                entries
            });
            let (resources, next) = page(
                resources,
                |(key, _)| key.clone(),
                cursor.as_deref(),
                RESOURCES_PER_PAGE,
            )?;
            let resources = resources
                .into_iter()
                .map(|(_, resource)| resource)
                .collect();
            let mut result = ListResourcesResult::with_all_items(resources);
            result.next_cursor = next;
            Ok(result)
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(uri::FILE_TEMPLATE, "skill-file")
                .with_title("A file of a skill")
                .with_description(
                    "Any file of a skill by its path inside the skill folder, e.g. skill://pdf/SKILL.md or skill://pdf/scripts/fill.py",
                ),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let provider = self.provider();
        let mut budget = request_budget(&context);
        self.blocking(move || catalog_view::read(&provider, &request.uri, budget.as_mut()))
            .await
            .map(Into::into)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Only files this server serves, and a bounded number per session: subscriptions are
        // kept in memory for the session's life.
        let uri = request.uri;
        if uri.len() > MAX_SUBSCRIBED_URI_BYTES {
            return Err(ErrorData::invalid_params(
                format!(
                    "the URI is {} bytes; a subscription may name at most {MAX_SUBSCRIBED_URI_BYTES} bytes (spell it as resources/list does)",
                    uri.len()
                ),
                None,
            ));
        }
        let provider = self.provider();
        let served = self
            .blocking({
                let uri = uri.clone();
                move || Ok(catalog_view::read_target(&provider, &uri).is_ok())
            })
            .await?;
        if !served {
            return Err(ErrorData::invalid_params(
                format!("`{uri}` is not a file this server serves; resources/list lists them"),
                None,
            ));
        }
        self.remember_peer(&context.peer);
        let mut subscribed = self
            .session
            .subscribed
            .lock()
            .map_err(|_| ErrorData::internal_error("subscriptions are unavailable", None))?;
        if subscribed.len() >= MAX_SUBSCRIPTIONS && !subscribed.contains(&uri) {
            return Err(ErrorData::invalid_params(
                format!(
                    "a session may subscribe to at most {MAX_SUBSCRIPTIONS} resources; unsubscribe from some first"
                ),
                None,
            ));
        }
        subscribed.insert(uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Ok(mut subscribed) = self.session.subscribed.lock() {
            subscribed.remove(&request.uri);
        }
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Only files of skills served here, within a total size: a listen stream keeps its
        // filter for as long as it stays open.
        let mut accepted = requested.clone();
        if let Some(uris) = accepted.resource_subscriptions.as_mut() {
            let provider = self.provider();
            let mut total_bytes = 0;
            uris.retain(|uri| {
                let served = uri::parse(uri)
                    .is_ok_and(|parsed| provider.find_model_skill(&parsed.skill, None).is_ok());
                let fits = total_bytes + uri.len() <= MAX_LISTEN_URI_BYTES;
                if served && fits {
                    total_bytes += uri.len();
                }
                served && fits
            });
            uris.truncate(MAX_SUBSCRIPTIONS);
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // rmcp keeps the filter as requested for the stream's life: a large one ends it at once.
        let requested = context
            .requested()
            .resource_subscriptions
            .as_deref()
            .unwrap_or_default();
        let requested_bytes: usize = requested.iter().map(String::len).sum();
        if requested_bytes > MAX_LISTEN_URI_BYTES || requested.len() > MAX_SUBSCRIPTIONS {
            return Err(ErrorData::invalid_params(
                format!(
                    "the subscription names {} resources in {requested_bytes} bytes; a stream may name at most {MAX_SUBSCRIPTIONS} in {MAX_LISTEN_URI_BYTES} bytes",
                    requested.len()
                ),
                None,
            ));
        }
        let open = &self.shared.open_listens;
        take_place(open, self.shared.options.max_sessions).map_err(|count| {
            ErrorData::internal_error(
                format!("{count} subscription streams are open, the most this server keeps; close one or retry later"),
                None,
            )
        })?;
        let _place = ListenPlace(open);
        let mut changes = self.shared.live.subscribe();
        loop {
            let change = tokio::select! {
                () = context.cancelled() => return Ok(()),
                change = changes.recv() => change,
            };
            let change = match change {
                Ok(change) => Some(change),
                Err(broadcast::error::RecvError::Lagged(_)) => None,
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            };
            let sink = context.sink();
            let accepted = context.accepted();
            if accepted.tools_list_changed == Some(true) {
                let _ = sink.notify_tool_list_changed().await;
            }
            if accepted.prompts_list_changed == Some(true) {
                let _ = sink.notify_prompt_list_changed().await;
            }
            if accepted.resources_list_changed == Some(true) {
                let _ = sink.notify_resource_list_changed().await;
            }
            let subscribed = accepted
                .resource_subscriptions
                .as_deref()
                .unwrap_or_default();
            if subscribed.is_empty() {
                continue;
            }
            let changed = changed_uris(&self.provider(), change.as_ref());
            for uri in subscribed {
                if changed.as_ref().is_none_or(|changed| changed.contains(uri)) {
                    let _ = sink.notify_resource_updated(uri.clone()).await;
                }
            }
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let provider = self.provider();
        let wanted = request.argument.value.clone();
        let values: Vec<String> = match &request.r#ref {
            Reference::Resource(reference) if reference.uri == uri::FILE_TEMPLATE => {
                match request.argument.name.as_str() {
                    "skill" => provider
                        .model_skills()
                        .iter()
                        .map(|skill| skill.name().to_owned())
                        .filter(|name| name.starts_with(&wanted))
                        .collect(),
                    "path" => {
                        let skill_name = request
                            .context
                            .as_ref()
                            .and_then(|context| context.arguments.as_ref())
                            .and_then(|arguments| arguments.get("skill"))
                            .cloned()
                            .unwrap_or_default();
                        match provider.find_model_skill(&skill_name, None) {
                            Ok(skill) => {
                                self.blocking(move || {
                                    Ok(catalog_view::skill_resources(&skill)
                                        .filter_map(|resource| {
                                            uri::parse(&resource.uri).ok().map(|uri| uri.path)
                                        })
                                        .filter(|path| path.starts_with(&wanted))
                                        .collect())
                                })
                                .await?
                            }
                            Err(_) => Vec::new(),
                        }
                    }
                    other => {
                        return Err(ErrorData::invalid_params(
                            format!(
                                "the skill-file template has the arguments `skill` and `path`, not `{other}`"
                            ),
                            None,
                        ));
                    }
                }
            }
            Reference::Resource(reference) => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "no resource template `{}`; the template is `{}`",
                        reference.uri,
                        uri::FILE_TEMPLATE
                    ),
                    None,
                ));
            }
            Reference::Prompt(reference) => {
                let Some(skill) = catalog_view::prompt_skills(&provider)
                    .find(|skill| skill.name() == reference.name)
                else {
                    return Err(ErrorData::invalid_params(
                        format!("no prompt named `{}`", reference.name),
                        None,
                    ));
                };
                let known = catalog_view::prompt(skill)
                    .arguments
                    .unwrap_or_default()
                    .iter()
                    .any(|argument| argument.name == request.argument.name);
                if !known {
                    return Err(ErrorData::invalid_params(
                        format!(
                            "prompt `{}` has no argument `{}`",
                            reference.name, request.argument.name
                        ),
                        None,
                    ));
                }
                // A skill's arguments are free text: the hint is the only suggestion there is.
                match (
                    &skill.properties.argument_hint,
                    request.argument.name.as_str(),
                ) {
                    (Some(hint), FREE_ARGUMENTS) if wanted.is_empty() => vec![hint.clone()],
                    _ => Vec::new(),
                }
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "completions are offered for prompts and the skill-file template",
                    None,
                ));
            }
        };
        let total = values.len();
        let mut values = values;
        values.truncate(CompletionInfo::MAX_VALUES);
        let has_more = total > values.len();
        let completion =
            CompletionInfo::with_pagination(values, u32::try_from(total).ok(), has_more)
                .map_err(|message| ErrorData::internal_error(message, None))?;
        Ok(CompleteResult::new(completion))
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let provider = self.provider();
        let cursor = cursor_of(request.as_ref()).map(str::to_owned);
        self.blocking(move || {
            let skills = provider.model_skills();
            let (skills, next) = page(
                skills.iter(),
                |skill| skill.name().to_owned(),
                cursor.as_deref(),
                SKILLS_PER_PAGE,
            )?;
            let entries = skills
                .into_iter()
                .filter_map(|skill| match catalog_view::skill_entry(skill) {
                    Ok(entry) => Some(entry),
                    Err(reason) => {
                        tracing::debug!(skill = skill.name(), %reason, "not in skills/list");
                        None
                    }
                })
                .collect();
            let mut result = ListSkillsResult::with_all_items(entries);
            result.next_cursor = next;
            Ok(result)
        })
        .await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let provider = self.provider();
        self.blocking(move || {
            let unknown = || {
                ErrorData::invalid_params(
                    format!("no skill is served at `{}`; skills/list lists them", request.uri),
                    None,
                )
            };
            let parsed = uri::parse(&request.uri).map_err(|_| unknown())?;
            if parsed.path != catalog_view::SKILL_MD {
                return Err(unknown());
            }
            let skill = provider
                .find_model_skill(&parsed.skill, None)
                .map_err(|_| unknown())?;
            let entry = catalog_view::skill_entry(&skill).map_err(|reason| {
                ErrorData::invalid_params(
                    format!(
                        "skill `{}` is served as tools and resources, but not as a skills-extension entry: {reason}",
                        skill.name()
                    ),
                    None,
                )
            })?;
            if entry.uri != request.uri {
                return Err(unknown());
            }
            Ok(GetSkillResult::new(entry))
        })
        .await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let provider = self.provider();
        self.blocking(move || {
            let parsed = uri::parse(&request.uri)
                .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
            let skill = provider
                .find_model_skill(&parsed.skill, None)
                .map_err(|_| {
                    ErrorData::invalid_params(
                        format!("no skill named `{}` is served here", parsed.skill),
                        None,
                    )
                })?;
            let children = catalog_view::directory_children(&skill, &parsed.path)?;
            let (children, next) = page(
                children.into_iter(),
                |child| {
                    // Files, then folders, each by name (the order they are listed in).
                    format!("{}\0{}", u8::from(child.is_directory()), child.name)
                },
                request.cursor.as_deref(),
                RESOURCES_PER_PAGE,
            )?;
            let mut result = ListResourcesResult::with_all_items(children);
            result.next_cursor = next;
            Ok(result)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_continue_after_the_last_key_across_a_reload() {
        let key = |item: &&str| (*item).to_owned();
        let before = ["a", "b", "c", "d"];
        let (first, cursor) = page(before.into_iter(), key, None, 2).unwrap();
        assert_eq!(first, ["a", "b"]);
        let cursor = cursor.unwrap();
        // A reload removed `a` and added `bb`: the next page neither repeats `b` nor skips `bb`.
        let after = ["b", "bb", "c", "d"];
        let (second, cursor) = page(after.into_iter(), key, Some(&cursor), 2).unwrap();
        assert_eq!(second, ["bb", "c"]);
        let (third, last) = page(after.into_iter(), key, cursor.as_deref(), 2).unwrap();
        assert_eq!((third, last), (vec!["d"], None));
        assert!(page(after.into_iter(), key, Some("12"), 2).is_err());
        assert!(page(after.into_iter(), key, Some("k1.zz"), 2).is_err());
    }
}
