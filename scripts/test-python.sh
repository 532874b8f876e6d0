#!/usr/bin/env bash
# The Python binding's test suite: build the `skillbox` wheel (the extension, the `skillbox`
# command and the sandbox helper) into the workspace's target folder, install it into its own
# venv with the frameworks it is tested against, and run pytest.
#
#   scripts/test-python.sh [pytest arguments...]
#
# Venv:    ${SKILLBOX_PYTHON_BINDING_VENV:-<target>/python-binding-venv}, pins in
#          bindings/python/requirements-test.txt, set up by scripts/setup-test-venv.sh
# Profile: ${SKILLBOX_WHEEL_PROFILE:-dev}: the dev profile reuses what `cargo test` built.
#
# Runs cargo itself, so never call it from inside `cargo test` (cargo's build lock).
set -euo pipefail

log() { printf 'test-python: %s\n' "$*" >&2; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="$(cd "$repo" && cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
venv="${SKILLBOX_PYTHON_BINDING_VENV:-$target/python-binding-venv}"

python="$(SKILLBOX_TEST_REQUIREMENTS="$repo/bindings/python/requirements-test.txt" \
    SKILLBOX_TEST_VENV="$venv" \
    SKILLBOX_TEST_IMPORTS="agents, pydantic_ai, langchain_core, langchain.agents, langchain_openai, pytest, pytest_asyncio, maturin" \
    bash "$repo/scripts/setup-test-venv.sh")"

wheels="$target/python-binding-wheels"
rm -rf "$wheels"
mkdir -p "$wheels"
log "building the wheel (profile ${SKILLBOX_WHEEL_PROFILE:-dev})"
# The venv's maturin builds it (no isolated build env to fetch), with the venv's interpreter.
export PATH="$(dirname "$python"):$PATH"
SKILLBOX_WHEEL_PROFILE="${SKILLBOX_WHEEL_PROFILE:-dev}" "$python" -m pip wheel \
    --disable-pip-version-check --no-build-isolation --no-deps --quiet \
    --wheel-dir "$wheels" "$repo/bindings/python" >&2
"$python" -m pip install --disable-pip-version-check --force-reinstall --no-deps --quiet \
    "$wheels"/skillbox-*.whl >&2

log "pytest"
cd "$repo/bindings/python"
# From the package's own folder, `import skillbox` must find the installed wheel, not the
# sources (which hold no extension): -P keeps the working folder off sys.path.
exec "$python" -P -m pytest -p no:cacheprovider "$@"
