#!/usr/bin/env python3
"""Time skills-ref's validate() over every skill folder under ROOT, in one process.

    PY="$(scripts/setup-test-venv.sh)"
    "$PY" bench/skills_ref_validate.py ROOT [--errors FILE]

Discovery (os.walk, outside the timed region) mirrors skillbox's: a folder holding
SKILL.md or skill.md is a skill and is not descended into; hidden folders and
node_modules/__pycache__/target are skipped. Then ONLY the loop calling
skills_ref.validator.validate(Path(d)) is timed with time.perf_counter.

Prints one JSON object on stdout:
  skills, invalid, seconds (the loop), discovery_seconds, import_seconds,
  max_rss_kib (peak RSS of this process at the end, ru_maxrss),
  max_rss_before_loop_kib (peak after imports and discovery, before the loop),
  python, skills_ref (version).
--errors FILE writes {folder: [errors]} for the invalid folders, for cross-checking.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

SKILL_MD = ("SKILL.md", "skill.md")
SKIPPED = {"node_modules", "__pycache__", "target"}


def discover(root: str) -> list[str]:
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        if any(name in filenames for name in SKILL_MD):
            found.append(dirpath)
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIPPED)
    return found


def main() -> int:
    args = sys.argv[1:]
    errors_file = None
    if "--errors" in args:
        at = args.index("--errors")
        if at + 1 >= len(args):
            print("usage: skills_ref_validate.py ROOT [--errors FILE]", file=sys.stderr)
            return 2
        errors_file = args[at + 1]
        del args[at : at + 2]
    if len(args) != 1 or not os.path.isdir(args[0]):
        print("usage: skills_ref_validate.py ROOT [--errors FILE]  (ROOT must be a folder)", file=sys.stderr)
        return 2
    root = args[0]

    t0 = time.perf_counter()
    from skills_ref.validator import validate  # noqa: PLC0415 (timed separately)

    import_seconds = time.perf_counter() - t0
    try:
        from importlib.metadata import version

        skills_ref_version = version("skills-ref")
    except Exception:  # noqa: BLE001
        skills_ref_version = "unknown"

    t0 = time.perf_counter()
    folders = discover(root)
    discovery_seconds = time.perf_counter() - t0
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    invalid: dict[str, list[str]] = {}
    t0 = time.perf_counter()
    for folder in folders:
        problems = validate(Path(folder))
        if problems:
            invalid[folder] = problems
    seconds = time.perf_counter() - t0

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    if errors_file:
        with open(errors_file, "w", encoding="utf-8") as handle:
            json.dump(invalid, handle, indent=1, sort_keys=True)
    print(json.dumps({
        "skills": len(folders),
        "invalid": len(invalid),
        "seconds": seconds,
        "discovery_seconds": discovery_seconds,
        "import_seconds": import_seconds,
        "max_rss_kib": rss,
        "max_rss_before_loop_kib": rss_before,
        "python": platform.python_version(),
        "skills_ref": skills_ref_version,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
