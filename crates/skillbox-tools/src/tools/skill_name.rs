//! The skill a call names, by any of the names models give it: `skill`, `skill_name`,
//! `skillName` or `name`. A tool flattens a [`SkillName`] (or, where the skill may be left out,
//! an [`OptionalSkillName`]) into its parameters: the schema lists the one property the tool's
//! [`SkillParameter`] declares, decoding accepts every name, and when several are given the
//! first that is not blank wins (serde's `alias` would call two of them a duplicate).
//!
//! A required name that is missing (or blank, or `null`) fails decoding with serde's missing
//! field, which the decoder words as every door does: "missing required parameter `skill`".

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Unexpected, Visitor};
use serde_json::{Map, Value};

/// The names a model may give a skill by, in the order they are tried.
pub const MODEL_SKILL_NAMES: &[&str] = &["skill", "skill_name", "skillName", "name"];

/// How one tool shows the skill parameter: the property its schema lists, with its
/// description, and the names a call may give the skill by.
pub trait SkillParameter: Send + Sync + 'static {
    /// The property the schema lists (and a missing skill is reported by).
    const PROPERTY: &'static str;
    /// Its description, for the model.
    const DESCRIPTION: &'static str;
    /// Every name a call may use, in the order they are tried.
    const NAMES: &'static [&'static str] = MODEL_SKILL_NAMES;
}

/// A skill's name a call must give. See the module's documentation.
pub struct SkillName<P> {
    name: String,
    parameter: PhantomData<P>,
}

impl<P> SkillName<P> {
    /// The name, trimmed.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.name
    }
}

impl<P> fmt::Debug for SkillName<P> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_tuple("SkillName")
            .field(&self.name)
            .finish()
    }
}

/// A skill's name a call may leave out (`load_skill` lists the skills without one).
pub struct OptionalSkillName<P> {
    name: Option<String>,
    parameter: PhantomData<P>,
}

impl<P> OptionalSkillName<P> {
    /// The name, trimmed, when one was given.
    #[must_use]
    pub fn as_deref(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

impl<P> fmt::Debug for OptionalSkillName<P> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_tuple("OptionalSkillName")
            .field(&self.name)
            .finish()
    }
}

impl<'de, P: SkillParameter> Deserialize<'de> for SkillName<P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = deserializer
            .deserialize_struct("SkillName", P::NAMES, NamesVisitor::<P>(PhantomData))?
            .ok_or_else(|| de::Error::missing_field(P::PROPERTY))?;
        Ok(SkillName {
            name,
            parameter: PhantomData,
        })
    }
}

impl<'de, P: SkillParameter> Deserialize<'de> for OptionalSkillName<P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = deserializer.deserialize_struct(
            "SkillName",
            P::NAMES,
            NamesVisitor::<P>(PhantomData),
        )?;
        Ok(OptionalSkillName {
            name,
            parameter: PhantomData,
        })
    }
}

/// Reads the names a call gave the skill by: the first of [`SkillParameter::NAMES`] that is
/// not blank, trimmed. Any other member is left to the tool's own parameters.
struct NamesVisitor<P>(PhantomData<P>);

impl<'de, P: SkillParameter> Visitor<'de> for NamesVisitor<P> {
    type Value = Option<String>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an object of parameters")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut given: Vec<Option<String>> = vec![None; P::NAMES.len()];
        let mut seen = vec![false; P::NAMES.len()];
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let Some(index) = P::NAMES.iter().position(|name| *name == key) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let name = P::NAMES[index];
            if std::mem::replace(&mut seen[index], true) {
                return Err(de::Error::duplicate_field(name));
            }
            given[index] = match map.next_value::<Value>()? {
                Value::Null => None,
                Value::String(text) => Some(text),
                other => {
                    return Err(de::Error::custom(format!(
                        "parameter `{name}` must be a string, not {}",
                        unexpected(&other)
                    )));
                }
            };
        }
        Ok(given
            .into_iter()
            .flatten()
            .map(|name| name.trim().to_owned())
            .find(|name| !name.is_empty()))
    }
}

/// A value as serde names what it found instead of what it expected ("integer `5`").
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(flag) => Unexpected::Bool(*flag),
        Value::Number(number) => match (number.as_u64(), number.as_i64()) {
            (Some(unsigned), _) => Unexpected::Unsigned(unsigned),
            (None, Some(signed)) => Unexpected::Signed(signed),
            (None, None) => Unexpected::Float(number.as_f64().unwrap_or_default()),
        },
        Value::String(text) => Unexpected::Str(text),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// `{type: object, properties: {PROPERTY: {type: string, description}}}`, and `required` when
