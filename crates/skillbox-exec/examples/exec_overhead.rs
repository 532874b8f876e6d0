//! Execution overhead benchmark (run through `bench/exec.sh`).
//!
//! (a) A script run through the executor against starting the same interpreter directly, for
//!     python, node and bash, with the sandbox off (helper still used), off without a helper,
//!     and at the default best-effort level. All cases are interleaved in one loop, with the
//!     order rotated every iteration, so they share the same machine noise.
//! (b) A `tools.json` handler call (JavaScript and Python) answered by a warm worker against
//!     one process spawned per call, both at the default sandbox level, interleaved.
//!
//! Prints markdown tables, then one JSON line with the raw numbers (last line of stdout).
//! Exits 1 when a run fails. Knobs: `EXEC_BENCH_ITERATIONS` (60), `EXEC_BENCH_WARMUP` (5),
//! `EXEC_BENCH_WARM_CALLS` (200), `EXEC_BENCH_SPAWN_CALLS` (40).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::ffi::OsString;
use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use skillbox_core::{CatalogOptions, Skill, SkillCatalog, SkillRoot};
use skillbox_exec::interpreter::Language;
use skillbox_exec::{
    Executor, ExecutorConfig, HelperCommand, RunOptions, SandboxMode, SandboxPolicy,
    WorkerPoolConfig,
};

const SKILL_NAME: &str = "exec-bench";

/// Files of the benchmark skill: path relative to the skill folder, contents.
const SKILL_FILES: &[(&str, &str)] = &[
    (
        "SKILL.md",
        "---\nname: exec-bench\ndescription: Trivial scripts and tool handlers used to measure the execution overhead of skillbox.\n---\n\n# exec-bench\n\nNothing to see: every script does nothing.\n",
    ),
    ("scripts/noop.py", "pass\n"),
    ("scripts/noop.mjs", "// nothing\n"),
    ("scripts/noop.sh", "true\n"),
    (
        "scripts/echo_tool.mjs",
        "export default async function handler(args) {\n  return { n: args.n ?? 0 };\n}\n",
    ),
    (
        "scripts/echo_tool.py",
        "def handler(args):\n    return {\"n\": args.get(\"n\", 0)}\n",
    ),
    (
        "tools.json",
        r#"[
  {
    "name": "echo_js",
    "description": "Return the number it is given (JavaScript).",
    "script": "scripts/echo_tool.mjs",
    "parameters": {"n": {"type": "integer", "description": "Any number.", "optional": true}}
  },
  {
    "name": "echo_py",
    "description": "Return the number it is given (Python).",
    "script": "scripts/echo_tool.py",
    "parameters": {"n": {"type": "integer", "description": "Any number.", "optional": true}}
  }
]
"#,
    ),
];

/// The environment given to directly started interpreters: the executor's base environment.
const DIRECT_ENVIRONMENT: &[(&str, &str)] = skillbox_exec::executor::BASE_ENVIRONMENT;

fn knob(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(value) => value
            .parse()
            .unwrap_or_else(|_| fail(&format!("{name} must be a whole number, got `{value}`"))),
        Err(_) => default,
    }
}

fn fail(message: &str) -> ! {
    eprintln!("exec_overhead: error: {message}");
    std::process::exit(1);
}

/// One way of running a script.
#[derive(Clone)]
enum Runner {
    /// `std::process::Command` on the interpreter, output piped and read, env cleared.
    Direct { program: PathBuf },
    /// `Executor::run_script` on the executor with this index.
    Executor { index: usize },
}

struct ScriptCase {
    language: Language,
    label: String,
    script: &'static str,
    runner: Runner,
    /// Interpreter binary this case runs.
    program: PathBuf,
    samples: Vec<Duration>,
}

struct NamedExecutor {
    label: &'static str,
    executor: Executor,
}

fn executor(
    root: &Path,
    label: &'static str,
    mode: SandboxMode,
    helper: Option<HelperCommand>,
    workers: bool,
) -> NamedExecutor {
    let config = ExecutorConfig {
        helper,
        policy: SandboxPolicy {
            mode,
            ..SandboxPolicy::default()
        },
        workspace_root: root.join(format!("workspaces-{label}")),
        workers: WorkerPoolConfig {
            enabled: workers,
            ..WorkerPoolConfig::default()
        },
        ..ExecutorConfig::default()
    };
    let executor = Executor::new(config)
        .unwrap_or_else(|error| fail(&format!("executor `{label}`: {}", error.message)));
    NamedExecutor { label, executor }
}

