#!/usr/bin/env bash
# Provision headless Chromium and its WebDriver server for the browser tests, from Debian.
#
#   scripts/setup-browser.sh           install when missing, print paths
#   scripts/setup-browser.sh --print   print paths if installed, else exit 1
#
# On success stdout carries only data, one KEY=/abs/path per line:
#   CHROMIUM=...       the browser (/usr/bin/chromium)
#   CHROMEDRIVER=...   its WebDriver server (/usr/bin/chromedriver)
# Progress and errors go to stderr.
#
# Installs the Debian packages `chromium` and `chromium-driver` (no recommends) with
# apt-get, which needs root. When both binaries are already there it does nothing, so it
# is cheap to call before every test run. `apt-get update` runs only when the install
# fails (a machine with stale or empty package lists).
#
# Safe to run concurrently: an exclusive flock on $SKILLBOX_BROWSER_LOCK (default
# /var/lock/skillbox-setup-browser.lock) serialises callers, and apt-get waits for the
# dpkg lock of any other apt run instead of failing at once.
set -euo pipefail

log() { printf 'setup-browser: [%ss] %s\n' "$SECONDS" "$*" >&2; }
die() { log "error: $*"; exit 1; }

readonly CHROMIUM="/usr/bin/chromium"
readonly CHROMEDRIVER="/usr/bin/chromedriver"
readonly PACKAGES=(chromium chromium-driver)
# Seconds apt-get waits for another apt/dpkg run to release the dpkg lock.
readonly DPKG_LOCK_TIMEOUT_SECONDS=600

print_only=false
for arg in "$@"; do
    case "$arg" in
        --print) print_only=true ;;
        -h|--help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
        *) die "unknown argument '$arg' (expected: [--print])" ;;
    esac
done

lock="${SKILLBOX_BROWSER_LOCK:-/var/lock/skillbox-setup-browser.lock}"
lock_timeout="${SKILLBOX_BROWSER_LOCK_TIMEOUT:-900}"

installed() { [[ -x "$CHROMIUM" && -x "$CHROMEDRIVER" ]]; }

print_paths() {
    printf 'CHROMIUM=%s\n' "$CHROMIUM"
    printf 'CHROMEDRIVER=%s\n' "$CHROMEDRIVER"
}

if installed; then
    print_paths
    exit 0
fi
if $print_only; then
    exit 1
fi

# ---- preconditions and lock -------------------------------------------------------
command -v apt-get >/dev/null 2>&1 \
    || die "apt-get not found: this script installs Debian's ${PACKAGES[*]}; elsewhere install Chromium and a matching chromedriver at $CHROMIUM and $CHROMEDRIVER yourself"
[[ "$(id -u)" == 0 ]] \
    || die "installing ${PACKAGES[*]} needs root: run 'sudo apt-get install -y --no-install-recommends ${PACKAGES[*]}' once, or run this script as root"
command -v flock >/dev/null 2>&1 || die "'flock' not found on PATH (install util-linux)"

mkdir -p "$(dirname "$lock")" || die "cannot create the folder of the lock $lock (set SKILLBOX_BROWSER_LOCK)"
exec 9>"$lock"
if ! flock -x -w "$lock_timeout" 9; then
    die "timed out after ${lock_timeout}s waiting for lock $lock"
fi
# Another caller may have installed them while this one waited for the lock.
if installed; then
    print_paths
    exit 0
fi

apt_options=(-y --no-install-recommends -o "DPkg::Lock::Timeout=$DPKG_LOCK_TIMEOUT_SECONDS")
install_log="$(mktemp -t skillbox-setup-browser.XXXXXX)"
trap 'rm -f "$install_log"' EXIT
apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install "${apt_options[@]}" "${PACKAGES[@]}" \
        >"$install_log" 2>&1
}

log "installing ${PACKAGES[*]} with apt-get (a minute or two)"
if ! apt_install; then
    log "apt-get install failed; updating the package lists and trying again"
    if ! DEBIAN_FRONTEND=noninteractive apt-get update -o "DPkg::Lock::Timeout=$DPKG_LOCK_TIMEOUT_SECONDS" \
            >"$install_log" 2>&1; then
        tail -n 20 "$install_log" >&2
        die "apt-get update failed; are Debian's package mirrors reachable?"
    fi
    if ! apt_install; then
        tail -n 20 "$install_log" >&2
        die "apt-get install ${PACKAGES[*]} failed (output above)"
    fi
fi

installed || die "apt-get installed ${PACKAGES[*]} but $CHROMIUM or $CHROMEDRIVER is missing"
"$CHROMIUM" --version >/dev/null 2>&1 || die "the installed $CHROMIUM does not run ('$CHROMIUM --version' fails)"
"$CHROMEDRIVER" --version >/dev/null 2>&1 || die "the installed $CHROMEDRIVER does not run ('$CHROMEDRIVER --version' fails)"
log "installed $("$CHROMIUM" --version 2>/dev/null) and $("$CHROMEDRIVER" --version 2>/dev/null | cut -d' ' -f1-2)"
print_paths
