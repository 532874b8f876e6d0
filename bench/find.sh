#!/usr/bin/env bash
# Search benchmark (issue 13): the quality and speed of `find_skills` over the shared corpus
# mixed with 10,000 generated distractor skills, in one run:
#   * in process (crates/skillbox-core/examples/find_measure.rs): index build (median of
#     FIND_BUILDS), query p50/p99 over the labelled queries of bench/find_queries.json, and
#     recall@1 / recall@5 for the BM25 index and, side by side, a keyword baseline (skills
#     ranked by how many query words their name and description contain);
#   * as a user runs it: `skillbox find QUERY` as a whole process, next to `skillbox list`
#     (the catalog load alone) and `grep -rli` over the same SKILL.md files (how people search
#     a folder of skills today), median of FIND_RUNS runs each; and one `find_skills` request
#     to `skillbox serve` over keep-alive next to a `list_skills` request (FIND_RUNS x 20 each).
#
#   bench/find.sh
#
# Environment (all optional):
#   SKILLBOX_BIN   the skillbox binary (default: build target/release/skillbox)
#   BENCH_SEED     generator seed (default 1)
#   FIND_COUNT     generated distractors (default 10000)
#   FIND_BUILDS    index builds timed in process (default 15)
#   FIND_QUERY_RUNS  runs of each labelled query in process (default 50)
#   FIND_RUNS      whole-process runs per command (default 15)
#
# Results: markdown on stdout (also bench/out/find-results.md), raw numbers in
# bench/out/find-results.json. Exits non-zero when a step fails.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'find: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

seed="$(number BENCH_SEED "${BENCH_SEED:-1}" 0 999999)"
count="$(number FIND_COUNT "${FIND_COUNT:-10000}" 1 200000)"
builds="$(number FIND_BUILDS "${FIND_BUILDS:-15}" 1 1000)"
query_runs="$(number FIND_QUERY_RUNS "${FIND_QUERY_RUNS:-50}" 1 10000)"
runs="$(number FIND_RUNS "${FIND_RUNS:-15}" 1 1000)"
corpus="$repo/../shared/corpus"
[[ -d "$corpus" ]] || die "the shared corpus is missing: $corpus"

out="bench/out"
mkdir -p "$out"
skills="$out/skills-$count"
[[ "$seed" == 1 ]] || skills="$skills-seed$seed"
ensure_generated_skills "$skills" "$count" "$seed"

bin="$(skillbox_binary "${SKILLBOX_BIN:-}")"
log "building: cargo build --release -p skillbox-core --example find_measure"
cargo build --release -p skillbox-core --example find_measure >&2 || die "cargo build failed"

log "in process: $builds builds, $query_runs runs of each labelled query"
target/release/examples/find_measure bench/find_queries.json "$skills" "$corpus" \
    --builds "$builds" --query-runs "$query_runs" >"$out/find-results.json" \
    || die "find_measure failed"

query="make an animated GIF for our Slack channel"
# Warm the page cache once, so no command pays for the first read of the tree.
"$bin" --root "$skills" --root "$corpus" find "$query" >/dev/null 2>&1 || die "skillbox find failed"
log "as a process: $runs runs each of skillbox find, skillbox list, grep -rli"
python3 - "$runs" "$out/find-results.json" "$bin" "$skills" "$corpus" "$query" <<'PY'
import json, statistics, subprocess, sys, time
runs, results_path, binary, skills, corpus, query = sys.argv[1:7]
runs = int(runs)
commands = {
    "skillbox find": [binary, "--root", skills, "--root", corpus, "find", query],
    "skillbox list": [binary, "--root", skills, "--root", corpus, "list", "--json"],
    "grep -rli": ["grep", "-rli", "--include=SKILL.md", "slack", skills, corpus],
}
timed = {}
for _ in range(runs):
    for name, command in commands.items():
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        timed.setdefault(name, []).append((time.perf_counter() - started) * 1000)
with open(results_path) as handle:
    results = json.load(handle)
results["process_ms"] = {name: statistics.median(times) for name, times in timed.items()}
results["process_runs"] = runs
with open(results_path, "w") as handle:
    json.dump(results, handle, indent=2)
