//! PyPI package servers: resolved by `pip` (`install --dry-run --report`: every wheel with
//! its exact version, URL and sha256), then installed with `--require-hashes --no-deps` from
//! exactly that list into a plain folder (`--target`), wheels only (an sdist would run its
//! build). The folder is put first on `sys.path` of the `python3` skillbox runs servers with,
//! so it needs no virtual environment (whose scripts name the folder they were made in).
//! Modules are compiled ahead (hash-checked bytecode: the store is read-only).

use std::path::Path;

use serde_json::Value;
use skillbox_core::package_server::PackageServer;
use skillbox_trust::package_servers::{LockedPackage, LockedServer, ServerEntry};

use super::tool_run::run_tool;
use super::{Installed, MAX_PACKAGES_PER_SERVER, PACKAGE_TOOL_TIMEOUT, PackageError};

/// Where the sandbox shows a package server's tree (`skillbox_exec`'s `SANDBOX_PACKAGE_DIR`):
/// the file name compiled modules carry.
const SANDBOX_TREE_NAME: &str = "/package-server";

/// Options every pip run gets.
const PIP_OPTIONS: [&str; 4] = [
    "--disable-pip-version-check",
    "--no-input",
    "--quiet",
    "--only-binary=:all:",
];

/// Resolve and install `server`'s package into `tree` (created).
pub(super) fn resolve_and_install(
    python: &Path,
    tree: &Path,
    server: &PackageServer,
) -> Result<Installed, PackageError> {
    let staging = staging_of(tree)?;
    let report = staging.join("resolved.json");
    let report_text = report.to_string_lossy().into_owned();
    let requirement = server.requirement();
    let mut args = vec![
        "-I",
        "-m",
        "pip",
        "install",
        "--dry-run",
        "--ignore-installed",
    ];
    args.extend(PIP_OPTIONS);
    args.extend(["--report", &report_text, &requirement]);
    run_tool(
        &format!("pip resolving `{requirement}`"),
        python,
        &args,
        staging,
        &[],
        PACKAGE_TOOL_TIMEOUT,
    )
    .map_err(|error| {
        PackageError::new(format!(
            "{}\n(skillbox installs wheels only, which run no code at install: a package, or a dependency, with no wheel for this Python cannot be installed ahead)",
            error.message
        ))
    })?;
    let report: Value = fs_err::read_to_string(&report)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .ok_or_else(|| PackageError::new("pip wrote no readable resolution report"))?;
    let packages = resolved_packages(&report)?;
    let version = packages
        .iter()
        .find(|package| normalized(&package.name) == normalized(&server.package))
        .map(|package| package.version.clone())
        .ok_or_else(|| {
            PackageError::new(format!("pip did not resolve `{}` itself", server.package))
        })?;
    install_exactly(python, tree, &packages)?;
    let entry = entry_point(python, tree, &server.package, server.program.as_deref())?;
    Ok(Installed {
        version,
        entry,
        packages,
        npm_lock: None,
    })
}

/// The version pip resolves `requirement` to now.
pub(super) fn newest_version(
    python: &Path,
    folder: &Path,
    requirement: &str,
) -> Result<String, PackageError> {
    let mut args = vec![
        "-I",
        "-m",
        "pip",
        "install",
        "--dry-run",
        "--ignore-installed",
        "--no-deps",
    ];
    args.extend(PIP_OPTIONS);
    args.extend(["--report", "-", requirement]);
    let answer = run_tool(
        &format!("pip asking for `{requirement}`"),
        python,
        &args,
        folder,
        &[],
        PACKAGE_TOOL_TIMEOUT,
    )?;
    let report: Value = serde_json::from_str(answer.trim())
        .map_err(|error| PackageError::new(format!("pip's report is not JSON: {error}")))?;
    report
        .pointer("/install/0/metadata/version")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| PackageError::new(format!("pip resolved no version of `{requirement}`")))
}

