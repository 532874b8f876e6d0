//! Skills Protocol runs (`execute_skill`, `run_code`): Python called through a small runner,
//! in the same layout as every other run (see [`super::layout`]).
//!
//! With namespaces the run sees a minimal root: every mounted skill read-only at
//! `/skills/<name>/`, each input blob as a read-only file `/blobs/<id>`, the runner and the
//! `runtime` module at `/skillbox/`, and a scratch `/workspace/` whose `out/` files the helper
//! copies out after the run for the caller to turn into output blobs. Without namespaces (a
//! weaker host, or the sandbox off) the same runner gets the host paths instead, so the code
//! behaves the same, only less isolated.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use skillbox_core::Skill;

use super::layout::{LayoutRequest, RunLayout, SANDBOX_BLOBS_DIR, SANDBOX_SKILLS_DIR, Shown};
use super::{Executor, SkillCopy, resolve_in_skill};
use crate::error::{ErrorType, ExecError};
use crate::interpreter::Language;
use crate::process::{Completed, Invocation};
use crate::sandbox::SandboxLevel;

pub use super::layout::{RUN_TMP_BYTES, SANDBOX_RUNTIME_DIR, SANDBOX_WORKSPACE};

/// The folder of the workspace whose files become output blobs.
pub const OUTPUT_FOLDER: &str = "out";
/// Largest JSON value a run may return (bigger results belong in `out/`).
pub const MAX_RESULT_BYTES: usize = 4 * 1024 * 1024;
/// Bytes of the end of the logs kept besides their beginning.
pub const LOG_TAIL_BYTES: usize = 16 * 1024;
/// Most files collected from `out/`.
pub const MAX_OUTPUT_FILES: usize = 100;
/// Most bytes collected from `out/` in total.
pub const MAX_OUTPUT_BYTES_TOTAL: u64 = 512 * 1024 * 1024;

/// What a run calls.
#[derive(Debug, Clone)]
pub enum PythonTarget<'a> {
    /// A `skill.toml` action skill: its `[runtime].export` function in `[runtime].entrypoint`.
    Export(&'a Skill),
    /// Model-written code defining `entrypoint`.
    Code {
        /// The source.
        code: String,
        /// The function to call (`main` by default).
        entrypoint: String,
    },
}

/// A blob a run may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputBlob {
    /// `blob:<32 hex>`.
    pub blob_id: String,
    /// The file holding its bytes on the host.
    pub path: PathBuf,
}

/// One Python run.
#[derive(Debug, Clone)]
pub struct PythonRun<'a> {
    /// What to call.
    pub target: PythonTarget<'a>,
    /// The JSON value passed to the function.
    pub args: Value,
    /// Skills mounted (and importable) besides the target; one per name.
    pub mount_skills: Vec<&'a Skill>,
    /// Blobs the run may read.
    pub input_blobs: Vec<InputBlob>,
    /// Wall-clock limit.
    pub timeout: Duration,
    /// Which copy of its name the exported skill is: a copy that is not the one in effect gets
    /// no secret granted by name.
    pub copy: SkillCopy,
}

/// Why a run failed: a type (a Python exception's class name, or one of the runtime's own)
/// and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFailure {
    /// E.g. `ValueError`, `Timeout`, `SandboxUnavailable`.
    pub error_type: String,
    /// What happened.
    pub message: String,
}

impl RunFailure {
    fn new(error_type: impl Into<String>, message: impl Into<String>) -> Self {
        RunFailure {
            error_type: error_type.into(),
            message: message.into(),
        }
    }
}

impl From<ExecError> for RunFailure {
    fn from(error: ExecError) -> Self {
        RunFailure::new(error.error_type.as_str(), error.message)
    }
}

/// A file the run left in `out/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    /// Its path relative to `out/`.
    pub name: String,
    /// Where it is on the host (valid while the outcome lives).
    pub path: PathBuf,
    /// The `out/` folder it is under, on the host.
    pub folder: PathBuf,
    /// Its size.
    pub size_bytes: u64,
}

/// What a run produced. Output files live until the outcome is dropped.
#[derive(Debug)]
pub struct PythonRunOutcome {
    /// The returned JSON value, or why there is none.
    pub result: Result<Value, RunFailure>,
    /// The run's logs (everything it printed), shortened to their beginning and end.
    pub logs_preview: String,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Files left in `out/`, in name order.
    pub output_files: Vec<OutputFile>,
    /// Entries of `out/` that were not collected, and why.
    pub skipped_outputs: Vec<String>,
    /// The sandbox level the run had.
    pub sandbox: SandboxLevel,
    _layout: Option<RunLayout>,
}

