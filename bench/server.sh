#!/usr/bin/env bash
# Server benchmark: `list_skills` and `describe_skill` throughput and latency with 64 keep-alive
# connections, the latency of `read_blob` (sample_tail) on a 1 GiB blob, the server's memory
# under load, and graceful shutdown (SIGTERM, idle and under load).
#
#   bench/server.sh
#
# Environment (all optional):
#   SKILLBOX_BIN                use this skillbox binary instead of building it
#   LOADGEN_BIN                 use this skillbox-loadgen binary instead of building bench/loadgen
#   SERVER_BENCH_TOOL           auto (wrk if installed, else the Rust load generator), wrk, rust,
#                               or both (default auto)
#   SERVER_BENCH_DURATION       seconds of measured load per method and tool (default 10, max 300)
#   SERVER_BENCH_CONNECTIONS    concurrent keep-alive connections (default 64)
#   SERVER_BENCH_THREADS        load generator threads (default 2)
#   SERVER_BENCH_READS          sequential warm read_blob requests (default 200)
#   SERVER_BENCH_COLD_READS     read_blob requests each after evicting the blob from the page
#                               cache with posix_fadvise(DONTNEED) (default 10)
#   SERVER_BENCH_BLOB_MIB       size of the big blob in MiB (default 1024)
#   BENCH_DROP_CACHES=1         also time one read after `echo 3 > /proc/sys/vm/drop_caches`
#                               (root only; drops every cache on the machine, so off by default)
#   SERVER_BENCH_KEEP_DATA=1    keep bench/out/server-data (the 1 GiB blob) afterwards
#   BENCH_ENFORCE=1             exit 3 when a target is missed
#
# Results: a markdown table on stdout, also bench/out/server-results.md, and the raw numbers in
# bench/out/server-results.json. Progress goes to stderr. Exits non-zero when any step fails:
# a build, a sanity check, any error response under load, or a server that does not exit 0 on
# SIGTERM. All traffic goes to 127.0.0.1, and every loop is bounded in count and time.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'server-bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

out="bench/out"
mkdir -p "$out"
work="$out/server-work"
rm -rf "$work"
mkdir -p "$work"
rm -f "$out/server-results.md" "$out/server-results.json"

duration=$(number SERVER_BENCH_DURATION "${SERVER_BENCH_DURATION:-10}" 1 300)
connections=$(number SERVER_BENCH_CONNECTIONS "${SERVER_BENCH_CONNECTIONS:-64}" 1 1024)
threads=$(number SERVER_BENCH_THREADS "${SERVER_BENCH_THREADS:-2}" 1 64)
warm_reads=$(number SERVER_BENCH_READS "${SERVER_BENCH_READS:-200}" 1 100000)
cold_reads=$(number SERVER_BENCH_COLD_READS "${SERVER_BENCH_COLD_READS:-10}" 0 1000)
blob_mib=$(number SERVER_BENCH_BLOB_MIB "${SERVER_BENCH_BLOB_MIB:-1024}" 1 16384)
tool="${SERVER_BENCH_TOOL:-auto}"
case "$tool" in
auto) if command -v wrk >/dev/null; then tools=(wrk); else tools=(rust); fi ;;
wrk) command -v wrk >/dev/null || die "SERVER_BENCH_TOOL=wrk but wrk is not installed (apt-get install wrk)"
    tools=(wrk) ;;
rust) tools=(rust) ;;
both) command -v wrk >/dev/null || die "SERVER_BENCH_TOOL=both but wrk is not installed (apt-get install wrk)"
    tools=(wrk rust) ;;
*) die "SERVER_BENCH_TOOL must be auto, wrk, rust or both, not '$tool'" ;;
esac
command -v python3 >/dev/null || die "python3 is needed for the checks and the report"
clock_ticks=$(getconf CLK_TCK)

# --- build ------------------------------------------------------------------------------
bin="$(skillbox_binary "${SKILLBOX_BIN:-}")"
loadgen="$(loadgen_binary "${LOADGEN_BIN:-}")"

