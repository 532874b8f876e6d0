//! Servers that come from a package registry (issue 37, `docs/design/package-servers.md`): a
//! declared stdio server whose command is `npx` or `uvx` (or `uv tool run`) names a package on
//! npm or PyPI, the version asked for, and the program of it to run. skillbox never runs these
//! launchers (they fetch whatever the registry serves at that moment): `skillbox add` and
//! `install` install the package ahead into the store, pinned in the lock, and the server runs
//! from there, offline, in the sandbox. This module only reads what a declaration asks for.

use serde::Serialize;

/// The registry a package server comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PackageRegistry {
    /// npm (`npx`): a Node package, run with the `node` skillbox uses.
    Npm,
    /// PyPI (`uvx`): a Python package, run with the `python3` skillbox uses.
    Pypi,
}

impl PackageRegistry {
    /// The registry as the lock and messages write it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            PackageRegistry::Npm => "npm",
            PackageRegistry::Pypi => "pypi",
        }
    }
}

impl std::fmt::Display for PackageRegistry {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// What a package server's declaration asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageServer {
    /// Where the package comes from.
    pub registry: PackageRegistry,
    /// The package's name (`@modelcontextprotocol/server-everything`, `mcp-server-time`).
    pub package: String,
    /// Extras of a PyPI package (`pkg[extra]`); empty for npm.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extras: Vec<String>,
    /// The version or range asked for (`1.2.3`, `^1.2`, `>=1,<2`); `None` for whatever is
    /// newest.
    pub requested: Option<String>,
    /// The program of the package to run: an npm `bin` name or a Python console script;
    /// `None` for the package's own (the one named like it, or its only one).
    pub program: Option<String>,
    /// The server's own arguments (after the package and program).
    pub args: Vec<String>,
    /// The launcher the declaration names (`npx`, `uvx`, `uv tool run`).
    pub launcher: &'static str,
}

impl PackageServer {
    /// Whether the declaration names one exact version (else `add` pins the version it
    /// resolves, and `validate` warns).
    #[must_use]
    pub fn pinned(&self) -> bool {
        self.requested
            .as_deref()
            .is_some_and(|requested| match self.registry {
                PackageRegistry::Npm => is_exact_npm_version(requested),
                PackageRegistry::Pypi => requested.strip_prefix("==").is_some_and(|version| {
                    !version.is_empty() && !version.contains(['*', ',', ' '])
                }),
            })
    }

    /// The requirement as the registry's own tool reads it: `name@range` for npm,
    /// `name[extras]<spec>` for pip.
    #[must_use]
    pub fn requirement(&self) -> String {
        match self.registry {
            PackageRegistry::Npm => match &self.requested {
                Some(requested) => format!("{}@{requested}", self.package),
                None => self.package.clone(),
            },
            PackageRegistry::Pypi => {
                let extras = if self.extras.is_empty() {
                    String::new()
                } else {
                    format!("[{}]", self.extras.join(","))
                };
                format!(
                    "{}{extras}{}",
                    self.package,
                    self.requested.as_deref().unwrap_or("")
                )
            }
        }
    }

    /// The program to run, for messages: the one named, else the package's own.
    #[must_use]
    pub fn program_shown(&self) -> &str {
        self.program.as_deref().unwrap_or(&self.package)
    }

    /// One line for `validate` and `show`: what runs and how.
    #[must_use]
    pub fn describe(&self) -> String {
        let version = match &self.requested {
            Some(requested) if self.pinned() => format!("version {requested}"),
            Some(requested) => format!("versions `{requested}` (not pinned)"),
            None => "no version asked (not pinned)".to_owned(),
        };
        let runs = match &self.program {
            Some(program) => format!("its program `{program}`"),
            None => "its own program".to_owned(),
        };
        format!(
            "{} package `{}`, {version}, runs {runs} ({} in the declaration)",
            self.registry, self.package, self.launcher
        )
    }
}

/// Whether `text` is one exact semver version (`1.2.3`, `1.2.3-beta.1`, `v` not allowed).
fn is_exact_npm_version(text: &str) -> bool {
    let core = text.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
}

