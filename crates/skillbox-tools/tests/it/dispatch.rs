//! The door policy (`call_once`): every tool, the aliases models use, and every error a model can cause.

use serde_json::{Value, json};
use skillbox_tools::{ProviderOptions, SkillsProvider};

use super::support::{call, examples_provider, portable, runtime, temp_root};

#[test]
fn load_skill_substitutes_arguments_and_lists_resources() {
    let provider = examples_provider(ProviderOptions::default());
    let outcome = call(
        &provider,
        "load_skill",
        json!({"skill": "commit-message", "arguments": "fix the login bug"}),
    );
    assert!(!outcome.is_error());
    let text = outcome.text();
    assert!(text.contains("fix the login bug"), "{text}");
    assert!(!text.contains("$ARGUMENTS"));
    assert!(!text.starts_with("---"), "frontmatter must not be included");
    insta::assert_snapshot!(portable(&text));
}

#[test]
fn load_skill_lists_files_scripts_and_tools() {
    let provider = examples_provider(ProviderOptions::default());
    let text = call(
        &provider,
        "load_skill",
        json!({"skill": "api-design-review"}),
    )
    .text();
    assert!(
        text.contains("Files you can read with read_skill_file:\n- guidelines/rest-naming.md: "),
        "{text}"
    );
    let text = call(&provider, "load_skill", json!({"skill": "csv-insights"})).text();
    assert!(
        text.contains(
            "Scripts you can run with use_skill:\n- scripts/head.sh\n- scripts/summarize.py"
        ),
        "{text}"
    );
    let text = call(&provider, "load_skill", json!({"skill": "text-tools"})).text();
    assert!(
        text.contains("Tools this skill provides (call them directly):\n- count_words:"),
        "{text}"
    );
}

#[test]
fn aliases_for_the_skill_parameter_and_string_arguments() {
    let provider = examples_provider(ProviderOptions::default());
    for arguments in [
        json!({"skill_name": "csv-insights"}),
        json!({"skillName": "csv-insights"}),
        json!({"name": "csv-insights"}),
        Value::String("{\"skill\": \"csv-insights\"}".into()),
    ] {
        let outcome = call(&provider, "load_skill", arguments.clone());
        assert!(!outcome.is_error(), "{arguments}: {outcome:?}");
    }
}

#[test]
fn list_skills_through_load_skill_hides_person_only_skills() {
    let provider = examples_provider(ProviderOptions::default());
    let outcome = call(&provider, "load_skill", json!({"list_skills": true}));
    let names: Vec<&str> = outcome.content["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"csv-insights") && !names.contains(&"release-checklist"),
        "{names:?}"
    );
    let refused = call(
        &provider,
        "load_skill",
        json!({"skill": "release-checklist"}),
    );
    assert!(refused.is_error());
    assert!(
        refused.content["error"]
            .as_str()
            .unwrap()
            .starts_with("no skill named `release-checklist`;"),
        "{refused:?}"
    );
}

#[test]
fn use_skill_and_tools_json_tools_run_through_the_executor() {
    let provider = examples_provider(ProviderOptions::default());
    let sample = super::support::repo_root().join("examples/skills/csv-insights/assets/sample.csv");
    let outcome = call(
        &provider,
        "use_skill",
        json!({"skill": "csv-insights", "script": "head.sh", "args": [sample.display().to_string(), "1"]}),
    );
    assert!(!outcome.is_error(), "{outcome:?}");
    assert_eq!(
        outcome.content["stdout"].as_str().unwrap().lines().count(),
        2
    );
    let outcome = call(&provider, "count_words", json!({"text": "one two"}));
    assert_eq!(outcome.content["words"], 2, "{outcome:?}");
    let outcome = call(&provider, "slugify", json!({}));
    assert!(
        outcome.is_error() && outcome.text().contains("missing required parameter `text`"),
        "{outcome:?}"
    );
}

