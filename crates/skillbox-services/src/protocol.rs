//! The parameters of the run and blob tools of the Skills Protocol (`execute_skill`,
//! `run_code`, `create_blob`, `read_blob`), as typed structs: the door policy decodes a call's
//! arguments into them once, and their JSON Schemas (seed 001's, exactly) are derived from
//! them. Each problem names the parameter.

use std::borrow::Cow;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::params::{JsonObject, NonBlank, Text, TextList};
use crate::runs::{MAX_INPUT_BLOBS, MAX_MOUNTED_SKILLS, MAX_RUN_TIMEOUT};

/// The run and blob tools' names, spelled once: the services label their runs with them
/// (metrics, audit) and the tool registry offers the tools under them.
pub const EXECUTE_SKILL: &str = "execute_skill";
/// See [`EXECUTE_SKILL`].
pub const RUN_CODE: &str = "run_code";
/// See [`EXECUTE_SKILL`].
pub const CREATE_BLOB: &str = "create_blob";
/// See [`EXECUTE_SKILL`].
pub const READ_BLOB: &str = "read_blob";

/// A run's wall-clock limit in milliseconds, from 1 to [`MAX_RUN_TIMEOUT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeoutMs(pub Duration);

impl<'de> Deserialize<'de> for TimeoutMs {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let max_ms = MAX_RUN_TIMEOUT.as_millis();
        match Value::deserialize(deserializer)?.as_u64() {
            Some(ms) if ms > 0 && u128::from(ms) <= max_ms => {
                Ok(TimeoutMs(Duration::from_millis(ms)))
            }
            _ => Err(serde::de::Error::custom(format!(
                "must be a whole number of milliseconds from 1 to {max_ms}"
            ))),
        }
    }
}

impl JsonSchema for TimeoutMs {
    fn schema_name() -> Cow<'static, str> {
        "TimeoutMs".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "integer" })
    }
}

/// `execute_skill {name, version?, args?, input_blobs?, timeout_ms?}`.
///
/// `name` is required (the schema says so), but its type is still an `Option` the run
/// planner checks ([`crate::Services::plan_execute_skill`], in `runs.rs`), with the
/// decoder's words for a missing parameter.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExecuteSkillParams {
    /// Skill name
    pub name: NonBlank,
    /// Skill version (omit for latest)
    #[serde(default)]
    pub version: Option<NonBlank>,
    /// JSON-serializable arguments to pass to the skill
    #[serde(default)]
    pub args: Option<JsonObject>,
    /// Blob IDs to mount in the sandbox
    #[serde(default)]
    pub input_blobs: Option<TextList<MAX_INPUT_BLOBS>>,
    /// Execution timeout in milliseconds
    #[serde(default)]
    pub timeout_ms: Option<TimeoutMs>,
}

/// `run_code`'s `limits`: only `timeout_ms` is known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunCodeLimits {
    /// The wall-clock limit.
    pub timeout_ms: Option<TimeoutMs>,
}

impl<'de> Deserialize<'de> for RunCodeLimits {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Value::Object(limits) = Value::deserialize(deserializer)? else {
            return Err(serde::de::Error::custom(
                "must be an object such as {\"timeout_ms\": 10000}",
            ));
        };
        if let Some(unknown) = limits.keys().find(|key| key.as_str() != "timeout_ms") {
            return Err(serde::de::Error::custom(format!(
                ".{unknown} is not a limit this server knows; the limits are: timeout_ms"
            )));
        }
        let timeout_ms = match limits.get("timeout_ms") {
            None | Some(Value::Null) => None,
            Some(value) => Some(
                TimeoutMs::deserialize(value)
                    .map_err(|error| serde::de::Error::custom(format!(".timeout_ms {error}")))?,
            ),
        };
        Ok(RunCodeLimits { timeout_ms })
    }
}

impl JsonSchema for RunCodeLimits {
    fn schema_name() -> Cow<'static, str> {
        "RunCodeLimits".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "properties": { "timeout_ms": { "type": "integer" } }
        })
    }
}

fn python_only(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": ["python"] })
}

