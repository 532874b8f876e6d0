//! The sandbox helper as a standalone binary (the `skillbox` binary also serves as its own
//! helper through a hidden subcommand). See `skillbox_exec::sandbox::helper`.

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    std::process::exit(skillbox_exec::sandbox::helper::run(&args));
}
