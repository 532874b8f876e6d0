#!/usr/bin/env bash
# Trust benchmark: what the trust check adds to one `skillbox run` and to a warm tool call. The
# same script of the same skill runs from a project's `.claude/skills` trusted with policy `pin`
# (the check reads the trust file and digests the skill's files, and the run starts from the
# skill's verified copy in the runtime folder's skill store), the same with the store emptied
# before each run (the copy is made in the run), and from the same folder named with `--root`
# (no check), interleaved, for a small skill (the csv-insights example) and a bulky one (1,000
# files, 10 MiB). Then a `tools.json` tool of a small skill and of the bulky one is called
# through `skillbox serve` (`execute_skill`), gated and not, interleaved.
#
#   bench/trust.sh
#
# Environment (optional): SKILLBOX_BIN (use this binary instead of building), TRUST_BENCH_RUNS
# (timed runs per case, default 40, max 500), TRUST_BENCH_CALLS (timed warm calls per case,
# default 200, max 5000).
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
calls="${TRUST_BENCH_CALLS:-200}"
[[ "$calls" =~ ^[0-9]+$ ]] && ((calls >= 1 && calls <= 5000)) ||
    die "TRUST_BENCH_CALLS must be 1..5000"

binary="$(skillbox_binary "${SKILLBOX_BIN:-}")"

mkdir -p bench/out
python3 bench/trust_measure.py --skillbox "$binary" --runs "$runs" --calls "$calls" --out bench/out \
    || die "the measurement failed"