impl PythonRunOutcome {
    fn failed(failure: RunFailure, sandbox: SandboxLevel) -> Self {
        PythonRunOutcome {
            result: Err(failure),
            logs_preview: String::new(),
            duration_ms: 0,
            output_files: Vec::new(),
            skipped_outputs: Vec::new(),
            sandbox,
            _layout: None,
        }
    }
}

/// A mounted skill as the runner sees it.
struct MountedSkill {
    name: String,
    /// Its folder on the host, and where the run sees it.
    shown: Shown,
    entrypoint: Option<String>,
}

impl Executor {
    /// Run Python for the Skills Protocol: a skill's export function or model-written code.
    /// Failures of the code (and of the sandbox) come back in the outcome's `result`.
    pub async fn run_python(&self, run: PythonRun<'_>) -> PythonRunOutcome {
        let label = match &run.target {
            PythonTarget::Export(skill) => skill.name().to_owned(),
            PythonTarget::Code { .. } => "model-written code".to_owned(),
        };
        let outcome = match self.prepare_python(&run) {
            Ok(prepared) => self.execute_python(run, prepared).await,
            Err(error) => PythonRunOutcome::failed(error.into(), self.level),
        };
        self.audit(crate::audit::AuditRecord {
            timestamp_ms: crate::audit::now_ms(),
            kind: "protocol-run",
            skill: label.clone(),
            target: label,
            argument_count: 1,
            duration_ms: outcome.duration_ms,
            exit_code: None,
            stdout_bytes: 0,
            stderr_bytes: outcome.logs_preview.len() as u64,
            truncated: false,
            sandbox_level: self.level,
            outcome: match &outcome.result {
                Ok(_) => "success".to_owned(),
                Err(failure) => failure.error_type.clone(),
            },
        });
        outcome
    }

    fn prepare_python(&self, run: &PythonRun<'_>) -> Result<PreparedRun, ExecError> {
        let mut skills: Vec<MountedSkill> = Vec::new();
        let target_skill: Option<&Skill> = match &run.target {
            PythonTarget::Export(skill) => Some(*skill),
            PythonTarget::Code { .. } => None,
        };
        let is_target =
            |skill: &Skill| target_skill.is_some_and(|target| std::ptr::eq(target, skill));
        for skill in target_skill
            .into_iter()
            .chain(run.mount_skills.iter().copied())
        {
            if skills.iter().any(|mounted| mounted.name == skill.name()) {
                continue;
            }
            check_mount_name(skill.name())?;
            let host_directory = self.skill_directory(skill)?.directory;
            let entrypoint = match skill.manifest.as_ref().and_then(|m| m.runtime.as_ref()) {
                Some(runtime) if runtime.language.eq_ignore_ascii_case("python") => {
                    let real = resolve_in_skill(&host_directory, &runtime.entrypoint, false)?;
                    let relative = real
                        .strip_prefix(&host_directory)
                        .map(|relative| relative.to_string_lossy().into_owned())
                        .map_err(|_| {
                            ExecError::new(
                                ErrorType::ScriptNotAllowed,
                                format!(
                                    "the entrypoint of skill `{}` leaves its folder",
                                    skill.name()
                                ),
                            )
                        })?;
                    Some(relative)
                }
                Some(runtime) if is_target(skill) => {
                    return Err(ExecError::new(
                        ErrorType::ScriptNotAllowed,
                        format!(
                            "skill `{}` declares runtime language `{}`; only `python` can be executed",
                            skill.name(),
                            runtime.language
                        ),
                    ));
                }
                _ => None,
            };
            if is_target(skill) && entrypoint.is_none() {
                return Err(ExecError::new(
                    ErrorType::ScriptNotFound,
                    format!(
                        "skill `{}` has no [runtime] entrypoint to execute",
                        skill.name()
                    ),
                ));
            }
            skills.push(MountedSkill {
                name: skill.name().to_owned(),
                shown: self.shown(
                    &host_directory,
                    &Path::new(SANDBOX_SKILLS_DIR).join(skill.name()),
                ),
                entrypoint,
            });
        }
        let blobs = run
            .input_blobs
            .iter()
            .map(|blob| {
                Ok(self.shown(
                    &blob.path,
                    &Path::new(SANDBOX_BLOBS_DIR).join(blob_file_name(&blob.blob_id)?),
                ))
            })
            .collect::<Result<Vec<_>, ExecError>>()?;
        let interpreter = self.interpreter(Language::Python, Path::new("run.py"))?;
        Ok(PreparedRun {
            skills,
            blobs,
            interpreter,
        })
    }

