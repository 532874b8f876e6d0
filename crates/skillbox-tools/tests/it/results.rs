//! Built-in tools' results are typed: the tools whose answers are objects of a fixed shape
//! list an output schema (MCP's `outputSchema`, pinned here as clients read it), and what they
//! answer through the door policy matches it, for every shape a result takes.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use skillbox_services::{DataDir, RunLimits, Services};
use skillbox_tools::registry::{self, Offer};
use skillbox_tools::{ProviderOptions, SkillsProvider};

use super::support::{call, catalog, executor, repo_root, temp_root, write_tree};

/// A skill with a script that prints, a reference and a binary file.
const SKILLS: &[(&str, &str)] = &[
    (
        "echo/SKILL.md",
        "---\nname: echo\ndescription: Says things back.\nargument-hint: what to say\n---\nRun scripts/say.py.\n",
    ),
    (
        "echo/scripts/say.py",
        "import sys\nprint(' '.join(sys.argv[1:]))\n",
    ),
    ("echo/references/notes.md", "# Notes\n"),
    ("echo/assets/blob.bin", "\u{0}\u{1}\u{2}"),
];

fn provider(root: &Path, data: &Path, tools_root: &Path) -> SkillsProvider {
    let data = DataDir::open(data, skillbox_services::blobs::DEFAULT_BLOB_TTL).unwrap();
    SkillsProvider::new(
        catalog(&[&repo_root().join("examples/skills"), root]),
        executor(),
        ProviderOptions {
            define_tools: true,
            session_tools_root: tools_root.to_path_buf(),
            ..ProviderOptions::default()
        },
    )
    .with_services(Arc::new(Services::new(&data, RunLimits::default())))
}

fn output_schema(provider: &SkillsProvider, tool: &str) -> Option<Value> {
    registry::lookup(provider, Offer::Everything, tool)
        .unwrap()
        .output_schema()
        .cloned()
}

#[test]
fn the_output_schemas_clients_read() {
    let (root, data, tools) = (temp_root(), tempfile::tempdir().unwrap(), temp_root());
    let provider = provider(root.path(), data.path(), tools.path());
    let schemas: serde_json::Map<String, Value> = registry::offered(&provider, Offer::Everything)
        .iter()
        .filter(|tool| matches!(tool, skillbox_tools::ToolRef::Builtin(_)))
        .map(|tool| {
            let schema = tool.output_schema().cloned().unwrap_or(Value::Null);
            (tool.name().to_owned(), schema)
        })
        .collect();
    insta::assert_json_snapshot!(schemas);
}

#[test]
fn every_answer_of_a_tool_with_an_output_schema_matches_it() {
    let (root, data, tools) = (temp_root(), tempfile::tempdir().unwrap(), temp_root());
    write_tree(root.path(), SKILLS);
    let provider = provider(root.path(), data.path(), tools.path());
    let blob = call(
        &provider,
        "create_blob",
        json!({"content": "hello blob", "kind": "text/plain"}),
    );
    let blob_id = blob.content["blob_id"].as_str().unwrap().to_owned();
    let binary = call(
        &provider,
        "create_blob",
        json!({"content": "AAEC/w==", "kind": "application/octet-stream", "encoding": "base64"}),
    );
    let binary_id = binary.content["blob_id"].as_str().unwrap().to_owned();
    let calls = [
        (
            "use_skill",
            json!({"skill": "echo", "script": "scripts/say.py", "args": ["hi"]}),
            true,
        ),
        // A failure is the same result, with its kind.
        (
            "use_skill",
            json!({"skill": "echo", "script": "scripts/nope.py"}),
            false,
        ),
        (
            "read_skill_file",
            json!({"skill": "echo", "path": "references/notes.md"}),
            true,
        ),
        (
            "read_skill_file",
            json!({"skill": "echo", "path": "assets/blob.bin"}),
            true,
        ),
        ("find_skills", json!({"query": "say things back"}), true),
        (
            "find_skills",
            json!({"query": "nothing matches zzqx"}),
            true,
        ),
        ("list_skills", json!({}), true),
        (
            "list_skills",
            json!({"detail": "summary", "limit": 2}),
            true,
        ),
        (
            "describe_skill",
            json!({"name": "text.stats", "detail": "manifest"}),
            true,
        ),
        ("describe_skill", json!({"name": "echo"}), true),
        (
            "describe_skill",
            json!({"skill": "echo", "detail": "full"}),
            true,
        ),
        ("load_skills_protocol_guide", json!({}), true),
        (
            "read_blob",
            json!({"blob_id": blob_id, "max_bytes": 5}),
            true,
        ),
        (
            "read_blob",
            json!({"blob_id": blob_id, "mode": "sample_tail"}),
            true,
        ),
        (
            "read_blob",
            json!({"blob_id": binary_id, "mode": "full"}),
            true,
        ),
        (
            "define_tool",
            json!({"name": "double_it", "description": "Double it", "code": "return args.n * 2;"}),
            true,
        ),
        ("remove_tool", json!({"name": "double_it"}), true),
    ];
    for (tool, arguments, succeeds) in calls {
        let schema = output_schema(&provider, tool).unwrap_or_else(|| panic!("{tool}"));
        let outcome = call(&provider, tool, arguments.clone());
        assert_eq!(
            outcome.is_error(),
            !succeeds,
            "{tool} {arguments}: {}",
            outcome.text()
        );
        let validator = jsonschema::validator_for(&schema).unwrap();
        if let Err(error) = validator.validate(&outcome.content) {
            panic!(
                "{tool} {arguments}: {error}\n{}\n{schema:#}",
                outcome.text()
            );
        }
    }
    let created = output_schema(&provider, "create_blob").unwrap();
    for outcome in [&blob, &binary] {
        assert!(!outcome.is_error(), "{}", outcome.text());
        jsonschema::validator_for(&created)
            .unwrap()
            .validate(&outcome.content)
            .unwrap();
    }
    // Text, text or a list, and the Run object have none.
    for tool in ["load_skill", "execute_skill", "run_code", "count_words"] {
        assert_eq!(output_schema(&provider, tool), None, "{tool}");
    }
}

/// The schema rejects what a tool does not answer: it constrains the answer, it is not `true`.
#[test]
fn an_output_schema_rejects_an_answer_of_another_shape() {
    let (root, data, tools) = (temp_root(), tempfile::tempdir().unwrap(), temp_root());
    let provider = provider(root.path(), data.path(), tools.path());
    let schema = output_schema(&provider, "use_skill").unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&json!({
        "success": true, "stdout": "", "stderr": "", "exitCode": 0, "durationMs": 1, "sandbox": "none"
    })));
    for wrong in [
        json!({"success": "yes", "stdout": "", "stderr": "", "exitCode": 0, "durationMs": 1, "sandbox": "none"}),
        json!({"stdout": "", "stderr": "", "exitCode": 0, "durationMs": 1, "sandbox": "none"}),
        json!({"success": true, "stdout": "", "stderr": "", "exitCode": 0, "durationMs": 1, "sandbox": "some"}),
        json!("text"),
    ] {
        assert!(!validator.is_valid(&wrong), "{wrong}");
    }
}
