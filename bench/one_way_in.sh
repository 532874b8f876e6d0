#!/usr/bin/env bash
# One way in (issue 23): what the door policy and the snapshot answers cost or save on `/rpc`,
# two builds side by side in one run. For each binary, `skillbox serve examples/skills` on
# 127.0.0.1 answers, with 64 keep-alive connections of wrk, in turn: `GET /healthz` (the
# server's floor), `list_skills` (the first page) and `describe_skill` (one skill's summary).
# The rounds alternate between the binaries, so both see the same machine load; the figure
# that counts is each method's throughput as a share of `/healthz` on the same server.
#
#   BEFORE_BIN=/path/to/older/skillbox bench/one_way_in.sh
#
# Environment:
#   BEFORE_BIN               the older build (required)
#   SKILLBOX_BIN             this build (default: a fresh release build of this tree)
#   ONE_WAY_DURATION         seconds per measurement (default 8, 1..120)
#   ONE_WAY_CONNECTIONS      keep-alive connections (default 64, 1..1024)
#   ONE_WAY_ROUNDS           rounds over both binaries (default 3, 1..20)
#
# Needs wrk (`apt-get install wrk`). Results: a markdown table on stdout, also
# bench/out/one-way-in-results.md. All traffic goes to 127.0.0.1; every run is bounded in time.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'one-way-in: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

command -v wrk >/dev/null || die "wrk is not installed (apt-get install wrk)"
[[ -n "${BEFORE_BIN:-}" && -x "${BEFORE_BIN}" ]] || die "set BEFORE_BIN to an older skillbox binary"
duration="$(number ONE_WAY_DURATION "${ONE_WAY_DURATION:-8}" 1 120)"
connections="$(number ONE_WAY_CONNECTIONS "${ONE_WAY_CONNECTIONS:-64}" 1 1024)"
rounds="$(number ONE_WAY_ROUNDS "${ONE_WAY_ROUNDS:-3}" 1 20)"
out=bench/out
mkdir -p "$out"
after="$(skillbox_binary "${SKILLBOX_BIN:-}")"

work="$(mktemp -d)"
server_pid=""
cleanup() {
    [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# A wrk script posting BODY.
post_script() { # file body
    printf 'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = %s\n' \
        "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$2")" >"$1"
}
post_script "$work/list.lua" '{"jsonrpc":"2.0","id":1,"method":"list_skills","params":{}}'
post_script "$work/describe.lua" \
    '{"jsonrpc":"2.0","id":1,"method":"describe_skill","params":{"name":"csv-insights"}}'

# Requests per second wrk reached, from its summary line.
rps() { # url [script]
    local args=(-t2 "-c$connections" "-d${duration}s" --latency)
    [[ -n "${2:-}" ]] && args+=(-s "$2")
    wrk "${args[@]}" "$1" | awk '/^Requests\/sec:/ {print $2}'
}

results="$work/results.tsv"
: >"$results"
for round in $(seq 1 "$rounds"); do
    for which in before after; do
        binary="$BEFORE_BIN"
        [[ "$which" == after ]] && binary="$after"
        data="$work/data-$which"
        mkdir -p "$data"
        start_example_server "$binary" "$data" "$work/serve-$which.stderr"
        base="${url%/rpc}"
        # Warm the catalog answers (and the snapshot store) before timing.
        curl -s -o /dev/null -H 'Content-Type: application/json' \
            -d '{"jsonrpc":"2.0","id":1,"method":"list_skills","params":{}}' "$url"
        healthz="$(rps "$base/healthz")"
        list="$(rps "$url" "$work/list.lua")"
        describe="$(rps "$url" "$work/describe.lua")"
        log "round $round $which: healthz $healthz, list_skills $list, describe_skill $describe req/s"
        printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$which" "$healthz" "$list" "$describe" >>"$results"
        kill "$server_pid"
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    done
done

python3 - "$results" "$connections" "$duration" <<'EOF' | tee "$out/one-way-in-results.md"
import statistics, sys
rows = [line.split("\t") for line in open(sys.argv[1]).read().splitlines()]
def median(which, column):
    return statistics.median(float(row[column]) for row in rows if row[1] == which)
print(f"`/rpc` with {sys.argv[2]} keep-alive connections (wrk -t2), {sys.argv[3]} s per figure,"
      f" median of {len(rows) // 2} alternating rounds; examples/skills, sandbox off.\n")
print("| build | `GET /healthz` | `list_skills` | share of /healthz | `describe_skill` | share of /healthz |")
print("|---|---:|---:|---:|---:|---:|")
for which in ("before", "after"):
    h, l, d = (median(which, c) for c in (2, 3, 4))
    print(f"| {which} | {h:,.0f} req/s | {l:,.0f} req/s | {l / h:.0%} | {d:,.0f} req/s | {d / h:.0%} |")
print()
print(f"after / before: list_skills {median('after', 3) / median('before', 3):.2f}x, "
      f"describe_skill {median('after', 4) / median('before', 4):.2f}x, "
      f"/healthz {median('after', 2) / median('before', 2):.2f}x")
EOF
