//! `skillbox new`: a skill skeleton that validates as written and whose example really runs.
//!
//! The skeleton is a small working skill (it counts the words, lines and characters of a
//! text) rather than a page of placeholders: its description already says what the skill does
//! and when to use it, its script or tool runs, and its evals pass, so an author changes a
//! working skill into theirs one piece at a time and can check each step with `validate`,
//! `run`/`call` and `eval`. Files are written in a staging folder beside the skill's place and
//! renamed into it at the end, so a failure leaves nothing behind, and the rename never
//! replaces whatever appeared at that name meanwhile.

use std::path::{Path, PathBuf};

use serde::Serialize;
use skillbox_core::names::unsafe_name_reason;
use skillbox_core::properties::name_problems;
use skillbox_core::skill_toml::is_valid_dotted_name;
use skillbox_core::tools_json::{MAX_TOOL_NAME_CHARS, is_valid_tool_name};

use crate::error::AuthorError;
use crate::placement::{StagingFolder, entry_kind};

/// The language of the example script (and of the tool's handler).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScriptLanguage {
    /// Python 3: `scripts/example.py`.
    Python,
    /// Node.js: `scripts/example.mjs` (an ES module whatever the Node version).
    Node,
    /// Bash: `scripts/example.sh`.
    Bash,
}

impl ScriptLanguage {
    /// The example script's path in the skill.
    #[must_use]
    pub fn script_path(self) -> &'static str {
        match self {
            ScriptLanguage::Python => "scripts/example.py",
            ScriptLanguage::Node => "scripts/example.mjs",
            ScriptLanguage::Bash => "scripts/example.sh",
        }
    }

    /// The command that runs the script from the skill folder.
    fn interpreter(self) -> &'static str {
        match self {
            ScriptLanguage::Python => "python3",
            ScriptLanguage::Node => "node",
            ScriptLanguage::Bash => "bash",
        }
    }

    /// The language's name as people write it.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            ScriptLanguage::Python => "Python",
            ScriptLanguage::Node => "Node.js",
            ScriptLanguage::Bash => "Bash",
        }
    }
}

/// The format of the skeleton.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkeletonFormat {
    /// `SKILL.md` and a script (the agentskills.io format).
    AgentSkill,
    /// `SKILL.md` and a typed tool in `tools.json` (the Skill Tools spec).
    SkillTools,
    /// `SKILL.md` and a Skills Protocol manifest, `skill.toml`, whose entrypoint is Python (the
    /// only language the protocol runs).
    Protocol,
}

impl SkeletonFormat {
    /// The format's name as people read it.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            SkeletonFormat::AgentSkill => "agent skill",
            SkeletonFormat::SkillTools => "skill with tools",
            SkeletonFormat::Protocol => "Skills Protocol skill",
        }
    }
}

/// What `new` is asked to write.
#[derive(Debug, Clone)]
pub struct NewSkillRequest {
    /// The skill's name, which names its folder too.
    pub name: String,
    /// The folder the skill folder is made in (empty: the current folder, and the skill's
    /// path is then its bare name).
    pub parent: PathBuf,
    /// The language of the example script and handler.
    pub language: ScriptLanguage,
    /// The skeleton's format.
    pub format: SkeletonFormat,
    /// Whether to add a `tools.json` tool (always, for [`SkeletonFormat::SkillTools`]).
    pub tools: bool,
    /// Tool names the runtime keeps for its own tools: the example tool is named otherwise.
    pub reserved_tool_names: Vec<String>,
}

/// One file of a new skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewFile {
    /// Its path in the skill folder, `/`-separated.
    pub path: String,
    /// What it is for, in a few words.
    pub purpose: String,
    /// Whether it is executable.
    pub executable: bool,
}

/// What `new` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct NewSkill {
    /// The skill's name.
    pub name: String,
    /// The skill folder.
    pub directory: PathBuf,
    /// Its format.
    pub format: SkeletonFormat,
    /// The language of its example.
    pub language: ScriptLanguage,
    /// The example tool's name, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Every file written, in the order they are listed.
    pub files: Vec<NewFile>,
}

/// The example's tool, script and language, as the templates need them.
struct Example<'a> {
    name: &'a str,
    language: ScriptLanguage,
    format: SkeletonFormat,
    tool: Option<String>,
}

