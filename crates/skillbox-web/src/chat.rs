//! The chat page's server side: conversations kept on the server (saved as transcripts, so a
//! reload or a restart loses nothing), turns run in server tasks, and each conversation's events
//! kept in a log the page reads over SSE from any point, so a reload mid-turn picks the stream
//! up again. Approval cards are events too, answered by a `POST`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};
use skillbox_agent::{
    Agent, AgentOptions, Approval, ApprovalDecision, ApprovalMode, ApprovalRequest, Conversation,
    Message, ModelClient, ProviderSource, TranscriptStore, WireFormat,
};
use skillbox_tools::{Door, DoorPolicy, LiveProvider};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::auth::Visitor;
use crate::event_stream::async_stream_of;
use crate::pages::{Layout, render};
use crate::request_body::{JsonBody, LimitedBody, MAX_SMALL_BODY_BYTES};
use crate::{ApiError, WebError, WebState, on_blocking_thread};

/// Turns running at once across all conversations; more wait for none: the page is told to
/// try again.
pub const MAX_CONCURRENT_TURNS: usize = 4;
/// Conversations held in memory; idle ones past this are dropped (their transcripts stay).
pub const MAX_CONVERSATIONS_IN_MEMORY: usize = 256;
/// Event streams open at once (each open chat page holds one).
pub const MAX_EVENT_STREAMS: usize = 256;
/// Longest message a person may send, in bytes.
pub const MAX_PROMPT_BYTES: usize = 64 * 1024;
/// Largest body of `POST /api/chat/{id}/turns`: a message of [`MAX_PROMPT_BYTES`] even when
/// JSON spells each of its bytes in six (`\u0001`), and the model's label.
pub const MAX_TURN_BODY_BYTES: usize = 6 * MAX_PROMPT_BYTES + MAX_SMALL_BODY_BYTES;
/// Events one conversation's log keeps before it is rebuilt from the messages (text pieces
/// merged).
pub const MAX_LOG_EVENTS: usize = 20_000;
/// How long an approval card waits for an answer before the call is denied.
pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// A model the chat page offers.
pub struct ChatModel {
    /// What the page shows, e.g. `qwen (chat at http://127.0.0.1:8080/v1)`.
    pub label: String,
    /// The model name sent to the API.
    pub model: String,
    /// The wire format.
    pub format: WireFormat,
    /// The endpoint as shown (no credentials), saved in transcripts.
    pub endpoint: String,
    /// The client that talks to it.
    pub client: Arc<dyn ModelClient>,
}

/// Everything the chat page needs from the server's configuration.
pub struct ChatSetup {
    /// The models to pick from; empty when none is configured.
    pub models: Vec<ChatModel>,
    /// The agent's options (the model is set per turn from the pick).
    pub options: AgentOptions,
    /// The approval policy for calls that run code.
    /// (`Ask` shows an approval card in the page and waits for the person.)
    pub approval: ApprovalMode,
    /// Where conversations are saved; `None` keeps them in memory only.
    pub transcripts: Option<TranscriptStore>,
    /// Why no model is configured, and how to configure one (shown on the page).
    pub unavailable: Option<String>,
}

/// The conversations and the bounds on turns and streams.
pub(crate) struct ChatHub {
    setup: ChatSetup,
    live: Arc<LiveProvider>,
    /// The server's door policy: the chat's tool calls share its run queue with every door.
    policy: Arc<DoorPolicy>,
    rooms: Mutex<HashMap<String, Arc<Room>>>,
    turns: Arc<Semaphore>,
    streams: Arc<Semaphore>,
}

/// One conversation on the server.
struct Room {
    id: String,
    state: Mutex<RoomState>,
    /// The log's length (and generation) as it changes; event streams wait on it.
    changed: watch::Sender<(u64, usize)>,
}

