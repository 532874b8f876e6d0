//! One task run: the eval's prompt goes through the agent loop (with the skill offered, or
//! without it), code runs as `ask` runs it, in the run's own outputs folder, and everything the
//! graders need is kept: the answer, each call and its result, the skills loaded.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use skillbox_agent::{Agent, AgentEvent, Conversation, TurnEnd, TurnInput, Usage};

use crate::calls::{loads_skill, skill_named_by_call};
use crate::error::EvalError;

/// Largest input file copied into a run's folder.
pub const MAX_TASK_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Most bytes of input files copied into one run's folder (each run gets its own copy, so an
/// eval listing one large file many times would otherwise fill the disk before a model is
/// asked anything).
pub const MAX_TASK_FILES_TOTAL_BYTES: u64 = 256 * 1024 * 1024;
/// Characters of a tool result kept in a run's record (the transcript has them whole).
const KEPT_RESULT_CHARS: usize = 2000;

/// One tool call of a task run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The tool.
    pub name: String,
    /// The skill the call names, if any.
    pub skill: Option<String>,
    /// Whether the call loaded that skill's instructions.
    pub loads_skill: bool,
    /// Whether it failed.
    pub is_error: bool,
    /// The start of its result.
    pub result: String,
}

/// What one task run did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRun {
    /// The final answer.
    pub answer: String,
    /// How the turn ended.
    pub end: TurnEnd,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// The calls, in the order they finished.
    pub calls: Vec<CallRecord>,
    /// Tokens used.
    pub usage: Usage,
    /// Model calls made.
    pub rounds: u32,
    /// Wall time.
    pub duration_ms: u64,
    /// The transcript's id, when saved.
    pub transcript: Option<String>,
    /// The folder scripts ran in (the eval's files, and what the run wrote).
    pub outputs: PathBuf,
}

impl TaskRun {
    /// Skills whose instructions a call loaded successfully.
    #[must_use]
    pub fn loaded_skills(&self) -> Vec<&str> {
        self.calls
            .iter()
            .filter(|call| call.loads_skill && !call.is_error)
            .filter_map(|call| call.skill.as_deref())
            .collect()
    }

    /// Calls that failed.
    #[must_use]
    pub fn errors(&self) -> usize {
        self.calls.iter().filter(|call| call.is_error).count() + usize::from(self.error.is_some())
    }
}

/// Copy the eval's `files` (paths inside `skill_directory`) into `outputs`: regular files only,
/// never through a link, each at most [`MAX_TASK_FILE_BYTES`] and all of them at most
/// [`MAX_TASK_FILES_TOTAL_BYTES`].
///
/// # Errors
/// [`EvalError::Suite`] naming the file that cannot be used.
pub fn stage_files(
    skill_directory: &Path,
    files: &[String],
    outputs: &Path,
    suite_path: &Path,
) -> Result<(), EvalError> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    remove_earlier_outputs(outputs)?;
    fs_err::create_dir_all(outputs).map_err(|error| EvalError::io(outputs, error))?;
    // The sandbox may run the scripts as another user (a leased uid when skillbox runs as
    // root): they must be able to write here. The runs' parent folder is private to the user
    // (see `private_runs_folder`), so no one else reaches it.
    fs_err::set_permissions(outputs, std::fs::Permissions::from_mode(0o777))
        .map_err(|error| EvalError::io(outputs, error))?;
    let mut total: u64 = 0;
    for file in files {
        let problem = |message: String| EvalError::Suite {
            path: suite_path.to_path_buf(),
            message: format!("`files`: `{file}` {message}"),
        };
        let relative = skillbox_core::source::contained_relative_path(file)
            .map_err(|_| problem("is not a path inside the skill's folder".to_owned()))?;
        // Every component is checked: a link anywhere on the way could lead out of the skill.
        let mut walked = skill_directory.to_path_buf();
        for part in relative.split('/') {
            walked.push(part);
            let metadata = fs_err::symlink_metadata(&walked)
                .map_err(|error| problem(format!("cannot be read: {error}")))?;
            if metadata.file_type().is_symlink() {
                return Err(problem(
                    "passes through a symbolic link; eval files must be the skill's own".to_owned(),
                ));
            }
        }
        let source = skillbox_core::source::open_regular_file(&walked)
            .map_err(|error| problem(format!("is not a regular file: {error}")))?;
        let target = outputs.join(&relative);
        if let Some(parent) = target.parent() {
            fs_err::create_dir_all(parent).map_err(|error| EvalError::io(parent, error))?;
        }
        let mut bytes = Vec::new();
        source
            .take(MAX_TASK_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|error| problem(format!("cannot be read: {error}")))?;
        if bytes.len() as u64 > MAX_TASK_FILE_BYTES {
            return Err(problem(format!(
                "is larger than {} MiB",
                MAX_TASK_FILE_BYTES / (1024 * 1024)
            )));
        }
        total = total.saturating_add(bytes.len() as u64);
        if total > MAX_TASK_FILES_TOTAL_BYTES {
            return Err(problem(format!(
                "takes the eval's files past {} MiB, the most copied into one run's folder; list fewer or smaller files",
                MAX_TASK_FILES_TOTAL_BYTES / (1024 * 1024)
            )));
        }
        fs_err::write(&target, &bytes).map_err(|error| EvalError::io(&target, error))?;
    }
    Ok(())
}