    async fn execute_python(&self, run: PythonRun<'_>, prepared: PreparedRun) -> PythonRunOutcome {
        let request = LayoutRequest {
            skills: prepared
                .skills
                .iter()
                .map(|skill| skill.shown.clone())
                .collect(),
            files: prepared.blobs.clone(),
            interpreter: Some(prepared.interpreter.clone()),
            folders: vec![
                PathBuf::from(SANDBOX_SKILLS_DIR),
                PathBuf::from(SANDBOX_BLOBS_DIR),
            ],
            workspace_folders: vec![OUTPUT_FOLDER],
            keep_outputs: true,
            long_lived: false,
        };
        let layout = match self.layout(request) {
            Ok(layout) => layout,
            Err(error) => return PythonRunOutcome::failed(error.into(), self.level),
        };
        let runtime_path = self.runtime_path();
        let request = json!({
            "target": match &run.target {
                PythonTarget::Export(skill) => json!({
                    "kind": "export",
                    "skill": skill.name(),
                    "export": skill
                        .manifest
                        .as_ref()
                        .and_then(|manifest| manifest.runtime.as_ref())
                        .map_or("main", |runtime| runtime.export.as_str()),
                }),
                PythonTarget::Code { code, entrypoint } => json!({
                    "kind": "code", "code": code, "entrypoint": entrypoint,
                }),
            },
            "args": run.args,
            "skills": prepared.skills.iter().map(|skill| json!({
                "name": skill.name,
                "module": python_module_name(&skill.name),
                "path": skill.shown.inside,
                "entrypoint": skill.entrypoint,
            })).collect::<Vec<_>>(),
            "blobs": run.input_blobs.iter().zip(&prepared.blobs)
                .map(|(blob, shown)| (blob.blob_id.clone(), Value::String(shown.inside.display().to_string())))
                .collect::<serde_json::Map<_, _>>(),
            "workspace": layout.workspace,
            "runtime_path": runtime_path.join("python-lib"),
        });
        let network = match &run.target {
            PythonTarget::Export(skill) => {
                self.config.policy.allows_network(skill.name(), run.copy)
            }
            PythonTarget::Code { .. } => self.config.policy.network,
        };
        let secrets_of = match &run.target {
            PythonTarget::Export(skill) => Some((*skill, run.copy)),
            PythonTarget::Code { .. } => None,
        };
        let env = self.run_environment(&layout.workspace, &layout.tmp, secrets_of);
        let invocation = Invocation {
            program: prepared.interpreter,
            args: vec![
                "-I".into(),
                "-B".into(),
                runtime_path.join("protocol_runner.py").into_os_string(),
            ],
            env,
            workspace: layout.workspace.clone(),
            working_directory: None,
            readable: layout.readable.clone(),
            network,
            stdin: Some(serde_json::to_vec(&request).unwrap_or_default()),
            timeout: run.timeout,
            max_output_bytes: MAX_RESULT_BYTES,
            stderr_tail_bytes: LOG_TAIL_BYTES,
            live_output: None,
            uid: layout.uid(),
            root: layout.root.clone(),
        };
        let completed = self.sandbox.execute(invocation).await;
        let result = run_result(&completed, run.timeout);
        let (output_files, skipped_outputs) = super::off_the_async_threads(|| outputs_of(&layout));
        PythonRunOutcome {
            result,
            logs_preview: completed.stderr.text(),
            duration_ms: u64::try_from(completed.duration.as_millis()).unwrap_or(u64::MAX),
            output_files,
            skipped_outputs,
            sandbox: self.level,
            _layout: Some(layout),
        }
    }
}

struct PreparedRun {
    skills: Vec<MountedSkill>,
    /// The input blobs, in the order of the run's `input_blobs`.
    blobs: Vec<Shown>,
    interpreter: PathBuf,
}

