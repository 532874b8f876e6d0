//! `.well-known/agent-skills/index.json` (the Agent Skills discovery RFC, v0.2.0): an index of
//! skills a site publishes, each verified by digest before it is used.
//!
//! Two entry shapes are read, as published sites use both:
//!
//! - **artifact entries** (`type`: `skill-md` or `archive`, a `url` resolved against the
//!   index, and `digest`, the sha256 of the artifact's bytes);
//! - **file-list entries** (`files`: `[{path, digest}]` fetched from `<name>/<path>` beside the
//!   index, each checked, and the skill-level `digest` recomputed from them: sorted paths,
//!   `path NUL hex LF` lines, sha256), optionally with a `package` archive and its digest.
//!
//! A major `version` other than 0 is refused (as the RFC asks); unknown fields are ignored.
//! Artifacts are fetched only from the index's own origin (scheme, host and port) unless the
//! person allowed another host ([`super::origin`]).

use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::http::{Http, sha256_digest};
use super::origin::{Origin, allow_host_value};
use super::unpack::{ArchiveFormat, unpack};
use crate::error::InstallError;
use crate::limits::InstallLimits;
use crate::progress::Progress;

/// Largest index read.
const MAX_INDEX_BYTES: u64 = 8 * 1024 * 1024;

/// A fetched index.
#[derive(Debug, Clone)]
pub(crate) struct Index {
    /// Where it was read.
    pub(crate) url: url::Url,
    /// Its skills.
    pub(crate) skills: Vec<IndexSkill>,
}

/// One skill an index lists.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct IndexSkill {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) description: String,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    pub(crate) digest: Option<String>,
    #[serde(default)]
    files: Option<Vec<IndexFile>>,
    #[serde(default)]
    package: Option<IndexPackage>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum IndexFile {
    WithDigest { path: String, digest: String },
    PathOnly(String),
}

#[derive(Debug, Clone, Deserialize)]
struct IndexPackage {
    url: String,
    digest: String,
}

#[derive(Deserialize)]
struct IndexDocument {
    #[serde(default)]
    version: Option<String>,
    skills: Vec<IndexSkill>,
}

/// Read the index at `url`; `Ok(None)` when there is none (404).
///
/// # Errors
/// [`InstallError::Fetch`] or [`InstallError::Refused`] for an unreadable or invalid index.
pub(crate) fn fetch_index(
    http: &Http,
    url: &str,
    progress: &Progress,
) -> Result<Option<Index>, InstallError> {
    let Some(bytes) = http.get(url, MAX_INDEX_BYTES, progress)? else {
        return Ok(None);
    };
    let invalid = |message: String| InstallError::refused(url, message);
    let deserializer = &mut serde_json::Deserializer::from_slice(&bytes);
    let document: IndexDocument =
        serde_path_to_error::deserialize(deserializer).map_err(|error| {
            invalid(format!(
                "it is not a discovery index: `{}`: {}",
                error.path(),
                error.inner()
            ))
        })?;
    if let Some(version) = &document.version
        && !version.starts_with("0.")
    {
        return Err(invalid(format!(
            "its `version` is `{version}`; this skillbox reads version 0.x indexes"
        )));
    }
    for skill in &document.skills {
        if let Some(problem) = skillbox_core::names::unsafe_name_reason(&skill.name) {
            return Err(invalid(format!(
                "skill name `{}` cannot be a folder name: {problem}",
                skill.name
            )));
        }
    }
    let url = url::Url::parse(url).map_err(|error| invalid(error.to_string()))?;
    Ok(Some(Index {
        url,
        skills: document.skills,
    }))
}

