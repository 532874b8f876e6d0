//! Snapshots of every prompt format and every tool format, and the prompt budget.

use skillbox_tools::{
    FindSkillsOffer, PromptBudget, PromptFormat, ProviderOptions, ToolFormat, ToolProfile,
    render_tools,
};

use super::support::{examples_provider, portable};

#[test]
fn prompt_formats() {
    let provider = examples_provider(ProviderOptions::default());
    for (format, name) in [
        (PromptFormat::Markdown, "markdown"),
        (PromptFormat::Xml, "xml"),
        (PromptFormat::Json, "json"),
    ] {
        let prompt = provider.system_prompt(format);
        assert!(
            !prompt.contains("release-checklist"),
            "person-only skills must not reach the model ({name})"
        );
        insta::assert_snapshot!(format!("prompt_{name}"), portable(&prompt));
    }
}

#[test]
fn tool_formats_for_both_profiles() {
    let provider = examples_provider(ProviderOptions::default());
    for (profile, profile_name) in [
        (ToolProfile::Skills, "skills"),
        (ToolProfile::Protocol, "protocol"),
    ] {
        let tools =
            skillbox_tools::registry::specs(&provider, skillbox_tools::Offer::Profile(profile));
        for (format, format_name) in [
            (ToolFormat::OpenAi, "openai"),
            (ToolFormat::Responses, "responses"),
            (ToolFormat::Anthropic, "anthropic"),
            (ToolFormat::Gemini, "gemini"),
            (ToolFormat::Mcp, "mcp"),
        ] {
            insta::assert_json_snapshot!(
                format!("tools_{profile_name}_{format_name}"),
                render_tools(&tools, format)
            );
        }
    }
}

#[test]
fn budgets_are_honoured_exactly_shortening_then_omitting() {
    let full = examples_provider(ProviderOptions::default()).system_prompt(PromptFormat::Markdown);
    let full_length = full.chars().count();
    for format in [
        PromptFormat::Markdown,
        PromptFormat::Xml,
        PromptFormat::Json,
    ] {
        for limit in [
            full_length + 100,
            full_length - 1,
            full_length * 2 / 3,
            full_length / 3,
            700,
            400,
            50,
        ] {
            let provider = examples_provider(ProviderOptions {
                prompt_budget: PromptBudget {
                    max_chars: Some(limit),
                    max_tokens: None,
                },
                ..ProviderOptions::default()
            });
            let prompt = provider.system_prompt(format);
            assert!(
                prompt.chars().count() <= limit,
                "{format:?} {limit}: {} chars",
                prompt.chars().count()
            );
        }
    }
    // A budget that cannot hold every skill says so and names the way to list them all
    // (with find_skills off; `find_skills.rs` covers the search it offers by default).
    let provider = examples_provider(ProviderOptions {
        prompt_budget: PromptBudget {
            max_chars: Some(520),
            max_tokens: None,
        },
        find_skills: FindSkillsOffer::Never,
        ..ProviderOptions::default()
    });
    let prompt = provider.system_prompt(PromptFormat::Markdown);
    assert!(
        prompt.contains("not listed here") && prompt.contains("list_skills"),
        "{prompt}"
    );
    // A budget a little under the full size keeps every skill with shorter descriptions.
    let provider = examples_provider(ProviderOptions {
        prompt_budget: PromptBudget {
            max_chars: Some(full_length - 60),
            max_tokens: None,
        },
        ..ProviderOptions::default()
    });
    let prompt = provider.system_prompt(PromptFormat::Markdown);
    assert_eq!(
        prompt.matches("\n### ").count(),
        full.matches("\n### ").count()
    );
    assert!(prompt.contains('…'));
    // Tokens are approximated as characters / 4.
    let provider = examples_provider(ProviderOptions {
        prompt_budget: PromptBudget {
            max_chars: None,
            max_tokens: Some(150),
        },
        ..ProviderOptions::default()
    });
    assert!(
        provider
            .system_prompt(PromptFormat::Markdown)
            .chars()
            .count()
            <= 600
    );
}
