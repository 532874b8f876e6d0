#!/usr/bin/env bash
# Count the words, lines and characters of a text and print them as JSON.
#
#   bash scripts/example.sh TEXT...
#{{stdin_usage}}
#
# Prints {"words": N, "lines": N, "characters": N} on stdout. Without a text it
# prints a message on stderr and exits 2.{{usage}}
set -euo pipefail
{{functions}}
if (( $# > 0 )); then
  text="$*"
else
{{read_stdin}}
fi
if [[ -z "${text//[[:space:]]/}" ]]; then
  echo "example.sh: error: give the text as arguments or on stdin" >&2
  exit 2
fi

# Words are runs of spaces, tabs and newlines apart (no file name expansion).
set -f
# shellcheck disable=SC2206
words=($text)
set +f
lines=0
if [[ -n "$text" ]]; then
  newlines="${text//[^$'\n']/}"
  lines=$(( ${#newlines} + 1 ))
fi
printf '{"words": %d, "lines": %d, "characters": %d}\n' "${#words[@]}" "$lines" "${#text}"
