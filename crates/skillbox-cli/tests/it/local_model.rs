//! `skillbox ask` against a real model: llama-server with Qwen2.5-Coder-1.5B-Instruct, as
//! `scripts/setup-local-llm.sh` provisions it. The model's wording is not checked, only the
//! structure: which tools it called, what ran, and that the loop ended within its rounds.
//! Skipped with a note when the model is not provisioned (`.ci/run` provisions it and sets
//! `SKILLBOX_REQUIRE_LOCAL_MODEL`, so CI never skips).

use serde_json::Value;
use skillbox_testkit::local_model::LocalModel;

use super::support::{AgentEvents, agent_command, make_world_readable, write_tree};

/// A small catalog (a short prompt keeps a two-core machine quick): a tools.json tool, a
/// script skill and a fork skill.
fn small_tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[
            (
                "word-count/SKILL.md",
                "---\nname: word-count\ndescription: Counts the words of a text. Use when asked how many words a text has.\n---\nCall the count_words tool with the text.\n",
            ),
            (
                "word-count/tools.json",
                r#"[{"name":"count_words","description":"Count the words in a text.","script":"scripts/count.py","parameters":{"text":{"type":"string","description":"The text"}}}]"#,
            ),
            (
                "word-count/scripts/count.py",
                "import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({'words': len(str(args.get('text', '')).split())}))\n",
            ),
            (
                "greeting/SKILL.md",
                "---\nname: greeting\ndescription: Writes a personal greeting for someone. Use when asked to greet a person.\n---\nRun the script greet.py with use_skill, passing the person's name as the only argument: {\"skill\": \"greeting\", \"script\": \"greet.py\", \"args\": [\"NAME\"]}. Then answer with the greeting it printed.\n",
            ),
            (
                "greeting/scripts/greet.py",
                "import sys\nprint('Greetings, ' + ' '.join(sys.argv[1:]) + '!')\n",
            ),
            (
                "haiku/SKILL.md",
                "---\nname: haiku\ndescription: Writes a haiku about a topic. Use when asked for a haiku.\ncontext: fork\n---\nWrite one haiku (three short lines) about: $ARGUMENTS\nAnswer with the haiku only.\n",
            ),
        ],
    );
    make_world_readable(root.path());
    root
}

const COUNT_PROMPT: &str =
    "How many words are in this text: the quick brown fox jumps over the lazy dog";

/// `ask --json` at `base_url` (with `key` as `SKILLBOX_API_KEY`), deterministic and bounded:
/// temperature 0, 256 tokens per call, 6 rounds, no transcript.
fn ask(
    root: &std::path::Path,
    base_url: &str,
    key: Option<&str>,
    extra: &[&str],
    prompt: &str,
) -> AgentEvents {
    let mut command = agent_command(root);
    if let Some(key) = key {
        command.env("SKILLBOX_API_KEY", key);
    }
    let output = command
        .args(["ask", "--json", "--no-transcript", "--temperature", "0"])
        .args(["--max-output-tokens", "256", "--max-rounds", "6"])
        .args(["--base-url", base_url])
        .args(extra)
        .arg(prompt)
        .output()
        .unwrap();
    AgentEvents::of(output)
}

#[test]
fn a_local_model_calls_a_tools_json_tool_and_answers() {
    let Some(model) = LocalModel::shared() else {
        return;
    };
    let _turn = model.lock();
    let tree = small_tree();
    let run = ask(tree.path(), &model.base_url, None, &[], COUNT_PROMPT);
    let counted = run.finished("count_words");
    assert!(
        !counted.is_empty(),
        "count_words was not called: {:?}",
        run.events
    );
    assert!(
        counted.iter().any(|event| event["is_error"] == false
            && event["result"].as_str().unwrap().contains("\"words\"")),
        "{counted:?}"
    );
    assert_eq!(run.end(), "answered", "{:?}", run.events);
}

/// Results of calls that returned the skill's instructions, whichever way the model asked for
/// them (`load_skill`, or the skill's name as a tool, which small models do).
fn loaded_instructions<'a>(run: &'a AgentEvents, marker: &str) -> Vec<&'a Value> {
    run.of_type("tool_call_finished")
        .into_iter()
        .filter(|event| {
            event["is_error"] == false && event["result"].as_str().unwrap().contains(marker)
        })
        .collect()
}

#[test]
fn a_local_model_loads_a_skill_and_answers() {
    let Some(model) = LocalModel::shared() else {
        return;
    };
    let _turn = model.lock();
    let tree = small_tree();
    let run = ask(
        tree.path(),
        &model.base_url,
        None,
        &[],
        "Use the greeting skill to greet Ada Lovelace.",
    );
    assert!(
        !loaded_instructions(&run, "Run the script greet.py").is_empty(),
        "the skill was not loaded: {:?}",
        run.events
    );
    // Whether the 1.5B model then runs the script or writes the greeting itself varies (it
    // wrote it itself in every run seen); the loop must end with an answer either way.
    assert_eq!(run.end(), "answered", "{:?}", run.events);
}

#[test]
fn a_local_model_runs_a_fork_skill_as_a_sub_agent() {
    let Some(model) = LocalModel::shared() else {
        return;
    };
    let _turn = model.lock();
    let tree = small_tree();
    let run = ask(
        tree.path(),
        &model.base_url,
        None,
        &[],
        "Use the haiku skill to write a haiku about the sea.",
    );
    let forks = run.of_type("fork");
    assert!(!forks.is_empty(), "no sub-agent ran: {:?}", run.events);
    assert!(
        forks
            .iter()
            .any(|event| event["skill"] == "haiku" && event["event"]["type"] == "final"),
        "{forks:?}"
    );
    assert_ne!(run.end(), "failed", "{:?}", run.events);
}