struct RoomState {
    /// Bumped when the log is rebuilt: streams then start again from its beginning.
    generation: u64,
    log: Vec<Value>,
    /// The conversation; `None` while a turn has it.
    conversation: Option<Conversation>,
    running: Option<CancellationToken>,
    approvals: HashMap<u64, oneshot::Sender<bool>>,
    next_approval: u64,
    last_used: std::time::Instant,
}

impl Room {
    fn new(id: String, conversation: Conversation, log: Vec<Value>) -> Arc<Self> {
        let length = log.len();
        Arc::new(Room {
            id,
            state: Mutex::new(RoomState {
                generation: 0,
                log,
                conversation: Some(conversation),
                running: None,
                approvals: HashMap::new(),
                next_approval: 0,
                last_used: std::time::Instant::now(),
            }),
            changed: watch::channel((0, length)).0,
        })
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, RoomState>, WebError> {
        self.state
            .lock()
            .map_err(|_| WebError::Internal("the conversation's state is unavailable".into()))
    }

    /// Add an event to the log and wake the streams.
    fn push(&self, event: Value) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        state.log.push(event);
        let mark = (state.generation, state.log.len());
        drop(state);
        self.changed.send_replace(mark);
    }

    fn busy(&self) -> bool {
        self.state
            .lock()
            .map(|state| state.running.is_some())
            .unwrap_or(false)
    }
}

impl ChatHub {
    pub(crate) fn new(setup: ChatSetup, live: Arc<LiveProvider>, policy: Arc<DoorPolicy>) -> Self {
        ChatHub {
            setup,
            live,
            policy,
            rooms: Mutex::new(HashMap::new()),
            turns: Arc::new(Semaphore::new(MAX_CONCURRENT_TURNS)),
            streams: Arc::new(Semaphore::new(MAX_EVENT_STREAMS)),
        }
    }

    /// Cancel every running turn (the server is stopping).
    pub(crate) fn cancel_all(&self) {
        if let Ok(rooms) = self.rooms.lock() {
            for room in rooms.values() {
                if let Ok(state) = room.state.lock()
                    && let Some(token) = &state.running
                {
                    token.cancel();
                }
            }
        }
    }

    fn model(&self, label: Option<&str>) -> Result<&ChatModel, WebError> {
        let no_model = || {
            WebError::BadRequest(
                self.setup
                    .unavailable
                    .clone()
                    .unwrap_or_else(|| "no model is configured for chat".into()),
            )
        };
        match label.filter(|label| !label.is_empty()) {
            None => self.setup.models.first().ok_or_else(no_model),
            Some(label) => self
                .setup
                .models
                .iter()
                .find(|model| model.label == label)
                .ok_or_else(|| {
                    WebError::BadRequest(format!(
                        "`{label}` is not one of the models this server offers; the page's model list has them"
                    ))
                }),
        }
    }

    /// An agent asking `model`, over the live skills.
    fn agent(&self, model: &ChatModel) -> Agent {
        let mut options = self.setup.options.clone();
        options.model.clone_from(&model.model);
        Agent::new(
            ProviderSource::Live(Arc::clone(&self.live)),
            Arc::clone(&model.client),
            options,
        )
        .with_policy(Arc::clone(&self.policy), Door::WebChat)
    }

    /// The agent of one turn in `room`: asking `model`, with the server's approval policy
    /// (cards in the room's log when it asks).
    fn turn_agent(&self, model: &ChatModel, room: &Arc<Room>) -> Agent {
        let agent = self.agent(model);
        let approval: Arc<dyn Approval> = match self.setup.approval.policy() {
            Some(policy) => Arc::new(policy),
            None => Arc::new(PageApproval {
                room: Arc::downgrade(room),
            }),
        };
        agent.with_approval(approval)
    }

