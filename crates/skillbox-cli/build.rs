//! Link settings for the `skillbox` binary.
//!
//! On Linux the binary's relative relocations are packed (`DT_RELR`): a position-independent
//! binary of this size holds about 120,000 of them, and reading their 2.8 MB table made most of
//! the page faults of a start-up (`skillbox --version`). GNU ld 2.38+ and lld pack them only
//! when the C library linked against can read them (glibc 2.36+), and older linkers warn and
//! ignore the option, so a binary built on a machine runs there.

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if target_os == "linux" && target_env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