# --- state and cleanup ---------------------------------------------------------------------
data="$out/server-data"
server_pid=""
load_pid=""
cleanup() {
    local pid
    for pid in "$load_pid" "$server_pid"; do
        [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || continue
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    done
    if [[ "${SERVER_BENCH_KEEP_DATA:-0}" != 1 ]]; then rm -rf "$data"; fi
}
trap cleanup EXIT

rss_kib() { # field of /proc/PID/status in KiB (VmRSS, VmHWM)
    awk -v field="$2:" '$1 == field {print $2}' "/proc/$1/status" 2>/dev/null || true
}

# start_server LABEL: starts skillbox serve on port 0, sets server_pid and url
start_server() {
    start_example_server "$bin" "$data" "$work/server-$1.stderr"
    log "server $1 (pid $server_pid) at $url"
}

# stop_server: SIGTERM, wait at most 15 s; sets stop_code (exit code, or "killed") and stop_ms
stop_server() {
    local started ended
    started=$(date +%s%N)
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 750); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.02; done
    if kill -0 "$server_pid" 2>/dev/null; then
        kill -KILL "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        stop_code="killed"
    else
        stop_code=0
        wait "$server_pid" || stop_code=$?
    fi
    ended=$(date +%s%N)
    stop_ms=$(((ended - started) / 1000000))
    server_pid=""
}

# --- the 1 GiB blob, written straight into a fresh data folder -----------------------------
# Sending 1 GiB through create_blob (a JSON string) is not what is measured, so the blob is
# written the way the blob store lays it out (blobs.rs): the bytes at blobs/data/<id>, then
# the commit record blobs/meta/<id>.json. The server reads both when it starts serving.
rm -rf "$data"
mkdir -p "$data/blobs/data" "$data/blobs/meta"
blob_hex="5b1bb0c5000000000000000000000001"
blob_id="blob:$blob_hex"
blob_file="$data/blobs/data/$blob_hex"
meta_file="$data/blobs/meta/$blob_hex.json"
blob_bytes=$((blob_mib * 1024 * 1024))
log "writing a $blob_mib MiB text blob to $blob_file"
{ yes 'skillbox bench log line: the quick brown fox jumps over the lazy dog 0123456789' |
    head -c "$blob_bytes" >"$blob_file"; } || true
[[ "$(stat -c %s "$blob_file")" == "$blob_bytes" ]] || die "could not write the $blob_mib MiB blob"
printf '{"blob_id":"%s","kind":"text/plain","size_bytes":%s,"created_ms":%s}' \
    "$blob_id" "$blob_bytes" "$(date +%s%3N)" >"$meta_file"
sync "$blob_file" "$meta_file"

# Page-cache eviction of just the blob's two files (no root needed; nothing else is touched).
evict_blob() {
    python3 bench/page_cache.py "$blob_file" "$meta_file"
}

machine_json="$work/machine.json"
python3 - "$machine_json" <<'PY'
import json, os, platform, sys
model = ""
try:
    with open("/proc/cpuinfo") as f:
        model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
except OSError:
    pass
def cpu_pressure():
    # Share of time some runnable task waited for a CPU over the last 60 s (PSI), if available.
    try:
        with open("/proc/pressure/cpu") as f:
            return float(f.readline().split()[2].split("=")[1])
    except (OSError, IndexError, ValueError):
        return None
json.dump({"cores": os.cpu_count(), "cpu": model, "kernel": platform.release(),
           "loadavg_before": os.getloadavg()[0], "cpu_pressure_before": cpu_pressure()},
          open(sys.argv[1], "w"))
PY

# --- start and check -----------------------------------------------------------------------
start_server main
main_stderr="$work/server-main.stderr"
sleep 0.3
idle_rss=$(rss_kib "$server_pid" VmRSS)

list_body='{"jsonrpc":"2.0","id":1,"method":"list_skills","params":{"detail":"summary"}}'
describe_body='{"jsonrpc":"2.0","id":1,"method":"describe_skill","params":{"name":"text.stats"}}'
read_body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"read_blob\",\"params\":{\"blob_id\":\"$blob_id\",\"mode\":\"sample_tail\",\"max_bytes\":2000}}"

log "sanity checks (list_skills, describe_skill, create_blob + read_blob, the big blob's tail)"
python3 - "$url" "$blob_id" "$blob_file" <<'PY' || die "a sanity check failed"
import json, sys, urllib.request
url, blob_id, blob_file = sys.argv[1:]

def call(method, params):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200, response.status
        answer = json.load(response)
    assert "result" in answer, f"{method}: {answer}"
    return answer["result"]

