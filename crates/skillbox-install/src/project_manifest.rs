//! The project's manifest, `skillbox.toml`: the skills a project wants and where from, edited
//! by `add` and `remove` with its comments and layout kept.
//!
//! ```toml
//! [skills]
//! pdf = { source = "anthropics/skills", path = "skills/pdf", ref = "main" }
//! review = { source = "./tools/review-skill", agents = ["claude"] }
//! ```
//!
//! `source` is any SOURCE `skillbox add` takes; `path` the skill's folder inside it; `ref` a
//! branch, tag or commit (git); `agents` other agents' folders that show it; `copy` makes those
//! copies instead of links.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value};

use crate::error::InstallError;

/// One wanted skill.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestEntry {
    /// The SOURCE.
    pub source: String,
    /// The skill's folder inside the source.
    pub path: String,
    /// A branch, tag or commit.
    pub reference: Option<String>,
    /// Agents whose folders also show it.
    pub agents: Vec<String>,
    /// Copies rather than links in those folders.
    pub copy: bool,
}

/// The manifest, as read (and as it will be written).
#[derive(Debug, Clone)]
pub struct Manifest {
    path: PathBuf,
    document: DocumentMut,
    entries: BTreeMap<String, ManifestEntry>,
    exists: bool,
}

impl Manifest {
    /// Read the manifest at `path`; a missing file is an empty manifest.
    ///
    /// # Errors
    /// [`InstallError::Manifest`] naming the field that is wrong.
    pub fn load(path: &Path) -> Result<Manifest, InstallError> {
        let text = match fs_err::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Manifest {
                    path: path.to_path_buf(),
                    document: DocumentMut::new(),
                    entries: BTreeMap::new(),
                    exists: false,
                });
            }
            Err(error) => return Err(InstallError::io("read", path, error)),
        };
        let invalid = |message: String| InstallError::Manifest {
            path: path.to_path_buf(),
            message,
        };
        let document: DocumentMut = text
            .parse()
            .map_err(|error: toml_edit::TomlError| invalid(error.to_string()))?;
        let mut entries = BTreeMap::new();
        for (key, _) in document.iter() {
            if key != "skills" {
                return Err(invalid(format!(
                    "unknown table `{key}`; the manifest holds only `[skills]`"
                )));
            }
        }
        if let Some(skills) = document.get("skills") {
            let skills = skills
                .as_table_like()
                .ok_or_else(|| invalid("`skills` must be a table of skill names".to_owned()))?;
            for (name, item) in skills.iter() {
                if let Some(problem) = skillbox_core::names::unsafe_name_reason(name) {
                    return Err(invalid(format!(
                        "`skills.{name}` cannot name a skill folder: {problem}"
                    )));
                }
                let entry = parse_entry(name, item).map_err(invalid)?;
                entries.insert(name.to_owned(), entry);
            }
        }
        Ok(Manifest {
            path: path.to_path_buf(),
            document,
            entries,
            exists: true,
        })
    }

    /// Whether the file exists.
    #[must_use]
    pub fn exists(&self) -> bool {
        self.exists
    }

    /// The wanted skills by name.
    #[must_use]
    pub fn entries(&self) -> &BTreeMap<String, ManifestEntry> {
        &self.entries
    }

    /// Want `name` from `entry` (replacing what was there).
    pub fn set(&mut self, name: &str, entry: ManifestEntry) {
        let mut table = InlineTable::new();
        table.insert("source", Value::from(entry.source.as_str()));
        if !entry.path.is_empty() {
            table.insert("path", Value::from(entry.path.as_str()));
        }
        if let Some(reference) = &entry.reference {
            table.insert("ref", Value::from(reference.as_str()));
        }
        if !entry.agents.is_empty() {
            let agents: Array = entry.agents.iter().map(String::as_str).collect();
            table.insert("agents", Value::Array(agents));
        }
        if entry.copy {
            table.insert("copy", Value::from(true));
        }
        let skills = self
            .document
            .entry("skills")
            .or_insert_with(|| Item::Table(Table::new()));
        if let Some(skills) = skills.as_table_like_mut() {
            skills.insert(name, Item::Value(Value::InlineTable(table)));
        }
        self.entries.insert(name.to_owned(), entry);
    }

    /// Stop wanting `name`; whether it was wanted.
    pub fn remove(&mut self, name: &str) -> bool {
        if let Some(skills) = self
            .document
            .get_mut("skills")
            .and_then(Item::as_table_like_mut)
        {
            skills.remove(name);
        }
        self.entries.remove(name).is_some()
    }

    /// Write the manifest (atomically).
    ///
    /// # Errors
    /// [`InstallError::Io`] naming the file.
    pub fn save(&self) -> Result<(), InstallError> {
        let mut text = self.document.to_string();
        if !self.exists && !text.starts_with('#') {
            text.insert_str(
                0,
                "# The skills this project uses; `skillbox install` puts exactly what skillbox.lock says in .agents/skills.\n",
            );
        }
        write_atomically(&self.path, text.as_bytes())
    }
}