/// Write a new skill skeleton at `request.parent/request.name`.
///
/// # Errors
/// [`AuthorError::InvalidName`] for a name the rules refuse (the message names the rule),
/// [`AuthorError::AlreadyExists`] when anything is at that place, [`AuthorError::NotAFolder`]
/// when the parent folder is missing, and [`AuthorError::Io`] when writing fails (nothing is
/// left behind then).
pub fn new_skill(request: &NewSkillRequest) -> Result<NewSkill, AuthorError> {
    check_name(&request.name, request.format)?;
    let parent = if request.parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        request.parent.as_path()
    };
    match fs_err::metadata(parent) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => {
            return Err(AuthorError::NotAFolder {
                path: request.parent.clone(),
                problem: "is not a folder".to_owned(),
                hint: "give --path a folder to make the skill folder in",
            });
        }
        Err(_) => {
            return Err(AuthorError::NotAFolder {
                path: request.parent.clone(),
                problem: "does not exist".to_owned(),
                hint: "create it first, or give --path an existing folder",
            });
        }
    }
    let directory = request.parent.join(&request.name);
    if let Some(kind) = entry_kind(&directory) {
        return Err(AuthorError::AlreadyExists {
            path: directory,
            kind,
        });
    }
    let tools = request.tools || request.format == SkeletonFormat::SkillTools;
    // An agent skill with a tool is a Skill Tools skill, and says so.
    let format = match request.format {
        SkeletonFormat::AgentSkill if tools => SkeletonFormat::SkillTools,
        format => format,
    };
    let example = Example {
        name: &request.name,
        language: request.language,
        format,
        tool: tools.then(|| tool_name(&request.name, &request.reserved_tool_names)),
    };
    let contents = example.files();
    let staging = StagingFolder::create(parent, &request.name)?;
    for (file, text) in &contents {
        staging.write(&file.path, text.as_bytes(), file.executable)?;
    }
    staging.place_new(&directory)?;
    Ok(NewSkill {
        name: request.name.clone(),
        directory,
        format,
        language: request.language,
        tool: example.tool.clone(),
        files: contents.into_iter().map(|(file, _)| file).collect(),
    })
}

/// Refuse a name the format's rules refuse, naming the rule.
fn check_name(name: &str, format: SkeletonFormat) -> Result<(), AuthorError> {
    let refuse = |reason: String, hint: String| AuthorError::InvalidName {
        name: name.to_owned(),
        reason,
        hint,
    };
    if let Some(reason) = unsafe_name_reason(name) {
        return Err(refuse(
            reason,
            "use lowercase letters, digits and single hyphens, such as `word-count`".to_owned(),
        ));
    }
    if skillbox_core::RESERVED_SKILL_NAMES.contains(&name) {
        return Err(refuse(
            "the runtime's own skill has that name".to_owned(),
            "choose another name".to_owned(),
        ));
    }
    if format == SkeletonFormat::Protocol {
        if !is_valid_dotted_name(name) {
            return Err(refuse(
                "a Skills Protocol id is lowercase letters and digits in dot-separated segments"
                    .to_owned(),
                format!(
                    "use an id such as `{}` (the folder is named after it)",
                    suggested_dotted_name(name)
                ),
            ));
        }
        return Ok(());
    }
    if let Some(problem) = name_problems(name, None).into_iter().next() {
        let hint = problem
            .hint
            .unwrap_or_else(|| "use lowercase letters, digits and single hyphens".to_owned());
        // The rule's message names the name, which the refusal names already.
        let reason = problem
            .message
            .replacen(&format!("skill name `{name}` "), "it ", 1);
        return Err(refuse(reason, hint));
    }
    Ok(())
}

/// A Skills Protocol id close to `name`: lowercase, segments of letters and digits.
fn suggested_dotted_name(name: &str) -> String {
    let lowered = name.to_ascii_lowercase();
    let segments: Vec<String> = lowered
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|segment| !segment.is_empty())
        .map(str::to_owned)
        .collect();
    if segments.is_empty() {
        "acme.text.count".to_owned()
    } else {
        segments.join(".")
    }
}

/// The example tool's name: the skill's name in the tool name alphabet (`^[a-z][a-z0-9_]*$`),
/// never a name the runtime keeps for itself.
fn tool_name(skill: &str, reserved: &[String]) -> String {
    let mut name = String::new();
    for c in skill.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_lowercase());
        } else if !name.ends_with('_') {
            name.push('_');
        }
    }
    let mut name = name.trim_matches('_').to_owned();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name.insert_str(0, "skill_");
    }
    let mut name: String = name.chars().take(MAX_TOOL_NAME_CHARS - 5).collect();
    if reserved.contains(&name) || !is_valid_tool_name(&name) {
        name.push_str("_tool");
    }
    name.trim_end_matches('_').to_owned()
}

