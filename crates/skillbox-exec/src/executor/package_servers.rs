//! Starting a package server (issue 37, `docs/design/package-servers.md`): a declared `npx`
//! or `uvx` server never runs its launcher (which would fetch from a registry at that moment).
//! It runs from the tree `skillbox add`/`install` put in the store for this skill folder, as
//! the user's trust file records it: that tree is checked against its digest (a changed file
//! is refused), shown read-only at [`SANDBOX_PACKAGE_DIR`], and its entry runs with the
//! interpreter skillbox runs every script with. No registry is reached.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use skillbox_core::Skill;
use skillbox_core::package_server::PackageServer;
use skillbox_trust::TrustStore;
use skillbox_trust::package_servers::{ServerEntry, declaration_fingerprint};
use skillbox_trust::store::SkillStore;

use super::Executor;
use super::layout::Shown;
use crate::error::{ErrorType, ExecError};
use crate::interpreter::Language;

/// Where a package server's tree appears inside the sandbox (with namespaces).
pub const SANDBOX_PACKAGE_DIR: &str = "/package-server";

/// The Python bootstrap of a console script: `-c CODE TREE MODULE FUNCTION PROGRAM ARGS…`
/// puts the tree first on `sys.path`, imports the module and calls the function with the
/// server's arguments as `sys.argv[1:]`.
const PYTHON_ENTRY: &str = "import importlib, sys\n\
tree, module, function, program = sys.argv[1:5]\n\
del sys.argv[1:5]\n\
sys.argv[0] = program\n\
sys.path.insert(0, tree)\n\
target = importlib.import_module(module)\n\
for part in function.split('.'):\n    target = getattr(target, part)\n\
sys.exit(target())\n";

/// How a package server starts: its program, leading arguments, interpreter and tree.
pub(super) struct PackageLaunch {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub interpreter: PathBuf,
    pub tree: Shown,
}

impl Executor {
    /// The stored tree and entry of the package server `server` of `skill` (declared as
    /// `command args`), checked: installed for this skill folder and this declaration, and
    /// holding exactly the files installed.
    pub(super) fn package_launch(
        &self,
        skill: &Skill,
        server: &str,
        (command, args): (&str, &[String]),
        package: &PackageServer,
    ) -> Result<PackageLaunch, ExecError> {
        let unavailable = |why: String| {
            ExecError::new(
                ErrorType::ExecutionFailed,
                format!(
                    "its {} package `{}` {why}",
                    package.registry, package.package
                ),
            )
        };
        let trust_file = match self.config.trust.trust_file() {
            Some(path) => path.to_path_buf(),
            None => TrustStore::default_path()
                .map_err(|error| unavailable(format!("cannot be looked up: {error}")))?,
        };
        let records = TrustStore::load(&trust_file)
            .map_err(|error| unavailable(format!("cannot be looked up: {error}")))?;
        let folder = fs_err::canonicalize(&skill.directory).map_err(|error| {
            unavailable(format!(
                "cannot be looked up: the skill's folder cannot be read ({error})"
            ))
        })?;
        let install_hint = if records.installed(&folder).is_some() {
            "run `skillbox install` in its project to install it ahead"
        } else {
            "run `skillbox prepare` to install it ahead (for a skill folder no lock installed)"
        };
        let record = records
            .provisioned_server(&folder, server)
            .ok_or_else(|| unavailable(format!("is not installed; {install_hint}")))?;
        if record.declaration != declaration_fingerprint(command, args)
            || record.package != package.package
        {
            return Err(unavailable(format!(
                "was installed ({} {}) for another declaration of the server; {install_hint}",
                record.package, record.version
            )));
        }
        let store = skillbox_trust::store::cache_folder()
            .ok_or_else(|| unavailable("cannot be found: no cache folder is known".to_owned()))
            .and_then(|cache| {
                SkillStore::open(&cache.join("store"))
                    .map_err(|error| unavailable(format!("cannot be found: {error}")))
            })?;
        let tree = store
            .existing(&record.digest)
            .ok_or_else(|| unavailable(format!("is gone from the store; {install_hint}")))?;
        let found = skillbox_trust::digest::folder_inventory_at(&tree)
            .map_err(|error| unavailable(format!("cannot be read in the store ({error})")))?;
        if found.digest != record.digest {
            return Err(unavailable(format!(
                "has changed in the store since it was installed (`skillbox verify` names the files); {install_hint}"
            )));
        }
        let shown = self.shown(&tree, Path::new(SANDBOX_PACKAGE_DIR));
        match &record.entry {
            ServerEntry::Node { script } => {
                let interpreter = self.interpreter(Language::Node, Path::new(script))?;
                Ok(PackageLaunch {
                    program: interpreter.clone(),
                    args: vec![shown.inside.join(script).into_os_string()],
                    interpreter,
                    tree: shown,
                })
            }
            ServerEntry::Python {
                module,
                function,
                python,
            } => {
                let interpreter = self.interpreter(Language::Python, Path::new(module))?;
                if let Some(running) = python_version_of(&interpreter)
                    && running != *python
                {
                    return Err(unavailable(format!(
                        "was installed for Python {python}, and skillbox runs Python {running}; {install_hint}"
                    )));
                }
                let mut args: Vec<OsString> = ["-I", "-B", "-c", PYTHON_ENTRY]
                    .iter()
                    .map(OsString::from)
                    .collect();
                args.push(shown.inside.clone().into_os_string());
                args.extend([module, function].map(OsString::from));
                args.push(OsString::from(package.program_shown()));
                Ok(PackageLaunch {
                    program: interpreter.clone(),
                    args,
                    interpreter,
                    tree: shown,
                })
            }
        }
    }
}

/// `major.minor` of a Python interpreter from its file name (`python3.11`), when it says.
fn python_version_of(interpreter: &Path) -> Option<String> {
    let name = interpreter.file_name()?.to_str()?;
    let version = name.strip_prefix("python")?;
    let (major, minor) = version.split_once('.')?;
    let digits = |text: &str| !text.is_empty() && text.chars().all(|c| c.is_ascii_digit());
    (digits(major) && digits(minor)).then(|| version.to_owned())
}
