"""Load test for `execute_skill`: many concurrent calls against a real `skillbox serve`.

    python3 bench/run_load.py SKILLBOX_BIN --calls 200 [--max-queued-runs N] [--label NAME]

Starts the server on 127.0.0.1 (port 0, examples/skills, a fresh data folder, the default
sandbox), fires CALLS `execute_skill` requests at the same moment from CALLS threads, and checks:
every call is answered with a completed Run or a clean busy error (-32000), no sandboxed process
is left behind, and the server's memory stays bounded. Prints one JSON object on stdout.
Bounded: at most 1,000 calls, each with a 120 s client timeout, on loopback only.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import requests

from serve_process import start_serve, status_number

SANDBOX_UIDS = range(3_000_000_000, 3_000_000_000 + 4_096)


def sandbox_processes():
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        uid = status_number(entry, "Uid")
        if uid is not None and uid in SANDBOX_UIDS:
            found.append(int(entry))
    return found


def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            parent = status_number(entry, "PPid")
            if parent is not None:
                children.setdefault(parent, []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def compare_sequential(url, request, count):
    """Median wall time of one execute_skill round trip (sandboxed run in a fresh minimal root)
    against the same function called by a bare, unsandboxed `python3 -I` process."""
    if not 1 <= count <= 500:
        sys.exit("--sequential must be from 1 to 500")
    session = requests.Session()
    code_dir = os.path.abspath("examples/skills/text.stats/0.10.0/code")
    bare = ["/usr/bin/python3", "-I", "-B", "-c",
            "import sys, json; sys.path.insert(0, %r); import main; "
            "print(json.dumps(main.main(json.loads(sys.stdin.read()))))" % code_dir]
    payload = json.dumps(request["params"]["args"])
    served, direct = [], []
    for round_index in range(count):
        # Alternate so both see the same machine noise.
        started = time.perf_counter()
        answer = session.post(url, json=request, timeout=120).json()
        served.append(time.perf_counter() - started)
        if answer.get("result", {}).get("status") != "completed":
            sys.exit(f"sequential run {round_index} failed: {answer}")
        started = time.perf_counter()
        subprocess.run(bare, input=payload, capture_output=True, text=True, check=True)
        direct.append(time.perf_counter() - started)
    served_ms = 1000 * percentile(served, 0.5)
    direct_ms = 1000 * percentile(direct, 0.5)
    return {
        "runs": count,
        "execute_skill_median_ms": round(served_ms, 1),
        "bare_python_median_ms": round(direct_ms, 1),
        "ratio": round(served_ms / direct_ms, 2),
    }


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--max-queued-runs", type=int)
    parser.add_argument("--label", default="default limits")
    parser.add_argument("--sequential", type=int, default=0,
                        help="also time this many one-at-a-time runs against a bare python3 call")
    options = parser.parse_args()
    if not 1 <= options.calls <= 1000:
        sys.exit("--calls must be from 1 to 1000")
    extra = []
    if options.max_queued_runs is not None:
        extra += ["--max-queued-runs", str(options.max_queued_runs)]
    data_dir = tempfile.mkdtemp(prefix="skillbox-run-load-")
    server, url = start_serve(options.binary, ["examples/skills", "--listen", "127.0.0.1:0",
                                               "--data-dir", data_dir, *extra])
    text = "The quick brown fox jumps over the lazy dog. " * 40
    request = {"jsonrpc": "2.0", "id": 1, "method": "execute_skill",
               "params": {"name": "text.stats", "args": {"text": text, "top": 3}}}
    # Warm up once (interpreter caches, bytecode of the standard library).
    warm = requests.post(url, json=request, timeout=120).json()
    if warm.get("result", {}).get("status") != "completed":
        server.kill()
        sys.exit(f"warm-up run failed: {warm}")
    sequential = compare_sequential(url, request, options.sequential) if options.sequential else None
    rss_before = status_number(server.pid, "VmRSS")
    barrier = threading.Barrier(options.calls)
    answers = [None] * options.calls
    latencies = [None] * options.calls

    def call(index):
        session = requests.Session()
        barrier.wait()
        started = time.perf_counter()
        try:
            answers[index] = session.post(url, json=dict(request, id=index), timeout=120).json()
        except Exception as error:  # a transport failure is a failed check, not a crash
            answers[index] = {"transport_error": str(error)}
        latencies[index] = time.perf_counter() - started

    peak = {"rss_kib": rss_before or 0, "processes": 0}
    sampling = threading.Event()

    def sample():
        while not sampling.is_set():
            rss = status_number(server.pid, "VmRSS")
            if rss:
                peak["rss_kib"] = max(peak["rss_kib"], rss)
            peak["processes"] = max(peak["processes"], len(descendants(server.pid)))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    threads = [threading.Thread(target=call, args=(index,)) for index in range(options.calls)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    wall = time.perf_counter() - started
    sampling.set()
    sampler.join()
    time.sleep(0.5)
    leftover_children = descendants(server.pid)
    leftover_sandbox = sandbox_processes()
    hwm = status_number(server.pid, "VmHWM")
    server.send_signal(signal.SIGTERM)
    try:
        exit_code = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        exit_code = "killed after 30 s"
    completed = [i for i, a in enumerate(answers) if a and a.get("result", {}).get("status") == "completed"]
    busy = [i for i, a in enumerate(answers) if a and a.get("error", {}).get("code") == -32000]
    other = [a for a in answers if a is None or (a.get("result", {}).get("status") != "completed" and a.get("error", {}).get("code") != -32000)]
    completed_latencies = [latencies[i] for i in completed]
    busy_latencies = [latencies[i] for i in busy]
    wrong_output = [answers[i] for i in completed if answers[i]["result"]["output"].get("words") != 360]
    report = {
        "label": options.label,
        "calls": options.calls,
        "completed": len(completed),
        "busy": len(busy),
        "other": len(other),
        "other_examples": other[:3],
        "wrong_output": len(wrong_output),
        "wall_s": round(wall, 3),
        "runs_per_s": round(len(completed) / wall, 1) if wall else None,
        "completed_p50_ms": round(1000 * percentile(completed_latencies, 0.5), 1) if completed else None,
        "completed_p99_ms": round(1000 * percentile(completed_latencies, 0.99), 1) if completed else None,
        "busy_p99_ms": round(1000 * percentile(busy_latencies, 0.99), 1) if busy else None,
        "server_rss_before_mib": round((rss_before or 0) / 1024, 1),
        "server_rss_peak_mib": round(peak["rss_kib"] / 1024, 1),
        "server_hwm_mib": round((hwm or 0) / 1024, 1),
        "peak_descendant_processes": peak["processes"],
        "leftover_children": len(leftover_children),
        "leftover_sandbox_processes": len(leftover_sandbox),
        "server_exit": exit_code,
        "sequential": sequential,
    }
    report["ok"] = (
        report["other"] == 0
        and report["wrong_output"] == 0
        and report["completed"] + report["busy"] == options.calls
        and report["completed"] >= 1
        and not leftover_children
        and not leftover_sandbox
        and exit_code == 0
    )
    print(json.dumps(report))
    sys.exit(0 if report["ok"] else 1)


if __name__ == "__main__":
    main()