const EXAMPLE_PY: &str = include_str!("scaffold/example.py");
const HANDLER_PY: &str = include_str!("scaffold/handler.py");
const EXAMPLE_MJS: &str = include_str!("scaffold/example.mjs");
const HANDLER_MJS: &str = include_str!("scaffold/handler.mjs");
const EXAMPLE_SH: &str = include_str!("scaffold/example.sh");
const JSON_STRING_SH: &str = include_str!("scaffold/json_string.sh");
const MAIN_PY: &str = include_str!("scaffold/main.py");
/// The Skills Protocol entrypoint's path.
const PROTOCOL_ENTRYPOINT: &str = "code/main.py";

impl Example<'_> {
    /// Every file of the skeleton with its text, in the order they are listed.
    fn files(&self) -> Vec<(NewFile, String)> {
        let file = |path: &str, purpose: &str, executable: bool| NewFile {
            path: path.to_owned(),
            purpose: purpose.to_owned(),
            executable,
        };
        let mut files = vec![(
            file(
                "SKILL.md",
                "the description and instructions a model reads",
                false,
            ),
            self.skill_md(),
        )];
        if self.format == SkeletonFormat::Protocol {
            files.push((
                file("skill.toml", "the Skills Protocol manifest", false),
                self.skill_toml(),
            ));
            files.push((
                file(
                    PROTOCOL_ENTRYPOINT,
                    "the entrypoint `execute_skill` runs (Python)",
                    false,
                ),
                MAIN_PY.replace("{{name}}", self.name),
            ));
        }
        if self.tool.is_some() {
            files.push((
                file("tools.json", "the typed tool a model calls", false),
                self.tools_json(),
            ));
        }
        let purpose = if self.tool.is_some() {
            "the example script, also the tool's handler"
        } else {
            "the example script"
        };
        files.push((
            file(self.language.script_path(), purpose, true),
            self.script(),
        ));
        files.push((
            file("evals/evals.json", "task evals to fill in", false),
            self.evals_json(),
        ));
        files.push((
            file(
                "evals/triggers.json",
                "queries that should and should not pick the skill",
                false,
            ),
            triggers_json(),
        ));
        files
    }

    fn description(&self) -> String {
        let means = match (&self.tool, self.format) {
            (_, SkeletonFormat::Protocol) => "with a Skills Protocol action",
            (Some(_), _) => "with a bundled tool",
            (None, _) => "with a bundled script",
        };
        format!(
            "Counts the words, lines and characters of a text exactly, {means}. Use when the user asks how long a text is, wants an exact word or character count, or must fit a text within a length limit."
        )
    }

    /// The command line that runs the example script on a text, from the skill folder.
    fn command_line(&self, text: &str) -> String {
        format!(
            "{} {} \"{text}\"",
            self.language.interpreter(),
            self.language.script_path()
        )
    }

    fn skill_md(&self) -> String {
        let script = self.language.script_path();
        let sample = "the quick brown fox";
        let output = r#"{"words": 4, "lines": 1, "characters": 19}"#;
        let (how, steps) = match (&self.tool, self.format) {
            (_, SkeletonFormat::Protocol) => (
                format!(
                    "Run the skill with `execute_skill`, the text in `args`: `{{\"name\": \"{}\", \"args\": {{\"text\": \"{sample}\"}}}}`",
                    self.name
                ),
                format!(
                    "2. Run the skill with `execute_skill`, passing the text in `args`:\n\n   ```json\n   {{\"name\": \"{}\", \"args\": {{\"text\": \"the text to measure\"}}}}\n   ```\n\n3. The run's output holds the counts, such as `{output}`.",
                    self.name
                ),
            ),
            (Some(tool), _) => (
                format!("Call the `{tool}` tool with `{{\"text\": \"{sample}\"}}`"),
                format!(
                    "2. Call the `{tool}` tool with the text:\n\n   ```json\n   {{\"text\": \"the text to measure\"}}\n   ```\n\n3. It returns the counts, such as `{output}`."
                ),
            ),
            (None, _) => (
                format!("Run `{}`", self.command_line(sample)),
                format!(
                    "2. Run the script with the text as its argument:\n\n   ```bash\n   {}\n   ```\n\n3. It prints the counts as JSON, such as `{output}`.",
                    self.command_line("the text to measure")
                ),
            ),
        };
        let mut files = Vec::new();
        if self.format == SkeletonFormat::Protocol {
            files.push(format!(
                "- `skill.toml`: the skill's id, version and entrypoint (`{PROTOCOL_ENTRYPOINT}`, `main(args)`)."
            ));
        }
        if let Some(tool) = &self.tool {
            files.push(format!(
                "- `tools.json`: the `{tool}` tool, whose handler is `{script}`."
            ));
        }
        files.push(format!(
            "- `{script}`: the counting script; it also runs on its own: `{}`.",
            self.command_line("some text")
        ));
        files.push(
            "- `evals/evals.json` and `evals/triggers.json`: the skill's tests, for `skillbox eval` (tasks, and queries that should and should not pick this skill). `skillbox pack` leaves `evals/` out."
                .to_owned(),
        );
        format!(
            "---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n\
`skillbox new` wrote this skill as a working example: it counts the words, lines and characters \
of a text. Change the description, these instructions and the example into what your skill does, \
checking each step with `skillbox validate` and `skillbox eval`. The description is what a model \
reads to choose a skill, so keep it saying what the skill does and when to use it.\n\n\
## When to use\n\n\
- The user asks how many words, lines or characters a text has.\n\
- A text must fit a limit (a post, an abstract, a form field) and the count must be exact.\n\n\
Do not use it to summarise, translate or rewrite a text.\n\n\
## Steps\n\n\
1. Take the text from the user's message.\n{steps}\n\
4. Answer with the counts. When the user gave a limit, say how far under or over it the text is.\n\n\
## Examples\n\n\
User: \"How many words are in 'the quick brown fox'?\"\n\n\
{how}, which gives `{output}`, and answer: \"It has 4 words (19 characters).\"\n\n\
## Files\n\n{files}\n",
            name = self.name,
            description = self.description(),
            files = files.join("\n"),
        )
    }

    fn skill_toml(&self) -> String {
        format!(
            "name = \"{}\"\nversion = \"0.1.0\"\ndescription = \"Count the words, lines and characters of a text.\"\nkind = \"action\"\n\n[runtime]\nlanguage = \"python\"\nentrypoint = \"{PROTOCOL_ENTRYPOINT}\"\nexport = \"main\"\n\n[permissions]\nsecrets = []\n",
            self.name
        )
    }

    fn tools_json(&self) -> String {
        let tool = serde_json::json!([{
            "name": self.tool.as_deref().unwrap_or_default(),
            "description": "Count the words, lines and characters of a text exactly. Call it instead of counting by hand.",
            "script": self.language.script_path(),
            "parameters": {
                "text": {"type": "string", "description": "The text to measure."}
            }
        }]);
        pretty_json(&tool)
    }

    fn script(&self) -> String {
        let tool = self.tool.as_deref();
        let usage = tool.map(|tool| {
            format!(
                "\n\nIt is also the handler of the `{tool}` tool (tools.json), which skillbox calls with the arguments as JSON."
            )
        });
        match self.language {
            ScriptLanguage::Python => EXAMPLE_PY
                .replace("{{usage}}", &wrap_comment(usage.as_deref(), ""))
                .replace("{{handler}}", tool.map_or("", |_| HANDLER_PY))
                .replace("{{tool}}", tool.unwrap_or_default()),
            ScriptLanguage::Node => EXAMPLE_MJS
                .replace("{{usage}}", &wrap_comment(usage.as_deref(), "// "))
                .replace("{{handler}}", tool.map_or("", |_| HANDLER_MJS))
                .replace("{{tool}}", tool.unwrap_or_default()),
            ScriptLanguage::Bash => {
                let (stdin_usage, read_stdin, functions) = match tool {
                    Some(_) => (
                        "   echo '{\"text\": \"some text\"}' | bash scripts/example.sh   (as the tool)",
                        "  # Called as the `{{tool}}` tool (tools.json): the arguments arrive as one\n  # JSON object on stdin.\n  text=\"$(json_string \"$(cat)\" text)\"",
                        JSON_STRING_SH,
                    ),
                    None => (
                        "   echo \"some text\" | bash scripts/example.sh",
                        "  text=\"$(cat)\"",
                        "",
                    ),
                };
                EXAMPLE_SH
                    .replace("{{stdin_usage}}", stdin_usage)
                    .replace("{{usage}}", &wrap_comment(usage.as_deref(), "# "))
                    .replace("{{functions}}", functions)
                    .replace("{{read_stdin}}", read_stdin)
                    .replace("{{tool}}", tool.unwrap_or_default())
            }
        }
    }

    fn evals_json(&self) -> String {
        pretty_json(&serde_json::json!({
            "skill_name": self.name,
            "evals": [{
                "id": 1,
                "prompt": "How many words are in this sentence: \"The quick brown fox jumps over the lazy dog\"?",
                "expected_output": "The sentence has 9 words.",
                "files": [],
                "expectations": [
                    "The answer says that the sentence has 9 words",
                    {"contains": "9", "text": "the answer gives the word count"}
                ]
            }]
        }))
    }
}

