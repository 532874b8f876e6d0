//! Description tuning: the model proposes rewrites of a skill's description from what the
//! train queries did, and each rewrite is judged on held-out queries it never saw. Also the
//! edit that puts a description into a skill's files (a copy for scoring, the skill itself
//! with `--write`).

use std::path::Path;

use sha2::{Digest, Sha256};
use skillbox_agent::{Message, ModelClient, ModelRequest};

use crate::error::EvalError;
use crate::suite::TriggerQuery;

/// Share of each class of trigger queries held out.
pub const HOLDOUT_SHARE: f64 = 0.4;
/// Queries of each class (should, should not) description tuning needs at least.
pub const MIN_QUERIES_PER_CLASS: usize = 2;
/// The longest description the agentskills.io specification allows.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Tokens a proposal may take.
const PROPOSAL_MAX_TOKENS: u32 = 600;
/// Sampling temperature of proposals when none is configured: different candidates need
/// different samples. A configured temperature is used as given (0 for runs that must repeat:
/// each proposal's prompt differs by its number, so candidates still differ).
pub const DEFAULT_PROPOSAL_TEMPERATURE: f32 = 0.9;
/// Characters of the skill's body a proposer sees.
const BODY_CHARS: usize = 3000;

/// The queries split into the ones proposals are based on and the ones they are judged on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuerySplit {
    /// Shown to the proposer, with what they did.
    pub train: Vec<TriggerQuery>,
    /// Used only to judge.
    pub holdout: Vec<TriggerQuery>,
}

/// Split `queries` deterministically: within each class (should trigger, should not), ordered
/// by a digest of the text, the first [`HOLDOUT_SHARE`] (at least one) are held out.
///
/// # Errors
/// A message when a class has fewer than [`MIN_QUERIES_PER_CLASS`] queries.
pub fn split_queries(queries: &[TriggerQuery]) -> Result<QuerySplit, String> {
    let mut split = QuerySplit {
        train: Vec::new(),
        holdout: Vec::new(),
    };
    for class in [true, false] {
        let mut members: Vec<&TriggerQuery> = queries
            .iter()
            .filter(|query| query.should_trigger == class)
            .collect();
        if members.len() < MIN_QUERIES_PER_CLASS {
            return Err(format!(
                "description tuning needs at least {MIN_QUERIES_PER_CLASS} queries that should trigger and {MIN_QUERIES_PER_CLASS} that should not (it holds some out to judge on); `evals/triggers.json` has {} with `should_trigger: {class}`",
                members.len()
            ));
        }
        members.sort_by_key(|query| Sha256::digest(query.query.as_bytes()));
        #[allow(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss
        )]
        let held =
            ((members.len() as f64 * HOLDOUT_SHARE).round() as usize).clamp(1, members.len() - 1);
        for (index, query) in members.into_iter().enumerate() {
            if index < held {
                split.holdout.push(query.clone());
            } else {
                split.train.push(query.clone());
            }
        }
    }
    Ok(split)
}

/// A train query and whether the current description triggered on it.
#[derive(Debug, Clone)]
pub struct TrainOutcome {
    /// The query.
    pub query: TriggerQuery,
    /// The share of runs in which the skill triggered.
    pub trigger_rate: f64,
}

const PROPOSER_SYSTEM: &str = "You improve the description of an agent skill. An AI assistant sees only each skill's name and description when it decides which skill to load for a request, so the description must say what the skill does and when to use it, with the words people actually use, and make clear when not to use it. Answer with the new description only, between <description> and </description>, at most 1024 characters, plain text on one paragraph.";

/// Ask the model for one rewrite of `skill`'s description; `sample` makes each candidate its
/// own request (and cache entry).
///
/// # Errors
/// A message when the model fails or proposes nothing usable.
#[allow(clippy::too_many_arguments)]
pub async fn propose_description(
    client: &dyn ModelClient,
    model: &str,
    temperature: Option<f32>,
    skill: &str,
    current: &str,
    body: &str,
    train: &[TrainOutcome],
    sample: u32,
) -> Result<String, String> {
    let mut lines = Vec::new();
    for outcome in train {
        let verdict = match (outcome.query.should_trigger, outcome.trigger_rate > 0.5) {
            (true, true) => "should use the skill, and did",
            (true, false) => "should use the skill, but did NOT",
            (false, true) => "should NOT use the skill, but did",
            (false, false) => "should not use the skill, and did not",
        };
        lines.push(format!("- \"{}\": {verdict}", outcome.query.query));
    }
    let body: String = body.chars().take(BODY_CHARS).collect();
    let prompt = format!(
        "Skill name: {skill}\n\nCurrent description:\n{current}\n\nThe skill's instructions begin:\n{body}\n\nHow the assistant decided with the current description:\n{}\n\nWrite a better description (proposal {}).",
        lines.join("\n"),
        sample + 1
    );
    let messages = [Message::user(prompt)];
    let request = ModelRequest {
        model,
        system: PROPOSER_SYSTEM,
        messages: &messages,
        tools: &[],
        max_output_tokens: PROPOSAL_MAX_TOKENS,
        temperature: Some(temperature.unwrap_or(DEFAULT_PROPOSAL_TEMPERATURE)),
    };
    let response = client
        .respond(&request, &mut |_| {})
        .await
        .map_err(|error| format!("the model could not be asked: {error}"))?;
    clean_proposal(&response.content)
}