skills = call("list_skills", {"detail": "summary"})["skills"]
assert any(s["name"] == "text.stats" for s in skills), skills
described = call("describe_skill", {"name": "text.stats"})
assert "text.stats" in json.dumps(described), described
created = call("create_blob", {"content": "hello blob tail", "kind": "text/plain"})
tail = call("read_blob", {"blob_id": created["blob_id"], "mode": "sample_tail", "max_bytes": 4})
assert tail["preview"] == "tail" and tail["truncated"], tail
with open(blob_file, "rb") as f:
    f.seek(-2000, 2)
    expected = f.read().decode()
    size = f.tell()
big = call("read_blob", {"blob_id": blob_id, "mode": "sample_tail", "max_bytes": 2000})
assert big["size_bytes"] == size and big["offset"] == size - 2000, big
assert big["preview"] == expected and big["truncated"] is True, "the tail differs from the file"
print(f"server-bench: {len(skills)} skills; big blob tail of {len(expected)} bytes matches",
      file=sys.stderr)
PY

# --- throughput and latency under load -----------------------------------------------------
# run_load METHOD TOOL BODY EXPECT: a 1 s warm-up, then the measured run, while sampling the
# server's RSS and both processes' CPU time. Writes $work/load-METHOD-TOOL.json.
run_load() {
    local method="$1" load_tool="$2" body="$3" expect="$4"
    local raw="$work/load-$method-$load_tool.out" lua="$work/$method.lua"
    if [[ "$load_tool" == wrk ]]; then
        # The body is plain JSON without single quotes or backslashes, so it is a Lua literal.
        cat >"$lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"tool":"wrk","requests":%d,"duration_us":%d,"bytes":%d,'
    .. '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"status_errors":%d,'
    .. '"timeouts":%d,"latency_us":{"min":%d,"mean":%.1f,"p50":%d,"p90":%d,"p99":%d,'
    .. '"p999":%d,"max":%d}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write,
    e.status, e.timeout, latency.min, latency.mean, latency:percentile(50),
    latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max))
end
LUA
        wrk -t"$threads" -c"$connections" -d1s --timeout 5s -s "$lua" "$url" >/dev/null ||
            die "wrk warm-up failed"
        wrk -t"$threads" -c"$connections" -d"${duration}s" --timeout 5s --latency -s "$lua" \
            "$url" >"$raw" &
    else
        "$loadgen" --url "$url" --body "$body" --expect "$expect" --connections "$connections" \
            --threads "$threads" --duration 1 --warmup 0 --label warmup >/dev/null ||
            die "load generator warm-up failed"
        "$loadgen" --url "$url" --body "$body" --expect "$expect" --connections "$connections" \
            --threads "$threads" --duration "$duration" --warmup 0 --label "$method" >"$raw" &
    fi
    load_pid=$!
    local cpu0 cpu1 load_cpu="" peak=0 rss sample started ended
    cpu0=$(cpu_ticks "$server_pid")
    started=$(date +%s%N)
    for _ in $(seq 1 $(((duration + 30) * 5))); do
        kill -0 "$load_pid" 2>/dev/null || break
        rss=$(rss_kib "$server_pid" VmRSS)
        [[ -n "$rss" ]] && ((rss > peak)) && peak=$rss
        sample=$(cpu_ticks "$load_pid")
        [[ -n "$sample" ]] && load_cpu=$sample
        sleep 0.2
    done
    if kill -0 "$load_pid" 2>/dev/null; then
        kill -TERM "$load_pid" 2>/dev/null || true
        die "the $load_tool run for $method did not finish within $((duration + 30)) s"
    fi
    local rc=0
    wait "$load_pid" || rc=$?
    load_pid=""
    ended=$(date +%s%N)
    cpu1=$(cpu_ticks "$server_pid")
    [[ -n "$cpu1" ]] || die "the server died during the $method load"
    ((rc == 0)) || { cat "$raw" >&2; die "the $load_tool run for $method failed (exit $rc)"; }
    python3 - "$raw" "$work/load-$method-$load_tool.json" "$method" "$load_tool" \
        "$((cpu1 - cpu0))" "${load_cpu:-0}" "$clock_ticks" "$peak" "$(((ended - started) / 1000))" <<'PY'
import json, sys
raw, dest, method, tool, server_ticks, load_ticks, hz, peak_kib, wall_us = sys.argv[1:]
line = next(l for l in open(raw) if l.startswith("{"))
r = json.loads(line)
if tool == "wrk":
    seconds = r["duration_us"] / 1e6
    errors = sum(r[k] for k in ("connect_errors", "read_errors", "write_errors",
                                "status_errors", "timeouts"))
    requests, rps = r["requests"], r["requests"] / seconds
