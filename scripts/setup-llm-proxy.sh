#!/usr/bin/env bash
# Create (or reuse) the venv of the LiteLLM proxy that serves the OpenAI Responses and
# Anthropic Messages APIs in front of the local llama-server (scripts/setup-local-llm.sh).
#
#   scripts/setup-llm-proxy.sh          install if needed, print paths
#   scripts/setup-llm-proxy.sh --print  print paths if installed, else exit 1 (no output)
#
# On success stdout carries only data, one KEY=/abs/path per line:
#   LITELLM=...         the proxy's command
#   LITELLM_CONFIG=...  scripts/llm-proxy-config.yaml (its header lists the variables)
# Progress and errors go to stderr.
#
# Location: <cache>/proxy-venv, with <cache> the same directory as setup-local-llm.sh:
#   ${SKILLBOX_LLM_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/skillbox/local-llm}
# Python:   ${SKILLBOX_PYTHON:-python3}; must be CPython 3.11 on x86_64 Linux, the
#           platform whose files scripts/llm-proxy-requirements.txt pins by sha256.
#
# Idempotent and safe to run concurrently: the venv is made by scripts/setup-test-venv.sh
# (flock on "<venv>.lock", stamp "<venv>/.skillbox-stamp" holding the hash of the
# requirements file plus the interpreter version, so changing a pin rebuilds the venv).
set -euo pipefail

log() { printf 'setup-llm-proxy: [%ss] %s\n' "$SECONDS" "$*" >&2; }
die() { log "error: $*"; exit 1; }

readonly PINNED_PLATFORM="3.11 x86_64 Linux"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
req="$repo/scripts/llm-proxy-requirements.txt"
config="$repo/scripts/llm-proxy-config.yaml"
root="${SKILLBOX_LLM_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/skillbox/local-llm}"
venv="$root/proxy-venv"
stamp="$venv/.skillbox-stamp"
python="${SKILLBOX_PYTHON:-python3}"
lock_timeout="${SKILLBOX_LLM_LOCK_TIMEOUT:-1800}"

print_only=false
for arg in "$@"; do
    case "$arg" in
        --print) print_only=true ;;
        -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
        *) die "unknown argument '$arg' (expected: [--print])" ;;
    esac
done

[[ -f "$req" ]] || die "requirements file not found: $req"
[[ -f "$config" ]] || die "proxy config not found: $config"
command -v "$python" >/dev/null 2>&1 || die "'$python' not found on PATH (set SKILLBOX_PYTHON)"
py_version="$("$python" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)" \
    || die "'$python' does not run"
# The same stamp formula as setup-test-venv.sh, so --print needs no lock or pip.
want="$({ printf 'python %s\n' "$py_version"; cat "$req"; } | sha256sum | cut -d' ' -f1)"

print_paths() {
    printf 'LITELLM=%s\n' "$venv/bin/litellm"
    printf 'LITELLM_CONFIG=%s\n' "$config"
}
installed() {
    [[ -f "$stamp" && -x "$venv/bin/litellm" && "$(cat "$stamp")" == "$want" ]]
}

if $print_only; then
    installed || exit 1
    print_paths
    exit 0
fi

platform="$("$python" -c 'import platform, sys; print("%d.%d %s %s" % (sys.version_info[:2] + (platform.machine(), platform.system())))')"
[[ "$platform" == "$PINNED_PLATFORM" ]] \
    || die "$req pins files for CPython $PINNED_PLATFORM, but '$python' is $platform (set SKILLBOX_PYTHON, or re-pin as its header says)"
# pip sees the --hash pins and runs in --require-hashes mode; no pip cache, as the
# wheels would only sit on disk a second time.
SKILLBOX_TEST_VENV="$venv" SKILLBOX_TEST_REQUIREMENTS="$req" SKILLBOX_PYTHON="$python" \
    SKILLBOX_TEST_IMPORTS="litellm.proxy.proxy_server" SKILLBOX_TEST_VENV_LOCK_TIMEOUT="$lock_timeout" \
    LITELLM_LOCAL_MODEL_COST_MAP=True PIP_NO_CACHE_DIR=1 PIP_ONLY_BINARY=:all: \
    "$repo/scripts/setup-test-venv.sh" >/dev/null \
    || die "could not install the proxy venv (see the messages above)"
installed || die "the proxy venv at $venv is incomplete after installing"
print_paths