fn write_skill(directory: &Path) {
    for (relative, text) in SKILL_FILES {
        let path = directory.join(relative);
        let parent = path.parent().unwrap();
        std::fs::create_dir_all(parent).unwrap();
        std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::set_permissions(directory, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn script_for(language: Language) -> &'static str {
    match language {
        Language::Python => "scripts/noop.py",
        Language::Node => "scripts/noop.mjs",
        _ => "scripts/noop.sh",
    }
}

fn language_name(language: Language) -> &'static str {
    match language {
        Language::Python => "python",
        Language::Node => "node",
        Language::Bash => "bash",
        _ => "other",
    }
}

/// Start an interpreter directly and wait for it; the elapsed time of spawn, output, wait.
async fn run_direct(
    program: PathBuf,
    args: Vec<OsString>,
    cwd: PathBuf,
    home: String,
) -> Result<Duration, String> {
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let output = std::process::Command::new(&program)
            .args(&args)
            .current_dir(&cwd)
            .env_clear()
            .envs(DIRECT_ENVIRONMENT.iter().copied())
            .env("HOME", &home)
            .env("TMPDIR", &home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|error| format!("cannot start `{}`: {error}", program.display()))?;
        let elapsed = started.elapsed();
        if output.status.success() {
            Ok(elapsed)
        } else {
            Err(format!(
                "`{}` failed ({}): {}",
                program.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    })
    .await
    .map_err(|error| error.to_string())?
}

async fn run_case(
    case: &ScriptCase,
    executors: &[NamedExecutor],
    skill: &Skill,
    skill_directory: &Path,
    direct_cwd: &Path,
) -> Result<Duration, String> {
    match &case.runner {
        Runner::Direct { program } => {
            let mut args: Vec<OsString> = case
                .language
                .leading_args()
                .iter()
                .map(OsString::from)
                .collect();
            args.push(skill_directory.join(case.script).into_os_string());
            run_direct(
                program.clone(),
                args,
                direct_cwd.to_path_buf(),
                direct_cwd.display().to_string(),
            )
            .await
        }
        Runner::Executor { index } => {
            let started = Instant::now();
            let result = executors[*index]
                .executor
                .run_script(skill, case.script, &[], RunOptions::default())
                .await;
            let elapsed = started.elapsed();
            if result.success {
                Ok(elapsed)
            } else {
                Err(format!(
                    "{}: {:?} {:?} stderr: {}",
                    case.label, result.error_type, result.error, result.stderr
                ))
            }
        }
    }
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

/// Median (mean of the middle two for an even count).
fn median(samples: &[Duration]) -> f64 {
    let mut sorted: Vec<f64> = samples.iter().copied().map(milliseconds).collect();
    sorted.sort_by(f64::total_cmp);
    let count = sorted.len();
    if count == 0 {
        return f64::NAN;
    }
    if count % 2 == 1 {
        sorted[count / 2]
    } else {
        f64::midpoint(sorted[count / 2 - 1], sorted[count / 2])
    }
}

/// Nearest-rank percentile.
fn percentile(samples: &[Duration], fraction: f64) -> f64 {
    let mut sorted: Vec<f64> = samples.iter().copied().map(milliseconds).collect();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (fraction * sorted.len() as f64).ceil().max(1.0);
    // The rank is between 1 and the sample count, so the index is in range.
    let index = (rank as usize).min(sorted.len()) - 1;
    sorted[index]
}

fn minimum(samples: &[Duration]) -> f64 {
    samples
        .iter()
        .copied()
        .map(milliseconds)
        .fold(f64::INFINITY, f64::min)
}

/// A number rounded to microseconds, for the JSON line.
fn round3(value: f64) -> Value {
    json!((value * 1_000.0).round() / 1_000.0)
}

fn stats_json(samples: &[Duration]) -> Value {
    json!({
        "n": samples.len(),
        "median_ms": round3(median(samples)),
        "p90_ms": round3(percentile(samples, 0.9)),
        "min_ms": round3(minimum(samples)),
    })
}

struct ToolCase {
    tool: &'static str,
    label: &'static str,
    executor: usize,
    warm: bool,
    samples: Vec<Duration>,
}

async fn call_tool_once(
    executors: &[NamedExecutor],
    skill: &Skill,
    case: &ToolCase,
    n: i64,
) -> Result<Duration, String> {
    let tool = skill
        .tools
        .iter()
        .find(|tool| tool.name == case.tool)
        .ok_or_else(|| format!("tool `{}` did not load", case.tool))?;
    let started = Instant::now();
    let result = executors[case.executor]
        .executor
        .call_tool(skill, tool, json!({ "n": n }), RunOptions::default())
        .await;
    let elapsed = started.elapsed();
    if result.error_type.is_some() || result.value.get("n").and_then(Value::as_i64) != Some(n) {
        return Err(format!(
            "{} {}: {:?} {}",
            case.tool, case.label, result.error_type, result.value
        ));
    }
    if result.warm != case.warm {
        return Err(format!(
            "{} {}: expected warm={}, got warm={}",
            case.tool, case.label, case.warm, result.warm
        ));
    }
    Ok(elapsed)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let code = runtime.block_on(benchmark());
    // Warm workers are killed when their executor drops inside `benchmark`; stop the runtime
    // without waiting for stray blocking tasks.
    runtime.shutdown_timeout(Duration::from_secs(2));
    std::process::exit(code);
}

#[allow(clippy::too_many_lines)]
async fn benchmark() -> i32 {
    let iterations = knob("EXEC_BENCH_ITERATIONS", 60).max(1);
    let warmup = knob("EXEC_BENCH_WARMUP", 5);
    let warm_calls = knob("EXEC_BENCH_WARM_CALLS", 200).max(1);
    let spawn_calls = knob("EXEC_BENCH_SPAWN_CALLS", 40).max(1);
    let warm_per_spawn = warm_calls.div_ceil(spawn_calls);

    let Some(helper) = HelperCommand::beside_current_executable() else {
        fail(
            "no skillbox-sandbox next to this executable; build with `cargo build --release -p skillbox-exec --bins --examples`",
        );
    };
    // Everything the sandbox uid reads lives under a world-readable temporary folder.
    let base = tempfile::Builder::new()
        .prefix("skillbox-exec-bench-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let skill_directory = base.path().join("skills").join(SKILL_NAME);
    write_skill(&skill_directory);
    std::fs::set_permissions(
        base.path().join("skills"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let skill_directory = std::fs::canonicalize(&skill_directory).unwrap();
    let direct_cwd = base.path().join("direct");
    std::fs::create_dir_all(&direct_cwd).unwrap();

    let catalog = SkillCatalog::load(&CatalogOptions {
        roots: vec![SkillRoot::explicit(&skill_directory)],
        ..CatalogOptions::default()
    })
    .unwrap_or_else(|error| fail(&format!("cannot load the benchmark skill: {error}")));
    let skill: Arc<Skill> = Arc::clone(
        catalog
            .get(SKILL_NAME)
            .unwrap_or_else(|| fail("the benchmark skill did not load")),
    );
    if skill.tools.len() != 2 {
        fail(&format!(
            "expected 2 tools, got {} ({:?})",
            skill.tools.len(),
            skill.diagnostics
        ));
    }

    let executors = vec![
        executor(base.path(), "off-no-helper", SandboxMode::Off, None, false),
        executor(
            base.path(),
            "off",
            SandboxMode::Off,
            Some(helper.clone()),
            false,
        ),
        executor(
            base.path(),
            "sandbox",
            SandboxMode::BestEffort,
            Some(helper.clone()),
            false,
        ),
        executor(
            base.path(),
            "sandbox-warm",
            SandboxMode::BestEffort,
            Some(helper.clone()),
            true,
        ),
    ];
    let sandbox_index = 2;
    let warm_index = 3;

    // (a) scripts: per language, a direct case per distinct interpreter the executors use,
    // then one case per executor (the warm-worker executor runs scripts like `sandbox`).
    let mut cases: Vec<ScriptCase> = Vec::new();
    for language in [Language::Python, Language::Node, Language::Bash] {
        let mut programs: Vec<PathBuf> = Vec::new();
        for named in &executors[..=sandbox_index] {
            let program = named
                .executor
                .interpreter_path(language)
                .unwrap_or_else(|| {
                    fail(&format!(
                        "no {} interpreter for `{}`",
                        language.command_name(),
                        named.label
                    ))
                });
            if !programs.contains(&program) {
                programs.push(program.clone());
                cases.push(ScriptCase {
                    language,
                    label: "direct".to_owned(),
                    script: script_for(language),
                    runner: Runner::Direct {
                        program: program.clone(),
                    },
                    program: program.clone(),
                    samples: Vec::new(),
                });
            }
        }
        for (index, named) in executors[..=sandbox_index].iter().enumerate() {
            let program = named.executor.interpreter_path(language).unwrap();
            cases.push(ScriptCase {
                language,
                label: named.label.to_owned(),
                script: script_for(language),
                runner: Runner::Executor { index },
                program,
                samples: Vec::new(),
            });
        }
    }

    let started = Instant::now();
    eprintln!(
        "exec_overhead: (a) {} script cases x ({warmup} warm-up + {iterations}) iterations",
        cases.len()
    );
    for iteration in 0..warmup + iterations {
        for offset in 0..cases.len() {
            let index = (offset + iteration) % cases.len();
            let elapsed = run_case(
                &cases[index],
                &executors,
                &skill,
                &skill_directory,
                &direct_cwd,
            )
            .await
            .unwrap_or_else(|message| fail(&message));
            if iteration >= warmup {
                cases[index].samples.push(elapsed);
            }
        }
    }
    let scripts_seconds = started.elapsed().as_secs_f64();

    // (b) tool calls: spawn per call against warm workers, both at the default sandbox level.
    let mut tool_cases: Vec<ToolCase> = Vec::new();
    for tool in ["echo_js", "echo_py"] {
        tool_cases.push(ToolCase {
            tool,
            label: "warm worker",
            executor: warm_index,
            warm: true,
            samples: Vec::new(),
        });
        tool_cases.push(ToolCase {
            tool,
            label: "spawn per call",
            executor: sandbox_index,
            warm: false,
            samples: Vec::new(),
        });
    }
    let started = Instant::now();
    eprintln!(
        "exec_overhead: (b) tool calls: {spawn_calls} rounds of 1 spawned + {warm_per_spawn} warm calls per handler"
    );
    let mut counter: i64 = 0;
    // Warm-up: starts the workers, loads the handlers, fills the validator cache.
    for case in &tool_cases {
        for _ in 0..2 {
            counter += 1;
            call_tool_once(&executors, &skill, case, counter)
                .await
                .unwrap_or_else(|message| fail(&message));
        }
    }
    for round in 0..spawn_calls {
        for offset in 0..tool_cases.len() {
            let index = (offset + round) % tool_cases.len();
            let repeats = if tool_cases[index].warm {
                warm_per_spawn
            } else {
                1
            };
            for _ in 0..repeats {
                counter += 1;
                let elapsed = call_tool_once(&executors, &skill, &tool_cases[index], counter)
                    .await
                    .unwrap_or_else(|message| fail(&message));
                tool_cases[index].samples.push(elapsed);
            }
        }
    }
    let tools_seconds = started.elapsed().as_secs_f64();

    // Report.
    let mut out = String::new();
    let kernel = fs_err::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_owned();
    let sandbox = &executors[sandbox_index].executor;
    let layers = sandbox.layers();
    writeln!(out, "## Execution overhead").unwrap();
    writeln!(out).unwrap();
    writeln!(
        out,
        "Kernel {kernel}; {} cores; runtime uid {}; sandbox level at best-effort: {:?} (namespaces {}, uid drop {}, landlock {}, seccomp {}); helper `{}`; interpreters resolved from PATH `{}`.",
        std::thread::available_parallelism().map_or(0, usize::from),
        nix::unistd::geteuid(),
        sandbox.sandbox_level(),
        layers.namespaces,
        layers.uid_drop,
        layers.landlock,
        layers.seccomp,
        helper.program.display(),
        std::env::var("PATH").unwrap_or_default()
    )
    .unwrap();
    writeln!(out).unwrap();
    writeln!(
        out,
        "### (a) Script runs: {iterations} interleaved iterations per case after {warmup} warm-up ({scripts_seconds:.1} s)"
    )
    .unwrap();
    writeln!(out).unwrap();
    writeln!(
        out,
        "`direct` = `std::process::Command` spawn + piped output + wait of the same interpreter with the same arguments and a cleared, equivalent environment. `off-no-helper` = mode off with no helper (interpreter spawned by the runtime itself); `off` = mode off through the helper; `sandbox` = default best-effort. Overhead = case median - median of `direct` on the same interpreter binary."
    )
    .unwrap();
    writeln!(out).unwrap();
    writeln!(
        out,
        "| language | case | interpreter | median ms | p90 ms | min ms | overhead ms (median) | target |"
    )
    .unwrap();
    writeln!(out, "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |").unwrap();
    let mut scripts_json = Map::new();
    let mut targets = Map::new();
    for case in &cases {
        let direct = cases
            .iter()
            .find(|other| {
                other.language == case.language
                    && matches!(other.runner, Runner::Direct { .. })
                    && other.program == case.program
            })
            .map(|direct| median(&direct.samples))
            .unwrap_or(f64::NAN);
        let case_median = median(&case.samples);
        let is_direct = matches!(case.runner, Runner::Direct { .. });
        let overhead = case_median - direct;
        let (target_text, limit) = match case.label.as_str() {
            "off" => ("<= 2 ms", Some(2.0)),
            "sandbox" => ("<= 10 ms", Some(10.0)),
            _ => ("", None),
        };
        let verdict = match limit {
            Some(limit) => {
                let met = overhead <= limit;
                targets.insert(
                    format!(
                        "{}_{}_overhead_le_{limit}ms",
                        language_name(case.language),
                        case.label
                    ),
                    json!(met),
                );
                format!("{target_text} {}", if met { "met" } else { "MISSED" })
            }
            None => String::new(),
        };
        writeln!(
            out,
            "| {} | {} | `{}` | {:.2} | {:.2} | {:.2} | {} | {} |",
            language_name(case.language),
            case.label,
            case.program.display(),
            case_median,
            percentile(&case.samples, 0.9),
            minimum(&case.samples),
            if is_direct {
                "-".to_owned()
            } else {
                format!("{overhead:+.2}")
            },
            verdict
        )
        .unwrap();
        let mut stats = stats_json(&case.samples);
        stats["interpreter"] = json!(case.program.display().to_string());
        if !is_direct {
            stats["overhead_ms"] = round3(overhead);
        }
        scripts_json.insert(
            format!("{}/{}", language_name(case.language), case.label),
            stats,
        );
    }
    writeln!(out).unwrap();
    writeln!(
        out,
        "### (b) Tool handler calls, default sandbox ({tools_seconds:.1} s, interleaved)"
    )
    .unwrap();
    writeln!(out).unwrap();
    writeln!(
        out,
        "| handler | mode | calls | median ms | p90 ms | min ms | spawn / warm (medians) | target |"
    )
    .unwrap();
    writeln!(
        out,
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"
    )
    .unwrap();
    let mut tools_json = Map::new();
    for tool in ["echo_js", "echo_py"] {
        let warm = tool_cases
            .iter()
            .find(|case| case.tool == tool && case.warm)
            .unwrap();
        let spawn = tool_cases
            .iter()
            .find(|case| case.tool == tool && !case.warm)
            .unwrap();
        let warm_median = median(&warm.samples);
        let spawn_median = median(&spawn.samples);
        let ratio = spawn_median / warm_median;
        let warm_met = warm_median <= 1.0;
        let ratio_met = ratio >= 20.0;
        targets.insert(format!("{tool}_warm_median_le_1ms"), json!(warm_met));
        targets.insert(format!("{tool}_ratio_ge_20x"), json!(ratio_met));
        for (case, ratio_text, target) in [
            (
                warm,
                format!("{ratio:.1}x"),
                format!(
                    "<= 1 ms {}; >= 20x {}",
                    if warm_met { "met" } else { "MISSED" },
                    if ratio_met { "met" } else { "MISSED" }
                ),
            ),
            (spawn, String::new(), String::new()),
        ] {
            writeln!(
                out,
                "| {tool} | {} | {} | {:.3} | {:.3} | {:.3} | {ratio_text} | {target} |",
                case.label,
                case.samples.len(),
                median(&case.samples),
                percentile(&case.samples, 0.9),
                minimum(&case.samples),
            )
            .unwrap();
        }
        tools_json.insert(
            tool.to_owned(),
            json!({
                "warm": stats_json(&warm.samples),
                "spawn": stats_json(&spawn.samples),
                "ratio_spawn_over_warm": (ratio * 10.0).round() / 10.0,
            }),
        );
    }
    print!("{out}");
    let line = json!({
        "benchmark": "exec_overhead",
        "kernel": kernel,
        "sandbox_level": sandbox.sandbox_level(),
        "iterations": iterations,
        "warmup": warmup,
        "scripts": scripts_json,
        "tools": tools_json,
        "targets": targets,
    });
    println!("{line}");
    drop(executors);
    0
}
