#!/usr/bin/env bash
# Create (or reuse) the Python venv that the test peers run in.
#
#   scripts/setup-test-venv.sh            -> prints the venv's python path on stdout
#
# Location: ${SKILLBOX_TEST_VENV:-<repo>/target/test-venv}
# Python:   ${SKILLBOX_PYTHON:-python3} (only used to create the venv)
# Contents: ${SKILLBOX_TEST_REQUIREMENTS:-<repo>/scripts/test-requirements.txt}, checked by
#           importing ${SKILLBOX_TEST_IMPORTS:-skills_ref.validator, skills_ref.prompt, mcp, requests}
#           (scripts/setup-llm-proxy.sh uses these two for the LiteLLM proxy's venv)
#
# Idempotent and safe to run concurrently: an exclusive flock on
# "<venv>.lock" serialises callers, and the install is skipped when
# "<venv>/.skillbox-stamp" holds the hash of scripts/test-requirements.txt
# plus the interpreter version (so changing a pin rebuilds the venv from
# scratch with `venv --clear`). Progress goes to stderr; stdout carries only
# the interpreter path, so callers can do PY="$(scripts/setup-test-venv.sh)".
set -euo pipefail

log() { printf 'setup-test-venv: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
req="${SKILLBOX_TEST_REQUIREMENTS:-$repo/scripts/test-requirements.txt}"
imports="${SKILLBOX_TEST_IMPORTS:-skills_ref.validator, skills_ref.prompt, mcp, requests}"
venv="${SKILLBOX_TEST_VENV:-$repo/target/test-venv}"
python="${SKILLBOX_PYTHON:-python3}"
lock="${venv%/}.lock"
stamp="$venv/.skillbox-stamp"
lock_timeout="${SKILLBOX_TEST_VENV_LOCK_TIMEOUT:-900}"

[[ -f "$req" ]] || die "requirements file not found: $req"
command -v flock >/dev/null 2>&1 || die "flock not found (install util-linux)"
command -v sha256sum >/dev/null 2>&1 || die "sha256sum not found (install coreutils)"
command -v "$python" >/dev/null 2>&1 || die "'$python' not found on PATH (set SKILLBOX_PYTHON)"

py_version="$("$python" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)" \
    || die "'$python' does not run"

mkdir -p "$(dirname "$venv")"

# Serialise every caller on one lock; fd 9 stays open until this script exits.
exec 9>"$lock"
if ! flock -x -w "$lock_timeout" 9; then
    die "timed out after ${lock_timeout}s waiting for lock $lock"
fi

want="$({ printf 'python %s\n' "$py_version"; cat "$req"; } | sha256sum | cut -d' ' -f1)"

if [[ -f "$stamp" && -x "$venv/bin/python" && "$(cat "$stamp")" == "$want" ]]; then
    printf '%s\n' "$venv/bin/python"
    exit 0
fi

log "creating venv at $venv (python $py_version)"
rm -f "$stamp"
"$python" -m venv --clear "$venv" >&2 \
    || die "'$python -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)"

log "installing $(grep -cvE '^[[:space:]]*(#|$|--)' "$req") pinned requirements from $req"
if ! "$venv/bin/python" -m pip install \
        --disable-pip-version-check --no-input --quiet \
        --timeout 30 --retries 3 \
        -r "$req" >&2; then
    die "pip install failed; is PyPI reachable? (pins in $req)"
fi

"$venv/bin/python" -c "import $imports" >&2 \
    || die "installed packages do not import"

# Write the stamp atomically, and only after everything succeeded.
printf '%s\n' "$want" > "$stamp.tmp"
mv -f "$stamp.tmp" "$stamp"
log "ready: $venv/bin/python"
printf '%s\n' "$venv/bin/python"
