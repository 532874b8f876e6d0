//! Which program runs a script, chosen by its extension, with the real interpreter binary
//! resolved once (the `python3` on PATH may be a slow pyenv shim, or live under a home folder
//! the sandbox uid cannot enter).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;

use crate::sandbox::readable_by_others;

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
}

/// A resolved interpreter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Interpreter {
    /// The language.
    pub language: Language,
    /// Absolute path of the real binary.
    pub program: PathBuf,
    /// Whether a sandboxed (non-root) process can run it.
    pub usable_in_sandbox: bool,
}

/// Search PATH for the interpreters of every language, once per process.
#[must_use]
pub fn interpreters() -> &'static [Interpreter] {
    static RESOLVED: OnceLock<Vec<Interpreter>> = OnceLock::new();
    RESOLVED.get_or_init(|| {
        [
            Language::Python,
            Language::Node,
            Language::Bash,
            Language::Ruby,
            Language::Perl,
            Language::Php,
        ]
        .into_iter()
        .flat_map(resolve_all)
        .collect()
    })
}

/// The interpreter for a language: the first on PATH that the sandbox uid can run when
/// `for_sandbox`, else the first found.
#[must_use]
pub fn interpreter_for(language: Language, for_sandbox: bool) -> Option<&'static Interpreter> {
    let mut candidates = interpreters()
        .iter()
        .filter(|found| found.language == language);
    if for_sandbox {
        candidates.find(|found| found.usable_in_sandbox)
    } else {
        candidates.next()
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
        found.push(Interpreter {
            language,
            usable_in_sandbox: readable_by_others(&program),
            program,
        });
    }
    found
}

/// The binary behind a PATH entry: symlinks resolved, and pyenv-style shims asked for the
/// interpreter they would run.
fn real_binary(language: Language, candidate: &Path) -> Option<PathBuf> {
    let resolved = fs_err::canonicalize(candidate).ok()?;
    let is_shim = candidate
        .components()
        .any(|part| part.as_os_str() == "shims")
        || starts_with_shebang(&resolved);
    if language == Language::Python && is_shim {
        let output = std::process::Command::new(candidate)
            .args(["-c", "import sys; print(sys.executable)"])
            .stdin(std::process::Stdio::null())
            .output()
            .ok()?;
        let executable = String::from_utf8(output.stdout).ok()?;
        let executable = PathBuf::from(executable.trim());
        return executable
            .is_absolute()
            .then(|| fs_err::canonicalize(&executable).unwrap_or(executable));
    }
    Some(resolved)
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
