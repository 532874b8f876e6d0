//! `on_approval`: a Python callable asked before each call that runs code. It is given the
//! request as a dict (`tool`, `skill`, `arguments`, `summary`) and answers `True` to run it,
//! or `False` or a string (the reason) to refuse; it may be a coroutine function. A callable
//! that raises refuses the call, and the model is told why.

use std::future::Future;
use std::pin::Pin;

use pyo3::prelude::*;
use pyo3::types::PyString;
use skillbox::{Approval, ApprovalDecision, ApprovalRequest};

tokio::task_local! {
    /// Set while a call started by `ahandle_tool_call` runs: an awaitable answer is awaited on
    /// the caller's event loop then. A blocking call runs a coroutine answer to its end with
    /// `asyncio.run` on the calling thread instead.
    pub static IN_ASYNC_CALL: ();
}

/// The Python callable behind [`Approval`].
pub struct PythonApproval {
    callback: Py<PyAny>,
}

impl PythonApproval {
    pub fn new(callback: Py<PyAny>) -> Self {
        PythonApproval { callback }
    }
}

type Awaited = Pin<Box<dyn Future<Output = PyResult<Py<PyAny>>> + Send>>;

/// What calling the callback gave: an answer, or an awaitable to await first.
enum Reply {
    Now(ApprovalDecision),
    Later(Awaited),
}

#[async_trait::async_trait]
impl Approval for PythonApproval {
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalDecision {
        let in_async_call = IN_ASYNC_CALL.try_with(|()| ()).is_ok();
        let reply = Python::try_attach(|py| self.ask(py, request, in_async_call));
        match reply {
            None => refuse("the Python interpreter is shutting down".to_owned()),
            Some(Err(error)) => refuse(format!("on_approval raised {error}")),
            Some(Ok(Reply::Now(decision))) => decision,
            Some(Ok(Reply::Later(awaited))) => match awaited.await {
                Ok(answer) => {
                    Python::try_attach(|py| decision_of(answer.bind(py))).unwrap_or_else(|| {
                        refuse("the Python interpreter is shutting down".to_owned())
                    })
                }
                Err(error) => refuse(format!("on_approval raised {error}")),
            },
        }
    }
}

impl PythonApproval {
    fn ask(
        &self,
        py: Python<'_>,
        request: &ApprovalRequest,
        in_async_call: bool,
    ) -> PyResult<Reply> {
        let request = pythonize::pythonize(py, request)?;
        let answer = self.callback.call1(py, (request,))?;
        let answer = answer.bind(py);
        let inspect = py.import("inspect")?;
        if !inspect
            .call_method1("isawaitable", (answer,))?
            .is_truthy()?
        {
            return Ok(Reply::Now(decision_of(answer)));
        }
        if in_async_call {
            let awaited = pyo3_async_runtimes::tokio::into_future(answer.clone())?;
            return Ok(Reply::Later(Box::pin(awaited)));
        }
        // A blocking call: no event loop of ours to await on. asyncio.run refuses inside a
        // running loop, which the message below turns into advice.
        let asyncio = py.import("asyncio")?;
        match asyncio.call_method1("run", (answer,)) {
            Ok(result) => Ok(Reply::Now(decision_of(&result))),
            Err(error) => {
                // The coroutine was never awaited; close it so Python does not warn.
                let _ = answer.call_method0("close");
                Ok(Reply::Now(refuse(format!(
                    "an async on_approval cannot be awaited by the blocking handle_tool_call here ({error}); call ahandle_tool_call from async code"
                ))))
            }
        }
    }
}

/// `True` runs the call; a string refuses with that reason; anything else refuses (a truthy
/// dict or object is not a yes).
fn decision_of(answer: &Bound<'_, PyAny>) -> ApprovalDecision {
    if let Ok(reason) = answer.cast::<PyString>() {
        return refuse(reason.to_string());
    }
    match answer.cast::<pyo3::types::PyBool>() {
        Ok(yes) if yes.is_true() => ApprovalDecision::Approve,
        Ok(_) => refuse("on_approval refused it".to_owned()),
        Err(_) => refuse(format!(
            "on_approval answered {}, not True (run) or False or a reason (refuse)",
            answer
                .get_type()
                .name()
                .map_or_else(|_| "a value".to_owned(), |name| format!("a {name}"))
        )),
    }
}

fn refuse(reason: String) -> ApprovalDecision {
    ApprovalDecision::Deny { reason }
}