/// the name must be given.
fn names_schema<P: SkillParameter>(required: bool) -> schemars::Schema {
    let mut property = Map::new();
    property.insert("type".to_owned(), Value::from("string"));
    property.insert("description".to_owned(), Value::from(P::DESCRIPTION));
    let mut properties = Map::new();
    properties.insert(P::PROPERTY.to_owned(), Value::Object(property));
    let mut schema = Map::new();
    schema.insert("type".to_owned(), Value::from("object"));
    schema.insert("properties".to_owned(), Value::Object(properties));
    if required {
        schema.insert(
            "required".to_owned(),
            Value::Array(vec![Value::from(P::PROPERTY)]),
        );
    }
    schemars::Schema::from(schema)
}

impl<P: SkillParameter> JsonSchema for SkillName<P> {
    fn schema_name() -> Cow<'static, str> {
        "SkillName".into()
    }

    fn schema_id() -> Cow<'static, str> {
        std::any::type_name::<Self>().into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        names_schema::<P>(true)
    }
}

impl<P: SkillParameter> JsonSchema for OptionalSkillName<P> {
    fn schema_name() -> Cow<'static, str> {
        "OptionalSkillName".into()
    }

    fn schema_id() -> Cow<'static, str> {
        std::any::type_name::<Self>().into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        names_schema::<P>(false)
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;
    use skillbox_services::params::{Arguments, ParamsError, decode, schema_of};

    use super::*;

    struct Demo;

    impl SkillParameter for Demo {
        const PROPERTY: &'static str = "skill";
        const DESCRIPTION: &'static str = "Name of the skill";
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Params {
        #[serde(flatten)]
        skill: SkillName<Demo>,
        /// The script.
        script: String,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Optional {
        #[serde(flatten)]
        skill: OptionalSkillName<Demo>,
    }

    fn skill_of(arguments: serde_json::Value) -> Result<String, ParamsError> {
        let text = arguments.to_string();
        let from_value = decode::<Params>("demo", Arguments::Value(&arguments))
            .map(|params| (params.skill.as_str().to_owned(), params.script));
        let from_text = decode::<Params>("demo", Arguments::Text(&text))
            .map(|params| (params.skill.as_str().to_owned(), params.script));
        assert_eq!(from_value, from_text, "{arguments}");
        from_value.map(|(skill, script)| {
            assert_eq!(script, arguments["script"], "{arguments}");
            skill
        })
    }

    #[test]
    fn every_name_models_use_is_read_and_the_first_given_wins() {
        for name in MODEL_SKILL_NAMES {
            assert_eq!(
                skill_of(json!({ *name: " pdf ", "script": "run.py" })),
                Ok("pdf".to_owned())
            );
        }
        assert_eq!(
            skill_of(
                json!({"name": "last", "skillName": "third", "skill_name": "second", "script": "s"})
            ),
            Ok("second".to_owned())
        );
        assert_eq!(
            skill_of(json!({"skill": "  ", "name": null, "skillName": "camel", "script": "s"})),
            Ok("camel".to_owned())
        );
    }

    #[test]
    fn a_missing_or_ill_typed_name_is_worded_as_the_decoder_words_parameters() {
        for arguments in [
            json!({"script": "s"}),
            json!({"skill": "", "name": " ", "script": "s"}),
            json!({"skill": null, "script": "s"}),
        ] {
            assert_eq!(
                skill_of(arguments).unwrap_err().0,
                "missing required parameter `skill`"
            );
        }
        assert_eq!(
            skill_of(json!({"skill_name": 5, "script": "s"}))
                .unwrap_err()
                .0,
            "parameter `skill_name` must be a string, not integer `5`"
        );
        assert_eq!(
            decode::<Params>(
                "demo",
                Arguments::Text(r#"{"skill": "a", "skill": "b", "script": "s"}"#)
            )
            .unwrap_err()
            .0,
            "parameter `skill` is given twice"
        );
        assert_eq!(
            skill_of(json!({"skill": "pdf"})).unwrap_err().0,
            "missing required parameter `script`"
        );
    }

    #[test]
    fn the_schema_lists_one_property_required_or_not() {
        // As text: the order of properties and of `required` is what models read.
        assert_eq!(
            schema_of::<Params>().to_string(),
            json!({
                "type": "object",
                "properties": {
                    "skill": {"type": "string", "description": "Name of the skill"},
                    "script": {"type": "string", "description": "The script."}
                },
                "required": ["skill", "script"]
            })
            .to_string()
        );
        assert_eq!(
            schema_of::<Optional>().to_string(),
            json!({
                "type": "object",
                "properties": {"skill": {"type": "string", "description": "Name of the skill"}}
            })
            .to_string()
        );
        let optional: Optional = decode("demo", Arguments::None).unwrap();
        assert_eq!(optional.skill.as_deref(), None);
    }
}
