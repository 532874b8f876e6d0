//! One module per command, each with a `run` function: it asks `setup` for what it needs and
//! `output` to print the result.

pub mod ask;
pub mod author;
pub mod call;
pub mod chat;
pub mod doctor;
pub mod eval;
pub mod find;
pub mod install;
pub mod list;
pub mod mcp;
pub mod prompt;
pub mod run;
pub mod serve;
pub mod show;
pub mod tools;
pub mod trust;
pub mod validate;
