#!/usr/bin/env python3
"""Hostile bodies against `skillbox serve`: what one 32 MiB request costs the server.

    python3 bench/hostile.py

For each case a fresh `skillbox serve examples/skills` (sandbox off) is started on a port-0
loopback address, one request is posted, and the server's peak RSS (VmHWM), CPU time (utime +
stime from /proc/PID/stat) and the wall time to the answer are recorded:
  batch    a JSON array of about eleven million `{}` (32 MiB)
  params   one `list_skills` request whose params hold a 32 MiB tree of small objects
  blob     a legitimate `create_blob` of 24 MiB of text, for comparison

Environment (all optional):
  SKILLBOX_BIN                  use this skillbox binary instead of building it
                                (cargo build --release -p skillbox-cli)
  HOSTILE_BENCH_MIB             body size in MiB (default 32, from 1 to 63)
  HOSTILE_BENCH_RSS_LIMIT_MIB   kill the server when its RSS passes this (default 12288), so
                                an unbounded server cannot take the machine down; the case is
                                then reported as killed

Results: a markdown table on stdout, also bench/out/hostile-results.md, and the raw numbers in
bench/out/hostile-results.json. Progress goes to stderr. All traffic goes to 127.0.0.1.
"""
import json, os, shutil, subprocess, sys, tempfile, threading, time, urllib.request

from serve_process import cpu_seconds, start_serve, status_number


def log(message):
    print(f"hostile-bench: {message}", file=sys.stderr, flush=True)


def whole_number(name, default, low, high):
    text = os.environ.get(name, str(default))
    if not text.isdigit() or not low <= int(text) <= high:
        log(f"error: {name} must be a whole number from {low} to {high}, not {text!r}")
        raise SystemExit(1)
    return int(text)


repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(repo)
mib = whole_number("HOSTILE_BENCH_MIB", 32, 1, 63)
limit_mib = whole_number("HOSTILE_BENCH_RSS_LIMIT_MIB", 12288, 64, 1_000_000)
binary = os.environ.get("SKILLBOX_BIN")
if binary:
    log(f"using SKILLBOX_BIN={binary} (no build)")
else:
    log("building: cargo build --release -p skillbox-cli")
    if subprocess.run(["cargo", "build", "--release", "-p", "skillbox-cli"],
                      stdout=sys.stderr).returncode != 0:
        log("error: cargo build failed")
        raise SystemExit(1)
    binary = os.path.join(repo, "target/release/skillbox")
if not os.access(binary, os.X_OK):
    log(f"error: skillbox binary not found or not executable: {binary}")
    raise SystemExit(1)
size = mib * 1024 * 1024
os.makedirs("bench/out", exist_ok=True)


def bodies():
    batch = bytearray(b"[")
    while len(batch) < size:
        batch += b"{},"
    batch += b"{}]"
    params = bytearray(b'{"jsonrpc": "2.0", "id": 2, "method": "list_skills", "params": {"filler": [')
    while len(params) < size:
        params += b'{"a": [{}]},'
    params += b"{}]}}"
    content = "0123456789abcdef" * (24 * 1024 * 1024 // 16)
    blob = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "create_blob",
                       "params": {"content": content, "kind": "text/plain"}}).encode()
    return [("batch", f"array of `{{}}`, {mib} MiB", bytes(batch)),
            ("params", f"`list_skills` with a {mib} MiB params tree", bytes(params)),
            ("blob", "`create_blob`, 24 MiB of text (legitimate)", blob)]


def measure(name, label, body):
    data = tempfile.mkdtemp(prefix="skillbox-hostile-")
    server, url = start_serve(binary, ["examples/skills", "--listen", "127.0.0.1:0", "--data-dir",
                                       data, "--sandbox", "off"], timeout_seconds=30)
    pid = server.pid
    before_kib = (status_number(pid, "VmHWM") or 0)
    cpu_before = cpu_seconds(pid)
    killed = threading.Event()
    stop = threading.Event()
    largest_kib = [0]

    def watch():
        while not stop.is_set():
            resident = (status_number(pid, "VmRSS") or 0)
            largest_kib[0] = max(largest_kib[0], resident)
            if resident > limit_mib * 1024:
                killed.set()
                server.kill()
                return
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    started = time.perf_counter()
    answer = ""
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            answer = response.read().decode()
    except Exception as error:  # the server was killed, or refused the request
        answer = f"no answer: {error}"
    wall = time.perf_counter() - started
    time.sleep(0.2)  # let the server finish freeing, so its CPU time is complete
    peak_kib = max((status_number(pid, "VmHWM") or 0), largest_kib[0])
    cpu = cpu_seconds(pid) - cpu_before if not killed.is_set() else None
    stop.set()
    watcher.join()
    server.kill()
    server.wait()
    shutil.rmtree(data, ignore_errors=True)
    try:
        parsed = json.loads(answer)
        if "error" in parsed:
            outcome = f"error {parsed['error']['code']}"
        elif "size_bytes" in parsed["result"]:
            outcome = f"blob of {parsed['result']['size_bytes']} bytes"
        else:
            outcome = "a result (the params were read whole)"
    except (ValueError, KeyError, TypeError):
        outcome = "killed at the RSS limit" if killed.is_set() else answer[:80]
    result = {"case": name, "label": label, "body_bytes": len(body), "outcome": outcome,
              "killed": killed.is_set(), "rss_before_kib": before_kib, "peak_rss_kib": peak_kib,
              "cpu_seconds": cpu, "wall_seconds": wall}
    log(json.dumps(result))
    return result


results = [measure(*case) for case in bodies()]
json.dump({"binary": binary, "mib": mib, "rss_limit_mib": limit_mib, "results": results},
          open("bench/out/hostile-results.json", "w"), indent=1)
lines = ["| body | answer | server peak RSS | server CPU | wall |", "|---|---|---:|---:|---:|"]
for r in results:
    peak = f"{r['peak_rss_kib'] / 1024:.0f} MiB" + (" (killed)" if r["killed"] else "")
    cpu = "n/a" if r["cpu_seconds"] is None else f"{r['cpu_seconds']:.2f} s"
    lines.append(f"| {r['label']} | {r['outcome']} | {peak} | {cpu} | {r['wall_seconds']:.2f} s |")
table = "\n".join(lines) + "\n"
open("bench/out/hostile-results.md", "w").write(table)
print(table, end="")
