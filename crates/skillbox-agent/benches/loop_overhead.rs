//! The agent loop's own cost per round (issue 11), in one process: everything a round does
//! but the model. Run through `bench/agent.sh`, or alone:
//!
//! ```text
//! cargo bench -p skillbox-agent --bench loop_overhead -- [ROOT ...] [--turns N] [--warmup W] [--rounds R]
//! ```
//!
//! `cargo bench` runs it in the crate's folder, so give absolute paths. Each ROOT (default the
//! repository's `examples/skills`) becomes a catalog and a [`SkillsProvider`] (sandbox
//! off; the timed calls run no code). The model is a [`ModelClient`] written here that answers
//! at once from a script: R rounds of one tool call, then a text answer. Each turn runs through
//! [`Agent::run`], its events read by the caller as the CLI reads them. A round is the time
//! from one `respond` call to the next: reading the response, planning and running the call,
//! adding the messages, then the system prompt and the tool list of the next round.
//!
//! Cases, interleaved turn by turn so they share the machine's noise:
//!
//! * `load_skill`: each round loads the smallest skill the model may load (its arguments
//!   change every round, so the repeated-call guard never answers in its place);
//! * `load_skill, tools on load`: the same with [`AgentOptions::tools_on_load`];
//! * `unknown tool`: a tool name nothing offers (answered with an error, nothing runs);
//! * `load_skill, as the CLI`: a transcript is written and each request is encoded as a Chat
//!   Completions body, as `skillbox ask` does before sending it;
//! * `tool alone`: the same `load_skill` calls through the door policy (`call_once`)
//!   directly. A round's overhead is its median minus this median.
//!
//! Splits, to see where a round's time goes: the system prompt's skills section
//! ([`SkillsProvider::system_prompt`]), the tool list ([`SkillsProvider::tools`]), and the
//! Chat Completions body of a first request.
//!
//! Prints a markdown table per catalog and a last line of JSON. Exits 1 when a turn does not
//! end as scripted (a wrong tool result, an unanswered turn).
#![allow(clippy::print_stdout, missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillbox_agent::{
    Agent, AgentEvent, AgentOptions, Message, ModelClient, ModelError, ModelEvent, ModelRequest,
    ModelResponse, ProviderSource, StopReason, ToolCall, TranscriptStore, TurnEnd, TurnInput,
    Usage, WireFormat,
};
use skillbox_core::{CatalogOptions, Skill, SkillCatalog, SkillRoot};
use skillbox_exec::{Executor, ExecutorConfig, SandboxMode, SandboxPolicy};
use skillbox_tools::{PromptFormat, ProviderOptions, SkillsProvider, ToolProfile};

/// Tool-call rounds per turn (the turn's last model call answers with text).
const DEFAULT_ROUNDS_PER_TURN: usize = 10;
/// Timed turns per case.
const DEFAULT_TURNS: usize = 200;
/// Turns per case run before timing.
const DEFAULT_WARMUP_TURNS: usize = 20;
/// Timed calls of each split.
const SPLIT_CALLS: usize = 300;
/// A tool name no catalog offers.
const UNKNOWN_TOOL: &str = "no_such_tool";
/// The target of issue 11: a round's own cost, tool time aside.
const TARGET_MICROSECONDS: f64 = 1000.0;

fn fail(message: &str) -> ! {
    eprintln!("loop_overhead: error: {message}");
    std::process::exit(1);
}

struct Settings {
    roots: Vec<PathBuf>,
    turns: usize,
    warmup: usize,
    rounds: usize,
}

