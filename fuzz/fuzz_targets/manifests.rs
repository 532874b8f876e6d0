//! Fuzz target: `tools.json` and `skill.toml` parsers on UTF-8 text.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillbox_fuzz::manifests(data));