/// Skill names become folder names under `/skills/`: refuse anything that could be a path.
fn check_mount_name(name: &str) -> Result<(), ExecError> {
    let fine = !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if fine {
        Ok(())
    } else {
        Err(ExecError::new(
            ErrorType::InvalidArgs,
            format!(
                "skill `{name}` cannot be mounted: its name must be letters, digits, `.`, `-` and `_`"
            ),
        ))
    }
}

/// The module under `skills.` a skill is imported as: its name with `-` as `_`; `None` when a
/// part is not a Python identifier (the skill is then mounted but not importable).
#[must_use]
pub fn python_module_name(skill_name: &str) -> Option<String> {
    let module = skill_name.replace('-', "_");
    module
        .split('.')
        .all(is_python_identifier)
        .then_some(module)
}

/// Whether `name` is an (ASCII) Python identifier.
#[must_use]
pub fn is_python_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Hex digits of a blob id after `blob:`.
const BLOB_ID_HEX_DIGITS: usize = 32;

/// The file name of a blob under `/blobs/`: its id without the `blob:` prefix. Only a
/// `blob:` id of [`BLOB_ID_HEX_DIGITS`] hex digits is one: the name becomes a path.
fn blob_file_name(blob_id: &str) -> Result<&str, ExecError> {
    blob_id
        .strip_prefix("blob:")
        .filter(|hex| hex.len() == BLOB_ID_HEX_DIGITS && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| {
            ExecError::new(
                ErrorType::InvalidArgs,
                format!(
                    "input blob id {blob_id:?} is not `blob:` followed by {BLOB_ID_HEX_DIGITS} hex digits"
                ),
            )
        })
}

/// The run's result from the runner's answer line, or why there is none.
fn run_result(completed: &Completed, timeout: Duration) -> Result<Value, RunFailure> {
    if let Some(setup) = &completed.setup_error {
        return Err(RunFailure::new(
            ErrorType::SandboxUnavailable.as_str(),
            format!("the sandbox could not start the run: {setup}"),
        ));
    }
    if completed.timed_out {
        return Err(RunFailure::new(
            "Timeout",
            format!(
                "the run took longer than {} ms and was stopped, with everything it started",
                timeout.as_millis()
            ),
        ));
    }
    if completed.stdout.truncated() {
        return Err(RunFailure::new(
            "OutputTooLarge",
            format!(
                "the returned value is larger than {MAX_RESULT_BYTES} bytes of JSON; write large results to /workspace/out/ (they become output blobs) and return a summary"
            ),
        ));
    }
    let answer = String::from_utf8_lossy(&completed.stdout.bytes);
    // serde_json reads at most 128 levels of nesting; a deeper value is the code's problem,
    // not a process that died.
    let mut too_deep = false;
    let answer = answer
        .lines()
        .rev()
        .find_map(|line| match serde_json::from_str::<Value>(line) {
            Ok(value) => Some(value),
            Err(error) => {
                too_deep |= error.to_string().starts_with("recursion limit exceeded");
                None
            }
        });
    match answer {
        Some(Value::Object(mut answer)) => match answer.remove("ok") {
            Some(Value::Bool(true)) => Ok(answer.remove("output").unwrap_or(Value::Null)),
            _ => {
                let error = answer.remove("error").unwrap_or(Value::Null);
                Err(RunFailure::new(
                    error.get("type").and_then(Value::as_str).unwrap_or("Error"),
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("the code failed without a message"),
                ))
            }
        },
        _ if too_deep => Err(RunFailure::new(
            "ValueError",
            "the value returned nests arrays and objects more than 128 levels deep, which cannot be read back; return a flatter value, or write it to /workspace/out/ (it becomes an output blob)",
        )),
        _ => Err(RunFailure::new(
            "ExecutionFailed",
            match completed.exit_code {
                Some(code) if code > 128 => format!(
                    "the Python process was killed by signal {} before it returned (a resource limit: memory, CPU time or file size?)",
                    code - 128
                ),
                Some(code) => format!(
                    "the Python process exited with status {code} before it returned a value; see the logs"
                ),
                None => "the Python process ended before it returned a value".to_owned(),
            },
        )),
    }
}

/// The files a run left in `out/`, and the entries not collected (the helper's report
/// included).
fn outputs_of(layout: &RunLayout) -> (Vec<OutputFile>, Vec<String>) {
    let (output_files, mut skipped_outputs) = match &layout.outputs {
        Some(outputs) => collect_outputs(outputs),
        None => (Vec::new(), Vec::new()),
    };
    if let Some(report) = &layout.output_report
        && let Ok(text) = fs_err::read_to_string(report)
    {
        skipped_outputs.extend(text.lines().map(str::to_owned));
        skipped_outputs.sort();
    }
    (output_files, skipped_outputs)
}

