#!/usr/bin/env python3
"""Measurement helpers for bench/catalog.sh (standard library only; any python3).

Subcommands (each prints JSON on stdout unless noted, progress on stderr):

  stamp-ok DIR COUNT SEED
      Exit 0 when DIR/.generator.json says DIR was made by the current
      bench/generate_skills.py with this COUNT and SEED, else exit 1.

  time-cmd --runs N --warmup W -- CMD...
      Fallback timer when hyperfine is missing: runs CMD (stdout to /dev/null)
      W + N times, times the N with perf_counter and reports median/min/mean/
      max seconds.
      Exit codes 0 and 1 count as success; anything else fails.

  hyperfine-json FILE
      Convert a hyperfine --export-json file to the same shape as time-cmd.

  merge-times FILE...
      Pool the "times" of several time-cmd / hyperfine-json outputs into one summary.

  rss-cmd --runs N -- CMD...
      Peak RSS of CMD in KiB: /usr/bin/time -v when it exists, else sampled
      VmHWM from /proc (see sampled_peak_rss_kib). The maximum over N runs.

  skills-ref --python PY --root DIR --runs N
      Runs bench/skills_ref_validate.py N times (one process each), collects
      each run's JSON and the whole-process wall time, reports medians.

  skillbox-summary FILE
      Best-effort reading of `skillbox validate --json` output: how many skills
      it reports and how many are invalid (null when the shape is unknown).

  report --count N --skillbox FILE --skillbox-rss KIB --skills-ref FILE
         --skillbox-summary FILE --timer NAME --rss-method NAME [--out-json FILE]
      Prints the markdown report and writes the combined JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
OK_EXIT = {0, 1}  # `skillbox validate`: 0 all valid, 1 some invalid, 2 usage/I-O error


def log(message: str) -> None:
    print(f"catalog: {message}", file=sys.stderr, flush=True)


def stats_of(seconds: list[float]) -> dict:
    return {
        "runs": len(seconds),
        "median": statistics.median(seconds),
        "min": min(seconds),
        "max": max(seconds),
        "mean": statistics.fmean(seconds),
        "times": seconds,
    }


# --------------------------------------------------------------------------- subcommands


def cmd_stamp_ok(args) -> int:
    stamp = Path(args.dir) / ".generator.json"
    try:
        data = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return 1
    generator = hashlib.sha256((BENCH / "generate_skills.py").read_bytes()).hexdigest()[:16]
    same = (data.get("count") == args.count and data.get("seed") == args.seed
            and data.get("generator") == generator and data.get("skills") == args.count)
    return 0 if same else 1


def run_checked(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode not in OK_EXIT:
        sys.stderr.write(proc.stderr.decode(errors="replace")[-2000:])
        raise SystemExit(f"catalog: `{' '.join(cmd)}` exited {proc.returncode}")
    return elapsed


def cmd_time(args) -> int:
    for _ in range(args.warmup):
        run_checked(args.cmd)
    seconds = [run_checked(args.cmd) for _ in range(args.runs)]
    result = stats_of(seconds)
    print(json.dumps(result))
    return 0


def cmd_hyperfine_json(args) -> int:
    data = json.loads(Path(args.file).read_text())["results"][0]
    codes = set(data.get("exit_codes") or [])
    if codes - OK_EXIT:
        raise SystemExit(f"catalog: skillbox exited with {sorted(codes)} under hyperfine")
    print(json.dumps(stats_of(list(data["times"]))))
    return 0


def cmd_merge_times(args) -> int:
    times: list[float] = []
    for file in args.files:
        times += json.loads(Path(file).read_text())["times"]
    result = stats_of(times)
    result["batches"] = len(args.files)
    print(json.dumps(result))
    return 0


def sampled_peak_rss_kib(cmd: list[str]) -> int:
    """Peak RSS of cmd without /usr/bin/time.

    getrusage(RUSAGE_CHILDREN) is no good here: Linux carries the RSS high-water mark
    across fork+exec, so a small child of this Python process reports Python's size.
    Instead poll VmHWM (per address space, so reset by exec) while the child runs, only
    from samples taken after the exec (process name matches). Can miss growth in the
    last ~millisecond before exit."""
    name = Path(cmd[0]).name[:15]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            text = status.read_text()
        except OSError:
            break
        if re.search(rf"^Name:\s+{re.escape(name)}$", text, re.M):
            match = re.search(r"^VmHWM:\s+(\d+) kB", text, re.M)
            if match:
                peak = max(peak, int(match.group(1)))
        time.sleep(0.0005)
    if proc.wait() not in OK_EXIT:
        raise SystemExit(f"catalog: `{' '.join(cmd)}` exited {proc.returncode}")
    if peak == 0:
        raise SystemExit("catalog: could not sample the RSS of the skillbox process")
    return peak


def cmd_rss(args) -> int:
    peaks = []
    gnu_time = Path("/usr/bin/time")
    for _ in range(args.runs):
        if gnu_time.exists():
            proc = subprocess.run([str(gnu_time), "-v", *args.cmd],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if proc.returncode not in OK_EXIT:
                raise SystemExit(f"catalog: `{' '.join(args.cmd)}` exited {proc.returncode}")
            match = re.search(rb"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
            if not match:
                raise SystemExit("catalog: /usr/bin/time -v printed no maximum resident set size")
            peaks.append(int(match.group(1)))
            method = "/usr/bin/time -v"
        else:
            peaks.append(sampled_peak_rss_kib(args.cmd))
            method = "sampled /proc/PID/status VmHWM (no /usr/bin/time)"
    print(json.dumps({"max_rss_kib": max(peaks), "runs": peaks, "method": method}))
    return 0


def cmd_skills_ref(args) -> int:
    script = str(BENCH / "skills_ref_validate.py")
    runs = []
    for index in range(args.runs):
        start = time.perf_counter()
        proc = subprocess.run([args.python, script, args.root], capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-2000:])
            raise SystemExit(f"catalog: skills_ref_validate.py exited {proc.returncode}")
        run = json.loads(proc.stdout)
        run["process_seconds"] = wall
        runs.append(run)
        log(f"skills-ref run {index + 1}/{args.runs}: loop {run['seconds']:.2f} s, "
            f"process {wall:.2f} s, {run['invalid']}/{run['skills']} invalid")
    if len({(r["skills"], r["invalid"]) for r in runs}) != 1:
        raise SystemExit("catalog: skills-ref runs disagree on the counts")
    result = stats_of([r["seconds"] for r in runs])
    result.update({
        "skills": runs[0]["skills"],
        "invalid": runs[0]["invalid"],
        "process_median": statistics.median(r["process_seconds"] for r in runs),
        "discovery_median": statistics.median(r["discovery_seconds"] for r in runs),
        "import_median": statistics.median(r["import_seconds"] for r in runs),
        "max_rss_kib": max(r["max_rss_kib"] for r in runs),
        "max_rss_before_loop_kib": max(r["max_rss_before_loop_kib"] for r in runs),
        "python": runs[0]["python"],
        "skills_ref": runs[0]["skills_ref"],
    })
    print(json.dumps(result))
    return 0


def _find_list(node, keys):
    if isinstance(node, dict):
        for key in keys:
            if isinstance(node.get(key), list):
                return node[key]
    return None


def summarize_skillbox(document) -> dict:
    """Guess skill / invalid counts from validate --json output without knowing its schema."""
    summary = {"skills": None, "invalid": None, "top_level_keys": None}
    if isinstance(document, dict):
        summary["top_level_keys"] = sorted(document)[:20]
        holder = document.get("summary") if isinstance(document.get("summary"), dict) else document
        for key in ("skills", "checked", "total", "skill_count", "count"):
            if isinstance(holder.get(key), int) and not isinstance(holder.get(key), bool):
                summary["skills"] = holder[key]
                break
        for key in ("invalid", "failed", "invalid_count", "errors_count"):
            if isinstance(holder.get(key), int) and not isinstance(holder.get(key), bool):
                summary["invalid"] = holder[key]
                break
        items = _find_list(document, ("skills", "results", "reports"))
    else:
        items = document if isinstance(document, list) else None
    if items is not None and all(isinstance(item, dict) for item in items):
        if summary["skills"] is None:
            summary["skills"] = len(items)
        if summary["invalid"] is None:
            flags = []
            for item in items:
                if isinstance(item.get("valid"), bool):
                    flags.append(not item["valid"])
                elif isinstance(item.get("ok"), bool):
                    flags.append(not item["ok"])
                elif isinstance(item.get("errors"), (list, int)):
                    flags.append(bool(item["errors"]))
                else:
                    flags = None
                    break
            if flags is not None:
                summary["invalid"] = sum(flags)
    return summary


def cmd_skillbox_summary(args) -> int:
    try:
        document = json.loads(Path(args.file).read_text())
    except ValueError as error:
        raise SystemExit(f"catalog: `skillbox validate --json` did not print JSON: {error}")
    print(json.dumps(summarize_skillbox(document)))
    return 0


def cmd_report(args) -> int:
    sb = json.loads(Path(args.skillbox).read_text())
    sr = json.loads(Path(args.skills_ref).read_text())
    summary = json.loads(Path(args.skillbox_summary).read_text())
    count = args.count
    sb_ms, sr_ms = sb["median"] * 1000, sr["median"] * 1000
    ratio = sr["median"] / sb["median"]
    ratio_process = sr["process_median"] / sb["median"]
    sb_rss_mib, sr_rss_mib = args.skillbox_rss / 1024, sr["max_rss_kib"] / 1024

    def yes(ok: bool) -> str:
        return "yes" if ok else "NO"

    lines = [
        f"## Catalog benchmark: {count:,} generated skills",
        "",
        "| tool | median wall ms | min ms | runs | peak RSS MiB | skills/s |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        f"| skillbox `validate --json` (whole process) | {sb_ms:.1f} | {sb['min'] * 1000:.1f} "
        f"| {sb['runs']} | {sb_rss_mib:.1f} | {count / sb['median']:,.0f} |",
        f"| skills-ref `validate()` loop (in-process) | {sr_ms:.1f} | {sr['min'] * 1000:.1f} "
        f"| {sr['runs']} | {sr_rss_mib:.1f} | {sr['skills'] / sr['median']:,.0f} |",
        "",
        f"**Ratio skills-ref / skillbox (median): {ratio:.1f}x**"
        f" (whole process vs whole process: {ratio_process:.1f}x)",
        "",
        f"- Targets: >= 100x: {yes(ratio >= 100)}; skillbox under 250 ms: {yes(sb_ms < 250)}.",
        "- skillbox's time is the whole process: start-up + discovery + parsing + validation + "
        "JSON output. The skills-ref time is only the validate() loop: it excludes interpreter "
        f"start-up and imports ({sr['import_median'] * 1000:.0f} ms) and the os.walk discovery "
        f"({sr['discovery_median'] * 1000:.0f} ms), so the ratio is conservative; the whole "
        f"skills-ref process took {sr['process_median'] * 1000:.0f} ms (median).",
        f"- Skills seen: skills-ref {sr['skills']} ({sr['invalid']} invalid); skillbox "
        f"{summary['skills'] if summary['skills'] is not None else '?'} "
        f"({summary['invalid'] if summary['invalid'] is not None else '?'} invalid).",
        f"- Timer: {args.timer}; skillbox RSS: {args.rss_method}; skills-ref RSS: its own "
        f"ru_maxrss ({sr['max_rss_before_loop_kib'] / 1024:.1f} MiB already before the loop); "
        f"python {sr['python']}, skills-ref {sr['skills_ref']}; {os.cpu_count()} CPUs.",
    ]
    if summary["skills"] is not None and summary["skills"] != sr["skills"]:
        lines.append(f"- WARNING: the tools saw different numbers of skills "
                     f"(skillbox {summary['skills']}, skills-ref {sr['skills']}).")
    if summary["invalid"] is not None and summary["invalid"] != sr["invalid"]:
        lines.append(f"- Note: the tools disagree on how many skills are invalid "
                     f"(skillbox {summary['invalid']}, skills-ref {sr['invalid']}).")
    print("\n".join(lines))
    if args.out_json:
        Path(args.out_json).write_text(json.dumps({
            "count": count,
            "skillbox": {**sb, "max_rss_kib": args.skillbox_rss, "timer": args.timer,
                         "rss_method": args.rss_method, "reported": summary},
            "skills_ref": sr,
            "ratio": ratio,
            "ratio_whole_process": ratio_process,
            "targets": {"ratio_at_least_100": ratio >= 100, "skillbox_under_250ms": sb_ms < 250},
        }, indent=2) + "\n")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description="helpers for bench/catalog.sh")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("stamp-ok")
    p.add_argument("dir")
    p.add_argument("count", type=int)
    p.add_argument("seed", type=int)
    p.set_defaults(func=cmd_stamp_ok)

    p = sub.add_parser("time-cmd")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("cmd", nargs="+")
    p.set_defaults(func=cmd_time)

    p = sub.add_parser("hyperfine-json")
    p.add_argument("file")
    p.set_defaults(func=cmd_hyperfine_json)

    p = sub.add_parser("merge-times")
    p.add_argument("files", nargs="+")
    p.set_defaults(func=cmd_merge_times)

    p = sub.add_parser("rss-cmd")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("cmd", nargs="+")
    p.set_defaults(func=cmd_rss)

    p = sub.add_parser("skills-ref")
    p.add_argument("--python", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--runs", type=int, default=3)
    p.set_defaults(func=cmd_skills_ref)

    p = sub.add_parser("skillbox-summary")
    p.add_argument("file")
    p.set_defaults(func=cmd_skillbox_summary)

    p = sub.add_parser("report")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--skillbox", required=True)
    p.add_argument("--skillbox-rss", type=int, required=True)
    p.add_argument("--skills-ref", required=True)
    p.add_argument("--skillbox-summary", required=True)
    p.add_argument("--timer", required=True)
    p.add_argument("--rss-method", required=True)
    p.add_argument("--out-json")
    p.set_defaults(func=cmd_report)

    args = parser.parse_args()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
