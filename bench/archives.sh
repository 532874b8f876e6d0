#!/usr/bin/env bash
# Archive memory benchmark (issue 15): peak RSS of `skillbox prompt` and `skillbox serve` over
# three ~2 MB archives that expand to ~240 MB each, and the cost of five `skillbox run`s of an
# archived skill (wall time, unpacked copies left in the runtime folder).
#
#   bench/archives.sh [OTHER_BINARY ...]
#
# Builds target/release/skillbox (or uses SKILLBOX_BIN) and measures it, then each binary named
# as an argument (e.g. one built from an older commit) in the same run. Results: the markdown
# table on stdout, also in bench/out/archives-results.md.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
log() { printf 'archives: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

bin="$(skillbox_binary "${SKILLBOX_BIN:-}")"
mkdir -p bench/out
python3 bench/archives.py bench/out "$bin" "$@" | tee bench/out/archives-results.md
