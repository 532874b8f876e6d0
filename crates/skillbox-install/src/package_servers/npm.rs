//! npm package servers: resolved and installed by `npm` itself (`install`, then `ci` for a
//! locked tree) with install scripts off and no bin links, in a staging folder whose
//! `package.json` names only the server's package. npm records in its `package-lock.json` the
//! exact version, tarball URL and integrity (`sha512-…`) of every package it fetched: that is
//! what the lock keeps, and what `npm ci` checks every tarball against.

use std::path::Path;

use serde_json::{Map, Value, json};
use skillbox_core::package_server::PackageServer;
use skillbox_trust::package_servers::{LockedPackage, LockedServer, ServerEntry};

use super::tool_run::run_tool;
use super::{Installed, MAX_PACKAGES_PER_SERVER, PACKAGE_TOOL_TIMEOUT, PackageError};

/// The name of the staging project whose one dependency is the server's package.
const STAGING_PROJECT: &str = "skillbox-package-server";

/// Settings every npm run gets (over the user's): no install scripts, no bin links, nothing
/// asked of the network beyond the packages.
const NPM_SETTINGS: [(&str, &str); 6] = [
    ("npm_config_ignore_scripts", "true"),
    ("npm_config_bin_links", "false"),
    ("npm_config_audit", "false"),
    ("npm_config_fund", "false"),
    ("npm_config_update_notifier", "false"),
    ("npm_config_loglevel", "error"),
];

/// Resolve and install `server`'s package into `tree` (created).
pub(super) fn resolve_and_install(
    npm: &Path,
    tree: &Path,
    server: &PackageServer,
) -> Result<Installed, PackageError> {
    let wanted = server
        .requested
        .clone()
        .unwrap_or_else(|| "latest".to_owned());
    write_project(tree, &server.package, &wanted, None)?;
    run_tool(
        &format!("npm installing `{}`", server.requirement()),
        npm,
        &[
            "install",
            "--omit=dev",
            "--ignore-scripts",
            "--no-bin-links",
        ],
        tree,
        &NPM_SETTINGS,
        PACKAGE_TOOL_TIMEOUT,
    )?;
    let lock_text = fs_err::read_to_string(tree.join("package-lock.json"))
        .map_err(|error| PackageError::new(format!("npm wrote no `package-lock.json`: {error}")))?;
    let npm_lock: Value = serde_json::from_str(&lock_text).map_err(|error| {
        PackageError::new(format!("npm's `package-lock.json` is not JSON: {error}"))
    })?;
    let packages = npm_lock
        .get("packages")
        .cloned()
        .ok_or_else(|| PackageError::new("npm's `package-lock.json` has no `packages`"))?;
    let listed = listed_packages(&packages)?;
    let version = top_version(&packages, &server.package)?;
    let entry = entry_script(tree, &server.package, server.program.as_deref())?;
    tidy(tree)?;
    Ok(Installed {
        version,
        entry,
        packages: listed,
        npm_lock: Some(packages),
    })
}

/// Install exactly the locked tree into `tree` with `npm ci` (every tarball checked against
/// its locked integrity).
pub(super) fn install_locked(
    npm: &Path,
    tree: &Path,
    locked: &LockedServer,
) -> Result<(), PackageError> {
    let packages = locked
        .npm_lock
        .as_ref()
        .ok_or_else(|| PackageError::new("the lock holds no `npmLock` for this npm server"))?;
    check_locked(packages, locked)?;
    let packages = &fetched_by_name(packages)?;
    let root_dependencies = packages
        .get("")
        .and_then(|root| root.get("dependencies"))
        .and_then(Value::as_object);
    let wanted = root_dependencies
        .and_then(|dependencies| dependencies.get(&locked.package))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| {
            PackageError::new(format!(
                "the lock's `npmLock` does not name `{}` as its dependency",
                locked.package
            ))
        })?;
    let asked = locked.requested.as_deref().unwrap_or("latest");
    if wanted != asked || root_dependencies.map_or(0, Map::len) != 1 {
        return Err(PackageError::new(format!(
            "the lock's `npmLock` root asks for `{}@{wanted}`, not `{}@{asked}` alone",
            locked.package, locked.package
        )));
    }
    write_project(tree, &locked.package, &wanted, Some(packages))?;
    run_tool(
        &format!(
            "npm installing the locked `{}@{}`",
            locked.package, locked.version
        ),
        npm,
        &["ci", "--omit=dev", "--ignore-scripts", "--no-bin-links"],
        tree,
        &NPM_SETTINGS,
        PACKAGE_TOOL_TIMEOUT,
    )?;
    let installed = top_version(packages, &locked.package)?;
    if installed != locked.version {
        return Err(PackageError::new(format!(
            "`{}` resolves to {installed}, not the locked {}",
            locked.package, locked.version
        )));
    }
    tidy(tree)
}

