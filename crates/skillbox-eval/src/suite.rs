//! What an author writes in a skill's `evals/` folder: trigger queries
//! (`evals/triggers.json`) and task evals (`evals/evals.json`, skill-creator's shape), read with
//! every problem named by file, field and position.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::EvalError;

/// The folder of a skill holding its evals.
pub const EVALS_FOLDER: &str = "evals";
/// The trigger queries' file in [`EVALS_FOLDER`].
pub const TRIGGERS_FILE: &str = "triggers.json";
/// The task evals' file in [`EVALS_FOLDER`].
pub const TASKS_FILE: &str = "evals.json";
/// Longest eval id written as a string (it names the run's folder and heads the report's rows).
pub const MAX_EVAL_ID_CHARS: usize = 128;
/// Largest eval file read.
pub const MAX_EVAL_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Most input files one task eval lists (each is copied into every run's folder).
pub const MAX_TASK_FILES: usize = 1000;

/// One trigger query: a person's request and whether the skill should be used for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriggerQuery {
    /// What the person asks.
    pub query: String,
    /// Whether the model should use the skill for it.
    pub should_trigger: bool,
}

/// The two shapes of `triggers.json`: skill-creator's bare list, or an object with `queries`.
#[derive(Deserialize)]
#[serde(untagged)]
enum TriggerFile {
    List(Vec<TriggerQuery>),
    Object {
        #[serde(default)]
        #[allow(dead_code)]
        skill_name: Option<String>,
        queries: Vec<TriggerQuery>,
    },
}

/// `evals/evals.json`, skill-creator's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSuite {
    /// The skill the evals are for (its frontmatter name).
    #[serde(default)]
    pub skill_name: Option<String>,
    /// The tasks.
    pub evals: Vec<TaskEval>,
}

/// One task: a prompt, input files, and what a good answer does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskEval {
    /// A unique id (skill-creator uses integers; a string is kept as written).
    pub id: serde_json::Value,
    /// A short name for reports (default: the id).
    #[serde(default)]
    pub name: Option<String>,
    /// What the person asks.
    pub prompt: String,
    /// A person's description of success (shown in reports; not graded).
    #[serde(default)]
    pub expected_output: Option<String>,
    /// Input files, relative to the skill's folder, copied into the run's folder.
    #[serde(default)]
    pub files: Vec<String>,
    /// What the answer must do.
    #[serde(default)]
    pub expectations: Vec<Expectation>,
}

impl TaskEval {
    /// Whether an expectation is a `command` check (code run as the skill's, in its sandbox).
    #[must_use]
    pub fn has_command_checks(&self) -> bool {
        self.expectations.iter().any(|expectation| {
            matches!(
                expectation,
                Expectation::Check(Check {
                    kind: CheckKind::Command(_),
                    ..
                })
            )
        })
    }

    /// The eval's name in reports.
    #[must_use]
    pub fn label(&self) -> String {
        self.name.clone().unwrap_or_else(|| match &self.id {
            serde_json::Value::String(text) => text.clone(),
            other => format!("eval {other}"),
        })
    }
}

/// One expectation: a sentence a judge model grades, or a check that needs no model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, try_from = "serde_json::Value")]
pub enum Expectation {
    /// A free-text statement about the answer, graded by the judge model.
    Judged(String),
    /// A check computed from the run.
    Check(Check),
}

impl TryFrom<serde_json::Value> for Expectation {
    type Error = String;

    fn try_from(value: serde_json::Value) -> Result<Self, String> {
        match value {
            serde_json::Value::String(text) => Ok(Expectation::Judged(text)),
            serde_json::Value::Object(map) => Check::try_from(map).map(Expectation::Check),
            _ => Err(format!(
                "an expectation is a sentence (graded by a judge model) or an object with one of {CHECK_KEYS}"
            )),
        }
    }
}

impl Expectation {
    /// The line a report shows for it.
    #[must_use]
    pub fn text(&self) -> String {
        match self {
            Expectation::Judged(text) => text.clone(),
            Expectation::Check(check) => check.text(),
        }
    }
}

/// A check that needs no model, with an optional label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    try_from = "serde_json::Map<String, serde_json::Value>",
    into = "serde_json::Map<String, serde_json::Value>"
)]
pub struct Check {
    /// The line reports show (default: the check written out).
    pub text: Option<String>,
    /// Compare text case-insensitively (`contains`, `not_contains`).
    pub ignore_case: bool,
    /// The comparison made.
    pub kind: CheckKind,
}

