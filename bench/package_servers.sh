#!/usr/bin/env bash
# Package servers benchmark (issue 37): servers from npm and PyPI that `skillbox add` installed
# ahead, started by `load_skill` from skillbox's store in the sandbox, against the same servers
# started the way other agents start them (`npx -y @modelcontextprotocol/server-everything`,
# `uvx mcp-server-time@…`, warm caches), through the same MCP client (mcp 2.3.0, from the test
# venv), side by side in one run; then what `skillbox add` pays to install them (with and
# without the skill's `.mcp.json`, beside `npm install`, `pip install --target` and
# `uv tool install`), and what the digest check every start makes costs (`skillbox verify`).
#
#   bench/package_servers.sh
#
# Environment (all optional):
#   SKILLBOX_BIN                   use this skillbox binary instead of building it
#   PACKAGE_SERVERS_STARTS         starts per side and registry (default 10, 1..1000)
#   PACKAGE_SERVERS_ADDS           rounds of the add cases (default 3, 1..100)
#   PACKAGE_SERVERS_VERIFY_RUNS    `skillbox verify` runs per project (default 20, 1..1000)
#
# Needs node/npm/npx and python3 with pip on /usr/local/bin:/usr/bin:/bin, and the npm registry
# and PyPI (the caller's registry settings are used). uv (pinned below) is installed from PyPI
# into target/bench-uv-venv on first use. Without SKILLBOX_BIN it builds `skillbox` and the
# sandbox helper `skillbox-sandbox` beside it (release). Results: a markdown table on stdout,
# also bench/out/package-servers-results.md, every sample in
# bench/out/package-servers-results.json. A run takes about five minutes.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'package-servers-bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

# The uv that `uvx` and `uv tool install` come from.
uv_version="0.13.8"

starts=$(number PACKAGE_SERVERS_STARTS "${PACKAGE_SERVERS_STARTS:-10}" 1 1000)
adds=$(number PACKAGE_SERVERS_ADDS "${PACKAGE_SERVERS_ADDS:-3}" 1 100)
verify_runs=$(number PACKAGE_SERVERS_VERIFY_RUNS "${PACKAGE_SERVERS_VERIFY_RUNS:-20}" 1 1000)

system_path=/usr/local/bin:/usr/bin:/bin
for tool in node npm npx python3; do
    PATH=$system_path command -v "$tool" >/dev/null || die "no $tool in $system_path"
done

# A venv holding uv, rebuilt when the pin or the interpreter changes.
uv_venv() {
    local venv="$repo/target/bench-uv-venv" stamp want
    stamp="$venv/.skillbox-stamp"
    want="$(python3 --version) uv==$uv_version"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$venv/bin/uvx" ]]; then
        log "reusing $venv"
    else
        log "installing uv $uv_version into $venv"
        rm -f "$stamp"
        python3 -m venv --clear "$venv" >&2 || die "python3 -m venv failed"
        "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
            --timeout 30 --retries 3 "uv==$uv_version" >&2 ||
            die "pip install of uv failed; is PyPI reachable?"
        printf '%s\n' "$want" > "$stamp"
    fi
    [[ -x "$venv/bin/uv" && -x "$venv/bin/uvx" ]] || die "uv not installed in $venv"
    printf '%s\n' "$venv/bin"
}

binary="$(skillbox_binary_with_helper "${SKILLBOX_BIN:-}")"
client_python="$(test_venv_python)"
uv_bin="$(uv_venv)"

mkdir -p bench/out
log "measuring: $starts starts per side and registry, $adds add rounds, $verify_runs verify runs"
"$client_python" bench/package_servers_measure.py measure --skillbox "$binary" \
    --uv "$uv_bin/uv" --uvx "$uv_bin/uvx" --starts "$starts" --adds "$adds" \
    --verify "$verify_runs" --out bench/out || die "the measurement failed"