/// The newest version of `package` within `requested` (else its `latest`), as the registry
/// answers `npm view`.
pub(super) fn newest_version(
    npm: &Path,
    folder: &Path,
    package: &str,
    requested: Option<&str>,
) -> Result<String, PackageError> {
    let spec = format!("{package}@{}", requested.unwrap_or("latest"));
    let answer = run_tool(
        &format!("npm asking for `{spec}`"),
        npm,
        &["view", &spec, "version", "--json"],
        folder,
        &NPM_SETTINGS,
        PACKAGE_TOOL_TIMEOUT,
    )?;
    let versions: Value = serde_json::from_str(answer.trim())
        .map_err(|error| PackageError::new(format!("npm's answer is not JSON: {error}")))?;
    match versions {
        Value::String(version) => Ok(version),
        Value::Array(versions) => versions
            .last()
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| PackageError::new(format!("npm knows no version of `{spec}`"))),
        _ => Err(PackageError::new(format!(
            "npm knows no version of `{spec}`"
        ))),
    }
}

/// npm's map as `npm ci` gets it: every entry without its `resolved` URL, so each package is
/// fetched by its name and version from the user's registry (and checked against its
/// integrity), never from a URL the lock names; each entry's name that of its folder, and its
/// version a plain version (no alias, URL or path).
fn fetched_by_name(packages: &Value) -> Result<Value, PackageError> {
    let mut cleaned = Map::new();
    let map = packages
        .as_object()
        .ok_or_else(|| PackageError::new("the lock's `npmLock` is not an object"))?;
    for (path, entry) in map {
        let mut entry = entry.as_object().cloned().ok_or_else(|| {
            PackageError::new(format!("the lock's `npmLock.{path}` is not an object"))
        })?;
        if !path.is_empty() {
            let folder_name = path
                .rsplit_once("node_modules/")
                .map_or(path.as_str(), |(_, name)| name);
            if entry
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|name| name != folder_name)
            {
                return Err(PackageError::new(format!(
                    "the lock's `npmLock.{path}` installs another package under this name (an alias); only registry packages under their own names are installed"
                )));
            }
            let plain = entry
                .get("version")
                .and_then(Value::as_str)
                .is_some_and(|version| {
                    !version.is_empty()
                        && version
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c))
                });
            if !plain {
                return Err(PackageError::new(format!(
                    "the lock's `npmLock.{path}.version` is not a plain version"
                )));
            }
            entry.remove("resolved");
        }
        cleaned.insert(path.clone(), Value::Object(entry));
    }
    Ok(Value::Object(cleaned))
}

/// The staging project: a `package.json` depending on `package` (`wanted`), and for `npm ci`
/// the lock of its tree.
fn write_project(
    tree: &Path,
    package: &str,
    wanted: &str,
    packages: Option<&Value>,
) -> Result<(), PackageError> {
    let write = |name: &str, value: &Value| {
        let text = serde_json::to_string_pretty(value).unwrap_or_default();
        fs_err::write(tree.join(name), text)
            .map_err(|error| PackageError::new(format!("cannot write `{name}`: {error}")))
    };
    fs_err::create_dir_all(tree)
        .map_err(|error| PackageError::new(format!("cannot create the staging tree: {error}")))?;
    write(
        "package.json",
        &json!({
            "name": STAGING_PROJECT,
            "version": "0.0.0",
            "private": true,
            "dependencies": { package: wanted },
        }),
    )?;
    if let Some(packages) = packages {
        write(
            "package-lock.json",
            &json!({
                "name": STAGING_PROJECT,
                "version": "0.0.0",
                "lockfileVersion": 3,
                "requires": true,
                "packages": packages,
            }),
        )?;
    }
    Ok(())
}

/// Every package of npm's `packages` map, each with its version, tarball and integrity.
fn listed_packages(packages: &Value) -> Result<Vec<LockedPackage>, PackageError> {
    let map = packages
        .as_object()
        .ok_or_else(|| PackageError::new("npm's `packages` is not an object"))?;
    if map.len() > MAX_PACKAGES_PER_SERVER {
        return Err(PackageError::new(format!(
            "the server needs {} packages; at most {MAX_PACKAGES_PER_SERVER} are installed for one server",
            map.len()
        )));
    }
    let mut listed = Vec::new();
    for (path, entry) in map {
        // A bundled package comes inside its parent's tarball, under the parent's integrity.
        if path.is_empty() || entry.get("inBundle").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let name = package_name(path, entry)?;
        let field = |key: &str| {
            entry
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| {
                    PackageError::new(format!(
                        "npm recorded no `{key}` for `{path}`; only registry packages are installed"
                    ))
                })
        };
        if entry.get("link").and_then(Value::as_bool) == Some(true) {
            return Err(PackageError::new(format!(
                "`{path}` is a link, not a registry package"
            )));
        }
        let resolved = entry.get("resolved").map(|resolved| {
            resolved
                .as_str()
                .filter(|url| url.starts_with("https://") || url.starts_with("http://"))
                .map(str::to_owned)
                .ok_or_else(|| {
                    PackageError::new(format!("`{path}` comes from `{resolved}`, not a registry"))
                })
        });
        listed.push(LockedPackage {
            name,
            version: field("version")?,
            resolved: resolved.transpose()?,
            integrity: field("integrity")?,
        });
    }
    Ok(listed)
}

