#!/usr/bin/env bash
# Agent loop benchmark (issue 11): what the loop costs per round beside the model, in one
# process (crates/skillbox-agent/benches/loop_overhead.rs) and as a whole `skillbox ask`
# against a scripted Chat Completions server, side by side with bare Python HTTP clients.
#
#   bench/agent.sh
#
# Environment (all optional):
#   SKILLBOX_BIN            use this skillbox binary instead of building it
#   AGENT_BENCH_ROOT        catalog of the whole-command runs (default examples/skills)
#   AGENT_BENCH_SKILL       the skill each round loads there (default text-tools)
#   AGENT_BENCH_RUNS        timed runs per command (default 40: two batches of 20, each after
#                           3 warm-up runs)
#   AGENT_BENCH_TURNS       timed turns per in-process case (default 200; 10 rounds each)
#   AGENT_BENCH_IN_PROCESS=0  skip the in-process part
#   AGENT_BENCH_BEFORE_BIN  another skillbox binary (an older build) timed beside this one
#
# Results: markdown on stdout, also bench/out/agent-results.md; hyperfine's JSON in
# bench/out/agent-hyperfine-{1,2}.json. Progress goes to stderr. Exits non-zero when a build, a
# check of the scripted turns or a timed command fails.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'agent: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

command -v hyperfine >/dev/null 2>&1 || die "hyperfine not found (apt-get install hyperfine)"
root="${AGENT_BENCH_ROOT:-examples/skills}"
skill="${AGENT_BENCH_SKILL:-text-tools}"
runs="$(number AGENT_BENCH_RUNS "${AGENT_BENCH_RUNS:-40}" 2 1000)"
before="${AGENT_BENCH_BEFORE_BIN:-}"
[[ -z "$before" || -x "$before" ]] || die "AGENT_BENCH_BEFORE_BIN is not executable: $before"
turns="$(number AGENT_BENCH_TURNS "${AGENT_BENCH_TURNS:-200}" 1 100000)"
low=1
high=10
out="bench/out"
mkdir -p "$out"
results="$out/agent-results.md"
: >"$results"

# 1. Builds: the CLI, and the in-process bench (cargo bench builds it in the release profile).
bin="$(skillbox_binary "${SKILLBOX_BIN:-}")"
py="$(test_venv_python)"

# 2. In process: examples/skills and generated catalogs of 100 and 1,000 skills.
if [[ "${AGENT_BENCH_IN_PROCESS:-1}" != 0 ]]; then
    ensure_generated_skills "$out/skills-100" 100 1
    ensure_generated_skills "$out/skills-1k" 1000 1
    log "in process: cargo bench -p skillbox-agent --bench loop_overhead"
    {
        echo "## In process: one round of the loop, the model answering at once"
        echo
        cargo bench -p skillbox-agent --bench loop_overhead -- \
            "$repo/examples/skills" "$repo/$out/skills-100" "$repo/$out/skills-1k" \
            --turns "$turns" \
            || die "the in-process bench failed"
        echo
    } | tee -a "$results"
fi

# 3. The scripted model server.
data="$out/agent-data"
rm -rf "$data" "$out/agent-bodies"
mkdir -p "$out/agent-bodies"
port_file="$out/agent-server.port"
rm -f "$port_file"
"$py" bench/agent_measure.py serve --skill "$skill" --port-file "$port_file" \
    --record-dir "$out/agent-bodies" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    [[ -s "$port_file" ]] && break
    kill -0 "$server" 2>/dev/null || die "the scripted server did not start"
    sleep 0.1
done
[[ -s "$port_file" ]] || die "the scripted server gave no port"
base="http://127.0.0.1:$(cat "$port_file")"
log "scripted server at $base"

