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
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
    CompleteResult, CompletionInfo, ContentBlock, CustomRequest, CustomResult, DiscoverResult,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, GetSkillRequestParams,
    GetSkillResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams, PromptMessage,
    ProtocolVersion, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Reference, Resource,
    ResourceTemplate, Role, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use skillbox_services::{ReadBudget, Unbudgeted};
use skillbox_tools::registry::{self, Offer};
use skillbox_tools::{
    Arguments, CallContext, CallStatus, CatalogChange, Door, DoorPolicy, LiveProvider,
    PromptFormat, ServerHolds, SkillsProvider, ToolEffect, ToolProfile,
};
use tokio::sync::broadcast;

use crate::AnswerBudget;
use crate::catalog_view::{self, FREE_ARGUMENTS};
use crate::uri;

mod completion;
mod logging;
mod malformed_requests;
mod paging;
mod reloads;
mod skills_extension;
mod snapshot_memo;
mod subscriptions;

use paging::{cursor_of, page};
use reloads::{announce_reloads, changed_uris};
use snapshot_memo::SnapshotMemo;

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
/// How long a 2026-07-28 client may keep a listing, a skill's entry or a file it read before
/// asking again (`ttlMs`), in milliseconds. Without it rmcp sends 0: never keep anything.
/// Clients listening on `subscriptions/listen` hear of every reload at once and drop what
/// they keep; for the others this bounds how stale a listing gets after a skill is edited.
/// Skill entries carry digests, so a host that reads a file changed since checks it against
/// the entry and asks again (`skills/get`) rather than use it. A minute: a person editing a
/// skill sees it within one even in a client that does not listen, and a host that lists
/// before every turn asks once a minute, not every turn. See `docs/design/mcp.md`.
pub const CACHE_TTL_MS: u64 = 60_000;

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
    sessions: Mutex<Vec<Weak<ClientSession>>>,
    /// Sessions `initialize`d and not yet ended.
    open_sessions: Arc<AtomicUsize>,
    /// `subscriptions/listen` streams open.
    open_listens: AtomicUsize,
    instructions: Mutex<Option<(u64, Arc<str>)>>,
    /// `tools/list`'s answer, rendered once per snapshot.
    tools: SnapshotMemo<(), Vec<rmcp::model::Tool>>,
    /// `skills/list` pages by cursor, rendered once per snapshot.
    skill_pages: SnapshotMemo<Option<String>, ListSkillsResult>,
}

/// One connected client (stdio has one; streamable HTTP one per MCP session, or per request
/// when stateless).
struct ClientSession {
    peer: OnceLock<Peer<RoleServer>>,
    subscribed: Mutex<BTreeSet<String>>,
    /// The count this session holds a place in once `initialize`d.
    counted_in: OnceLock<Arc<AtomicUsize>>,
    /// The MCP servers of the skills this session loaded: their tools are this session's,
    /// and they stop when it ends.
    servers: ServerHolds,
    /// The level of the messages its client asked for (`logging/setLevel`).
    log_level: logging::ClientLogLevel,
}

impl ClientSession {
    fn new() -> Self {
        ClientSession {
            peer: OnceLock::new(),
            subscribed: Mutex::default(),
            counted_in: OnceLock::new(),
            servers: ServerHolds::new(),
            log_level: logging::ClientLogLevel::default(),
        }
    }
}