impl From<Check> for serde_json::Map<String, serde_json::Value> {
    fn from(check: Check) -> Self {
        use serde_json::Value;
        let mut map = serde_json::Map::new();
        match check.kind {
            CheckKind::Contains(text) => map.insert("contains".into(), Value::String(text)),
            CheckKind::NotContains(text) => map.insert("not_contains".into(), Value::String(text)),
            CheckKind::Regex(text) => map.insert("regex".into(), Value::String(text)),
            CheckKind::JsonPointer { pointer, equals } => {
                map.insert("equals".into(), equals);
                map.insert("json_pointer".into(), Value::String(pointer))
            }
            CheckKind::ToolCalled(text) => map.insert("tool_called".into(), Value::String(text)),
            CheckKind::SkillLoaded(text) => map.insert("skill_loaded".into(), Value::String(text)),
            CheckKind::OutputFile(text) => map.insert("output_file".into(), Value::String(text)),
            CheckKind::Command(argv) => map.insert(
                "command".into(),
                Value::Array(argv.into_iter().map(Value::String).collect()),
            ),
        };
        if check.ignore_case {
            map.insert("ignore_case".into(), Value::Bool(true));
        }
        if let Some(text) = check.text {
            map.insert("text".into(), Value::String(text));
        }
        map
    }
}

/// The keys that name a check.
const CHECK_KEYS: &str = "`contains`, `not_contains`, `regex`, `json_pointer` (with `equals`), `tool_called`, `skill_loaded`, `output_file` or `command`";

impl TryFrom<serde_json::Map<String, serde_json::Value>> for Check {
    type Error = String;

    fn try_from(mut map: serde_json::Map<String, serde_json::Value>) -> Result<Self, String> {
        use serde_json::Value;
        let text = match map.remove("text") {
            None => None,
            Some(Value::String(text)) => Some(text),
            Some(_) => return Err("`text` must be a string".to_owned()),
        };
        let ignore_case = match map.remove("ignore_case") {
            None => false,
            Some(Value::Bool(flag)) => flag,
            Some(_) => return Err("`ignore_case` must be true or false".to_owned()),
        };
        let equals = map.remove("equals");
        let has_equals = equals.is_some();
        let mut keys: Vec<String> = map.keys().cloned().collect();
        let Some(key) = keys.pop() else {
            return Err(format!("a check needs one of {CHECK_KEYS}"));
        };
        if let Some(other) = keys.first() {
            return Err(format!(
                "a check has one of {CHECK_KEYS}, not both `{other}` and `{key}`; write two expectations"
            ));
        }
        let value = map.remove(&key).unwrap_or(Value::Null);
        let string = |value: Value| match value {
            Value::String(text) => Ok(text),
            _ => Err(format!("`{key}` must be a string")),
        };
        let kind = match key.as_str() {
            "contains" => CheckKind::Contains(string(value)?),
            "not_contains" => CheckKind::NotContains(string(value)?),
            "regex" => CheckKind::Regex(string(value)?),
            "json_pointer" => CheckKind::JsonPointer {
                pointer: string(value)?,
                equals: equals.ok_or("`json_pointer` needs `equals`: the value expected there")?,
            },
            "tool_called" => CheckKind::ToolCalled(string(value)?),
            "skill_loaded" => CheckKind::SkillLoaded(string(value)?),
            "output_file" => CheckKind::OutputFile(string(value)?),
            "command" => match value {
                Value::Array(items) => CheckKind::Command(
                    items
                        .into_iter()
                        .map(|item| match item {
                            Value::String(text) => Ok(text),
                            _ => Err("`command` must be a list of strings (the program, then its arguments)".to_owned()),
                        })
                        .collect::<Result<_, _>>()?,
                ),
                _ => return Err("`command` must be a list of strings (the program, then its arguments); no shell runs it".to_owned()),
            },
            other => return Err(format!("`{other}` is not a check; use one of {CHECK_KEYS}")),
        };
        if has_equals && !matches!(kind, CheckKind::JsonPointer { .. }) {
            return Err("`equals` goes with `json_pointer` only".to_owned());
        }
        Ok(Check {
            text,
            ignore_case,
            kind,
        })
    }
}