#[test]
fn read_skill_file_is_contained_and_capped() {
    let provider = examples_provider(ProviderOptions {
        max_file_bytes: 100,
        ..ProviderOptions::default()
    });
    let outcome = call(
        &provider,
        "read_skill_file",
        json!({"skill": "api-design-review", "path": "guidelines/rest-naming.md"}),
    );
    let content = outcome.content["content"].as_str().unwrap();
    assert!(content.ends_with("[file cut at 100 bytes]"), "{content}");
    for path in [
        "../commit-message/SKILL.md",
        "/etc/passwd",
        "guidelines/../../csv-insights/SKILL.md",
    ] {
        let outcome = call(
            &provider,
            "read_skill_file",
            json!({"skill": "api-design-review", "path": path}),
        );
        assert!(outcome.is_error(), "{path}: {outcome:?}");
        assert!(
            outcome.text().contains("leaves the skill folder"),
            "{path}: {}",
            outcome.text()
        );
    }
}

#[test]
fn read_skill_file_refuses_a_fifo_without_blocking() {
    let root = temp_root();
    let folder = root.path().join("piped");
    std::fs::create_dir_all(folder.join("references")).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        "---\nname: piped\ndescription: Holds a named pipe.\n---\nRead the notes.\n",
    )
    .unwrap();
    skillbox_testkit::make_fifo(&folder.join("references/notes.md"));
    let provider = std::sync::Arc::new(SkillsProvider::new(
        super::support::catalog(&[root.path()]),
        super::support::executor(),
        ProviderOptions::default(),
    ));
    let outcome = skillbox_testkit::finishes_within(
        std::time::Duration::from_secs(10),
        "read_skill_file on a FIFO",
        move || {
            call(
                &provider,
                "read_skill_file",
                json!({"skill": "piped", "path": "references/notes.md"}),
            )
        },
    );
    assert!(outcome.is_error(), "{outcome:?}");
    let text = outcome.text();
    assert!(
        text.contains("cannot read `references/notes.md` in skill `piped`")
            && text.contains("is a FIFO (named pipe), not a regular file"),
        "{text}"
    );
}

#[test]
fn errors_a_model_can_act_on() {
    let provider = examples_provider(ProviderOptions::default());
    let cases = [
        (
            "no_such_tool",
            json!({}),
            // `call` is offered every tool, the protocol's included (skillbox call, the
            // playground); a door offering one profile lists that profile's.
            "unknown tool `no_such_tool`; the tools are: load_skill, use_skill, read_skill_file, find_skills, list_skills, describe_skill, execute_skill, run_code, create_blob, read_blob, load_skills_protocol_guide, count_words, slugify",
        ),
        (
            "load_skill",
            Value::String("{not json".into()),
            "are not valid JSON",
        ),
        ("load_skill", json!([1, 2]), "must be a JSON object"),
        (
            "load_skill",
            json!({"skill": "comit-message"}),
            "did you mean `commit-message`?",
        ),
        (
            "use_skill",
            json!({"skill": "csv-insights"}),
            "missing required parameter `script`",
        ),
        (
            "use_skill",
            json!({"script": "x.py"}),
            "missing required parameter `skill`",
        ),
        (
            "use_skill",
            json!({"skill": "csv-insights", "script": "head.sh", "args": [{"a": 1}]}),
            "`args[0]` must be a string",
        ),
        (
            "read_skill_file",
            json!({"skill": "csv-insights"}),
            "missing required parameter `path`",
        ),
        (
            "list_skills",
            json!({"cursor": "forged"}),
            "not a cursor this server issued",
        ),
        (
            "describe_skill",
            json!({"name": "csv-insights", "detail": "everything"}),
            "parameter `detail`",
        ),
    ];
    for (tool, arguments, expected) in cases {
        let outcome = call(&provider, tool, arguments.clone());
        assert!(outcome.is_error(), "{tool} {arguments}: {outcome:?}");
        assert!(
            outcome.text().contains(expected),
            "{tool} {arguments}: {}",
            outcome.text()
        );
    }
}

