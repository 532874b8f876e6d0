//! `skillbox ask` and `skillbox chat` against a scripted model server speaking Chat
//! Completions (the replies the providers document), through the real binary: the loop, the
//! skills semantics, approval, transcripts, and every kind of bad reply.

use serde_json::{Value, json};
use skillbox_testkit::model_server::{Reply, ScriptedModelServer};
use skillbox_testkit::wait_until;

use super::support::{
    AgentEvents, agent_command, assert_exit, make_world_readable, write_reports, write_tree,
};

/// Skills for the loop: a script skill, a fork skill, a skill only people invoke, a
/// tools.json skill.
fn agent_tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[
            (
                "greet/SKILL.md",
                "---\nname: greet\ndescription: Greets people by name.\n---\nRun `greet.py NAME` with use_skill.\n",
            ),
            (
                "greet/scripts/greet.py",
                "import sys\nprint('Hello, ' + sys.argv[1] + '!')\n",
            ),
            (
                "summarize/SKILL.md",
                "---\nname: summarize\ndescription: Summarizes a text in a sub-agent.\ncontext: fork\n---\nSummarize this in one line: $ARGUMENTS\n",
            ),
            (
                "deploy/SKILL.md",
                "---\nname: deploy\ndescription: Deploys a service.\ndisable-model-invocation: true\nargument-hint: \"[service]\"\n---\nDeploy the service $0 to staging now.\n",
            ),
            (
                "weather/SKILL.md",
                "---\nname: weather\ndescription: Weather lookups.\nmodel: weather-model\n---\nCall get_weather.\n",
            ),
            (
                "weather/tools.json",
                r#"[{"name":"get_weather","description":"Current weather of a city.","script":"scripts/weather.py","parameters":{"city":{"type":"string","description":"The city"}}}]"#,
            ),
            (
                "weather/scripts/weather.py",
                "import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({'city': args.get('city'), 'sky': 'sunny'}))\n",
            ),
        ],
    );
    make_world_readable(root.path());
    root
}

pub(super) fn tool_call(id: &str, name: &str, arguments: &str) -> String {
    json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":id,"type":"function","function":{"name":name,"arguments":arguments}}]}}]}).to_string()
}

pub(super) fn finish(reason: &str) -> String {
    json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}],"usage":{"prompt_tokens":10,"completion_tokens":5}}).to_string()
}

/// A streamed tool call.
pub(super) fn calls(name: &str, arguments: &str) -> Reply {
    Reply::data_events(&[&tool_call("call_1", name, arguments), &finish("tool_calls")])
}

/// A streamed text answer.
pub(super) fn says(text: &str) -> Reply {
    let chunk = json!({"choices":[{"index":0,"delta":{"content":text}}]}).to_string();
    Reply::data_events(&[&chunk, &finish("stop")])
}

/// `ask --json` against `server`, transcripts in a folder of its own.
fn ask_json(server: &ScriptedModelServer, root: &std::path::Path, extra: &[&str]) -> AgentEvents {
    let data = tempfile::tempdir().unwrap();
    let output = agent_command(root)
        .args([
            "ask",
            "--json",
            "--base-url",
            &server.base_url,
            "--data-dir",
        ])
        .arg(data.path())
        .args(extra)
        .output()
        .unwrap();
    AgentEvents::of(output)
}

/// The names of the tools a Chat Completions request offered.
fn offered_tools(request: &Value) -> Vec<&str> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect()
}

fn request_body(server: &ScriptedModelServer, index: usize) -> Value {
    serde_json::from_str(&server.requests()[index].body).unwrap()
}

#[test]
fn the_model_loads_a_skill_runs_its_script_and_answers() {
    let tree = agent_tree();
    let server = ScriptedModelServer::start(vec![
        calls("load_skill", r#"{"skill":"greet"}"#),
        calls(
            "use_skill",
            r#"{"skill":"greet","script":"greet.py","args":["Ada"]}"#,
        ),
        says("I greeted Ada."),
    ]);
    let asked = ask_json(&server, tree.path(), &["Greet Ada"]);
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    assert_eq!(asked.tools_called(), vec!["load_skill", "use_skill"]);
    let results = asked.results();
    assert!(results[0].0.contains("Run `greet.py NAME`"), "{results:?}");
    assert!(results[1].0.contains("Hello, Ada!"), "{results:?}");
    let last = asked.events.last().unwrap();
    assert_eq!(last["type"], "final");
    assert_eq!(last["end"], "answered");
    assert_eq!(last["text"], "I greeted Ada.");
    assert_eq!(last["usage"]["input_tokens"], 30);
    // The model saw the skills section, the tools, and each result under its call's id.
    let first = request_body(&server, 0);
    assert!(first["stream"].as_bool().unwrap());
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("greet"), "{system}");
    assert!(
        !system.contains("deploy"),
        "hidden skills stay hidden: {system}"
    );
    let tools = offered_tools(&first);
    assert!(
        tools.contains(&"load_skill") && tools.contains(&"get_weather"),
        "{tools:?}"
    );
    let third = request_body(&server, 2);
    let messages = third["messages"].as_array().unwrap();
    let tool_message = messages.last().unwrap();
    assert_eq!(tool_message["role"], "tool");
    assert_eq!(tool_message["tool_call_id"], "call_1");
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap()
            .contains("Hello, Ada!")
    );
}