else:
    seconds, errors, requests, rps = r["duration_s"], r["errors"], r["requests"], r["rps"]
hz, wall = int(hz), int(wall_us) / 1e6
server_cpu = int(server_ticks) / hz
result = {
    "method": method, "tool": tool, "requests": requests, "seconds": seconds, "rps": rps,
    "errors": errors, "latency_us": r["latency_us"], "raw": r,
    "server_cpu_s": server_cpu,
    "server_cpu_us_per_request": server_cpu * 1e6 / max(requests, 1),
    "server_cores": server_cpu / wall,
    "loadgen_cores": int(load_ticks) / hz / wall,
    "server_rss_peak_kib": int(peak_kib),
}
json.dump(result, open(dest, "w"), indent=1)
print(f"server-bench: {method} with {tool}: {rps:,.0f} req/s, p99 "
      f"{r['latency_us']['p99'] / 1000:.2f} ms, {errors} errors", file=sys.stderr)
PY
    python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["errors"]==0 else 1)' \
        "$work/load-$method-$load_tool.json" || { cat "$raw" >&2; die "errors under load ($method)"; }
}

for load_tool in "${tools[@]}"; do
    log "load: list_skills (summary), $connections connections, ${duration} s, $load_tool"
    run_load list_skills "$load_tool" "$list_body" '"skills":['
    log "load: describe_skill (text.stats), $connections connections, ${duration} s, $load_tool"
    run_load describe_skill "$load_tool" "$describe_body" '"name":"text.stats"'
done
hwm_after_load=$(rss_kib "$server_pid" VmHWM)
rss_after_load=$(rss_kib "$server_pid" VmRSS)

# --- read_blob tail of the big blob ----------------------------------------------------------
log "read_blob sample_tail (2000 bytes of $blob_mib MiB): $warm_reads sequential warm requests"
"$loadgen" --url "$url" --body "$read_body" --expect '"truncated":true' --connections 1 \
    --threads 1 --warmup 0 --warmup-requests 5 --max-requests $((warm_reads + 5)) \
    --duration 120 --samples-out "$work/read-warm.samples" --label read_blob_warm \
    >"$work/read-warm.json" || die "warm read_blob requests failed"

: >"$work/read-cold.samples"
if ((cold_reads > 0)); then
    log "read_blob sample_tail: $cold_reads requests, each after evicting the blob's files from the page cache"
    for index in $(seq 1 "$cold_reads"); do
        evict_blob || die "posix_fadvise eviction failed"
        if [[ "$index" == 1 ]] && command -v fincore >/dev/null; then
            fincore --bytes --noheadings --output RES "$blob_file" >"$work/fincore-after-evict.txt" 2>/dev/null || true
        fi
        sleep 0.2
        "$loadgen" --url "$url" --body "$read_body" --expect '"truncated":true' \
            --connections 1 --threads 1 --warmup 0 --max-requests 1 --duration 30 \
            --label read_blob_cold >"$work/read-cold-one.json" || die "cold read_blob failed"
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["latency_us"]["max"])' \
            "$work/read-cold-one.json" >>"$work/read-cold.samples"
    done
fi

: >"$work/read-drop.samples"
if [[ "${BENCH_DROP_CACHES:-0}" == 1 ]]; then
    log "read_blob sample_tail once after sync; echo 3 > /proc/sys/vm/drop_caches"
    sync
    if echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then
        sleep 0.2
        "$loadgen" --url "$url" --body "$read_body" --expect '"truncated":true' \
            --connections 1 --threads 1 --warmup 0 --max-requests 1 --duration 30 \
            --label read_blob_drop >"$work/read-drop-one.json" || die "read_blob after drop_caches failed"
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["latency_us"]["max"])' \
            "$work/read-drop-one.json" >>"$work/read-drop.samples"
    else
        log "cannot write /proc/sys/vm/drop_caches (not root?); skipped"
    fi
fi

# --- graceful shutdown ------------------------------------------------------------------------
log "SIGTERM to the idle server"
stop_server
idle_stop_code=$stop_code idle_stop_ms=$stop_ms
[[ "$idle_stop_code" == 0 ]] || die "the server did not exit 0 on SIGTERM (exit: $idle_stop_code)"
if grep -qi 'panicked' "$main_stderr"; then cat "$main_stderr" >&2; die "the server panicked"; fi

