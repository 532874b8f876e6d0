#!/usr/bin/env bash
# What a read of a loaded skill's files costs through SkillSource (top-level and nested reads,
# is_file, sha256, list_files), this tree against an earlier build of the same example, the two
# binaries alternating so they share the machine's noise.
#
#   SOURCE_READS_BEFORE=/path/to/source_reads bench/source_reads.sh
#
# Environment:
#   SOURCE_READS_BEFORE  the `source_reads` example built from the commit to compare with
#                        (`cargo build --release -p skillbox-core --example source_reads` there);
#                        without it only this tree is measured
#   SOURCE_READS_RUNS    runs of each binary, alternating (default 5)
#   SOURCE_READS_CALLS / SOURCE_READS_ROUNDS  passed to the example (see its doc comment)
#
# Prints a markdown table: the median over the runs of each binary's time per call, and the
# ratio after / before.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'source_reads: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

runs="${SOURCE_READS_RUNS:-5}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "SOURCE_READS_RUNS must be a positive integer"
before="${SOURCE_READS_BEFORE:-}"
[[ -z "$before" || -x "$before" ]] || die "SOURCE_READS_BEFORE is not an executable: $before"

log "building the example"
cargo build --release -p skillbox-core --example source_reads >&2 || die "build failed"
after="$repo/target/release/examples/source_reads"

samples="$(mktemp)"
trap 'rm -f "$samples"' EXIT
for run in $(seq "$runs"); do
    log "run $run of $runs"
    if [[ -n "$before" ]]; then
        "$before" | sed 's/^/before\t/' >>"$samples" || die "the before binary failed"
    fi
    "$after" | sed 's/^/after\t/' >>"$samples" || die "the example failed"
done

python3 - "$samples" <<'PY'
import statistics, sys
times = {}
order = []
for line in open(sys.argv[1]):
    side, operation, nanoseconds = line.rstrip("\n").split("\t")
    if operation not in order:
        order.append(operation)
    times.setdefault((side, operation), []).append(float(nanoseconds))
has_before = any(side == "before" for side, _ in times)
if has_before:
    print("| operation | before (ns/call) | after (ns/call) | after / before |")
    print("| --- | ---: | ---: | ---: |")
else:
    print("| operation | ns/call |")
    print("| --- | ---: |")
for operation in order:
    after = statistics.median(times[("after", operation)])
    if has_before:
        before = statistics.median(times[("before", operation)])
        print(f"| {operation} | {before:,.0f} | {after:,.0f} | {after / before:.2f}x |")
    else:
        print(f"| {operation} | {after:,.0f} |")
PY