fn settings() -> Settings {
    let mut settings = Settings {
        roots: Vec::new(),
        turns: DEFAULT_TURNS,
        warmup: DEFAULT_WARMUP_TURNS,
        rounds: DEFAULT_ROUNDS_PER_TURN,
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        let mut count = |name: &str| -> usize {
            arguments
                .next()
                .and_then(|value| value.parse().ok())
                .unwrap_or_else(|| fail(&format!("{name} needs a whole number")))
        };
        match argument.as_str() {
            // `cargo bench` passes `--bench` to every bench binary.
            "--bench" => {}
            "--turns" => settings.turns = count("--turns").max(1),
            "--warmup" => settings.warmup = count("--warmup"),
            "--rounds" => settings.rounds = count("--rounds").max(1),
            other if other.starts_with("--") => fail(&format!(
                "unknown option {other}; usage: loop_overhead [ROOT ...] [--turns N] [--warmup W] [--rounds R]"
            )),
            root => settings.roots.push(PathBuf::from(root)),
        }
    }
    if settings.roots.is_empty() {
        settings
            .roots
            .push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/skills"));
    }
    settings
}

/// The tool a scripted round calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    LoadSkill,
    Unknown,
}

/// A model that answers at once: `rounds` rounds of one call, then text. The round is told
/// by the tool results already in the conversation, so one client serves every turn. Each
/// `respond` call's start is recorded.
struct ScriptedModel {
    skill: String,
    call: Call,
    rounds: usize,
    /// Encode each request as a Chat Completions body, as the HTTP client does first.
    encode: bool,
    calls: Mutex<Vec<Instant>>,
}

/// The arguments of round `round`'s `load_skill` call: they differ each round, so the guard
/// against a third identical call never answers instead of the tool.
fn load_arguments(skill: &str, round: usize) -> Value {
    json!({ "skill": skill, "arguments": format!("round {round}") })
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
        let started = Instant::now();
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(started);
        }
        if self.encode {
            let body = self.format().request_body(request);
            let bytes = serde_json::to_vec(&body).map_err(|error| ModelError::Malformed {
                detail: error.to_string(),
            })?;
            std::hint::black_box(bytes);
        }
        let round = request
            .messages
            .iter()
            .filter(|message| matches!(message, Message::Tool { .. }))
            .count();
        let usage = Usage {
            input_tokens: 1,
            output_tokens: 1,
            ..Usage::default()
        };
        if round >= self.rounds {
            return Ok(ModelResponse {
                content: "done".to_owned(),
                tool_calls: Vec::new(),
                stop: StopReason::Completed,
                usage,
                replay: None,
            });
        }
        let (name, arguments) = match self.call {
            Call::LoadSkill => ("load_skill", load_arguments(&self.skill, round)),
            Call::Unknown => (UNKNOWN_TOOL, json!({})),
        };
        Ok(ModelResponse {
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: format!("call_{round}"),
                name: name.to_owned(),
                arguments: arguments.to_string(),
                item_id: None,
            }],
            stop: StopReason::ToolCalls,
            usage,
            replay: None,
        })
    }
}

/// What a case does each round.
struct CaseKind {
    label: &'static str,
    call: Call,
    tools_on_load: bool,
    /// Write a transcript and encode each request as a Chat Completions body.
    as_the_cli: bool,
}

const CASES: [CaseKind; 4] = [
    CaseKind {
        label: "load_skill round",
        call: Call::LoadSkill,
        tools_on_load: false,
        as_the_cli: false,
    },
    CaseKind {
        label: "load_skill round, tools on load",
        call: Call::LoadSkill,
        tools_on_load: true,
        as_the_cli: false,
    },
    CaseKind {
        label: "unknown tool round",
        call: Call::Unknown,
        tools_on_load: false,
        as_the_cli: false,
    },
    CaseKind {
        label: "load_skill round as the CLI (transcript, request encoded)",
        call: Call::LoadSkill,
        tools_on_load: false,
        as_the_cli: true,
    },
];

/// One measured case over one catalog.
struct Case {
    label: &'static str,
    agent: Agent,
    model: Arc<ScriptedModel>,
    transcripts: Option<TranscriptStore>,
    samples: Vec<Duration>,
}

