#!/usr/bin/env bash
# Execution benchmark: the overhead of a script run over starting the same interpreter
# directly (sandbox off and on), and warm-worker tool calls against spawning per call.
#
#   bench/exec.sh
#
# Environment (all optional):
#   EXEC_BENCH_BIN          use this benchmark binary instead of building it (it must sit next
#                           to, or one folder below, a `skillbox-sandbox` binary)
#   EXEC_BENCH_ITERATIONS   timed iterations per script case (default 60)
#   EXEC_BENCH_WARMUP       warm-up iterations per script case (default 5)
#   EXEC_BENCH_WARM_CALLS   warm-worker calls per handler (default 200)
#   EXEC_BENCH_SPAWN_CALLS  spawn-per-call calls per handler (default 40)
#   EXEC_BENCH_PATH         PATH the benchmark runs with, which decides the interpreters the
#                           executor picks (default /usr/local/bin:/usr/bin:/bin, so every mode
#                           uses the system python3/node/bash; pass "$PATH" to keep yours)
#   BENCH_ENFORCE=1         exit 3 when a target is missed
#
# Results: the markdown report and one JSON line on stdout; also bench/out/exec-results.md
# and bench/out/exec-results.json. Progress goes to stderr. Exits non-zero when any step fails.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'exec: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

out="bench/out"
mkdir -p "$out"

if [[ -n "${EXEC_BENCH_BIN:-}" ]]; then
    bin="$EXEC_BENCH_BIN"
    log "using EXEC_BENCH_BIN=$bin (no build)"
else
    log "building: cargo build --release -p skillbox-exec --bins --examples"
    cargo build --release -p skillbox-exec --bins --examples >&2 || die "cargo build failed"
    bin="$repo/target/release/examples/exec_overhead"
fi
[[ -x "$bin" ]] || die "benchmark binary not found or not executable: $bin"

raw="$out/exec-results.txt"
bench_path="${EXEC_BENCH_PATH:-/usr/local/bin:/usr/bin:/bin}"
log "running $bin (PATH=$bench_path)"
PATH="$bench_path" "$bin" >"$raw" || die "the benchmark failed (exit $?)"
grep -v '^{' "$raw" >"$out/exec-results.md" || die "the benchmark printed no report"
grep '^{' "$raw" | tail -n 1 >"$out/exec-results.json"
[[ -s "$out/exec-results.json" ]] || die "the benchmark printed no JSON line"
cat "$raw"
rm -f "$raw"

if [[ "${BENCH_ENFORCE:-0}" == 1 ]]; then
    python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["targets"]; sys.exit(0 if all(t.values()) else 3)' \
        "$out/exec-results.json" || { log "a target was missed"; exit 3; }
fi