#[test]
fn protocol_catalog_tools() {
    let provider = examples_provider(ProviderOptions::default());
    let first = call(
        &provider,
        "list_skills",
        json!({"limit": 3, "detail": "summary"}),
    );
    let page: Vec<&str> = first.content["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        page,
        vec!["api-design-review", "commit-message", "csv-insights"]
    );
    let cursor = first.content["next_cursor"].as_str().unwrap().to_owned();
    let second = call(
        &provider,
        "list_skills",
        json!({"limit": 10, "cursor": cursor}),
    );
    let rest: Vec<&str> = second.content["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        rest,
        vec!["text-tools", "text.stats", "unit-converter"],
        "person-only skills are not listed"
    );
    assert_eq!(second.content["next_cursor"], Value::Null);
    let text_stats = second.content["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "text.stats")
        .unwrap()
        .clone();
    assert_eq!(text_stats["version"], "0.10.0");
    let described = call(
        &provider,
        "describe_skill",
        json!({"name": "text.stats", "version": "0.9.0", "detail": "manifest"}),
    );
    assert_eq!(described.content["skill"]["manifest"]["version"], "0.9.0");
    assert_eq!(
        described.content["skill"]["manifest"]["runtime"]["export"],
        "main"
    );
    let guide = call(&provider, "load_skills_protocol_guide", json!({}));
    assert!(
        guide.content["content"]
            .as_str()
            .unwrap()
            .starts_with("# Skills Protocol Overview")
    );
}

#[test]
fn session_enforces_allowed_tools_only_when_asked_and_tracks_the_model() {
    let root = temp_root();
    let restricted = root.path().join("restricted");
    std::fs::create_dir_all(&restricted).unwrap();
    std::fs::write(
        restricted.join("SKILL.md"),
        "---\nname: restricted\ndescription: Only reads files.\nallowed-tools: read_skill_file\nmodel: careful-model\n---\nRead only.\n",
    )
    .unwrap();
    let open = root.path().join("open");
    std::fs::create_dir_all(&open).unwrap();
    std::fs::write(
        open.join("SKILL.md"),
        "---\nname: open\ndescription: Anything goes.\n---\nAnything.\n",
    )
    .unwrap();
    let provider = std::sync::Arc::new(SkillsProvider::new(
        super::support::catalog(&[root.path()]),
        super::support::executor(),
        ProviderOptions::default(),
    ));
    // A conversation's session refuses what the active skill does not allow, and a call whose
    // effect loads a skill makes it the active one.
    let run = |session: &mut skillbox_tools::SkillSession, tool: &str, arguments: Value| {
        if let Some(refusal) = session.refusal(tool) {
            return refusal;
        }
        let outcome = runtime().block_on(skillbox_tools::call_once(&provider, tool, &arguments));
        if let Some(skillbox_tools::ToolEffect::LoadsSkill(loaded)) = &outcome.effect {
            session.activate(&loaded.skill);
        }
        outcome
    };
    let mut session = skillbox_tools::SkillSession::new(true);
    assert!(!run(&mut session, "load_skill", json!({"skill": "restricted"})).is_error());
    assert_eq!(session.active_skill(), Some("restricted"));
    assert_eq!(session.model_override(), Some("careful-model"));
    let refused = run(
        &mut session,
        "use_skill",
        json!({"skill": "restricted", "script": "x.py"}),
    );
    assert!(
        refused.is_error()
            && refused
                .text()
                .contains("not in the allowed-tools of the active skill `restricted`"),
        "{refused:?}"
    );
    let allowed = run(
        &mut session,
        "read_skill_file",
        json!({"skill": "restricted", "path": "SKILL.md"}),
    );
    assert!(!allowed.is_error(), "{allowed:?}");
    // load_skill is never blocked, and switching skills lifts the restriction and the model.
    assert!(!run(&mut session, "load_skill", json!({"skill": "open"})).is_error());
    assert_eq!(
        (session.allowed_tools(), session.model_override()),
        (None, None)
    );
    let mut lenient = skillbox_tools::SkillSession::new(false);
    run(&mut lenient, "load_skill", json!({"skill": "restricted"}));
    let outcome = run(
        &mut lenient,
        "use_skill",
        json!({"skill": "restricted", "script": "x.py"}),
    );
    assert!(!outcome.text().contains("allowed-tools"), "{outcome:?}");
}

#[test]
fn define_tool_is_off_by_default_and_live_at_once_when_enabled() {
    let provider = examples_provider(ProviderOptions::default());
    assert!(
        call(&provider, "define_tool", json!({}))
            .text()
            .contains("unknown tool `define_tool`")
    );
    let session_root = temp_root();
    let persistent_root = temp_root();
    let provider = examples_provider(ProviderOptions {
        define_tools: true,
        session_tools_root: session_root.path().to_path_buf(),
        persistent_tools_root: Some(persistent_root.path().to_path_buf()),
        ..ProviderOptions::default()
    });
    let defined = call(
        &provider,
        "define_tool",
        json!({
            "name": "double_it",
            "description": "Double a number",
            "parameters": "{\"n\": {\"type\": \"number\", \"description\": \"The number\"}}",
            "code": "return { value: args.n * 2 };"
        }),
    );
    assert!(!defined.is_error(), "{defined:?}");
    assert_eq!(
        call(&provider, "double_it", json!({"n": 21})).content["value"],
        42
    );
    let names: Vec<String> = skillbox_tools::registry::specs(
        &provider,
        skillbox_tools::Offer::Profile(skillbox_tools::ToolProfile::Skills),
    )
    .into_iter()
    .map(|tool| tool.name)
    .collect();
    assert!(
        names.ends_with(&[
            "double_it".to_owned(),
            "define_tool".to_owned(),
            "remove_tool".to_owned()
        ]),
        "{names:?}"
    );
    assert!(
        call(&provider, "double_it", json!({"n": "x"}))
            .text()
            .contains("parameter `n`")
    );
    // Persistent tools become Skill Tools skills that load cleanly.
    let saved = call(
        &provider,
        "define_tool",
        json!({
            "name": "shout_text", "description": "Upper-case text", "persistent": "true",
            "parameters": "{\"text\": {\"type\": \"string\", \"description\": \"Text\"}}",
            "code": "return args.text.toUpperCase();"
        }),
    );
    assert!(!saved.is_error(), "{saved:?}");
    let folder = persistent_root.path().join("shout-text");
    for file in ["SKILL.md", "tools.json", "scripts/shout_text.mjs"] {
        assert!(folder.join(file).is_file(), "{file}");
    }
    let reloaded = super::support::catalog(&[persistent_root.path()]);
    let skill = reloaded.get("shout-text").unwrap();
    assert!(!skill.has_errors(), "{:?}", skill.diagnostics);
    assert_eq!(
        *call(&provider, "shout_text", json!({"text": "hi"})).content,
        "HI"
    );
    // Removal: defined tools only, and their folders go with them.
    assert!(!call(&provider, "remove_tool", json!({"name": "shout_text"})).is_error());
    assert!(!folder.exists());
    assert!(
        call(&provider, "shout_text", json!({"text": "hi"}))
            .text()
            .contains("unknown tool")
    );
    for (name, expected) in [
        ("load_skill", "built-in"),
        ("count_words", "comes from skill `text-tools`"),
        ("never_defined", "was defined"),
    ] {
        let outcome = call(&provider, "remove_tool", json!({"name": name}));
        assert!(
            outcome.is_error() && outcome.text().contains(expected),
            "{name}: {outcome:?}"
        );
    }
    let bad = call(
        &provider,
        "define_tool",
        json!({"name": "Bad-Name", "description": "x", "code": "return 1;"}),
    );
    assert!(bad.text().contains("parameter `name`"), "{bad:?}");
    let bad = call(
        &provider,
        "define_tool",
        json!({"name": "typed", "description": "x", "code": "return 1;", "parameters": "{\"n\": {\"type\": \"float\", \"description\": \"n\"}}"}),
    );
    assert!(
        bad.is_error() && bad.text().contains("is not valid"),
        "{bad:?}"
    );
}

#[test]
fn command_preprocessing_is_opt_in_single_pass_and_never_injects_arguments() {
    let root = temp_root();
    let skill = root.path().join("live");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: live\ndescription: Live context.\n---\nGreeting: !`echo hello`\nFailing: !`echo broken >&2; exit 3`\nLiteral: !`echo '$ARGUMENTS'`\n```!\necho one\necho two\n```\nTopic: $ARGUMENTS\n",
    )
    .unwrap();
    let catalog = super::support::catalog(&[root.path()]);
    let plain = SkillsProvider::new(
        catalog.clone(),
        super::support::executor(),
        ProviderOptions::default(),
    );
    let text = call(
        &plain,
        "load_skill",
        json!({"skill": "live", "arguments": "billing"}),
    )
    .text();
    assert!(
        text.contains("Greeting: !`echo hello`"),
        "off by default: {text}"
    );
    let live = SkillsProvider::new(
        catalog,
        super::support::executor(),
        ProviderOptions {
            preprocess_commands: true,
            ..ProviderOptions::default()
        },
    );
    let text = call(
        &live,
        "load_skill",
        json!({"skill": "live", "arguments": "billing"}),
    )
    .text();
    assert!(text.contains("Greeting: hello\n"), "{text}");
    assert!(text.contains("Failing: [error: broken]"), "{text}");
    // The command saw `$ARGUMENTS` literally, and its output was not substituted again.
    assert!(text.contains("Literal: $ARGUMENTS\n"), "{text}");
    assert!(text.contains("one\ntwo"), "{text}");
    assert!(text.contains("Topic: billing"), "{text}");
    assert!(!text.contains("ARGUMENTS: billing"), "{text}");
}

