#!/usr/bin/env python3
"""Print per-column statistics of a CSV file as JSON.

Usage: summarize.py FILE [--delimiter CHAR] [--top N]

FILE may be "-" to read from standard input. The result is a single JSON
object on stdout. Problems with the input go to stderr and the exit status
is non-zero (2 for usage errors, 1 for unreadable or unusable data).
"""

import argparse
import csv
import io
import json
import math
import os
import re
import statistics
import sys
from collections import Counter

PROG = "summarize.py"
MISSING = {"", "na", "n/a", "null", "none", "nan", "-"}
TRUE_WORDS = {"true", "yes", "y"}
FALSE_WORDS = {"false", "no", "n"}
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_WARNINGS = 10


def fail(message, code=1):
    print(f"{PROG}: error: {message}", file=sys.stderr)
    sys.exit(code)


def read_text(path):
    try:
        if path == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                raw = handle.read()
    except FileNotFoundError:
        fail(f"file not found: {path}")
    except IsADirectoryError:
        fail(f"is a directory, not a CSV file: {path}")
    except PermissionError:
        fail(f"permission denied: {path}")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        fail(f"{path} is not valid UTF-8 (byte offset {exc.start}); re-encode it first")
    if not text.strip():
        fail(f"{path} is empty")
    return text


def pick_delimiter(text, forced):
    if forced is not None:
        if forced == "\\t":
            return "\t"
        if len(forced) != 1:
            fail("--delimiter must be a single character (use '\\t' for tab)", 2)
        return forced
    # Try each candidate on the first lines and keep the one that splits the
    # header into the most fields while agreeing with the following rows.
    # (csv.Sniffer gives up on files with a few ragged rows.)
    sample = text[:64 * 1024].splitlines()[:50]
    best, best_score = ",", (0, 0.0)
    for candidate in ",;\t|":
        try:
            widths = [len(r) for r in csv.reader(sample, delimiter=candidate) if r]
        except csv.Error:
            continue
        if not widths or widths[0] < 2:
            continue
        agreeing = sum(1 for w in widths if w == widths[0]) / len(widths)
        score = (widths[0] if agreeing >= 0.5 else 0, agreeing)
        if score > best_score:
            best, best_score = candidate, score
    return best


def as_number(value):
    """Return an int or float for numeric text, else None. Rejects inf/nan."""
    try:
        return int(value)
    except ValueError:
        pass
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def clean(number):
    """Round floats for readable output; keep ints as ints."""
    if isinstance(number, float):
        if number.is_integer() and abs(number) < 2**53:
            return int(number)
        return round(number, 4)
    return number


def infer_type(values):
    if not values:
        return "empty"
    numbers = [as_number(v) for v in values]
    if all(n is not None for n in numbers):
        if all(isinstance(n, int) for n in numbers):
            return "integer"
        return "number"
    lowered = {v.lower() for v in values}
    if lowered <= TRUE_WORDS | FALSE_WORDS:
        return "boolean"
    if all(DATE_RE.match(v) for v in values):
        return "date"
    return "string"


def summarize_column(name, values, top):
    present = [v for v in values if v.strip().lower() not in MISSING]
    present = [v.strip() for v in present]
    kind = infer_type(present)
    info = {
        "name": name,
        "type": kind,
        "count": len(present),
        "missing": len(values) - len(present),
        "unique": len(set(present)),
    }
    if kind in ("integer", "number"):
        numbers = [as_number(v) for v in present]
        info.update(
            min=clean(min(numbers)),
            max=clean(max(numbers)),
            sum=clean(math.fsum(numbers)),
            mean=clean(statistics.fmean(numbers)),
            median=clean(statistics.median(numbers)),
            stdev=clean(statistics.stdev(numbers)) if len(numbers) > 1 else None,
        )
    elif kind == "date":
        info.update(min=min(present), max=max(present))
    elif kind == "boolean":
        info.update(
            true=sum(1 for v in present if v.lower() in TRUE_WORDS),
            false=sum(1 for v in present if v.lower() in FALSE_WORDS),
        )
    elif kind == "string":
        lengths = [len(v) for v in present]
        info.update(min_length=min(lengths), max_length=max(lengths))
    # A "most frequent" list says nothing when every value is distinct (ids, keys).
    if kind != "empty" and top > 0 and info["unique"] < info["count"]:
        info["top"] = [
            {"value": value, "count": count}
            for value, count in Counter(present).most_common(top)
        ]
    return info


def main(argv):
    parser = argparse.ArgumentParser(
        prog=PROG, description="Print per-column statistics of a CSV file as JSON."
    )
    parser.add_argument("file", help="CSV file to summarise, or - for stdin")
    parser.add_argument(
        "--delimiter", help="field separator (default: auto-detect , ; tab |)"
    )
    parser.add_argument(
        "--top", type=int, default=3, help="most frequent values to list per column (default 3)"
    )
    parser.add_argument(
        "--compact", action="store_true", help="print the JSON on one line"
    )
    args = parser.parse_args(argv)
    if args.top < 0:
        fail("--top must be zero or a positive integer", 2)

    text = read_text(args.file)
    delimiter = pick_delimiter(text, args.delimiter)
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as exc:
        fail(f"could not parse CSV: {exc}")
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        fail(f"{args.file} has no header row")

    header = [h.strip() for h in rows[0]]
    data = rows[1:]
    warnings = []

    seen = Counter(header)
    duplicates = sorted(name for name, n in seen.items() if n > 1)
    if duplicates:
        warnings.append(f"duplicate column names: {', '.join(duplicates)}")
    if any(not h for h in header):
        warnings.append("one or more columns have an empty header")

    ragged = 0
    for number, row in enumerate(data, start=1):
        if len(row) != len(header):
            ragged += 1
            if ragged <= MAX_WARNINGS:
                warnings.append(
                    f"record {number}: expected {len(header)} field(s), found {len(row)}"
                )
    if ragged > MAX_WARNINGS:
        warnings.append(f"... {ragged - MAX_WARNINGS} more rows with a wrong field count")

    columns = []
    for index, name in enumerate(header):
        values = [row[index] if index < len(row) else "" for row in data]
        columns.append(summarize_column(name or f"column_{index + 1}", values, args.top))

    result = {
        "file": args.file,
        "delimiter": delimiter,
        "rows": len(data),
        "column_count": len(header),
        "columns": columns,
        "warnings": warnings,
    }
    try:
        json.dump(result, sys.stdout, indent=None if args.compact else 2, ensure_ascii=False)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # Reader went away (e.g. piped into `head`); that is not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