    /// A new conversation (saved when transcripts are on).
    fn create(&self, label: Option<&str>) -> Result<Arc<Room>, WebError> {
        let model = self.model(label)?;
        let transcript = match &self.setup.transcripts {
            Some(store) => Some(
                store
                    .create(model.format, &model.model, &model.endpoint)
                    .map_err(|error| {
                        WebError::Internal(format!("cannot save the conversation: {error}"))
                    })?,
            ),
            None => None,
        };
        let conversation = self.agent(model).conversation(transcript);
        let id = conversation.id().to_owned();
        let room = Room::new(id.clone(), conversation, Vec::new());
        self.remember(&id, &room);
        Ok(room)
    }

    fn remember(&self, id: &str, room: &Arc<Room>) {
        let Ok(mut rooms) = self.rooms.lock() else {
            return;
        };
        if rooms.len() >= MAX_CONVERSATIONS_IN_MEMORY {
            // Forget the idle conversation used longest ago; its transcript stays on disk.
            let oldest = rooms
                .iter()
                .filter(|(_, room)| !room.busy())
                .min_by_key(|(_, room)| {
                    room.state
                        .lock()
                        .map(|state| state.last_used)
                        .unwrap_or_else(|_| std::time::Instant::now())
                })
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                rooms.remove(&oldest);
            }
        }
        rooms.insert(id.to_owned(), Arc::clone(room));
    }

    /// The conversation `id` if it is in memory.
    fn in_memory(&self, id: &str) -> Option<Arc<Room>> {
        self.rooms.lock().ok()?.get(id).cloned()
    }

    /// The conversation `id`: in memory, or read back from its transcript (file I/O: see
    /// [`find_room`]).
    fn room(&self, id: &str) -> Result<Arc<Room>, WebError> {
        let not_found = || {
            WebError::NotFound(format!(
                "no conversation `{id}` (it was not saved, or it was removed); start a new one at /chat"
            ))
        };
        if !(id.len() == 32 && id.bytes().all(|byte| byte.is_ascii_hexdigit())) {
            return Err(not_found());
        }
        if let Some(room) = self.in_memory(id) {
            return Ok(room);
        }
        let store = self.setup.transcripts.as_ref().ok_or_else(not_found)?;
        let (transcript, messages) = store.resume(id).map_err(|_| not_found())?;
        if transcript.header().id != id {
            return Err(not_found());
        }
        let agent = self.agent(self.model(None)?);
        let log = events_from_messages(&messages);
        let conversation = agent.resume(Some(transcript), messages);
        let room = Room::new(id.to_owned(), conversation, log);
        self.remember(id, &room);
        Ok(room)
    }
}

/// The conversation `id` for a request: from memory, or read back from its transcript on a
/// blocking thread (the async threads never wait on the disk).
async fn find_room(state: &Arc<WebState>, id: &str) -> Result<Arc<Room>, WebError> {
    if let Some(room) = state.chat.in_memory(id) {
        return Ok(room);
    }
    let reader = Arc::clone(state);
    let id = id.to_owned();
    on_blocking_thread(state, move || reader.chat.room(&id)).await?
}

/// The log of a conversation read back from its messages: what the page shows for it.
fn events_from_messages(messages: &[Message]) -> Vec<Value> {
    let mut events = Vec::new();
    for message in messages {
        match message {
            Message::User { content } => events.push(json!({"type": "user", "text": content})),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                if !content.is_empty() {
                    events.push(json!({"type": "text_delta", "text": content}));
                }
                for call in tool_calls {
                    let arguments = serde_json::from_str::<Value>(&call.arguments)
                        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                    events.push(json!({
                        "type": "tool_call_started",
                        "id": call.id,
                        "name": call.name,
                        "arguments": arguments,
                    }));
                }
            }
            Message::Tool { results } => {
                for result in results {
                    events.push(json!({
                        "type": "tool_call_finished",
                        "id": result.call_id,
                        "name": result.name,
                        "result": result.content,
                        "is_error": result.is_error,
                        "duration_ms": Value::Null,
                    }));
                }
            }
        }
    }
    events
}