impl Case {
    /// A case over `provider` loading `skill`; transcripts, when written, go under
    /// `transcripts`.
    fn new(
        kind: &CaseKind,
        provider: &Arc<SkillsProvider>,
        skill: &str,
        settings: &Settings,
        transcripts: &Path,
    ) -> Case {
        let model = Arc::new(ScriptedModel {
            skill: skill.to_owned(),
            call: kind.call,
            rounds: settings.rounds,
            encode: kind.as_the_cli,
            calls: Mutex::new(Vec::new()),
        });
        let mut options = AgentOptions::new("scripted");
        options.max_rounds = u32::try_from(settings.rounds + 1).unwrap_or(u32::MAX);
        options.tools_on_load = kind.tools_on_load;
        let client: Arc<dyn ModelClient> = Arc::clone(&model) as Arc<dyn ModelClient>;
        Case {
            label: kind.label,
            agent: Agent::new(ProviderSource::Fixed(Arc::clone(provider)), client, options),
            model,
            transcripts: kind.as_the_cli.then(|| TranscriptStore::new(transcripts)),
            samples: Vec::new(),
        }
    }

    /// Run one turn, check it ended as scripted, and keep its rounds' durations if `timed`.
    async fn turn(&mut self, rounds: usize, timed: bool) {
        if let Ok(mut calls) = self.model.calls.lock() {
            calls.clear();
        }
        let transcript = self.transcripts.as_ref().map(|store| {
            store
                .create(WireFormat::Chat, "scripted", "http://127.0.0.1:1")
                .unwrap_or_else(|error| fail(&format!("transcript: {error}")))
        });
        let conversation = self.agent.conversation(transcript);
        let mut turn = self.agent.run(
            conversation,
            TurnInput::Prompt("Use the skill, then answer.".to_owned()),
        );
        let mut results = 0usize;
        let mut end = None;
        while let Some(event) = turn.next_event().await {
            match event {
                AgentEvent::ToolCallFinished {
                    is_error, result, ..
                } => {
                    results += 1;
                    if is_error != (self.model.call == Call::Unknown) {
                        fail(&format!("{}: unexpected tool result: {result}", self.label));
                    }
                }
                AgentEvent::Final { end: ended, .. } => end = Some(ended),
                _ => {}
            }
        }
        if turn.finish().await.is_err() {
            fail(&format!("{}: the turn's task failed", self.label));
        }
        if end != Some(TurnEnd::Answered) || results != rounds {
            fail(&format!(
                "{}: the turn ended {end:?} after {results} tool results, not answered after {rounds}",
                self.label
            ));
        }
        let calls = self
            .model
            .calls
            .lock()
            .map(|calls| calls.clone())
            .unwrap_or_default();
        if timed {
            self.samples
                .extend(calls.windows(2).map(|pair| pair[1] - pair[0]));
        }
    }
}

/// Median and 90th percentile (nearest rank) in microseconds.
fn summary(samples: &[Duration]) -> (f64, f64) {
    let mut micros: Vec<f64> = samples
        .iter()
        .map(|sample| sample.as_secs_f64() * 1e6)
        .collect();
    if micros.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    micros.sort_by(f64::total_cmp);
    let rank = |fraction: f64| {
        let index = (fraction * micros.len() as f64).ceil() as usize;
        micros[index.clamp(1, micros.len()) - 1]
    };
    (rank(0.5), rank(0.9))
}

fn time_calls(calls: usize, mut work: impl FnMut()) -> Vec<Duration> {
    (0..calls)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed()
        })
        .collect()
}

/// `path` relative to the repository when it lies inside it (the table stays short).
fn shown_path(path: &Path) -> String {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    match (path.canonicalize(), repository.canonicalize()) {
        (Ok(path), Ok(repository)) => path
            .strip_prefix(&repository)
            .unwrap_or(&path)
            .display()
            .to_string(),
        _ => path.display().to_string(),
    }
}

fn load_provider(root: &Path, executor: &Arc<Executor>) -> Arc<SkillsProvider> {
    let options = CatalogOptions {
        roots: vec![SkillRoot::explicit(root)],
        ..CatalogOptions::default()
    };
    let catalog = SkillCatalog::load(&options)
        .unwrap_or_else(|error| fail(&format!("loading {}: {error}", root.display())));
    Arc::new(SkillsProvider::new(
        Arc::new(catalog),
        Arc::clone(executor),
        ProviderOptions::default(),
    ))
}

