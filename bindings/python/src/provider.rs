//! `_native.Provider` and `_native.open`: skill roots opened with seed 002's options and the
//! command line's, answering tool calls blocking (the GIL released) or as asyncio awaitables.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use skillbox::{Door, FindSkillsOffer, Options, TrustRule};

use crate::SkillboxError;
use crate::approval::{IN_ASYNC_CALL, PythonApproval};
use crate::session::Session;
use crate::values::{answer, arguments, python_value, tool_format};

/// Skill roots opened for a model.
#[pyclass(frozen, module = "skillbox._native")]
pub struct Provider {
    pub(crate) inner: skillbox::Provider,
}

/// Open `skills_dir` (a folder, or a list of folders lowest precedence first).
#[pyfunction]
#[pyo3(signature = (
    skills_dir, *, include=None, exclude=None, timeout=30000, max_output=20480, cwd=None,
    sandbox="best-effort", sandbox_helper=None, allow_network=false, allow_network_for=None,
    secrets=None, pass_env=None, on_approval=None, trust="roots", find_skills="auto",
    max_prompt_chars=None, audit_log=None, runtime_dir=None, max_runs=None
))]
#[allow(clippy::too_many_arguments)]
pub fn open(
    py: Python<'_>,
    skills_dir: &Bound<'_, PyAny>,
    include: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
    timeout: u64,
    max_output: usize,
    cwd: Option<PathBuf>,
    sandbox: &str,
    sandbox_helper: Option<PathBuf>,
    allow_network: bool,
    allow_network_for: Option<Vec<String>>,
    secrets: Option<&Bound<'_, PyDict>>,
    pass_env: Option<Vec<String>>,
    on_approval: Option<Py<PyAny>>,
    trust: &str,
    find_skills: &str,
    max_prompt_chars: Option<usize>,
    audit_log: Option<PathBuf>,
    runtime_dir: Option<PathBuf>,
    max_runs: Option<usize>,
) -> PyResult<Provider> {
    let roots: Vec<PathBuf> = if skills_dir.is_instance_of::<PyString>() {
        vec![skills_dir.extract()?]
    } else {
        match skills_dir.extract::<PathBuf>() {
            Ok(root) => vec![root],
            Err(_) => skills_dir.extract::<Vec<PathBuf>>().map_err(|_| {
                PyValueError::new_err(
                    "`skills_dir` must be a path or a list of paths (folders of skills)",
                )
            })?,
        }
    };
    let mut options = Options::new(roots)
        .include(include.unwrap_or_default())
        .exclude(exclude.unwrap_or_default())
        .timeout(Duration::from_millis(timeout))
        .max_output_bytes(max_output)
        .sandbox(skillbox::parse_sandbox_mode(sandbox).ok_or_else(|| {
            PyValueError::new_err(format!(
                "`sandbox` must be \"best-effort\", \"required\" or \"off\", not {sandbox:?}"
            ))
        })?)
        .allow_network(allow_network)
        .allow_network_for(allow_network_for.unwrap_or_default())
        .pass_env(pass_env.unwrap_or_default())
        .trust(TrustRule::parse(trust).ok_or_else(|| {
            PyValueError::new_err(format!(
                "`trust` must be \"roots\" or \"all\", not {trust:?}"
            ))
        })?)
        .find_skills(FindSkillsOffer::parse(find_skills).ok_or_else(|| {
            PyValueError::new_err(format!(
                "`find_skills` must be \"auto\", \"always\" or \"never\", not {find_skills:?}"
            ))
        })?)
        .door(Door::Python);
    if let Some(folder) = cwd {
        options = options.working_directory(folder);
    }
    if let Some(helper) = sandbox_helper {
        options = options.sandbox_helper(helper);
    }
    if let Some(secrets) = secrets {
        for (name, given) in secrets.iter() {
            let name: String = name.extract().map_err(|_| {
                PyValueError::new_err("`secrets` keys must be variable names (str)")
            })?;
            let (value, skills) = secret_grant(&name, &given)?;
            options = options.secret(name, value, skills);
        }
    }
    if let Some(callback) = on_approval {
        if !callback.bind(py).is_callable() {
            return Err(PyValueError::new_err(
                "`on_approval` must be a callable taking the request (a dict) and answering True or False",
            ));
        }
        options = options.approval(Arc::new(PythonApproval::new(callback)));
    }
    if let Some(chars) = max_prompt_chars {
        options = options.max_prompt_chars(chars);
    }
    if let Some(file) = audit_log {
        options = options.audit_log(file);
    }
    if let Some(folder) = runtime_dir {
        options = options.runtime_directory(folder);
    }
    if let Some(runs) = max_runs {
        options = options.max_runs(runs);
    }
    let inner = py
        .detach(|| skillbox::Provider::open(options))
        .map_err(|error| SkillboxError::new_err(error.to_string()))?;
    Ok(Provider { inner })
}

/// `secrets[name]`: a value for every skill declaring it, or `{"value": ..., "skills": [...]}`.
fn secret_grant(
    name: &str,
    given: &Bound<'_, PyAny>,
) -> PyResult<(String, Option<BTreeSet<String>>)> {
    if let Ok(value) = given.extract::<String>() {
        return Ok((value, None));
    }
    let problem = || {
        PyValueError::new_err(format!(
            "`secrets[{name:?}]` must be a str (for every skill that declares it) or a dict {{\"value\": str, \"skills\": [names]}}"
        ))
    };
    let grant = given.cast::<PyDict>().map_err(|_| problem())?;
    let value: String = grant
        .get_item("value")?
        .ok_or_else(problem)?
        .extract()
        .map_err(|_| problem())?;
    let skills: Option<BTreeSet<String>> = match grant.get_item("skills")? {
        None => None,
        Some(skills) => Some(skills.extract().map_err(|_| problem())?),
    };
    Ok((value, skills))
}

#[pymethods]
impl Provider {
    /// The system-prompt section listing the skills (seed 002's markdown).
    #[getter]
    fn system_prompt(&self) -> &str {
        self.inner.system_prompt()
    }

    /// The names of the skills a model may see, sorted.
    #[getter]
    fn skill_names(&self) -> Vec<String> {
        self.inner.skill_names()
    }

    /// What was found wrong while opening.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings().to_vec()
    }

    /// The tool definitions in `format`.
    fn tools_for(&self, py: Python<'_>, format: &str) -> PyResult<Py<PyAny>> {
        let format = tool_format(format)?;
        python_value(py, &self.inner.tools(format))
    }

    /// Answer a tool call, blocking this thread (not others: the GIL is released).
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

    /// Answer a tool call as an awaitable of the running event loop.
    #[pyo3(signature = (name, args=None))]
    fn ahandle_tool_call<'py>(
        &self,
        py: Python<'py>,
        name: String,
        args: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arguments = arguments(args)?;
        let provider = self.inner.clone();
        pyo3_async_runtimes::tokio::future_into_py(
            py,
            IN_ASYNC_CALL.scope((), async move {
                let outcome = provider.call_with(&name, arguments.as_arguments()).await;
                Python::attach(|py| answer(py, outcome))
            }),
        )
    }

    /// A conversation: its active skill, and the servers its loaded skills start.
    #[pyo3(signature = (enforce_allowed_tools=false))]
    fn session(&self, enforce_allowed_tools: bool) -> Session {
        Session::new(self.inner.session(enforce_allowed_tools))
    }
}
