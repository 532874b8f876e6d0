//! The loop with a scripted model: what each round offers, and what carries over.

use std::sync::Mutex;

use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot};
use skillbox_exec::{Executor, ExecutorConfig, SandboxMode, SandboxPolicy};
use skillbox_tools::ProviderOptions;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::calls::canonical_json;
use super::*;
use crate::conversation::Usage;
use crate::events::TurnEnd;
use crate::model::{ModelError, ModelResponse, StopReason};
use crate::model::{ModelEvent, ModelRequest};
use crate::wire::WireFormat;

/// What the model saw in one request.
#[derive(Debug, Clone)]
struct Seen {
    system: String,
    tools: Vec<String>,
}

type BeforeAnswer = Box<dyn Fn(usize) + Send + Sync>;

/// The model: answers request `n` with the `n`th scripted call (then text), records what
/// each request offered, and runs `before_answer(n)` before answering.
struct ScriptedModel {
    calls: Vec<(&'static str, String)>,
    seen: Mutex<Vec<Seen>>,
    before_answer: BeforeAnswer,
}

#[async_trait::async_trait]
impl ModelClient for ScriptedModel {
    fn format(&self) -> WireFormat {
        WireFormat::Chat
    }

    async fn respond(
        &self,
        request: &ModelRequest<'_>,
        _events: &mut (dyn FnMut(ModelEvent) + Send),
    ) -> Result<ModelResponse, ModelError> {
        let index = {
            let mut seen = self.seen.lock().expect("lock");
            seen.push(Seen {
                system: request.system.to_owned(),
                tools: request.tools.iter().map(|tool| tool.name.clone()).collect(),
            });
            seen.len() - 1
        };
        (self.before_answer)(index);
        let tool_calls = self
            .calls
            .get(index)
            .map(|(name, arguments)| ToolCall {
                id: format!("call_{index}"),
                name: (*name).to_owned(),
                arguments: arguments.clone(),
                item_id: None,
            })
            .into_iter()
            .collect::<Vec<_>>();
        Ok(ModelResponse {
            content: if tool_calls.is_empty() {
                "done".to_owned()
            } else {
                String::new()
            },
            stop: if tool_calls.is_empty() {
                StopReason::Completed
            } else {
                StopReason::ToolCalls
            },
            tool_calls,
            usage: Usage::default(),
            replay: None,
        })
    }
}

fn write_skill(root: &std::path::Path, name: &str) {
    let folder = root.join(name);
    fs_err::create_dir_all(&folder).expect("skill folder");
    fs_err::write(
        folder.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: The {name} skill.\n---\nDo {name} things.\n"),
    )
    .expect("SKILL.md");
}

fn provider_over(
    root: &std::path::Path,
    scratch: &std::path::Path,
    define_tools: bool,
) -> SkillsProvider {
    let catalog = SkillCatalog::load(&CatalogOptions {
        roots: vec![SkillRoot::explicit(root)],
        ..CatalogOptions::default()
    })
    .expect("catalog");
    let executor = Executor::new(ExecutorConfig {
        helper: None,
        policy: SandboxPolicy {
            mode: SandboxMode::Off,
            ..SandboxPolicy::default()
        },
        workspace_root: scratch.join("workspaces"),
        ..ExecutorConfig::default()
    })
    .expect("executor");
    SkillsProvider::new(
        Arc::new(catalog),
        Arc::new(executor),
        ProviderOptions {
            define_tools,
            session_tools_root: scratch.join("defined"),
            ..ProviderOptions::default()
        },
    )
}

/// Run one turn of `model` over `skills` and return what each request offered.
async fn turn(
    skills: ProviderSource,
    model: Arc<ScriptedModel>,
    options: AgentOptions,
) -> Vec<Seen> {
    let client: Arc<dyn ModelClient> = Arc::clone(&model) as Arc<dyn ModelClient>;
    let agent = Agent::new(skills, client, options);
    let mut conversation = agent.conversation(None);
    let end = agent
        .run_turn(
            &mut conversation,
            TurnInput::Prompt("go".to_owned()),
            &|_| {},
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(end, TurnEnd::Answered);
    model.seen.lock().expect("lock").clone()
}

#[tokio::test]
async fn a_reload_between_rounds_shows_in_the_next_round_prompt_and_tools() {
    let root = tempfile::tempdir().expect("root");
    let scratch = tempfile::tempdir().expect("scratch");
    write_skill(root.path(), "alpha");
    let live = LiveProvider::new(provider_over(root.path(), scratch.path(), false));
    write_skill(root.path(), "beta");
    let reloaded = provider_over(root.path(), scratch.path(), false);
    let swap = Mutex::new(Some(reloaded));
    let target = Arc::clone(&live);
    let model = Arc::new(ScriptedModel {
        calls: vec![
            ("load_skill", r#"{"skill":"alpha"}"#.to_owned()),
            (
                "load_skill",
                r#"{"skill":"alpha","arguments":"again"}"#.to_owned(),
            ),
        ],
        seen: Mutex::new(Vec::new()),
        // The catalog changes while the second request is answered.
        before_answer: Box::new(move |index| {
            if index == 1
                && let Some(provider) = swap.lock().expect("lock").take()
            {
                target.replace(provider, Vec::new());
            }
        }),
    });
    let seen = turn(
        ProviderSource::Live(live),
        model,
        AgentOptions::new("scripted"),
    )
    .await;
    assert_eq!(seen.len(), 3);
    assert!(seen[0].system.contains("alpha") && !seen[0].system.contains("beta"));
    assert_eq!(seen[1].system, seen[0].system, "nothing changed yet");
    assert!(
        seen[2].system.contains("beta"),
        "the reload shows in the next round: {}",
        seen[2].system
    );
}

#[tokio::test]
async fn a_tool_defined_in_one_round_is_offered_in_the_next() {
    let root = tempfile::tempdir().expect("root");
    let scratch = tempfile::tempdir().expect("scratch");
    write_skill(root.path(), "alpha");
    let provider = provider_over(root.path(), scratch.path(), true);
    let model = Arc::new(ScriptedModel {
        calls: vec![
            ("load_skill", r#"{"skill":"alpha"}"#.to_owned()),
            (
                "define_tool",
                r#"{"name":"shout","description":"Shouts.","code":"return args;"}"#.to_owned(),
            ),
        ],
        seen: Mutex::new(Vec::new()),
        before_answer: Box::new(|_| {}),
    });
    let seen = turn(
        ProviderSource::Fixed(Arc::new(provider)),
        model,
        AgentOptions::new("scripted"),
    )
    .await;
    assert_eq!(seen.len(), 3);
    let shout = |index: usize| seen[index].tools.iter().any(|name| name == "shout");
    assert!(!shout(0) && !shout(1), "{seen:?}");
    assert!(
        shout(2),
        "the defined tool is offered next: {:?}",
        seen[2].tools
    );
}

#[test]
fn canonical_json_ignores_key_order() {
    let one: Value =
        serde_json::from_str(r#"{"b":1,"a":{"d":2,"c":[1,{"y":1,"x":2}]}}"#).expect("json");
    let two: Value =
        serde_json::from_str(r#"{"a":{"c":[1,{"x":2,"y":1}],"d":2},"b":1}"#).expect("json");
    assert_eq!(canonical_json(&one), canonical_json(&two));
}

#[tokio::test]
async fn in_tools_on_load_mode_a_skill_s_tools_are_offered_from_the_round_after_its_load() {
    let root = tempfile::tempdir().expect("root");
    let scratch = tempfile::tempdir().expect("scratch");
    write_skill(root.path(), "alpha");
    write_skill(root.path(), "weather");
    fs_err::create_dir_all(root.path().join("weather/scripts")).expect("scripts");
    fs_err::write(
        root.path().join("weather/scripts/sky.py"),
        "print('sunny')\n",
    )
    .expect("script");
    fs_err::write(
        root.path().join("weather/tools.json"),
        r#"[{"name":"sky","description":"The sky.","script":"scripts/sky.py","parameters":{}}]"#,
    )
    .expect("tools.json");
    let provider = provider_over(root.path(), scratch.path(), false);
    let model = Arc::new(ScriptedModel {
        calls: vec![
            ("load_skill", r#"{"skill":"alpha"}"#.to_owned()),
            ("load_skill", r#"{"skill":"weather"}"#.to_owned()),
            (
                "load_skill",
                r#"{"skill":"alpha","arguments":"again"}"#.to_owned(),
            ),
        ],
        seen: Mutex::new(Vec::new()),
        before_answer: Box::new(|_| {}),
    });
    let mut options = AgentOptions::new("scripted");
    options.tools_on_load = true;
    let seen = turn(ProviderSource::Fixed(Arc::new(provider)), model, options).await;
    assert_eq!(seen.len(), 4);
    let sky = |index: usize| seen[index].tools.iter().any(|name| name == "sky");
    assert!(!sky(0) && !sky(1), "{seen:?}");
    assert!(sky(2) && sky(3), "offered once weather is loaded: {seen:?}");
}

// The loop against a real HTTP model server (`ScriptedModelServer`), in all three wire formats.

use skillbox_testkit::model_server::{Reply, ScriptedModelServer};

use crate::events::AgentEvent;
use crate::http::{HttpModelClient, RetryPolicy};
use skillbox_tools::{ApprovalDecision, ApprovalRequest};

const FORMATS: [WireFormat; 3] = [
    WireFormat::Responses,
    WireFormat::Chat,
    WireFormat::Anthropic,
];

/// One scripted model answer.
enum Answer {
    /// Tool calls, in order: (tool, arguments as the model writes them).
    Calls(Vec<(&'static str, String)>),
    /// A text answer.
    Text(&'static str),
}

fn calls(list: &[(&'static str, &str)]) -> Answer {
    Answer::Calls(
        list.iter()
            .map(|(name, arguments)| (*name, (*arguments).to_owned()))
            .collect(),
    )
}

fn named(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}")
}

/// `answer` as `format`'s server streams it; each call in events of its own (a call's
/// arguments may be MiBs: one event line holds at most 4 MiB). `round` keeps call ids unique.
fn reply(format: WireFormat, round: usize, answer: &Answer) -> Reply {
    use serde_json::json;
    match (format, answer) {
        (WireFormat::Chat, Answer::Calls(list)) => {
            let mut chunks: Vec<String> = list
                .iter()
                .enumerate()
                .map(|(index, (name, arguments))| {
                    json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":index,"id":format!("call_{round}_{index}"),"type":"function","function":{"name":name,"arguments":arguments}}]}}]}).to_string()
                })
                .collect();
            chunks.push(
                json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})
                    .to_string(),
            );
            Reply::data_events(&chunks.iter().map(String::as_str).collect::<Vec<_>>())
        }
        (WireFormat::Chat, Answer::Text(text)) => Reply::data_events(&[
            &json!({"choices":[{"index":0,"delta":{"content":text}}]}).to_string(),
            &json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string(),
        ]),
        (WireFormat::Responses, Answer::Calls(list)) => {
            let mut events: Vec<String> = list
                .iter()
                .enumerate()
                .map(|(index, (name, arguments))| {
                    named(
                        "response.output_item.done",
                        &json!({"type":"response.output_item.done","output_index":index,"item":{"id":format!("fc_{round}_{index}"),"type":"function_call","status":"completed","call_id":format!("call_{round}_{index}"),"name":name,"arguments":arguments}}),
                    )
                })
                .collect();
            events.push(named(
                "response.completed",
                &json!({"type":"response.completed","response":{"status":"completed","output":[],"usage":{"input_tokens":10,"output_tokens":5}}}),
            ));
            Reply::Events(events)
        }
        (WireFormat::Responses, Answer::Text(text)) => {
            let message = json!({"id":format!("msg_{round}"),"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":text,"annotations":[]}]});
            Reply::Events(vec![
                named(
                    "response.output_text.delta",
                    &json!({"type":"response.output_text.delta","item_id":format!("msg_{round}"),"output_index":0,"content_index":0,"delta":text}),
                ),
                named(
                    "response.completed",
                    &json!({"type":"response.completed","response":{"status":"completed","output":[message],"usage":{"input_tokens":10,"output_tokens":5}}}),
                ),
            ])
        }
        (WireFormat::Anthropic, answer) => {
            let mut events = vec![named(
                "message_start",
                &json!({"type":"message_start","message":{"id":format!("msg_{round}"),"type":"message","role":"assistant","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}),
            )];
            let stop = match answer {
                Answer::Calls(list) => {
                    for (index, (name, arguments)) in list.iter().enumerate() {
                        events.push(named(
                            "content_block_start",
                            &json!({"type":"content_block_start","index":index,"content_block":{"type":"tool_use","id":format!("toolu_{round}_{index}"),"name":name,"input":{}}}),
                        ));
                        events.push(named(
                            "content_block_delta",
                            &json!({"type":"content_block_delta","index":index,"delta":{"type":"input_json_delta","partial_json":arguments}}),
                        ));
                        events.push(named(
                            "content_block_stop",
                            &json!({"type":"content_block_stop","index":index}),
                        ));
                    }
                    "tool_use"
                }
                Answer::Text(text) => {
                    events.push(named(
                        "content_block_start",
                        &json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
                    ));
                    events.push(named(
                        "content_block_delta",
                        &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}),
                    ));
                    events.push(named(
                        "content_block_stop",
                        &json!({"type":"content_block_stop","index":0}),
                    ));
                    "end_turn"
                }
            };
            events.push(named(
                "message_delta",
                &json!({"type":"message_delta","delta":{"stop_reason":stop},"usage":{"output_tokens":5}}),
            ));
            events.push(named("message_stop", &json!({"type":"message_stop"})));
            Reply::Events(events)
        }
    }
}

fn write_file(root: &std::path::Path, path: &str, text: &str) {
    let path = root.join(path);
    fs_err::create_dir_all(path.parent().expect("parent")).expect("folder");
    fs_err::write(path, text).expect("write");
}

/// Skills for the bound tests: `restricted` allows only `read_skill_file`; `greet` runs a
/// script and allows anything; `forked` is a fork skill that allows anything.
fn bound_catalog(root: &std::path::Path) {
    write_file(
        root,
        "restricted/SKILL.md",
        "---\nname: restricted\ndescription: Reads skill files only.\nallowed-tools: read_skill_file\n---\nRead only.\n",
    );
    write_file(
        root,
        "greet/SKILL.md",
        "---\nname: greet\ndescription: Greets people.\n---\nRun greet.py NAME with use_skill.\n",
    );
    write_file(
        root,
        "greet/scripts/greet.py",
        "import sys\nprint('Hello, ' + sys.argv[1] + '!')\n",
    );
    write_file(
        root,
        "forked/SKILL.md",
        "---\nname: forked\ndescription: Does things in a sub-agent.\ncontext: fork\n---\nDo things.\n",
    );
}

const USE_GREET: &str = r#"{"skill":"greet","script":"greet.py","args":["Ada"]}"#;

/// What a scripted run saw: its events, and the server (with the requests it received).
struct Run {
    events: Vec<AgentEvent>,
    server: Arc<ScriptedModelServer>,
}

impl Run {
    /// The finished calls of `name` (at the top level, or inside a fork when `fork`), as
    /// (result, is_error).
    fn finished(&self, name: &str, fork: bool) -> Vec<(String, bool)> {
        self.events
            .iter()
            .filter_map(|event| match (event, fork) {
                (AgentEvent::Fork { event, .. }, true) => Some(event.as_ref()),
                (AgentEvent::Fork { .. }, false) | (_, true) => None,
                (other, false) => Some(other),
            })
            .filter_map(|event| match event {
                AgentEvent::ToolCallFinished {
                    name: called,
                    result,
                    is_error,
                    ..
                } if called == name => Some((result.clone(), *is_error)),
                _ => None,
            })
            .collect()
    }
}

/// An agent over the skills in `root`, asking a scripted server speaking `format`.
fn http_agent(
    format: WireFormat,
    root: &std::path::Path,
    scratch: &std::path::Path,
    server: &ScriptedModelServer,
    options: AgentOptions,
) -> Agent {
    let client = HttpModelClient::new(format, &server.base_url, None)
        .expect("client")
        .with_retry(RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        });
    Agent::new(
        ProviderSource::Fixed(Arc::new(provider_over(root, scratch, false))),
        Arc::new(client),
        options,
    )
}

/// Run `inputs` as turns of one conversation against `answers` in `format`.
async fn scripted_run(
    format: WireFormat,
    root: &std::path::Path,
    answers: &[Answer],
    options: AgentOptions,
    approval: Option<Arc<dyn Approval>>,
    inputs: &[&str],
) -> Run {
    let scratch = tempfile::tempdir().expect("scratch");
    let replies = answers
        .iter()
        .enumerate()
        .map(|(round, answer)| reply(format, round, answer))
        .collect();
    let server = Arc::new(ScriptedModelServer::start(replies));
    let mut agent = http_agent(format, root, scratch.path(), &server, options);
    if let Some(approval) = approval {
        agent = agent.with_approval(approval);
    }
    let mut conversation = agent.conversation(None);
    let events = Mutex::new(Vec::new());
    for input in inputs {
        let input = agent.read_input(input).expect("input");
        agent
            .run_turn(
                &mut conversation,
                input,
                &|event| events.lock().expect("lock").push(event),
                &CancellationToken::new(),
            )
            .await;
    }
    Run {
        events: events.into_inner().expect("lock"),
        server,
    }
}

fn enforcing() -> AgentOptions {
    let mut options = AgentOptions::new("scripted");
    options.enforce_allowed_tools = true;
    options
}

fn assert_refused_by(result: &[(String, bool)], skill: &str, format: WireFormat) {
    assert_eq!(result.len(), 1, "{format:?}: {result:?}");
    let (text, is_error) = &result[0];
    assert!(
        *is_error && text.contains(&format!("not in the allowed-tools of `{skill}`")),
        "{format:?}: {text}"
    );
    assert!(!text.contains("Hello"), "{format:?}: {text}");
}

#[tokio::test]
async fn a_call_after_a_restricting_load_in_the_same_response_is_held_to_the_bound() {
    let root = tempfile::tempdir().expect("root");
    bound_catalog(root.path());
    for format in FORMATS {
        let run = scripted_run(
            format,
            root.path(),
            &[
                calls(&[
                    ("load_skill", r#"{"skill":"restricted"}"#),
                    ("use_skill", USE_GREET),
                ]),
                Answer::Text("done"),
            ],
            enforcing(),
            None,
            &["go"],
        )
        .await;
        assert!(!run.finished("load_skill", false)[0].1, "{format:?}");
        assert_refused_by(&run.finished("use_skill", false), "restricted", format);
    }
}

#[tokio::test]
async fn loading_a_skill_without_allowed_tools_does_not_lift_the_bound() {
    let root = tempfile::tempdir().expect("root");
    bound_catalog(root.path());
    for format in FORMATS {
        let run = scripted_run(
            format,
            root.path(),
            &[
                calls(&[("load_skill", r#"{"skill":"restricted"}"#)]),
                calls(&[("load_skill", r#"{"skill":"greet"}"#)]),
                calls(&[("use_skill", USE_GREET)]),
                // In one response too: the load comes first, the call after it.
                calls(&[
                    ("load_skill", r#"{"skill":"greet","arguments":"again"}"#),
                    (
                        "use_skill",
                        r#"{"skill":"greet","script":"greet.py","args":["Bo"]}"#,
                    ),
                ]),
                Answer::Text("done"),
            ],
            enforcing(),
            None,
            &["go"],
        )
        .await;
        let used = run.finished("use_skill", false);
        assert_eq!(used.len(), 2, "{format:?}: {used:?}");
        assert_refused_by(&used[..1], "restricted", format);
        assert_refused_by(&used[1..], "restricted", format);
    }
}

#[tokio::test]
async fn only_the_person_invoking_a_skill_sets_the_bound_anew() {
    let root = tempfile::tempdir().expect("root");
    bound_catalog(root.path());
    let run = scripted_run(
        WireFormat::Chat,
        root.path(),
        &[
            calls(&[("load_skill", r#"{"skill":"restricted"}"#)]),
            Answer::Text("loaded"),
            // A new prompt: the bound holds.
            calls(&[("use_skill", USE_GREET)]),
            Answer::Text("could not"),
            // The person invokes greet: it is the bound now.
            calls(&[(
                "use_skill",
                r#"{"skill":"greet","script":"greet.py","args":["Cy"]}"#,
            )]),
            Answer::Text("greeted"),
        ],
        enforcing(),
        None,
        &["load it", "greet Ada", "/greet Cy"],
    )
    .await;
    let used = run.finished("use_skill", false);
    assert_eq!(used.len(), 2, "{used:?}");
    assert_refused_by(&used[..1], "restricted", WireFormat::Chat);
    assert!(
        !used[1].0.contains("allowed-tools"),
        "after /greet the person's choice holds: {used:?}"
    );
}

#[tokio::test]
async fn a_sub_agent_started_under_a_bound_keeps_it() {
    let root = tempfile::tempdir().expect("root");
    bound_catalog(root.path());
    let run = scripted_run(
        WireFormat::Chat,
        root.path(),
        &[
            calls(&[("load_skill", r#"{"skill":"restricted"}"#)]),
            calls(&[("load_skill", r#"{"skill":"forked"}"#)]),
            // The sub-agent (its fork skill names no allowed-tools) tries to run a script.
            calls(&[("use_skill", USE_GREET)]),
            Answer::Text("could not"),
            Answer::Text("done"),
        ],
        enforcing(),
        None,
        &["go"],
    )
    .await;
    assert_eq!(run.server.requests().len(), 5);
    assert_refused_by(
        &run.finished("use_skill", true),
        "restricted",
        WireFormat::Chat,
    );
}

/// An approval hook that records what it was asked, and how many model requests the server
/// had received by then.
struct RecordingApproval {
    server: Mutex<Option<Arc<ScriptedModelServer>>>,
    asked: Mutex<Vec<(String, usize)>>,
    allow: bool,
}

#[async_trait::async_trait]
impl Approval for RecordingApproval {
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalDecision {
        let seen = self
            .server
            .lock()
            .expect("lock")
            .as_ref()
            .map_or(0, |server| server.requests().len());
        self.asked
            .lock()
            .expect("lock")
            .push((request.summary.clone(), seen));
        if self.allow {
            ApprovalDecision::Approve
        } else {
            ApprovalDecision::Deny {
                reason: "the user said no".to_owned(),
            }
        }
    }
}

#[tokio::test]
async fn the_approval_hook_is_asked_before_a_fork_sub_agent_starts() {
    let root = tempfile::tempdir().expect("root");
    bound_catalog(root.path());
    for allow in [true, false] {
        let scratch = tempfile::tempdir().expect("scratch");
        let answers = [
            calls(&[("load_skill", r#"{"skill":"forked"}"#)]),
            Answer::Text("sub-agent answer"),
            Answer::Text("done"),
        ];
        let server = Arc::new(ScriptedModelServer::start(
            answers
                .iter()
                .enumerate()
                .map(|(round, answer)| reply(WireFormat::Chat, round, answer))
                .collect(),
        ));
        let approval = Arc::new(RecordingApproval {
            server: Mutex::new(Some(Arc::clone(&server))),
            asked: Mutex::new(Vec::new()),
            allow,
        });
        let agent = http_agent(
            WireFormat::Chat,
            root.path(),
            scratch.path(),
            &server,
            AgentOptions::new("scripted"),
        )
        .with_approval(Arc::clone(&approval) as Arc<dyn Approval>);
        let mut conversation = agent.conversation(None);
        let events = Mutex::new(Vec::new());
        agent
            .run_turn(
                &mut conversation,
                TurnInput::Prompt("go".to_owned()),
                &|event| events.lock().expect("lock").push(event),
                &CancellationToken::new(),
            )
            .await;
        let events = events.into_inner().expect("lock");
        let asked = approval.asked.lock().expect("lock").clone();
        assert_eq!(asked.len(), 1, "allow {allow}: {asked:?}");
        assert!(
            asked[0]
                .0
                .contains("start a sub-agent running the skill `forked`"),
            "{asked:?}"
        );
        assert_eq!(
            asked[0].1, 1,
            "asked before the sub-agent sent anything: {asked:?}"
        );
        let forked = events
            .iter()
            .any(|event| matches!(event, AgentEvent::Fork { .. }));
        let requests = server.requests();
        if allow {
            assert!(forked);
            assert_eq!(requests.len(), 3);
        } else {
            assert!(!forked, "a denied sub-agent never starts: {events:?}");
            assert_eq!(requests.len(), 2, "the sub-agent never asked the model");
            assert!(
                events
                    .iter()
                    .any(|event| matches!(event, AgentEvent::ApprovalDenied { .. }))
            );
        }
    }
}

/// Bytes of each large argument the hostile model sends (the stream decoder reads lines of
/// a few MiB slowly in a debug build; many calls of a quarter MiB make the same point).
const LARGE_ARGUMENT_BYTES: usize = 256 * 1024;

/// Sixteen calls of large arguments (4 MiB): JSON objects, which history sends back, and one
/// in four not JSON (`{"pad": "…` without its end).
fn hostile_round(round: usize) -> Answer {
    let calls = (0..16)
        .map(|index| {
            let pad = format!("{round:x}{index:x}").repeat(LARGE_ARGUMENT_BYTES / 2);
            if index % 4 == 0 {
                ("nonesuch", format!("{{\"pad\": \"{pad}"))
            } else {
                ("nonesuch", format!("{{\"pad\":\"{pad}\"}}"))
            }
        })
        .collect();
    Answer::Calls(calls)
}

#[tokio::test]
async fn large_tool_payloads_keep_the_history_the_requests_and_the_transcript_within_bounds() {
    let root = tempfile::tempdir().expect("root");
    bound_catalog(root.path());
    let history_bound = crate::history::MAX_HISTORY_BYTES;
    for format in FORMATS {
        let scratch = tempfile::tempdir().expect("scratch");
        let answers = [
            hostile_round(0),
            hostile_round(1),
            hostile_round(2),
            Answer::Text("done"),
        ];
        let server = ScriptedModelServer::start(
            answers
                .iter()
                .enumerate()
                .map(|(round, answer)| reply(format, round, answer))
                .collect(),
        );
        let agent = http_agent(
            format,
            root.path(),
            scratch.path(),
            &server,
            AgentOptions::new("scripted"),
        );
        let store = crate::transcript::TranscriptStore::new(scratch.path().join("transcripts"));
        let transcript = store
            .create(format, "scripted", "http://x")
            .expect("transcript");
        let path = transcript.path().to_path_buf();
        let mut conversation = agent.conversation(Some(transcript));
        let end = agent
            .run_turn(
                &mut conversation,
                TurnInput::Prompt("go".to_owned()),
                &|_| {},
                &CancellationToken::new(),
            )
            .await;
        assert_eq!(end, TurnEnd::Answered, "{format:?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 4, "{format:?}");
        for request in &requests {
            assert!(
                request.body.len() < history_bound + 256 * 1024,
                "{format:?}: a request of {} bytes",
                request.body.len()
            );
        }
        assert!(
            requests[3]
                .body
                .contains("of arguments cut to keep the conversation within its bound"),
            "{format:?}: the model reads what was cut"
        );
        let kept: usize = conversation
            .messages()
            .iter()
            .map(|message| serde_json::to_string(message).expect("json").len())
            .sum();
        assert!(kept <= history_bound, "{format:?}: {kept} bytes kept");
        let saved = fs_err::read_to_string(&path).expect("transcript");
        assert!(saved.len() as u64 <= crate::transcript::MAX_TRANSCRIPT_BYTES);
        for line in saved.lines() {
            assert!(
                line.len() < crate::transcript::MAX_TRANSCRIPT_LINE_BYTES,
                "{format:?}: a transcript line of {} bytes",
                line.len()
            );
        }
    }
}

fn load_round(index: usize, skill: &str) -> [Message; 2] {
    let id = format!("call_{index}");
    [
        Message::Assistant {
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: id.clone(),
                name: "load_skill".to_owned(),
                arguments: format!("{{\"skill\":\"{skill}\"}}"),
                item_id: None,
            }],
            replay: None,
        },
        Message::Tool {
            results: vec![crate::conversation::ToolResult {
                call_id: id,
                name: "load_skill".to_owned(),
                content: "loaded".to_owned(),
                is_error: false,
            }],
        },
    ]
}

#[tokio::test]
async fn a_resumed_conversation_keeps_its_bound_until_the_person_invoked_a_skill() {
    let root = tempfile::tempdir().expect("root");
    let scratch = tempfile::tempdir().expect("scratch");
    bound_catalog(root.path());
    let agent = Agent::new(
        ProviderSource::Fixed(Arc::new(provider_over(root.path(), scratch.path(), false))),
        Arc::new(ScriptedModel {
            calls: Vec::new(),
            seen: Mutex::new(Vec::new()),
            before_answer: Box::new(|_| {}),
        }),
        enforcing(),
    );
    let mut messages = vec![Message::user("go")];
    messages.extend(load_round(0, "restricted"));
    messages.extend(load_round(1, "greet"));
    messages.push(Message::assistant("done"));
    let resumed = agent.resume(None, messages.clone());
    assert_eq!(resumed.active_skill(), Some("greet"));
    assert!(resumed.bound.refusal("use_skill", "x").is_some());
    messages.push(Message::user(
        "/greet Ada\n\nI invoked the skill `greet`. Its instructions follow; carry them out.\n\nRun greet.py",
    ));
    let resumed = agent.resume(None, messages);
    assert!(resumed.bound.refusal("use_skill", "x").is_none());
}

#[tokio::test]
async fn a_resumed_conversation_is_kept_within_the_history_bound() {
    let root = tempfile::tempdir().expect("root");
    let scratch = tempfile::tempdir().expect("scratch");
    bound_catalog(root.path());
    let agent = Agent::new(
        ProviderSource::Fixed(Arc::new(provider_over(root.path(), scratch.path(), false))),
        Arc::new(ScriptedModel {
            calls: Vec::new(),
            seen: Mutex::new(Vec::new()),
            before_answer: Box::new(|_| {}),
        }),
        AgentOptions::new("scripted"),
    );
    let store = crate::transcript::TranscriptStore::new(scratch.path().join("transcripts"));
    let mut transcript = store
        .create(WireFormat::Chat, "scripted", "http://x")
        .expect("transcript");
    let id = transcript.header().id.clone();
    let large = "r".repeat(4 * 1024 * 1024);
    transcript.append(&Message::user("go")).expect("append");
    for index in 0..3 {
        for message in load_round(index, "greet") {
            let message = match message {
                Message::Tool { mut results } => {
                    results[0].content.clone_from(&large);
                    Message::Tool { results }
                }
                other => other,
            };
            transcript.append(&message).expect("append");
        }
    }
    drop(transcript);
    let (transcript, messages) = store.resume(&id).expect("resume");
    assert_eq!(messages.len(), 7);
    let resumed = agent.resume(Some(transcript), messages);
    let kept: usize = resumed
        .messages()
        .iter()
        .map(|message| serde_json::to_string(message).expect("json").len())
        .sum();
    assert!(kept <= crate::history::MAX_HISTORY_BYTES, "{kept}");
    assert_eq!(resumed.messages().len(), 7);
}
