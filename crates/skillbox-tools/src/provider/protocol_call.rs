//! The one entry for the Skills Protocol's eight tools, whatever door a call came through:
//! the catalog tools from the catalog ([`SkillsProvider::catalog_call`]'s code), the run and
//! blob tools from the provider's [`Services`], with the skills a model may see. A model's tool
//! call, `skillbox call` and the JSON-RPC server all end here.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value};
use skillbox_core::Skill;
use skillbox_exec::Executor;
use skillbox_services::{ReadBudget, RunContext, ServiceError, Services, Unbudgeted};

use super::{SkillsProvider, ToolOutcome, parse_arguments};
use crate::builtin_tools::PROTOCOL_TOOL_NAMES;

/// The protocol tools the run and blob services answer.
const SERVICE_TOOL_NAMES: [&str; 4] = ["execute_skill", "run_code", "create_blob", "read_blob"];

/// Why a Skills Protocol call got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolCallError {
    /// The call was refused or failed: bad parameters and unknown names (catalog misses
    /// included) are [`ServiceError::InvalidParams`].
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// The name is not one of the eight protocol tools.
    #[error("`{0}` is not a Skills Protocol tool; the tools are: {tools}", tools = PROTOCOL_TOOL_NAMES.join(", "))]
    UnknownTool(String),
    /// A run or blob tool, asked of a provider built without services.
    #[error(
        "`{0}` needs the run and blob services (a data folder for blobs and run inputs), and this provider was built without them: `skillbox serve` and `skillbox call` have them; a library caller adds them with `SkillsProvider::with_services`"
    )]
    NoServices(String),
}

impl SkillsProvider {
    /// This provider answering the run and blob tools with `services`: the same catalog,
    /// executor and options, sharing its defined tools.
    #[must_use]
    pub fn with_services(&self, services: Arc<Services>) -> SkillsProvider {
        SkillsProvider {
            services: Some(services),
            ..self.clone()
        }
    }

    /// Whether the protocol tool `name` is answered by the run and blob services
    /// (`execute_skill`, `run_code`, `create_blob`, `read_blob`) rather than by the catalog: a
    /// door may open its data folder only for these.
    #[must_use]
    pub fn answers_with_services(name: &str) -> bool {
        SERVICE_TOOL_NAMES.contains(&name)
    }

    /// The run and blob services, when the provider has them.
    #[must_use]
    pub fn services(&self) -> Option<&Arc<Services>> {
        self.services.as_ref()
    }

    /// Answer one of the eight Skills Protocol tools. `arguments` may be a JSON object or a
    /// string holding one. Blob reads are bounded by their own limit only; a door answering
    /// many callers at once bounds them with [`SkillsProvider::protocol_call_within`].
    ///
    /// # Errors
    /// See [`ProtocolCallError`].
    pub async fn protocol_call(
        &self,
        name: &str,
        arguments: &Value,
    ) -> Result<Value, ProtocolCallError> {
        self.protocol_call_within(name, arguments, &mut Unbudgeted)
            .await
    }

    /// [`SkillsProvider::protocol_call`], each blob read taking the bytes it returns from
    /// `budget` before fetching them.
    ///
    /// # Errors
    /// See [`ProtocolCallError`]; a spent budget is the error `budget` gives.
    pub async fn protocol_call_within(
        &self,
        name: &str,
        arguments: &Value,
        budget: &mut dyn ReadBudget,
    ) -> Result<Value, ProtocolCallError> {
        let arguments: Cow<'_, Map<String, Value>> = match arguments {
            Value::Object(arguments) => Cow::Borrowed(arguments),
            other => Cow::Owned(
                parse_arguments(name, other).map_err(ToolOutcome::into_protocol_result_error)?,
            ),
        };
        if let Some(outcome) = self.answer_catalog_call(name, &arguments) {
            return Ok(outcome.into_protocol_result()?);
        }
        if !SkillsProvider::answers_with_services(name) {
            return Err(ProtocolCallError::UnknownTool(name.to_owned()));
        }
        let Some(services) = self.services.as_deref() else {
            return Err(ProtocolCallError::NoServices(name.to_owned()));
        };
        Ok(match name {
            "execute_skill" => services.execute_skill(self, &arguments).await,
            "run_code" => services.run_code(self, &arguments).await,
            "create_blob" => services.create_blob_from(&arguments).await,
            "read_blob" => services.read_blob(&arguments, budget).await,
            other => Err(ServiceError::internal(format!(
                "`{other}` is a protocol tool this provider does not answer"
            ))),
        }?)
    }
}

/// Runs find skills as every other protocol tool does: only those a model may see
/// ([`Skill::visible_to_model`]), a hidden one answered exactly as a name the catalog does not
/// hold, hints included.
impl RunContext for SkillsProvider {
    fn find_skill(&self, name: &str, version: Option<&str>) -> Result<Arc<Skill>, String> {
        self.lookup_model_skill(name, version).map_err(|miss| {
            let hint = match (version, miss.versions.is_empty(), miss.closest) {
                (Some(_), false, _) => {
                    let versions: Vec<String> = miss
                        .versions
                        .iter()
                        .filter_map(|skill| skill.id.version.as_ref().map(ToString::to_string))
                        .collect();
                    format!("; its versions are: {}", versions.join(", "))
                }
                (_, true, Some(close)) => format!("; did you mean `{close}`?"),
                _ => "; list_skills shows the skills".to_owned(),
            };
            format!("{}{hint}", miss.error)
        })
    }

    fn executor(&self) -> &Executor {
        &self.executor
    }
}

impl ToolOutcome {
    /// A catalog call's outcome as a protocol answer: its error results are the caller's
    /// mistakes (an unknown skill or version, a forged cursor, a path escape).
    ///
    /// # Errors
    /// [`ServiceError::InvalidParams`] with the error's text.
    pub fn into_protocol_result(self) -> Result<Value, ServiceError> {
        if self.is_error {
            return Err(self.into_protocol_result_error());
        }
        Ok(self.content)
    }

    fn into_protocol_result_error(self) -> ServiceError {
        let message = self
            .content
            .get("error")
            .and_then(Value::as_str)
            .map_or_else(|| self.text(), str::to_owned);
        ServiceError::InvalidParams(message)
    }

    /// A protocol answer as a tool result: an error's text is what the model reads.
    #[must_use]
    pub fn from_protocol_result(result: Result<Value, ProtocolCallError>) -> Self {
        match result {
            Ok(content) => ToolOutcome::ok(content),
            Err(error) => ToolOutcome::error(error.to_string()),
        }
    }
}
