//! A tool call's arguments, decoded once into the tool's typed parameters, with one error text
//! at every door; the JSON Schema of those parameters, derived from the same type; and the
//! parameter types whose bounds are checked while decoding.
//!
//! Doors hold arguments in different shapes: a JSON value (MCP, the web app), the text a model
//! wrote (the agent loop), or the raw bytes of a JSON-RPC request's `params` (`/rpc`, which
//! never builds a tree of them). [`Arguments`] takes any of them and [`decode`] reads the typed
//! struct straight from it, so a blob's content can stay borrowed from the request body.

use std::borrow::Cow;
use std::fmt::Write as _;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Deserialize;
use serde_json::{Map, Value};

/// Characters of a model's invalid argument text quoted back in the error.
const QUOTED_ARGUMENT_CHARS: usize = 200;

/// The arguments of one call, as the door holds them.
#[derive(Debug, Clone, Copy)]
pub enum Arguments<'a> {
    /// A JSON value: an object, or `null` for none.
    Value(&'a Value),
    /// JSON text: a model's argument string, or a JSON-RPC request's raw `params`. Empty or
    /// blank text is no arguments.
    Text(&'a str),
    /// No arguments at all.
    None,
}

impl<'a> From<&'a Value> for Arguments<'a> {
    /// A string value is taken as JSON text, as OpenAI-style APIs send arguments.
    fn from(value: &'a Value) -> Self {
        match value {
            Value::String(text) => Arguments::Text(text),
            other => Arguments::Value(other),
        }
    }
}

/// Why arguments could not be decoded: the message names the parameter and what to send.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParamsError(pub String);

/// Decode `arguments` into `P` for the tool `tool`. Unknown members are ignored (models add
/// them freely); a missing required one, a value of the wrong type or out of its bounds is an
/// error naming the parameter.
///
/// # Errors
/// [`ParamsError`] with the one text every door gives.
pub fn decode<'a, P: Deserialize<'a>>(
    tool: &str,
    arguments: Arguments<'a>,
) -> Result<P, ParamsError> {
    match arguments {
        Arguments::None | Arguments::Value(Value::Null) => decode_text(tool, EMPTY_OBJECT),
        Arguments::Value(value @ Value::Object(_)) => decode_value(value),
        Arguments::Value(_) => Err(not_an_object(tool)),
        Arguments::Text(text) if text.trim().is_empty() => decode_text(tool, EMPTY_OBJECT),
        Arguments::Text(text) => decode_text(tool, text),
    }
}

/// The arguments of a call that sent none.
const EMPTY_OBJECT: &str = "{}";

fn decode_value<'a, P: Deserialize<'a>>(value: &'a Value) -> Result<P, ParamsError> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().clone();
        parameter_error(&path, &error.into_inner().to_string())
    })
}

fn decode_text<'a, P: Deserialize<'a>>(tool: &str, text: &'a str) -> Result<P, ParamsError> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') {
        return Err(match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => not_an_object(tool),
            Err(error) => not_json(tool, text, &error),
        });
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let decoded = serde_path_to_error::deserialize(&mut deserializer).and_then(|decoded| {
        deserializer
            .end()
            .map(|()| decoded)
            .map_err(|error| serde_path_to_error::Error::new(empty_path(), error))
    });
    decoded.map_err(|error| {
        let path = error.path().clone();
        let inner = error.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            not_json(tool, text, &inner)
        } else {
            parameter_error(&path, &without_position(&inner.to_string()))
        }
    })
}

fn empty_path() -> serde_path_to_error::Path {
    serde_path_to_error::Track::new().path()
}

fn not_an_object(tool: &str) -> ParamsError {
    ParamsError(format!(
        "the arguments of `{tool}` must be a JSON object of its parameters"
    ))
}

fn not_json(tool: &str, text: &str, error: &serde_json::Error) -> ParamsError {
    let mut quoted: String = text.chars().take(QUOTED_ARGUMENT_CHARS).collect();
    if quoted.len() < text.len() {
        quoted.push('…');
    }
    ParamsError(format!(
        "the arguments of `{tool}` are not valid JSON ({}): {quoted}; send a JSON object of its parameters",
        without_position(&error.to_string())
    ))
}