/// Asks the page: an approval card in the log, answered by `POST …/approvals/{number}`.
struct PageApproval {
    room: Weak<Room>,
}

#[async_trait::async_trait]
impl Approval for PageApproval {
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalDecision {
        let denied = |reason: &str| ApprovalDecision::Deny {
            reason: reason.to_owned(),
        };
        let Some(room) = self.room.upgrade() else {
            return denied("the conversation is gone");
        };
        let (sender, receiver) = oneshot::channel();
        let number = {
            let Ok(mut state) = room.state.lock() else {
                return denied("the conversation's state is unavailable");
            };
            state.next_approval += 1;
            let number = state.next_approval;
            state.approvals.insert(number, sender);
            number
        };
        room.push(json!({
            "type": "approval_requested",
            "number": number,
            "tool": request.tool,
            "skill": request.skill,
            "arguments": request.arguments,
            "summary": request.summary(),
        }));
        let approved = matches!(
            tokio::time::timeout(APPROVAL_TIMEOUT, receiver).await,
            Ok(Ok(true))
        );
        if let Ok(mut state) = room.state.lock() {
            state.approvals.remove(&number);
        }
        room.push(json!({"type": "approval_answered", "number": number, "approved": approved}));
        if approved {
            ApprovalDecision::Approve
        } else {
            denied("the person did not approve running it")
        }
    }
}

#[derive(Template)]
#[template(path = "chat.html")]
struct ChatPage {
    layout: Layout,
    conversation: String,
    models: Vec<String>,
    unavailable: Option<String>,
    skills: Vec<(String, String)>,
    approval: &'static str,
    saved: bool,
}

fn chat_page_with(state: &WebState, visitor: &Visitor, conversation: String) -> Response {
    let setup = &state.chat.setup;
    let provider = state.provider();
    let skills = provider
        .catalog()
        .latest()
        .filter(|skill| skill.user_invocable())
        .map(|skill| {
            (
                skill.name().to_owned(),
                skill.properties.argument_hint.clone().unwrap_or_default(),
            )
        })
        .collect();
    render(
        &ChatPage {
            layout: Layout::for_visitor(visitor, "chat", "Chat".into()),
            conversation,
            models: setup
                .models
                .iter()
                .map(|model| model.label.clone())
                .collect(),
            unavailable: setup.unavailable.clone(),
            skills,
            approval: setup.approval.as_str(),
            saved: setup.transcripts.is_some(),
        },
        StatusCode::OK,
    )
}

/// `GET /chat`: a page for a new conversation (made on the first message).
pub(crate) async fn chat_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
) -> Response {
    chat_page_with(&state, &visitor, String::new())
}

/// `GET /chat/{id}`: the page of a conversation, which the script fills from its events.
pub(crate) async fn chat_page_for(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
    Path(id): Path<String>,
) -> Result<Response, WebError> {
    let room = find_room(&state, &id).await?;
    Ok(chat_page_with(&state, &visitor, room.id.clone()))
}

/// `POST /api/chat`'s body.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct CreateRequest {
    #[serde(default)]
    model: Option<String>,
}

/// `POST /api/chat`: a new conversation's id.
pub(crate) async fn create_conversation(
    State(state): State<Arc<WebState>>,
    JsonBody(request): JsonBody<CreateRequest, MAX_SMALL_BODY_BYTES>,
) -> Result<Json<Value>, ApiError> {
    // Creating one writes its transcript's first line: on a blocking thread.
    let room = on_blocking_thread(&state, {
        let state = Arc::clone(&state);
        move || state.chat.create(request.model.as_deref())
    })
    .await??;
    Ok(Json(json!({ "id": room.id })))
}

/// `POST /api/chat/{id}/turns`'s body.
#[derive(Debug, Deserialize)]
pub(crate) struct TurnRequest {
    text: String,
    #[serde(default)]
    model: Option<String>,
}

