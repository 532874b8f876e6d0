#!/usr/bin/env bash
# MCP benchmark: `skillbox mcp` against skillz (PyPI, the Python MCP server for skills) on the
# 11 skills of ../shared/corpus/anthropics, both over stdio and driven by the same Python MCP
# client (mcp 2.3.0, from the test venv), side by side in one run: spawn to the initialize
# answer, `tools/list` and `resources/read` latencies, a skill-loading tool call, idle RSS, and
# hyperfine of a one-shot client (spawn, initialize, list tools, exit).
#
#   bench/mcp.sh
#
# Environment (all optional):
#   SKILLBOX_BIN            use this skillbox binary instead of building it
#   MCP_BENCH_SPAWNS        spawns per server for the start-up median (default 20, 1..1000)
#   MCP_BENCH_CALLS         timed calls per request and server (default 500, 1..100000)
#   MCP_BENCH_ONESHOT_RUNS  hyperfine runs of the one-shot client per server (default 20)
#   MCP_BENCH_CORPUS        the skills folder (default ../shared/corpus/anthropics)
#
# skillz is installed, pinned with all its dependencies (bench/skillz-requirements.txt), into
# target/bench-skillz-venv on first use. Results: a markdown table on stdout, also
# bench/out/mcp-results.md, raw numbers in bench/out/mcp-results.json.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'mcp-bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

spawns=$(number MCP_BENCH_SPAWNS "${MCP_BENCH_SPAWNS:-20}" 1 1000)
calls=$(number MCP_BENCH_CALLS "${MCP_BENCH_CALLS:-500}" 1 100000)
oneshot_runs=$(number MCP_BENCH_ONESHOT_RUNS "${MCP_BENCH_ONESHOT_RUNS:-20}" 2 1000)
corpus="${MCP_BENCH_CORPUS:-../shared/corpus/anthropics}"
[[ -d "$corpus" ]] || die "skills folder not found: $corpus (set MCP_BENCH_CORPUS)"

# The venv with skillz, rebuilt when the pins or the interpreter change.
skillz_venv() {
    local venv="$repo/target/bench-skillz-venv" requirements="bench/skillz-requirements.txt"
    local stamp="$venv/.skillbox-stamp" want
    want="$({ python3 --version; cat "$requirements"; } | sha256sum | cut -d' ' -f1)"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$venv/bin/skillz" ]]; then
        log "reusing $venv"
    else
        log "installing skillz into $venv"
        rm -f "$stamp"
        python3 -m venv --clear "$venv" >&2 || die "python3 -m venv failed"
        "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
            --timeout 30 --retries 3 --ignore-requires-python --no-deps \
            -r "$requirements" >&2 || die "pip install of skillz failed; is PyPI reachable?"
        printf '%s\n' "$want" > "$stamp"
    fi
    [[ -x "$venv/bin/skillz" ]] || die "skillz not installed in $venv"
    printf '%s\n' "$venv/bin/skillz"
}

binary="$(skillbox_binary "${SKILLBOX_BIN:-}")"
client_python="$(test_venv_python)"
skillz="$(skillz_venv)"

mkdir -p bench/out
log "measuring: $spawns spawns, $calls calls, $oneshot_runs one-shot runs per server"
"$client_python" bench/mcp_measure.py measure --skillbox "$binary" --skillz "$skillz" \
    --corpus "$corpus" --spawns "$spawns" --calls "$calls" --hyperfine-runs "$oneshot_runs" \
    --out bench/out || die "the measurement failed"