/// Install exactly the locked wheels into `tree` (each checked against its locked sha256).
pub(super) fn install_locked(
    python: &Path,
    tree: &Path,
    locked: &LockedServer,
) -> Result<(), PackageError> {
    let top = locked
        .packages
        .iter()
        .find(|package| normalized(&package.name) == normalized(&locked.package));
    if top.is_none_or(|package| package.version != locked.version) {
        return Err(PackageError::new(format!(
            "the lock's `packages` do not hold `{}` {}",
            locked.package, locked.version
        )));
    }
    install_exactly(python, tree, &locked.packages)?;
    let ServerEntry::Python { python: wanted, .. } = &locked.entry else {
        return Err(PackageError::new(
            "a PyPI server's entry is not a Python entry",
        ));
    };
    let running = python_version(python)?;
    if running != *wanted {
        return Err(PackageError::new(format!(
            "it was locked for Python {wanted}, but `{}` is Python {running}",
            python.display()
        )));
    }
    Ok(())
}

/// The staging folder `tree` is made in.
fn staging_of(tree: &Path) -> Result<&Path, PackageError> {
    let staging = tree
        .parent()
        .ok_or_else(|| PackageError::new("the staging tree has no folder"))?;
    fs_err::create_dir_all(tree)
        .map_err(|error| PackageError::new(format!("cannot create the staging tree: {error}")))?;
    Ok(staging)
}

/// `pip install --require-hashes --no-deps --target tree` of exactly `packages`, then the
/// modules compiled and the scripts folder (whose first lines name this interpreter) removed.
fn install_exactly(
    python: &Path,
    tree: &Path,
    packages: &[LockedPackage],
) -> Result<(), PackageError> {
    let staging = staging_of(tree)?;
    let mut requirements = String::new();
    for package in packages {
        requirements.push_str(&requirement_line(package)?);
        requirements.push('\n');
    }
    let file = staging.join("requirements.txt");
    fs_err::write(&file, requirements)
        .map_err(|error| PackageError::new(format!("cannot write the requirements: {error}")))?;
    let (file_text, tree_text) = (
        file.to_string_lossy().into_owned(),
        tree.to_string_lossy().into_owned(),
    );
    let mut args = vec![
        "-I",
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--require-hashes",
    ];
    args.extend(PIP_OPTIONS);
    args.extend(["--no-compile", "--target", &tree_text, "-r", &file_text]);
    run_tool(
        "pip installing the resolved wheels",
        python,
        &args,
        staging,
        &[],
        PACKAGE_TOOL_TIMEOUT,
    )?;
    let scripts = tree.join("bin");
    if scripts.exists() {
        fs_err::remove_dir_all(&scripts)
            .map_err(|error| PackageError::new(format!("cannot tidy the tree: {error}")))?;
    }
    // Bytecode checked by the hash of its source, never by times (the store's files keep no
    // meaningful ones), naming its files as the sandbox shows the tree (the staging folder's
    // random name would make every install's bytecode differ, and the tree's digest with it).
    // A module that does not compile (a test file for another Python) is compiled by no run
    // either: its failure is not the install's.
    if let Err(error) = run_tool(
        "compiling the modules",
        python,
        &[
            "-I",
            "-m",
            "compileall",
            "-q",
            "--invalidation-mode",
            "unchecked-hash",
            "-d",
            SANDBOX_TREE_NAME,
            &tree_text,
        ],
        staging,
        &[("SOURCE_DATE_EPOCH", "0"), ("PYTHONHASHSEED", "0")],
        PACKAGE_TOOL_TIMEOUT,
    ) {
        tracing::debug!(%error, "some modules of a package server did not compile");
    }
    Ok(())
}

/// One line of a hash-checked requirements file; the lock's text is checked first (a newline
/// or an option in a name would change what pip reads).
fn requirement_line(package: &LockedPackage) -> Result<String, PackageError> {
    let plain = |text: &str, extra: &str| {
        !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c) || extra.contains(c))
    };
    let hex = package.integrity.strip_prefix("sha256:").unwrap_or("");
    if !plain(&package.name, "") || !plain(&package.version, "!+") {
        return Err(PackageError::new(format!(
            "`{} {}` is not a package name and version",
            package.name, package.version
        )));
    }
    if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(PackageError::new(format!(
            "the integrity of `{}` is not `sha256:` and 64 hex digits",
            package.name
        )));
    }
    Ok(format!(
        "{}=={} --hash=sha256:{hex}",
        package.name, package.version
    ))
}

