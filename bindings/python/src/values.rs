//! Values between Python and skillbox: a call's arguments in, its answer out, and a tool
//! format named by a string.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use serde_json::Value;
use skillbox::{ToolFormat, ToolOutcome};

/// The formats `tools_for` takes, as Python spells them.
pub const TOOL_FORMATS: &str =
    "\"responses\", \"openai\" (Chat Completions), \"anthropic\", \"gemini\", \"mcp\"";

/// A call's arguments: a dict (or `None`, no arguments) of JSON values.
pub fn arguments(arguments: Option<&Bound<'_, PyAny>>) -> PyResult<Value> {
    match arguments {
        None => Ok(Value::Object(serde_json::Map::new())),
        Some(given) if given.is_none() => Ok(Value::Object(serde_json::Map::new())),
        Some(given) => pythonize::depythonize::<Value>(given).map_err(|error| {
            PyTypeError::new_err(format!(
                "`args` must be a dict of JSON values (str, int, float, bool, None, list, dict): {error}"
            ))
        }),
    }
}

/// What a call answers, as Python values: the content seed 002's `handleToolCall` answers (a
/// str for `load_skill`, a dict for `use_skill` and failures).
pub fn answer(py: Python<'_>, outcome: ToolOutcome) -> PyResult<Py<PyAny>> {
    Ok(pythonize::pythonize(py, &outcome.content.into_value())?.unbind())
}

/// Any JSON value as Python values.
pub fn python_value(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    Ok(pythonize::pythonize(py, value)?.unbind())
}

/// The tool format named `name`.
pub fn tool_format(name: &str) -> PyResult<ToolFormat> {
    ToolFormat::parse(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown tool format {name:?}; use one of {TOOL_FORMATS}"
        ))
    })
}