/// The description in a proposal: between the tags when present, else the whole reply; one
/// paragraph, within the specification's length, without angle brackets.
///
/// # Errors
/// A message when nothing usable is left.
pub fn clean_proposal(reply: &str) -> Result<String, String> {
    let inner = match (reply.find("<description>"), reply.find("</description>")) {
        (Some(start), Some(end)) if end > start => &reply[start + "<description>".len()..end],
        (Some(start), None) => &reply[start + "<description>".len()..],
        _ => reply,
    };
    let text = inner
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_matches(|c: char| c == '"' || c == '\'' || c == '`')
        .trim()
        .to_owned();
    if text.is_empty() {
        return Err("the proposal was empty".to_owned());
    }
    // Written into YAML frontmatter, shown in terminals: a control character (DEL, C1) would
    // leave `SKILL.md` unparseable, an escape sequence would rewrite the screen.
    if text.chars().any(skillbox_core::printable::needs_escaping) {
        return Err(format!(
            "the proposal holds {} (a description is plain text)",
            skillbox_core::names::describe_characters(
                &text,
                skillbox_core::printable::needs_escaping
            )
        ));
    }
    if text.contains('<') || text.contains('>') {
        return Err(format!(
            "the proposal has angle brackets (not allowed in a description): {text}"
        ));
    }
    if text.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(format!(
            "the proposal is longer than {MAX_DESCRIPTION_CHARS} characters"
        ));
    }
    Ok(text)
}

/// `SKILL.md`'s text with its frontmatter `description` replaced by `description` (written as
/// a double-quoted YAML scalar; every other line kept as it was).
///
/// # Errors
/// A message when the text has no frontmatter or no `description` in it.
pub fn replace_frontmatter_description(text: &str, description: &str) -> Result<String, String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    if lines.first().map(|line| line.trim_end()) != Some("---") {
        return Err("SKILL.md does not start with `---` frontmatter".to_owned());
    }
    let Some(end) = lines
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, line)| line.trim_end() == "---")
        .map(|(index, _)| index)
    else {
        return Err("SKILL.md's frontmatter has no closing `---`".to_owned());
    };
    let Some(start) = (1..end).find(|&index| {
        lines[index].starts_with("description:") || lines[index].starts_with("\"description\":")
    }) else {
        return Err("SKILL.md's frontmatter has no top-level `description`".to_owned());
    };
    // The value goes on while the lines are indented (a folded or literal block, a plain
    // scalar wrapped over lines) or blank.
    let mut stop = start + 1;
    while stop < end
        && (lines[stop].starts_with(' ')
            || lines[stop].starts_with('\t')
            || lines[stop].trim().is_empty())
    {
        stop += 1;
    }
    let quoted = serde_json::to_string(description).map_err(|error| error.to_string())?;
    let mut out = String::with_capacity(text.len() + description.len());
    for line in &lines[..start] {
        out.push_str(line);
    }
    out.push_str(&format!("description: {quoted}\n"));
    for line in &lines[stop..] {
        out.push_str(line);
    }
    Ok(out)
}

/// `skill.toml`'s text with its `description` replaced (comments and layout kept).
///
/// # Errors
/// A message when the text is not TOML.
pub fn replace_manifest_description(text: &str, description: &str) -> Result<String, String> {
    let mut document: toml_edit::DocumentMut = text.parse().map_err(|error| format!("{error}"))?;
    document["description"] = toml_edit::value(description);
    Ok(document.to_string())
}

/// An edit of a file's text that puts a description in.
type DescriptionEdit = fn(&str, &str) -> Result<String, String>;

/// Write `description` into the skill in `directory`: `skill.toml` when the manifest holds the
/// description, else `SKILL.md`'s frontmatter. `skill_md` names the skill's `SKILL.md`.
///
/// # Errors
/// [`EvalError`] when the file cannot be read, edited or written.
pub fn write_description(
    directory: &Path,
    skill_md: &str,
    in_manifest: bool,
    description: &str,
) -> Result<(), EvalError> {
    let (path, edit): (_, DescriptionEdit) = if in_manifest {
        (directory.join("skill.toml"), replace_manifest_description)
    } else {
        (directory.join(skill_md), replace_frontmatter_description)
    };
    let text = fs_err::read_to_string(&path).map_err(|error| EvalError::io(&path, error))?;
    let edited = edit(&text, description).map_err(|message| EvalError::Suite {
        path: path.clone(),
        message,
    })?;
    skillbox_trust::safe_write::write_file_atomically(
        &path,
        edited.as_bytes(),
        skillbox_trust::safe_write::WriteOptions::SHARED.keeping_existing_mode(),
    )
    .map_err(|error| EvalError::io(&path, error))
}