/// What a [`Check`] compares.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckKind {
    /// The answer contains this text.
    Contains(String),
    /// The answer does not contain this text.
    NotContains(String),
    /// The answer matches this regular expression.
    Regex(String),
    /// The answer (or the first JSON value in it) has `equals` at this JSON pointer.
    JsonPointer {
        /// An RFC 6901 pointer (`/total`).
        pointer: String,
        /// The value expected there.
        equals: serde_json::Value,
    },
    /// The model called this tool and the call succeeded.
    ToolCalled(String),
    /// The model loaded this skill.
    SkillLoaded(String),
    /// The run's outputs folder holds this file.
    OutputFile(String),
    /// This command, run in the outputs folder with the answer on stdin, exits 0.
    Command(Vec<String>),
}

impl Check {
    /// The label, else the check written out.
    #[must_use]
    pub fn text(&self) -> String {
        if let Some(text) = &self.text {
            return text.clone();
        }
        match &self.kind {
            CheckKind::Contains(text) => format!("the answer contains `{text}`"),
            CheckKind::NotContains(text) => format!("the answer does not contain `{text}`"),
            CheckKind::Regex(pattern) => format!("the answer matches /{pattern}/"),
            CheckKind::JsonPointer { pointer, equals } => {
                format!("the answer's JSON has {equals} at `{pointer}`")
            }
            CheckKind::ToolCalled(tool) => format!("the tool `{tool}` was called"),
            CheckKind::SkillLoaded(skill) => format!("the skill `{skill}` was loaded"),
            CheckKind::OutputFile(file) => format!("the run wrote `{file}`"),
            CheckKind::Command(argv) => format!("`{}` exits 0", argv.join(" ")),
        }
    }
}

/// A skill's evals as found in its folder.
#[derive(Debug, Clone, Default)]
pub struct SkillEvals {
    /// `evals/triggers.json`, when there is one.
    pub triggers: Option<Vec<TriggerQuery>>,
    /// `evals/evals.json`, when there is one.
    pub tasks: Option<TaskSuite>,
}

impl SkillEvals {
    /// Read the eval files of the skill in `directory` (either may be missing).
    ///
    /// # Errors
    /// [`EvalError::Suite`] naming the file, the field and the position of what is wrong.
    pub fn read(directory: &Path) -> Result<SkillEvals, EvalError> {
        let folder = directory.join(EVALS_FOLDER);
        let triggers = read_json_file(&folder.join(TRIGGERS_FILE))?
            .map(|(path, text)| parse_triggers(&path, &text))
            .transpose()?;
        let tasks = read_json_file(&folder.join(TASKS_FILE))?
            .map(|(path, text)| parse_tasks(&path, &text))
            .transpose()?;
        Ok(SkillEvals { triggers, tasks })
    }

    /// Whether the skill has any eval.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.triggers.is_none() && self.tasks.is_none()
    }
}

/// Read `path` when it is there: never through a link, only a regular file, at most
/// [`MAX_EVAL_FILE_BYTES`].
fn read_json_file(path: &Path) -> Result<Option<(PathBuf, String)>, EvalError> {
    let problem = |message: String| EvalError::Suite {
        path: path.to_path_buf(),
        message,
    };
    if let Some(folder) = path.parent() {
        match fs_err::symlink_metadata(folder) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                return Err(problem(
                    "its folder is a symbolic link; eval files must be in the skill's own `evals/` folder"
                        .to_owned(),
                ));
            }
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(problem(error.to_string())),
        }
    }
    let metadata = match fs_err::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(problem(error.to_string())),
    };
    if !metadata.file_type().is_file() {
        return Err(problem(
            "it is not a regular file (a link, folder or device); write the JSON file itself"
                .to_owned(),
        ));
    }
    let file = skillbox_core::source::open_regular_file(path)
        .map_err(|error| problem(error.to_string()))?;
    let mut text = String::new();
    file.take(MAX_EVAL_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|error| problem(format!("cannot be read as UTF-8 text: {error}")))?;
    if text.len() as u64 > MAX_EVAL_FILE_BYTES {
        return Err(problem(format!(
            "it is larger than {} MiB; split the evals",
            MAX_EVAL_FILE_BYTES / (1024 * 1024)
        )));
    }
    Ok(Some((path.to_path_buf(), text)))
}