#[test]
fn a_provider_is_built_from_configuration_with_filters() {
    let provider = SkillsProvider::from_config(
        &skillbox_core::CatalogOptions {
            roots: vec![skillbox_core::SkillRoot::explicit(
                super::support::repo_root().join("examples/skills"),
            )],
            include: vec!["text*".into(), "csv-insights".into()],
            exclude: vec!["text.stats".into()],
            ..skillbox_core::CatalogOptions::default()
        },
        skillbox_exec::ExecutorConfig {
            helper: None,
            policy: skillbox_exec::SandboxPolicy {
                mode: skillbox_exec::SandboxMode::Off,
                ..skillbox_exec::SandboxPolicy::default()
            },
            timeout: std::time::Duration::from_secs(10),
            max_output_bytes: 64,
            ..skillbox_exec::ExecutorConfig::default()
        },
        ProviderOptions::default(),
    )
    .unwrap();
    assert_eq!(
        provider.catalog().names().collect::<Vec<_>>(),
        vec!["csv-insights", "text-tools"]
    );
    let sample = super::support::repo_root().join("examples/skills/csv-insights/assets/sample.csv");
    let outcome = call(
        &provider,
        "use_skill",
        json!({"skill": "csv-insights", "script": "summarize.py", "args": [sample.display().to_string()]}),
    );
    let stdout = outcome.content["stdout"].as_str().unwrap();
    assert!(
        stdout.ends_with("[output truncated]") && stdout.len() < 100,
        "the output cap applies: {stdout}"
    );
    let missing = SkillsProvider::from_config(
        &skillbox_core::CatalogOptions {
            roots: vec![skillbox_core::SkillRoot::explicit("/no/such/root")],
            ..skillbox_core::CatalogOptions::default()
        },
        skillbox_exec::ExecutorConfig::default(),
        ProviderOptions::default(),
    );
    assert!(missing.unwrap_err().to_string().contains("/no/such/root"));
}