log "SIGTERM to a second server while $connections connections send describe_skill"
start_server under-load
"$loadgen" --url "$url" --body "$describe_body" --expect '"name":"text.stats"' \
    --connections "$connections" --threads "$threads" --duration 3 --warmup 0 --timeout 5 \
    --label shutdown_under_load >"$work/shutdown-load.json" &
load_pid=$!
sleep 1.5
stop_server
loaded_stop_code=$stop_code loaded_stop_ms=$stop_ms
for _ in $(seq 1 100); do kill -0 "$load_pid" 2>/dev/null || break; sleep 0.1; done
wait "$load_pid" || true
load_pid=""
[[ "$loaded_stop_code" == 0 ]] ||
    die "the server did not exit 0 on SIGTERM under load (exit: $loaded_stop_code)"
if grep -qi 'panicked' "$work/server-under-load.stderr"; then
    cat "$work/server-under-load.stderr" >&2; die "the server panicked"
fi

# --- report ------------------------------------------------------------------------------------
set +e
python3 - "$work" "$out" "$blob_mib" "$connections" "$threads" "$duration" "${tools[*]}" \
    "$idle_rss" "$rss_after_load" "$hwm_after_load" "$idle_stop_code" "$idle_stop_ms" \
    "$loaded_stop_code" "$loaded_stop_ms" <<'PY'
import json, math, os, statistics, sys
(work, out, blob_mib, connections, threads, duration, tools, idle_rss, rss_after, hwm,
 idle_code, idle_ms, loaded_code, loaded_ms) = sys.argv[1:]
machine = json.load(open(os.path.join(work, "machine.json")))
machine["loadavg_after"] = os.getloadavg()[0]
try:
    with open("/proc/pressure/cpu") as f:
        machine["cpu_pressure_after"] = float(f.readline().split()[2].split("=")[1])
except (OSError, IndexError, ValueError):
    machine["cpu_pressure_after"] = None
pressure = ""
if machine.get("cpu_pressure_before") is not None and machine["cpu_pressure_after"] is not None:
    pressure = (f" CPU pressure (PSI some avg60: share of time a runnable task waited for a "
                f"core) {machine['cpu_pressure_before']:.0f}% before, "
                f"{machine['cpu_pressure_after']:.0f}% after.")

def samples(name):
    path = os.path.join(work, name)
    return [int(l) for l in open(path) if l.strip()] if os.path.exists(path) else []

def pct(values, fraction):
    values = sorted(values)
    if not values:
        return None
    rank = math.ceil(fraction * len(values))  # nearest rank
    return values[min(max(rank, 1), len(values)) - 1]

def ms(us):
    return "–" if us is None else f"{us / 1000:.2f}"

loads = []
for tool in tools.split():
    for method in ("list_skills", "describe_skill"):
        loads.append(json.load(open(os.path.join(work, f"load-{method}-{tool}.json"))))
warm = samples("read-warm.samples")
cold = samples("read-cold.samples")
drop = samples("read-drop.samples")
shutdown_load = {}
try:
    shutdown_load = json.loads(open(os.path.join(work, "shutdown-load.json")).read())
except (OSError, ValueError):
    pass
evicted = ""
try:
    evicted = open(os.path.join(work, "fincore-after-evict.txt")).read().strip()
except OSError:
    pass

targets = {}
lines = [
    f"## Server: {connections} keep-alive connections, {duration} s per run; read_blob tail of a {blob_mib} MiB blob",
    "",
    f"Machine: {machine['cores']} cores ({machine['cpu']}), shared by the server and the load "
    f"generator; load average {machine['loadavg_before']:.2f} before, "
    f"{machine['loadavg_after']:.2f} after.{pressure} Load generator threads: {threads}.",
    "",
    "| method | tool | requests/s | p50 ms | p99 ms | p99.9 ms | max ms | errors | server CPU µs/req | server cores | load-gen cores | server-only estimate req/s | server RSS peak MiB | target | met |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
]
for r in loads:
    l = r["latency_us"]
    met = r["rps"] >= 20000 and r["errors"] == 0
    targets[f"{r['method']}_{r['tool']}_rps"] = met
    estimate = (machine["cores"] or 2) * 1e6 / r["server_cpu_us_per_request"]
    lines.append(
        f"| `{r['method']}` | {r['tool']} | {r['rps']:,.0f} | {ms(l['p50'])} | {ms(l['p99'])} | "
        f"{ms(l['p999'])} | {ms(l['max'])} | {r['errors']} | {r['server_cpu_us_per_request']:.0f} | "
        f"{r['server_cores']:.2f} | {r['loadgen_cores']:.2f} | {estimate:,.0f} | "
        f"{r['server_rss_peak_kib'] / 1024:.1f} | ≥ 20,000 req/s | {'yes' if met else 'NO'} |")
