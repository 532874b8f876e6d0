#!/usr/bin/env bash
# Prompt benchmark: render the `<available_skills>` XML prompt for 1,000 generated skills with
# skillbox and with skills-ref's to_prompt() in one Python process, side by side.
#
#   bench/prompt.sh
#
# Environment (all optional):
#   SKILLBOX_BIN + PROMPT_BENCH_BIN  use these binaries (skillbox CLI, prompt_render example)
#                     and skip the build; both must be set
#   BENCH_COUNT       number of skills to generate (default 1000)
#   BENCH_SEED        generator seed (default 1)
#   SKILLBOX_RUNS     timed runs per skillbox batch (default 10; two batches)
#   RENDER_RUNS       timed render-only runs per example batch (default 100)
#   SKILLS_REF_RUNS   to_prompt runs in the one Python process (default 5; ~3 s each at 1k)
#   BENCH_ENFORCE=1   exit 3 when a ratio is below 50x
#
# Results: the markdown report on stdout (also bench/out/prompt-results.md) and
# bench/out/prompt-results.json. Progress goes to stderr. Exits non-zero when any step fails
# or the XML of the two tools is not byte-identical.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'prompt: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

count="${BENCH_COUNT:-1000}"
seed="${BENCH_SEED:-1}"
skillbox_runs="${SKILLBOX_RUNS:-10}"
render_runs="${RENDER_RUNS:-100}"
skills_ref_runs="${SKILLS_REF_RUNS:-5}"
for knob in count seed skillbox_runs render_runs skills_ref_runs; do
    [[ "${!knob}" =~ ^[0-9]+$ ]] || die "$knob must be a whole number"
done
(( count > 0 && skillbox_runs > 0 && render_runs > 0 && skills_ref_runs > 0 )) \
    || die "counts and runs must be positive"
command -v python3 >/dev/null 2>&1 || die "python3 not found"

out="bench/out"
if [[ "$count" == 1000 ]]; then
    skills="$out/skills-1k"
else
    skills="$out/skills-$count"
fi
[[ "$seed" == 1 ]] || skills="$skills-seed$seed"
helper=(python3 bench/skills_ref_prompt.py)
mkdir -p "$out"

# 1. Build (or take the given binaries).
if [[ -n "${SKILLBOX_BIN:-}" && -n "${PROMPT_BENCH_BIN:-}" ]]; then
    bin="$SKILLBOX_BIN"
    example="$PROMPT_BENCH_BIN"
    log "using SKILLBOX_BIN=$bin and PROMPT_BENCH_BIN=$example (no build)"
else
    log "building: cargo build --release -p skillbox-tools --examples -p skillbox-cli"
    cargo build --release -p skillbox-tools --examples -p skillbox-cli >&2 || die "cargo build failed"
    bin="$repo/target/release/skillbox"
    example="$repo/target/release/examples/prompt_render"
fi
[[ -x "$bin" ]] || die "skillbox binary not found or not executable: $bin"
[[ -x "$example" ]] || die "prompt_render example not found or not executable: $example"

# 2. The skills (reused when count, seed and generator are unchanged; same stamp as catalog.sh).
ensure_generated_skills "$skills" "$count" "$seed"

# 3. The test venv with skills-ref.
py="$(test_venv_python)"

# 4. One checked run of the CLI; its stdout is compared with skills-ref's XML in the report.
cli_cmd="$bin --root $skills prompt --format xml"
$cli_cmd >"$out/prompt-cli.xml" 2>"$out/prompt-cli.stderr" \
    || { tail -n 20 "$out/prompt-cli.stderr" >&2; die "\`$cli_cmd\` failed"; }

# 5. Side by side: skillbox in two batches, one before and one after the skills-ref runs.
example_batch() { # name runs render-runs [extra args...]
    local name="$1" runs="$2" render="$3"
    shift 3
    "$example" "$skills" --runs "$runs" --warmup 2 --render-runs "$render" "$@" \
        >"$out/prompt-example-$name.json" || die "prompt_render ($name) failed"
}
hyperfine_batch() { # name runs warmup
    command -v hyperfine >/dev/null 2>&1 || return 0
    hyperfine -N --warmup "$3" --runs "$2" --style basic \
        --export-json "$out/prompt-hyperfine-$1.json" "$cli_cmd" >&2 || die "hyperfine failed"
    hyperfine_files+=("$out/prompt-hyperfine-$1.json")
}
hyperfine_files=()
command -v hyperfine >/dev/null 2>&1 || log "hyperfine not installed: no whole-process row"

log "skillbox batch 1: prompt_render ($skillbox_runs load+render, $render_runs render-only runs)"
example_batch 1 "$skillbox_runs" "$render_runs" \
    --xml-out "$out/prompt-skillbox.xml" --dirs-out "$out/prompt-dirs.txt"
log "skillbox batch 1: whole process ($skillbox_runs runs)"
hyperfine_batch 1 "$skillbox_runs" 3

log "skills-ref: $skills_ref_runs to_prompt runs in one process (~3 s each for 1k skills)"
"$py" bench/skills_ref_prompt.py measure --dirs "$out/prompt-dirs.txt" --runs "$skills_ref_runs" \
    --xml-out "$out/prompt-skills-ref.xml" >"$out/prompt-skills-ref.json" \
    || die "skills-ref to_prompt failed"

log "skillbox batch 2: prompt_render, then with RAYON_NUM_THREADS=1, then whole process"
example_batch 2 "$skillbox_runs" "$render_runs"
RAYON_NUM_THREADS=1 example_batch 1thread "$skillbox_runs" 10
hyperfine_batch 2 "$skillbox_runs" 1

# 6. Report (exit 1 when the XML differs or the tools saw different skills).
"${helper[@]}" report --count "$count" \
    --example "$out/prompt-example-1.json" "$out/prompt-example-2.json" \
    --example-1thread "$out/prompt-example-1thread.json" \
    --skills-ref "$out/prompt-skills-ref.json" \
    --hyperfine "${hyperfine_files[@]}" \
    --xml-skillbox "$out/prompt-skillbox.xml" --xml-skills-ref "$out/prompt-skills-ref.xml" \
    --xml-cli "$out/prompt-cli.xml" --target 50 --out-json "$out/prompt-results.json" \
    >"$out/prompt-results.md.tmp" || status=$?
cat "$out/prompt-results.md.tmp"
mv -f "$out/prompt-results.md.tmp" "$out/prompt-results.md"
[[ "${status:-0}" == 0 ]] || die "report failed or the outputs differ (exit ${status})"

if [[ "${BENCH_ENFORCE:-0}" == 1 ]]; then
    python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["targets"]; sys.exit(0 if all(t.values()) else 3)' \
        "$out/prompt-results.json" || { log "a target was missed"; exit 3; }
fi
