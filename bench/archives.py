#!/usr/bin/env python3
"""Memory of `skillbox prompt` and `skillbox serve` over archives that expand to far more than
they weigh (issue 15): three `.skill` archives of about 2 MB each, each expanding to about
240 MB in 60 entries compressed about 124 to 1 (under the zip-bomb ratio of 200). And what
runs of an archived skill cost: five `skillbox run`s of a script in a fourth archive
(20 such entries, 80 MiB unpacked), their wall times and the disk left in the runtime folder.

    python3 bench/archives.py OUT_DIR BIN [BIN ...]

For each binary: the peak RSS (VmHWM) and wall time of `prompt --format xml` over the three
archives, and the peak RSS of `serve` once it has announced its address (catalog loaded).
VmHWM is read from /proc while the process runs (sampled every 2 ms for `prompt`, which
ends by itself; once for `serve`), since getrusage(RUSAGE_CHILDREN) would carry this
script's own size. Runs use `--sandbox off` so that binaries of different ages compare on the
unpacking alone. Prints a markdown table and one JSON line.
"""

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
import zipfile

from serve_process import start_serve, status_number

ENTRY_BYTES = 4 * 1024 * 1024
ENTRIES_PER_ARCHIVE = 60
ARCHIVES = 3
RUNS = 3
# Runs of the archived skill: the first unpacks, the others reuse the copy.
RUNNER_RUNS = 5
RUNNER_ENTRIES = 20


def entry_content() -> bytes:
    """4 MiB of 1 KiB runs of one byte, each followed by 4 random bytes: ~124:1 with deflate."""
    rng = random.Random(1)
    parts = []
    size = 0
    while size < ENTRY_BYTES:
        parts.append(b"a" * 1024 + bytes(rng.randrange(256) for _ in range(4)))
        size += 1028
    return b"".join(parts)


def make_archives(folder: str) -> list:
    os.makedirs(folder, exist_ok=True)
    paths = [os.path.join(folder, f"expands-{n}.skill") for n in range(ARCHIVES)]
    if all(os.path.exists(path) for path in paths):
        return paths
    content = entry_content()
    for number, path in enumerate(paths):
        name = f"expands-{number}"
        with zipfile.ZipFile(path + ".part", "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(
                f"{name}/SKILL.md",
                f"---\nname: {name}\ndescription: Expands to far more than it weighs.\n---\nBody.\n",
            )
            for entry in range(ENTRIES_PER_ARCHIVE):
                archive.writestr(f"{name}/assets/data-{entry}.txt", content)
        os.replace(path + ".part", path)
    return paths


def make_runner(folder: str) -> str:
    """An archived skill with a script and RUNNER_ENTRIES assets like the archives' entries."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "runner.skill")
    if os.path.exists(path):
        return path
    content = entry_content()
    with zipfile.ZipFile(path + ".part", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("runner/SKILL.md",
                         "---\nname: runner\ndescription: Runs from an archive.\n---\nBody.\n")
        archive.writestr("runner/scripts/hello.py", "print('hello from the archive')\n")
        for entry in range(RUNNER_ENTRIES):
            archive.writestr(f"runner/assets/data-{entry}.txt", content)
    os.replace(path + ".part", path)
    return path


def folder_bytes(folder: str) -> int:
    total = 0
    for parent, _, files in os.walk(folder):
        for name in files:
            total += os.lstat(os.path.join(parent, name)).st_size
    return total


def measure_runs(binary: str, runner: str, runtime: str) -> tuple:
    """Wall seconds of RUNNER_RUNS runs of the runner's script in a fresh runtime folder, and the bytes
    left in that folder's `archives/` afterwards."""
    if os.path.exists(runtime):
        subprocess.run(["chmod", "-R", "u+w", runtime], check=True)
        shutil.rmtree(runtime)
    os.makedirs(runtime, mode=0o700)
    environment = dict(os.environ, SKILLBOX_RUNTIME_DIR=runtime)
    environment.pop("SKILLBOX_ROOTS", None)
    seconds = []
    for _ in range(RUNNER_RUNS):
        started = time.perf_counter()
        done = subprocess.run([binary, "--root", runner, "--sandbox", "off", "run", "runner",
                               "hello.py"], env=environment, capture_output=True)
        seconds.append(time.perf_counter() - started)
        if done.returncode != 0 or b"hello from the archive" not in done.stdout:
            raise SystemExit(f"run failed: {done.stderr.decode()}")
    return seconds, folder_bytes(os.path.join(runtime, "archives"))


def measure_prompt(binary: str, archives: list) -> tuple:
    arguments = [binary, "prompt", "--format", "xml"]
    for archive in archives:
        arguments += ["--root", archive]
    started = time.perf_counter()
    process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while process.poll() is None:
        peak = max(peak, status_number(process.pid, "VmHWM") or 0)
        time.sleep(0.002)
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"prompt failed: {process.stderr.read().decode()}")
    return peak, seconds


def measure_serve(binary: str, archives: list, data_dir: str) -> int:
    process, _ = start_serve(binary, [*archives, "--listen", "127.0.0.1:0", "--data-dir",
                                      data_dir, "--sandbox", "off"], timeout_seconds=120)
    try:
        return status_number(process.pid, "VmHWM") or 0
    finally:
        process.kill()
        process.wait()


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out, binaries = sys.argv[1], sys.argv[2:]
    archives = make_archives(os.path.join(out, "expanding-archives"))
    on_disk = sum(os.path.getsize(path) for path in archives)
    runner = make_runner(os.path.join(out, "runner-archive"))
    results = []
    for binary in binaries:
        run_seconds, left_bytes = measure_runs(binary, runner, os.path.join(out, "runtime"))
        prompt = [measure_prompt(binary, archives) for _ in range(RUNS)]
        serve = [measure_serve(binary, archives, os.path.join(out, "serve-data")) for _ in range(RUNS)]
        results.append({
            "binary": binary,
            "prompt_peak_mib": max(peak for peak, _ in prompt) / 1024,
            "prompt_median_seconds": sorted(seconds for _, seconds in prompt)[RUNS // 2],
            "serve_peak_mib": max(serve) / 1024,
            "first_run_seconds": run_seconds[0],
            "later_runs_median_seconds": statistics.median(run_seconds[1:]),
            "runtime_archives_mib_after_runs": left_bytes / 2**20,
        })
    print(f"three archives, {on_disk / 1e6:.1f} MB on disk in all, "
          f"{ARCHIVES * ENTRIES_PER_ARCHIVE * ENTRY_BYTES / 2**20:.0f} MiB unpacked\n")
    print("| binary | `prompt` peak RSS | `prompt` median wall | `serve` peak RSS once loaded "
          f"| first `run` | later `run`s (median) | unpacked copies left after {RUNNER_RUNS} runs |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for result in results:
        print(f"| `{result['binary']}` | {result['prompt_peak_mib']:.0f} MiB | "
              f"{result['prompt_median_seconds'] * 1000:.0f} ms | {result['serve_peak_mib']:.0f} MiB "
              f"| {result['first_run_seconds'] * 1000:.0f} ms "
              f"| {result['later_runs_median_seconds'] * 1000:.0f} ms "
              f"| {result['runtime_archives_mib_after_runs']:.0f} MiB |")
    print(json.dumps({"archives_bytes": on_disk, "results": results}))


if __name__ == "__main__":
    main()