/// serde_json's message without its " at line N column M" (the text is one line of JSON).
fn without_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

/// A parameter's name as the caller wrote it: `limits.timeout_ms`, `args[2]`.
fn parameter_name(path: &serde_path_to_error::Path) -> String {
    let mut name = String::new();
    for segment in path {
        match segment {
            serde_path_to_error::Segment::Seq { index } => {
                let _ = write!(name, "[{index}]");
            }
            serde_path_to_error::Segment::Map { key } => {
                if !name.is_empty() {
                    name.push('.');
                }
                name.push_str(key);
            }
            serde_path_to_error::Segment::Enum { variant } => {
                if !name.is_empty() {
                    name.push('.');
                }
                name.push_str(variant);
            }
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    name
}

/// One text for each kind of problem serde reports, naming the parameter.
fn parameter_error(path: &serde_path_to_error::Path, message: &str) -> ParamsError {
    let name = parameter_name(path);
    let inside = |field: &str| {
        if name.is_empty() {
            field.to_owned()
        } else {
            format!("{name}.{field}")
        }
    };
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        return ParamsError(format!("missing required parameter `{}`", inside(field)));
    }
    if let Some(field) = message
        .strip_prefix("duplicate field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        return ParamsError(format!("parameter `{}` is given twice", inside(field)));
    }
    if name.is_empty() {
        return ParamsError(message.to_owned());
    }
    for kind in ["invalid type: ", "invalid value: ", "invalid length "] {
        if let Some(rest) = message.strip_prefix(kind)
            && let Some((found, expected)) = rest.split_once(", expected ")
        {
            return ParamsError(format!(
                "parameter `{name}` must be {expected}, not {found}"
            ));
        }
    }
    // A custom message about one item of a list ("[2] must be a string") or one member of
    // an object (".unit is not known").
    if let Some(rest) = message.strip_prefix('[')
        && let Some((index, tail)) = rest.split_once("] ")
    {
        return ParamsError(format!("parameter `{name}[{index}]` {tail}"));
    }
    if let Some(rest) = message.strip_prefix('.')
        && let Some((member, tail)) = rest.split_once(' ')
    {
        return ParamsError(format!("parameter `{name}.{member}` {tail}"));
    }
    if ["must ", "has ", "is "]
        .iter()
        .any(|verb| message.starts_with(verb))
    {
        return ParamsError(format!("parameter `{name}` {message}"));
    }
    ParamsError(format!("parameter `{name}`: {message}"))
}

/// How large a JSON text may be as a tree, checked before anything is built from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeLimits {
    /// Bytes of text.
    pub max_bytes: usize,
    /// Levels of nested arrays and objects.
    pub max_depth: usize,
    /// Values in all (counted generously: see [`JsonShape`]).
    pub max_values: usize,
}

/// Refuse JSON text (already known to be valid) larger than `limits`, from one pass over its
/// bytes, before any tree is built from it: a 60 MiB body or 100,000 nested brackets cost a
/// scan, not memory or stack. `what` names the text in the message (`the params of
/// \`run_code\``); `hint` says what to send instead when it is too long.
///
/// # Errors
/// A message naming the text, the limit and what to do.
pub fn check_shape(what: &str, text: &str, limits: ShapeLimits, hint: &str) -> Result<(), String> {
    if text.len() > limits.max_bytes {
        return Err(format!(
            "{what} are {} bytes; at most {} are accepted ({hint})",
            text.len(),
            limits.max_bytes
        ));
    }
    let shape = JsonShape::of(text);
    if shape.depth > limits.max_depth {
        return Err(format!(
            "{what} nest {} levels deep; at most {} are accepted",
            shape.depth, limits.max_depth
        ));
    }
    if shape.values > limits.max_values {
        return Err(format!(
            "{what} hold about {} JSON values; at most {} are accepted (put large data in a blob)",
            shape.values, limits.max_values
        ));
    }
    Ok(())
}

