//! Integration tests for the LLM surface over the bundled examples and a corpus of varied
//! skills written for the tests.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod dispatch;
mod find_skills;
mod formats;
mod hostile;
mod live;
mod results;
mod services;
mod skills_ref_prompt;
mod support;
