//! Which program runs a script, chosen by its extension, with the real interpreter binary
//! resolved once per language and process, and only for the languages actually used.
//!
//! The `python3` on PATH may be a pyenv shim: asking it which interpreter it runs costs about
//! 100 ms, more than the script. pyenv's choice is therefore read the way pyenv makes it
//! (`PYENV_VERSION`, the nearest `.python-version`, then `$PYENV_ROOT/version`) without running
//! it; only a shim skillbox cannot read that way is run.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;

use crate::sandbox::{ROOT_SYSTEM_FOLDERS, SandboxLayers, open_to_others, readable_by_others};

/// A scripting language skillbox knows how to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// `.py`
    Python,
    /// `.js`, `.mjs`, `.cjs`
    Node,
    /// `.sh`, `.bash`
    Bash,
    /// `.rb`
    Ruby,
    /// `.pl`
    Perl,
    /// `.php`
    Php,
}

/// Every language, in the order `doctor` lists them.
pub const LANGUAGES: [Language; 6] = [
    Language::Python,
    Language::Node,
    Language::Bash,
    Language::Ruby,
    Language::Perl,
    Language::Php,
];

impl Language {
    /// The language of a file by its extension.
    #[must_use]
    pub fn from_path(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "py" => Some(Language::Python),
            "js" | "mjs" | "cjs" => Some(Language::Node),
            "sh" | "bash" => Some(Language::Bash),
            "rb" => Some(Language::Ruby),
            "pl" => Some(Language::Perl),
            "php" => Some(Language::Php),
            _ => None,
        }
    }

    /// The command name looked up on PATH.
    #[must_use]
    pub fn command_name(self) -> &'static str {
        match self {
            Language::Python => "python3",
            Language::Node => "node",
            Language::Bash => "bash",
            Language::Ruby => "ruby",
            Language::Perl => "perl",
            Language::Php => "php",
        }
    }

    /// Arguments placed before the script: Python ignores `PYTHON*` variables and the user
    /// site folder but keeps the script's own folder importable.
    #[must_use]
    pub fn leading_args(self) -> &'static [&'static str] {
        match self {
            Language::Python => &["-E", "-s", "-B"],
            _ => &[],
        }
    }

    fn index(self) -> usize {
        match self {
            Language::Python => 0,
            Language::Node => 1,
            Language::Bash => 2,
            Language::Ruby => 3,
            Language::Perl => 4,
            Language::Php => 5,
        }
    }
}

/// A resolved interpreter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Interpreter {
    /// The language.
    pub language: Language,
    /// Absolute path of the real binary.
    pub program: PathBuf,
    /// The folder it is installed in when that is outside the system folders (a pyenv version,
    /// say): runs in a minimal root get this folder shown read-only.
    pub prefix: Option<PathBuf>,
    /// Whether a sandbox uid can run it in a minimal root (its own folder and files are open to
    /// others; the folders above it need not be; its folder is one a minimal root may show).
    pub usable_in_root: bool,
    /// Whether a sandbox uid can run it from the host's tree (every folder above it is open).
    pub usable_on_host: bool,
}

/// Who must be able to run an interpreter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The runtime's own user (no uid drop).
    Runtime,
    /// A sandbox uid inside a minimal root.
    SandboxRoot,
    /// A sandbox uid on the host's tree.
    SandboxHost,
}

impl Reach {
    /// Who runs programs under these sandbox layers: a sandbox uid in a minimal root (with
    /// namespaces) or on the host's tree, or the runtime's own user (no uid drop).
    #[must_use]
    pub fn for_layers(layers: SandboxLayers) -> Reach {
        match (layers.uid_drop, layers.namespaces) {
            (false, _) => Reach::Runtime,
            (true, true) => Reach::SandboxRoot,
            (true, false) => Reach::SandboxHost,
        }
    }
}

impl Interpreter {
    /// Whether `reach` can run it.
    #[must_use]
    pub fn usable_by(&self, reach: Reach) -> bool {
        match reach {
            Reach::Runtime => true,
            Reach::SandboxRoot => self.usable_in_root,
            Reach::SandboxHost => self.usable_on_host,
        }
    }
}

/// The interpreters of one language on PATH, best first; resolved on first use.
#[must_use]
pub fn interpreters_of(language: Language) -> &'static [Interpreter] {
    static RESOLVED: [OnceLock<Vec<Interpreter>>; 6] = [const { OnceLock::new() }; 6];
    RESOLVED[language.index()].get_or_init(|| resolve_all(language))
}

