//! The run and blob tools through the door policy, on a provider with services over a
//! temporary data folder: real executor, real python3.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use skillbox_services::{DataDir, RunLimits, Services};
use skillbox_tools::{ProviderOptions, SkillsProvider, ToolOutcome};

use super::support::{call, catalog, executor, temp_root, write_tree};

/// An action skill that adds two numbers, a hidden copy of it, and an instruction skill.
const SKILLS: &[(&str, &str)] = &[
    (
        "acme.math.add/skill.toml",
        "name = \"acme.math.add\"\nversion = \"1.0.0\"\ndescription = \"Adds two numbers.\"\nkind = \"action\"\n\n[runtime]\nlanguage = \"python\"\nentrypoint = \"code/main.py\"\nexport = \"main\"\n",
    ),
    (
        "acme.math.add/SKILL.md",
        "---\nname: acme.math.add\ndescription: Adds two numbers.\n---\nAdds.\n",
    ),
    (
        "acme.math.add/code/main.py",
        "def main(args):\n    return {\"sum\": args[\"a\"] + args[\"b\"]}\n",
    ),
    (
        "notes/SKILL.md",
        "---\nname: notes\ndescription: Notes.\n---\nRead me.\n",
    ),
];

/// The hidden skill: runnable, but `disable-model-invocation: true`.
const HIDDEN: &[(&str, &str)] = &[
    (
        "acme.secret.wipe/skill.toml",
        "name = \"acme.secret.wipe\"\nversion = \"1.0.0\"\ndescription = \"Wipes.\"\nkind = \"action\"\n\n[runtime]\nlanguage = \"python\"\nentrypoint = \"code/main.py\"\nexport = \"main\"\n",
    ),
    (
        "acme.secret.wipe/SKILL.md",
        "---\nname: acme.secret.wipe\ndescription: Wipes.\ndisable-model-invocation: true\n---\nWipes.\n",
    ),
    (
        "acme.secret.wipe/code/main.py",
        "def main(args):\n    return \"wiped\"\n",
    ),
];

fn provider_over(root: &Path, data: &Path) -> SkillsProvider {
    let data = DataDir::open(data, skillbox_services::blobs::DEFAULT_BLOB_TTL).unwrap();
    SkillsProvider::new(catalog(&[root]), executor(), ProviderOptions::default())
        .with_services(Arc::new(Services::new(&data, RunLimits::default())))
}

fn answer(outcome: &ToolOutcome) -> &Value {
    assert!(!outcome.is_error(), "{}", outcome.text());
    &outcome.content
}

#[test]
fn run_and_blob_tools_answer_through_a_provider_with_services() {
    let root = temp_root();
    write_tree(root.path(), SKILLS);
    let data = tempfile::tempdir().unwrap();
    let provider = provider_over(root.path(), &data.path().join("data"));

    let executed = call(
        &provider,
        "execute_skill",
        json!({"name": "acme.math.add", "args": {"a": 2, "b": 3}}),
    );
    let run = answer(&executed);
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["output"], json!({"sum": 5}));
    assert!(run["run_id"].as_str().unwrap().starts_with("run_"), "{run}");
    assert!(
        run["summary"]
            .as_str()
            .unwrap()
            .starts_with("`acme.math.add` 1.0.0 completed in "),
        "{run}"
    );

    let created = call(
        &provider,
        "create_blob",
        // Arguments as OpenAI-style APIs send them: a string holding the object.
        Value::String(json!({"content": "one,two\n3,4\n", "kind": "text/csv"}).to_string()),
    );
    let blob_id = answer(&created)["blob_id"].as_str().unwrap().to_owned();
    assert_eq!(created.content["size_bytes"], 12);
    let read = call(
        &provider,
        "read_blob",
        json!({"blob_id": blob_id, "mode": "full"}),
    );
    assert_eq!(answer(&read)["preview"], "one,two\n3,4\n");
    assert_eq!(read.content["kind"], "text/csv");

    let ran = call(
        &provider,
        "run_code",
        json!({
            "language": "python",
            "code": "import runtime\nimport skills.acme.math.add as add\n\ndef main(args):\n    rows = runtime.blobs.read_text(args['blob']).splitlines()\n    with open('out/sum.txt', 'w') as out:\n        out.write(str(add.main({'a': 40, 'b': len(rows)})['sum']))\n    return rows[0]\n",
            "args": {"blob": blob_id},
            "mount_skills": ["acme.math.add"],
            "input_blobs": [blob_id],
        }),
    );
    let run = answer(&ran);
    assert_eq!(
        (&run["status"], &run["output"]),
        (&json!("completed"), &json!("one,two")),
        "{run}"
    );
    // The output file became a blob, readable through the same provider.
    let output = run["output_files"][0]["blob_id"].as_str().unwrap();
    let read = call(&provider, "read_blob", json!({"blob_id": output}));
    assert_eq!(answer(&read)["preview"], "42");

    // A protocol problem is an error result the model can act on, naming the parameter.
    let refused = call(
        &provider,
        "run_code",
        json!({"language": "ruby", "code": "puts 1"}),
    );
    assert!(refused.is_error());
    assert!(
        refused
            .text()
            .contains("parameter `language` must be \\\"python\\\""),
        "{}",
        refused.text()
    );
    let instruction = call(&provider, "execute_skill", json!({"name": "notes"}));
    assert!(
        instruction.is_error() && instruction.text().contains("is an instruction skill"),
        "{}",
        instruction.text()
    );
}