#[test]
fn catalog_answers_are_rendered_once_per_snapshot_and_never_outlive_it() {
    let provider = std::sync::Arc::new(examples_provider(ProviderOptions::default()));
    let ask = |provider: &std::sync::Arc<SkillsProvider>, tool: &str, arguments: Value| {
        runtime().block_on(skillbox_tools::call_once(provider, tool, &arguments))
    };
    let shared = |outcome: &skillbox_tools::ToolOutcome| match &outcome.content {
        skillbox_tools::Content::Rendered(rendered) => std::sync::Arc::clone(rendered),
        other => panic!("not a shared answer: {other:?}"),
    };
    let page = json!({"detail": "summary", "limit": 2});
    let first = ask(&provider, "list_skills", page.clone());
    let second = ask(&provider, "list_skills", page.clone());
    assert!(std::sync::Arc::ptr_eq(&shared(&first), &shared(&second)));
    assert_eq!(
        serde_json::to_string(&*first.content).unwrap(),
        shared(&first).json().get(),
        "the kept text is the answer's own"
    );
    let described = ask(&provider, "describe_skill", json!({"name": "csv-insights"}));
    let again = ask(&provider, "describe_skill", json!({"name": "csv-insights"}));
    assert!(std::sync::Arc::ptr_eq(&shared(&described), &shared(&again)));
    // A miss is answered each time, never kept as an answer.
    let missing = ask(&provider, "describe_skill", json!({"name": "nope"}));
    assert!(missing.is_error());
    // Another snapshot (a reload) answers from its own store.
    let reloaded =
        std::sync::Arc::new(provider.with_catalog(std::sync::Arc::clone(provider.catalog())));
    let third = ask(&reloaded, "list_skills", page);
    assert!(!std::sync::Arc::ptr_eq(&shared(&first), &shared(&third)));
    assert_eq!(*first.content, *third.content);
    // A conversation that unlocked a hidden skill sees it; others never get its answer.
    let unlocked = std::sync::Arc::new(
        provider.with_unlocked(std::iter::once("release-checklist".to_owned()).collect()),
    );
    let hidden = ask(
        &unlocked,
        "describe_skill",
        json!({"name": "release-checklist"}),
    );
    assert!(!hidden.is_error(), "{hidden:?}");
    let from_shared = ask(
        &provider,
        "describe_skill",
        json!({"name": "release-checklist"}),
    );
    assert!(from_shared.is_error(), "{from_shared:?}");
}