/// Every interpreter of every language (resolves them all: for `doctor`).
#[must_use]
pub fn interpreters() -> Vec<&'static Interpreter> {
    LANGUAGES
        .iter()
        .flat_map(|language| interpreters_of(*language))
        .collect()
}

/// The interpreter for a language: the first on PATH that `reach` can run. In a minimal root
/// one from the system folders is preferred, so that nothing else of the host needs showing;
/// an interpreter installed elsewhere is used (its folder shown read-only) only when the
/// system has none.
#[must_use]
pub fn interpreter_for(language: Language, reach: Reach) -> Option<&'static Interpreter> {
    let mut usable = interpreters_of(language)
        .iter()
        .filter(|found| found.usable_by(reach));
    match reach {
        // The first of the system's, else the first at all.
        Reach::SandboxRoot => usable.min_by_key(|found| found.prefix.is_some()),
        Reach::Runtime | Reach::SandboxHost => usable.next(),
    }
}

fn resolve_all(language: Language) -> Vec<Interpreter> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut found: Vec<Interpreter> = Vec::new();
    for directory in std::env::split_paths(&path) {
        let candidate = directory.join(language.command_name());
        if !candidate.is_file() {
            continue;
        }
        let Some(program) = real_binary(language, &candidate) else {
            continue;
        };
        if found.iter().any(|known| known.program == program) {
            continue;
        }
        let prefix = installation_prefix(&program);
        let usable_in_root = prefix.as_deref().is_none_or(|prefix| {
            crate::executor::layout::may_show_at_host_path(prefix)
                && open_to_others(prefix)
                && readable_by_others_below(prefix, &program)
        }) && open_to_others(&program);
        found.push(Interpreter {
            language,
            usable_on_host: readable_by_others(&program),
            usable_in_root,
            prefix,
            program,
        });
    }
    found
}

/// The folder an interpreter outside the system folders is installed in: the parent of its
/// `bin/` folder.
#[must_use]
pub fn installation_prefix(program: &Path) -> Option<PathBuf> {
    let inside_system = ROOT_SYSTEM_FOLDERS
        .iter()
        .any(|folder| program.starts_with(folder));
    if inside_system {
        return None;
    }
    program.parent()?.parent().map(Path::to_path_buf)
}

/// Whether every folder from `program`'s folder up to `prefix` is open to others.
fn readable_by_others_below(prefix: &Path, program: &Path) -> bool {
    program
        .ancestors()
        .skip(1)
        .take_while(|folder| folder.starts_with(prefix))
        .all(open_to_others)
}

/// The binary behind a PATH entry: symlinks resolved, and shims resolved to the interpreter
/// they would run (pyenv's choice read without running it when possible).
fn real_binary(language: Language, candidate: &Path) -> Option<PathBuf> {
    let resolved = fs_err::canonicalize(candidate).ok()?;
    let is_shim = candidate
        .components()
        .any(|part| part.as_os_str() == "shims")
        || starts_with_shebang(&resolved);
    if language != Language::Python || !is_shim {
        return Some(resolved);
    }
    match pyenv_choice(candidate, &PyenvEnvironment::current()) {
        PyenvChoice::Version(program) => Some(program),
        // pyenv would fall through to the next `python3` on PATH.
        PyenvChoice::System => None,
        PyenvChoice::Unknown => ask_shim(candidate),
    }
}

/// Run a shim and ask which interpreter it is (slow: the shim's own start-up).
fn ask_shim(candidate: &Path) -> Option<PathBuf> {
    let output = std::process::Command::new(candidate)
        .args(["-c", "import sys; print(sys.executable)"])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let executable = String::from_utf8(output.stdout).ok()?;
    let executable = PathBuf::from(executable.trim());
    executable
        .is_absolute()
        .then(|| fs_err::canonicalize(&executable).unwrap_or(executable))
}

/// What a pyenv shim would run.
#[derive(Debug, PartialEq, Eq)]
enum PyenvChoice {
    /// This interpreter.
    Version(PathBuf),
    /// The next `python3` on PATH (`system`).
    System,
    /// Not a pyenv shim, or a choice skillbox does not read (ask the shim).
    Unknown,
}

/// What pyenv's choice depends on besides its files.
#[derive(Debug, Default)]
struct PyenvEnvironment {
    root: Option<PathBuf>,
    version: Option<String>,
    start: Option<PathBuf>,
}

impl PyenvEnvironment {
    fn current() -> Self {
        PyenvEnvironment {
            root: std::env::var_os("PYENV_ROOT").map(PathBuf::from),
            version: std::env::var("PYENV_VERSION").ok(),
            start: std::env::var_os("PYENV_DIR")
                .map(PathBuf::from)
                .or_else(|| std::env::current_dir().ok()),
        }
    }
}

