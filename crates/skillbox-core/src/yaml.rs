//! A small YAML document tree with source positions, built on serde-saphyr.
//!
//! Frontmatter needs three things a plain `serde` struct does not give at once: the line and
//! column of every field (for diagnostics), the exact source text of plain scalars (skills-ref
//! keeps `version: 1.10` as the string `"1.10"`, so must we), and unknown keys kept verbatim so
//! they can be passed through. [`YamlNode`] carries all three.

use std::fmt;

use indexmap::IndexMap;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Budget, DuplicateKeyPolicy, Spanned};

use crate::diagnostic::TextPosition;

/// A parsed YAML value whose children carry their own positions.
#[derive(Debug, Clone, PartialEq)]
pub enum YamlValue {
    /// `null`, `~` or an empty value.
    Null,
    /// `true` / `false` (YAML 1.2: no `yes`/`no`).
    Bool(bool),
    /// An integer or float.
    Number(serde_json::Number),
    /// A string scalar.
    String(String),
    /// A block or flow sequence.
    Sequence(Vec<YamlNode>),
    /// A block or flow mapping; keys keep their order.
    Mapping(IndexMap<String, YamlNode>),
}

/// A YAML value with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlNode {
    /// The value.
    pub value: YamlValue,
    /// Line and column in the enclosing file, when known.
    pub position: Option<TextPosition>,
    /// For plain scalars that are not strings (numbers, booleans, null): their exact source text.
    pub raw: Option<String>,
    /// For values of a mapping: where their key is (diagnostics about a field point here).
    pub key_position: Option<TextPosition>,
    pub(crate) byte_span: Option<(usize, usize)>,
}

impl YamlNode {
    /// The value as a JSON value (for pass-through of fields the catalog does not interpret).
    /// A number stays a number only when JSON spells it the way the author did; otherwise it is
    /// the author's text (`1.10` stays `"1.10"`, `007` stays `"007"`), never a re-typed value.
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        match &self.value {
            YamlValue::Null => serde_json::Value::Null,
            YamlValue::Bool(value) => serde_json::Value::Bool(*value),
            YamlValue::Number(number) => match &self.raw {
                Some(text) if *text != number.to_string() => {
                    serde_json::Value::String(text.clone())
                }
                _ => serde_json::Value::Number(number.clone()),
            },
            YamlValue::String(text) => serde_json::Value::String(text.clone()),
            YamlValue::Sequence(items) => {
                serde_json::Value::Array(items.iter().map(YamlNode::to_json).collect())
            }
            YamlValue::Mapping(entries) => serde_json::Value::Object(
                entries
                    .iter()
                    .map(|(key, node)| (key.clone(), node.to_json()))
                    .collect(),
            ),
        }
    }

    /// The scalar as text the way the author wrote it: strings as they are, numbers, booleans
    /// and null as their source spelling (`1.10` stays `1.10`). `None` for sequences and mappings.
    #[must_use]
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            YamlValue::String(text) => Some(text.clone()),
            YamlValue::Null | YamlValue::Bool(_) | YamlValue::Number(_) => {
                Some(self.raw.clone().unwrap_or_else(|| match &self.value {
                    YamlValue::Bool(value) => value.to_string(),
                    YamlValue::Number(number) => number.to_string(),
                    _ => String::new(),
                }))
            }
            YamlValue::Sequence(_) | YamlValue::Mapping(_) => None,
        }
    }

    /// The string, if this node is a string scalar.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            YamlValue::String(text) => Some(text),
            _ => None,
        }
    }

    /// Where a diagnostic about this field should point: its key when known, else its value.
    #[must_use]
    pub fn field_position(&self) -> Option<TextPosition> {
        self.key_position.or(self.position)
    }

    /// A short name of the node's type for messages: `string`, `list`, `mapping`…
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match &self.value {
            YamlValue::Null => "null",
            YamlValue::Bool(_) => "boolean",
            YamlValue::Number(_) => "number",
            YamlValue::String(_) => "string",
            YamlValue::Sequence(_) => "list",
            YamlValue::Mapping(_) => "mapping",
        }
    }

    fn from_spanned(spanned: Spanned<YamlValue>) -> Self {
        let location = spanned.referenced;
        let position = (location.line() > 0).then(|| TextPosition {
            line: location.line(),
            column: location.column(),
        });
        let span = location.span();
        let byte_span = match (span.byte_offset(), span.byte_len()) {
            (Some(offset), Some(len)) => {
                usize::try_from(offset).ok().zip(usize::try_from(len).ok())
            }
            _ => None,
        };
        YamlNode {
            value: spanned.value,
            position,
            raw: None,
            key_position: None,
            byte_span,
        }
    }

    /// Fill `raw` from the source text and shift lines by `line_offset` (the frontmatter starts
    /// below the opening `---`).
    fn finish(&mut self, source: &str, line_offset: u64) {
        if let Some(position) = &mut self.position {
            position.line += line_offset;
        }
        if let Some(position) = &mut self.key_position {
            position.line += line_offset;
        }
        match &mut self.value {
            YamlValue::Null | YamlValue::Bool(_) | YamlValue::Number(_) => {
                if let Some((offset, len)) = self.byte_span
                    && let Some(text) = source.get(offset..offset + len)
                {
                    self.raw = Some(text.trim().to_owned());
                }
            }
            YamlValue::String(_) => {}
            YamlValue::Sequence(items) => {
                for item in items {
                    item.finish(source, line_offset);
                }
            }
            YamlValue::Mapping(entries) => {
                for node in entries.values_mut() {
                    node.finish(source, line_offset);
                }
            }
        }
    }
}

