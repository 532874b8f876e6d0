#!/usr/bin/env python3
"""Ask the reference validator (PyPI `skills-ref`) for its verdict on skills.

Run with the test venv's interpreter (see scripts/setup-test-venv.sh):

    python skills_ref_verdicts.py PATH...
        Prints ONE JSON object on stdout mapping each PATH, exactly as given,
        to the list of error strings from skills_ref.validator.validate()
        (an empty list means valid). A PATH naming a SKILL.md/skill.md file
        validates its parent directory, as `skills-ref validate` does. If
        validate() raises, the entry is ["EXCEPTION: <type>: <message>"], and
        the other paths are still checked.

    python skills_ref_verdicts.py --to-prompt PATH...
        Prints skills_ref.prompt.to_prompt([PATH...]) raw (no trailing
        newline added), with the same SKILL.md -> parent rule. Exits 1 with
        the exception on stderr if to_prompt raises.

Paths are passed to skills-ref as given, so relative paths yield relative
paths in messages such as "Not a directory: ...".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _skill_dir(arg: str) -> Path:
    """Mirror the skills-ref CLI: a path to SKILL.md means its directory."""
    path = Path(arg)
    if path.is_file() and path.name.lower() == "skill.md":
        return path.parent
    return path


def _verdicts(args: list[str]) -> dict[str, list[str]]:
    from skills_ref.validator import validate

    out: dict[str, list[str]] = {}
    for arg in args:
        try:
            errors = validate(_skill_dir(arg))
            out[arg] = [str(e) for e in errors]
        except Exception as exc:  # noqa: BLE001 - one bad case must not stop the rest
            out[arg] = [f"EXCEPTION: {type(exc).__name__}: {exc}"]
    return out


def _to_prompt(args: list[str]) -> str:
    from skills_ref.prompt import to_prompt

    return to_prompt([_skill_dir(arg) for arg in args])


def main(argv: list[str]) -> int:
    # Non-ASCII names and messages must survive whatever locale we run under.
    sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[attr-defined]
    sys.stderr.reconfigure(encoding="utf-8", errors="backslashreplace")  # type: ignore[attr-defined]

    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0

    if argv and argv[0] == "--to-prompt":
        try:
            sys.stdout.write(_to_prompt(argv[1:]))
        except Exception as exc:  # noqa: BLE001
            print(f"EXCEPTION: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
        return 0

    json.dump(_verdicts(argv), sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
