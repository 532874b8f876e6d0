#!/usr/bin/env python3
"""Helpers for bench/prompt.sh: time skills-ref's to_prompt, and write the report.

Subcommands (JSON or markdown on stdout, progress on stderr):

  measure --dirs FILE [--runs 5] [--xml-out FILE]
      Run with the test venv's python (it needs skills-ref). Reads the skill folders from
      FILE (one a line, in the order skillbox's provider lists them), then times
      `skills_ref.prompt.to_prompt(dirs)` RUNS times in this one process with
      time.perf_counter. The import and the reading of FILE are timed separately and are not
      part of the runs. Writes the XML of the first run to --xml-out and fails when two runs
      return different text. Prints {"skills", "runs", "median", "min", "max", "mean",
      "times", "import_seconds", "xml_bytes"}.

  report --count N --example FILE... [--example-1thread FILE] --skills-ref FILE
         [--hyperfine FILE...] --xml-skillbox FILE --xml-skills-ref FILE
         [--xml-cli FILE] [--target 50] [--out-json FILE]
      Standard library only. Pools the runs of the example batches (prompt_render JSON) and
      of the hyperfine batches (--export-json files), compares the XML files byte for byte
      (the CLI's output may end with one extra newline, which `skillbox prompt` adds when it
      prints) and prints the markdown report. Exit 0 when the outputs match, 1 when they do not.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def log(message: str) -> None:
    print(f"prompt: {message}", file=sys.stderr, flush=True)


def stats_of(seconds: list[float]) -> dict:
    return {
        "runs": len(seconds),
        "median": statistics.median(seconds),
        "min": min(seconds),
        "max": max(seconds),
        "mean": statistics.fmean(seconds),
        "times": seconds,
    }


# --------------------------------------------------------------------------- measure


def cmd_measure(args) -> int:
    started = time.perf_counter()
    from skills_ref.prompt import to_prompt  # noqa: PLC0415 (timed on purpose)

    import_seconds = time.perf_counter() - started
    dirs = [line for line in Path(args.dirs).read_text(encoding="utf-8").split("\n") if line]
    if not dirs:
        log(f"no skill folders in {args.dirs}")
        return 1

    seconds: list[float] = []
    first: str | None = None
    for run in range(args.runs):
        started = time.perf_counter()
        text = to_prompt(dirs)
        seconds.append(time.perf_counter() - started)
        log(f"skills-ref to_prompt run {run + 1}/{args.runs}: {seconds[-1]:.3f} s")
        if first is None:
            first = text
            if args.xml_out:
                Path(args.xml_out).write_bytes(text.encode("utf-8"))
        elif text != first:
            log(f"run {run + 1} returned a different text than run 1")
            return 1

    result = stats_of(seconds)
    result.update(
        skills=len(dirs),
        import_seconds=import_seconds,
        xml_bytes=len(first.encode("utf-8")) if first is not None else 0,
    )
    print(json.dumps(result))
    return 0


# --------------------------------------------------------------------------- report


def load_json(path: str) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def pool(batches: list[dict], key: str) -> dict:
    return stats_of([t for batch in batches for t in batch[key]["times"]])


def hyperfine_times(path: str) -> list[float]:
    data = load_json(path)
    results = data["results"]
    if len(results) != 1:
        raise ValueError(f"{path}: expected one hyperfine command, found {len(results)}")
    return list(results[0]["times"])


def compare(expected: bytes, actual: bytes, trailing_newline: bool = False) -> str:
    """'identical', or where the first difference is."""
    if trailing_newline and actual.endswith(b"\n") and actual[:-1] == expected:
        return "identical"
    if actual == expected:
        return "identical"
    at = next(
        (i for i, (a, b) in enumerate(zip(expected, actual)) if a != b),
        min(len(expected), len(actual)),
    )
    return f"DIFFERENT (sizes {len(expected)} vs {len(actual)} bytes, first difference at byte {at})"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 10 else f"{seconds:.2f} s"


def cmd_report(args) -> int:
    examples = [load_json(path) for path in args.example]
    one_thread = load_json(args.example_1thread) if args.example_1thread else None
    skills_ref = load_json(args.skills_ref)
    hyperfine = stats_of([t for path in args.hyperfine for t in hyperfine_times(path)]) if args.hyperfine else None

    load_render = pool(examples, "load_render")
    render = pool(examples, "render")
    load = pool(examples, "load")
    reference = skills_ref["median"]
    target = args.target

    xml_ref = Path(args.xml_skills_ref).read_bytes()
    checks = {
        "prompt_render (provider.system_prompt) vs skills-ref to_prompt": compare(
            xml_ref, Path(args.xml_skillbox).read_bytes()
        ),
    }
    if args.xml_cli:
        checks["`skillbox prompt --format xml` stdout vs skills-ref to_prompt"] = compare(
            xml_ref, Path(args.xml_cli).read_bytes(), trailing_newline=True
        )
    all_identical = all(value == "identical" for value in checks.values())

    counts = {
        "skillbox catalog": examples[0]["catalog_skills"],
        "skillbox model_skills": examples[0]["model_skills"],
        "skills-ref dirs": skills_ref["skills"],
    }

    rows = [
        (
            "skillbox in-process: load catalog + provider + render XML",
            load_render,
            reference / load_render["median"],
        ),
        ("skillbox in-process: catalog load only (part of the row above)", load, None),
        ("skillbox in-process: render only (catalog already loaded)", render, reference / render["median"]),
    ]
    if one_thread:
        rows.append(
            (
                "skillbox in-process: load + render, 1 rayon thread",
                one_thread["load_render"],
                reference / one_thread["load_render"]["median"],
            )
        )
    if hyperfine:
        rows.append(
            (
                "skillbox whole process: `skillbox --root DIR prompt --format xml`",
                hyperfine,
                reference / hyperfine["median"],
            )
        )
    rows.append(("skills-ref in-process: `to_prompt(dirs)`", skills_ref, None))

    headline = reference / load_render["median"]
    whole = reference / hyperfine["median"] if hyperfine else None
    out = []
    out.append(f"## Prompt: render the XML prompt for {args.count:,} skills\n")
    out.append("| measurement | runs | median | min | max | skills-ref / skillbox |")
    out.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, stats, ratio in rows:
        out.append(
            f"| {name} | {stats['runs']} | {ms(stats['median'])} | {ms(stats['min'])} | "
            f"{ms(stats['max'])} | {f'{ratio:.1f}x' if ratio is not None else '—'} |"
        )
    out.append("")
    verdict = lambda ratio: "met" if ratio >= target else "MISSED"  # noqa: E731
    out.append(f"* target >= {target:g}x, load + render in-process: **{headline:.1f}x** ({verdict(headline)})")
    if whole is not None:
        out.append(f"* target >= {target:g}x, whole `skillbox prompt` process: **{whole:.1f}x** ({verdict(whole)})")
    out.append(f"* skills seen: {', '.join(f'{k} {v}' for k, v in counts.items())}")
    for name, value in checks.items():
        out.append(f"* {name}: {value}")
    out.append(
        f"* XML size {len(xml_ref):,} bytes; skills-ref import {ms(skills_ref['import_seconds'])} "
        "(not timed); executor set up once outside the timing "
        f"({ms(examples[0]['executor_seconds'])})"
    )
    report = "\n".join(out) + "\n"
    print(report, end="")

    if args.out_json:
        Path(args.out_json).write_text(
            json.dumps(
                {
                    "count": args.count,
                    "skillbox_load_render": load_render,
                    "skillbox_load": load,
                    "skillbox_render": render,
                    "skillbox_load_render_1thread": one_thread["load_render"] if one_thread else None,
                    "skillbox_whole_process": hyperfine,
                    "skills_ref_to_prompt": skills_ref,
                    "ratio_load_render": headline,
                    "ratio_render": reference / render["median"],
                    "ratio_whole_process": whole,
                    "target": target,
                    "targets": {
                        "load_render": headline >= target,
                        **({"whole_process": whole >= target} if whole is not None else {}),
                    },
                    "checks": checks,
                    "counts": counts,
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
    if not all_identical:
        log("the XML outputs differ; see the report")
        return 1
    if len(set(counts.values())) != 1:
        log(f"the tools saw different numbers of skills: {counts}")
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    measure = sub.add_parser("measure")
    measure.add_argument("--dirs", required=True)
    measure.add_argument("--runs", type=int, default=5)
    measure.add_argument("--xml-out")
    measure.set_defaults(func=cmd_measure)

    report = sub.add_parser("report")
    report.add_argument("--count", type=int, required=True)
    report.add_argument("--example", nargs="+", required=True)
    report.add_argument("--example-1thread")
    report.add_argument("--skills-ref", required=True)
    report.add_argument("--hyperfine", nargs="*", default=[])
    report.add_argument("--xml-skillbox", required=True)
    report.add_argument("--xml-skills-ref", required=True)
    report.add_argument("--xml-cli")
    report.add_argument("--target", type=float, default=50.0)
    report.add_argument("--out-json")
    report.set_defaults(func=cmd_report)

    args = parser.parse_args()
    if getattr(args, "runs", 1) < 1:
        parser.error("--runs must be at least 1")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
