//! Link settings for the `skillbox` binary.
//!
//! On Linux the binary's relative relocations are packed (`DT_RELR`): a position-independent
//! binary of this size holds about 120,000 of them, and reading their 2.8 MB table made most of
//! the page faults of a start-up (`skillbox --version`). GNU ld 2.38+ and lld pack them only
//! when the C library linked against can read them (glibc 2.36+), and older linkers warn and
//! ignore the option, so a binary built on a machine runs there.
//!
//! Release builds linked by lld also fold identical functions into one (`--icf=all`): the
//! same generic code instantiated in several crates is kept once, about 2 MB of the binary.
//! Rust promises nothing about two functions' addresses, so nothing can tell. Only rustc's own
//! lld takes the option (GNU ld refuses it), so it is passed only where rustc links with it by
//! default: Linux on x86-64 with glibc, rustc 1.90 or later, and no linker chosen in the flags.

use std::process::Command;

/// The first rustc that links `x86_64-unknown-linux-gnu` with its own lld by default.
const RUSTC_WITH_LLD_BY_DEFAULT: (u32, u32) = (1, 90);

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let target_arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if target_os == "linux" && target_env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
        let release = std::env::var("PROFILE").is_ok_and(|profile| profile == "release");
        if release && target_arch == "x86_64" && links_with_rust_lld() {
            println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
}

/// Whether rustc links this build with its own lld: a recent enough rustc, and no linker or
/// linker features named in the flags.
fn links_with_rust_lld() -> bool {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags.contains("linker") || flags.contains("link-self-contained") {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let Ok(output) = Command::new(rustc).arg("--version").output() else {
        return false;
    };
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let text = String::from_utf8_lossy(&output.stdout);
    let mut numbers = text
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .split(['.', '-'])
        .map(|part| part.parse::<u32>().unwrap_or(0));
    let major = numbers.next().unwrap_or(0);
    let minor = numbers.next().unwrap_or(0);
    (major, minor) >= RUSTC_WITH_LLD_BY_DEFAULT
}
