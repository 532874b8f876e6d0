//! Variables in a server declaration's `args` and `env` values (issue 37): Claude's plugin
//! forms `${CLAUDE_PLUGIN_ROOT}`, `${VAR}` and `${VAR:-default}`. The skill's folder has two
//! names (`CLAUDE_PLUGIN_ROOT` and skillbox's own `SKILLBOX_SKILL_DIR`); any other variable is
//! taken only when the user granted it to the skill (`--secret`), else its default, else the
//! server does not start and the message names the variable. Nothing else of the user's
//! environment reaches a declaration.

/// The variable names that stand for the skill's folder.
pub const SKILL_FOLDER_VARIABLES: [&str; 2] = ["CLAUDE_PLUGIN_ROOT", "SKILLBOX_SKILL_DIR"];

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplatePart<'a> {
    /// Text taken as it is.
    Text(&'a str),
    /// The skill's folder.
    SkillFolder,
    /// A variable the user may grant, with its default.
    Variable {
        /// Its name.
        name: &'a str,
        /// The text after `:-`, when there is one.
        default: Option<&'a str>,
    },
}

/// The pieces of `text`; an error names the malformed `${…}`. A `$` not followed by `{` is
/// text.
///
/// # Errors
/// An unclosed `${`, or a name that is not an environment variable name.
pub fn parse_template(text: &str) -> Result<Vec<TemplatePart<'_>>, String> {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        if start > 0 {
            parts.push(TemplatePart::Text(&rest[..start]));
        }
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("`{text}` opens `${{` without closing it with `}}`"));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if !crate::properties::is_environment_name(name) {
            return Err(format!(
                "`${{{inner}}}` in `{text}` does not name an environment variable"
            ));
        }
        parts.push(if SKILL_FOLDER_VARIABLES.contains(&name) {
            TemplatePart::SkillFolder
        } else {
            TemplatePart::Variable { name, default }
        });
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        parts.push(TemplatePart::Text(rest));
    }
    Ok(parts)
}

/// The variables `text` takes from the user's grants (not the skill's folder).
#[must_use]
pub fn granted_variables(text: &str) -> Vec<String> {
    parse_template(text)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|part| match part {
            TemplatePart::Variable { name, .. } => Some(name.to_owned()),
            _ => None,
        })
        .collect()
}

/// `text` with its variables replaced: the skill's folder by `skill_folder`, a variable by
/// `granted(name)`, else its default.
///
/// # Errors
/// A malformed template, or a variable neither granted nor given a default (the message
/// names it and the grant to give).
pub fn expand(
    text: &str,
    skill_folder: &str,
    granted: impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut expanded = String::with_capacity(text.len());
    for part in parse_template(text)? {
        match part {
            TemplatePart::Text(text) => expanded.push_str(text),
            TemplatePart::SkillFolder => expanded.push_str(skill_folder),
            TemplatePart::Variable { name, default } => match (granted(name), default) {
                (Some(value), _) => expanded.push_str(&value),
                (None, Some(default)) => expanded.push_str(default),
                (None, None) => {
                    return Err(format!(
                        "`${{{name}}}` is not granted to the skill and has no default; grant it with `--secret {name}`"
                    ));
                }
            },
        }
    }
    Ok(expanded)
}

/// A command that starts with the skill's folder (`${CLAUDE_PLUGIN_ROOT}/servers/db`), as a
/// path inside the skill (`./servers/db`); `None` when it does not start so. A command with any
/// other variable is not a command skillbox runs (it could name any program).
#[must_use]
pub fn command_in_skill_folder(command: &str) -> Option<String> {
    SKILL_FOLDER_VARIABLES.iter().find_map(|name| {
        let rest = command.strip_prefix(&format!("${{{name}}}"))?;
        let rest = rest.strip_prefix('/')?;
        Some(format!("./{rest}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn granted(name: &str) -> Option<String> {
        (name == "API_KEY").then(|| "k-123".to_owned())
    }

    #[test]
    fn the_skill_folder_granted_variables_and_defaults_expand() {
        let expand = |text| expand(text, "/skill", granted);
        assert_eq!(
            expand("${CLAUDE_PLUGIN_ROOT}/config.json").unwrap(),
            "/skill/config.json"
        );
        assert_eq!(
            expand("--dir=${SKILLBOX_SKILL_DIR}").unwrap(),
            "--dir=/skill"
        );
        assert_eq!(expand("Bearer ${API_KEY}").unwrap(), "Bearer k-123");
        assert_eq!(expand("${LEVEL:-info}").unwrap(), "info");
        assert_eq!(expand("${API_KEY:-none}").unwrap(), "k-123");
        assert_eq!(expand("cost: $5 ${LEVEL:-}").unwrap(), "cost: $5 ");
        let missing = expand("${HOME}/x").unwrap_err();
        assert!(
            missing.contains("`${HOME}`") && missing.contains("--secret HOME"),
            "{missing}"
        );
        assert!(
            expand("${unclosed")
                .unwrap_err()
                .contains("without closing")
        );
        assert!(
            expand("${not a name}")
                .unwrap_err()
                .contains("does not name")
        );
    }

    #[test]
    fn a_command_in_the_skill_folder_becomes_a_path_inside_it() {
        assert_eq!(
            command_in_skill_folder("${CLAUDE_PLUGIN_ROOT}/servers/db").as_deref(),
            Some("./servers/db")
        );
        assert_eq!(command_in_skill_folder("${HOME}/bin/x"), None);
        assert_eq!(command_in_skill_folder("node"), None);
        assert_eq!(
            granted_variables("${A}-${CLAUDE_PLUGIN_ROOT}-${B:-x}"),
            ["A", "B"]
        );
    }
}