/// The package server a stdio declaration names, if its command is a package launcher:
/// `None` for any other command, `Some(Err(why))` for a launcher line skillbox cannot install
/// ahead (an option it does not know, a spec that is not a registry package).
#[must_use]
pub fn recognize(command: &str, args: &[String]) -> Option<Result<PackageServer, String>> {
    match command {
        "npx" => Some(from_npx(args)),
        "uvx" => Some(from_uvx(args, "uvx")),
        "uv" => match args {
            [tool, run, rest @ ..] if tool == "tool" && run == "run" => {
                Some(from_uvx(rest, "uv tool run"))
            }
            _ => None,
        },
        _ => None,
    }
}

/// `npx [-y|--yes] [-q] [-p PKG|--package PKG|--package=PKG] [--] COMMAND [ARGS…]`.
fn from_npx(args: &[String]) -> Result<PackageServer, String> {
    let mut packages: Vec<String> = Vec::new();
    let mut index = 0;
    while let Some(word) = args.get(index) {
        if word == "--" {
            index += 1;
            break;
        }
        if !word.starts_with('-') {
            break;
        }
        match word.as_str() {
            "-y" | "--yes" | "-q" | "--quiet" | "--no-install" | "--prefer-offline" => {}
            "-p" | "--package" => {
                index += 1;
                packages.push(
                    args.get(index)
                        .ok_or_else(|| format!("`npx {word}` names no package"))?
                        .clone(),
                );
            }
            _ => {
                if let Some(package) = word.strip_prefix("--package=") {
                    packages.push(package.to_owned());
                } else {
                    return Err(format!(
                        "`npx` option `{word}` is not one skillbox installs ahead; use `-y` and `-p PACKAGE` only"
                    ));
                }
            }
        }
        index += 1;
    }
    let Some(first) = args.get(index) else {
        return Err("`npx` names no package to run".to_owned());
    };
    let rest = args[index + 1..].to_vec();
    let (spec, program) = match packages.as_slice() {
        [] => (first.clone(), None),
        [package] => (package.clone(), Some(first.clone())),
        _ => {
            return Err(
                "`npx` names more than one `--package`; skillbox installs one package per server"
                    .to_owned(),
            );
        }
    };
    let (package, requested) = npm_spec(&spec)?;
    Ok(PackageServer {
        registry: PackageRegistry::Npm,
        package,
        extras: Vec::new(),
        requested,
        program,
        args: rest,
        launcher: "npx",
    })
}

/// An npm registry spec: `name`, `name@range`, `@scope/name`, `@scope/name@range`.
fn npm_spec(spec: &str) -> Result<(String, Option<String>), String> {
    let (scope, rest) = match spec.strip_prefix('@') {
        Some(rest) => ("@", rest),
        None => ("", spec),
    };
    let (name, requested) = match rest.split_once('@') {
        Some((name, requested)) => (name, Some(requested)),
        None => (rest, None),
    };
    let name = format!("{scope}{name}");
    if let Some(why) = npm_name_problem(&name) {
        return Err(format!(
            "`{spec}` is not an npm registry package ({why}); name one like `@scope/name@1.2.3`"
        ));
    }
    match requested {
        Some("") => Err(format!("`{spec}` has an empty version after `@`")),
        Some(requested)
            if requested
                .chars()
                .any(|c| c.is_control() || c == '/' || c == ':') =>
        {
            Err(format!(
                "`{spec}` asks for `{requested}`, which is not a version or range"
            ))
        }
        Some(requested) => Ok((name, Some(requested.to_owned()))),
        None => Ok((name, None)),
    }
}

/// Why `name` is not an npm package name (`name` or `@scope/name`, lowercase URL-safe).
fn npm_name_problem(name: &str) -> Option<&'static str> {
    let plain = |part: &str| {
        !part.is_empty()
            && !part.starts_with(['.', '_'])
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-._~".contains(c))
    };
    if name.len() > 214 {
        return Some("longer than 214 characters");
    }
    match name.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('/') {
            Some((scope, package)) if plain(scope) && plain(package) => None,
            _ => Some("a scoped name is `@scope/name` in lowercase"),
        },
        None if plain(name) => None,
        None => Some("a name is lowercase letters, digits, `-`, `.`, `_` and `~`"),
    }
}

