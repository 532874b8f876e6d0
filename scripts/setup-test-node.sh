#!/usr/bin/env bash
# Install (or reuse) the Node.js test peers: the MCP Inspector, pinned in
# scripts/test-node/package.json and package-lock.json.
#
#   scripts/setup-test-node.sh            -> prints the Inspector's launcher path on stdout
#
# Location: ${SKILLBOX_TEST_NODE:-<repo>/target/test-node}
# Node:     node and npm from PATH.
#
# Idempotent and safe to run concurrently: an exclusive flock on
# "<folder>.lock" serialises callers, and `npm ci` is skipped when
# "<folder>/.skillbox-stamp" holds the hash of package.json and
# package-lock.json plus the Node.js version (so changing a pin reinstalls
# from scratch). Install scripts are not run. Progress goes to stderr; stdout
# carries only the launcher path, so callers can do
# INSPECTOR="$(scripts/setup-test-node.sh)" and run `node "$INSPECTOR" --cli ...`.
set -euo pipefail

log() { printf 'setup-test-node: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source_folder="$repo/scripts/test-node"
folder="${SKILLBOX_TEST_NODE:-$repo/target/test-node}"
lock="${folder%/}.lock"
stamp="$folder/.skillbox-stamp"
lock_timeout="${SKILLBOX_TEST_NODE_LOCK_TIMEOUT:-900}"
launcher="$folder/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"

for file in package.json package-lock.json; do
    [[ -f "$source_folder/$file" ]] || die "not found: $source_folder/$file"
done
command -v flock >/dev/null 2>&1 || die "flock not found (install util-linux)"
command -v sha256sum >/dev/null 2>&1 || die "sha256sum not found (install coreutils)"
command -v node >/dev/null 2>&1 || die "node not found on PATH (install Node.js 20 or later)"
command -v npm >/dev/null 2>&1 || die "npm not found on PATH (install npm)"

node_version="$(node --version 2>/dev/null)" || die "'node --version' fails"

mkdir -p "$(dirname "$folder")"

# Serialise every caller on one lock; fd 9 stays open until this script exits.
exec 9>"$lock"
if ! flock -x -w "$lock_timeout" 9; then
    die "timed out after ${lock_timeout}s waiting for lock $lock"
fi

want="$({ printf 'node %s\n' "$node_version"; cat "$source_folder/package.json" \
    "$source_folder/package-lock.json"; } | sha256sum | cut -d' ' -f1)"

if [[ -f "$stamp" && -f "$launcher" && "$(cat "$stamp")" == "$want" ]]; then
    printf '%s\n' "$launcher"
    exit 0
fi

log "installing the pinned Node.js peers into $folder (node $node_version)"
rm -rf "$folder"
mkdir -p "$folder"
cp "$source_folder/package.json" "$source_folder/package-lock.json" "$folder/"
# --engine-strict=false: the Inspector asks for Node 22, and its CLI runs on Node 20 for what
# the tests use (the test fails loudly if it stops doing so).
if ! (cd "$folder" && npm ci --ignore-scripts --no-audit --no-fund --engine-strict=false \
        --loglevel=error >&2); then
    die "npm ci failed; is the npm registry reachable? (pins in $source_folder)"
fi
[[ -f "$launcher" ]] || die "the Inspector's launcher is missing after install: $launcher"

# Write the stamp atomically, and only after everything succeeded.
printf '%s\n' "$want" > "$stamp.tmp"
mv -f "$stamp.tmp" "$stamp"
log "ready: $launcher"
printf '%s\n' "$launcher"