#[test]
fn a_local_model_is_denied_running_code_by_the_approval_policy() {
    let Some(model) = LocalModel::shared() else {
        return;
    };
    let _turn = model.lock();
    let tree = small_tree();
    let run = ask(
        tree.path(),
        &model.base_url,
        None,
        &["--approve", "deny"],
        COUNT_PROMPT,
    );
    let denied = run.of_type("approval_denied");
    assert!(!denied.is_empty(), "{:?}", run.events);
    for finished in run.of_type("tool_call_finished") {
        assert!(
            !finished["result"].as_str().unwrap().contains("\"words\""),
            "code ran despite the denial: {finished}"
        );
    }
    assert_ne!(run.end(), "failed", "{:?}", run.events);
}

/// `ask` in another wire format, through the LiteLLM proxy in front of the same model.
fn ask_through_proxy(
    model: &LocalModel,
    root: &std::path::Path,
    provider: &str,
    prompt: &str,
) -> Option<AgentEvents> {
    let proxy = model.proxy()?;
    Some(ask(
        root,
        &proxy.base_url,
        Some(&proxy.key),
        &["--model", "local", "--provider", provider],
        prompt,
    ))
}

fn assert_counted_and_answered(run: &AgentEvents) {
    let counted = run.finished("count_words");
    assert!(
        counted.iter().any(|event| event["is_error"] == false
            && event["result"].as_str().unwrap().contains("\"words\"")),
        "count_words did not run: {:?}; stderr: {}",
        run.events,
        run.stderr()
    );
    assert_eq!(run.end(), "answered", "{:?}", run.events);
}

#[test]
fn a_local_model_works_over_the_responses_api() {
    let Some(model) = LocalModel::shared() else {
        return;
    };
    let _turn = model.lock();
    let tree = small_tree();
    let Some(run) = ask_through_proxy(model, tree.path(), "responses", COUNT_PROMPT) else {
        return;
    };
    assert_counted_and_answered(&run);
}

#[test]
fn a_local_model_works_over_anthropic_messages() {
    let Some(model) = LocalModel::shared() else {
        return;
    };
    let _turn = model.lock();
    let tree = small_tree();
    let Some(run) = ask_through_proxy(model, tree.path(), "anthropic", COUNT_PROMPT) else {
        return;
    };
    assert_counted_and_answered(&run);
}

/// A skill whose MCP server (plain Python, JSON lines on stdio, declared in `.mcp.json`)
/// answers `stock__price`; its server's command line carries `marker`.
fn server_tree(marker: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[
            (
                "stock-prices/SKILL.md",
                "---\nname: stock-prices\ndescription: Looks up the current price of a stock. Use when asked for a stock price.\n---\nCall the tool stock__price with the ticker symbol, then answer with the price it returns.\n",
            ),
            (
                "stock-prices/.mcp.json",
                &format!(
                    r#"{{"mcpServers": {{"stock": {{"command": "python3", "args": ["server.py", "{marker}"]}}}}}}"#
                ),
            ),
            (
                "stock-prices/server.py",
                r#"import json, sys
for line in sys.stdin:
    request = json.loads(line)
    method, request_id = request.get("method"), request.get("id")
    if request_id is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "stock", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "price", "description": "The current price of a stock, by ticker symbol.", "inputSchema": {"type": "object", "properties": {"ticker": {"type": "string", "description": "The ticker symbol, such as ACME"}}, "required": ["ticker"]}}]}
    elif method == "tools/call":
        ticker = str(request["params"].get("arguments", {}).get("ticker", "?")).upper()
        result = {"content": [{"type": "text", "text": f"{ticker} trades at 123.45 USD"}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()
"#,
            ),
        ],
    );
    make_world_readable(root.path());
    root
}

#[test]
fn a_local_model_loads_a_skill_and_calls_a_tool_of_its_mcp_server() {
    let Some(model) = LocalModel::shared() else {
        return;
    };
    let _turn = model.lock();
    let marker = format!("marker-{}", uuid::Uuid::new_v4().simple());
    let tree = server_tree(&marker);
    let run = ask(
        tree.path(),
        &model.base_url,
        None,
        &[],
        // A 1.5B model guesses a script name when told only to use the skill; told to load it,
        // it does, and then calls the tool the load offered.
        "Load the stock-prices skill with load_skill, then use the tool it gives you to look up the current price of the ACME stock.",
    );
    assert!(
        !loaded_instructions(&run, "`stock__price`").is_empty(),
        "the skill was not loaded, or its server did not start: {:?}",
        run.events
    );
    let priced = run.finished("stock__price");
    assert!(
        priced.iter().any(|event| event["is_error"] == false
            && event["result"]
                .as_str()
                .unwrap()
                .contains("trades at 123.45 USD")),
        "the server's tool was not called: {:?}",
        run.events
    );
    assert_eq!(run.end(), "answered", "{:?}", run.events);
    // The server went with the conversation.
    let gone = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while fs_err::read_dir("/proc").unwrap().flatten().any(|entry| {
        fs_err::read(entry.path().join("cmdline"))
            .is_ok_and(|line| String::from_utf8_lossy(&line).contains(&marker))
    }) {
        assert!(
            std::time::Instant::now() < gone,
            "the server outlived `ask`"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