lines += [
    "",
    "| read_blob `sample_tail`, 2000 bytes | requests | median ms | p99 ms | max ms | target | met |",
    "| --- | ---: | ---: | ---: | ---: | --- | --- |",
]
warm_met = bool(warm) and pct(warm, 0.99) < 5000
targets["read_blob_tail_warm_p99_under_5ms"] = warm_met
lines.append(f"| warm page cache, sequential, one connection | {len(warm)} | "
             f"{ms(statistics.median(warm) if warm else None)} | {ms(pct(warm, 0.99))} | "
             f"{ms(max(warm) if warm else None)} | p99 < 5 ms | {'yes' if warm_met else 'NO'} |")
if cold:
    cold_met = statistics.median(cold) < 5000
    lines.append(f"| blob files evicted (posix_fadvise DONTNEED) before each | {len(cold)} | "
                 f"{ms(statistics.median(cold))} | {ms(pct(cold, 0.99))} | {ms(max(cold))} | "
                 f"median < 5 ms (info) | {'yes' if cold_met else 'no'} |")
if drop:
    lines.append(f"| after `echo 3 > /proc/sys/vm/drop_caches` | {len(drop)} | {ms(drop[0])} | – | "
                 f"{ms(drop[0])} | info | – |")
lines += [
    "",
    "| memory and shutdown | value |",
    "| --- | --- |",
    f"| server RSS idle after start | {int(idle_rss or 0) / 1024:.1f} MiB |",
    f"| server RSS after the load runs / peak (VmHWM) | {int(rss_after or 0) / 1024:.1f} MiB / {int(hwm or 0) / 1024:.1f} MiB |",
    f"| SIGTERM, idle server | exit {idle_code} after {idle_ms} ms |",
    f"| SIGTERM with {connections} connections sending | exit {loaded_code} after {loaded_ms} ms; "
    f"the load generator got {shutdown_load.get('recorded', '?')} good answers, "
    f"{shutdown_load.get('status_errors', '?')} HTTP errors, {shutdown_load.get('body_errors', '?')} bad bodies, "
    f"{shutdown_load.get('io_errors', '?')} cut connections, {shutdown_load.get('connect_errors', '?')} failed connects (after the listener closed) |",
]
for kind, message in shutdown_load.get("first_errors", {}).items():
    lines.append(f"| first {kind} error during the shutdown run | `{message[:160]}` |")
if evicted:
    lines.append(f"| blob bytes still cached right after eviction (fincore) | {evicted} |")
lines += [
    "",
    "Server CPU µs/req is the server's CPU time (utime+stime) during the run divided by the "
    "requests answered; \"server-only estimate\" is cores / that, i.e. the rate if the server had "
    "every core to itself. It is an estimate, not a measurement.",
]
report = "\n".join(lines) + "\n"
print(report, end="")
open(os.path.join(out, "server-results.md"), "w").write(report)
json.dump({"machine": machine, "loads": loads,
           "read_blob_us": {"warm": warm, "cold_fadvise": cold, "drop_caches": drop},
           "rss_kib": {"idle": idle_rss, "after_load": rss_after, "hwm": hwm},
           "shutdown": {"idle": {"exit": idle_code, "ms": int(idle_ms)},
                        "under_load": {"exit": loaded_code, "ms": int(loaded_ms),
                                       "load": shutdown_load}},
           "targets": targets},
          open(os.path.join(out, "server-results.json"), "w"), indent=1)
PY
report_rc=$?
set -e
((report_rc == 0)) || die "writing the report failed"

if [[ "${BENCH_ENFORCE:-0}" == 1 ]]; then
    python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["targets"]; sys.exit(0 if all(t.values()) else 3)' \
        "$out/server-results.json" || { log "a target was missed"; exit 3; }
fi
