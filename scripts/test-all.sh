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

echo "== the Python binding (pytest)"
bash scripts/test-python.sh

echo "== the Node binding (node:test)"
bash scripts/test-node-binding.sh
