//! `find_skills`: offered when the prompt budget leaves skills out (or always, or never),
//! answered by the one dispatcher, never returning skills hidden from models, and clear about
//! every bad argument.

use serde_json::{Value, json};
use skillbox_tools::{
    FindSkillsOffer, PromptBudget, PromptFormat, ProviderOptions, SkillsProvider, ToolProfile,
};

use crate::support::{call, catalog, executor, temp_root, write_tree};

/// Forty generated skills about data formats, a GIF maker, and one skill hidden from models.
fn library(options: ProviderOptions) -> (tempfile::TempDir, SkillsProvider) {
    let root = temp_root();
    let mut files: Vec<(String, String)> = (0..40)
        .map(|n| {
            (
                format!("csv-tool-{n}/SKILL.md"),
                format!(
                    "---\nname: csv-tool-{n}\ndescription: Clean and merge CSV exports number {n} into one spreadsheet.\n---\nUse the helper.\n"
                ),
            )
        })
        .collect();
    files.push((
        "gif-maker/SKILL.md".into(),
        "---\nname: gif-maker\ndescription: Make animated GIFs for chat reactions.\n---\n# GIFs\n"
            .into(),
    ));
    files.push((
        "release-gif/SKILL.md".into(),
        "---\nname: release-gif\ndescription: Publish the animated GIF release notes.\ndisable-model-invocation: true\n---\nBody.\n".into(),
    ));
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    write_tree(root.path(), &borrowed);
    let provider = SkillsProvider::new(catalog(&[root.path()]), executor(), options);
    (root, provider)
}

fn budget(max_chars: usize) -> ProviderOptions {
    ProviderOptions {
        prompt_budget: PromptBudget {
            max_chars: Some(max_chars),
            max_tokens: None,
        },
        ..ProviderOptions::default()
    }
}

fn tool_names(provider: &SkillsProvider) -> Vec<String> {
    skillbox_tools::registry::specs(
        provider,
        skillbox_tools::Offer::Profile(ToolProfile::Skills),
    )
    .into_iter()
    .map(|tool| tool.name)
    .collect()
}

#[test]
fn offered_when_the_budget_leaves_skills_out_and_the_prompt_says_so() {
    let (_root, provider) = library(budget(1_500));
    assert!(provider.offers_find_skills());
    assert!(tool_names(&provider).contains(&"find_skills".to_owned()));
    let offered = skillbox_tools::registry::lookup(
        &provider,
        skillbox_tools::Offer::Profile(ToolProfile::Skills),
        "find_skills",
    )
    .expect("find_skills is offered");
    assert!(!offered.runs_code(&provider));
    for format in [
        PromptFormat::Markdown,
        PromptFormat::Xml,
        PromptFormat::Json,
    ] {
        let prompt = provider.system_prompt(format);
        assert!(prompt.chars().count() <= 1_500, "{format:?}");
        assert!(prompt.contains("call find_skills"), "{format:?}: {prompt}");
        assert!(!prompt.contains("list_skills"), "{format:?}: {prompt}");
    }
}

#[test]
fn not_offered_when_every_skill_fits_unless_asked_for() {
    let (_root, provider) = library(ProviderOptions::default());
    assert!(!provider.offers_find_skills());
    assert!(!tool_names(&provider).contains(&"find_skills".to_owned()));
    let (_root, provider) = library(budget(1_000_000));
    assert!(!provider.offers_find_skills());

    let (_root, always) = library(ProviderOptions {
        find_skills: FindSkillsOffer::Always,
        ..ProviderOptions::default()
    });
    assert!(tool_names(&always).contains(&"find_skills".to_owned()));

    let (_root, never) = library(ProviderOptions {
        find_skills: FindSkillsOffer::Never,
        ..budget(1_500)
    });
    assert!(!tool_names(&never).contains(&"find_skills".to_owned()));
    let prompt = never.system_prompt(PromptFormat::Markdown);
    assert!(prompt.contains("list_skills") && !prompt.contains("find_skills"));
    // The dispatcher answers it even when it is not offered (for `skillbox call` and /rpc).
    let outcome = call(&never, "find_skills", json!({"query": "animated gif"}));
    assert!(!outcome.is_error(), "{}", outcome.text());
}