impl Drop for ClientSession {
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
    session: Arc<ClientSession>,
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
            tools: SnapshotMemo::default(),
            skill_pages: SnapshotMemo::default(),
        });
        tokio::spawn(announce_reloads(
            Arc::downgrade(&shared),
            shared.live.subscribe(),
        ));
        SkillsMcpServer {
            shared,
            session: Arc::new(ClientSession::new()),
        }
    }

    /// The handler for a new session (or one stateless request): the same catalog and
    /// options, its own peer and subscriptions. It takes a place among the open sessions only
    /// when `initialize`d.
    #[must_use]
    pub fn session(&self) -> Self {
        SkillsMcpServer {
            shared: Arc::clone(&self.shared),
            session: Arc::new(ClientSession::new()),
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

    /// The tools of the provider in effect in MCP's shape, rendered once per provider. A
    /// provider whose models may define tools changes its list in place: rendered per call.
    fn tools(&self) -> Arc<Vec<rmcp::model::Tool>> {
        let provider = self.provider();
        let render = || catalog_view::tools(&provider, self.shared.options.profile);
        if provider.options().define_tools {
            return Arc::new(render());
        }
        if let Some(tools) = self.shared.tools.get(&provider, &()) {
            return tools;
        }
        self.shared.tools.keep(&provider, (), render())
    }

    fn provider(&self) -> Arc<SkillsProvider> {
        self.shared.live.current()
    }

    /// The tools of the skill servers this session holds, in MCP's shape.
    fn held_server_tools(&self) -> Vec<rmcp::model::Tool> {
        if self.session.servers.is_empty() {
            return Vec::new();
        }
        let provider = self.provider();
        registry::held_server_tools(
            Offer::Profile(self.shared.options.profile),
            &self.session.servers,
        )
        .iter()
        .map(|tool| catalog_view::mcp_tool(&provider, tool))
        .collect()
    }

    fn remember_peer(&self, peer: &Peer<RoleServer>) {
        if self.session.peer.set(peer.clone()).is_ok() {
            // The session's client hears when the tools of the servers it holds change.
            let notified = peer.clone();
            self.session.servers.on_change(Arc::new(move || {
                let peer = notified.clone();
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    runtime.spawn(async move {
                        let _ =
                            tokio::time::timeout(NOTIFY_TIMEOUT, peer.notify_tool_list_changed())
                                .await;
                    });
                }
            }));
            if let Ok(mut sessions) = self.shared.sessions.lock() {
                sessions.retain(|session| session.strong_count() > 0);
                sessions.push(Arc::downgrade(&self.session));
            }
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

/// Results a 2026-07-28 client may keep ([`CACHE_TTL_MS`]).
trait Cacheable {
    fn set_cache_hints(&mut self);
}

macro_rules! cacheable {
    ($($result:ty),* $(,)?) => {
        $(impl Cacheable for $result {
            fn set_cache_hints(&mut self) {
                self.ttl_ms = Some(CACHE_TTL_MS);
                // The same for every client of this server, but a shared cache must not hand
                // it to someone without the server's token.
                self.cache_scope = Some(CacheScope::Private);
            }
        })*
    };
}

cacheable!(
    ListToolsResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult,
    ListSkillsResult,
    GetSkillResult,
);

/// Whether the request's peer speaks 2026-07-28 or later, whose results carry cache hints
/// (older peers get the shape of their revision, without them).
fn takes_cache_hints(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// `result` with the cache hints of [`CACHE_TTL_MS`] when the request's peer takes them.
fn with_cache_hints<T: Cacheable>(mut result: T, context: &RequestContext<RoleServer>) -> T {
    if takes_cache_hints(context) {
        result.set_cache_hints();
    }
    result
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
        let capabilities = logging::with_logging(capabilities);
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

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let _ = context;
        let mut result = DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        );
        result.ttl_ms = CACHE_TTL_MS;
        result.cache_scope = CacheScope::Private;
        Ok(result)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(malformed_requests::refusal(&request))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if let Some(cursor) = cursor_of(request.as_ref()) {
            return Err(ErrorData::invalid_params(
                format!(
                    "cursor `{cursor}` was not made by this server: tools/list has one page; start again without a cursor"
                ),
                None,
            ));
        }
        let tools =
            registry::with_held_server_tools(&self.tools(), self.held_server_tools(), |tool| {
                tool.name.as_ref()
            });
        Ok(with_cache_hints(
            ListToolsResult::with_all_items(tools),
            &context,
        ))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        let provider = self.provider();
        let profile = self.shared.options.profile;
        let servers = &self.session.servers;
        registry::lookup_held(&provider, Offer::Profile(profile), Some(servers), name)?;
        self.held_server_tools()
            .into_iter()
            .find(|tool| tool.name == name)
            .or_else(|| self.tools().iter().find(|tool| tool.name == name).cloned())
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
                )
                .with_servers(&self.session.servers)
                .with_notices(self.session.as_ref()),
            )
            .await;
        if outcome.status == CallStatus::UnknownTool {
            return Err(ErrorData::invalid_params(outcome.message(), None));
        }
        // The call changed the tools offered (a tool defined or removed): the client hears so,
        // and lists them again.
        if matches!(outcome.effect, Some(ToolEffect::ChangesTools)) {
            let _ =
                tokio::time::timeout(NOTIFY_TIMEOUT, context.peer.notify_tool_list_changed()).await;
        }
        let text = outcome.text();
        let mut result = if outcome.is_error() {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        // A tool that lists an output schema answers a success with its typed result, always
        // an object: every such answer goes out as structured content matching the schema.
        if outcome.content.is_object() {
            result.structured_content = Some(outcome.content.into_value());
        }
        Ok(result.into())
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.set_log_level(request, &context)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
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
        Ok(with_cache_hints(result, &context))
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
        context: RequestContext<RoleServer>,
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
        .map(|result| with_cache_hints(result, &context))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(uri::FILE_TEMPLATE, "skill-file")
                .with_title("A file of a skill")
                .with_description(
                    "Any file of a skill by its path inside the skill folder, e.g. skill://pdf/SKILL.md or skill://pdf/scripts/fill.py",
                ),
        ]);
        Ok(with_cache_hints(templates, &context))
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
            .map(|result| with_cache_hints(result, &context).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribe_to_resource(request, context).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.unsubscribe_from_resource(request);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.served_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.listen_for_changes(context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.completions(request).await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let page = self.skills_page(request).await?;
        Ok(with_cache_hints(page, &context))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let entry = self.skill_entry_at(request).await?;
        Ok(with_cache_hints(entry, &context))
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let listing = self.resource_directory(request).await?;
        Ok(with_cache_hints(listing, &context))
    }
}