/// Trigger queries: realistic requests that should pick the example skill, and neighbours that
/// should not.
fn triggers_json() -> String {
    let query = |query: &str, should_trigger: bool| serde_json::json!({"query": query, "should_trigger": should_trigger});
    pretty_json(&serde_json::Value::Array(vec![
        query(
            "How many words are in this paragraph? The application form allows 150: \"I have led the volunteer team at our local food bank for three years, organising weekly collections and training new helpers.\"",
            true,
        ),
        query(
            "Count the characters in my post before I publish it: \"Shipping the new release today. Thanks to everyone who tested it!\"",
            true,
        ),
        query(
            "Is this abstract under the 250-word limit? \"We study how small language models choose tools when many similar tools are offered...\"",
            true,
        ),
        query(
            "Translate \"see you at the meeting tomorrow\" into Spanish.",
            false,
        ),
        query(
            "Summarise this paragraph in one sentence: \"The committee met on Tuesday and agreed to move the launch to May, after the testing team asked for two more weeks.\"",
            false,
        ),
        query("Write a short poem about autumn leaves.", false),
    ]))
}

/// A comment paragraph for a template: nothing when there is no text, else the text after a
/// blank comment line, every line led by `leader`.
fn wrap_comment(text: Option<&str>, leader: &str) -> String {
    let Some(text) = text else {
        return String::new();
    };
    let mut lines = Vec::new();
    for paragraph in text.trim_start_matches('\n').split('\n') {
        let mut line = String::new();
        for word in paragraph.split(' ') {
            if !line.is_empty() && line.len() + 1 + word.len() > 76 {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    let blank = leader.trim_end();
    let mut wrapped = format!("\n{blank}");
    for line in lines {
        wrapped.push('\n');
        wrapped.push_str(leader);
        wrapped.push_str(&line);
    }
    wrapped
}

/// JSON as people write it: two-space indents and a final newline.
fn pretty_json(value: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn tool_names_follow_the_tool_name_rules() {
        let reserved = vec!["list_skills".to_owned()];
        assert_eq!(tool_name("word-count", &reserved), "word_count");
        assert_eq!(tool_name("list-skills", &reserved), "list_skills_tool");
        assert_eq!(tool_name("3d-print", &reserved), "skill_3d_print");
        assert_eq!(tool_name("acme.text.count", &reserved), "acme_text_count");
        assert_eq!(tool_name("café", &reserved), "caf");
        let long = "a".repeat(64);
        let named = tool_name(&long, &reserved);
        assert!(named.len() <= MAX_TOOL_NAME_CHARS && is_valid_tool_name(&named));
    }

    #[test]
    fn names_are_checked_by_the_formats_rules() {
        for (name, format, expected) in [
            (
                "Word-Count",
                SkeletonFormat::AgentSkill,
                "must be lowercase",
            ),
            (
                "word--count",
                SkeletonFormat::AgentSkill,
                "must not contain `--`",
            ),
            (
                "-word",
                SkeletonFormat::AgentSkill,
                "starts with `.` or `-`",
            ),
            ("a/b", SkeletonFormat::AgentSkill, "contains `/`"),
            ("word_count", SkeletonFormat::SkillTools, "contains `_`"),
            (
                "word-count",
                SkeletonFormat::Protocol,
                "use an id such as `word.count`",
            ),
        ] {
            let error = check_name(name, format).unwrap_err().to_string();
            assert!(error.contains(expected), "{name}: {error}");
        }
        check_name("word-count", SkeletonFormat::AgentSkill).unwrap();
        check_name("acme.text.count", SkeletonFormat::Protocol).unwrap();
    }
}