/// The skill with the smallest `SKILL.md` among those a model may load inline (not a fork,
/// no model of its own).
fn small_skill(provider: &SkillsProvider) -> Arc<Skill> {
    provider
        .model_skills()
        .into_iter()
        .filter(|skill| skill.properties.context.is_none() && skill.properties.model.is_none())
        .min_by_key(|skill| {
            std::fs::metadata(&skill.skill_md_path).map_or(u64::MAX, |metadata| metadata.len())
        })
        .unwrap_or_else(|| fail("the catalog has no skill a model may load"))
}

#[derive(serde::Serialize)]
struct Row {
    catalog: String,
    skills: usize,
    tools: usize,
    case: &'static str,
    samples: usize,
    median_us: f64,
    p90_us: f64,
    overhead_us: Option<f64>,
}

fn measure_catalog(
    runtime: &tokio::runtime::Runtime,
    root: &Path,
    executor: &Arc<Executor>,
    settings: &Settings,
    scratch: &Path,
) -> Vec<Row> {
    let provider = load_provider(root, executor);
    let skills = provider.model_skills().len();
    let tools = skillbox_tools::registry::specs(
        &provider,
        skillbox_tools::Offer::Profile(ToolProfile::Skills),
    )
    .len();
    let skill = small_skill(&provider);
    let name = skill.name().to_owned();
    eprintln!(
        "loop_overhead: {}: {skills} skills a model sees, {tools} tools; loading `{name}`",
        shown_path(root)
    );
    let transcripts = scratch.join(format!(
        "transcripts-{}",
        root.file_name()
            .map_or_else(String::new, |name| name.to_string_lossy().into_owned())
    ));
    let mut cases: Vec<Case> = CASES
        .iter()
        .map(|kind| Case::new(kind, &provider, &name, settings, &transcripts))
        .collect();
    let mut alone = Vec::new();
    let rounds = settings.rounds;
    for iteration in 0..settings.warmup + settings.turns {
        let timed = iteration >= settings.warmup;
        let count = cases.len();
        for offset in 0..=count {
            let index = (iteration + offset) % (count + 1);
            if index == count {
                let provider = Arc::clone(&provider);
                let name = name.clone();
                let durations = runtime
                    .block_on(async move {
                        tokio::spawn(async move {
                            let mut durations = Vec::with_capacity(rounds);
                            for round in 0..rounds {
                                let arguments = load_arguments(&name, round);
                                let started = Instant::now();
                                let outcome =
                                    skillbox_tools::call_once(&provider, "load_skill", &arguments)
                                        .await;
                                durations.push(started.elapsed());
                                if outcome.is_error() {
                                    return Err(outcome.text());
                                }
                            }
                            Ok(durations)
                        })
                        .await
                    })
                    .unwrap_or_else(|error| fail(&format!("tool alone: {error}")))
                    .unwrap_or_else(|error| fail(&format!("tool alone: {error}")));
                if timed {
                    alone.extend(durations);
                }
            } else {
                runtime.block_on(cases[index].turn(rounds, timed));
            }
        }
    }
    let (alone_median, alone_p90) = summary(&alone);
    let catalog = shown_path(root);
    let row = |case: &'static str, samples: &[Duration], overhead: Option<f64>| {
        let (median, p90) = summary(samples);
        Row {
            catalog: catalog.clone(),
            skills,
            tools,
            case,
            samples: samples.len(),
            median_us: median,
            p90_us: p90,
            overhead_us: overhead.map(|tool| median - tool),
        }
    };
    let mut rows: Vec<Row> = cases
        .iter()
        .map(|case| {
            let tool = match case.model.call {
                Call::LoadSkill => alone_median,
                Call::Unknown => 0.0,
            };
            row(case.label, &case.samples, Some(tool))
        })
        .collect();
    rows.push(Row {
        catalog: catalog.clone(),
        skills,
        tools,
        case: "load_skill alone (door policy)",
        samples: alone.len(),
        median_us: alone_median,
        p90_us: alone_p90,
        overhead_us: None,
    });
    // Splits: what rendering the prompt and the tools, and encoding a request, cost.
    let section = time_calls(SPLIT_CALLS, || {
        std::hint::black_box(provider.system_prompt(PromptFormat::Markdown));
    });
    rows.push(row(
        "split: skills section of the system prompt",
        &section,
        None,
    ));
    let tool_list = time_calls(SPLIT_CALLS, || {
        std::hint::black_box(skillbox_tools::registry::specs(
            &provider,
            skillbox_tools::Offer::Profile(ToolProfile::Skills),
        ));
    });
    rows.push(row("split: tool list", &tool_list, None));
    let system = provider.system_prompt(PromptFormat::Markdown);
    let specs = skillbox_tools::registry::specs(
        &provider,
        skillbox_tools::Offer::Profile(ToolProfile::Skills),
    );
    let messages = vec![Message::user("Use the skill, then answer.")];
    let request = ModelRequest {
        model: "scripted",
        system: &system,
        messages: &messages,
        tools: &specs,
        max_output_tokens: 4096,
        temperature: None,
    };
    let encode = time_calls(SPLIT_CALLS, || {
        let body = WireFormat::Chat.request_body(&request);
        std::hint::black_box(serde_json::to_vec(&body).unwrap_or_default());
    });
    rows.push(row(
        "split: Chat Completions body of a first request",
        &encode,
        None,
    ));
    rows
}

