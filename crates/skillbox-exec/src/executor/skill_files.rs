//! What a call runs, found in its skill: the skill's folder on disk (for an archived skill, its
//! unpacked copy), the file the call names (never one outside that folder), where the run sees
//! that file, and the program that runs it.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use skillbox_core::Skill;
use skillbox_core::source::{SkillSource, contained_relative_path};

use super::layout::SANDBOX_SKILL_DIR;
use super::pinned::TrustedFiles;
use super::{Command, Executor};
use crate::error::{ErrorType, ExecError};
use crate::interpreter::{Language, Reach, interpreter_for};

impl Executor {
    /// Where a file of the skill appears to the run.
    pub(super) fn seen_in_skill(&self, skill_directory: &Path, file: &Path) -> PathBuf {
        match file.strip_prefix(skill_directory) {
            Ok(relative) if self.isolated() => Path::new(SANDBOX_SKILL_DIR).join(relative),
            _ => file.to_path_buf(),
        }
    }

    /// The program and leading arguments that run a file (`path` on the host, `seen` as the
    /// run sees it): its language's interpreter, or the file itself when it is executable and
    /// has no known extension.
    pub(super) fn command_for(&self, path: &Path, seen: &Path) -> Result<Command, ExecError> {
        if let Some(language) = Language::from_path(path) {
            let interpreter = self.interpreter(language, path)?;
            let mut args: Vec<OsString> =
                language.leading_args().iter().map(OsString::from).collect();
            args.push(seen.as_os_str().to_owned());
            return Ok(Command {
                program: interpreter.clone(),
                args,
                interpreter: Some(interpreter),
            });
        }
        let executable = std::fs::metadata(path)
            .map(|metadata| metadata.permissions().mode() & 0o111 != 0)
            .unwrap_or(false);
        if executable {
            // Run directly: the program is a file of the skill as the run sees it, not an
            // interpreter whose folder the layout shows.
            return Ok(Command {
                program: seen.to_path_buf(),
                args: Vec::new(),
                interpreter: None,
            });
        }
        Err(ExecError::new(
            ErrorType::ScriptNotAllowed,
            format!(
                "`{}` has no known extension (.py, .js, .mjs, .cjs, .sh, .rb, .pl, .php) and is not executable",
                path.file_name()
                    .map(|name| name.to_string_lossy())
                    .unwrap_or_default()
            ),
        ))
    }

    /// The interpreter this executor runs a language's scripts with.
    #[must_use]
    pub fn interpreter_path(&self, language: Language) -> Option<PathBuf> {
        self.interpreter(language, Path::new("script")).ok()
    }

    /// Who must be able to run the interpreters of this executor's runs.
    #[must_use]
    pub fn reach(&self) -> Reach {
        Reach::for_layers(self.sandbox.layers)
    }

    pub(super) fn interpreter(
        &self,
        language: Language,
        path: &Path,
    ) -> Result<PathBuf, ExecError> {
        let reach = self.reach();
        interpreter_for(language, reach)
            .map(|interpreter| interpreter.program.clone())
            .ok_or_else(|| {
                ExecError::new(
                    ErrorType::InterpreterNotFound,
                    format!(
                        "no `{}` interpreter{} is installed to run `{}`",
                        language.command_name(),
                        if reach == Reach::Runtime {
                            ""
                        } else {
                            " usable by the sandbox user"
                        },
                        path.file_name()
                            .map(|name| name.to_string_lossy())
                            .unwrap_or_default()
                    ),
                )
            })
    }

    /// The skill's files as a run gets them, once the trust gate allows its code to run (see
    /// [`Executor::trusted_files`]): its folder on disk, its verified copy when its trust is
    /// pinned, or (archived skills) its copy unpacked read-only on first use. Refuses a skill
    /// whose name could be read as a path: lenient loading keeps such skills listed with their
    /// diagnostics, but never runs them.
    pub(super) fn skill_directory(&self, skill: &Skill) -> Result<SkillFiles, ExecError> {
        check_runnable_name(skill.name())?;
        let trusted = self.trusted_files(skill)?;
        let (directory, host_path) = match (&skill.source, trusted) {
            (SkillSource::Directory(directory), trusted) => {
                let own = fs_err::canonicalize(directory.path()).map_err(|error| {
                    ExecError::new(
                        ErrorType::SkillNotFound,
                        format!("skill `{}` is no longer readable: {error}", skill.name()),
                    )
                })?;
                match trusted {
                    TrustedFiles::AsTheyAre => (own.clone(), own),
                    TrustedFiles::VerifiedCopy(copy) => (copy, own),
                }
            }
            (SkillSource::Archive(files), _) => {
                let unpacked = self.unpack(skill, files)?;
                (unpacked.clone(), unpacked)
            }
        };
        self.check_working_directory([directory.as_path(), host_path.as_path()])?;
        // In a minimal root the folder is bound, so only the folder itself (not the folders
        // above it on the host) must be open to the sandbox user.
        let isolated = self.isolated();
        let readable = if isolated {
            crate::sandbox::open_to_others(&directory)
        } else {
            crate::sandbox::readable_by_others(&directory)
        };
        if self.sandbox.layers.uid_drop && !readable {
            return Err(ExecError::new(
                ErrorType::SandboxUnavailable,
                format!(
                    "the sandbox user cannot read skill `{}` at `{}`; make the folder{} world-readable (chmod o+rx)",
                    skill.name(),
                    directory.display(),
                    if isolated { "" } else { " and its parents" }
                ),
            ));
        }
        Ok(SkillFiles {
            directory,
            host_path,
        })
    }
}

