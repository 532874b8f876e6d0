#!/usr/bin/env python3
"""The web app's skills page over a large catalog: server time per request, and time to first
render in headless Chromium, beside the same page's bytes served as a static file by Python's
http.server (the peer: what the bytes cost without any rendering) and beside a 100-skill catalog.

    python3 bench/web_measure.py BINARY SKILLS_10000 SKILLS_100 CHROMEDRIVER OUT_JSON

Stdlib only. Chromium is driven over the W3C WebDriver protocol (JSON over HTTP to chromedriver).
"""

import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from serve_process import free_port, start_serve  # noqa: E402

REQUESTS = int(os.environ.get("WEB_BENCH_REQUESTS", "100"))
RENDERS = int(os.environ.get("WEB_BENCH_RENDERS", "7"))
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1280,900",
]


def log(message):
    print(f"web-bench: {message}", file=sys.stderr, flush=True)


def time_requests(host, port, path, count):
    """Milliseconds per GET over one keep-alive connection (after one warm-up), and the body."""
    connection = http.client.HTTPConnection(host, port, timeout=60)
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        raise SystemExit(f"GET {path} answered {response.status}")
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        samples.append((time.perf_counter() - started) * 1000)
    connection.close()
    return samples, body


def summary(samples):
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1], 3),
        "count": len(ordered),
    }


class WebDriver:
    """The few WebDriver commands the render timing needs."""

    def __init__(self, chromedriver):
        self.port = free_port()
        self.process = subprocess.Popen(
            [chromedriver, f"--port={self.port}"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                self.call("GET", "/status")
                break
            except OSError:
                time.sleep(0.1)
        self.profile = tempfile.mkdtemp(prefix="web-bench-chromium-")
        answer = self.call("POST", "/session", {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": shutil.which("chromium") or "/usr/bin/chromium",
                "args": CHROMIUM_ARGS + [f"--user-data-dir={self.profile}"],
            },
        }}})
        self.session = answer["value"]["sessionId"]

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())

    def goto(self, url):
        self.call("POST", f"/session/{self.session}/url", {"url": url})

    def script(self, source):
        return self.call("POST", f"/session/{self.session}/execute/sync",
                         {"script": source, "args": []})["value"]

    def close(self):
        try:
            self.call("DELETE", f"/session/{self.session}")
        finally:
            os.killpg(self.process.pid, 9)
            self.process.wait()
            shutil.rmtree(self.profile, ignore_errors=True)


TIMING = """
const paint = performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint');
const nav = performance.getEntriesByType('navigation')[0];
return {fcp: paint ? paint.startTime : null, ttfb: nav.responseStart, dom: nav.domContentLoadedEventEnd,
        load: nav.loadEventEnd, bytes: nav.transferSize, rows: document.querySelectorAll('tbody tr').length};
"""


def time_renders(driver, url, count):
    driver.goto("about:blank")
    driver.goto(url)  # warm-up: assets cached, syntax set loaded
    runs = []
    for _ in range(count):
        driver.goto("about:blank")
        driver.goto(url)
        deadline = time.monotonic() + 10
        timing = driver.script(TIMING)
        while timing["fcp"] is None and time.monotonic() < deadline:
            time.sleep(0.05)
            timing = driver.script(TIMING)
        runs.append(timing)
    return {
        "first_contentful_paint_ms": round(statistics.median(r["fcp"] for r in runs), 1),
        "time_to_first_byte_ms": round(statistics.median(r["ttfb"] for r in runs), 1),
        "dom_content_loaded_ms": round(statistics.median(r["dom"] for r in runs), 1),
        "rows": runs[-1]["rows"],
        "renders": count,
    }