/// Remove the outputs folder an earlier eval into the same `--output` left at `outputs`: it
/// holds what that run's code wrote (links to the user's files among them), which this run's
/// files must not be copied through and its checks must not find.
fn remove_earlier_outputs(outputs: &Path) -> Result<(), EvalError> {
    let removed = match fs_err::symlink_metadata(outputs) {
        Ok(metadata) if metadata.is_dir() => fs_err::remove_dir_all(outputs),
        Ok(_) => fs_err::remove_file(outputs),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    };
    removed.map_err(|error| EvalError::io(outputs, error))
}

/// Make `folder` (the parent of every run's outputs) and make it private to the user: the
/// outputs folders inside are writable by the sandbox's user, so no other user may reach them.
///
/// # Errors
/// When the folder cannot be made or is a link.
pub fn private_runs_folder(folder: &Path) -> Result<(), EvalError> {
    use std::os::unix::fs::PermissionsExt;
    fs_err::create_dir_all(folder).map_err(|error| EvalError::io(folder, error))?;
    let metadata =
        fs_err::symlink_metadata(folder).map_err(|error| EvalError::io(folder, error))?;
    if !metadata.file_type().is_dir() {
        return Err(EvalError::io(
            folder,
            std::io::Error::other("not a folder (a link?); choose another --output"),
        ));
    }
    fs_err::set_permissions(folder, std::fs::Permissions::from_mode(0o700))
        .map_err(|error| EvalError::io(folder, error))
}

/// The prompt a task run sends: the eval's prompt, and the files it has to work with.
#[must_use]
pub fn task_prompt(prompt: &str, files: &[String]) -> String {
    if files.is_empty() {
        return prompt.to_owned();
    }
    let listed: Vec<String> = files.iter().map(|file| format!("- {file}")).collect();
    format!(
        "{prompt}\n\nThe input files are in the working folder scripts run in:\n{}",
        listed.join("\n")
    )
}

/// Run the task's `prompt` through `agent` in `conversation` for at most `timeout`; `outputs`
/// is the folder the agent's executor runs scripts in.
pub async fn run_task(
    agent: &Agent,
    conversation: Conversation,
    prompt: &str,
    outputs: &Path,
    timeout: std::time::Duration,
) -> TaskRun {
    let started = Instant::now();
    let provider = agent.provider();
    let transcript = Some(conversation.id().to_owned());
    let mut turn = agent.run(conversation, TurnInput::Prompt(prompt.to_owned()));
    let cancel = turn.canceller();
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut timed_out = false;
    let mut started_calls: HashMap<String, (String, Option<String>)> = HashMap::new();
    let mut run = TaskRun {
        answer: String::new(),
        end: TurnEnd::Failed,
        error: None,
        calls: Vec::new(),
        usage: Usage::default(),
        rounds: 0,
        duration_ms: 0,
        transcript,
        outputs: outputs.to_path_buf(),
    };
    loop {
        let event = tokio::select! {
            event = turn.next_event() => match event {
                Some(event) => event,
                None => break,
            },
            () = &mut deadline, if !timed_out => {
                timed_out = true;
                cancel.cancel();
                continue;
            }
        };
        match event {
            AgentEvent::ToolCallStarted {
                id,
                name,
                arguments,
            } => {
                let skill = skill_named_by_call(&provider, &name, &arguments);
                started_calls.insert(id, (name, skill));
            }
            AgentEvent::ToolCallFinished {
                id,
                name,
                result,
                is_error,
                ..
            } => {
                let (name, skill) = started_calls.remove(&id).unwrap_or((name, None));
                run.calls.push(CallRecord {
                    loads_skill: loads_skill(&provider, &name),
                    name,
                    skill,
                    is_error,
                    result: result.chars().take(KEPT_RESULT_CHARS).collect(),
                });
            }
            AgentEvent::Error { message } => run.error = Some(message),
            AgentEvent::Final {
                text,
                end,
                rounds,
                usage,
            } => {
                if matches!(end, TurnEnd::Answered | TurnEnd::MaxRounds) {
                    run.answer = text;
                } else if run.error.is_none() {
                    run.error = Some(text);
                }
                run.end = end;
                run.rounds = rounds;
                run.usage = usage;
            }
            _ => {}
        }
    }
    if timed_out {
        run.error = Some(format!(
            "the run did not finish within {} s (--run-timeout)",
            timeout.as_secs()
        ));
        run.answer.clear();
    }
    if let Ok(conversation) = turn.finish().await
        && !conversation.is_saved()
    {
        run.transcript = None;
    }
    run.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    run
}
