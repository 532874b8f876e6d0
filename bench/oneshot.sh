#!/usr/bin/env bash
# One-shot command benchmark: `skillbox run SKILL SCRIPT` as a whole process, side by side with
# running the same script with the same interpreter directly (issue 9's "within 10 ms" target).
#
#   bench/oneshot.sh
#
# Environment (all optional):
#   ONESHOT_BENCH_BIN         use this skillbox binary instead of building it (or SKILLBOX_BIN)
#   ONESHOT_BENCH_ITERATIONS  timed iterations per case (default 40)
#   ONESHOT_BENCH_WARMUP      warm-up iterations per case (default 5)
#   ONESHOT_BENCH_PATH        PATH for every case (default /usr/local/bin:/usr/bin:/bin)
#
# Results: the markdown table and one JSON line on stdout; also bench/out/oneshot-results.md.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'oneshot: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

mkdir -p bench/out
bin="$(skillbox_binary "${ONESHOT_BENCH_BIN:-${SKILLBOX_BIN:-}}")"

python3 bench/oneshot.py "$bin" \
    --iterations "${ONESHOT_BENCH_ITERATIONS:-40}" \
    --warmup "${ONESHOT_BENCH_WARMUP:-5}" | tee bench/out/oneshot-results.md