/// Decode `text` as `T`, naming the field and position of the first problem.
fn decode<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, EvalError> {
    let deserializer = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let field = error.path().to_string();
        let inner = error.inner();
        let position = if inner.line() > 0 {
            format!("line {}, column {}: ", inner.line(), inner.column())
        } else {
            String::new()
        };
        let at = if field.is_empty() || field == "." {
            String::new()
        } else {
            format!("`{field}`: ")
        };
        let message = format!("{position}{at}{inner}");
        EvalError::Suite {
            path: path.to_path_buf(),
            message,
        }
    })
}

/// Parse `triggers.json`.
///
/// # Errors
/// [`EvalError::Suite`] naming the problem.
pub fn parse_triggers(path: &Path, text: &str) -> Result<Vec<TriggerQuery>, EvalError> {
    let value: serde_json::Value = decode(path, text)?;
    let shape_hint = || {
        EvalError::Suite {
        path: path.to_path_buf(),
        message: "expected a list of `{\"query\": \"...\", \"should_trigger\": true|false}` items (or an object with `queries`)".to_owned(),
    }
    };
    let queries = match &value {
        serde_json::Value::Array(_) => decode::<Vec<TriggerQuery>>(path, text)?,
        serde_json::Value::Object(map) if map.contains_key("queries") => {
            match decode::<TriggerFile>(path, text)? {
                TriggerFile::List(queries) | TriggerFile::Object { queries, .. } => queries,
            }
        }
        _ => return Err(shape_hint()),
    };
    for (index, query) in queries.iter().enumerate() {
        if query.query.trim().is_empty() {
            return Err(EvalError::Suite {
                path: path.to_path_buf(),
                message: format!("`[{index}].query` is empty; write the request a person makes"),
            });
        }
    }
    if queries.is_empty() {
        return Err(EvalError::Suite {
            path: path.to_path_buf(),
            message: "it lists no queries; add some that should trigger the skill and some that should not".to_owned(),
        });
    }
    Ok(queries)
}

/// Parse `evals.json`.
///
/// # Errors
/// [`EvalError::Suite`] naming the problem.
pub fn parse_tasks(path: &Path, text: &str) -> Result<TaskSuite, EvalError> {
    let suite: TaskSuite = decode(path, text)?;
    let problem = |message: String| EvalError::Suite {
        path: path.to_path_buf(),
        message,
    };
    let mut ids = std::collections::BTreeSet::new();
    for (index, eval) in suite.evals.iter().enumerate() {
        let id_usable = match &eval.id {
            serde_json::Value::Number(_) => true,
            serde_json::Value::String(text) => {
                !text.trim().is_empty() && text.chars().count() <= MAX_EVAL_ID_CHARS
            }
            _ => false,
        };
        if !id_usable {
            return Err(problem(format!(
                "`evals[{index}].id` must be a number or a string of 1 to {MAX_EVAL_ID_CHARS} characters"
            )));
        }
        if !ids.insert(eval.id.to_string()) {
            return Err(problem(format!(
                "`evals[{index}].id` {} is used twice; give each eval its own id",
                eval.id
            )));
        }
        if eval.prompt.trim().is_empty() {
            return Err(problem(format!("`evals[{index}].prompt` is empty")));
        }
        if eval.files.len() > MAX_TASK_FILES {
            return Err(problem(format!(
                "`evals[{index}].files` lists {} files; the most is {MAX_TASK_FILES} (each is copied into every run's folder)",
                eval.files.len()
            )));
        }
        for file in &eval.files {
            if skillbox_core::source::contained_relative_path(file).is_err() {
                return Err(problem(format!(
                    "`evals[{index}].files`: `{file}` is not a path inside the skill's folder"
                )));
            }
        }
        for (number, expectation) in eval.expectations.iter().enumerate() {
            let at = format!("`evals[{index}].expectations[{number}]`");
            match expectation {
                Expectation::Judged(text) if text.trim().is_empty() => {
                    return Err(problem(format!("{at} is empty")));
                }
                Expectation::Check(check) => {
                    check_is_usable(check).map_err(|message| problem(format!("{at}: {message}")))?
                }
                Expectation::Judged(_) => {}
            }
        }
    }
    Ok(suite)
}

