#!/usr/bin/env bash
# What `GET /metrics` costs: `list_skills` throughput and server CPU per request of a binary
# that records metrics against one that does not (rounds alternate between the two, so both
# see the same machine), and the time and size of one scrape.
#
#   METRICS_BASE_BIN=/path/to/skillbox-before-metrics bench/metrics.sh
#
# Environment:
#   METRICS_BASE_BIN          (required) a release skillbox built from a commit without /metrics
#   SKILLBOX_BIN              the binary that records (default: a release build of this tree)
#   LOADGEN_BIN               use this skillbox-loadgen instead of building bench/loadgen
#   METRICS_BENCH_ROUNDS      load runs per binary (default 3)
#   METRICS_BENCH_DURATION    seconds of each load run (default 10, max 300)
#   METRICS_BENCH_CONNECTIONS keep-alive connections (default 64)
#   METRICS_BENCH_SCRAPES     scrapes timed one after another (default 200)
#
# Results: a markdown table on stdout, also bench/out/metrics-results.md. Progress on stderr.
# All traffic goes to 127.0.0.1; every loop is bounded.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'metrics-bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

out="bench/out"
work="$out/metrics-work"
rm -rf "$work"
mkdir -p "$work"

rounds=$(number METRICS_BENCH_ROUNDS "${METRICS_BENCH_ROUNDS:-3}" 1 20)
duration=$(number METRICS_BENCH_DURATION "${METRICS_BENCH_DURATION:-10}" 1 300)
connections=$(number METRICS_BENCH_CONNECTIONS "${METRICS_BENCH_CONNECTIONS:-64}" 1 1024)
scrapes=$(number METRICS_BENCH_SCRAPES "${METRICS_BENCH_SCRAPES:-200}" 1 100000)
base="${METRICS_BASE_BIN:-}"
[[ -x "$base" ]] || die "set METRICS_BASE_BIN to a release skillbox built without /metrics"
bin="$(skillbox_binary "${SKILLBOX_BIN:-}")"
loadgen="$(loadgen_binary "${LOADGEN_BIN:-}")"

server_pid=""
cleanup() {
    [[ -n "$server_pid" ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    true
}
trap cleanup EXIT

# start_server BINARY LABEL: skillbox serve on port 0; sets server_pid and url.
start_server() {
    rm -rf "$work/data"
    start_example_server "$1" "$work/data" "$work/server-$2.stderr" --no-watch
}

stop_server() {
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

list_body='{"jsonrpc":"2.0","id":1,"method":"list_skills","params":{"detail":"summary"}}'

# load LABEL ROUND: a 1 s warm-up, then the measured run; appends a JSON line to runs.jsonl.
load() {
    "$loadgen" --url "$url" --body "$list_body" --expect '"skills":[' \
        --connections "$connections" --threads 2 --duration 1 --warmup 0 --label warmup >/dev/null ||
        die "warm-up failed"
    local before after
    before=$(cpu_ticks "$server_pid")
    "$loadgen" --url "$url" --body "$list_body" --expect '"skills":[' \
        --connections "$connections" --threads 2 --duration "$duration" --warmup 0 \
        --label "$1" >"$work/load-$1-$2.out" || die "the load run failed ($1, round $2)"
    after=$(cpu_ticks "$server_pid")
    python3 - "$work/load-$1-$2.out" "$1" "$((after - before))" "$(getconf CLK_TCK)" \
        >>"$work/runs.jsonl" <<'PY'
import json, sys
raw, label, ticks, hz = sys.argv[1:]
run = json.loads(next(line for line in open(raw) if line.startswith("{")))
if run["errors"]:
    sys.exit(f"{run['errors']} errors under load ({label})")
cpu = int(ticks) / int(hz)
print(json.dumps({"label": label, "rps": run["rps"], "p99_us": run["latency_us"]["p99"],
                  "cpu_us_per_request": cpu * 1e6 / max(run["requests"], 1)}))
PY
    log "$1 round $2: $(tail -n 1 "$work/runs.jsonl")"
}

for round in $(seq 1 "$rounds"); do
    for label in without with; do
        if [[ "$label" == without ]]; then start_server "$base" "$label"; else start_server "$bin" "$label"; fi
        load "$label" "$round"
        stop_server
    done
done

# --- one scrape: after load and a few calls of other kinds, so the series are there ----------
start_server "$bin" scrape
load scrape 0
base_url="${url%/rpc}"
python3 - "$base_url" "$scrapes" >"$work/scrape.json" <<'PY'
import http.client, json, statistics, sys, time, urllib.parse
base, count = sys.argv[1], int(sys.argv[2])
address = urllib.parse.urlsplit(base)
connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
def request(method, path, body=None):
    headers = {"Content-Type": "application/json"} if body else {}
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    data = response.read()
    assert response.status == 200, (path, response.status, data[:200])
    return data
for method in ["describe_skill", "read_skill_file", "no_such_method", "create_blob"]:
    request("POST", "/rpc", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                        "params": {"name": "text.stats"}}))
def timed(path):
    times, size = [], 0
    for _ in range(count):
        started = time.perf_counter()
        size = len(request("GET", path))
        times.append(time.perf_counter() - started)
    times.sort()
    return {"median_us": statistics.median(times) * 1e6,
            "p99_us": times[min(len(times) - 1, int(len(times) * 0.99))] * 1e6, "bytes": size}
text = request("GET", "/metrics").decode()
print(json.dumps({"metrics": timed("/metrics"), "healthz": timed("/healthz"),
                  "lines": text.count("\n"),
                  "samples": sum(1 for line in text.splitlines() if not line.startswith("#"))}))
PY
stop_server

python3 - "$work/runs.jsonl" "$work/scrape.json" "$rounds" "$duration" "$connections" \
    "$scrapes" <<'PY' | tee "$out/metrics-results.md"
import json, statistics, sys
runs_path, scrape_path, rounds, duration, connections, scrapes = sys.argv[1:]
runs = [json.loads(line) for line in open(runs_path)]
scrape = json.load(open(scrape_path))
def median(label, key):
    return statistics.median(run[key] for run in runs if run["label"] == label)
print(f"`list_skills` (summary), {connections} connections, {rounds} alternating runs of "
      f"{duration} s per binary (medians):\n")
print("| binary | requests/s | p99 | server CPU per request |")
print("| --- | ---: | ---: | ---: |")
for label, name in [("without", "without recording"), ("with", "with recording")]:
    print(f"| {name} | {median(label, 'rps'):,.0f} | {median(label, 'p99_us') / 1000:.2f} ms | "
          f"{median(label, 'cpu_us_per_request'):.1f} µs |")
ratio = median("with", "rps") / median("without", "rps")
extra = median("with", "cpu_us_per_request") - median("without", "cpu_us_per_request")
print(f"\nWith recording: {ratio:.3f}× the throughput, {extra:+.1f} µs of server CPU per request.\n")
m, h = scrape["metrics"], scrape["healthz"]
print(f"One scrape after load ({scrape['samples']} samples, {m['bytes']:,} bytes), "
      f"{scrapes} in a row on one connection:\n")
print("| request | median | p99 |")
print("| --- | ---: | ---: |")
print(f"| `GET /metrics` | {m['median_us']:.0f} µs | {m['p99_us']:.0f} µs |")
print(f"| `GET /healthz` (for scale) | {h['median_us']:.0f} µs | {h['p99_us']:.0f} µs |")
PY