/// How big a JSON text is as a tree, from one pass over its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonShape {
    /// Values, counted as one plus every comma and opening bracket: never fewer than the real
    /// number, at most about twice it.
    pub values: usize,
    /// Deepest nesting of arrays and objects.
    pub depth: usize,
}

impl JsonShape {
    /// The shape of valid JSON text (a raw value serde has already checked).
    #[must_use]
    pub fn of(text: &str) -> Self {
        let mut shape = JsonShape {
            values: 1,
            depth: 0,
        };
        let mut depth = 0usize;
        let mut bytes = text.bytes();
        while let Some(byte) = bytes.next() {
            match byte {
                b'"' => skip_string(&mut bytes),
                b'[' | b'{' => {
                    depth += 1;
                    shape.depth = shape.depth.max(depth);
                    shape.values += 1;
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                b',' => shape.values += 1,
                _ => {}
            }
        }
        shape
    }
}

/// Move past the rest of a JSON string whose opening quote was just read.
fn skip_string(bytes: &mut impl Iterator<Item = u8>) {
    while let Some(byte) = bytes.next() {
        match byte {
            b'\\' => {
                bytes.next();
            }
            b'"' => return,
            _ => {}
        }
    }
}

/// The JSON Schema of a parameters type as models and MCP clients see it: derived with
/// `schemars`, then normalised so that it reads as the seeds write schemas: no `$schema`,
/// `title` or `format`, no description of the whole (the type's doc comment is for Rust
/// readers), an absent parameter is how one leaves it out (no `null` types), and
/// the keywords of each schema in one order (`type`, `enum`, `default`, `items`, `properties`,
/// `required`, `minimum`, `maximum`, `description`, then the rest).
#[must_use]
pub fn schema_of<P: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.meta_schema = None;
            settings.inline_subschemas = true;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<P>();
    let mut value = schema.to_value();
    normalise(&mut value, true);
    value
}

/// The order the keywords of a schema are written in, as the seeds write them; the rest
/// follow. Results' output schemas are written in it too.
pub const KEYWORD_ORDER: [&str; 9] = [
    "type",
    "enum",
    "default",
    "items",
    "properties",
    "required",
    "minimum",
    "maximum",
    "description",
];

fn normalise(schema: &mut Value, root: bool) {
    let Value::Object(object) = schema else {
        return;
    };
    for dropped in ["$schema", "title", "format"] {
        object.remove(dropped);
    }
    // `#[serde(default)]` on an `Option` says `default: null`: absent is the default.
    if object.get("default").is_some_and(Value::is_null) {
        object.remove("default");
    }
    // `Option<T>` fields: `anyOf: [T, null]` or `type: [t, "null"]` with `null` in an enum.
    if let Some(Value::Array(any_of)) = object.get("anyOf")
        && any_of.len() == 2
        && let Some(position) = any_of.iter().position(is_null_schema)
    {
        let mut kept = any_of[1 - position].clone();
        if let (Value::Object(kept_object), Some(description)) =
            (&mut kept, object.get("description").cloned())
        {
            kept_object.insert("description".to_owned(), description);
        }
        *schema = kept;
        normalise(schema, root);
        return;
    }
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|kind| kind != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            object.insert("type".to_owned(), only);
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|value| !value.is_null());
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for property in properties.values_mut() {
            normalise(property, false);
        }
    }
    if let Some(items) = object.get_mut("items") {
        normalise(items, false);
    }
    if root {
        // The parameters type's own doc comment is about the Rust type, not for models.
        object.remove("description");
        // A tool without parameters still lists them, as none.
        if !object.contains_key("properties") {
            object.insert("properties".to_owned(), Value::Object(Map::new()));
        }
    }
    let mut ordered = Map::new();
    for keyword in KEYWORD_ORDER {
        if let Some(value) = object.remove(keyword) {
            ordered.insert(keyword.to_owned(), value);
        }
    }
    ordered.append(object);
    *object = ordered;
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// Declares a parameter whose value is one of a few words: decoding refuses any other with
/// `must be "a" or "b", not "c"`, and the schema lists them as `type: string` with `enum`.
#[macro_export]
macro_rules! word_parameter {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$variant_meta:meta])* $variant:ident => $word:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$variant_meta])* $variant),+
        }

        impl $name {
            /// Every word, in the schema's order.
            pub const WORDS: &'static [&'static str] = &[$($word),+];

            /// The word for this value.
            #[must_use]
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let word = <::std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                match &*word {
                    $($word => Ok($name::$variant),)+
                    other => Err(<D::Error as ::serde::de::Error>::custom(
                        $crate::params::one_of_message($name::WORDS, other),
                    )),
                }
            }
        }

        impl ::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                ::schemars::json_schema!({ "type": "string", "enum": $name::WORDS })
            }
        }
    };
}

