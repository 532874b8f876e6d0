#!/usr/bin/env python3
"""Regenerate tests/fixtures/skills-ref-cases/EXPECTED.json from skills-ref.

Layout of the fixtures: tests/fixtures/skills-ref-cases/<case>/<skill>, where
<skill> is the one entry in the case folder (normally a skill directory; in
`not-a-directory` it is a plain file). The extra level lets a case choose the
skill directory's name, which the name rules compare against.

EXPECTED.json maps "<case>/<skill>" to
    {"skills_ref_valid": bool, "skills_ref_errors": [str, ...], "note"?: str}
("skills_ref_errors" is ["EXCEPTION: <type>: <message>"] where validate() itself
raises; that is allowed only for cases that have a note.)
where the verdicts come from actually running tests/peers/skills_ref_verdicts.py
under the pinned skills-ref in the test venv, and "note" (from NOTES below)
explains where skills-ref differs from a YAML 1.2 parser plus the Agent Skills
spec, or why the case exists.

Usage (any python3; the venv is created on demand):
    python3 tests/peers/regenerate_expected.py          # rewrite EXPECTED.json
    python3 tests/peers/regenerate_expected.py --check  # exit 1 if out of date
Set SKILLBOX_TEST_PYTHON to a python that has skills-ref to skip the venv setup.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "fixtures" / "skills-ref-cases"
EXPECTED = CASES / "EXPECTED.json"
VERDICTS = REPO / "tests" / "peers" / "skills_ref_verdicts.py"
SETUP = REPO / "scripts" / "setup-test-venv.sh"

_SCALARS_AS_STRINGS = (
    "skills-ref 0.1.1 parses frontmatter with strictyaml, which reads every scalar as a string"
)
_I18N = (
    "skills-ref reads the spec's 'unicode lowercase alphanumeric' as any character with "
    "str.isalnum() that equals its lowercase, so this is valid. The spec's own gloss "
    "'(a-z and -)' suggests ASCII only, and some tools enforce ^[a-z0-9]+(-[a-z0-9]+)*$; "
    "an ASCII-only implementation would reject it."
)
_NFKC = (
    "skills-ref NFKC-normalises both the name and the directory name before comparing them: "
    "valid. The spec says nothing about normalisation; a code-point-exact comparison calls it "
    "a directory mismatch. (Git stores the directory name's bytes as written; macOS file "
    "systems may re-normalise them on checkout.)"
)
_STRICTYAML_FLOW = (
    "strictyaml refuses every flow collection ('ugly disallowed JSONesque flow mapping')"
)

# case folder name -> note. Every yaml-divergence-* case must have one.
NOTES: dict[str, str] = {
    # --- upstream-derived cases where skills-ref 0.1.1 differs from YAML 1.2 + spec ---
    "allowed-tools-integer": (
        f"DIVERGES. {_SCALARS_AS_STRINGS}, so `123` is the string '123', and it does not "
        "type-check allowed-tools at all: valid. YAML 1.2 (core schema) makes 123 an integer, "
        "and the spec defines allowed-tools as a space-delimited string, so a typed "
        "implementation rejects it (as newer upstream skills-ref (per its current test suite) does: 'must be either a "
        "string or a list of strings')."
    ),
    "allowed-tools-list-non-string-item": (
        f"DIVERGES. {_SCALARS_AS_STRINGS} and does not check allowed-tools: valid. YAML 1.2: a "
        "sequence whose second item is the integer 123. The spec says allowed-tools is a "
        "space-delimited string; newer upstream skills-ref (per its current test suite) accepts lists of strings but "
        "rejects this one ('list items must all be strings')."
    ),
    "allowed-tools-block-list": (
        "Spec gap, same verdict: the spec defines allowed-tools as a space-delimited string, "
        "but skills-ref 0.1.1 does not check its type (valid), and newer upstream skills-ref (per its current test suite) "
        "accepts a list of strings and joins it with spaces ('Read Bash Grep')."
    ),
    "name-number": (
        f"DIVERGES. {_SCALARS_AS_STRINGS}: the name is '123', which matches the directory: "
        "valid. YAML 1.2 (core schema) reads 123 as an integer, and the spec's name is a "
        "string, so a typed implementation rejects it (or must deliberately keep the scalar's "
        "source text)."
    ),
    "description-boolean": (
        f"DIVERGES. {_SCALARS_AS_STRINGS}: description is the 4-character string 'true': "
        "valid. YAML 1.2 (core schema) reads true as a boolean, not a string: invalid for a "
        "typed implementation."
    ),
    "metadata-non-string-values": (
        "Upstream expects metadata {'author': 'Test Author', 'version': '1.0'}: skills-ref "
        "stringifies every metadata value (and strictyaml already read '1.0' as text): valid. "
        "YAML 1.2 reads 1.0 as a float, and the spec says metadata values are strings, so a "
        "typed implementation must either reject it or keep the scalar's source text '1.0'. "
        "Beware: converting the parsed float back to text in Rust prints '1', not '1.0'."
    ),
    "metadata-nested-mapping": (
        "DIVERGES. skills-ref calls str() on each metadata value, so the nested mapping "
        "becomes the text \"{'inner': 'value'}\": valid. YAML 1.2: a nested mapping, which the "
        "spec's 'map from string keys to string values' does not allow: invalid for a "
        "spec-strict implementation."
    ),
    "metadata-scalar": (
        "DIVERGES. skills-ref only post-processes metadata when it is a mapping and never "
        "checks its type: valid. The spec says metadata is a mapping, so a plain string is "
        "invalid."
    ),
    "compatibility-empty": (
        "DIVERGES. skills-ref only checks that compatibility is a string of at most 500 "
        "characters: valid. The spec says 'Must be 1-500 characters if provided': invalid."
    ),
    "name-trailing-space-quoted": (
        "DIVERGES. skills-ref strips the name before checking it: valid. YAML keeps the "
        "trailing space inside quotes, so the name is 'my-skill ' — a space is not an allowed "
        "character and it does not equal the directory name: invalid per spec."
    ),
    "name-trailing-spaces-plain": (
        "No divergence (control for name-trailing-space-quoted): YAML drops trailing "
        "whitespace from a plain scalar, so the name is 'my-skill' either way. The trailing "
        "spaces on the name line are intentional; keep them."
    ),
    "nfkc-decomposed-name-composed-dir": _NFKC + " Upstream test: test_nfkc_normalization.",
    "nfkc-composed-name-decomposed-dir": _NFKC + " Mirror image of the upstream NFKC test.",
    "nfkc-fullwidth-name": (
        "skills-ref NFKC-normalises the name before checking it, so fullwidth 'ｍｙ-ｓｋｉｌｌ' "
        "becomes 'my-skill' and matches the directory: valid. The spec says nothing about "
        "normalisation; without it the name has non-ASCII letters and does not equal the "
        "directory name. Also note skills-ref's read_properties/to_prompt return the "
        "un-normalised fullwidth name."
    ),
    "i18n-chinese-name": _I18N,
    "i18n-russian-lowercase": _I18N,
    "i18n-russian-name-with-hyphens": _I18N,
    "whitespace-only-description": (
        "skills-ref rejects a description that is empty after stripping. The spec only says "
        "'1-1024 characters' / 'Non-empty'; three spaces are three characters, so a literal "
        "reading could accept it. Treat as invalid to agree with skills-ref."
    ),
    "description-max-length-1024-multibyte": (
        "1024 characters of U+00E9 are 2048 UTF-8 bytes: the limits count characters (code "
        "points), not bytes. Valid in both."
    ),
    "empty-name-null": (
        "strictyaml reads an empty value as '' where YAML 1.2 reads null; invalid either way "
        "(empty string vs. a null/missing required name)."
    ),
    "empty-description-null": (
        "strictyaml reads an empty value as '' where YAML 1.2 reads null; invalid either way "
        "(empty string vs. a null/missing required description)."
    ),
    "empty-frontmatter": (
        "strictyaml returns the text '\\n' for an empty document, YAML 1.2 returns null: "
        "neither is a mapping, so invalid either way."
    ),
    "duplicate-name-key": (
        "No divergence: strictyaml refuses duplicate keys and YAML 1.2 requires mapping keys "
        "to be unique. (PyYAML, and some other loaders, silently keep the last value instead.)"
    ),
    "invalid-yaml": (
        "Invalid in both. strictyaml reports the '[' as a refused flow collection before it "
        "notices the collection is never closed; a YAML 1.2 parser reports the unclosed "
        "sequence."
    ),
    "bom-at-start": (
        "skills-ref reads the file as 'utf-8' (not 'utf-8-sig'), keeps the BOM as U+FEFF, and "
        "so the text does not start with '---': invalid. YAML 1.2 allows a BOM at the start of "
        "a stream and many frontmatter readers strip it; accepting it would be a deliberate "
        "leniency beyond skills-ref."
    ),
    "crlf-line-endings": (
        "Python's text-mode read turns CRLF into LF before parsing: valid. YAML 1.2 treats "
        "CRLF as a line break too; an implementation that reads bytes must accept '---\\r\\n' "
        "delimiter lines to agree."
    ),
    "invalid-utf8": (
        "skills-ref does not catch the decoding error: validate() raises UnicodeDecodeError, "
        "recorded as an EXCEPTION entry (counted as invalid). The spec implies UTF-8 text; "
        "an implementation should report the file as invalid rather than crash."
    ),
    "lowercase-skill-md": (
        "skills-ref accepts skill.md when SKILL.md is absent (it prefers SKILL.md when both "
        "exist; that case is not a fixture, as the pair cannot be checked out on a "
        "case-insensitive file system)."
    ),
    "not-a-directory": (
        "The skill path is a regular file. The error message quotes the path exactly as "
        "passed; regenerate_expected.py passes paths relative to skills-ref-cases/."
    ),
    # --- extra cases: where a YAML-correct implementation must decide ---
    "yaml-divergence-flow-sequence-allowed-tools": (
        f"DIVERGES. skills-ref 0.1.1: {_STRICTYAML_FLOW}: invalid. YAML 1.2: a valid sequence "
        "['Read', 'Grep']. Upstream skills-ref at HEAD accepts it (joined to 'Read Grep'); the "
        "spec itself defines allowed-tools as a space-delimited string."
    ),
    "yaml-divergence-triple-dash-in-value": (
        "Same verdict, different value. skills-ref splits the file text on the first two "
        "occurrences of '---' anywhere (content.split('---', 2)), not on delimiter lines, so "
        "its frontmatter ends inside the description and it reads description 'Splits a' "
        "(the rest becomes body). A line-based reader plus YAML reads 'Splits a---b strings'."
    ),
    "yaml-divergence-triple-dash-before-name": (
        "DIVERGES. Same '---' split as yaml-divergence-triple-dash-in-value, but the cut also "
        "drops the name line that follows, so skills-ref reports a missing name: invalid. "
        "Line-based delimiters plus YAML: name 'my-skill', description 'Splits a---b "
        "strings': valid."
    ),
    "yaml-divergence-flow-mapping-metadata": (
        f"DIVERGES. skills-ref 0.1.1: {_STRICTYAML_FLOW}: invalid. YAML 1.2: metadata is the "
        "mapping {a: 'b'}, a valid string-to-string map: valid."
    ),
    "yaml-divergence-flow-mapping-whole-frontmatter": (
        f"DIVERGES. skills-ref 0.1.1: {_STRICTYAML_FLOW}: invalid. YAML 1.2: the whole "
        "frontmatter is one flow mapping with name and description: valid."
    ),
    "yaml-divergence-body-horizontal-rule": (
        "No divergence (control case): split('---', 2) leaves later '---' lines in the body, "
        "so a Markdown horizontal rule in the body is harmless. Valid in both."
    ),
    "yaml-divergence-unquoted-colon-space": (
        "No divergence: ': ' inside an unquoted value in block context is a YAML error "
        "('mapping values are not allowed here') for strictyaml and YAML 1.2 alike: invalid. "
        "Authors must quote such descriptions."
    ),
    "yaml-divergence-quoted-hash": (
        "No divergence: '#' inside a quoted scalar is text. Both read 'Handles # signs, not "
        "comments'."
    ),
    "yaml-divergence-unquoted-hash-comment": (
        "No divergence: ' #' starts a comment but '#' right after a non-space does not, so "
        "both read 'Writes C# code'."
    ),
    "yaml-divergence-folded-block-description": (
        "No divergence: both read 'Folded description over two lines.\\n' (folded, clip "
        "chomping keeps one final newline). skills-ref counts that newline toward the "
        "1024-character limit and strips it in read_properties/to_prompt."
    ),
    "yaml-divergence-null-description": (
        f"DIVERGES. {_SCALARS_AS_STRINGS}, with no null: description is the text 'null': "
        "valid. YAML 1.2 (core schema): null, so the required description is absent: invalid."
    ),
    "yaml-divergence-tilde-description": (
        f"DIVERGES. {_SCALARS_AS_STRINGS}, with no null: description is the text '~': valid. "
        "YAML 1.2 (core schema): ~ is null, so the required description is absent: invalid."
    ),
    "yaml-divergence-anchor-alias": (
        "DIVERGES. strictyaml refuses anchors and aliases ('confusing disallowed anchor "
        "token'): invalid. YAML 1.2: description 'A test skill' and metadata.summary aliases "
        "the same string: valid."
    ),
    "yaml-divergence-explicit-str-tag": (
        "DIVERGES. strictyaml refuses tags ('disallowed tag tokens'): invalid. YAML 1.2: "
        "!!str makes the description the string 'A test skill': valid."
    ),
}


def _python() -> str:
    env = os.environ.get("SKILLBOX_TEST_PYTHON")
    if env:
        return env
    out = subprocess.run(["bash", str(SETUP)], check=True, stdout=subprocess.PIPE, text=True)
    return out.stdout.strip().splitlines()[-1]


def _skill_paths() -> list[str]:
    paths = []
    for case in sorted(p for p in CASES.iterdir() if p.is_dir()):
        entries = [e for e in case.iterdir() if not e.name.startswith(".")]
        if len(entries) != 1:
            sys.exit(f"{case}: expected exactly one skill entry, found {len(entries)}")
        paths.append(f"{case.name}/{entries[0].name}")
    return paths


def build() -> dict[str, dict]:
    paths = _skill_paths()
    cases = {p.split("/", 1)[0] for p in paths}
    unknown = sorted(set(NOTES) - cases)
    if unknown:
        sys.exit(f"NOTES name cases that do not exist: {unknown}")
    missing = sorted(c for c in cases if c.startswith("yaml-divergence-") and c not in NOTES)
    if missing:
        sys.exit(f"yaml-divergence cases without a note: {missing}")

    proc = subprocess.run(
        [_python(), str(VERDICTS), *paths],
        cwd=CASES,
        check=True,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    verdicts = json.loads(proc.stdout.decode("utf-8"))
    if set(verdicts) != set(paths):
        sys.exit("verdict script returned a different set of paths")

    expected: dict[str, dict] = {}
    for path in paths:
        errors = verdicts[path]
        case = path.split("/", 1)[0]
        if any(e.startswith("EXCEPTION: ") for e in errors) and case not in NOTES:
            sys.exit(f"{path}: skills-ref raised {errors}; add a note to NOTES if expected")
        entry: dict = {"skills_ref_valid": not errors, "skills_ref_errors": errors}
        note = NOTES.get(case)
        if note:
            entry["note"] = note
        expected[path] = entry
    return expected


def render(expected: dict[str, dict]) -> str:
    return json.dumps(expected, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = render(build())
    if "--check" in argv:
        current = EXPECTED.read_text(encoding="utf-8") if EXPECTED.exists() else ""
        if current != text:
            print(f"{EXPECTED} is out of date; run {Path(__file__).name}", file=sys.stderr)
            return 1
        print(f"{EXPECTED.name} is up to date", file=sys.stderr)
        return 0
    EXPECTED.write_text(text, encoding="utf-8")
    print(f"wrote {EXPECTED} ({text.count(chr(10))} lines)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
