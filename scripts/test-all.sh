#!/usr/bin/env bash
# The whole test suite, the README's one test command: the Rust workspace, then the Python
# binding's pytest suite (which builds the wheel into the same target folder, reusing what
# `cargo test` built). Arguments go to `cargo test`.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

echo "== cargo test --workspace"
cargo test --workspace "$@"

echo "== the Python binding (pytest)"
bash scripts/test-python.sh