/// `POST /api/chat/{id}/turns`: start a turn on what the person wrote (`/name args` invokes
/// a skill). Its events go to the conversation's log.
pub(crate) async fn start_turn(
    State(state): State<Arc<WebState>>,
    Path(id): Path<String>,
    JsonBody(request): JsonBody<TurnRequest, MAX_TURN_BODY_BYTES>,
) -> Result<Json<Value>, ApiError> {
    let hub = &state.chat;
    if request.text.trim().is_empty() {
        return Err(WebError::BadRequest("`text` is empty: write a message".into()).into());
    }
    if request.text.len() > MAX_PROMPT_BYTES {
        return Err(WebError::BadRequest(format!(
            "`text` is {} bytes; a message may have at most {MAX_PROMPT_BYTES}",
            request.text.len()
        ))
        .into());
    }
    let model = hub.model(request.model.as_deref())?;
    let room = find_room(&state, &id).await?;
    let permit: OwnedSemaphorePermit =
        Arc::clone(&hub.turns).try_acquire_owned().map_err(|_| {
            WebError::Busy(format!(
                "{MAX_CONCURRENT_TURNS} conversations are answering already; try again in a moment"
            ))
        })?;
    let agent = hub.turn_agent(model, &room);
    let input = agent
        .read_input(&request.text)
        .map_err(WebError::BadRequest)?;
    let (conversation, cancel) = {
        let mut room_state = room.lock()?;
        if room_state.running.is_some() {
            return Err(WebError::BadRequest(
                "this conversation is still answering; wait for it or press Stop".into(),
            )
            .into());
        }
        let Some(conversation) = room_state.conversation.take() else {
            return Err(WebError::Internal("the conversation is unavailable".into()).into());
        };
        let cancel = CancellationToken::new();
        room_state.running = Some(cancel.clone());
        room_state.last_used = std::time::Instant::now();
        (conversation, cancel)
    };
    room.push(json!({"type": "user", "text": request.text, "model": model.label}));
    let task_room = Arc::clone(&room);
    tokio::spawn(async move {
        let _permit = permit;
        let mut turn = agent.run(conversation, input);
        let token = turn.canceller();
        let forward = cancel.clone();
        let stop_link = tokio::spawn(async move {
            forward.cancelled().await;
            token.cancel();
        });
        while let Some(event) = turn.next_event().await {
            task_room.push(serde_json::to_value(&event).unwrap_or(Value::Null));
        }
        stop_link.abort();
        let finished = turn.finish().await;
        let Ok(mut room_state) = task_room.state.lock() else {
            return;
        };
        room_state.running = None;
        match finished {
            Ok(conversation) => {
                let active = conversation.active_skill().map(str::to_owned);
                if room_state.log.len() > MAX_LOG_EVENTS {
                    room_state.log = events_from_messages(conversation.messages());
                    room_state.generation += 1;
                }
                room_state.conversation = Some(conversation);
                room_state
                    .log
                    .push(json!({"type": "idle", "active_skill": active}));
            }
            Err(error) => {
                tracing::error!(%error, "a chat turn's task failed");
                room_state.log.push(json!({
                    "type": "error",
                    "message": "the turn failed inside the server; start a new conversation",
                }));
            }
        }
        let mark = (room_state.generation, room_state.log.len());
        drop(room_state);
        task_room.changed.send_replace(mark);
    });
    Ok(Json(json!({ "started": true, "conversation": room.id })))
}

/// `POST /api/chat/{id}/stop`: cancel the running turn. The body (`{}`) says nothing; a
/// larger one than a few KiB is refused.
pub(crate) async fn stop_turn(
    State(state): State<Arc<WebState>>,
    Path(id): Path<String>,
    _body: LimitedBody<MAX_SMALL_BODY_BYTES>,
) -> Result<Json<Value>, ApiError> {
    let room = find_room(&state, &id).await?;
    let stopped = room
        .lock()?
        .running
        .as_ref()
        .map(CancellationToken::cancel)
        .is_some();
    Ok(Json(json!({ "stopped": stopped })))
}