/// Fetch one skill of `index` into `into/<name>/`, every byte checked against the index's
/// digests; the skill's revision for the lock (the digest the index gives it).
///
/// # Errors
/// [`InstallError::Refused`] for a digest mismatch or an unsafe artifact,
/// [`InstallError::Fetch`] when an artifact cannot be had.
pub(crate) fn fetch_skill(
    http: &Http,
    index: &Index,
    skill: &IndexSkill,
    into: &Path,
    limits: &InstallLimits,
    progress: &Progress,
) -> Result<Option<String>, InstallError> {
    let folder = into.join(&skill.name);
    fs_err::create_dir_all(&folder).map_err(|error| InstallError::io("create", &folder, error))?;
    let index_origin = Origin::of(&index.url);
    // An artifact stays on the index's origin unless the person allowed its host: a published
    // index does not choose which machines this one talks to.
    let resolve = |relative: &str| {
        let url = index.url.join(relative).map_err(|error| {
            InstallError::refused(
                index.url.as_str(),
                format!("`{relative}` is not a URL ({error})"),
            )
        })?;
        if !http.allowed().may_reach(&index_origin, &url) {
            return Err(InstallError::refused(
                index.url.as_str(),
                format!(
                    "skill `{}` lists `{url}`, on `{}`, another origin than the index's, `{index_origin}`; an index's artifacts are fetched only from its own origin (to allow that host, pass `--allow-host {}`)",
                    skill.name,
                    Origin::of(&url),
                    allow_host_value(&url)
                ),
            ));
        }
        Ok(url)
    };
    let check = |what: &str, bytes: &[u8], expected: &str| {
        let found = sha256_digest(bytes);
        if found == expected.to_ascii_lowercase() {
            Ok(())
        } else {
            Err(InstallError::refused(
                what,
                format!("its sha256 is `{found}`, but the index says `{expected}`"),
            ))
        }
    };
    match (&skill.kind, &skill.files, &skill.package) {
        (Some(kind), _, _) => {
            let relative = skill.url.as_deref().ok_or_else(|| {
                InstallError::refused(
                    index.url.as_str(),
                    format!("skill `{}` has a `type` but no `url`", skill.name),
                )
            })?;
            let digest = skill.digest.as_deref().ok_or_else(|| {
                InstallError::refused(
                    index.url.as_str(),
                    format!(
                        "skill `{}` has no `digest`; it cannot be verified",
                        skill.name
                    ),
                )
            })?;
            let url = resolve(relative)?;
            let bytes = http.get_existing(url.as_str(), limits.max_download_bytes, progress)?;
            check(url.as_str(), &bytes, digest)?;
            match kind.as_str() {
                "skill-md" => {
                    let path = folder.join("SKILL.md");
                    fs_err::write(&path, &bytes)
                        .map_err(|error| InstallError::io("write", &path, error))?;
                }
                "archive" => {
                    let format = ArchiveFormat::detect(url.path(), &bytes).ok_or_else(|| {
                        InstallError::refused(
                            url.as_str(),
                            "it is neither a zip nor a .tar.gz archive",
                        )
                    })?;
                    unpack(&bytes, format, &folder, url.as_str(), limits)?;
                }
                other => {
                    return Err(InstallError::refused(
                        index.url.as_str(),
                        format!(
                            "skill `{}` has `type` `{other}`; this skillbox reads `skill-md` and `archive`",
                            skill.name
                        ),
                    ));
                }
            }
            Ok(Some(digest.to_ascii_lowercase()))
        }
        (None, Some(files), package) => {
            let listed: Vec<(String, Option<String>)> = files
                .iter()
                .map(|file| match file {
                    IndexFile::WithDigest { path, digest } => (path.clone(), Some(digest.clone())),
                    IndexFile::PathOnly(path) => (path.clone(), None),
                })
                .collect();
            // Each path names a file of the skill: it is joined to the skill's folder, so one
            // that leaves it (`/dev/zero`, `../../x`) would be read from anywhere.
            for (path, _) in &listed {
                crate::guard::check_source_path(path).map_err(|problem| {
                    InstallError::refused(
                        index.url.as_str(),
                        format!("skill `{}` lists a file {problem}", skill.name),
                    )
                })?;
                if path.is_empty() {
                    return Err(InstallError::refused(
                        index.url.as_str(),
                        format!("skill `{}` lists a file with an empty path", skill.name),
                    ));
                }
            }
            if listed.iter().any(|(_, digest)| digest.is_none()) {
                return Err(InstallError::refused(
                    index.url.as_str(),
                    format!(
                        "skill `{}` is listed without file digests (a v0.1 index), so it cannot be verified",
                        skill.name
                    ),
                ));
            }
            if let Some(package) = package {
                let url = resolve(&package.url)?;
                let bytes = http.get_existing(url.as_str(), limits.max_download_bytes, progress)?;
                check(url.as_str(), &bytes, &package.digest)?;
                let format = ArchiveFormat::detect(url.path(), &bytes).ok_or_else(|| {
                    InstallError::refused(url.as_str(), "it is neither a zip nor a .tar.gz archive")
                })?;
                unpack(&bytes, format, &folder, url.as_str(), limits)?;
                for (path, digest) in &listed {
                    let file = folder.join(path);
                    let bytes = read_unpacked(&file, limits.max_bytes_per_skill).map_err(|_| {
                        InstallError::refused(
                            url.as_str(),
                            format!(
                                "the package has no file `{path}` (of at most {} bytes), which the index lists",
                                limits.max_bytes_per_skill
                            ),
                        )
                    })?;
                    check(
                        &format!("{} in {url}", path),
                        &bytes,
                        digest.as_deref().unwrap_or_default(),
                    )?;
                }
            } else {
                let mut writer = super::tree::TreeWriter::new(&folder, index.url.as_str(), limits);
                for (path, digest) in &listed {
                    let url = resolve(&format!("{}/{path}", skill.name))?;
                    let bytes =
                        http.get_existing(url.as_str(), limits.max_bytes_per_skill, progress)?;
                    check(url.as_str(), &bytes, digest.as_deref().unwrap_or_default())?;
                    writer.file(path.as_bytes(), &mut bytes.as_slice(), false)?;
                }
                writer.finish()?;
            }
            if let Some(expected) = &skill.digest {
                let found = skill_level_digest(&listed);
                if found != expected.to_ascii_lowercase() {
                    return Err(InstallError::refused(
                        index.url.as_str(),
                        format!(
                            "skill `{}`'s files digest to `{found}`, but the index says `{expected}`",
                            skill.name
                        ),
                    ));
                }
            }
            Ok(skill.digest.clone())
        }
        (None, None, _) => Err(InstallError::refused(
            index.url.as_str(),
            format!(
                "skill `{}` has neither a `type` and `url` nor a `files` list",
                skill.name
            ),
        )),
    }
}

