//! Grading a task run's expectations: checks that need no model (text, patterns, JSON, calls,
//! files, a command in the sandbox), and a judge model for the sentences, reported as judged.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use skillbox_agent::{Message, ModelClient, ModelRequest};
use skillbox_tools::SkillsProvider;

use crate::output_files::{OutputEntry, inspect_output};
use crate::suite::{Check, CheckKind, Expectation};
use crate::task::TaskRun;

/// The file in a run's outputs folder holding the answer, for `command` checks.
pub const ANSWER_FILE: &str = ".skillbox-answer.txt";
/// Mode of [`ANSWER_FILE`].
const ANSWER_FILE_MODE: u32 = 0o644;
/// How a `command` check names the skill's folder at the start of an argument.
pub const SKILL_FOLDER_PLACEHOLDER: &str = "{skill}";
/// Time a `command` check may take.
const COMMAND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
/// Characters of evidence kept.
const EVIDENCE_CHARS: usize = 400;
/// Tokens the judge may answer with.
const JUDGE_MAX_TOKENS: u32 = 300;
/// Characters of the answer and of the calls the judge sees.
const JUDGE_ANSWER_CHARS: usize = 12_000;

/// One graded expectation, in skill-creator's `grading.json` shape plus who graded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GradedExpectation {
    /// The expectation as reports show it.
    pub text: String,
    /// Whether the run met it.
    pub passed: bool,
    /// Why.
    pub evidence: String,
    /// `check` (no model) or `judge:<model>`.
    pub graded_by: String,
}