#[test]
fn every_failure_of_use_skill_says_its_kind_the_door_policys_refusals_included() {
    use skillbox_services::{RunLimits, Unbudgeted};
    use skillbox_tools::{ApprovalPolicy, CallContext, Door, DoorPolicy, Offer};
    let provider = std::sync::Arc::new(examples_provider(ProviderOptions::default()));
    let call_with = |policy: &DoorPolicy, arguments: Value, deny: bool| {
        let mut budget = Unbudgeted;
        let context = CallContext::new(Door::Cli, Offer::Everything, &mut budget);
        let context = if deny {
            context.with_approval(&ApprovalPolicy::Deny)
        } else {
            context
        };
        runtime().block_on(policy.call(
            &provider,
            "use_skill",
            skillbox_tools::Arguments::from(&arguments),
            context,
        ))
    };
    let run = json!({"skill": "csv-insights", "script": "head.sh"});
    let mut seen = Vec::new();
    let mut record = |case: &str, outcome: skillbox_tools::ToolOutcome| {
        assert!(outcome.is_error(), "{case}: {outcome:?}");
        seen.push(format!(
            "{case}: {} {}",
            outcome.content["errorType"].as_str().unwrap_or("(none)"),
            outcome.content["error"].as_str().unwrap_or("(no message)")
        ));
    };
    let policy = DoorPolicy::default();
    for (case, arguments) in [
        (
            "unknown skill",
            json!({"skill": "nowhere", "script": "run.sh"}),
        ),
        (
            "close name",
            json!({"skill": "csv-insight", "script": "head.sh"}),
        ),
        ("no skill", json!({"script": "head.sh"})),
        ("no script", json!({"skill": "csv-insights"})),
        (
            "bad args",
            json!({"skill": "csv-insights", "script": "head.sh", "args": [{"a": 1}]}),
        ),
        ("not an object", json!([1])),
        (
            "missing script",
            json!({"skill": "csv-insights", "script": "nope.sh"}),
        ),
        (
            "escaping script",
            json!({"skill": "csv-insights", "script": "../text-tools/SKILL.md"}),
        ),
    ] {
        record(case, call_with(&policy, arguments, false));
    }
    record("denied", call_with(&policy, run.clone(), true));
    // A full run queue: one place, none waiting, and it is taken.
    let busy = DoorPolicy::new(RunLimits {
        max_concurrent: 1,
        max_queued: 0,
        ..RunLimits::default()
    });
    let _taken = runtime().block_on(busy.admit()).unwrap();
    record("busy", call_with(&busy, run, false));
    insta::assert_snapshot!(super::support::portable(&seen.join("\n")));
}