/// A skill's files as one run gets them.
#[derive(Debug, Clone)]
pub(crate) struct SkillFiles {
    /// The host folder the run reads the skill from: its own folder, its verified copy (trust
    /// pinned), or its unpacked archive.
    pub directory: PathBuf,
    /// The host path instructions name the skill by (`${SKILL_DIR}`): where a minimal root
    /// shows `directory` a second time. The skill's own folder, even when it runs from a copy.
    pub host_path: PathBuf,
}

/// Refuse to run a skill whose name could be read as a path or hides characters (see
/// [`skillbox_core::names::unsafe_name_reason`]).
///
/// # Errors
/// [`ErrorType::ScriptNotAllowed`] naming the skill and what to fix.
pub fn check_runnable_name(name: &str) -> Result<(), ExecError> {
    match skillbox_core::names::unsafe_name_reason(name) {
        None => Ok(()),
        Some(problem) => Err(ExecError::new(
            ErrorType::ScriptNotAllowed,
            format!(
                "skill {name:?} cannot run: {problem}; a runnable skill's name is letters, digits, `-`, `_` and `.` (fix `name` in its SKILL.md or skill.toml)"
            ),
        )),
    }
}

/// Find a script or handler inside a skill folder. `script` is a path relative to the skill,
/// or (when `search_scripts`) a bare file name found at the skill root or in `scripts/`.
/// Absolute paths, `..`, and symlinks resolving outside the skill are refused.
///
/// # Errors
/// [`ErrorType::ScriptNotAllowed`] or [`ErrorType::ScriptNotFound`], naming the script.
pub fn resolve_in_skill(
    skill_directory: &Path,
    script: &str,
    search_scripts: bool,
) -> Result<PathBuf, ExecError> {
    let not_allowed = |why: &str| {
        ExecError::new(
            ErrorType::ScriptNotAllowed,
            format!(
                "script `{script}` is not allowed: {why}; name a file inside the skill folder, e.g. `scripts/run.py`"
            ),
        )
    };
    if script.trim().is_empty() {
        return Err(not_allowed("it is empty"));
    }
    if Path::new(script).is_absolute() {
        return Err(not_allowed("absolute paths are refused"));
    }
    let relative = contained_relative_path(script)
        .map_err(|_| not_allowed("it climbs out of the skill with `..`"))?;
    let mut candidates = vec![skill_directory.join(&relative)];
    if search_scripts && !relative.contains('/') {
        candidates.push(skill_directory.join("scripts").join(&relative));
    }
    for candidate in candidates {
        let Ok(metadata) = std::fs::symlink_metadata(&candidate) else {
            continue;
        };
        let real =
            fs_err::canonicalize(&candidate).map_err(|_| not_allowed("it is a broken link"))?;
        if !real.starts_with(skill_directory) {
            return Err(not_allowed(
                "it resolves (through a symlink) outside the skill folder",
            ));
        }
        let target = if metadata.file_type().is_symlink() {
            std::fs::metadata(&real).map_err(|_| not_allowed("it is a broken link"))?
        } else {
            metadata
        };
        if !target.is_file() {
            return Err(not_allowed("it is not a regular file"));
        }
        return Ok(real);
    }
    Err(ExecError::new(
        ErrorType::ScriptNotFound,
        format!(
            "script `{script}` does not exist in skill folder `{}`{}",
            skill_directory.display(),
            if search_scripts && !script.contains('/') {
                " (looked at its root and in scripts/)"
            } else {
                ""
            }
        ),
    ))
}