/// Problems a check has before it runs: a pattern that does not compile, a pointer without
/// its leading `/`, an empty command, an output path outside the outputs folder.
fn check_is_usable(check: &Check) -> Result<(), String> {
    match &check.kind {
        CheckKind::Regex(pattern) => regex::Regex::new(pattern)
            .map(|_| ())
            .map_err(|error| format!("`regex` does not compile: {error}")),
        CheckKind::JsonPointer { pointer, .. }
            if !pointer.is_empty() && !pointer.starts_with('/') =>
        {
            Err(format!(
                "`json_pointer` `{pointer}` must start with `/` (RFC 6901), e.g. `/total`"
            ))
        }
        CheckKind::Command(argv) if argv.is_empty() => {
            Err("`command` is empty; give the program and its arguments as a list".to_owned())
        }
        CheckKind::OutputFile(file)
            if skillbox_core::source::contained_relative_path(file).is_err() =>
        {
            Err(format!(
                "`output_file` `{file}` is not a path inside the outputs folder"
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn triggers_read_both_shapes() {
        let path = Path::new("evals/triggers.json");
        let list = parse_triggers(path, r#"[{"query": "a", "should_trigger": true}]"#).unwrap();
        let object = parse_triggers(
            path,
            r#"{"skill_name": "x", "queries": [{"query": "a", "should_trigger": true}]}"#,
        )
        .unwrap();
        assert_eq!(list, object);
    }

    #[test]
    fn trigger_problems_name_the_field_and_position() {
        let path = Path::new("evals/triggers.json");
        let error = parse_triggers(path, "[{\"query\": \"a\",\n \"should_trigger\": \"yes\"}]")
            .unwrap_err()
            .to_string();
        assert!(error.contains("evals/triggers.json"), "{error}");
        assert!(error.contains("[0].should_trigger"), "{error}");
        assert!(error.contains("line 2"), "{error}");
        let error = parse_triggers(path, r#"{"nope": 1}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("should_trigger"), "{error}");
    }

    #[test]
    fn tasks_read_checks_and_sentences() {
        let path = Path::new("evals/evals.json");
        let suite = parse_tasks(
            path,
            r#"{"skill_name": "x", "evals": [{"id": 1, "prompt": "p", "files": ["evals/files/a.csv"],
               "expectations": ["The answer is polite", {"contains": "42", "ignore_case": true},
               {"json_pointer": "/total", "equals": 3}, {"tool_called": "count"}, {"command": ["true"], "text": "ok"}]}]}"#,
        )
        .unwrap();
        let texts: Vec<String> = suite.evals[0]
            .expectations
            .iter()
            .map(Expectation::text)
            .collect();
        assert_eq!(
            texts,
            [
                "The answer is polite",
                "the answer contains `42`",
                "the answer's JSON has 3 at `/total`",
                "the tool `count` was called",
                "ok"
            ]
        );
    }

    #[test]
    fn task_problems_are_named() {
        let path = Path::new("evals/evals.json");
        let cases = [
            (
                r#"{"evals": [{"id": 1, "prompt": "p", "expectations": [{"regex": "("}]}]}"#,
                "`evals[0].expectations[0]`: `regex` does not compile",
            ),
            (
                r#"{"evals": [{"id": 1, "prompt": "p", "files": ["../secret"]}]}"#,
                "`../secret` is not a path inside",
            ),
            (
                r#"{"evals": [{"id": 1, "prompt": "p"}, {"id": 1, "prompt": "q"}]}"#,
                "is used twice",
            ),
            (
                r#"{"evals": [{"id": {"nested": [1, 2]}, "prompt": "p"}]}"#,
                "`evals[0].id` must be a number or a string",
            ),
            (
                &format!(
                    r#"{{"evals": [{{"id": 1, "prompt": "p", "files": {}}}]}}"#,
                    serde_json::json!(vec!["evals/files/a.txt"; MAX_TASK_FILES + 1])
                ),
                "`evals[0].files` lists 1001 files; the most is 1000",
            ),
            (
                r#"{"evals": [{"id": 1, "prompt": "p", "expectations": [{"contians": "x"}]}]}"#,
                "`evals[0].expectations[0]`: `contians` is not a check; use one of `contains`",
            ),
        ];
        for (text, wanted) in cases {
            let error = parse_tasks(path, text).unwrap_err().to_string();
            assert!(error.contains(wanted), "{text}: {error}");
        }
    }
}
