#!/usr/bin/env bash
# Build the addon and the binaries the package carries into this folder:
#   skillbox.linux-x64-gnu.node   the addon (crate skillbox-node)
#   bin/skillbox, bin/skillbox-sandbox   the command and the sandbox helper the addon uses
#
#   bash build.sh [release|dev]      (default release)
#
# cargo builds into the workspace's target folder (CARGO_TARGET_DIR is honoured), sharing the
# artifacts of `cargo build` and `cargo test` of the same profile. SKILLBOX_PREBUILT_BINARIES
# names a folder holding both binaries already built (the test command passes the ones
# `cargo test --workspace` built); only the addon is built then.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
profile="${1:-release}"
cd "$here"
if [[ -n "${SKILLBOX_PREBUILT_BINARIES:-}" ]]; then
    cargo build --locked --profile "$profile" -p skillbox-node >&2
else
    # Two builds: `--bin` selects targets across every package named, so one command with
    # `-p skillbox-node` and `--bin` flags would leave the addon (a library) unbuilt.
    cargo build --locked --profile "$profile" -p skillbox-node >&2
    cargo build --locked --profile "$profile" \
        -p skillbox-cli --bin skillbox -p skillbox-exec --bin skillbox-sandbox >&2
fi
target="$(cargo metadata --format-version 1 --no-deps \
    | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')"
case "$profile" in dev|test) built="$target/debug" ;; *) built="$target/$profile" ;; esac
install -m 0755 "$built/libskillbox_node.so" "$here/skillbox.linux-x64-gnu.node"
mkdir -p "$here/bin"
binaries="${SKILLBOX_PREBUILT_BINARIES:-$built}"
install -m 0755 "$binaries/skillbox" "$here/bin/skillbox"
install -m 0755 "$binaries/skillbox-sandbox" "$here/bin/skillbox-sandbox"
echo "built: $here/skillbox.linux-x64-gnu.node, $here/bin/ ($profile)" >&2