#[test]
fn unknown_tools_bad_arguments_and_repeats_get_errors_the_model_can_act_on() {
    let tree = agent_tree();
    let server = ScriptedModelServer::start(vec![
        calls("add", r#"{"a":2,"b":2}"#),
        calls("load_skill", r#"{"skill": "greet""#),
        calls("load_skill", r#"{"skill":"greet"}"#),
        calls("load_skill", r#"{ "skill" : "greet" }"#),
        calls("load_skill", r#"{"skill":"greet"}"#),
        says("4"),
    ]);
    let asked = ask_json(&server, tree.path(), &["What is 2+2?"]);
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    let results = asked.results();
    assert!(
        results[0].1 && results[0].0.contains("unknown tool `add`"),
        "{results:?}"
    );
    assert!(results[0].0.contains("load_skill"), "{results:?}");
    assert!(
        results[1].1 && results[1].0.contains("not valid JSON"),
        "{results:?}"
    );
    assert!(!results[2].1 && !results[3].1, "{results:?}");
    assert!(
        results[4].1 && results[4].0.contains("with these same arguments 2 times"),
        "the third identical call is not run: {results:?}"
    );
    // History sent back stays valid: the bad arguments go back as `{}`.
    let third = request_body(&server, 2);
    let assistant = &third["messages"].as_array().unwrap()[4];
    assert_eq!(assistant["tool_calls"][0]["function"]["arguments"], "{}");
}

#[test]
fn max_rounds_ends_a_runaway_loop_with_a_clear_final_message() {
    let tree = agent_tree();
    let server = ScriptedModelServer::start(vec![
        calls("load_skill", r#"{"skill":"greet"}"#),
        calls("read_skill_file", r#"{"skill":"greet","path":"SKILL.md"}"#),
    ]);
    let asked = ask_json(&server, tree.path(), &["--max-rounds", "2", "loop"]);
    assert_eq!(asked.output.status.code(), Some(3), "{}", asked.stderr());
    let last = asked.events.last().unwrap();
    assert_eq!(last["end"], "max_rounds");
    assert!(
        last["text"]
            .as_str()
            .unwrap()
            .contains("Stopped after 2 rounds")
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn the_approval_policy_can_deny_running_code() {
    let tree = agent_tree();
    let marker = tree.path().join("greet/scripts/greet.py");
    let server = ScriptedModelServer::start(vec![
        calls(
            "use_skill",
            r#"{"skill":"greet","script":"greet.py","args":["Ada"]}"#,
        ),
        says("I could not run it."),
    ]);
    let asked = ask_json(&server, tree.path(), &["--approve", "deny", "Greet Ada"]);
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    assert_eq!(asked.of_type("approval_denied").len(), 1);
    let results = asked.results();
    assert!(
        results[0].1 && results[0].0.contains("did not allow"),
        "{results:?}"
    );
    assert!(!results[0].0.contains("Hello"), "{results:?}");
    assert!(marker.exists());
}

#[test]
fn a_loaded_skill_overrides_the_model_and_offers_its_tools_on_load() {
    let tree = agent_tree();
    let server = ScriptedModelServer::start(vec![
        calls("get_weather", r#"{"city":"Paris"}"#),
        calls("load_skill", r#"{"skill":"weather"}"#),
        calls("get_weather", r#"{"city":"Paris"}"#),
        says("Sunny in Paris."),
    ]);
    let asked = ask_json(
        &server,
        tree.path(),
        &[
            "--tools-on-load",
            "--model",
            "base-model",
            "Weather in Paris?",
        ],
    );
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    let results = asked.results();
    assert!(
        results[0].1
            && results[0]
                .0
                .contains("comes with the skill `weather`: call load_skill"),
        "{results:?}"
    );
    assert!(results[2].0.contains("sunny"), "{results:?}");
    let names = |index: usize| -> Vec<String> {
        request_body(&server, index)["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(!names(0).contains(&"get_weather".to_owned()));
    assert!(names(2).contains(&"get_weather".to_owned()));
    assert_eq!(request_body(&server, 1)["model"], "base-model");
    assert_eq!(request_body(&server, 2)["model"], "weather-model");
    assert_eq!(asked.of_type("model_changed").len(), 1);
}

#[test]
fn a_fork_skill_runs_as_a_sub_agent_whose_answer_is_the_result() {
    let tree = agent_tree();
    let server = ScriptedModelServer::start(vec![
        calls(
            "load_skill",
            r#"{"skill":"summarize","arguments":"a long story"}"#,
        ),
        says("A story, shortened."),
        says("Here is the summary: A story, shortened."),
    ]);
    let asked = ask_json(&server, tree.path(), &["Summarize a long story"]);
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    let results = asked.results();
    assert_eq!(results[0], ("A story, shortened.".to_owned(), false));
    assert!(!asked.of_type("fork").is_empty());
    // The sub-agent had a fresh history: the skill's instructions, not the parent's prompt,
    // and it does not see the fork skill itself.
    let sub = request_body(&server, 1);
    let messages = sub["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[1]["content"]
            .as_str()
            .unwrap()
            .contains("Summarize this in one line: a long story")
    );
    let load_skill = sub["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["function"]["name"] == "load_skill")
        .unwrap()
        .to_string();
    assert!(!load_skill.contains("summarize"), "{load_skill}");
}

#[test]
fn a_person_invokes_a_skill_hidden_from_the_model_with_arguments() {
    let tree = agent_tree();
    let server = ScriptedModelServer::start(vec![says("Deploying billing.")]);
    let asked = ask_json(&server, tree.path(), &["/deploy billing"]);
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    assert_eq!(asked.of_type("skill_invoked").len(), 1);
    let body = request_body(&server, 0);
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("Deploy the service billing to staging now."),
        "{user}"
    );
    // An unknown /name is one clear line, and nothing is sent.
    let asked = ask_json(&server, tree.path(), &["/nonesuch now"]);
    assert_eq!(asked.output.status.code(), Some(2));
    assert!(
        asked.stderr().contains("no skill `/nonesuch`"),
        "{}",
        asked.stderr()
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn bad_replies_are_retried_or_reported_and_never_crash() {
    let tree = agent_tree();
    // A 500 then a 200; a 429 with Retry-After.
    let server = ScriptedModelServer::start(vec![
        Reply::error(500, r#"{"error":{"message":"upstream exploded"}}"#),
        Reply::Body {
            status: 429,
            headers: vec![("retry-after".into(), "1".into())],
            content_type: "application/json".into(),
            body: r#"{"error":{"message":"Rate limit exceeded"}}"#.into(),
        },
        says("fine"),
    ]);
    let started = std::time::Instant::now();
    let asked = ask_json(&server, tree.path(), &["hi"]);
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    let retries = asked.of_type("retry");
    assert_eq!(retries.len(), 2, "{:?}", asked.events);
    assert!(
        retries[0]["reason"]
            .as_str()
            .unwrap()
            .contains("upstream exploded")
    );
    assert_eq!(retries[1]["delay_ms"], 1000);
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));

    // Malformed JSON in the stream: one clear error, exit 1.
    let server = ScriptedModelServer::start(vec![Reply::Events(vec![
        "data: {\"choices\":[{\"delta\":".into(),
    ])]);
    let asked = ask_json(&server, tree.path(), &["hi"]);
    assert_eq!(asked.output.status.code(), Some(1), "{}", asked.stderr());
    let errors = asked.of_type("error");
    assert!(
        errors[0]["message"].as_str().unwrap().contains("malformed"),
        "{errors:?}"
    );

    // A stream cut before its end, every time: retried, then reported as truncated.
    let cut = Reply::CutEvents(vec![tool_call("c", "load_skill", "{\"sk")]);
    let server = ScriptedModelServer::start(vec![cut.clone(), cut.clone(), cut.clone(), cut]);
    let asked = ask_json(&server, tree.path(), &["hi"]);
    assert_eq!(asked.output.status.code(), Some(1), "{}", asked.stderr());
    let errors = asked.of_type("error");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("ended before"),
        "{errors:?}"
    );
    assert_eq!(server.requests().len(), 4);

    // A 401 is not retried and names the key's variable.
    let server = ScriptedModelServer::start(vec![Reply::error(
        401,
        r#"{"error":{"message":"No auth credentials found"}}"#,
    )]);
    let asked = ask_json(&server, tree.path(), &["hi"]);
    assert_eq!(asked.output.status.code(), Some(1));
    let message = asked.of_type("error")[0]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("refused the API key (HTTP 401)"),
        "{message}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn missing_keys_and_unreachable_servers_are_one_clear_line() {
    let examples = std::path::Path::new("examples/skills");
    let output = agent_command(examples)
        .args(["ask", "hello"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("set OPENROUTER_API_KEY"), "{stderr}");

    let output = agent_command(examples)
        .args(["ask", "--provider", "responses", "hello"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("OPENROUTER_API_KEY is not set"), "{stderr}");

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let output = agent_command(examples)
        .args(["ask", "--no-transcript", "--base-url"])
        .arg(format!("http://127.0.0.1:{port}/v1"))
        .arg("hello")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot reach the model server"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn transcripts_are_saved_and_a_conversation_resumes() {
    let tree = agent_tree();
    let data = tempfile::tempdir().unwrap();
    let server = ScriptedModelServer::start(vec![
        calls("load_skill", r#"{"skill":"weather"}"#),
        says("Loaded."),
        says("Still sunny."),
    ]);
    let run = |extra: &[&str]| {
        agent_command(tree.path())
            .args(["ask", "--tools-on-load", "--base-url", &server.base_url])
            .arg("--data-dir")
            .arg(data.path())
            .args(extra)
            .output()
            .unwrap()
    };
    let first = run(&["Load the weather skill"]);
    assert_exit(&first, 0);
    assert_eq!(String::from_utf8_lossy(&first.stdout), "Loaded.\n");
    let listed = agent_command(tree.path())
        .args([
            "chat",
            "--list",
            "--json",
            "--base-url",
            &server.base_url,
            "--data-dir",
        ])
        .arg(data.path())
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(listed[0]["first_prompt"], "Load the weather skill");
    let second = run(&["--resume", &id[..12], "And now?"]);
    assert_exit(&second, 0);
    // The resumed request carries the whole history, and the weather skill is loaded again
    // (its model override does not outlive the turn that loaded it).
    let body = request_body(&server, 2);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 6, "{messages:?}");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["name"],
        "load_skill"
    );
    assert_eq!(messages[5]["content"], "And now?");
    assert_ne!(body["model"], "weather-model");
    assert!(
        body["tools"].to_string().contains("get_weather"),
        "{}",
        body["tools"]
    );
    let bad = run(&["--resume", "../../etc/passwd", "hi"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a conversation id"));
}

#[test]
fn chat_lists_saved_conversations_without_a_model_to_ask() {
    let tree = agent_tree();
    let data = tempfile::tempdir().unwrap();
    let server = ScriptedModelServer::start(vec![says("Hello.")]);
    let asked = agent_command(tree.path())
        .args(["ask", "--base-url", &server.base_url, "--data-dir"])
        .arg(data.path())
        .arg("Say hello")
        .output()
        .unwrap();
    assert_eq!(asked.status.code(), Some(0));
    // No key, no --base-url, no config: listing reads the transcripts alone.
    let list = |extra: &[&str]| {
        agent_command(tree.path())
            .args(["chat", "--list", "--data-dir"])
            .arg(data.path())
            .args(extra)
            .output()
            .unwrap()
    };
    let output = list(&[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_exit(&output, 0);
    assert!(
        stdout.contains("messages") && stdout.contains("Say hello"),
        "{stdout}"
    );
    let output = list(&["--no-transcript"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("drop --no-transcript"));
}

/// Whether a process whose command line holds `marker` is running.
fn process_with(marker: &str) -> bool {
    fs_err::read_dir("/proc").unwrap().flatten().any(|entry| {
        fs_err::read(entry.path().join("cmdline"))
            .is_ok_and(|line| String::from_utf8_lossy(&line).contains(marker))
    })
}

/// How long a tool's processes may take to start, or to be gone after Ctrl-C.
const PROCESS_WAIT: std::time::Duration = std::time::Duration::from_secs(15);
/// How often they are looked for.
const PROCESS_POLL: std::time::Duration = std::time::Duration::from_millis(50);

#[test]
fn ctrl_c_ends_the_turn_kills_running_tools_and_keeps_the_transcript() {
    ctrl_c_case(&[]);
}

#[test]
fn ctrl_c_kills_what_a_tool_started_even_without_the_sandbox() {
    ctrl_c_case(&["--sandbox", "off"]);
}

fn ctrl_c_case(extra: &[&str]) {
    let tree = agent_tree();
    write_tree(
        tree.path(),
        &[
            (
                "sleeper/SKILL.md",
                "---\nname: sleeper\ndescription: Waits.\n---\nRun sleep.py.\n",
            ),
            (
                "sleeper/scripts/sleep.py",
                "import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', sys.argv[1] + '-child'])\ntime.sleep(60)\n",
            ),
        ],
    );
    make_world_readable(tree.path());
    let marker = format!("marker-{}-{}", std::process::id(), extra.len());
    let arguments = json!({"skill":"sleeper","script":"sleep.py","args":[marker]}).to_string();
    let server = ScriptedModelServer::start(vec![calls("use_skill", &arguments)]);
    let data = tempfile::tempdir().unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("skillbox"))
        .env("SKILLBOX_CONFIG", "/dev/null")
        .arg("--root")
        .arg(tree.path())
        .args([
            "ask",
            "--json",
            "--base-url",
            &server.base_url,
            "--data-dir",
        ])
        .arg(data.path())
        .args(extra)
        .arg("Wait a minute")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    let child_marker = format!("{marker}-child");
    if !wait_until(PROCESS_WAIT, PROCESS_POLL, || process_with(&child_marker)) {
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        let output = child.wait_with_output().unwrap();
        panic!(
            "the tool's child did not start; stdout: {}; stderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let started = std::time::Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_exit(&output, 130);
    assert!(
        wait_until(PROCESS_WAIT, PROCESS_POLL, || !process_with(&marker)),
        "timed out waiting for the tool and its child to be gone"
    );
    let last: Value = serde_json::from_str(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["end"], "cancelled");
    let transcripts: Vec<_> = fs_err::read_dir(data.path().join("transcripts"))
        .unwrap()
        .flatten()
        .collect();
    let text = fs_err::read_to_string(transcripts[0].path()).unwrap();
    assert!(text.contains("the user cancelled the turn"), "{text}");
    assert!(text.contains("\"end\":\"cancelled\""), "{text}");
}

#[test]
fn a_call_naming_a_skill_loads_it_and_a_fork_skill_runs_as_a_sub_agent() {
    let tree = agent_tree();
    let server = ScriptedModelServer::start(vec![
        calls("greet", "Ada"),
        calls("summarize", r#"{"text":"a long story"}"#),
        says("A story, shortened."),
        says("Done."),
    ]);
    let asked = ask_json(&server, tree.path(), &["Greet Ada, then summarize"]);
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    assert_eq!(asked.tools_called(), vec!["greet", "summarize"]);
    let results = asked.results();
    assert!(
        !results[0].1 && results[0].0.contains("Run `greet.py NAME`"),
        "{results:?}"
    );
    assert_eq!(results[1], ("A story, shortened.".to_owned(), false));
    let sub = request_body(&server, 2);
    let instructions = sub["messages"][1]["content"].as_str().unwrap();
    assert!(
        instructions.contains(r#"Summarize this in one line: {"text":"a long story"}"#),
        "{instructions}"
    );
    // The history keeps the model's own call (its name and id) with the result.
    let last = request_body(&server, 3);
    let messages = last["messages"].as_array().unwrap();
    assert_eq!(messages[2]["tool_calls"][0]["function"]["name"], "greet");
    assert_eq!(messages[3]["tool_call_id"], "call_1");
}

/// One server-sent event with its name.
fn named(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}")
}

#[test]
fn the_responses_api_is_spoken_statelessly_with_its_items_sent_back() {
    let tree = agent_tree();
    let call_item = json!({"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"skill\":\"greet\"}","call_id":"call_9","name":"load_skill"});
    let reasoning =
        json!({"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"opaque"});
    let tool_round = Reply::Events(vec![
        named(
            "response.created",
            &json!({"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}),
        ),
        named(
            "response.output_item.added",
            &json!({"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":reasoning}),
        ),
        named(
            "response.output_item.added",
            &json!({"type":"response.output_item.added","sequence_number":2,"output_index":1,"item":{"id":"fc_1","type":"function_call","arguments":"","call_id":"call_9","name":"load_skill"}}),
        ),
        named(
            "response.function_call_arguments.delta",
            &json!({"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_1","output_index":1,"delta":"{\"skill\":\"greet\"}"}),
        ),
        named(
            "response.output_item.done",
            &json!({"type":"response.output_item.done","sequence_number":4,"output_index":1,"item":call_item}),
        ),
        named(
            "response.completed",
            &json!({"type":"response.completed","sequence_number":5,"response":{"id":"resp_1","status":"completed","output":[reasoning, call_item],"usage":{"input_tokens":45,"output_tokens":25,"total_tokens":70}}}),
        ),
    ]);
    let message = json!({"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Loaded greet.","annotations":[]}]});
    let answer = Reply::Events(vec![
        named(
            "response.output_text.delta",
            &json!({"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Loaded greet."}),
        ),
        named(
            "response.completed",
            &json!({"type":"response.completed","sequence_number":2,"response":{"id":"resp_2","status":"completed","output":[message],"usage":{"input_tokens":80,"output_tokens":5}}}),
        ),
    ]);
    let server = ScriptedModelServer::start(vec![tool_round, answer]);
    let asked = {
        let data = tempfile::tempdir().unwrap();
        let output = agent_command(tree.path())
            .env("SKILLBOX_API_KEY", "sk-test-responses")
            .args([
                "ask",
                "--json",
                "--provider",
                "responses",
                "--model",
                "o4-mini",
            ])
            .args(["--base-url", &server.base_url, "--data-dir"])
            .arg(data.path())
            .arg("Load greet")
            .output()
            .unwrap();
        AgentEvents::of(output)
    };
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    assert_eq!(asked.tools_called(), vec!["load_skill"]);
    assert_eq!(asked.events.last().unwrap()["text"], "Loaded greet.");
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/responses");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-test-responses")
    );
    let first = request_body(&server, 0);
    assert_eq!(first["model"], "o4-mini");
    assert!(first["instructions"].as_str().unwrap().contains("greet"));
    assert_eq!(first["tools"][0]["type"], "function");
    assert_eq!(first["tools"][0]["name"], "load_skill");
    assert_eq!(first["store"], false);
    // Stateless: the second request resends everything, the reasoning and call items as
    // they came, then the output for the call's id.
    let second = request_body(&server, 1);
    let input = second["input"].as_array().unwrap();
    assert_eq!(input[0]["role"], "user");
    assert_eq!(input[1], reasoning);
    assert_eq!(input[2], call_item);
    assert_eq!(input[3]["type"], "function_call_output");
    assert_eq!(input[3]["call_id"], "call_9");
    assert!(input[3]["id"].as_str().is_some());
    assert!(
        input[3]["output"]
            .as_str()
            .unwrap()
            .contains("Run `greet.py NAME`")
    );
}

#[test]
fn anthropic_messages_are_spoken_with_tool_results_in_one_user_message() {
    let tree = agent_tree();
    let tool_round = Reply::Events(vec![
        named(
            "message_start",
            &json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":300,"output_tokens":1}}}),
        ),
        named(
            "content_block_start",
            &json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
        named("ping", &json!({"type":"ping"})),
        named(
            "content_block_delta",
            &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking both."}}),
        ),
        named(
            "content_block_stop",
            &json!({"type":"content_block_stop","index":0}),
        ),
        named(
            "content_block_start",
            &json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"load_skill","input":{}}}),
        ),
        named(
            "content_block_delta",
            &json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"skill\": \"gr"}}),
        ),
        named(
            "content_block_delta",
            &json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"eet\"}"}}),
        ),
        named(
            "content_block_stop",
            &json!({"type":"content_block_stop","index":1}),
        ),
        named(
            "content_block_start",
            &json!({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_02","name":"nonesuch","input":{}}}),
        ),
        named(
            "content_block_stop",
            &json!({"type":"content_block_stop","index":2}),
        ),
        named(
            "message_delta",
            &json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":40}}),
        ),
        named("message_stop", &json!({"type":"message_stop"})),
    ]);
    let answer = Reply::Events(vec![
        named(
            "message_start",
            &json!({"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"usage":{"input_tokens":400,"output_tokens":1}}}),
        ),
        named(
            "content_block_start",
            &json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
        named(
            "content_block_delta",
            &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Done."}}),
        ),
        named(
            "content_block_stop",
            &json!({"type":"content_block_stop","index":0}),
        ),
        named(
            "message_delta",
            &json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}),
        ),
        named("message_stop", &json!({"type":"message_stop"})),
    ]);
    let server = ScriptedModelServer::start(vec![tool_round, answer]);
    let data = tempfile::tempdir().unwrap();
    let output = agent_command(tree.path())
        .env("SKILLBOX_API_KEY", "sk-ant-test")
        .args([
            "ask",
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
        ])
        .args(["--base-url", &server.base_url, "--data-dir"])
        .arg(data.path())
        .arg("Load greet")
        .output()
        .unwrap();
    assert_exit(&output, 0);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Checking both.\nDone.\n"
    );
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    let first = request_body(&server, 0);
    assert!(first["max_tokens"].as_u64().unwrap() > 0);
    assert!(first["system"].as_str().unwrap().contains("greet"));
    assert!(first["tools"][0]["input_schema"].is_object());
    let second = request_body(&server, 1);
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(
        messages[1]["content"][1]["input"],
        json!({"skill": "greet"})
    );
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(results[0]["type"], "tool_result");
    assert_eq!(results[0]["tool_use_id"], "toolu_01");
    assert!(results[0].get("is_error").is_none());
    assert_eq!(results[1]["tool_use_id"], "toolu_02");
    assert_eq!(results[1]["is_error"], true);
}

#[test]
fn a_response_with_too_many_calls_gets_the_excess_answered_not_run() {
    let tree = agent_tree();
    let fragments: Vec<Value> = (0..40)
        .map(|index| json!({"index":index,"id":format!("c{index}"),"type":"function","function":{"name":"read_skill_file","arguments":format!("{{\"skill\":\"greet\",\"path\":\"SKILL.md\",\"n\":{index}}}")}}))
        .collect();
    let chunk = json!({"choices":[{"index":0,"delta":{"tool_calls":fragments}}]}).to_string();
    let server = ScriptedModelServer::start(vec![
        Reply::data_events(&[&chunk, &finish("tool_calls")]),
        says("ok"),
    ]);
    let asked = ask_json(&server, tree.path(), &["read a lot"]);
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    let second = request_body(&server, 1);
    let results: Vec<&Value> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 40);
    let not_run = results
        .iter()
        .filter(|message| {
            message["content"]
                .as_str()
                .unwrap()
                .contains("at most 32 tool calls")
        })
        .count();
    assert_eq!(not_run, 8);
    assert_eq!(results[39]["tool_call_id"], "c39");
}

#[test]
fn a_redirect_is_not_followed_so_the_key_never_leaves_for_another_host() {
    let tree = agent_tree();
    let elsewhere = ScriptedModelServer::start(vec![says("stolen")]);
    let server = ScriptedModelServer::start(vec![Reply::Body {
        status: 307,
        headers: vec![(
            "location".into(),
            format!("{}/messages", elsewhere.base_url),
        )],
        content_type: "text/plain".into(),
        body: String::new(),
    }]);
    let output = agent_command(tree.path())
        .env("SKILLBOX_API_KEY", "sk-ant-secret")
        .args([
            "ask",
            "--no-transcript",
            "--provider",
            "anthropic",
            "--base-url",
        ])
        .arg(&server.base_url)
        .arg("hi")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("HTTP 307"));
    assert!(elsewhere.requests().is_empty());
}

#[test]
fn chat_reads_lines_runs_turns_invokes_skills_and_resumes() {
    let tree = agent_tree();
    let data = tempfile::tempdir().unwrap();
    let server = ScriptedModelServer::start(vec![
        says("Hello there."),
        says("Deploying billing."),
        says("Welcome back."),
    ]);
    let chat = |input: &str, extra: &[&str]| {
        agent_command(tree.path())
            .args(["chat", "--base-url", &server.base_url, "--data-dir"])
            .arg(data.path())
            .args(extra)
            .write_stdin(input)
            .output()
            .unwrap()
    };
    let output = chat("hi\n/skills\n/nonesuch\n/deploy billing\n/exit\n", &[]);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains("Hello there.") && stdout.contains("Deploying billing."),
        "{stdout}"
    );
    assert!(stderr.contains("/deploy [service]"), "{stderr}");
    assert!(stderr.contains("no skill `/nonesuch`"), "{stderr}");
    assert_eq!(server.requests().len(), 2);
    let second = request_body(&server, 1);
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[1]["content"], "hi");
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .contains("Deploy the service billing")
    );
    let id = stderr
        .lines()
        .find_map(|line| line.strip_prefix("conversation "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned();
    let output = chat("and now?\n", &["--resume", &id]);
    assert_exit(&output, 0);
    let third = request_body(&server, 2);
    assert_eq!(third["messages"].as_array().unwrap().len(), 6);
}

/// Whether any request the server received carries `text`.
fn some_request_carries(server: &ScriptedModelServer, text: &str) -> bool {
    server
        .requests()
        .iter()
        .any(|request| request.body.contains(text))
}

#[test]
fn a_denied_fork_skill_runs_none_of_its_commands() {
    let root = tempfile::tempdir().unwrap();
    write_tree(
        root.path(),
        &[(
            "digest/SKILL.md",
            "---\nname: digest\ndescription: Digests a text in a sub-agent.\ncontext: fork\n---\nState: !`echo COMMAND-RAN-$((6*7))`\nDigest it.\n",
        )],
    );
    make_world_readable(root.path());
    let script = || {
        vec![
            calls("load_skill", r#"{"skill":"digest"}"#),
            says("Digested."),
            says("Done."),
        ]
    };
    // Allowed, the command runs and the sub-agent reads its output.
    let server = ScriptedModelServer::start(script());
    let asked = ask_json(
        &server,
        root.path(),
        &["--preprocess-commands", "--approve", "allow", "Digest"],
    );
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    assert!(some_request_carries(&server, "COMMAND-RAN-42"));
    // Denied, the sub-agent never starts and nothing runs.
    let server = ScriptedModelServer::start(script());
    let asked = ask_json(
        &server,
        root.path(),
        &["--preprocess-commands", "--approve", "deny", "Digest"],
    );
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    assert_eq!(asked.of_type("approval_denied").len(), 1);
    assert!(asked.of_type("fork").is_empty());
    assert!(!some_request_carries(&server, "COMMAND-RAN-42"));
}

#[test]
fn a_sub_agent_stays_within_its_fork_skills_allowed_tools_after_loading_another() {
    let tree = agent_tree();
    write_tree(
        tree.path(),
        &[(
            "reader/SKILL.md",
            "---\nname: reader\ndescription: Reads skill files in a sub-agent.\ncontext: fork\nallowed-tools: read_skill_file\n---\nRead only.\n",
        )],
    );
    make_world_readable(tree.path());
    let server = ScriptedModelServer::start(vec![
        calls("load_skill", r#"{"skill":"reader"}"#),
        // The sub-agent loads a skill without allowed-tools, then tries to run a script.
        calls("load_skill", r#"{"skill":"greet"}"#),
        calls(
            "use_skill",
            r#"{"skill":"greet","script":"greet.py","args":["Ada"]}"#,
        ),
        says("Could not."),
        says("Done."),
    ]);
    let asked = ask_json(&server, tree.path(), &["Read"]);
    assert_eq!(asked.output.status.code(), Some(0), "{}", asked.stderr());
    let inner: Vec<&Value> = asked
        .of_type("fork")
        .into_iter()
        .map(|event| &event["event"])
        .filter(|event| event["type"] == "tool_call_finished" && event["name"] == "use_skill")
        .collect();
    assert_eq!(inner.len(), 1, "{:?}", asked.events);
    let result = inner[0]["result"].as_str().unwrap();
    assert!(inner[0]["is_error"].as_bool().unwrap(), "{result}");
    assert!(result.contains("which bound this sub-agent"), "{result}");
    assert!(!result.contains("Hello"), "{result}");
}

#[test]
fn hostile_streams_are_bounded_a_line_without_end_and_a_flood_of_calls() {
    let tree = agent_tree();
    let long_line = format!("data: {}", "a".repeat(6 * 1024 * 1024));
    let fragments: Vec<Value> = (0..300)
        .map(|index| json!({"index":index,"id":format!("c{index}"),"type":"function","function":{"name":"x","arguments":"{}"}}))
        .collect();
    let flood = json!({"choices":[{"index":0,"delta":{"tool_calls":fragments}}]}).to_string();
    let server = ScriptedModelServer::start(vec![
        Reply::Events(vec![long_line]),
        Reply::data_events(&[&flood, &finish("tool_calls")]),
    ]);
    let started = std::time::Instant::now();
    let asked = ask_json(&server, tree.path(), &["hi"]);
    assert_eq!(asked.output.status.code(), Some(1), "{}", asked.stderr());
    let message = asked.of_type("error")[0]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("longer than 4194304 bytes"), "{message}");
    // Bounded, not fast: a debug build on a loaded two-core machine took over 20 s here; a
    // reader that kept the line would not end at all.
    assert!(started.elapsed() < std::time::Duration::from_secs(90));
    let asked = ask_json(&server, tree.path(), &["hi"]);
    assert_eq!(asked.output.status.code(), Some(1), "{}", asked.stderr());
    let message = asked.of_type("error")[0]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("more than 256 items"), "{message}");
}

#[test]
fn credentials_in_a_base_url_are_never_shown_or_saved() {
    let tree = agent_tree();
    let server = ScriptedModelServer::start(vec![says("hi")]);
    let url = server
        .base_url
        .replace("http://", "http://someone:hunter2@");
    let data = tempfile::tempdir().unwrap();
    let output = agent_command(tree.path())
        .args(["ask", "--json", "--base-url", &url, "--data-dir"])
        .arg(data.path())
        .arg("hi")
        .output()
        .unwrap();
    assert_exit(&output, 0);
    let transcripts = data.path().join("transcripts");
    let saved = fs_err::read_dir(&transcripts)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let text = fs_err::read_to_string(saved).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    // An unreachable server's error names the URL without them.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let output = agent_command(std::path::Path::new("examples/skills"))
        .args(["ask", "--no-transcript", "--base-url"])
        .arg(format!("http://someone:hunter2@127.0.0.1:{port}/v1"))
        .arg("hello")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot reach"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
fn a_model_whose_prompt_leaves_skills_out_finds_them_with_find_skills() {
    let tree = agent_tree();
    write_reports(tree.path(), 12);
    make_world_readable(tree.path());
    let server = ScriptedModelServer::start(vec![
        calls("find_skills", r#"{"query":"what is the weather"}"#),
        calls("load_skill", r#"{"skill":"weather"}"#),
        says("It is sunny."),
    ]);
    let asked = ask_json(
        &server,
        tree.path(),
        &["--max-prompt-chars", "700", "Is it sunny in Lyon?"],
    );
    assert_exit(&asked.output, 0);
    assert_eq!(asked.tools_called(), vec!["find_skills", "load_skill"]);
    let results = asked.results();
    assert!(!results[0].1, "{results:?}");
    let found: Value = serde_json::from_str(&results[0].0).unwrap();
    assert_eq!(found["skills"][0]["name"], "weather", "{found}");
    assert!(!results[0].0.contains("deploy"), "{results:?}");
    let first = request_body(&server, 0);
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("call find_skills"), "{system}");
    let tools = offered_tools(&first);
    assert!(tools.contains(&"find_skills"), "{tools:?}");

    // With every skill in the prompt, the tool is not offered unless asked for.
    let server = ScriptedModelServer::start(vec![says("Hello.")]);
    let asked = ask_json(&server, tree.path(), &["Hello"]);
    assert_exit(&asked.output, 0);
    let tools = request_body(&server, 0)["tools"].to_string();
    assert!(!tools.contains("find_skills"), "{tools}");
    let server = ScriptedModelServer::start(vec![says("Hello.")]);
    let asked = ask_json(&server, tree.path(), &["--find-skills", "always", "Hello"]);
    assert_exit(&asked.output, 0);
    let tools = request_body(&server, 0)["tools"].to_string();
    assert!(tools.contains("find_skills"), "{tools}");
}

/// The files under `data`'s transcripts folder (none when it was never made).
fn transcript_files(data: &std::path::Path) -> Vec<std::path::PathBuf> {
    match fs_err::read_dir(data.join("transcripts")) {
        Ok(entries) => entries.flatten().map(|entry| entry.path()).collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn a_model_server_that_is_not_running_is_one_line_at_once_and_nothing_is_saved() {
    let tree = agent_tree();
    let data = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let started = std::time::Instant::now();
    let output = agent_command(tree.path())
        .args(["ask", "--base-url", &base_url, "--data-dir"])
        .arg(data.path())
        .arg("hello")
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr,
        format!(
            "error: cannot reach the model server at {base_url}/chat/completions: nothing listens there (connection refused); start the server, or check --base-url\n"
        )
    );
    // Retrying a refused connection sleeps 3.5 s (0.5 + 1 + 2) before giving up.
    assert!(elapsed < std::time::Duration::from_secs(3), "{elapsed:?}");
    assert_eq!(
        transcript_files(data.path()),
        Vec::<std::path::PathBuf>::new()
    );

    // Any failure before the model's first answer saves nothing either.
    let server = ScriptedModelServer::start(vec![Reply::error(
        401,
        r#"{"error":{"message":"No auth credentials found"}}"#,
    )]);
    let output = agent_command(tree.path())
        .args(["ask", "--base-url", &server.base_url, "--data-dir"])
        .arg(data.path())
        .arg("hello")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(
        transcript_files(data.path()),
        Vec::<std::path::PathBuf>::new()
    );
}

/// `reply` sent after `delay`, all at once (a model that thinks before it answers).
fn after(delay: std::time::Duration, reply: Reply) -> Reply {
    match reply {
        Reply::Events(events) => Reply::PacedEvents(vec![events.join("\n\n")], delay),
        other => other,
    }
}

#[test]
fn a_slow_model_gets_one_waiting_line_per_round_on_a_plain_stderr() {
    let tree = agent_tree();
    let delay = std::time::Duration::from_secs(3);
    let server = ScriptedModelServer::start(vec![
        after(delay, calls("load_skill", r#"{"skill":"greet"}"#)),
        after(delay, says("Loaded.")),
        after(delay, says("Quiet.")),
    ]);
    let data = tempfile::tempdir().unwrap();
    let output = agent_command(tree.path())
        .args([
            "ask",
            "--model",
            "thinker",
            "--base-url",
            &server.base_url,
            "--data-dir",
        ])
        .arg(data.path())
        .arg("Load greet")
        .output()
        .unwrap();
    assert_exit(&output, 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let waiting: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("waiting for"))
        .collect();
    assert_eq!(
        waiting,
        vec![
            "waiting for the model thinker (round 1)",
            "waiting for the model thinker (round 2)"
        ],
        "{stderr}"
    );
    // With --json the events say it; stderr stays quiet.
    let asked = ask_json(&server, tree.path(), &["Anything?"]);
    assert_exit(&asked.output, 0);
    assert!(
        !asked.stderr().contains("waiting for"),
        "{}",
        asked.stderr()
    );
}
