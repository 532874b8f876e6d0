#!/usr/bin/env bash
# Install (or reuse) the Python packages test skills ship to run their MCP servers in the
# sandbox: the sandbox sees the system's Python and the skill's folder only, so a skill's
# server brings its packages in the folder, as `pip install --target` lays them out.
#
#   scripts/setup-test-mcp-vendor.sh      -> prints the packages' folder on stdout
#
# Location: ${SKILLBOX_TEST_MCP_VENDOR:-<repo>/target/test-mcp-vendor}
# Contents: scripts/mcp-server-requirements.txt, installed with the system python3's pip
#           (from the test venv, which scripts/setup-test-venv.sh makes), for that python.
# Idempotent and safe to run concurrently (flock on "<folder>.lock"; a stamp holds the hash
# of the requirements and the interpreter version).
set -euo pipefail

log() { printf 'setup-test-mcp-vendor: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
req="$repo/scripts/mcp-server-requirements.txt"
target="${SKILLBOX_TEST_MCP_VENDOR:-$repo/target/test-mcp-vendor}"
lock="${target%/}.lock"
stamp="$target/.skillbox-stamp"

venv_python="$(bash "$repo/scripts/setup-test-venv.sh")" || die "the test venv could not be set up"
py_version="$(python3 -c 'import sys; print(sys.version.split()[0])')" || die "python3 does not run"

mkdir -p "$(dirname "$target")"
exec 9>"$lock"
flock -x -w 900 9 || die "timed out waiting for lock $lock"

want="$({ printf 'python %s\n' "$py_version"; cat "$req"; } | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    printf '%s\n' "$target"
    exit 0
fi

log "installing $req into $target"
rm -rf "$target.tmp"
"$venv_python" -m pip install --disable-pip-version-check --no-input --quiet \
    --timeout 30 --retries 3 --target "$target.tmp" -r "$req" >&2 \
    || die "pip install failed; is PyPI reachable? (pins in $req)"
PYTHONPATH="$target.tmp" python3 -c 'import mcp.server.mcpserver, mcp_server_time' >&2 \
    || die "the installed packages do not import with the system python3"
printf '%s\n' "$want" > "$target.tmp/.skillbox-stamp"
rm -rf "$target"
mv "$target.tmp" "$target"
log "ready: $target"
printf '%s\n' "$target"