/// The change from `old` to `new` as a unified diff of the two descriptions, a sentence per
/// line so a change reads at a glance.
#[must_use]
pub fn description_diff(old: &str, new: &str) -> String {
    let sentences = |text: &str| -> String {
        text.split_inclusive(". ")
            .map(|sentence| format!("{}\n", sentence.trim_end()))
            .collect()
    };
    let (old, new) = (sentences(old), sentences(new));
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .header("description (now)", "description (proposed)")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn queries(should: usize, should_not: usize) -> Vec<TriggerQuery> {
        (0..should)
            .map(|index| TriggerQuery {
                query: format!("yes {index}"),
                should_trigger: true,
            })
            .chain((0..should_not).map(|index| TriggerQuery {
                query: format!("no {index}"),
                should_trigger: false,
            }))
            .collect()
    }

    #[test]
    fn the_split_holds_out_each_class_and_never_overlaps() {
        let all = queries(5, 5);
        let split = split_queries(&all).unwrap();
        assert_eq!(split.holdout.len(), 4);
        assert_eq!(split.train.len(), 6);
        for query in &split.holdout {
            assert!(!split.train.contains(query));
        }
        assert!(split.holdout.iter().any(|query| query.should_trigger));
        assert!(split.holdout.iter().any(|query| !query.should_trigger));
        // The same queries in another order split the same way.
        let mut reversed = all.clone();
        reversed.reverse();
        let again = split_queries(&reversed).unwrap();
        let mut first: Vec<_> = split.holdout.iter().map(|query| &query.query).collect();
        let mut second: Vec<_> = again.holdout.iter().map(|query| &query.query).collect();
        first.sort();
        second.sort();
        assert_eq!(first, second);
        assert!(
            split_queries(&queries(1, 5))
                .unwrap_err()
                .contains("at least 2")
        );
    }

    #[test]
    fn proposals_are_cleaned() {
        assert_eq!(
            clean_proposal("Sure!\n<description>Fills PDF forms.\n Use when asked.</description>")
                .unwrap(),
            "Fills PDF forms. Use when asked."
        );
        assert!(clean_proposal("<description></description>").is_err());
        assert!(clean_proposal("<description>use <b>this</b></description>").is_err());
    }

    #[test]
    fn a_hostile_proposal_is_refused_or_stays_one_quoted_description() {
        let refused = clean_proposal("<description>Counts\u{7f} words</description>").unwrap_err();
        assert!(
            refused.contains("U+007F (a control character)"),
            "{refused}"
        );
        assert!(clean_proposal("a\u{1b}]0;title\u{7}b").is_err());
        assert!(clean_proposal("Counts\u{200B}words").is_err());
        let proposal = clean_proposal(
            "<description>Counts words\"\n---\nname: evil\ndescription: 'x' # y: z \\</description>",
        )
        .unwrap();
        let text = replace_frontmatter_description(
            "---\nname: word-count\ndescription: old\n---\nBody.\n",
            &proposal,
        )
        .unwrap();
        let temp = tempfile::tempdir().unwrap();
        std::fs::create_dir(temp.path().join("word-count")).unwrap();
        std::fs::write(temp.path().join("word-count/SKILL.md"), text).unwrap();
        let catalog = skillbox_core::SkillCatalog::load(&skillbox_core::CatalogOptions {
            roots: vec![skillbox_core::SkillRoot::explicit(temp.path())],
            ..skillbox_core::CatalogOptions::default()
        })
        .unwrap();
        let skill = catalog.get("word-count").unwrap();
        assert_eq!(skill.description, proposal);
        assert_eq!(catalog.skills().len(), 1);
    }

    #[test]
    fn the_frontmatter_description_is_replaced_whatever_its_form() {
        let folded = "---\nname: pdf\ndescription: >\n  Old text\n  over lines.\nlicense: MIT\n---\n# Body\ndescription: not this\n";
        assert_eq!(
            replace_frontmatter_description(folded, "New: \"quoted\" text").unwrap(),
            "---\nname: pdf\ndescription: \"New: \\\"quoted\\\" text\"\nlicense: MIT\n---\n# Body\ndescription: not this\n"
        );
        let plain = "---\ndescription: old\nname: x\n---\nbody\n";
        assert_eq!(
            replace_frontmatter_description(plain, "new").unwrap(),
            "---\ndescription: \"new\"\nname: x\n---\nbody\n"
        );
        assert!(replace_frontmatter_description("# no frontmatter\n", "x").is_err());
        assert!(replace_frontmatter_description("---\nname: x\n---\n", "x").is_err());
    }

    #[test]
    fn the_manifest_description_is_replaced_keeping_comments() {
        let text = "# mine\nname = \"a.b\"\ndescription = \"old\" # note\nversion = \"1.0.0\"\n";
        let edited = replace_manifest_description(text, "new").unwrap();
        assert!(edited.contains("# mine"), "{edited}");
        assert!(edited.contains("description = \"new\""), "{edited}");
    }
}
