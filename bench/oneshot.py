#!/usr/bin/env python3
"""Time whole one-shot commands as a user runs them, interleaved, and print a markdown table.

    bench/oneshot.py SKILLBOX_BINARY [--iterations N] [--warmup N]

Cases, each a fresh process per iteration:
  direct       the interpreter skillbox picks, run on the same script with the same arguments
  run          `skillbox --root R run hello hello.py` (default sandbox; caches warm)
  run-off      the same with `--sandbox off`
  run-cold     `run` after deleting the probe cache (what the first command after a boot or an
               upgrade pays)
The interpreter for `direct` is the one `skillbox doctor --json` marks `chosen` for python.
Prints the table on stdout and one JSON line; progress goes to stderr.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def log(message):
    print(f"oneshot: {message}", file=sys.stderr, flush=True)


def timed(command, env):
    started = time.perf_counter()
    completed = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - started) * 1000.0
    if completed.returncode != 0 or completed.stdout.strip() != b"hello":
        raise SystemExit(
            f"command failed ({completed.returncode}): {' '.join(command)}\n"
            f"stdout: {completed.stdout[-400:]!r}\nstderr: {completed.stderr[-2000:]!r}"
        )
    return elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    options = parser.parse_args()
    binary = os.path.abspath(options.binary)

    work = tempfile.mkdtemp(prefix="skillbox-oneshot-")
    os.chmod(work, 0o755)
    skill = os.path.join(work, "skills", "hello")
    os.makedirs(os.path.join(skill, "scripts"))
    for folder in (os.path.join(work, "skills"), skill, os.path.join(skill, "scripts")):
        os.chmod(folder, 0o755)
    with open(os.path.join(skill, "SKILL.md"), "w") as handle:
        handle.write("---\nname: hello\ndescription: Prints hello.\n---\nRun scripts/hello.py.\n")
    script = os.path.join(skill, "scripts", "hello.py")
    with open(script, "w") as handle:
        handle.write("print('hello')\n")
    os.chmod(script, 0o755)
    runtime = os.path.join(work, "runtime")
    # The system folders only on PATH, so that every case (the sandbox off included, which
    # would otherwise take a pyenv shim's interpreter) runs the same python3 as `direct`.
    env = dict(
        os.environ,
        SKILLBOX_RUNTIME_DIR=runtime,
        SKILLBOX_LOG="error",
        PATH=os.environ.get("ONESHOT_BENCH_PATH", "/usr/local/bin:/usr/bin:/bin"),
    )
    root = os.path.join(work, "skills")

    doctor = subprocess.run(
        [binary, "--root", root, "doctor", "--json"], env=env, capture_output=True, check=True
    )
    report = json.loads(doctor.stdout)
    python = next(
        entry["program"]
        for entry in report["interpreters"]
        if entry["language"] == "python" and entry["chosen"]
    )
    log(f"sandbox level {report['level']}, python {python}")

    run = [binary, "--root", root, "run", "hello", "hello.py"]
    cases = {
        "direct": (lambda: timed([python, "-E", "-s", "-B", script], env)),
        "run": (lambda: timed(run, env)),
        "run-off": (lambda: timed([binary, "--sandbox", "off", *run[1:]], env)),
        "run-cold": None,
    }
    cache = os.path.join(runtime, "host-probe.json")

    def cold():
        if os.path.exists(cache):
            os.remove(cache)
        return timed(run, env)

    cases["run-cold"] = cold
    samples = {name: [] for name in cases}
    for _ in range(options.warmup):
        for measure in cases.values():
            measure()
    for iteration in range(options.iterations):
        for name, measure in cases.items():
            samples[name].append(measure())
        if (iteration + 1) % 10 == 0:
            log(f"{iteration + 1}/{options.iterations}")

    direct = statistics.median(samples["direct"])
    rows = []
    print("| case | median ms | p90 ms | overhead vs direct (median) |")
    print("| --- | ---: | ---: | ---: |")
    for name, values in samples.items():
        values.sort()
        median = statistics.median(values)
        p90 = values[int(len(values) * 0.9) - 1]
        overhead = median - direct
        rows.append({"case": name, "median_ms": round(median, 2), "p90_ms": round(p90, 2),
                     "overhead_ms": round(overhead, 2)})
        print(f"| {name} | {median:.2f} | {p90:.2f} | {'—' if name == 'direct' else f'+{overhead:.2f}'} |")
    print(json.dumps({"python": python, "level": report["level"], "rows": rows}))


if __name__ == "__main__":
    main()