fn main() {
    let settings = settings();
    let scratch = tempfile::tempdir().unwrap_or_else(|error| fail(&format!("temp dir: {error}")));
    let executor = Arc::new(
        Executor::new(ExecutorConfig {
            helper: None,
            policy: SandboxPolicy {
                mode: SandboxMode::Off,
                ..SandboxPolicy::default()
            },
            workspace_root: scratch.path().join("workspaces"),
            ..ExecutorConfig::default()
        })
        .unwrap_or_else(|error| fail(&format!("executor: {}", error.message))),
    );
    // The runtime `skillbox ask` runs on.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|error| fail(&format!("runtime: {error}")));
    let mut rows = Vec::new();
    for root in &settings.roots {
        rows.extend(measure_catalog(
            &runtime,
            root,
            &executor,
            &settings,
            scratch.path(),
        ));
    }
    println!(
        "Rounds of one tool call, {} per turn, {} turns per case after {} warm-up turns. \
         Overhead = the round's median minus the tool's median (load_skill alone; 0 for an \
         unknown tool). Target: overhead under {TARGET_MICROSECONDS:.0} µs.\n",
        settings.rounds, settings.turns, settings.warmup
    );
    println!(
        "| catalog | skills / tools | case | samples | median µs | p90 µs | overhead µs (median) |"
    );
    println!("| --- | ---: | --- | ---: | ---: | ---: | ---: |");
    for row in &rows {
        let overhead = row
            .overhead_us
            .map_or_else(|| "".to_owned(), |value| format!("{value:.1}"));
        println!(
            "| {} | {} / {} | {} | {} | {:.1} | {:.1} | {} |",
            row.catalog,
            row.skills,
            row.tools,
            row.case,
            row.samples,
            row.median_us,
            row.p90_us,
            overhead
        );
    }
    let missed = rows
        .iter()
        .filter_map(|row| row.overhead_us)
        .any(|overhead| overhead >= TARGET_MICROSECONDS);
    println!(
        "\nTarget (overhead under {TARGET_MICROSECONDS:.0} µs per round): {}",
        if missed {
            "missed in some row"
        } else {
            "met in every row"
        }
    );
    println!(
        "{}",
        json!({ "rounds_per_turn": settings.rounds, "turns": settings.turns, "rows": rows })
    );
}