/// pyenv's version choice, in pyenv's order: `PYENV_VERSION`, the nearest `.python-version`
/// from the working directory (or `PYENV_DIR`) up, `$PYENV_ROOT/version`, else `system`.
fn pyenv_choice(shim: &Path, environment: &PyenvEnvironment) -> PyenvChoice {
    let Some(shims) = shim.parent() else {
        return PyenvChoice::Unknown;
    };
    let root = match (&environment.root, shims.parent()) {
        (Some(root), _) => root.clone(),
        (None, Some(root)) => root.to_path_buf(),
        (None, None) => return PyenvChoice::Unknown,
    };
    if shims != root.join("shims") || !root.join("versions").is_dir() {
        return PyenvChoice::Unknown;
    }
    let version = environment
        .version
        .as_deref()
        .and_then(first_version)
        .or_else(|| {
            environment.start.as_deref().and_then(|start| {
                start
                    .ancestors()
                    .find_map(|folder| version_file(&folder.join(".python-version")))
            })
        })
        .or_else(|| version_file(&root.join("version")))
        .unwrap_or_else(|| "system".to_owned());
    if version == "system" {
        return PyenvChoice::System;
    }
    if version.contains('/') || version.starts_with('.') {
        return PyenvChoice::Unknown;
    }
    let program = root.join("versions").join(&version).join("bin/python3");
    match fs_err::canonicalize(&program) {
        Ok(real) if real.is_file() => PyenvChoice::Version(real),
        // A prefix like `3.11` or a missing version: pyenv has rules of its own.
        _ => PyenvChoice::Unknown,
    }
}

/// The first version a pyenv version file names, if it exists and names one.
fn version_file(path: &Path) -> Option<String> {
    let text = fs_err::read_to_string(path).ok()?;
    first_version(&text)
}

fn first_version(text: &str) -> Option<String> {
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .flat_map(|line| line.split(|c: char| c.is_whitespace() || c == ':'))
        .find(|word| !word.is_empty())
        .map(str::to_owned)
}

/// Whether a file is a script (`#!` first) rather than a binary: shims are scripts.
fn starts_with_shebang(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 2];
    fs_err::File::open(path)
        .and_then(|mut file| file.read_exact(&mut head))
        .is_ok()
        && &head == b"#!"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_files_name_their_first_version() {
        assert_eq!(first_version("3.11.7\n").as_deref(), Some("3.11.7"));
        assert_eq!(
            first_version("# comment\n 3.12.1 3.11.7\n").as_deref(),
            Some("3.12.1")
        );
        assert_eq!(first_version("3.11.7:system").as_deref(), Some("3.11.7"));
        assert_eq!(first_version("\n\n"), None);
    }

    #[test]
    fn a_pyenv_tree_is_read_without_running_the_shim() {
        let root = tempfile::tempdir().unwrap();
        let shim = root.path().join("shims/python3");
        fs_err::create_dir_all(shim.parent().unwrap()).unwrap();
        fs_err::write(&shim, "#!/bin/sh\nexit 99\n").unwrap();
        let program = root.path().join("versions/3.99.1/bin/python3");
        fs_err::create_dir_all(program.parent().unwrap()).unwrap();
        fs_err::write(&program, "binary").unwrap();
        let project = root.path().join("project/inner");
        fs_err::create_dir_all(&project).unwrap();
        let environment = |version: Option<&str>| PyenvEnvironment {
            root: None,
            version: version.map(str::to_owned),
            start: Some(project.clone()),
        };
        let chosen = PyenvChoice::Version(fs_err::canonicalize(&program).unwrap());
        // No version anywhere: pyenv means the system interpreter.
        assert_eq!(pyenv_choice(&shim, &environment(None)), PyenvChoice::System);
        fs_err::write(root.path().join("version"), "3.99.1\n").unwrap();
        assert_eq!(pyenv_choice(&shim, &environment(None)), chosen);
        // A project's .python-version wins over the global file; the variable over both.
        fs_err::write(root.path().join("project/.python-version"), "system\n").unwrap();
        assert_eq!(pyenv_choice(&shim, &environment(None)), PyenvChoice::System);
        assert_eq!(pyenv_choice(&shim, &environment(Some("3.99.1"))), chosen);
        // Versions skillbox cannot read exactly are left to the shim.
        assert_eq!(
            pyenv_choice(&shim, &environment(Some("3.99"))),
            PyenvChoice::Unknown
        );
        assert_eq!(
            pyenv_choice(&root.path().join("elsewhere/python3"), &environment(None)),
            PyenvChoice::Unknown
        );
    }
}