PY

log "as a client sees it: $runs x 20 find_skills and list_skills requests to skillbox serve"
PYTHONPATH=bench python3 - "$runs" "$out/find-results.json" "$bin" "$skills" "$corpus" "$query" "$out" <<'PY'
import http.client, json, os, shutil, signal, statistics, sys, time, urllib.parse
from serve_process import start_serve
runs, results_path, binary, skills, corpus, query, out = sys.argv[1:8]
data = os.path.join(out, "find-serve-data")
shutil.rmtree(data, ignore_errors=True)
process, url = start_serve(binary, [skills, corpus, "--listen", "127.0.0.1:0", "--data-dir", data,
                                    "--no-watch", "--sandbox", "off"])
try:
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    def call(method, params):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        started = time.perf_counter()
        connection.request("POST", parts.path, body, {"Content-Type": "application/json"})
        answer = json.loads(connection.getresponse().read())
        elapsed = (time.perf_counter() - started) * 1000
        if "result" not in answer:
            raise SystemExit(f"{method} failed: {answer}")
        return elapsed
    first = call("find_skills", {"query": query})  # may wait for the index to be built
    timed = {"find_skills": [], "list_skills": []}
    for _ in range(int(runs) * 20):
        timed["find_skills"].append(call("find_skills", {"query": query, "limit": 5}))
        timed["list_skills"].append(call("list_skills", {"limit": 5}))
finally:
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    shutil.rmtree(data, ignore_errors=True)
with open(results_path) as handle:
    results = json.load(handle)
results["request_ms"] = {name: statistics.median(times) for name, times in timed.items()}
results["request_ms"]["first find_skills"] = first
results["requests"] = len(timed["find_skills"])
with open(results_path, "w") as handle:
    json.dump(results, handle, indent=2)
PY

python3 - "$out/find-results.json" "$count" <<'PY' | tee "$out/find-results.md"
import json, sys
results = json.load(open(sys.argv[1]))
recall, build, query, process = results["recall"], results["build_ms"], results["query_us"], results["process_ms"]
print(f"{results['skills']} skills ({sys.argv[2]} generated + the corpus), {results['queries']} labelled queries")
print()
print("| | BM25 index (`find_skills`) | keyword baseline |")
print("|---|---:|---:|")
print(f"| recall@1 | {recall['bm25_at_1']:.2f} | {recall['keyword_at_1']:.2f} |")
print(f"| recall@5 | {recall['bm25_at_5']:.2f} | {recall['keyword_at_5']:.2f} |")
print()
print("| in process | figure | target |")
print("|---|---:|---:|")
print(f"| catalog load (for scale) | {results['load_ms']:.0f} ms | |")
print(f"| index build, median of {build['runs']} (min–max) | {build['median']:.0f} ms ({build['min']:.0f}–{build['max']:.0f}) | ≤ 100 ms |")
print(f"| query p50 | {query['p50']:.0f} µs | ≤ 1 ms |")
print(f"| query p99 | {query['p99']:.0f} µs | |")
print()
print(f"| whole process, median of {results['process_runs']} | ms | / `skillbox list` |")
print("|---|---:|---:|")
base = process["skillbox list"]
for name, ms in process.items():
    print(f"| `{name}` | {ms:.0f} | {ms / base:.2f} |")
requests = results["request_ms"]
print()
print(f"| one request to `skillbox serve` over keep-alive, median of {results['requests']} | ms | / `list_skills` |")
print("|---|---:|---:|")
for name in ["find_skills", "list_skills"]:
    print(f"| `{name}` (limit 5) | {requests[name]:.2f} | {requests[name] / requests['list_skills']:.2f} |")
print(f"| the first `find_skills` after start (the index may still be building) | {requests['first find_skills']:.1f} | |")
if results["misses"]:
    print()
    print("Not in the top 5:")
    for miss in results["misses"]:
        print(f"- \"{miss['query']}\" (wanted {', '.join(miss['expect'])}; got {', '.join(miss['got'])})")
PY
