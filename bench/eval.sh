#!/usr/bin/env bash
# Eval benchmark (issue 26): what `skillbox eval` costs per run beyond the model's own time,
# and what the response cache saves on a re-run. No peer runs here: skill-creator's
# run_eval.py needs the `claude` CLI and a hosted model, neither of which this machine has.
#
#   bench/eval.sh
#
# 1. Overhead: `skillbox eval examples/skills/text-tools --baseline --no-cache` against a
#    Chat Completions server that answers at once (bench/eval_measure.py serve), timed whole
#    with hyperfine: 8 trigger runs and 4 task runs (2 tasks, with and without the skill, tool
#    handlers run in the sandbox), every one a real agent turn.
# 2. The real local model (llama-server + Qwen2.5-Coder-1.5B, scripts/setup-local-llm.sh): one
#    run with an empty cache, timed whole; the report's own model time is subtracted. Then
#    the same command again, every answer from the cache, timed with hyperfine.
#
# Environment (all optional):
#   SKILLBOX_BIN     use this skillbox binary instead of building it
#   EVAL_BENCH_RUNS  hyperfine runs per timed command (default 10)
#
# Results: markdown on stdout, also bench/out/eval-results.md. Progress goes to stderr.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'eval: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

command -v hyperfine >/dev/null 2>&1 || die "hyperfine not found (apt-get install hyperfine)"
runs="$(number EVAL_BENCH_RUNS "${EVAL_BENCH_RUNS:-10}" 2 1000)"
out="bench/out"
work="$out/eval"
rm -rf "$work"
mkdir -p "$work"
results="$out/eval-results.md"
bin="$(skillbox_binary "${SKILLBOX_BIN:-}")"
eval_command=("$bin" --root examples/skills eval examples/skills/text-tools --baseline
    --jobs 1 --temperature 0 --max-output-tokens 256)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
export SKILLBOX_CONFIG=/dev/null

# 1. The scripted model.
port_file="$work/scripted.port"
python3 bench/eval_measure.py serve --port-file "$port_file" &
pids+=($!)
for _ in $(seq 100); do [[ -s "$port_file" ]] && break; sleep 0.1; done
[[ -s "$port_file" ]] || die "the scripted model did not start"
scripted="http://127.0.0.1:$(cat "$port_file")/v1"
log "overhead: $runs runs against the scripted model"
SKILLBOX_CACHE_DIR="$work/cache-scripted" "${eval_command[@]}" --base-url "$scripted" \
    --no-cache --output "$work/scripted" >"$work/scripted.txt" 2>&1 ||
    die "the scripted eval failed: $(tail -5 "$work/scripted.txt")"
hyperfine --warmup 1 --runs "$runs" --export-json "$work/scripted-hyperfine.json" \
    "SKILLBOX_CACHE_DIR=$work/cache-scripted ${eval_command[*]} --base-url $scripted --no-cache --output $work/scripted-timed --json" \
    >&2

# 2. The local model.
paths="$(scripts/setup-local-llm.sh 1.5b)" || die "scripts/setup-local-llm.sh failed"
server="$(printf '%s\n' "$paths" | sed -n 's/^LLAMA_SERVER=//p')"
model="$(printf '%s\n' "$paths" | sed -n 's/^MODEL=//p')"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$server" -m "$model" --jinja -c 8192 -t 2 -np 1 --host 127.0.0.1 --port "$port" \
    >"$work/llama.log" 2>&1 &
pids+=($!)
for _ in $(seq 600); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    sleep 0.5
done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || die "llama-server did not start"
local_url="http://127.0.0.1:$port/v1"
log "the local model: one run with an empty cache"
started=$(date +%s.%N)
SKILLBOX_CACHE_DIR="$work/cache-local" "${eval_command[@]}" --base-url "$local_url" \
    --output "$work/cold" >"$work/cold.txt" 2>&1 || die "the local eval failed: $(tail -5 "$work/cold.txt")"
cold_wall=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$started" "$(date +%s.%N)")
log "the local model: $runs re-runs from the cache"
hyperfine --warmup 1 --runs "$runs" --export-json "$work/warm-hyperfine.json" \
    "SKILLBOX_CACHE_DIR=$work/cache-local ${eval_command[*]} --base-url $local_url --output $work/warm --json" \
    >&2

{
    echo "## skillbox eval: overhead per run and the response cache"
    echo
    python3 bench/eval_measure.py summarize \
        --scripted-report "$work/scripted/report.json" \
        --scripted-hyperfine "$work/scripted-hyperfine.json" \
        --cold-report "$work/cold/report.json" --cold-wall "$cold_wall" \
        --warm-hyperfine "$work/warm-hyperfine.json"
} | tee "$results"
