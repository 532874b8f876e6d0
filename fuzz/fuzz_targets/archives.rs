//! Fuzz target: skill archives (the zip reader, the entry checks, lazy reads of every entry).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillbox_fuzz::archives(data));