/// `POST /api/chat/{id}/approvals/{number}`'s body.
#[derive(Debug, Deserialize)]
pub(crate) struct ApprovalAnswer {
    approve: bool,
}

/// `POST /api/chat/{id}/approvals/{number}`: the person's answer to an approval card.
pub(crate) async fn answer_approval(
    State(state): State<Arc<WebState>>,
    Path((id, number)): Path<(String, u64)>,
    JsonBody(answer): JsonBody<ApprovalAnswer, MAX_SMALL_BODY_BYTES>,
) -> Result<Json<Value>, ApiError> {
    let room = find_room(&state, &id).await?;
    let sender = room.lock()?.approvals.remove(&number).ok_or_else(|| {
        WebError::NotFound(format!(
            "approval {number} is not waiting (it was answered, timed out or the turn stopped)"
        ))
    })?;
    let _ = sender.send(answer.approve);
    Ok(Json(json!({ "answered": true })))
}

/// `?after=N`: the index of the last event the page has.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct EventsQuery {
    after: Option<usize>,
    generation: Option<u64>,
}

/// `GET /api/chat/{id}/events?after=N`: the conversation's events after the `N`th, then new
/// ones as they come. Each carries its index as the SSE id, so a reconnecting page
/// (`Last-Event-ID`) misses nothing. A rebuilt log is announced with a `reset` event.
pub(crate) async fn events(
    State(state): State<Arc<WebState>>,
    Path(id): Path<String>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let room = find_room(&state, &id).await?;
    let permit = Arc::clone(&state.chat.streams)
        .try_acquire_owned()
        .map_err(|_| {
            WebError::Busy(format!(
                "{MAX_EVENT_STREAMS} chat pages are open already; close some"
            ))
        })?;
    let last_seen = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(':'))
        .and_then(|(generation, index)| {
            Some((
                generation.parse::<u64>().ok()?,
                index.parse::<usize>().ok()?,
            ))
        });
    // The page names the last event it has; the stream starts after it (an index at the end
    // of `usize` names nothing after it, and must not wrap to the start).
    let (mut generation, mut next) = match last_seen {
        Some((generation, index)) => (Some(generation), index.saturating_add(1)),
        None => (
            query.generation,
            query.after.map_or(0, |after| after.saturating_add(1)),
        ),
    };
    let stream = async_stream_of(
        move |sender: tokio::sync::mpsc::Sender<Result<Event, Infallible>>| async move {
            let _permit = permit;
            let mut changed = room.changed.subscribe();
            loop {
                let batch = {
                    let Ok(state) = room.state.lock() else {
                        return;
                    };
                    read_from(&state, &mut generation, &mut next)
                };
                for (id, event) in batch {
                    let event = Event::default().id(id).data(event.to_string());
                    if sender.send(Ok(event)).await.is_err() {
                        return;
                    }
                }
                if changed.changed().await.is_err() {
                    return;
                }
            }
        },
    );
    let stream =
        futures_util::StreamExt::take_until(stream, state.shutdown.clone().cancelled_owned());
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// The events a stream sends next: those after `next` in the log, or, when the log was
/// rebuilt since the stream's `generation`, a `reset` and the whole new log.
fn read_from(
    state: &RoomState,
    generation: &mut Option<u64>,
    next: &mut usize,
) -> Vec<(String, Value)> {
    let mut batch = Vec::new();
    if generation.is_some_and(|seen| seen != state.generation) {
        *next = 0;
        batch.push((format!("{}:0", state.generation), json!({"type": "reset"})));
    }
    *generation = Some(state.generation);
    batch.extend(
        state
            .log
            .iter()
            .enumerate()
            .skip(*next)
            .map(|(index, event)| (format!("{}:{index}", state.generation), event.clone())),
    );
    *next = state.log.len().max(*next);
    batch
}
