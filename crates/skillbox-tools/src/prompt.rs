//! The system-prompt section that tells a model which skills exist: markdown (seed 002's
//! "Available Skills"), XML (byte-identical to `skills-ref to-prompt`), or JSON. A budget in
//! characters is honoured exactly: descriptions are shortened first, then skills left out, and
//! the prompt then says that more exist and how to list them.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use skillbox_core::{Skill, SkillFormat};

/// Prompt formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptFormat {
    /// Seed 002's markdown section.
    Markdown,
    /// `<available_skills>` as skills-ref renders it.
    Xml,
    /// A JSON object.
    Json,
}

impl PromptFormat {
    /// Parse a format name as used on the command line.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "markdown" | "md" => Some(PromptFormat::Markdown),
            "xml" => Some(PromptFormat::Xml),
            "json" => Some(PromptFormat::Json),
            _ => None,
        }
    }
}

/// A size limit for the prompt section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PromptBudget {
    /// Most characters (Unicode scalar values).
    pub max_chars: Option<usize>,
    /// Most tokens, approximated as characters / 4 (rounded up).
    pub max_tokens: Option<usize>,
}

impl PromptBudget {
    /// The character limit the budget amounts to.
    #[must_use]
    pub fn char_limit(&self) -> Option<usize> {
        let from_tokens = self.max_tokens.map(|tokens| tokens.saturating_mul(4));
        match (self.max_chars, from_tokens) {
            (Some(chars), Some(tokens)) => Some(chars.min(tokens)),
            (chars, tokens) => chars.or(tokens),
        }
    }
}

/// Characters a description is shortened to at least before skills are left out instead.
const SHORTEST_DESCRIPTION: usize = 40;

/// Approximate tokens of a text (characters / 4, rounded up).
#[must_use]
pub fn approximate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// What one skill contributes to the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    name: String,
    description: String,
    location: PathBuf,
    argument_hint: Option<String>,
}

impl Entry {
    fn from_skill(skill: &Skill) -> Self {
        // skills-ref prints the frontmatter name as written (trimmed), not normalised.
        let name = match skill.format {
            SkillFormat::AgentSkill => skill
                .properties
                .name
                .clone()
                .unwrap_or_else(|| skill.id.name.clone()),
            SkillFormat::SkillsProtocol => skill.id.name.clone(),
        };
        // Resolved once per loaded skill: a 1,000-skill section rendered in 2.8 ms resolving
        // every path again, 0.4 ms with the cached one (bench/agent.sh's splits).
        let location = skill.resolved_skill_md_path().clone();
        Entry {
            name,
            description: skill.description.clone(),
            location,
            argument_hint: skill.properties.argument_hint.clone(),
        }
    }
}

/// How the prompt tells a model to reach the skills the budget leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OmittedSkillsHint {
    /// Call `load_skill` with `list_skills: true` to list every skill.
    #[default]
    ListSkills,
    /// Call `find_skills` with words that describe the task.
    FindSkills,
}

/// Skills left out of a prompt, and the hint that says how to reach them.
#[derive(Debug, Clone, Copy)]
struct Omitted {
    count: usize,
    hint: OmittedSkillsHint,
}

/// Render the prompt for the skills a model may invoke (callers pass only those).
#[must_use]
pub fn render_prompt(skills: &[Arc<Skill>], format: PromptFormat, budget: PromptBudget) -> String {
    render_prompt_hinting(skills, format, budget, OmittedSkillsHint::ListSkills)
}

/// [`render_prompt`], saying `hint` about the skills the budget leaves out.
#[must_use]
pub fn render_prompt_hinting(
    skills: &[Arc<Skill>],
    format: PromptFormat,
    budget: PromptBudget,
    hint: OmittedSkillsHint,
) -> String {
    let entries = entries_of(skills);
    match budget.char_limit() {
        None => render(&entries, format, Omitted { count: 0, hint }, None),
        Some(limit) => render_within(&entries, format, limit, hint),
    }
}

/// What each skill contributes to the prompt.
fn entries_of(skills: &[Arc<Skill>]) -> Vec<Entry> {
    skills
        .iter()
        .map(|skill| Entry::from_skill(skill))
        .collect()
}

/// Whether the budget leaves any of `skills` out of the prompt in some format: when every
/// description cut to the shortest length still does not fit.
#[must_use]
pub fn budget_leaves_skills_out(skills: &[Arc<Skill>], budget: PromptBudget) -> bool {
    let Some(limit) = budget.char_limit() else {
        return false;
    };
    let entries = entries_of(skills);
    let none = Omitted {
        count: 0,
        hint: OmittedSkillsHint::ListSkills,
    };
    let cap = Some(SHORTEST_DESCRIPTION);
    [
        PromptFormat::Markdown,
        PromptFormat::Xml,
        PromptFormat::Json,
    ]
    .into_iter()
    .any(|format| render(&entries, format, none, cap).chars().count() > limit)
}