impl<'de> Deserialize<'de> for YamlNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Spanned::<YamlValue>::deserialize(deserializer).map(YamlNode::from_spanned)
    }
}

impl<'de> Deserialize<'de> for YamlValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(YamlValueVisitor)
    }
}

struct YamlValueVisitor;

impl<'de> Visitor<'de> for YamlValueVisitor {
    type Value = YamlValue;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any YAML value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<YamlValue, E> {
        Ok(YamlValue::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<YamlValue, E> {
        Ok(YamlValue::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<YamlValue, D::Error> {
        YamlValue::deserialize(deserializer)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<YamlValue, E> {
        Ok(YamlValue::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<YamlValue, E> {
        Ok(YamlValue::Number(value.into()))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<YamlValue, E> {
        Ok(YamlValue::Number(value.into()))
    }

    fn visit_i128<E: de::Error>(self, value: i128) -> Result<YamlValue, E> {
        Ok(YamlValue::String(value.to_string()))
    }

    fn visit_u128<E: de::Error>(self, value: u128) -> Result<YamlValue, E> {
        Ok(YamlValue::String(value.to_string()))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<YamlValue, E> {
        Ok(serde_json::Number::from_f64(value)
            .map_or_else(|| YamlValue::String(value.to_string()), YamlValue::Number))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<YamlValue, E> {
        Ok(YamlValue::String(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<YamlValue, E> {
        Ok(YamlValue::String(value))
    }

    fn visit_bytes<E: de::Error>(self, value: &[u8]) -> Result<YamlValue, E> {
        Ok(YamlValue::String(
            String::from_utf8_lossy(value).into_owned(),
        ))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<YamlValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = access.next_element::<YamlNode>()? {
            items.push(item);
        }
        Ok(YamlValue::Sequence(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<YamlValue, A::Error> {
        let mut entries = IndexMap::new();
        while let Some(key) = access.next_key::<Spanned<String>>()? {
            let mut value = access.next_value::<YamlNode>()?;
            let location = key.referenced;
            value.key_position = (location.line() > 0).then(|| TextPosition {
                line: location.line(),
                column: location.column(),
            });
            entries.insert(key.value, value);
        }
        Ok(YamlValue::Mapping(entries))
    }
}

/// Why a YAML text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// The parser's message, without a source snippet.
    pub message: String,
    /// Where in the enclosing file the parser stopped, when known.
    pub position: Option<TextPosition>,
}

/// Parse one YAML document. `line_offset` is added to every line so positions refer to the
/// enclosing file. Parsing is bounded: alias expansion, nesting and event counts have budgets
/// small enough for a frontmatter block, so alias bombs fail fast instead of exhausting memory.
///
/// # Errors
/// When the text is not valid YAML, has duplicate keys, or exceeds the parsing budget.
pub fn parse_document(source: &str, line_offset: u64) -> Result<YamlNode, YamlError> {
    if source.trim().is_empty() {
        return Ok(YamlNode {
            value: YamlValue::Null,
            position: None,
            raw: None,
            key_position: None,
            byte_span: None,
        });
    }
    if let Some(node) = crate::simple_yaml::parse(source, line_offset) {
        return Ok(node);
    }
    parse_in_full(source, line_offset)
}

/// [`parse_document`] with the full YAML parser, for documents outside the plain subset.
pub(crate) fn parse_in_full(source: &str, line_offset: u64) -> Result<YamlNode, YamlError> {
    let mut budget = Budget::default();
    budget.max_events = 200_000;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    // Each level of nesting costs tens of KiB of stack in unoptimised builds; 24 levels is far
    // beyond any real frontmatter and keeps a rayon worker's 2 MiB stack safe.
    budget.max_depth = 24;
    budget.max_nodes = 100_000;
    budget.max_total_scalar_bytes = 4 * 1024 * 1024;
    budget.max_recorded_anchor_events = 10_000;
    budget.max_recorded_anchor_bytes = 1024 * 1024;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = 10_000;
    options.duplicate_keys = DuplicateKeyPolicy::Error;
    options.strict_booleans = true;
    options.with_snippet = false;
    match serde_saphyr::from_str_with_options::<YamlNode>(source, options) {
        Ok(mut node) => {
            node.finish(source, line_offset);
            Ok(node)
        }
        Err(error) => {
            let position = error.location().and_then(|location| {
                (location.line() > 0).then(|| TextPosition {
                    line: location.line() + line_offset,
                    column: location.column(),
                })
            });
            Err(YamlError {
                message: concise_message(&error.without_snippet().to_string()),
                position,
            })
        }
    }
}

/// serde-saphyr messages may end with " at line X column Y"; positions travel separately, so
/// only that exact trailing form is removed (messages quoting other positions stay whole).
fn concise_message(message: &str) -> String {
    let first_line = message.lines().next().unwrap_or(message).trim();
    if let Some(index) = first_line.rfind(" at line ") {
        let tail = &first_line[index + " at line ".len()..];
        let mut words = tail.split_whitespace();
        let is_position = matches!(
            (words.next(), words.next(), words.next(), words.next()),
            (Some(line), Some("column"), Some(column), None)
                if line.trim_end_matches(',').parse::<u64>().is_ok() && column.parse::<u64>().is_ok()
        );
        if is_position {
            return first_line[..index].trim().trim_end_matches(':').to_owned();
        }
    }
    first_line.trim_end_matches(':').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping(source: &str) -> IndexMap<String, YamlNode> {
        match parse_document(source, 1).unwrap().value {
            YamlValue::Mapping(entries) => entries,
            other => panic!("not a mapping: {other:?}"),
        }
    }

    #[test]
    fn keeps_source_text_of_numbers_and_positions() {
        let entries = mapping("name: demo\nversion: 1.10\nflag: true\nempty:\n");
        assert_eq!(entries["version"].scalar_text().as_deref(), Some("1.10"));
        assert_eq!(entries["flag"].scalar_text().as_deref(), Some("true"));
        assert_eq!(entries["empty"].value, YamlValue::Null);
        let position = entries["version"].position.unwrap();
        assert_eq!((position.line, position.column), (3, 10));
        let key = entries["version"].key_position.unwrap();
        assert_eq!((key.line, key.column), (3, 1));
    }

    #[test]
    fn numbers_pass_through_as_written() {
        let entries = mapping("a: 1.10\nb: 007\nc: 42\nd: 1.5\ne: 1e3\nf: [2.50, 3]\n");
        let json: serde_json::Map<String, serde_json::Value> = entries
            .iter()
            .map(|(key, node)| (key.clone(), node.to_json()))
            .collect();
        assert_eq!(
            serde_json::Value::Object(json),
            serde_json::json!({"a": "1.10", "b": "007", "c": 42, "d": 1.5, "e": "1e3", "f": ["2.50", 3]})
        );
    }

    #[test]
    fn yaml_1_1_booleans_are_strings() {
        let entries = mapping("a: yes\nb: off\n");
        assert_eq!(entries["a"].value, YamlValue::String("yes".into()));
        assert_eq!(entries["b"].value, YamlValue::String("off".into()));
    }

    #[test]
    fn flow_collections_parse() {
        let entries = mapping("tools: [Read, Grep]\nmeta: {a: 1}\n");
        assert_eq!(
            entries["tools"].to_json(),
            serde_json::json!(["Read", "Grep"])
        );
        assert_eq!(entries["meta"].to_json(), serde_json::json!({"a": 1}));
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let error = parse_document("name: a\nname: b\n", 1).unwrap_err();
        assert!(error.message.contains("duplicate"), "{}", error.message);
        assert_eq!(error.position.map(|p| p.line), Some(3));
    }

    #[test]
    fn colon_in_plain_value_is_an_error_with_position() {
        let error = parse_document("name: a\ndescription: Use when: X\n", 1).unwrap_err();
        assert_eq!(error.position.map(|p| p.line), Some(3));
    }

    #[test]
    fn alias_bomb_fails_fast() {
        let mut source = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..12 {
            let previous = level - 1;
            source.push_str(&format!(
                "a{level}: &a{level} [*a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}]\n"
            ));
        }
        let started = std::time::Instant::now();
        assert!(parse_document(&source, 0).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
