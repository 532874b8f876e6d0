#!/usr/bin/env python3
"""Measurement for bench/trust.sh (standard library only): the cost of the trust check per run.

Builds bench/out/trust-project/.claude/skills with a copy of examples/skills/csv-insights and a
generated bulky skill (1,000 files of 10 KiB), trusts the folder with policy `pin` in a private
config folder, then times `skillbox run` of one script per skill from the project (gated) and
with `--root .claude/skills` (not gated), interleaved, and reports medians and the difference.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BULKY_FILES = 1_000
BULKY_FILE_BYTES = 10 * 1024
WARMUP_RUNS = 3


def log(message: str) -> None:
    print(f"trust-bench: {message}", file=sys.stderr, flush=True)


def make_project(out: Path) -> tuple[Path, Path]:
    project = out / "trust-project"
    config = out / "trust-config"
    for folder in (project, config):
        if folder.exists():
            shutil.rmtree(folder)
    skills = project / ".claude" / "skills"
    shutil.copytree(REPO / "examples/skills/csv-insights", skills / "csv-insights")
    bulky = skills / "bulky"
    (bulky / "scripts").mkdir(parents=True)
    (bulky / "SKILL.md").write_text(
        "---\nname: bulky\ndescription: Many data files.\n---\nBulky.\n"
    )
    (bulky / "scripts/hello.sh").write_text("#!/bin/bash\necho hello\n")
    block = bytes(range(256)) * (BULKY_FILE_BYTES // 256)
    for index in range(BULKY_FILES):
        folder = bulky / "data" / f"{index // 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"part-{index:04d}.bin").write_bytes(block)
    for path in [project, *project.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return project, config


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        timeout=60,
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{command} failed ({result.returncode}): {result.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skillbox", required=True)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--out", type=Path, required=True)
    arguments = parser.parse_args()
    project, config = make_project(arguments.out.resolve())
    env = {
        key: value for key, value in os.environ.items()
        if key not in ("SKILLBOX_ROOTS", "SKILLBOX_AUDIT_LOG", "XDG_CONFIG_HOME")
    }
    env["SKILLBOX_CONFIG_DIR"] = str(config)
    env["HOME"] = str(arguments.out.resolve() / "trust-home")
    skillbox = arguments.skillbox
    trusted = subprocess.run(
        [skillbox, "trust", "--trust-policy", "pin"], cwd=project, env=env,
        capture_output=True, text=True, timeout=120,
    )
    if trusted.returncode != 0:
        raise SystemExit(f"skillbox trust failed: {trusted.stderr}")
    sample = str(project / ".claude/skills/csv-insights/assets/sample.csv")
    cases = {
        "csv-insights": ["run", "csv-insights", "head.sh", "--", sample, "1"],
        "bulky": ["run", "bulky", "hello.sh"],
    }
    results = {}
    for name, run in cases.items():
        commands = {
            "gated": [skillbox, *run],
            "explicit": [skillbox, "--root", ".claude/skills", *run],
        }
        for command in commands.values():
            for _ in range(WARMUP_RUNS):
                timed(command, project, env)
        times = {mode: [] for mode in commands}
        for _ in range(arguments.runs):
            for mode, command in commands.items():
                times[mode].append(timed(command, project, env))
        medians = {mode: statistics.median(values) * 1000 for mode, values in times.items()}
        results[name] = {
            "gated_median_ms": round(medians["gated"], 2),
            "explicit_median_ms": round(medians["explicit"], 2),
            "check_ms": round(medians["gated"] - medians["explicit"], 2),
            "ratio": round(medians["gated"] / medians["explicit"], 3),
            "runs": arguments.runs,
        }
        log(f"{name}: {results[name]}")
    lines = [
        "| skill | `--root` (no check) median | trusted project, `pin` median | check cost | ratio |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, result in results.items():
        lines.append(
            f"| {name} | {result['explicit_median_ms']:.2f} ms | {result['gated_median_ms']:.2f} ms"
            f" | **{result['check_ms']:+.2f} ms** | {result['ratio']:.3f}x |"
        )
    report = "\n".join(lines) + "\n"
    (arguments.out / "trust-results.md").write_text(report)
    (arguments.out / "trust-results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(report, end="")


if __name__ == "__main__":
    main()