/// The package at `path` of npm's map: its `name`, else the path's last `node_modules/` part.
fn package_name(path: &str, entry: &Value) -> Result<String, PackageError> {
    let clean = skillbox_core::source::contained_relative_path(path)
        .ok()
        .filter(|clean| clean == path && path.starts_with("node_modules/"));
    let Some(_) = clean else {
        return Err(PackageError::new(format!(
            "`{path}` is not a folder under `node_modules/`"
        )));
    };
    Ok(entry
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| {
            path.rsplit_once("node_modules/")
                .map_or(path, |(_, name)| name)
                .to_owned()
        }))
}

/// A lock's `npmLock` as `npm ci` would read it: only registry packages under
/// `node_modules/`, each the one the lock's `packages` lists with the same integrity.
fn check_locked(packages: &Value, locked: &LockedServer) -> Result<(), PackageError> {
    let listed = listed_packages(packages)
        .map_err(|error| PackageError::new(format!("the lock's `npmLock`: {error}")))?;
    let key = |package: &LockedPackage| {
        (
            package.name.clone(),
            package.version.clone(),
            package.resolved.clone(),
            package.integrity.clone(),
        )
    };
    let mut from_npm: Vec<_> = listed.iter().map(key).collect();
    let mut from_lock: Vec<_> = locked.packages.iter().map(key).collect();
    from_npm.sort();
    from_lock.sort();
    if from_npm != from_lock {
        return Err(PackageError::new(
            "the lock's `npmLock` and `packages` list different packages; the lock was edited (`skillbox update` writes it anew)",
        ));
    }
    if let Some(Value::Object(root)) = packages.get("")
        && root
            .keys()
            .any(|key| !matches!(key.as_str(), "name" | "version" | "dependencies"))
    {
        return Err(PackageError::new(
            "the lock's `npmLock` root entry has fields beyond `name`, `version` and `dependencies`",
        ));
    }
    Ok(())
}

/// The version npm installed of `package`.
fn top_version(packages: &Value, package: &str) -> Result<String, PackageError> {
    packages
        .get(format!("node_modules/{package}"))
        .and_then(|entry| entry.get("version"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| PackageError::new(format!("npm did not install `{package}` itself")))
}

/// The script of `package` that `program` (else the package's own `bin`) names.
fn entry_script(
    tree: &Path,
    package: &str,
    program: Option<&str>,
) -> Result<ServerEntry, PackageError> {
    let folder = format!("node_modules/{package}");
    let manifest: Value = fs_err::read_to_string(tree.join(&folder).join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .ok_or_else(|| PackageError::new(format!("`{package}` has no readable `package.json`")))?;
    let unscoped = package.rsplit('/').next().unwrap_or(package);
    let bins: Map<String, Value> = match manifest.get("bin") {
        Some(Value::String(script)) => {
            Map::from_iter([(unscoped.to_owned(), Value::String(script.clone()))])
        }
        Some(Value::Object(bins)) => bins.clone(),
        _ => Map::new(),
    };
    let chosen = match program {
        Some(program) => bins.get(program),
        None if bins.len() == 1 => bins.values().next(),
        None => bins.get(unscoped),
    };
    let Some(script) = chosen.and_then(Value::as_str) else {
        let names: Vec<&str> = bins.keys().map(String::as_str).collect();
        return Err(PackageError::new(format!(
            "`{package}` has no program `{}` (its programs: {}); name one with `npx -p {package} PROGRAM`",
            program.unwrap_or(unscoped),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    };
    let script = skillbox_core::source::contained_relative_path(script.trim_start_matches("./"))
        .map_err(|_| {
            PackageError::new(format!(
                "`{package}`'s program `{script}` leaves the package"
            ))
        })?;
    let script = format!("{folder}/{script}");
    if !tree.join(&script).is_file() {
        return Err(PackageError::new(format!(
            "`{package}`'s program `{script}` is not a file of the package"
        )));
    }
    Ok(ServerEntry::Node { script })
}

/// Remove what the tree need not hold: the staging project's own files and npm's hidden lock.
fn tidy(tree: &Path) -> Result<(), PackageError> {
    for name in [
        "package.json",
        "package-lock.json",
        "node_modules/.package-lock.json",
    ] {
        let path = tree.join(name);
        if path.exists() {
            fs_err::remove_file(&path)
                .map_err(|error| PackageError::new(format!("cannot tidy the tree: {error}")))?;
        }
    }
    let bin = tree.join("node_modules/.bin");
    if bin.exists() {
        fs_err::remove_dir_all(&bin)
            .map_err(|error| PackageError::new(format!("cannot tidy the tree: {error}")))?;
    }
    Ok(())
}
