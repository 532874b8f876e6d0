//! `skillbox._native`: the facade's provider as Python objects. It converts values, errors and
//! async and nothing more; every call goes through `skillbox::Provider` and so the door
//! policy, with the GIL released while skillbox works. The package `skillbox` (Python code in
//! `python/skillbox/`) wraps it with seed 002's names and the framework adapters.

mod approval;
mod provider;
mod session;
mod values;

use pyo3::prelude::*;

pyo3::create_exception!(
    _native,
    SkillboxError,
    pyo3::exceptions::PyException,
    "Skill roots could not be opened: a root is missing, the sandbox cannot be set up, or an option is wrong."
);

/// The module: one runtime shared by blocking and async calls (the facade's), so a provider's
/// run queue, skill servers and warm workers are the same whichever way Python calls.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let runtime = skillbox::shared_runtime().map_err(|error| {
        SkillboxError::new_err(format!(
            "the runtime that answers calls could not start: {error}"
        ))
    })?;
    // Already set when the module is imported a second time (a sub-interpreter): keep it.
    let _ = pyo3_async_runtimes::tokio::init_with_runtime(runtime);
    module.add("SkillboxError", module.py().get_type::<SkillboxError>())?;
    module.add_class::<provider::Provider>()?;
    module.add_class::<session::Session>()?;
    module.add_function(wrap_pyfunction!(provider::open, module)?)?;
    Ok(())
}