#[test]
fn finds_the_skill_with_its_description_and_a_hint_to_load_it() {
    let (_root, provider) = library(budget(1_500));
    let outcome = call(
        &provider,
        "find_skills",
        json!({"query": "make an animated GIF", "limit": 3}),
    );
    assert!(!outcome.is_error(), "{}", outcome.text());
    let skills = outcome.content["skills"].as_array().unwrap();
    assert_eq!(skills[0]["name"], "gif-maker");
    assert_eq!(
        skills[0]["description"],
        "Make animated GIFs for chat reactions."
    );
    assert!(skills[0]["score"].as_f64().unwrap() > 0.0);
    assert!(
        outcome.content["hint"]
            .as_str()
            .unwrap()
            .contains("load_skill")
    );
    // Arguments as a JSON string, as OpenAI-style APIs send them.
    let outcome = call(
        &provider,
        "find_skills",
        Value::String(r#"{"query": "merge csv spreadsheet", "limit": 50}"#.into()),
    );
    let skills = outcome.content["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 40);
    assert_eq!(outcome.content["matched"], 40);
}

#[test]
fn skills_hidden_from_models_are_never_returned() {
    let (_root, provider) = library(budget(1_500));
    for query in [
        "release-gif",
        "publish animated gif release notes",
        "release",
    ] {
        let outcome = call(
            &provider,
            "find_skills",
            json!({"query": query, "limit": 50}),
        );
        assert!(
            !outcome.text().contains("release-gif"),
            "{query}: {}",
            outcome.text()
        );
    }
}

#[test]
fn bad_arguments_get_errors_naming_the_parameter() {
    let (_root, provider) = library(budget(1_500));
    let error = |arguments: Value| {
        let outcome = call(&provider, "find_skills", arguments);
        assert!(outcome.is_error(), "{}", outcome.text());
        outcome.text()
    };
    assert!(error(json!({})).contains("missing required parameter `query`"));
    assert!(error(json!({"query": 7})).contains("parameter `query` must be a string"));
    assert!(error(json!({"query": ""})).contains("the query is empty"));
    assert!(error(json!({"query": "the of and"})).contains("no words to search for"));
    assert!(error(json!({"query": "x".repeat(100 * 1024)})).contains("at most 4096"));
    for limit in [json!(0), json!(51), json!(-1), json!("5"), json!(2.5)] {
        assert!(
            error(json!({"query": "gif", "limit": limit})).contains("parameter `limit`"),
            "{limit}"
        );
    }
    // Control characters and other scripts are words or separators, never a failure.
    let outcome = call(
        &provider,
        "find_skills",
        json!({"query": "\u{0}gif\u{1b}[0m"}),
    );
    assert_eq!(outcome.content["skills"][0]["name"], "gif-maker");
    for query in ["動画 GIF 作成", "создать анимированный GIF"] {
        let outcome = call(&provider, "find_skills", json!({"query": query}));
        assert!(!outcome.is_error(), "{query}: {}", outcome.text());
        assert_eq!(outcome.content["skills"][0]["name"], "gif-maker", "{query}");
    }
    let outcome = call(&provider, "find_skills", json!({"query": "ελληνικά"}));
    assert!(!outcome.is_error());
    assert_eq!(outcome.content["skills"], json!([]));
    assert!(
        outcome.content["hint"]
            .as_str()
            .unwrap()
            .contains("Try other words")
    );
}

#[test]
fn a_catalog_of_one_name_finds_it_after_a_reload() {
    let root = temp_root();
    write_tree(
        root.path(),
        &[(
            "notes/SKILL.md",
            "---\nname: notes\ndescription: Keep meeting notes.\n---\nBody.\n",
        )],
    );
    let provider = SkillsProvider::new(
        catalog(&[root.path()]),
        executor(),
        ProviderOptions::default(),
    );
    let found = |provider: &SkillsProvider, query: &str| {
        call(provider, "find_skills", json!({ "query": query })).content["skills"]
            .as_array()
            .map_or(0, Vec::len)
    };
    assert_eq!(found(&provider, "meeting"), 1);
    write_tree(
        root.path(),
        &[(
            "notes/SKILL.md",
            "---\nname: notes\ndescription: Draft release announcements.\n---\nBody.\n",
        )],
    );
    let reloaded = provider.with_catalog(catalog(&[root.path()]));
    assert_eq!(found(&reloaded, "meeting"), 0);
    assert_eq!(found(&reloaded, "announcements"), 1);
}

#[test]
fn the_answer_a_model_reads() {
    let (_root, provider) = library(budget(1_500));
    let outcome = call(
        &provider,
        "find_skills",
        json!({"query": "animated gif for chat", "limit": 2}),
    );
    insta::assert_json_snapshot!(outcome.content);
}