fn parse_entry(name: &str, item: &Item) -> Result<ManifestEntry, String> {
    let field = |key: &str| format!("`skills.{name}.{key}`");
    if let Some(source) = item.as_str() {
        return Ok(ManifestEntry {
            source: source.to_owned(),
            ..ManifestEntry::default()
        });
    }
    let table = item.as_table_like().ok_or_else(|| {
        format!("`skills.{name}` must be a SOURCE string or a table with `source`")
    })?;
    let mut entry = ManifestEntry::default();
    for (key, value) in table.iter() {
        match key {
            "source" => {
                entry.source = value
                    .as_str()
                    .ok_or_else(|| format!("{} must be a string", field(key)))?
                    .to_owned();
            }
            "path" => {
                entry.path = value
                    .as_str()
                    .ok_or_else(|| format!("{} must be a string", field(key)))?
                    .trim_matches('/')
                    .to_owned();
            }
            "ref" => {
                entry.reference = Some(
                    value
                        .as_str()
                        .ok_or_else(|| format!("{} must be a string", field(key)))?
                        .to_owned(),
                );
            }
            "agents" => {
                let array = value
                    .as_array()
                    .ok_or_else(|| format!("{} must be a list of agent names", field(key)))?;
                for agent in array {
                    entry.agents.push(
                        agent
                            .as_str()
                            .ok_or_else(|| format!("{} must hold strings", field(key)))?
                            .to_owned(),
                    );
                }
            }
            "copy" => {
                entry.copy = value
                    .as_bool()
                    .ok_or_else(|| format!("{} must be true or false", field(key)))?;
            }
            other => {
                return Err(format!(
                    "{} is not a known field (source, path, ref, agents, copy)",
                    field(other)
                ));
            }
        }
    }
    if entry.source.is_empty() {
        return Err(format!("{} is missing", field("source")));
    }
    crate::guard::check_source_path(&entry.path)
        .map_err(|problem| format!("{}: {problem}", field("path")))?;
    Ok(entry)
}

/// Write `bytes` to `path` whole ([`skillbox_trust::safe_write::write_file_atomically`]), so
/// a reader (or a crash) sees the old file or the new one, never half of one.
///
/// # Errors
/// [`InstallError::Io`] naming the file.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), InstallError> {
    skillbox_trust::safe_write::write_file_atomically(
        path,
        bytes,
        skillbox_trust::safe_write::WriteOptions::SHARED,
    )
    .map_err(|error| InstallError::io("write", path, error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_keep_comments_and_bad_fields_are_named() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("skillbox.toml");
        std::fs::write(
            &path,
            "# mine\n[skills]\n# keep\nold = { source = \"./old\" }\n",
        )
        .unwrap();
        let mut manifest = Manifest::load(&path).unwrap();
        manifest.set(
            "pdf",
            ManifestEntry {
                source: "o/r".into(),
                path: "skills/pdf".into(),
                reference: Some("v1".into()),
                agents: vec!["claude".into()],
                copy: false,
            },
        );
        manifest.save().unwrap();
        let text = fs_err::read_to_string(&path).unwrap();
        assert!(text.contains("# mine") && text.contains("# keep"), "{text}");
        let again = Manifest::load(&path).unwrap();
        assert_eq!(again.entries()["pdf"].reference.as_deref(), Some("v1"));
        assert_eq!(again.entries()["old"].source, "./old");

        std::fs::write(&path, "[skills]\nx = { source = \"a\", colour = 1 }\n").unwrap();
        let error = Manifest::load(&path).unwrap_err().to_string();
        assert!(error.contains("skills.x.colour"), "{error}");

        for (text, field) in [
            (
                "[skills]\nx = { source = \"a\", path = \"../../etc\" }\n",
                "skills.x.path",
            ),
            (
                "[skills]\nx = { source = \"a\", path = \"a/../../b\" }\n",
                "skills.x.path",
            ),
            ("[skills]\n\"../x\" = \"a\"\n", "skills.../x"),
        ] {
            std::fs::write(&path, text).unwrap();
            let error = Manifest::load(&path).unwrap_err().to_string();
            assert!(error.contains(field), "{text}: {error}");
        }
    }
}