def serve_static(folder):
    """Python's http.server over FOLDER on a free port; returns the process and the port."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
         "--directory", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    return process, port


def main():
    binary, large, small, chromedriver, out_json = sys.argv[1:6]
    results = {"requests": REQUESTS}
    data = tempfile.mkdtemp(prefix="web-bench-data-")
    servers = {}
    try:
        for label, root in (("10000", large), ("100", small)):
            process, url = start_serve(binary, [root, "--listen", "127.0.0.1:0", "--data-dir",
                                                f"{data}/{label}", "--no-watch"])
            servers[label] = (process, url.removesuffix("/rpc"))
        large_base = servers["10000"][1]
        host, port = large_base.removeprefix("http://").split(":")
        for name, path in (("skills_page", "/skills"), ("search_rows", "/skills?q=pdf&fragment=rows"),
                           ("last_page", "/skills?page=200"), ("healthz", "/healthz")):
            samples, body = time_requests(host, int(port), path, REQUESTS)
            results[f"server_10000_{name}"] = summary(samples) | {"bytes": len(body)}
            if name == "skills_page":
                page_body = body
            log(f"10,000 skills {path}: median {results[f'server_10000_{name}']['median_ms']} ms")
        small_host, small_port = servers["100"][1].removeprefix("http://").split(":")
        samples, _ = time_requests(small_host, int(small_port), "/skills", REQUESTS)
        results["server_100_skills_page"] = summary(samples)

        # The peer: the same bytes as a static file (its assets copied beside it).
        static = Path(tempfile.mkdtemp(prefix="web-bench-static-"))
        (static / "skills.html").write_bytes(page_body)
        (static / "assets").mkdir()
        for asset in ("app.css", "highlight.css", "app.js", "favicon.svg"):
            with urllib.request.urlopen(f"{large_base}/assets/{asset}") as response:
                (static / "assets" / asset).write_bytes(response.read())
        static_process, static_port = serve_static(static)
        samples, _ = time_requests("127.0.0.1", static_port, "/skills.html", REQUESTS)
        results["static_peer_skills_page"] = summary(samples)

        driver = WebDriver(chromedriver)
        try:
            results["chromium_10000"] = time_renders(driver, f"{large_base}/skills", RENDERS)
            results["chromium_100"] = time_renders(driver, f"{servers['100'][1]}/skills", RENDERS)
            results["chromium_static_peer"] = time_renders(
                driver, f"http://127.0.0.1:{static_port}/skills.html", RENDERS)
        finally:
            driver.close()
            static_process.kill()
            shutil.rmtree(static, ignore_errors=True)
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait()
        shutil.rmtree(data, ignore_errors=True)
    Path(out_json).write_text(json.dumps(results, indent=2))
    page = results["server_10000_skills_page"]["median_ms"]
    print("| measure | skillbox, 10,000 skills | skillbox, 100 skills | static peer (same bytes) |")
    print("|---|---|---|---|")
    print(f"| server time, GET /skills (median of {REQUESTS}) | {page} ms | "
          f"{results['server_100_skills_page']['median_ms']} ms | "
          f"{results['static_peer_skills_page']['median_ms']} ms |")
    print(f"| server time, search rows `?q=pdf&fragment=rows` | "
          f"{results['server_10000_search_rows']['median_ms']} ms | | |")
    print(f"| server time, last page `?page=200` | "
          f"{results['server_10000_last_page']['median_ms']} ms | | |")
    print(f"| server floor, GET /healthz | {results['server_10000_healthz']['median_ms']} ms | | |")
    for key, label in (("first_contentful_paint_ms", "Chromium first contentful paint"),
                       ("time_to_first_byte_ms", "Chromium time to first byte"),
                       ("dom_content_loaded_ms", "Chromium DOMContentLoaded")):
        print(f"| {label} (median of {RENDERS}) | {results['chromium_10000'][key]} ms | "
              f"{results['chromium_100'][key]} ms | {results['chromium_static_peer'][key]} ms |")
    print(f"| page size | {results['server_10000_skills_page']['bytes']} bytes, "
          f"{results['chromium_10000']['rows']} rows | | |")


if __name__ == "__main__":
    main()