/// `must be "a" or "b", not "c"` (or `must be one of "a", "b", "c", not "d"`).
#[doc(hidden)]
#[must_use]
pub fn one_of_message(words: &[&str], found: &str) -> String {
    let quoted: Vec<String> = words.iter().map(|word| format!("\"{word}\"")).collect();
    let choices = match quoted.as_slice() {
        [only] => only.clone(),
        [first, second] => format!("{first} or {second}"),
        many => {
            let (last, rest) = many.split_last().unwrap_or((&many[0], &[]));
            format!("{}, or {last}", rest.join(", "))
        }
    };
    let mut shown: String = found.chars().take(QUOTED_ARGUMENT_CHARS).collect();
    if shown.len() < found.len() {
        shown.push('…');
    }
    format!("must be {choices}, not \"{shown}\"")
}

/// An integer parameter within `MIN..=MAX`: decoding refuses others with `must be an integer
/// from MIN to MAX`. Its schema is `{type: integer}`, with the bounds only when `SHOWN`
/// (the Skills Protocol's schemas do not state them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounded<const MIN: u64, const MAX: u64, const SHOWN: bool = false>(pub u64);

impl<const MIN: u64, const MAX: u64, const SHOWN: bool> Bounded<MIN, MAX, SHOWN> {
    /// The value.
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }

    /// The value as a count.
    #[must_use]
    pub fn count(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

impl<'de, const MIN: u64, const MAX: u64, const SHOWN: bool> Deserialize<'de>
    for Bounded<MIN, MAX, SHOWN>
{
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match value.as_u64() {
            Some(number) if (MIN..=MAX).contains(&number) => Ok(Bounded(number)),
            _ => Err(serde::de::Error::custom(format!(
                "must be an integer from {MIN} to {MAX}"
            ))),
        }
    }
}

impl<const MIN: u64, const MAX: u64, const SHOWN: bool> JsonSchema for Bounded<MIN, MAX, SHOWN> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Bounded_{MIN}_{MAX}").into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        if SHOWN {
            schemars::json_schema!({ "type": "integer", "minimum": MIN, "maximum": MAX })
        } else {
            schemars::json_schema!({ "type": "integer" })
        }
    }
}

/// Text that may be borrowed from the request (a blob's content, tens of MiB, is never
/// copied while decoding when it has no escapes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;

        impl<'de> serde::de::Visitor<'de> for TextVisitor {
            type Value = Text<'de>;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a string")
            }

            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                text: &'de str,
            ) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(text)))
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(text)))
            }
        }

        deserializer.deserialize_str(TextVisitor)
    }
}

impl JsonSchema for Text<'_> {
    fn schema_name() -> Cow<'static, str> {
        "Text".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string" })
    }
}

/// Text that must hold something other than spaces: `must not be empty` otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonBlank(pub String);

impl<'de> Deserialize<'de> for NonBlank {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.trim().is_empty() {
            return Err(serde::de::Error::custom("must not be empty"));
        }
        Ok(NonBlank(text))
    }
}

impl JsonSchema for NonBlank {
    fn schema_name() -> Cow<'static, str> {
        "NonBlank".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string" })
    }
}

/// A JSON object: `must be a JSON object` otherwise.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JsonObject(pub Map<String, Value>);

impl<'de> Deserialize<'de> for JsonObject {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Object(object) => Ok(JsonObject(object)),
            _ => Err(serde::de::Error::custom("must be a JSON object")),
        }
    }
}

