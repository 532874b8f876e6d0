//! Reading the parameters of a service call from its JSON object: each problem is a
//! [`ServiceError::InvalidParams`] naming the parameter.

use serde_json::{Map, Value};

use crate::error::ServiceError;

/// A required string parameter (any string, empty included).
///
/// # Errors
/// When it is missing or not a string.
pub fn string_param<'a>(
    params: &'a Map<String, Value>,
    name: &str,
) -> Result<&'a str, ServiceError> {
    match params.get(name) {
        Some(Value::String(value)) => Ok(value),
        Some(_) => Err(ServiceError::invalid_params(format!(
            "parameter `{name}` must be a string"
        ))),
        None => Err(ServiceError::invalid_params(format!(
            "missing required parameter `{name}`"
        ))),
    }
}
