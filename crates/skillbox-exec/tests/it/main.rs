//! Integration tests for the execution engine: the real sandbox helper, real interpreters.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod attacks;
mod handlers;
mod python_runs;
mod scripts;
mod support;
mod trust;
