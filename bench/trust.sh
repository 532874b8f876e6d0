#!/usr/bin/env bash
# Trust benchmark: what the trust check adds to one `skillbox run`. The same script of the same
# skill runs from a project's `.claude/skills` trusted with policy `pin` (the check reads the
# trust file and digests the skill's files) and from the same folder named with `--root` (no
# check), interleaved, for a small skill (the csv-insights example) and a bulky one (1,000 files,
# 10 MiB).
#
#   bench/trust.sh
#
# Environment (optional): SKILLBOX_BIN (use this binary instead of building), TRUST_BENCH_RUNS
# (timed runs per case, default 40, max 500).
# Results: a markdown table on stdout and in bench/out/trust-results.md, raw JSON in
# bench/out/trust-results.json.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'trust-bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

runs="${TRUST_BENCH_RUNS:-40}"
[[ "$runs" =~ ^[0-9]+$ ]] && ((runs >= 1 && runs <= 500)) || die "TRUST_BENCH_RUNS must be 1..500"

binary="$(skillbox_binary "${SKILLBOX_BIN:-}")"

mkdir -p bench/out
python3 bench/trust_measure.py --skillbox "$binary" --runs "$runs" --out bench/out \
    || die "the measurement failed"
