#!/usr/bin/env bash
# Scale-out benchmark (issue 14): `list_skills` and `read_blob` throughput against one
# `skillbox serve` and against two replicas sharing one bucket of an S3-compatible server
# (moto, from the test venv), in one run, with the load generator of bench/server.sh.
#
#   bench/replicas.sh
#
# Environment (all optional):
#   SKILLBOX_BIN                 use this skillbox binary instead of building it (release, with
#                                the object-storage feature)
#   LOADGEN_BIN                  use this skillbox-loadgen binary instead of building bench/loadgen
#   REPLICAS_BENCH_DURATION      seconds of measured load per row (default 10, max 300)
#   REPLICAS_BENCH_CONNECTIONS   keep-alive connections in all (default 64)
#
# Results: a markdown table on stdout, the raw numbers in bench/out/replicas-results.json.
# Progress goes to stderr. All traffic goes to 127.0.0.1.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'replicas-bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

out="bench/out"
mkdir -p "$out"
rm -rf "$out/replicas-work"
duration=$(number REPLICAS_BENCH_DURATION "${REPLICAS_BENCH_DURATION:-10}" 1 300)
connections=$(number REPLICAS_BENCH_CONNECTIONS "${REPLICAS_BENCH_CONNECTIONS:-64}" 2 1024)

bin="$(skillbox_binary "${SKILLBOX_BIN:-}" object-storage)"
loadgen="$(loadgen_binary "${LOADGEN_BIN:-}")"
python="$(test_venv_python)"
moto_server="$(dirname "$python")/moto_server"
[[ -x "$moto_server" ]] || die "moto_server is missing from the test venv (scripts/test-requirements.txt)"

python3 bench/replicas_measure.py "$bin" "$loadgen" "$moto_server" \
    --duration "$duration" --connections "$connections" | tee "$out/replicas-results.md"
