#!/usr/bin/env python3
"""Measurement for bench/trust.sh (standard library only): the cost of the trust check per run.

Builds bench/out/trust-project/.claude/skills with a copy of examples/skills/csv-insights, a
small `tools.json` skill (echo-tool) and a generated bulky skill (1,000 files of 10 KiB, and a
tool), trusts the folder with policy `pin` in a private config folder, and uses a private runtime
folder (bench/out/trust-runtime, through SKILLBOX_RUNTIME_DIR). Then:

1. one-shot `skillbox run` of one script per skill from the project (gated: the check digests
   the skill, and the run starts from the skill's verified copy in the runtime folder's skill
   store), from the project with the store emptied before each run (the copy made during the
   run), and with `--root .claude/skills` (not gated), interleaved;
2. warm tool calls: `execute_skill` of a `tools.json` tool over one kept-alive HTTP connection,
   to a `skillbox serve` in the project (gated, `pin`) and to one naming the folder as its root
   (not gated), interleaved.

Reports medians and the differences.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_process import start_serve  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BULKY_FILES = 1_000
BULKY_FILE_BYTES = 10 * 1024
WARMUP_RUNS = 3
WARM_CALLS = 200
ECHO_HANDLER = "def handler(args):\n    return {'n': args.get('n', 0)}\n"
ECHO_TOOLS = json.dumps([{
    "name": "echo", "description": "Returns its number.", "script": "scripts/echo.py",
    "parameters": {"n": {"type": "integer", "description": "Any number.", "optional": True}},
}])


def log(message: str) -> None:
    print(f"trust-bench: {message}", file=sys.stderr, flush=True)


def make_project(out: Path) -> tuple[Path, Path, Path]:
    project = out / "trust-project"
    config = out / "trust-config"
    runtime = out / "trust-runtime"
    for folder in (project, config):
        if folder.exists():
            shutil.rmtree(folder)
    empty_store(runtime)
    skills = project / ".claude" / "skills"
    shutil.copytree(REPO / "examples/skills/csv-insights", skills / "csv-insights")
    echo = skills / "echo-tool"
    (echo / "scripts").mkdir(parents=True)
    (echo / "SKILL.md").write_text(
        "---\nname: echo-tool\ndescription: One small tool.\n---\nEcho.\n"
    )
    (echo / "tools.json").write_text(ECHO_TOOLS)
    (echo / "scripts/echo.py").write_text(ECHO_HANDLER)
    bulky = skills / "bulky"
    (bulky / "scripts").mkdir(parents=True)
    (bulky / "SKILL.md").write_text(
        "---\nname: bulky\ndescription: Many data files.\n---\nBulky.\n"
    )
    (bulky / "scripts/hello.sh").write_text("#!/bin/bash\necho hello\n")
    (bulky / "tools.json").write_text(ECHO_TOOLS)
    (bulky / "scripts/echo.py").write_text(ECHO_HANDLER)
    block = bytes(range(256)) * (BULKY_FILE_BYTES // 256)
    for index in range(BULKY_FILES):
        folder = bulky / "data" / f"{index // 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"part-{index:04d}.bin").write_bytes(block)
    for path in [project, *project.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return project, config, runtime


def empty_store(runtime: Path) -> None:
    """Remove the runtime folder's skill store (its trees are read-only), so the next gated run
    makes its verified copy again."""
    store = runtime / "store"
    if not store.exists():
        return
    for path in [store, *store.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o700)
    shutil.rmtree(store)


def timed(command: list[str], cwd: Path, env: dict[str, str], before=None) -> float:
    if before is not None:
        before()
    started = time.perf_counter()
    result = subprocess.run(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        timeout=60,
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{command} failed ({result.returncode}): {result.stderr.decode()}")
    return elapsed


def one_shot(skillbox: str, project: Path, env: dict[str, str], runtime: Path,
             runs: int) -> dict:
    sample = str(project / ".claude/skills/csv-insights/assets/sample.csv")
    cases = {
        "csv-insights": ["run", "csv-insights", "head.sh", "--", sample, "1"],
        "bulky": ["run", "bulky", "hello.sh"],
    }
    results = {}
    for name, run in cases.items():
        commands = {
            "gated": ([skillbox, *run], None),
            "gated_copying": ([skillbox, *run], lambda: empty_store(runtime)),
            "explicit": ([skillbox, "--root", ".claude/skills", *run], None),
        }
        for command, before in commands.values():
            for _ in range(WARMUP_RUNS):
                timed(command, project, env, before)
        times = {mode: [] for mode in commands}
        for _ in range(runs):
            for mode, (command, before) in commands.items():
                times[mode].append(timed(command, project, env, before))
        medians = {mode: statistics.median(values) * 1000 for mode, values in times.items()}
        results[name] = {
            "gated_median_ms": round(medians["gated"], 2),
            "gated_copying_median_ms": round(medians["gated_copying"], 2),
            "explicit_median_ms": round(medians["explicit"], 2),
            "check_ms": round(medians["gated"] - medians["explicit"], 2),
            "copy_ms": round(medians["gated_copying"] - medians["gated"], 2),
            "ratio": round(medians["gated"] / medians["explicit"], 3),
            "runs": runs,
        }
        log(f"one-shot {name}: {results[name]}")
    return results


class Rpc:
    """JSON-RPC calls over one kept-alive HTTP connection."""

    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        self.path = parsed.path
        self.connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)

    def call(self, method: str, params: dict) -> dict:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        self.connection.request("POST", self.path, body, {"Content-Type": "application/json"})
        answer = json.loads(self.connection.getresponse().read())
        if "result" not in answer:
            raise SystemExit(f"{method} failed: {answer}")
        return answer["result"]


def warm_calls(skillbox: str, project: Path, env: dict[str, str], calls: int) -> dict:
    saved_environment, saved_directory = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(project)
    servers = []
    try:
        with tempfile.TemporaryDirectory() as data:
            listen = ["--listen", "127.0.0.1:0", "--data-dir"]
            gated, gated_url = start_serve(skillbox, [*listen, f"{data}/gated"])
            servers.append(gated)
            explicit, explicit_url = start_serve(
                skillbox, [".claude/skills", *listen, f"{data}/explicit"]
            )
            servers.append(explicit)
            clients = {"gated": Rpc(gated_url), "explicit": Rpc(explicit_url)}
            results = {}
            for skill in ("echo-tool", "bulky"):
                params = {"name": skill, "args": {"tool": "echo", "arguments": {"n": 1}}}

                def call(client: Rpc) -> float:
                    started = time.perf_counter()
                    run = client.call("execute_skill", params)
                    elapsed = time.perf_counter() - started
                    if run.get("status") != "completed" or run.get("output") != {"n": 1}:
                        raise SystemExit(f"execute_skill {skill} failed: {run}")
                    return elapsed

                for client in clients.values():
                    for _ in range(WARMUP_RUNS):
                        call(client)
                times = {mode: [] for mode in clients}
                for _ in range(calls):
                    for mode, client in clients.items():
                        times[mode].append(call(client))
                medians = {mode: statistics.median(values) * 1000
                           for mode, values in times.items()}
                results[skill] = {
                    "gated_median_ms": round(medians["gated"], 3),
                    "explicit_median_ms": round(medians["explicit"], 3),
                    "check_ms": round(medians["gated"] - medians["explicit"], 3),
                    "calls": calls,
                }
                log(f"warm call {skill}: {results[skill]}")
            return results
    finally:
        for server in servers:
            server.kill()
            server.wait()
        os.chdir(saved_directory)
        os.environ.clear()
        os.environ.update(saved_environment)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skillbox", required=True)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--calls", type=int, default=WARM_CALLS)
    parser.add_argument("--out", type=Path, required=True)
    arguments = parser.parse_args()
    project, config, runtime = make_project(arguments.out.resolve())
    env = {
        key: value for key, value in os.environ.items()
        if key not in ("SKILLBOX_ROOTS", "SKILLBOX_AUDIT_LOG", "XDG_CONFIG_HOME",
                       "SKILLBOX_TOKEN")
    }
    env["SKILLBOX_CONFIG_DIR"] = str(config)
    env["SKILLBOX_RUNTIME_DIR"] = str(runtime)
    env["HOME"] = str(arguments.out.resolve() / "trust-home")
    skillbox = arguments.skillbox
    trusted = subprocess.run(
        [skillbox, "trust", "--trust-policy", "pin"], cwd=project, env=env,
        capture_output=True, text=True, timeout=120,
    )
    if trusted.returncode != 0:
        raise SystemExit(f"skillbox trust failed: {trusted.stderr}")
    results = {
        "one_shot": one_shot(skillbox, project, env, runtime, arguments.runs),
        "warm_calls": warm_calls(skillbox, project, env, arguments.calls),
    }
    lines = [
        "One-shot `skillbox run`:",
        "",
        "| skill | `--root` (no check) median | trusted project, `pin` median | check cost"
        " | `pin`, copy made in the run | copy cost |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, result in results["one_shot"].items():
        lines.append(
            f"| {name} | {result['explicit_median_ms']:.2f} ms | {result['gated_median_ms']:.2f} ms"
            f" | **{result['check_ms']:+.2f} ms** | {result['gated_copying_median_ms']:.2f} ms"
            f" | **{result['copy_ms']:+.2f} ms** |"
        )
    lines += [
        "",
        "Warm tool calls (`execute_skill` on a `tools.json` tool, `skillbox serve`, one kept-alive"
        " connection):",
        "",
        "| skill | `serve ROOT` (no check) median | project, `pin` median | check cost |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, result in results["warm_calls"].items():
        lines.append(
            f"| {name} | {result['explicit_median_ms']:.3f} ms | {result['gated_median_ms']:.3f} ms"
            f" | **{result['check_ms']:+.3f} ms** |"
        )
    report = "\n".join(lines) + "\n"
    (arguments.out / "trust-results.md").write_text(report)
    (arguments.out / "trust-results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(report, end="")


if __name__ == "__main__":
    main()
