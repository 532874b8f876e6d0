#!/usr/bin/env bash
# The Node binding's test suite: build the addon, the `skillbox` command and the sandbox helper
# into bindings/node (bindings/node/build.sh, with the dev profile by default: the artifacts
# `cargo test` built are reused), install its pinned dev dependencies (`ai`,
# `@ai-sdk/openai-compatible`) from bindings/node/package-lock.json, and run node:test.
#
#   scripts/test-node-binding.sh [node --test arguments...]
#
# Profile: ${SKILLBOX_ADDON_PROFILE:-dev}. Runs cargo itself, so never call it from inside
# `cargo test` (cargo's build lock).
set -euo pipefail

log() { printf 'test-node-binding: %s\n' "$*" >&2; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
package="$repo/bindings/node"
stamp="$package/node_modules/.skillbox-stamp"

log "building the addon (profile ${SKILLBOX_ADDON_PROFILE:-dev})"
bash "$package/build.sh" "${SKILLBOX_ADDON_PROFILE:-dev}"

want="$({ node --version; cat "$package/package-lock.json"; } | sha256sum | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    log "installing the pinned dev dependencies (npm ci)"
    (cd "$package" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2)
    printf '%s\n' "$want" > "$stamp"
fi

log "node --test"
cd "$package"
exec node --test "$@" test/provider.test.mjs test/sandbox.test.mjs test/one-way-in.test.mjs test/hostile.test.mjs test/ai-sdk.test.mjs test/openrouter.test.mjs
