#!/usr/bin/env bash
# The whole test suite, the README's one test command: the Rust workspace, then the Python
# binding's pytest suite and the Node binding's node:test suite (each builds its package from
# the same target folder with the dev profile, reusing what `cargo test` built). Arguments go
# to `cargo test`.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

echo "== cargo test --workspace"
cargo test --workspace "$@"

# The packages carry the `skillbox` and `skillbox-sandbox` binaries `cargo test` just built for
# the CLI's and the executor's tests: a separate `cargo build` of them would resolve other
# features and build much of the stack again.
target="$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
export SKILLBOX_PREBUILT_BINARIES="$target/debug"

echo "== the Python binding (pytest)"
bash scripts/test-python.sh

echo "== the Node binding (node:test)"
bash scripts/test-node-binding.sh