/// The regular files under `out/` (symlinks and special files are skipped, never followed:
/// `out/` itself included, which a run without namespaces may have replaced by a link).
fn collect_outputs(out: &Path) -> (Vec<OutputFile>, Vec<String>) {
    let mut files = Vec::new();
    let mut skipped = crate::sandbox::OutputNotes::default();
    let mut total: u64 = 0;
    if std::fs::symlink_metadata(out).is_ok_and(|metadata| !metadata.is_dir()) {
        skipped.push("out/: not a folder (links are not followed)".to_owned());
        return (files, skipped.into_lines());
    }
    let walker = walkdir::WalkDir::new(out)
        .follow_links(false)
        .follow_root_links(false)
        .min_depth(1)
        .max_depth(16)
        .sort_by_file_name();
    for entry in walker {
        if !skipped.look_at_one_more() {
            break;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                skipped.push(format!("out/: {error}"));
                continue;
            }
        };
        let relative = entry.path().strip_prefix(out).unwrap_or(Path::new(""));
        let name = relative.to_string_lossy().into_owned();
        // A file name may hold a newline or control characters: escaped in report lines.
        let shown = skillbox_core::printable::printable_path(relative);
        let file_type = entry.file_type();
        if file_type.is_dir() {
            continue;
        }
        if !file_type.is_file() {
            skipped.push(format!(
                "out/{shown}: not a regular file (links are not followed)"
            ));
            continue;
        }
        let size = entry.metadata().map(|metadata| metadata.len()).unwrap_or(0);
        if files.len() >= MAX_OUTPUT_FILES {
            skipped.push(format!(
                "out/{shown}: more than {MAX_OUTPUT_FILES} output files"
            ));
            continue;
        }
        if total.saturating_add(size) > MAX_OUTPUT_BYTES_TOTAL {
            skipped.push(format!(
                "out/{shown}: output files exceed {MAX_OUTPUT_BYTES_TOTAL} bytes in total"
            ));
            continue;
        }
        total += size;
        files.push(OutputFile {
            name,
            path: entry.path().to_path_buf(),
            folder: out.to_path_buf(),
            size_bytes: size,
        });
    }
    (files, skipped.into_lines())
}

/// Open an output file for reading without following any symlink on the way from its `out/`
/// folder, nor at `out/` itself (on hosts without namespaces the run's processes wrote that
/// folder and might still swap it, or a folder in it, for a link).
///
/// # Errors
/// When it cannot be opened, or is no longer a regular file.
pub fn open_output_file(file: &OutputFile) -> std::io::Result<std::fs::File> {
    use fs_err::os::unix::fs::OpenOptionsExt;
    use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};
    let folder = fs_err::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(&file.folder)?;
    let how = OpenHow::new()
        .flags(OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS);
    let relative = file.path.strip_prefix(&file.folder).unwrap_or(&file.path);
    let opened = openat2(folder.file(), relative, how).map_err(std::io::Error::from)?;
    let opened = std::fs::File::from(opened);
    if !opened.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(opened)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_follow_python_rules() {
        assert_eq!(
            python_module_name("text.stats").as_deref(),
            Some("text.stats")
        );
        assert_eq!(
            python_module_name("pdf-tools").as_deref(),
            Some("pdf_tools")
        );
        assert_eq!(python_module_name("3d.render"), None);
        assert_eq!(python_module_name("a..b"), None);
    }

    #[test]
    fn only_blob_ids_name_blob_files() {
        let hex = "0123456789abcdef0123456789ABCDEF";
        assert_eq!(blob_file_name(&format!("blob:{hex}")).unwrap(), hex);
        for bad in [
            hex.to_owned(),
            format!("blob:{}", &hex[1..]),
            format!("blob:{hex}0"),
            "blob:../../../../etc/passwd".to_owned(),
            format!("blob:{}/x", &hex[2..]),
        ] {
            assert!(blob_file_name(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn mount_names_cannot_be_paths() {
        assert!(check_mount_name("text.stats").is_ok());
        for bad in ["", ".", "..", "a/b", "a b", "../x"] {
            assert!(check_mount_name(bad).is_err(), "{bad:?}");
        }
    }
}