# 4. One checked turn per N; the server records its request bodies for the peer.
export SKILLBOX_CONFIG=/dev/null
unset OPENROUTER_API_KEY OPENAI_API_KEY ANTHROPIC_API_KEY SKILLBOX_API_KEY
ask=("$bin" --root "$root" ask --json --max-rounds 11 --data-dir "$data")
for n in "$low" "$high"; do
    "${ask[@]}" --base-url "$base/rec/n$n" go >"$out/agent-events-n$n.jsonl" \
        2>"$out/agent-events-n$n.stderr" \
        || { tail -n 20 "$out/agent-events-n$n.stderr" >&2; die "skillbox ask failed (N=$n)"; }
    "$py" bench/agent_measure.py check --events "$out/agent-events-n$n.jsonl" --rounds "$n" \
        || die "the checked turn with N=$n did not go as scripted"
    [[ -s "$out/agent-bodies/bodies-n$n.json" ]] || die "no request bodies recorded for N=$n"
    if [[ -n "$before" ]]; then
        "$before" "${ask[@]:1}" --base-url "$base/n$n" go >"$out/agent-events-before-n$n.jsonl" \
            2>"$out/agent-events-before-n$n.stderr" || die "$before ask failed (N=$n)"
        "$py" bench/agent_measure.py check --events "$out/agent-events-before-n$n.jsonl" \
            --rounds "$n" || die "the checked turn of $before with N=$n did not go as scripted"
    fi
    for library in requests http.client; do
        "$py" bench/agent_measure.py client --library "$library" --url "$base/n$n" \
            --bodies "$out/agent-bodies/bodies-n$n.json" || die "the $library client failed (N=$n)"
    done
done

# 5. Whole commands, timed side by side: skillbox, then the peers.
command_of() { # tool n
    if [[ "$1" == skillbox || "$1" == before ]]; then
        if [[ "$1" == before ]]; then
            printf '%s ' "$before" "${ask[@]:1}"
        else
            printf '%s ' "${ask[@]}"
        fi
        printf -- '--base-url %s go' "$base/n$2"
    else
        printf '%s bench/agent_measure.py client --library %s --url %s --bodies %s --times-out %s' \
            "$py" "$1" "$base/n$2" "$out/agent-bodies/bodies-n$2.json" "$out/agent-loop-$1-n$2.raw"
    fi
}
# Two batches, the second in the reverse order, pooled: drifting machine load then weighs on
# every command alike. A peer appends its loop time to a .raw file on every run; after a batch
# the first lines (hyperfine's warm-up runs, which come right before the timed ones) are dropped
# and the rest kept in the .txt file the report reads.
warmup=3
names=()
tools=(skillbox)
[[ -n "$before" ]] && tools+=(before)
for tool in "${tools[@]}" requests http.client; do
    for n in "$low" "$high"; do
        names+=("$tool n$n")
        rm -f "$out/agent-loop-$tool-n$n.txt" "$out/agent-loop-$tool-n$n.raw"
    done
done
batch() { # batch-number name...
    local number="$1" name tool n raw
    shift
    local timed=()
    for name in "$@"; do
        timed+=(-n "$name" "$(command_of "${name% *}" "${name##* n}")")
    done
    hyperfine -N -w "$warmup" -r "$half" --export-json "$out/agent-hyperfine-$number.json" \
        "${timed[@]}" >&2 || die "hyperfine failed"
    for name in "$@"; do
        tool="${name% *}"
        n="${name##* n}"
        raw="$out/agent-loop-$tool-n$n.raw"
        [[ "$tool" == skillbox || "$tool" == before ]] && continue
        tail -n "+$((warmup + 1))" "$raw" >>"$out/agent-loop-$tool-n$n.txt"
        rm -f "$raw"
    done
}
half=$(( (runs + 1) / 2 ))
log "hyperfine: 2 batches of $half runs per command (load: $(cut -d' ' -f1-3 /proc/loadavg))"
batch 1 "${names[@]}"
reversed=()
for (( index=${#names[@]}-1; index>=0; index-- )); do reversed+=("${names[index]}"); done
batch 2 "${reversed[@]}"
{
    echo "## Whole command: N rounds of load_skill then an answer, per round = (N=$high - N=$low) / $((high - low))"
    echo
    echo "hyperfine -N -w $warmup -r $half, twice (the second batch in reverse order), pooled;" \
        "load average $(cut -d' ' -f1-3 /proc/loadavg) after the runs."
    echo
    "$py" bench/agent_measure.py report --results "$out/agent-hyperfine-1.json" \
        --results "$out/agent-hyperfine-2.json" \
        --rounds-low "$low" --rounds-high "$high" --catalog "$root" --loop-times-dir "$out" \
        ${before:+--before "$before"}
} | tee -a "$results"