impl JsonSchema for JsonObject {
    fn schema_name() -> Cow<'static, str> {
        "JsonObject".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "object" })
    }
}

/// A list of at most `MAX` strings: `must be an array of strings`, `has N entries; at most
/// MAX are accepted` or `[i] must be a string` otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TextList<const MAX: usize>(pub Vec<String>);

impl<'de, const MAX: usize> Deserialize<'de> for TextList<MAX> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Value::Array(items) = Value::deserialize(deserializer)? else {
            return Err(serde::de::Error::custom("must be an array of strings"));
        };
        if items.len() > MAX {
            return Err(serde::de::Error::custom(format!(
                "has {} entries; at most {MAX} are accepted",
                items.len()
            )));
        }
        items
            .into_iter()
            .enumerate()
            .map(|(index, item)| match item {
                Value::String(text) => Ok(text),
                _ => Err(serde::de::Error::custom(format!(
                    "[{index}] must be a string"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(TextList)
    }
}

impl<const MAX: usize> JsonSchema for TextList<MAX> {
    fn schema_name() -> Cow<'static, str> {
        "TextList".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "array", "items": { "type": "string" } })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Demo<'a> {
        /// The text.
        #[serde(borrow)]
        text: std::borrow::Cow<'a, str>,
        /// How many.
        #[serde(default)]
        limit: Option<Bounded<1, 50, true>>,
        #[serde(default)]
        nested: Option<Nested>,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Nested {
        timeout_ms: Option<u64>,
    }

    fn decode_text_of(text: &str) -> Result<Demo<'_>, ParamsError> {
        decode("demo", Arguments::Text(text))
    }

    #[test]
    fn errors_name_the_parameter_whatever_the_shape() {
        let text = r#"{"text": 5}"#;
        let value: Value = serde_json::from_str(text).unwrap();
        let from_text = decode_text_of(text).unwrap_err();
        let from_value = decode::<Demo<'_>>("demo", Arguments::Value(&value)).unwrap_err();
        assert_eq!(from_text, from_value);
        assert_eq!(
            from_text.0,
            "parameter `text` must be a string, not integer `5`"
        );
        assert_eq!(
            decode_text_of("{}").unwrap_err().0,
            "missing required parameter `text`"
        );
        assert_eq!(
            decode_text_of(r#"{"text": "a", "limit": 51}"#)
                .unwrap_err()
                .0,
            "parameter `limit` must be an integer from 1 to 50"
        );
        assert_eq!(
            decode_text_of(r#"{"text": "a", "nested": {"timeout_ms": "x"}}"#)
                .unwrap_err()
                .0,
            "parameter `nested.timeout_ms` must be u64, not string \"x\""
        );
        assert!(
            decode_text_of("{\"text\": ")
                .unwrap_err()
                .0
                .starts_with("the arguments of `demo` are not valid JSON (")
        );
        assert_eq!(
            decode_text_of("[1]").unwrap_err().0,
            "the arguments of `demo` must be a JSON object of its parameters"
        );
    }

    #[test]
    fn text_is_borrowed_when_it_has_no_escapes() {
        let decoded = decode_text_of(r#"{"text": "plain", "other": [1, 2]}"#).unwrap();
        assert!(matches!(decoded.text, std::borrow::Cow::Borrowed("plain")));
        let full =
            decode_text_of(r#"{"text": "a", "limit": 7, "nested": {"timeout_ms": 9}}"#).unwrap();
        assert_eq!(full.limit.map(Bounded::get), Some(7));
        assert_eq!(full.nested.and_then(|nested| nested.timeout_ms), Some(9));
    }

    #[test]
    fn schemas_read_as_the_seeds_write_them() {
        assert_eq!(
            serde_json::to_string(&schema_of::<Demo<'_>>()).unwrap(),
            r#"{"type":"object","properties":{"text":{"type":"string","description":"The text."},"limit":{"type":"integer","minimum":1,"maximum":50,"description":"How many."},"nested":{"type":"object","properties":{"timeout_ms":{"type":"integer","minimum":0}}}},"required":["text"]}"#
        );
    }
}
