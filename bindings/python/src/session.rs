//! `_native.Session`: one conversation over a provider (see `skillbox::Session`).

use std::sync::Arc;

use pyo3::prelude::*;

use crate::approval::IN_ASYNC_CALL;
use crate::values::{answer, arguments, python_value, tool_format};

/// A conversation's active skill and skill servers.
#[pyclass(frozen, module = "skillbox._native")]
pub struct Session {
    inner: Arc<skillbox::Session>,
}

impl Session {
    pub fn new(inner: skillbox::Session) -> Self {
        Session {
            inner: Arc::new(inner),
        }
    }
}

#[pymethods]
impl Session {
    /// The skill loaded last.
    #[getter]
    fn active_skill(&self) -> Option<String> {
        self.inner.active_skill()
    }

    /// The active skill's `model` override.
    #[getter]
    fn model_override(&self) -> Option<String> {
        self.inner.model_override()
    }

    /// The active skill's `allowed-tools`, when it declares any.
    #[getter]
    fn allowed_tools(&self) -> Option<Vec<String>> {
        self.inner.allowed_tools()
    }

    /// The tools offered now (with those of the servers loaded skills started), in `format`.
    fn tools_for(&self, py: Python<'_>, format: &str) -> PyResult<Py<PyAny>> {
        let format = tool_format(format)?;
        python_value(py, &self.inner.tools(format))
    }

    /// Answer a tool call within the conversation, blocking this thread.
    #[pyo3(signature = (name, args=None))]
    fn handle_tool_call(
        &self,
        py: Python<'_>,
        name: &str,
        args: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let arguments = arguments(args)?;
        let outcome = py.detach(|| {
            self.inner
                .call_blocking_with(name, arguments.as_arguments())
        });
        answer(py, outcome)
    }

    /// Answer a tool call within the conversation, as an awaitable.
    #[pyo3(signature = (name, args=None))]
    fn ahandle_tool_call<'py>(
        &self,
        py: Python<'py>,
        name: String,
        args: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arguments = arguments(args)?;
        let session = Arc::clone(&self.inner);
        pyo3_async_runtimes::tokio::future_into_py(
            py,
            IN_ASYNC_CALL.scope((), async move {
                let outcome = session.call_with(&name, arguments.as_arguments()).await;
                Python::attach(|py| answer(py, outcome))
            }),
        )
    }
}