/// `uvx [--from SPEC] [-q] [--] COMMAND[@VERSION] [ARGS…]` (and `uv tool run`).
fn from_uvx(args: &[String], launcher: &'static str) -> Result<PackageServer, String> {
    let mut from: Option<String> = None;
    let mut index = 0;
    while let Some(word) = args.get(index) {
        if word == "--" {
            index += 1;
            break;
        }
        if !word.starts_with('-') {
            break;
        }
        match word.as_str() {
            "-q" | "--quiet" | "--offline" | "--isolated" | "--no-cache" => {}
            "--from" => {
                index += 1;
                from = Some(
                    args.get(index)
                        .ok_or_else(|| format!("`{launcher} --from` names no package"))?
                        .clone(),
                );
            }
            _ => match word.strip_prefix("--from=") {
                Some(spec) => from = Some(spec.to_owned()),
                None => {
                    return Err(format!(
                        "`{launcher}` option `{word}` is not one skillbox installs ahead; use `--from PACKAGE` only (the server runs with the python3 skillbox uses)"
                    ));
                }
            },
        }
        index += 1;
    }
    let Some(first) = args.get(index) else {
        return Err(format!("`{launcher}` names no program to run"));
    };
    let rest = args[index + 1..].to_vec();
    let (spec, program) = match from {
        Some(spec) => (spec, Some(first.clone())),
        None => match first.split_once('@') {
            // `uvx tool@1.2.3` is `tool==1.2.3`; `@latest` is no pin.
            Some((name, "latest")) => (name.to_owned(), None),
            Some((name, version)) => (format!("{name}=={version}"), None),
            None => (first.clone(), None),
        },
    };
    let (package, extras, requested) = pypi_spec(&spec)?;
    Ok(PackageServer {
        registry: PackageRegistry::Pypi,
        package,
        extras,
        requested,
        program,
        args: rest,
        launcher,
    })
}

/// A PyPI requirement: `name`, `name[extra,…]`, then an optional version specifier.
fn pypi_spec(spec: &str) -> Result<(String, Vec<String>, Option<String>), String> {
    let spec = spec.trim();
    let name_end = spec
        .find(|c: char| !(c.is_ascii_alphanumeric() || "-._".contains(c)))
        .unwrap_or(spec.len());
    let name = &spec[..name_end];
    let valid_name = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !valid_name {
        return Err(format!(
            "`{spec}` is not a PyPI package requirement; name one like `mcp-server-time==1.2.3`"
        ));
    }
    let mut rest = &spec[name_end..];
    let mut extras = Vec::new();
    if let Some(inner) = rest.strip_prefix('[') {
        let Some((list, after)) = inner.split_once(']') else {
            return Err(format!("`{spec}` opens `[` for extras without closing it"));
        };
        for extra in list.split(',').map(str::trim) {
            if extra.is_empty()
                || !extra
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
            {
                return Err(format!(
                    "`{spec}` names an extra `{extra}` that is not a name"
                ));
            }
            extras.push(extra.to_owned());
        }
        rest = after;
    }
    let rest = rest.trim();
    if rest.is_empty() {
        return Ok((name.to_owned(), extras, None));
    }
    let valid_specifier = rest.starts_with(['=', '>', '<', '~', '!'])
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "=<>~!.,*+ ".contains(c));
    if !valid_specifier {
        return Err(format!(
            "`{spec}` asks for `{rest}`, which is not a version specifier (`==1.2.3`, `>=1,<2`); URLs and paths are not installed ahead"
        ));
    }
    Ok((name.to_owned(), extras, Some(rest.replace(' ', ""))))
}

#[cfg(test)]
#[path = "package_server_tests.rs"]
mod tests;
