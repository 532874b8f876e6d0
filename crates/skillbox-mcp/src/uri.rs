//! `skill://<name>/<path>` URIs (the skills extension's form, with no organisational prefix):
//! made from a skill's name and a file's relative path, and taken apart again for reads. Path
//! segments are percent-encoded where a URI cannot hold a character literally; decoding
//! refuses anything that could leave the skill (`..`, `.`, empty segments, a `/` or NUL
//! hidden in an escape), before the catalog's own containment check.

use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use skillbox_core::limits::MAX_DISCOVERY_DEPTH;

/// The scheme of every resource this server serves.
pub const SCHEME: &str = "skill://";
/// The resource template for any file of a skill.
pub const FILE_TEMPLATE: &str = "skill://{skill}/{+path}";

/// Characters escaped in a path segment: controls, space, and those RFC 3986 reserves or
/// forbids (`/` separates segments and is never part of one).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b']')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// The URI of one file of a skill.
#[must_use]
pub fn file_uri(skill: &str, relative_path: &str) -> String {
    let mut uri = String::with_capacity(SCHEME.len() + skill.len() + relative_path.len() + 1);
    uri.push_str(SCHEME);
    push_segments(&mut uri, skill);
    for segment in relative_path.split('/') {
        uri.push('/');
        uri.extend(utf8_percent_encode(segment, SEGMENT));
    }
    uri
}

/// The URI of a skill's folder (its `SKILL.md` URI without `/SKILL.md`), or of a folder in it.
#[must_use]
pub fn directory_uri(skill: &str, relative_path: &str) -> String {
    if relative_path.is_empty() {
        let mut uri = String::from(SCHEME);
        push_segments(&mut uri, skill);
        uri
    } else {
        file_uri(skill, relative_path)
    }
}

/// A `skill://` URI taken apart: the skill's name and the path inside it (empty for the
/// skill's folder itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillUri {
    /// The skill's name.
    pub skill: String,
    /// The `/`-separated path inside the skill, decoded; empty for the folder.
    pub path: String,
}

/// Why a URI names nothing this server serves.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    /// Another scheme.
    #[error("`{0}` is not a skill resource: URIs here start with `skill://`")]
    Scheme(String),
    /// Query or fragment, or a malformed escape.
    #[error("`{0}` is not a plain skill URI (no query, fragment or malformed `%` escape)")]
    Malformed(String),
    /// A segment that could step out of the skill.
    #[error("`{0}` has an empty, `.` or `..` path segment; name a file inside the skill")]
    Escapes(String),
}

/// Take a `skill://` URI apart.
///
/// # Errors
/// When it is not one, or its path could leave the skill.
pub fn parse(uri: &str) -> Result<SkillUri, UriError> {
    let rest = uri
        .strip_prefix(SCHEME)
        .ok_or_else(|| UriError::Scheme(uri.to_owned()))?;
    if rest.contains(['?', '#']) {
        return Err(UriError::Malformed(uri.to_owned()));
    }
    let mut segments = rest.split('/');
    let skill = decode_segment(segments.next().unwrap_or_default(), uri)?;
    let mut path = Vec::new();
    for segment in segments {
        path.push(decode_segment(segment, uri)?);
    }
    Ok(SkillUri {
        skill,
        path: path.join("/"),
    })
}

/// The skill a URI names and the path inside it. The first segment is a skill's name; when no
/// skill a model may see has that name, the shortest run of leading segments that is a skill's
/// path in its root names it instead (`skill://openai/skill-creator/SKILL.md` reaches the copy
/// of `skill-creator` under `openai/`, which another copy of that name shadows). Skills are
/// found at most [`MAX_DISCOVERY_DEPTH`] folders deep, so at most that many runs are tried,
/// whatever the URI's length. `None` when neither names a skill.
#[must_use]
pub fn resolve(
    provider: &skillbox_tools::SkillsProvider,
    parsed: &SkillUri,
) -> Option<(std::sync::Arc<skillbox_core::Skill>, String)> {
    if let Ok(skill) = provider.find_model_skill(&parsed.skill, None) {
        return Some((skill, parsed.path.clone()));
    }
    let segments: Vec<&str> = parsed.path.splitn(MAX_DISCOVERY_DEPTH + 1, '/').collect();
    let mut named = parsed.skill.clone();
    for (taken, segment) in segments.iter().enumerate().take(MAX_DISCOVERY_DEPTH) {
        named.push('/');
        named.push_str(segment);
        // A skill's folder holds no other skill: the first path that names one is its folder.
        if let Ok(skill) = provider.find_model_skill(&named, None) {
            let rest = segments.get(taken + 1..).unwrap_or_default().join("/");
            return Some((skill, rest));
        }
    }
    None
}

/// Why a URI leads to no skill served here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocateError {
    /// The URI is not one this server makes.
    #[error(transparent)]
    Uri(#[from] UriError),
    /// No skill a model may see goes by the name (or path) it starts with.
    #[error("no skill named `{0}` is served here")]
    NoSkill(String),
}

/// The skill a client's URI names and the path inside it: [`parse`], then [`resolve`].
///
/// # Errors
/// When it is not a skill URI, or names no skill a model may see.
pub fn locate(
    provider: &skillbox_tools::SkillsProvider,
    uri: &str,
) -> Result<(std::sync::Arc<skillbox_core::Skill>, String), LocateError> {
    let parsed = parse(uri)?;
    resolve(provider, &parsed).ok_or(LocateError::NoSkill(parsed.skill))
}

/// How URIs name `skill`: by its name when it is the copy in effect, else by its path in its
/// root (see [`resolve`]).
#[must_use]
pub fn skill_segment(
    provider: &skillbox_tools::SkillsProvider,
    skill: &skillbox_core::Skill,
) -> String {
    if provider
        .catalog()
        .get(skill.name())
        .is_some_and(|in_effect| std::ptr::eq(in_effect.as_ref(), skill))
    {
        skill.name().to_owned()
    } else {
        skill.path_in_root()
    }
}

/// `skill` (a name, or a path in a root) as URI segments, each encoded.
fn push_segments(uri: &mut String, skill: &str) {
    for (index, segment) in skill.split('/').enumerate() {
        if index > 0 {
            uri.push('/');
        }
        uri.extend(utf8_percent_encode(segment, SEGMENT));
    }
}

fn decode_segment(segment: &str, uri: &str) -> Result<String, UriError> {
    let decoded = percent_decode_str(segment)
        .decode_utf8()
        .map_err(|_| UriError::Malformed(uri.to_owned()))?;
    if decoded.is_empty() || decoded == "." || decoded == ".." {
        return Err(UriError::Escapes(uri.to_owned()));
    }
    if decoded.contains(['/', '\0']) {
        return Err(UriError::Malformed(uri.to_owned()));
    }
    Ok(decoded.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_escapes() {
        let uri = file_uri("pdf", "references/a b#1.md");
        assert_eq!(uri, "skill://pdf/references/a%20b%231.md");
        assert_eq!(
            parse(&uri),
            Ok(SkillUri {
                skill: "pdf".into(),
                path: "references/a b#1.md".into()
            })
        );
        assert_eq!(directory_uri("pdf", ""), "skill://pdf");
        assert_eq!(parse("skill://pdf").map(|uri| uri.path), Ok(String::new()));
        for bad in [
            "skill://pdf/../etc/passwd",
            "skill://pdf/%2e%2e/x",
            "skill://pdf/a//b",
            "skill://pdf/a%2Fb",
            "skill://pdf/a%00",
            "skill://pdf/a?x=1",
            "skill://../x",
            "file:///etc/passwd",
            "skill://pdf/%ff",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