/// `run_code {language, code, entrypoint?, args?, mount_skills?, input_blobs?, limits?}`.
///
/// `language` and `code` are required (the schema says so), but their types are still
/// `Option`s the run planner checks ([`crate::Services::plan_run_code`], in `runs.rs`), with
/// the decoder's words for a missing parameter.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunCodeParams {
    /// Programming language (MVP: python only)
    #[schemars(schema_with = "python_only")]
    pub language: NonBlank,
    /// Source code to execute
    pub code: NonBlank,
    /// Function name to call
    #[serde(default)]
    #[schemars(extend("default" = "main"))]
    pub entrypoint: Option<NonBlank>,
    /// Arguments to pass to entrypoint function
    #[serde(default)]
    pub args: Option<JsonObject>,
    /// Skill names to mount in sandbox
    #[serde(default)]
    pub mount_skills: Option<TextList<MAX_MOUNTED_SKILLS>>,
    /// Blob IDs to mount in sandbox
    #[serde(default)]
    pub input_blobs: Option<TextList<MAX_INPUT_BLOBS>>,
    /// Execution limits
    #[serde(default)]
    pub limits: Option<RunCodeLimits>,
}

/// `create_blob {content, kind, encoding?}`: the content stays borrowed from the request
/// when it can.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateBlobParams<'a> {
    /// Content to store
    #[serde(borrow)]
    pub content: Text<'a>,
    /// MIME type (e.g., 'text/plain', 'application/json')
    #[serde(borrow)]
    pub kind: Text<'a>,
    /// `base64` for binary content.
    #[serde(default, borrow)]
    #[schemars(skip)]
    pub encoding: Option<Text<'a>>,
}

/// A count of bytes above zero: `must be a positive integer` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PositiveBytes(pub u64);

impl<'de> Deserialize<'de> for PositiveBytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)?.as_u64() {
            Some(bytes) if bytes > 0 => Ok(PositiveBytes(bytes)),
            _ => Err(serde::de::Error::custom("must be a positive integer")),
        }
    }
}

impl JsonSchema for PositiveBytes {
    fn schema_name() -> Cow<'static, str> {
        "PositiveBytes".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "integer" })
    }
}

fn read_modes(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": ["sample_head", "sample_tail", "full"] })
}

/// `read_blob {blob_id, mode?, max_bytes?}`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadBlobParams {
    /// Blob identifier
    pub blob_id: String,
    /// How to sample the blob
    #[serde(default)]
    #[schemars(schema_with = "read_modes", extend("default" = "sample_head"))]
    pub mode: Option<String>,
    /// Maximum bytes to return
    #[serde(default)]
    #[schemars(extend("default" = 2000))]
    pub max_bytes: Option<PositiveBytes>,
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::params::{Arguments, decode};

    #[test]
    fn create_blob_params_borrow_plain_content_and_name_bad_members() {
        let text = r#"{"content": "plain", "kind": "text/plain", "ignored": [[[]]]}"#;
        let params: CreateBlobParams<'_> = decode("create_blob", Arguments::Text(text)).unwrap();
        assert!(matches!(params.content, Text(Cow::Borrowed("plain"))));
        let escaped: CreateBlobParams<'_> = decode(
            "create_blob",
            Arguments::Text(r#"{"content": "a\nb", "kind": "t"}"#),
        )
        .unwrap();
        assert_eq!(escaped.content, Text(Cow::Owned("a\nb".to_owned())));
        for (text, expected) in [
            (
                r#"{"content": 5, "kind": "t"}"#,
                "parameter `content` must be a string",
            ),
            (
                r#"{"content": [1, 2], "kind": "t"}"#,
                "parameter `content` must be a string",
            ),
            (
                r#"{"content": "x", "kind": "t", "encoding": 1}"#,
                "parameter `encoding` must be a string",
            ),
        ] {
            let error =
                decode::<CreateBlobParams<'_>>("create_blob", Arguments::Text(text)).unwrap_err();
            assert!(error.0.starts_with(expected), "{text}: {error:?}");
        }
    }
}
