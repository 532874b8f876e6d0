"""Scale-out benchmark: the same load against one `skillbox serve` and against two replicas
sharing one bucket, in one run.

    python3 bench/replicas_measure.py SKILLBOX_BIN LOADGEN_BIN MOTO_SERVER
        [--duration 10] [--connections 64]

Starts moto's S3 server on 127.0.0.1 (a free port) with one bucket, then for each case (one
replica, two replicas) starts the replicas with `--blob-store s3://BUCKET/bench` over
examples/skills and applies the load with two load generator processes of CONNECTIONS/2
keep-alive connections each: with one replica both aim at it, with two each aims at its own
(round-robin by connection, as a load balancer spreading connections would). Methods:
`list_skills` (answered from memory) and `read_blob` sample_head of a 2 KiB blob in the bucket
(one metadata GET and one ranged GET per request). Prints a markdown table on stdout and JSON
in bench/out/replicas-results.json. Loopback only; every load run is bounded in time.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

from serve_process import cpu_seconds, free_port, start_serve

BUCKET = "skillbox-bench"
METHODS = {
    "list_skills": {"jsonrpc": "2.0", "id": 1, "method": "list_skills",
                    "params": {"detail": "summary"}},
    "read_blob": None,  # filled in once the blob exists
}


def start_moto(moto_server, log_path):
    port = free_port()
    log = open(log_path, "w")
    process = subprocess.Popen([moto_server, "-H", "127.0.0.1", "-p", str(port)],
                               stdout=log, stderr=subprocess.STDOUT)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(endpoint + "/moto-api/", timeout=2).read()
            break
        except OSError:
            time.sleep(0.2)
    else:
        process.kill()
        raise SystemExit(f"moto_server did not start; see {log_path}")
    request = urllib.request.Request(f"{endpoint}/{BUCKET}", method="PUT", data=b"")
    urllib.request.urlopen(request, timeout=10).read()
    return process, endpoint


def rpc(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(request, timeout=30).read())


def load(loadgen, urls, body, connections, duration, label):
    """Two load generator processes, one per URL in `urls` (the same URL twice for one
    replica), CONNECTIONS/2 connections each; their summed throughput and worst latencies."""
    processes = []
    for index, url in enumerate(urls):
        processes.append(subprocess.Popen(
            [loadgen, "--url", url, "--body", json.dumps(body),
             "--connections", str(connections // len(urls)), "--threads", "1",
             "--duration", str(duration), "--warmup", "1", "--label", f"{label}-{index}"],
            stdout=subprocess.PIPE, text=True))
    results = []
    for process in processes:
        output, _ = process.communicate(timeout=duration + 60)
        if process.returncode != 0:
            raise SystemExit(f"the load generator failed for {label}")
        results.append(json.loads(output.strip().splitlines()[-1]))
    return {
        "requests": sum(result["requests"] for result in results),
        "rps": sum(result["rps"] for result in results),
        "errors": sum(result["errors"] for result in results),
        "p50_ms": max(result["latency_us"]["p50"] for result in results) / 1000,
        "p99_ms": max(result["latency_us"]["p99"] for result in results) / 1000,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("skillbox")
    parser.add_argument("loadgen")
    parser.add_argument("moto_server")
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    arguments = parser.parse_args()
    if not 1 <= arguments.duration <= 300 or not 2 <= arguments.connections <= 1024:
        raise SystemExit("--duration must be 1 to 300 s and --connections 2 to 1024")
    os.makedirs("bench/out/replicas-work", exist_ok=True)
    moto, endpoint = start_moto(arguments.moto_server, "bench/out/replicas-work/moto.log")
    environment = dict(os.environ, AWS_ENDPOINT_URL=endpoint, AWS_REGION="us-east-1",
                       AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench")
    os.environ.update(environment)
    servers = []
    rows = []
    try:
        def start(index):
            data = f"bench/out/replicas-work/data-{index}"
            os.makedirs(data, exist_ok=True)
            process, url = start_serve(arguments.skillbox, [
                "examples/skills", "--listen", "127.0.0.1:0", "--data-dir", data,
                "--blob-store", f"s3://{BUCKET}/bench", "--no-watch"])
            servers.append(process)
            return process, url

        first, first_url = start(0)
        blob = rpc(first_url, {"jsonrpc": "2.0", "id": 1, "method": "create_blob",
                               "params": {"content": "x" * 2048, "kind": "text/plain"}})
        METHODS["read_blob"] = {"jsonrpc": "2.0", "id": 1, "method": "read_blob",
                                "params": {"blob_id": blob["result"]["blob_id"],
                                           "mode": "sample_head"}}
        cases = [("one replica", [first_url, first_url], [first])]
        second, second_url = start(1)
        cases.append(("two replicas", [first_url, second_url], [first, second]))
        # The second replica idles through the one-replica case: it holds no load.
        for method, body in METHODS.items():
            for case, urls, processes in cases:
                before = sum(cpu_seconds(process.pid) for process in processes)
                moto_before = cpu_seconds(moto.pid)
                measured = load(arguments.loadgen, urls, body, arguments.connections,
                                arguments.duration, f"{method}-{case}")
                measured["server_cpu_us_per_request"] = round(
                    (sum(cpu_seconds(process.pid) for process in processes) - before)
                    / max(measured["requests"], 1) * 1e6, 1)
                measured["s3_server_cpu_s"] = round(cpu_seconds(moto.pid) - moto_before, 1)
                measured.update(method=method, case=case)
                print(f"replicas-bench: {method}, {case}: {measured['rps']:.0f} requests/s",
                      file=sys.stderr)
                rows.append(measured)
    finally:
        for process in servers:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
        moto.kill()
        moto.wait()
    with open("bench/out/replicas-results.json", "w") as results:
        json.dump({"cores": os.cpu_count(), "duration_s": arguments.duration,
                   "connections": arguments.connections, "rows": rows}, results, indent=2)
    print(f"{os.cpu_count()} cores; {arguments.connections} connections from two load "
          f"generator processes; {arguments.duration} s per row\n")
    print("| method | case | requests/s | vs one replica | p50 | p99 | errors "
          "| skillbox CPU per request | moto CPU |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    baseline = {}
    for row in rows:
        baseline.setdefault(row["method"], row["rps"])
        ratio = row["rps"] / baseline[row["method"]]
        print(f"| `{row['method']}` | {row['case']} | {row['rps']:,.0f} | {ratio:.2f}x "
              f"| {row['p50_ms']:.2f} ms | {row['p99_ms']:.2f} ms | {row['errors']} "
              f"| {row['server_cpu_us_per_request']} µs | {row['s3_server_cpu_s']} s |")


if __name__ == "__main__":
    main()