#[test]
fn a_hidden_skill_is_unknown_to_runs_exactly_as_a_missing_one() {
    let with_hidden = temp_root();
    write_tree(with_hidden.path(), SKILLS);
    write_tree(with_hidden.path(), HIDDEN);
    let without = temp_root();
    write_tree(without.path(), SKILLS);
    let data = tempfile::tempdir().unwrap();
    let hiding = provider_over(with_hidden.path(), &data.path().join("hiding"));
    let lacking = provider_over(without.path(), &data.path().join("lacking"));
    for (tool, arguments) in [
        ("execute_skill", json!({"name": "acme.secret.wipe"})),
        (
            "execute_skill",
            json!({"name": "acme.secret.wipe", "version": "1.0.0"}),
        ),
        (
            "run_code",
            json!({"language": "python", "code": "def main(args):\n    return 1\n", "mount_skills": ["acme.secret.wipe"]}),
        ),
    ] {
        let hidden = call(&hiding, tool, arguments.clone());
        let missing = call(&lacking, tool, arguments.clone());
        assert!(hidden.is_error(), "{tool} {arguments}: {}", hidden.text());
        assert!(
            hidden.text().contains("acme.secret.wipe"),
            "{}",
            hidden.text()
        );
        assert_eq!(hidden, missing, "{tool} {arguments}");
    }
}

#[test]
fn without_services_the_run_and_blob_tools_say_how_to_get_them() {
    let root = temp_root();
    write_tree(root.path(), SKILLS);
    let provider = SkillsProvider::new(
        catalog(&[root.path()]),
        executor(),
        ProviderOptions::default(),
    );
    // Each with the parameters it requires: arguments are decoded before anything else.
    for (tool, arguments) in [
        ("execute_skill", json!({"name": "acme.math.add"})),
        ("run_code", json!({"language": "python", "code": "x = 1"})),
        ("create_blob", json!({"content": "x", "kind": "text/plain"})),
        (
            "read_blob",
            json!({"blob_id": "blob:0123456789abcdef0123456789abcdef"}),
        ),
    ] {
        let outcome = call(&provider, tool, arguments);
        assert!(outcome.is_error());
        assert!(
            outcome.text().contains("SkillsProvider::with_services")
                && outcome.text().contains("skillbox call"),
            "{tool}: {}",
            outcome.text()
        );
    }
    // The catalog tools need none.
    let listed = call(&provider, "list_skills", json!({}));
    assert_eq!(
        answer(&listed)["skills"][0]["name"],
        "acme.math.add",
        "{}",
        listed.text()
    );
}
