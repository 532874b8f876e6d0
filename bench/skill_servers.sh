#!/usr/bin/env bash
# Skill servers benchmark (issue 27): a skill's MCP server started by `load_skill`, against the
# same server (a Python SDK server, `python3 server.py`) spawned and called directly by the same
# MCP client (mcp 2.3.0, from the test venv), side by side in one run: cold starts (a new
# `skillbox mcp` per sample), warm loads (`skillbox serve`, a second /mcp session loading what
# the first holds), tool calls through skillbox against direct calls, and hyperfine of one-shot
# clients. After each part it checks that no server process is left.
#
#   bench/skill_servers.sh
#
# Environment (all optional):
#   SKILLBOX_BIN                  use this skillbox binary instead of building it
#   SKILL_SERVERS_COLD            cold starts per side (default 10, 1..1000)
#   SKILL_SERVERS_WARM_ROUNDS     /mcp rounds: session A's cold load, then B's (default 5)
#   SKILL_SERVERS_WARM_SESSIONS   B sessions per round, each loading what A holds (default 10)
#   SKILL_SERVERS_CALLS           timed tool calls per side (default 300, 1..100000)
#   SKILL_SERVERS_ONESHOT_RUNS    hyperfine runs of each one-shot client (default 20)
#
# Without SKILLBOX_BIN it builds `skillbox` and the sandbox helper `skillbox-sandbox` beside it
# (release). The skill ships the SDK in vendor/ (scripts/setup-test-mcp-vendor.sh). Results: a
# markdown table on stdout, also bench/out/skill-servers-results.md, every sample in
# bench/out/skill-servers-results.json, hyperfine's exports in
# bench/out/skill-servers-hyperfine-{1..4}.json. A run takes about two minutes.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'skill-servers-bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

cold=$(number SKILL_SERVERS_COLD "${SKILL_SERVERS_COLD:-10}" 1 1000)
warm_rounds=$(number SKILL_SERVERS_WARM_ROUNDS "${SKILL_SERVERS_WARM_ROUNDS:-5}" 1 100)
warm_sessions=$(number SKILL_SERVERS_WARM_SESSIONS "${SKILL_SERVERS_WARM_SESSIONS:-10}" 1 1000)
calls=$(number SKILL_SERVERS_CALLS "${SKILL_SERVERS_CALLS:-300}" 1 100000)
oneshot_runs=$(number SKILL_SERVERS_ONESHOT_RUNS "${SKILL_SERVERS_ONESHOT_RUNS:-20}" 2 1000)

binary="$(skillbox_binary_with_helper "${SKILLBOX_BIN:-}")"
client_python="$(test_venv_python)"
vendor="$(bash scripts/setup-test-mcp-vendor.sh)" || die "scripts/setup-test-mcp-vendor.sh failed"
[[ -d "$vendor/mcp" ]] || die "the MCP SDK is not in $vendor"
# The direct server runs with the python3 the sandbox finds on the same PATH (the system one).
server_python="$(PATH=/usr/local/bin:/usr/bin:/bin command -v python3)" ||
    die "no python3 in /usr/local/bin:/usr/bin:/bin"

mkdir -p bench/out
log "measuring: $cold cold starts, $warm_rounds x $warm_sessions warm loads, $calls calls," \
    "$oneshot_runs one-shot runs per side"
"$client_python" bench/skill_servers_measure.py measure --skillbox "$binary" \
    --python "$server_python" --vendor "$vendor" --cold "$cold" --warm-rounds "$warm_rounds" \
    --warm-sessions "$warm_sessions" --calls "$calls" --oneshot-runs "$oneshot_runs" \
    --out bench/out || die "the measurement failed"