/// The bytes of a regular file unpacked from a package, at most `limit` of them.
fn read_unpacked(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let file = skillbox_core::source::open_regular_file(path).map_err(std::io::Error::other)?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, limit + 1), &mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other("too large"));
    }
    Ok(bytes)
}

/// The RFC's skill-level digest of a file list: sorted by path, `path NUL hex LF` per file.
fn skill_level_digest(files: &[(String, Option<String>)]) -> String {
    let mut sorted: Vec<&(String, Option<String>)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut hasher = Sha256::new();
    for (path, digest) in sorted {
        let hex = digest
            .as_deref()
            .unwrap_or_default()
            .trim_start_matches("sha256:")
            .to_ascii_lowercase();
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(hex.as_bytes());
        hasher.update(b"\n");
    }
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skill_level_digest_matches_the_rfc_worked_example() {
        let files = vec![
            (
                "scripts/run.sh".to_owned(),
                Some(
                    "sha256:a8076d3d28d21e02012b20eaf7dbf75409a6277134439025f282e368e3305abf"
                        .to_owned(),
                ),
            ),
            (
                "SKILL.md".to_owned(),
                Some(
                    "sha256:90f8ec5669cd34183b9b0fdf8b94f5efb4c3672876330f4aa76088c2b4ad17be"
                        .to_owned(),
                ),
            ),
        ];
        assert_eq!(
            skill_level_digest(&files),
            "sha256:34f7a8c484e9991f3e71a309f31332d6335efc01f544105c4185a7c4ab12eb1e"
        );
    }
}
