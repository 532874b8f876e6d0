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
async fn turn(skills: SkillSource, model: Arc<ScriptedModel>, options: AgentOptions) -> Vec<Seen> {
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
        SkillSource::Live(live),
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
        SkillSource::Fixed(Arc::new(provider)),
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
    let seen = turn(SkillSource::Fixed(Arc::new(provider)), model, options).await;
    assert_eq!(seen.len(), 4);
    let sky = |index: usize| seen[index].tools.iter().any(|name| name == "sky");
    assert!(!sky(0) && !sky(1), "{seen:?}");
    assert!(sky(2) && sky(3), "offered once weather is loaded: {seen:?}");
}
