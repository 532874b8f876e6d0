#!/usr/bin/env bash
# Print the header line and the first N data lines of a CSV file.
#
# Usage: head.sh FILE [N]      (N defaults to 10)
#
# The CSV text goes to stdout unchanged, so it can be piped on. A one-line
# note with the total number of data lines goes to stderr. Lines are counted
# physically: a quoted field containing a newline spans two lines.
set -euo pipefail

prog=$(basename "$0")

die() {
    printf '%s: error: %s\n' "$prog" "$1" >&2
    exit "${2:-1}"
}

if [[ $# -lt 1 || $# -gt 2 ]]; then
    printf 'usage: %s FILE [N]\n' "$prog" >&2
    exit 2
fi

file=$1
n=${2:-10}

[[ $n =~ ^[0-9]+$ ]] || die "N must be a non-negative integer, got '$n'" 2
n=$((10#$n))
[[ -e $file ]] || die "file not found: $file"
[[ -f $file ]] || die "not a regular file: $file"
[[ -r $file ]] || die "permission denied: $file"
[[ -s $file ]] || die "$file is empty"

total_lines=$(wc -l < "$file")
# A final line without a trailing newline is not counted by wc -l.
if [[ -n $(tail -c 1 "$file") ]]; then
    total_lines=$((total_lines + 1))
fi
data_lines=$((total_lines - 1))

head -n "$((n + 1))" "$file"

shown=$(( n < data_lines ? n : data_lines ))
printf '(%s: showing %d of %d data lines)\n' "$prog" "$shown" "$data_lines" >&2
