# Steps shared by the bench scripts. Sourced (after the script defines `log` and `die` and has
# changed to the repository root), not run.

# A command that fails under `set -e` ends a script; say which one (inside functions too), so a
# run that stops early (a `wrk` or `curl` failing under load) does not stop silently.
set -o errtrace
trap 'log "error: \`${BASH_COMMAND}\` failed with status $? (line ${LINENO})"' ERR

# Generate COUNT skills with SEED into DIR, or reuse DIR when its stamp shows the same count,
# seed and generator.
ensure_generated_skills() {
    local dir="$1" count="$2" seed="$3"
    if python3 bench/catalog_measure.py stamp-ok "$dir" "$count" "$seed"; then
        log "reusing $dir ($count skills, seed $seed)"
    else
        log "generating $count skills (seed $seed) into $dir"
        python3 bench/generate_skills.py "$dir" --count "$count" --seed "$seed" --force \
            || die "generator failed"
    fi
}

# Print the test venv's python (skills-ref and the other peers), creating the venv if needed.
test_venv_python() {
    local py
    py="$(scripts/setup-test-venv.sh)" || die "scripts/setup-test-venv.sh failed"
    [[ -x "$py" ]] || die "venv python not found: $py"
    printf '%s\n' "$py"
}

# Print the skillbox binary to time: the path given (a script's *_BIN variable) when not empty,
# else a fresh release build of this tree, with the cargo features named after the path (a
# comma-separated list, such as object-storage). Dies when the binary is not executable.
skillbox_binary() {
    local bin="${1:-}" features="${2:-}"
    if [[ -n "$bin" ]]; then
        log "using $bin (no build)"
    else
        log "building: cargo build --release -p skillbox-cli${features:+ --features $features}"
        cargo build --release -p skillbox-cli ${features:+--features "$features"} >&2 ||
            die "cargo build failed"
        bin="$repo/target/release/skillbox"
    fi
    [[ -x "$bin" ]] || die "skillbox binary not found or not executable: $bin"
    printf '%s\n' "$bin"
}

# Print the skillbox binary to time, as `skillbox_binary`, for a script whose runs go through
# the sandbox helper beside it (`skillbox-sandbox`): without a given path the helper is built
# too, so that an older one left there is not what gets measured; with one, an older helper is
# named.
skillbox_binary_with_helper() {
    local given="${1:-}" binary helper
    binary="$(skillbox_binary "$given")"
    helper="$(dirname "$binary")/skillbox-sandbox"
    if [[ -z "$given" ]]; then
        log "building: cargo build --release -p skillbox-exec --bin skillbox-sandbox"
        cargo build --release -p skillbox-exec --bin skillbox-sandbox >&2 || die "cargo build failed"
    elif [[ -e "$helper" && "$helper" -ot "$binary" ]]; then
        log "warning: $helper is older than $binary; skillbox runs servers through it"
    fi
    printf '%s\n' "$binary"
}

# Print VALUE (a setting named NAME, for the message) as a whole number; dies unless it is one
# from MIN to MAX.
number() { # number NAME VALUE MIN MAX
    [[ "$2" =~ ^[0-9]{1,6}$ ]] && ((10#$2 >= $3 && 10#$2 <= $4)) ||
        die "$1 must be a whole number from $3 to $4, not '$2'"
    printf '%s' "$((10#$2))"
}

# Print the load generator to use: the path given (a script's LOADGEN_BIN) when not empty, else
# a release build of bench/loadgen (its target in $out/loadgen-target). Needs $repo and $out.
loadgen_binary() {
    local bin="${1:-}"
    if [[ -n "$bin" ]]; then
        log "using LOADGEN_BIN=$bin (no build)"
    else
        log "building: bench/loadgen (cargo build --release --locked, target in $out/loadgen-target)"
        CARGO_TARGET_DIR="$repo/$out/loadgen-target" \
            cargo build --release --locked --manifest-path bench/loadgen/Cargo.toml >&2 ||
            die "building bench/loadgen failed"
        bin="$repo/$out/loadgen-target/release/skillbox-loadgen"
    fi
    [[ -x "$bin" ]] || die "load generator not found or not executable: $bin"
    printf '%s\n' "$bin"
}

# utime + stime of a process in clock ticks, or empty when it is gone.
cpu_ticks() {
    awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || true
}

# Start `BINARY serve examples/skills` on port 0 (sandbox off) with DATA as its data folder and
# any more ARGUMENTS, stderr to STDERR; sets server_pid and url (its /rpc URL), or dies.
start_example_server() { # binary data stderr [argument...]
    local binary="$1" data="$2" stderr="$3"
    shift 3
    "$binary" serve examples/skills --listen 127.0.0.1:0 --data-dir "$data" --sandbox off "$@" \
        2>"$stderr" &
    server_pid=$!
    url=""
    for _ in $(seq 1 300); do
        url=$(grep -o 'serving the Skills Protocol at http://127\.0\.0\.1:[0-9]*/rpc' "$stderr" |
            grep -o 'http://.*' | head -n 1 || true)
        [[ -n "$url" ]] && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$stderr" >&2; die "the server exited at start"; }
        sleep 0.1
    done
    [[ -n "$url" ]] || { cat "$stderr" >&2; die "the server did not announce its address in 30 s"; }
}