/// The model that grades sentences.
#[derive(Clone)]
pub struct Judge {
    /// The client (cached like every other request).
    pub client: Arc<dyn ModelClient>,
    /// The model's name.
    pub model: String,
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

fn cut(text: &str, most: usize) -> String {
    let mut kept: String = text.chars().take(most).collect();
    if kept.len() < text.len() {
        kept.push('…');
    }
    kept
}

/// Grade every expectation of a run. `skill` is the skill under test (its folder is readable
/// to `command` checks, whose code runs in its sandbox).
pub async fn grade(
    expectations: &[Expectation],
    run: &TaskRun,
    provider: &SkillsProvider,
    skill: &str,
    judge: &Judge,
) -> Vec<GradedExpectation> {
    let mut graded = Vec::with_capacity(expectations.len());
    for expectation in expectations {
        graded.push(match expectation {
            Expectation::Judged(text) => judge_sentence(text, run, judge).await,
            Expectation::Check(check) => {
                let (passed, evidence) = run_check(check, run, provider, skill).await;
                GradedExpectation {
                    text: check.text(),
                    passed,
                    evidence: cut(&evidence, EVIDENCE_CHARS),
                    graded_by: "check".to_owned(),
                }
            }
        });
    }
    graded
}

/// The first JSON object or array in `text`: the whole text, a fenced block, or the first
/// `{`/`[` that starts a value.
fn first_json(text: &str) -> Option<serde_json::Value> {
    if let Ok(value) = serde_json::from_str(text.trim()) {
        return Some(value);
    }
    for (at, character) in text.char_indices() {
        if character == '{' || character == '[' {
            let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter();
            if let Some(Ok(value)) = values.next() {
                return Some(value);
            }
        }
    }
    None
}

async fn run_check(
    check: &Check,
    run: &TaskRun,
    provider: &SkillsProvider,
    skill: &str,
) -> (bool, String) {
    let answer = &run.answer;
    let fold = |text: &str| {
        if check.ignore_case {
            text.to_lowercase()
        } else {
            text.to_owned()
        }
    };
    let no_answer = || {
        run.error.clone().map_or_else(
            || "the model gave no answer".to_owned(),
            |error| format!("the run failed: {error}"),
        )
    };
    match &check.kind {
        CheckKind::Contains(wanted) => {
            let found = fold(answer).contains(&fold(wanted));
            let evidence = if found {
                format!("found in the answer: `{wanted}`")
            } else if answer.is_empty() {
                no_answer()
            } else {
                format!("not in the answer, which begins: {}", cut(answer, 200))
            };
            (found, evidence)
        }
        CheckKind::NotContains(unwanted) => {
            let found = fold(answer).contains(&fold(unwanted));
            let evidence = if found {
                format!("the answer contains `{unwanted}`")
            } else {
                "absent from the answer".to_owned()
            };
            (
                !found && !answer.is_empty(),
                if answer.is_empty() {
                    no_answer()
                } else {
                    evidence
                },
            )
        }
        CheckKind::Regex(pattern) => match regex::Regex::new(pattern) {
            Ok(regex) => match regex.find(answer) {
                Some(found) => (true, format!("matched `{}`", found.as_str())),
                None if answer.is_empty() => (false, no_answer()),
                None => (
                    false,
                    format!("no match in the answer, which begins: {}", cut(answer, 200)),
                ),
            },
            Err(error) => (false, format!("the pattern does not compile: {error}")),
        },
        CheckKind::JsonPointer { pointer, equals } => match first_json(answer) {
            Some(value) => match value.pointer(pointer) {
                Some(found) if found == equals => (true, format!("`{pointer}` is {found}")),
                Some(found) => (false, format!("`{pointer}` is {found}, not {equals}")),
                None => (
                    false,
                    format!("the answer's JSON has nothing at `{pointer}`"),
                ),
            },
            None if answer.is_empty() => (false, no_answer()),
            None => (false, "the answer holds no JSON value".to_owned()),
        },
        CheckKind::ToolCalled(tool) => {
            let calls: Vec<&crate::task::CallRecord> =
                run.calls.iter().filter(|call| &call.name == tool).collect();
            match calls.iter().find(|call| !call.is_error) {
                Some(call) => (
                    true,
                    format!("`{tool}` returned: {}", cut(&call.result, 200)),
                ),
                None if calls.is_empty() => {
                    let called: Vec<&str> =
                        run.calls.iter().map(|call| call.name.as_str()).collect();
                    (
                        false,
                        format!(
                            "`{tool}` was not called (calls: {})",
                            if called.is_empty() {
                                "none".to_owned()
                            } else {
                                called.join(", ")
                            }
                        ),
                    )
                }
                None => (
                    false,
                    format!(
                        "every call of `{tool}` failed: {}",
                        cut(&calls[0].result, 200)
                    ),
                ),
            }
        }
        CheckKind::SkillLoaded(wanted) => {
            let loaded = run.loaded_skills();
            if loaded.contains(&wanted.as_str()) {
                (true, format!("`{wanted}` was loaded"))
            } else {
                (
                    false,
                    format!(
                        "loaded: {}",
                        if loaded.is_empty() {
                            "none".to_owned()
                        } else {
                            loaded.join(", ")
                        }
                    ),
                )
            }
        }
        CheckKind::OutputFile(file) => output_file_check(file, run),
        CheckKind::Command(argv) => run_command_check(argv, run, provider, skill).await,
    }
}

/// An `output_file` check: the run's outputs folder holds that regular file, reached without
/// following a link the run may have planted.
fn output_file_check(file: &str, run: &TaskRun) -> (bool, String) {
    match inspect_output(&run.outputs, file) {
        OutputEntry::File { size_bytes } => {
            (true, format!("`{file}` was written ({size_bytes} bytes)"))
        }
        OutputEntry::Missing => (false, format!("no `{file}` in the run's outputs")),
        OutputEntry::Link(link) if link.is_empty() => (
            false,
            "the run's outputs folder is a link; it is not followed".to_owned(),
        ),
        OutputEntry::Link(link) => (
            false,
            format!(
                "no `{file}` in the run's outputs: `{link}` is a link, and links there are not followed"
            ),
        ),
        OutputEntry::NotAFolder(folder) => (
            false,
            format!("no `{file}` in the run's outputs: `{folder}` is not a folder"),
        ),
        OutputEntry::NotRegular(kind) => (false, format!("`{file}` is {kind}, not a regular file")),
        OutputEntry::Outside => (
            false,
            format!("`{file}` is not a path inside the outputs folder"),
        ),
        OutputEntry::Unreadable(error) => (false, format!("`{file}` cannot be looked at: {error}")),
    }
}

/// Quote `argument` for bash; `{skill}/…` at its start becomes the skill's folder.
fn shell_word(argument: &str) -> String {
    let quote = skillbox_core::shell_words::shell_word;
    match argument.strip_prefix(SKILL_FOLDER_PLACEHOLDER) {
        Some(rest) => format!("\"$SKILLBOX_SKILL_DIR\"{}", quote(rest)),
        None => quote(argument),
    }
}

/// Write the answer for a `command` check into the run's folder, where the run's code wrote
/// too: whatever it left at that name (a link to one of the user's files, say) is removed and
/// the file made anew, so the answer is never written through a link.
fn write_answer_file(path: &std::path::Path, answer: &str) -> std::io::Result<()> {
    use fs_err::os::unix::fs::OpenOptionsExt;
    use std::io::Write;
    match fs_err::remove_file(path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    // Readable to the sandbox's user, who may not be this one.
    fs_err::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(ANSWER_FILE_MODE)
        .open(path)?
        .write_all(answer.as_bytes())
}

async fn run_command_check(
    argv: &[String],
    run: &TaskRun,
    provider: &SkillsProvider,
    skill: &str,
) -> (bool, String) {
    let Some(skill) = provider.catalog().get(skill).cloned() else {
        return (false, format!("the skill `{skill}` is not in the catalog"));
    };
    let answer_file = run.outputs.join(ANSWER_FILE);
    if let Err(error) = write_answer_file(&answer_file, &run.answer) {
        return (
            false,
            format!("cannot write the answer for the command: {error}"),
        );
    }
    let line: Vec<String> = argv.iter().map(|argument| shell_word(argument)).collect();
    let copy = skillbox_exec::SkillCopy::in_catalog(provider.catalog(), &skill);
    let result = provider
        .executor()
        .run_command_as(
            &skill,
            copy,
            &line.join(" "),
            skillbox_exec::RunOptions {
                timeout: Some(COMMAND_TIMEOUT),
                live_output: None,
            },
        )
        .await;
    let _ = fs_err::remove_file(&answer_file);
    let output = format!("{}{}", result.stdout, result.stderr);
    if result.success {
        (
            true,
            format!(
                "exit 0{}",
                if output.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", output.trim())
                }
            ),
        )
    } else {
        let why = result.error.unwrap_or_else(|| {
            result.exit_code.map_or_else(
                || "it did not finish".to_owned(),
                |code| format!("exit {code}"),
            )
        });
        (false, format!("{why}: {}", output.trim()))
    }
}

/// The judge's verdict as it writes it.
#[derive(Deserialize)]
struct Verdict {
    passed: bool,
    #[serde(default)]
    evidence: String,
}

const JUDGE_SYSTEM: &str = "You grade one expectation about an AI assistant's work. You get the user's request, the tools the assistant called, and its final answer. Decide whether the expectation holds, judging only from what you are shown. Reply with one line of JSON and nothing else: {\"passed\": true or false, \"evidence\": \"a short quote or reason\"}.";

async fn judge_sentence(expectation: &str, run: &TaskRun, judge: &Judge) -> GradedExpectation {
    let calls: Vec<String> = run
        .calls
        .iter()
        .map(|call| {
            format!(
                "- {}{}: {}",
                call.name,
                if call.is_error { " (failed)" } else { "" },
                cut(&call.result, 300)
            )
        })
        .collect();
    let prompt = format!(
        "Expectation: {expectation}\n\nTools called:\n{}\n\nFinal answer:\n{}\n",
        if calls.is_empty() {
            "(none)".to_owned()
        } else {
            calls.join("\n")
        },
        if run.answer.is_empty() {
            "(no answer)".to_owned()
        } else {
            cut(&run.answer, JUDGE_ANSWER_CHARS)
        },
    );
    let messages = [Message::user(prompt)];
    let request = ModelRequest {
        model: &judge.model,
        system: JUDGE_SYSTEM,
        messages: &messages,
        tools: &[],
        max_output_tokens: JUDGE_MAX_TOKENS,
        temperature: Some(0.0),
    };
    let graded_by = format!("judge:{}", judge.model);
    let verdict = match judge.client.respond(&request, &mut |_| {}).await {
        Ok(response) => read_verdict(&response.content),
        Err(error) => Err(format!("the judge could not be asked: {error}")),
    };
    match verdict {
        Ok(verdict) => GradedExpectation {
            text: expectation.to_owned(),
            passed: verdict.passed,
            evidence: cut(&verdict.evidence, EVIDENCE_CHARS),
            graded_by,
        },
        Err(evidence) => GradedExpectation {
            text: expectation.to_owned(),
            passed: false,
            evidence,
            graded_by,
        },
    }
}

/// The judge's JSON verdict, wherever it put it in its reply.
fn read_verdict(reply: &str) -> Result<Verdict, String> {
    first_json(reply)
        .and_then(|value| serde_json::from_value::<Verdict>(value).ok())
        .ok_or_else(|| format!("the judge's reply held no verdict: {}", cut(reply, 200)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_found_where_models_put_it() {
        assert_eq!(first_json("{\"a\": 1}").unwrap()["a"], 1);
        assert_eq!(
            first_json("Here it is:\n```json\n{\"total\": 3}\n```").unwrap()["total"],
            3
        );
        assert!(first_json("no json here").is_none());
    }

    #[test]
    fn verdicts_are_read_from_chatty_replies() {
        let verdict = read_verdict("Sure. {\"passed\": true, \"evidence\": \"says 42\"}").unwrap();
        assert!(verdict.passed);
        assert!(read_verdict("I think it passes").is_err());
    }

    #[test]
    fn command_words_are_quoted_and_the_skill_folder_named() {
        assert_eq!(shell_word("a'b"), "\"a'b\"");
        assert_eq!(shell_word("$(id)"), "'$(id)'");
        assert_eq!(
            shell_word("{skill}/evals/check.py"),
            "\"$SKILLBOX_SKILL_DIR\"/evals/check.py"
        );
    }
}
