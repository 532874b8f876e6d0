#!/usr/bin/env bash
# Catalog benchmark: load + validate 10,000 generated skills with `skillbox validate`
# and with skills-ref's validate() looping in one Python process, side by side.
#
#   bench/catalog.sh
#
# Environment (all optional):
#   SKILLBOX_BIN      use this binary instead of building target/release/skillbox
#   BENCH_COUNT       number of skills to generate (default 10000)
#   BENCH_SEED        generator seed (default 1)
#   SKILLBOX_RUNS     timed skillbox runs (default 10, in two batches around the skills-ref runs)
#   SKILLS_REF_RUNS   skills-ref runs (default 3; one is ~25-30 s at 10k skills here)
#   BENCH_TIMER=python  time skillbox with the python fallback even if hyperfine is installed
#   BENCH_ENFORCE=1   exit 3 when a target (>= 100x, < 250 ms) is missed
#
# Results: the markdown report on stdout (also bench/out/catalog-results.md) and
# bench/out/catalog-results.json. Progress goes to stderr. Exits non-zero when any step fails.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'catalog: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

count="${BENCH_COUNT:-10000}"
seed="${BENCH_SEED:-1}"
skillbox_runs="${SKILLBOX_RUNS:-10}"
skills_ref_runs="${SKILLS_REF_RUNS:-3}"
[[ "$count" =~ ^[1-9][0-9]*$ ]] || die "BENCH_COUNT must be a positive integer"
[[ "$seed" =~ ^[0-9]+$ ]] || die "BENCH_SEED must be a non-negative integer"
[[ "$skillbox_runs" =~ ^[1-9][0-9]*$ ]] || die "SKILLBOX_RUNS must be a positive integer"
[[ "$skills_ref_runs" =~ ^[1-9][0-9]*$ ]] || die "SKILLS_REF_RUNS must be a positive integer"

out="bench/out"
if [[ "$count" == 10000 ]]; then
    skills="$out/skills-10k"
else
    skills="$out/skills-$count"
fi
[[ "$seed" == 1 ]] || skills="$skills-seed$seed"
measure=(python3 bench/catalog_measure.py)
mkdir -p "$out"
command -v python3 >/dev/null 2>&1 || die "python3 not found"

# 1. Build (or take the stand-in binary).
bin="$(skillbox_binary "${SKILLBOX_BIN:-}")"

# 2. Generate the skills (reused when count, seed and generator are unchanged).
ensure_generated_skills "$skills" "$count" "$seed"

# 3. The test venv with skills-ref.
py="$(test_venv_python)"

# 4. One checked skillbox run: exit 0 (all valid) or 1 (some invalid) is success.
validate_json="$out/skillbox-validate.json"
rc=0
"$bin" validate "$skills" --json >"$validate_json" 2>"$out/skillbox-validate.stderr" || rc=$?
if [[ $rc -ne 0 && $rc -ne 1 ]]; then
    tail -n 20 "$out/skillbox-validate.stderr" >&2 || true
    die "\`skillbox validate $skills --json\` exited $rc"
fi
"${measure[@]}" skillbox-summary "$validate_json" >"$out/skillbox-summary.json" \
    || die "could not read skillbox's JSON output"
log "skillbox validate exited $rc; summary: $(cat "$out/skillbox-summary.json")"

# 5-6. Side by side: skillbox is timed in two batches, one before and one after the
# skills-ref runs, so both tools are sampled across the same stretch of machine noise.
# skillbox: whole process, stdout to /dev/null, exit 0 or 1 accepted.
first_batch=$(( (skillbox_runs + 1) / 2 ))
second_batch=$(( skillbox_runs - first_batch ))
use_hyperfine=0
if [[ "${BENCH_TIMER:-auto}" != python ]] && command -v hyperfine >/dev/null 2>&1; then
    use_hyperfine=1
fi
if (( use_hyperfine )); then
    timer="hyperfine ($skillbox_runs runs in 2 batches around the skills-ref runs, warm-up before each)"
else
    timer="python perf_counter ($skillbox_runs runs in 2 batches around the skills-ref runs, warm-up before each; hyperfine not used)"
fi
time_skillbox() { # batch-number runs warmup
    local file="$out/skillbox-timing-$1.json"
    if (( use_hyperfine )); then
        hyperfine -N --warmup "$3" --runs "$2" --ignore-failure --style basic \
            --export-json "$out/skillbox-hyperfine-$1.json" \
            "$bin validate $skills --json" >&2 || die "hyperfine failed"
        "${measure[@]}" hyperfine-json "$out/skillbox-hyperfine-$1.json" >"$file" \
            || die "bad hyperfine results"
    else
        "${measure[@]}" time-cmd --runs "$2" --warmup "$3" -- "$bin" validate "$skills" --json \
            >"$file" || die "skillbox timing failed"
    fi
    batches+=("$file")
}
batches=()
log "timing skillbox, batch 1 ($first_batch runs)"
time_skillbox 1 "$first_batch" 2
"${measure[@]}" rss-cmd --runs 3 -- "$bin" validate "$skills" --json >"$out/skillbox-rss.json" \
    || die "skillbox RSS measurement failed"
rss_kib="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["max_rss_kib"])' "$out/skillbox-rss.json")"
rss_method="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["method"])' "$out/skillbox-rss.json")"

# skills-ref: the validate() loop in one process, N processes, median.
log "running skills-ref $skills_ref_runs time(s) (~25-30 s each for 10k skills)"
"${measure[@]}" skills-ref --python "$py" --root "$skills" --runs "$skills_ref_runs" \
    >"$out/skills-ref-timing.json" || die "skills-ref runs failed"

if (( second_batch > 0 )); then
    log "timing skillbox, batch 2 ($second_batch runs)"
    time_skillbox 2 "$second_batch" 1
fi
"${measure[@]}" merge-times "${batches[@]}" >"$out/skillbox-timing.json" \
    || die "could not merge skillbox timings"

# 7. Report.
"${measure[@]}" report --count "$count" \
    --skillbox "$out/skillbox-timing.json" --skillbox-rss "$rss_kib" \
    --skills-ref "$out/skills-ref-timing.json" --skillbox-summary "$out/skillbox-summary.json" \
    --timer "$timer" --rss-method "$rss_method" --out-json "$out/catalog-results.json" \
    | tee "$out/catalog-results.md" || die "report failed"

if [[ "${BENCH_ENFORCE:-0}" == 1 ]]; then
    python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["targets"]; sys.exit(0 if all(t.values()) else 3)' \
        "$out/catalog-results.json" || { log "a target was missed"; exit 3; }
fi