/// The prompt of `entries` in at most `limit` characters.
fn render_within(
    entries: &[Entry],
    format: PromptFormat,
    limit: usize,
    hint: OmittedSkillsHint,
) -> String {
    let left = |count: usize| Omitted { count, hint };
    let full = render(entries, format, left(0), None);
    if full.chars().count() <= limit {
        return full;
    }
    // Shorten descriptions: the longest cap that fits, found by bisection.
    let longest = longest_description(entries);
    let fits = |cap: usize, shown: usize| {
        render(
            &entries[..shown],
            format,
            left(entries.len() - shown),
            Some(cap),
        )
        .chars()
        .count()
            <= limit
    };
    if fits(SHORTEST_DESCRIPTION.min(longest), entries.len()) {
        let (mut low, mut high) = (SHORTEST_DESCRIPTION.min(longest), longest);
        while low < high {
            let middle = (low + high).div_ceil(2);
            if fits(middle, entries.len()) {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        return render(entries, format, left(0), Some(low));
    }
    // Then leave skills out, from the end: the most skills that fit with the note, found by
    // bisection. The length grows with the number shown (a skill's lines are longer than
    // anything the note's count can save), so this is the linear search's answer in
    // O(n log n) instead of O(n²).
    let cap = Some(SHORTEST_DESCRIPTION);
    let fits_shown = |shown: usize| {
        render(&entries[..shown], format, left(entries.len() - shown), cap)
            .chars()
            .count()
            <= limit
    };
    if !fits_shown(0) {
        return String::new();
    }
    // `low` fits; every skill shown does not (the check above with the shortest cap).
    let (mut low, mut high) = (0, entries.len() - 1);
    while low < high {
        let middle = (low + high).div_ceil(2);
        if fits_shown(middle) {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    render(&entries[..low], format, left(entries.len() - low), cap)
}

/// Characters of the longest description.
fn longest_description(entries: &[Entry]) -> usize {
    entries
        .iter()
        .map(|entry| entry.description.chars().count())
        .max()
        .unwrap_or(0)
}

fn shorten(text: &str, cap: Option<usize>) -> String {
    match cap {
        Some(cap) if text.chars().count() > cap => {
            let mut cut: String = text.chars().take(cap.saturating_sub(1)).collect();
            cut.push('…');
            cut
        }
        _ => text.to_owned(),
    }
}

fn render(entries: &[Entry], format: PromptFormat, omitted: Omitted, cap: Option<usize>) -> String {
    match format {
        PromptFormat::Markdown => render_markdown(entries, omitted, cap),
        PromptFormat::Xml => render_xml(entries, omitted, cap),
        PromptFormat::Json => render_json(entries, omitted, cap),
    }
}

fn more_note(omitted: Omitted) -> String {
    let count = omitted.count;
    let are = if count == 1 { " is" } else { "s are" };
    match omitted.hint {
        OmittedSkillsHint::ListSkills => format!(
            "{count} more skill{are} not listed here; call load_skill with {{\"list_skills\": true}} to see every skill."
        ),
        OmittedSkillsHint::FindSkills => format!(
            "{count} more skill{are} not listed here; when none above fits the task, call find_skills with a few words that describe it, then load_skill with the name it returns."
        ),
    }
}

fn render_markdown(entries: &[Entry], omitted: Omitted, cap: Option<usize>) -> String {
    let mut text = String::from(
        "## Available Skills\n\nYou have access to skills that help you perform specific tasks. Each skill has instructions and scripts you can run.\n\nTo use a skill:\n1. Call load_skill to read its instructions\n2. Follow the instructions, calling use_skill to run scripts as directed\n",
    );
    for entry in entries {
        text.push_str(&format!(
            "\n### {}\n{}\n",
            entry.name,
            shorten(&entry.description, cap)
        ));
        if let Some(hint) = &entry.argument_hint {
            text.push_str(&format!("Arguments: {hint}\n"));
        }
    }
    if omitted.count > 0 {
        text.push_str(&format!("\n{}\n", more_note(omitted)));
    }
    text
}

/// Python's `html.escape(text, quote=True)`, appended to `out`.
fn push_html_escaped(out: &mut String, text: &str) {
    push_escaped(out, text, true);
}

/// A location as XML text: `&`, `<` and `>` escaped, so that no folder name can close
/// `</location>` or `</available_skills>`. skills-ref prints the path raw; quotes stay as they
/// are, so the output is the same as skills-ref's for every path without those three.
fn push_location_escaped(out: &mut String, location: &str) {
    push_escaped(out, location, false);
}

fn push_escaped(out: &mut String, text: &str, quotes: bool) {
    let special: &[char] = if quotes {
        &['&', '<', '>', '"', '\'']
    } else {
        &['&', '<', '>']
    };
    if !text.contains(special) {
        out.push_str(text);
        return;
    }
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if quotes => out.push_str("&quot;"),
            '\'' if quotes => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
fn html_escape(text: &str) -> String {
    let mut out = String::new();
    push_html_escaped(&mut out, text);
    out
}

fn render_xml(entries: &[Entry], omitted: Omitted, cap: Option<usize>) -> String {
    let estimate: usize = entries
        .iter()
        .map(|entry| {
            90 + entry.name.len() + entry.description.len() + entry.location.as_os_str().len()
        })
        .sum();
    let mut out = String::with_capacity(estimate + 64);
    out.push_str("<available_skills>");
    for entry in entries {
        out.push_str("\n<skill>\n<name>\n");
        push_html_escaped(&mut out, &entry.name);
        out.push_str("\n</name>\n<description>\n");
        match cap {
            Some(_) => push_html_escaped(&mut out, &shorten(&entry.description, cap)),
            None => push_html_escaped(&mut out, &entry.description),
        }
        out.push_str("\n</description>\n<location>\n");
        push_location_escaped(&mut out, &entry.location.to_string_lossy());
        out.push_str("\n</location>\n</skill>");
    }
    if omitted.count > 0 {
        out.push_str(&format!("\n<!-- {} -->", more_note(omitted)));
    }
    out.push_str("\n</available_skills>");
    out
}

fn render_json(entries: &[Entry], omitted: Omitted, cap: Option<usize>) -> String {
    let skills: Vec<serde_json::Value> = entries
        .iter()
        .map(|entry| {
            let mut value = json!({
                "name": entry.name,
                "description": shorten(&entry.description, cap),
                "location": entry.location,
            });
            if let Some(hint) = &entry.argument_hint {
                value["argument_hint"] = json!(hint);
            }
            value
        })
        .collect();
    let mut document = json!({ "skills": skills });
    if omitted.count > 0 {
        document["omitted"] = json!(omitted.count);
        document["note"] = json!(more_note(omitted));
    }
    serde_json::to_string_pretty(&document).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escape_matches_python() {
        assert_eq!(
            html_escape("a & <b> \"c\" 'd'"),
            "a &amp; &lt;b&gt; &quot;c&quot; &#x27;d&#x27;"
        );
    }

    /// The budget's bisection gives what the search one skill at a time gave, for every limit.
    #[test]
    fn bisection_matches_the_linear_search() {
        let entries: Vec<Entry> = (0..7)
            .map(|index| Entry {
                name: format!("skill-{index}"),
                description: "d".repeat(10 + index * 13),
                location: PathBuf::from(format!("/skills/skill-{index}/SKILL.md")),
                argument_hint: (index % 3 == 0).then(|| "<x>".to_owned()),
            })
            .collect();
        let left = |count| Omitted {
            count,
            hint: OmittedSkillsHint::ListSkills,
        };
        let linear = |format: PromptFormat, limit: usize| {
            let full = render(&entries, format, left(0), None);
            if full.chars().count() <= limit {
                return full;
            }
            let longest = longest_description(&entries);
            for cap in (SHORTEST_DESCRIPTION.min(longest)..=longest).rev() {
                let text = render(&entries, format, left(0), Some(cap));
                if text.chars().count() <= limit {
                    return text;
                }
            }
            for shown in (0..entries.len()).rev() {
                let cap = Some(SHORTEST_DESCRIPTION);
                let text = render(&entries[..shown], format, left(entries.len() - shown), cap);
                if text.chars().count() <= limit {
                    return text;
                }
            }
            String::new()
        };
        for format in [
            PromptFormat::Markdown,
            PromptFormat::Xml,
            PromptFormat::Json,
        ] {
            let full = render(&entries, format, left(0), None).chars().count();
            for limit in (0..=full + 1).step_by(7) {
                assert_eq!(
                    render_within(&entries, format, limit, OmittedSkillsHint::ListSkills),
                    linear(format, limit),
                    "{format:?} {limit}"
                );
            }
        }
    }

    #[test]
    fn budget_from_tokens() {
        let budget = PromptBudget {
            max_chars: Some(1000),
            max_tokens: Some(100),
        };
        assert_eq!(budget.char_limit(), Some(400));
        assert_eq!(approximate_tokens("abcde"), 2);
    }
}
