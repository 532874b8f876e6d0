#!/usr/bin/env python3
"""Skill Tools handler for `slugify`.

In-process:  handler({"text": "Hello, World!"}) -> {"slug": "hello-world", ...}
Subprocess:  slugify.py '{"text": "Hello, World!"}'   or   echo '{...}' | slugify.py
             prints the JSON result on stdout; on bad input prints a message on
             stderr and exits 1 (2 if the input is not a JSON object).
"""

import json
import re
import sys
import unicodedata

SEPARATORS = ("-", "_")

# Characters that NFKD does not decompose into ASCII but that have an obvious
# Latin spelling. Applied after case folding, so only lowercase keys are needed.
TRANSLITERATE = {
    "æ": "ae",
    "ø": "o",
    "œ": "oe",
    "đ": "d",
    "ð": "d",
    "þ": "th",
    "ł": "l",
    "ı": "i",
    "&": " and ",
    "@": " at ",
}


def _positive_int(value, field):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"'{field}' must be a positive whole number")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"'{field}' must be a whole number, got {value}")
        value = int(value)
    if value < 1:
        raise ValueError(f"'{field}' must be at least 1, got {value}")
    return value


def handler(args):
    if not isinstance(args, dict):
        raise ValueError("arguments must be a JSON object")
    text = args.get("text")
    if not isinstance(text, str):
        raise ValueError("'text' is required and must be a string")

    separator = args.get("separator")
    if separator is None:
        separator = "-"
    if separator not in SEPARATORS:
        raise ValueError(f"'separator' must be one of {list(SEPARATORS)}, got {separator!r}")

    max_length = args.get("max_length")
    if max_length is not None:
        max_length = _positive_int(max_length, "max_length")

    folded = text.casefold()  # also turns German sharp s into "ss"
    folded = "".join(TRANSLITERATE.get(ch, ch) for ch in folded)
    decomposed = unicodedata.normalize("NFKD", folded)
    ascii_text = decomposed.encode("ascii", "ignore").decode("ascii")
    # Drop apostrophes inside words so "don't" becomes "dont", not "don-t".
    ascii_text = re.sub(r"(?<=[a-z0-9])'(?=[a-z0-9])", "", ascii_text)
    slug = re.sub(r"[^a-z0-9]+", separator, ascii_text).strip(separator)

    if not slug:
        raise ValueError(
            "text contains no letters or digits that can be written in ASCII; "
            "cannot build a slug from it"
        )

    truncated = False
    if max_length is not None and len(slug) > max_length:
        truncated = True
        cut = slug[:max_length]
        # Prefer cutting at a separator so words are not chopped in half,
        # unless that would throw away most of the allowed length.
        boundary = cut.rfind(separator)
        if slug[max_length] != separator and boundary >= max_length // 2:
            cut = cut[:boundary]
        slug = cut.strip(separator)

    return {"slug": slug, "length": len(slug), "truncated": truncated}


def _main(argv):
    raw = argv[1] if len(argv) > 1 else sys.stdin.read()
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as exc:
        print(f"slugify: error: input is not valid JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(args, dict):
        print("slugify: error: input must be a JSON object", file=sys.stderr)
        return 2
    try:
        result = handler(args)
    except ValueError as exc:
        print(f"slugify: error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
