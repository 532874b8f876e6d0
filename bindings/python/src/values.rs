//! Values between Python and skillbox: a call's arguments in, its answer out, and a tool
//! format named by a string.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::Value;
use skillbox::{Arguments, ToolFormat, ToolOutcome};

/// The formats `tools_for` takes, as Python spells them.
pub const TOOL_FORMATS: &str =
    "\"responses\", \"openai\" (Chat Completions), \"anthropic\", \"gemini\", \"mcp\"";

/// A call's arguments as Python gave them: a dict of JSON values, or a model's argument text
/// as it came (a str), decoded by the door policy.
pub enum CallArguments {
    /// A dict (or no arguments).
    Value(Value),
    /// JSON text.
    Text(String),
}

impl CallArguments {
    /// The arguments in the shape the facade takes.
    pub fn as_arguments(&self) -> Arguments<'_> {
        match self {
            CallArguments::Value(value) => Arguments::from(value),
            CallArguments::Text(text) => Arguments::Text(text),
        }
    }
}

/// A call's arguments: a dict (or `None`, no arguments) of JSON values, or JSON text.
pub fn arguments(arguments: Option<&Bound<'_, PyAny>>) -> PyResult<CallArguments> {
    match arguments {
        None => Ok(CallArguments::Value(Value::Object(serde_json::Map::new()))),
        Some(given) if given.is_none() => {
            Ok(CallArguments::Value(Value::Object(serde_json::Map::new())))
        }
        Some(given) if given.is_instance_of::<PyString>() => {
            Ok(CallArguments::Text(given.extract()?))
        }
        Some(given) => check_depth(given, 0)
            .and_then(|()| pythonize::depythonize::<Value>(given).map_err(Into::into))
            .map(CallArguments::Value)
            .map_err(|error| {
                PyTypeError::new_err(format!(
                    "`args` must be a dict of JSON values (str, int, float, bool, None, list, dict), or JSON text: {error}"
                ))
            }),
    }
}

/// How deep a call's arguments may nest (a model's JSON is far shallower; a dict holding
/// itself, or nesting thousands deep, would overflow the converter's stack).
pub const MAX_ARGUMENT_DEPTH: usize = 64;

/// Refuse arguments nested past [`MAX_ARGUMENT_DEPTH`] (which a cycle always is).
fn check_depth(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<()> {
    if depth > MAX_ARGUMENT_DEPTH {
        return Err(PyValueError::new_err(format!(
            "`args` nest deeper than {MAX_ARGUMENT_DEPTH} levels (or hold themselves); a tool call's arguments are plain JSON"
        )));
    }
    if let Ok(dict) = value.cast::<pyo3::types::PyDict>() {
        for (_, item) in dict.iter() {
            check_depth(&item, depth + 1)?;
        }
    } else if let Ok(list) = value.cast::<pyo3::types::PyList>() {
        for item in list.iter() {
            check_depth(&item, depth + 1)?;
        }
    } else if let Ok(tuple) = value.cast::<pyo3::types::PyTuple>() {
        for item in tuple.iter() {
            check_depth(&item, depth + 1)?;
        }
    }
    Ok(())
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
