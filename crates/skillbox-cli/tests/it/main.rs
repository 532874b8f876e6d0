//! Integration tests for the `skillbox` binary: one test binary, one module per area.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod agent;
mod archives;
mod attacks_catalog;
mod attacks_round3;
mod author;
mod authoring_attacks;
mod discovery;
mod eval;
mod execute;
mod find;
mod hostile_catalog;
mod install;
mod install_attacks;
mod install_project;
mod list_and_show;
mod local_model;
mod mcp;
mod metrics;
mod one_way_in;
mod replicas;
mod scale_attacks;
mod search_attacks;
mod serve;
mod serve_hostile;
mod serve_runs;
mod skill_servers;
mod skills_ref_parity;
mod support;
mod trust;
mod validate;
mod web;
mod web_attacks;
mod web_browser;
mod web_evals;
mod web_evals_attacks;
