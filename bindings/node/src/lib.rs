//! The N-API addon behind the Node package `skillbox`: the facade's provider as a JavaScript
//! class. It converts values, errors and promises and nothing more; every call goes through
//! `skillbox::Provider` and so the door policy. The package's `index.js` wraps it with seed
//! 002's names (`createSkillsProvider`) and the framework adapters.

// Under `cfg(test)` napi-derive registers nothing, so the exported items look unused there.
#![cfg_attr(test, allow(dead_code))]

mod approval;
mod provider;