/// The wheels of pip's resolution report, each with its version, URL and sha256.
fn resolved_packages(report: &Value) -> Result<Vec<LockedPackage>, PackageError> {
    let installs = report
        .get("install")
        .and_then(Value::as_array)
        .ok_or_else(|| PackageError::new("pip's report has no `install` list"))?;
    if installs.len() > MAX_PACKAGES_PER_SERVER {
        return Err(PackageError::new(format!(
            "the server needs {} packages; at most {MAX_PACKAGES_PER_SERVER} are installed for one server",
            installs.len()
        )));
    }
    installs
        .iter()
        .map(|install| {
            let text = |pointer: &str| install.pointer(pointer).and_then(Value::as_str);
            let name = text("/metadata/name").unwrap_or("?");
            let url = text("/download_info/url").unwrap_or("");
            let sha256 = text("/download_info/archive_info/hashes/sha256")
                .map(str::to_owned)
                .or_else(|| {
                    text("/download_info/archive_info/hash")
                        .and_then(|hash| hash.strip_prefix("sha256="))
                        .map(str::to_owned)
                });
            match (text("/metadata/version"), sha256) {
                (Some(version), Some(sha256)) if url.ends_with(".whl") || url.contains(".whl#") => {
                    Ok(LockedPackage {
                        name: name.to_owned(),
                        version: version.to_owned(),
                        resolved: Some(url.split('#').next().unwrap_or(url).to_owned()),
                        integrity: format!("sha256:{sha256}"),
                    })
                }
                _ => Err(PackageError::new(format!(
                    "pip resolved `{name}` to `{url}`, not a wheel with a sha256; only wheels from an index are installed"
                ))),
            }
        })
        .collect()
}

/// A distribution name compared as PyPI compares them.
fn normalized(name: &str) -> String {
    let mut out = String::new();
    let mut separator = false;
    for c in name.chars() {
        if "-_.".contains(c) {
            separator = true;
        } else {
            if separator && !out.is_empty() {
                out.push('-');
            }
            separator = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// `major.minor` of `python`.
fn python_version(python: &Path) -> Result<String, PackageError> {
    let folder = std::env::temp_dir();
    let said = run_tool(
        "asking the Python version",
        python,
        &[
            "-I",
            "-c",
            "import sys; print('%d.%d' % sys.version_info[:2])",
        ],
        &folder,
        &[],
        PACKAGE_TOOL_TIMEOUT,
    )?;
    Ok(said.trim().to_owned())
}

/// The console script `program` (else the package's own) of `package` in `tree`.
fn entry_point(
    python: &Path,
    tree: &Path,
    package: &str,
    program: Option<&str>,
) -> Result<ServerEntry, PackageError> {
    let wanted = normalized(package);
    let dist_info = fs_err::read_dir(tree)
        .map_err(|error| PackageError::new(format!("cannot read the installed tree: {error}")))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            let name = path
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or("");
            name.strip_suffix(".dist-info")
                .and_then(|stem| stem.rsplit_once('-'))
                .is_some_and(|(name, _)| normalized(name) == wanted)
        })
        .ok_or_else(|| PackageError::new(format!("`{package}` was not installed as a wheel")))?;
    let text = fs_err::read_to_string(dist_info.join("entry_points.txt")).unwrap_or_default();
    let mut scripts = Vec::new();
    let mut in_scripts = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_scripts = line == "[console_scripts]";
        } else if in_scripts && let Some((name, target)) = line.split_once('=') {
            scripts.push((name.trim().to_owned(), target.trim().to_owned()));
        }
    }
    let chosen = match program {
        Some(program) => scripts.iter().find(|(name, _)| name == program),
        None if scripts.len() == 1 => scripts.first(),
        None => scripts.iter().find(|(name, _)| normalized(name) == wanted),
    };
    let Some((_, target)) = chosen else {
        let names: Vec<&str> = scripts.iter().map(|(name, _)| name.as_str()).collect();
        return Err(PackageError::new(format!(
            "`{package}` has no program `{}` (its programs: {}); name one with `uvx --from {package} PROGRAM`",
            program.unwrap_or(package),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    };
    let target = target.split('[').next().unwrap_or(target).trim();
    let (module, function) = target.split_once(':').ok_or_else(|| {
        PackageError::new(format!(
            "`{package}`'s program `{target}` is not `module:function`"
        ))
    })?;
    let entry = ServerEntry::Python {
        module: module.trim().to_owned(),
        function: function.trim().to_owned(),
        python: python_version(python)?,
    };
    match entry.problem() {
        Some(problem) => Err(PackageError::new(format!(
            "`{package}`'s program: {problem}"
        ))),
        None => Ok(entry),
    }
}
