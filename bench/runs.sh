#!/usr/bin/env bash
# Run load test: 200 concurrent `execute_skill` calls against a real `skillbox serve` (default
# sandbox), twice: with the default bounded queue (most calls get a clean busy error) and with a
# queue of 200 (every call runs). Also times one-at-a-time runs against a bare python3 call of
# the same function. Checks that every call is answered (completed or busy), no sandboxed
# process is left, memory stays bounded and the server exits 0 on SIGTERM.
#
#   bench/runs.sh
#
# Environment (optional): SKILLBOX_BIN (use this binary instead of building), RUNS_BENCH_CALLS
# (default 200, max 1000), RUNS_BENCH_SEQUENTIAL (default 30, max 500).
# Results: a markdown table on stdout and in bench/out/runs-results.md, raw JSON in
# bench/out/runs-results.json. Loopback only; every step is bounded in count and time.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'runs-bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=bench/common.sh
source bench/common.sh

calls="${RUNS_BENCH_CALLS:-200}"
sequential="${RUNS_BENCH_SEQUENTIAL:-30}"
[[ "$calls" =~ ^[0-9]+$ ]] && ((calls >= 1 && calls <= 1000)) || die "RUNS_BENCH_CALLS must be 1..1000"
[[ "$sequential" =~ ^[0-9]+$ ]] && ((sequential >= 1 && sequential <= 500)) || die "RUNS_BENCH_SEQUENTIAL must be 1..500"

binary="$(skillbox_binary "${SKILLBOX_BIN:-}")"
python="$(test_venv_python)"
mkdir -p bench/out

log "phase 1: $calls concurrent calls, default limits"
bounded="$("$python" bench/run_load.py "$binary" --calls "$calls" --label "default queue")" ||
    die "default-limits phase failed: $bounded"
log "phase 2: $calls concurrent calls, queue of $calls, plus $sequential one-at-a-time runs"
queued="$("$python" bench/run_load.py "$binary" --calls "$calls" --max-queued-runs "$calls" \
    --sequential "$sequential" --label "queue $calls")" || die "queued phase failed: $queued"

printf '[%s,%s]\n' "$bounded" "$queued" >bench/out/runs-results.json
"$python" - "$bounded" "$queued" <<'PY' | tee bench/out/runs-results.md
import json, sys
rows = [json.loads(arg) for arg in sys.argv[1:]]
print("| phase | calls | completed | busy (-32000) | other | runs/s | p50 ms | p99 ms | server RSS before → peak MiB | leftover processes |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['label']} | {r['calls']} | {r['completed']} | {r['busy']} | {r['other']} | {r['runs_per_s']} | "
          f"{r['completed_p50_ms']} | {r['completed_p99_ms']} | {r['server_rss_before_mib']} → {r['server_rss_peak_mib']} | "
          f"{r['leftover_children'] + r['leftover_sandbox_processes']} |")
s = rows[1]["sequential"]
print()
print(f"One at a time ({s['runs']} runs, medians): execute_skill round trip {s['execute_skill_median_ms']} ms, "
      f"bare `python3 -I` calling the same function {s['bare_python_median_ms']} ms: ratio {s['ratio']}x.")
PY
