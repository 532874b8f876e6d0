#!/usr/bin/env bash
# Prompt-budget benchmark (issue 15): `skillbox prompt --format xml --max-chars N` over 10,000
# and 50,000 generated skills, with this tree's binary and with a binary of the old algorithm
# (one render per skill left out: quadratic), side by side in one run.
#
#   OLD_SKILLBOX_BIN=/path/to/old/skillbox bench/prompt_budget.sh
#
# Environment (all optional):
#   SKILLBOX_BIN      the new binary (default: build target/release/skillbox)
#   OLD_SKILLBOX_BIN  a binary with the old algorithm (e.g. a release build of the commit before
#                     issue 15); without it only the new binary is timed
#   BENCH_COUNTS      skill counts (default "10000 50000")
#   BENCH_SEED        generator seed (default 1)
#   MAX_CHARS         the budget (default 100000: a few hundred skills fit, the rest are left out)
#   NEW_RUNS          timed runs of the new binary per count (default 5)
#   OLD_RUNS          timed runs of the old binary per count (default 1; ~4 min at 50,000)
#
# Results: a markdown table on stdout (also bench/out/prompt-budget-results.md). Exits non-zero
# when a step fails or the two binaries print different prompts.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'prompt-budget: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

counts="${BENCH_COUNTS:-10000 50000}"
seed="${BENCH_SEED:-1}"
max_chars="${MAX_CHARS:-100000}"
new_runs="${NEW_RUNS:-5}"
old_runs="${OLD_RUNS:-1}"
for knob in seed max_chars new_runs old_runs; do
    [[ "${!knob}" =~ ^[0-9]+$ ]] || die "$knob must be a whole number"
done
(( new_runs > 0 && old_runs > 0 )) || die "runs must be positive"

out="bench/out"
mkdir -p "$out"

bin="$(skillbox_binary "${SKILLBOX_BIN:-}")"
[[ -x "$bin" ]] || die "skillbox binary not found or not executable: $bin"
old="${OLD_SKILLBOX_BIN:-}"
[[ -z "$old" || -x "$old" ]] || die "OLD_SKILLBOX_BIN is not executable: $old"

# Time RUNS runs of a command (stdout to a file); print the median and the minimum in ms.
time_runs() { # runs output-file command...
    local runs="$1" output="$2"
    shift 2
    python3 - "$runs" "$output" "$@" <<'PY'
import statistics, subprocess, sys, time
runs, output, command = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
times = []
for _ in range(runs):
    with open(output, "wb") as sink:
        started = time.perf_counter()
        subprocess.run(command, stdout=sink, stderr=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - started) * 1000)
print(f"{statistics.median(times):.1f} {min(times):.1f}")
PY
}

report="$out/prompt-budget-results.md.tmp"
{
    echo "| skills | new median (min) | old median (min) | old / new |"
    echo "| ---: | ---: | ---: | ---: |"
} >"$report"
for count in $counts; do
    [[ "$count" =~ ^[0-9]+$ ]] || die "BENCH_COUNTS must hold whole numbers"
    skills="$out/skills-$count"
    [[ "$seed" == 1 ]] || skills="$skills-seed$seed"
    ensure_generated_skills "$skills" "$count" "$seed"
    command=(prompt --format xml --max-chars "$max_chars")
    # Warm the page cache once, so neither binary pays for the first read of the tree.
    "$bin" --root "$skills" "${command[@]}" >/dev/null 2>&1 || die "skillbox prompt failed"
    log "$count skills: new binary, $new_runs runs"
    read -r new_median new_min < <(time_runs "$new_runs" "$out/prompt-budget-new-$count.xml" \
        "$bin" --root "$skills" "${command[@]}")
    old_cell="—"
    ratio_cell="—"
    if [[ -n "$old" ]]; then
        log "$count skills: old binary, $old_runs runs (quadratic: minutes at 50,000)"
        read -r old_median old_min < <(time_runs "$old_runs" "$out/prompt-budget-old-$count.xml" \
            "$old" --root "$skills" "${command[@]}")
        cmp -s "$out/prompt-budget-new-$count.xml" "$out/prompt-budget-old-$count.xml" \
            || die "the two binaries print different prompts for $count skills"
        old_cell="$old_median ms ($old_min)"
        ratio_cell="$(python3 -c "print(f'{$old_median / $new_median:.0f}x')")"
    fi
    shown="$(grep -c '^<skill>$' "$out/prompt-budget-new-$count.xml" || true)"
    log "$count skills: $shown shown within $max_chars characters"
    echo "| $count ($shown shown) | $new_median ms ($new_min) | $old_cell | **$ratio_cell** |" >>"$report"
done
cat "$report"
mv -f "$report" "$out/prompt-budget-results.md"
