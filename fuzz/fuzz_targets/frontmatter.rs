//! Fuzz target: `SKILL.md` heads as raw bytes (invalid UTF-8 included).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillbox_fuzz::frontmatter(data));
