#!/usr/bin/env bash
# Web app benchmark: the skills page over 10,000 generated skills, as server time per request and
# as time to first render in headless Chromium, beside a 100-skill catalog and beside the same
# page's bytes served as a static file by Python's http.server (the peer).
#
#   bench/web.sh
#
# Environment (all optional):
#   SKILLBOX_BIN         use this skillbox binary instead of building it (release)
#   WEB_BENCH_REQUESTS   timed requests per path (default 100)
#   WEB_BENCH_RENDERS    timed page loads in Chromium per page (default 7)
#
# Needs Chromium and ChromeDriver (scripts/setup-browser.sh installs them). Results: a markdown
# table on stdout, the raw numbers in bench/out/web-results.json.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

log() { printf 'web-bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

out="bench/out"
mkdir -p "$out"
bin="$(skillbox_binary "${SKILLBOX_BIN:-}")"
ensure_generated_skills "$out/web-skills-10000" 10000 1
ensure_generated_skills "$out/web-skills-100" 100 1
bash scripts/setup-browser.sh >/dev/null || die "scripts/setup-browser.sh failed"
chromedriver="$(command -v chromedriver || echo /usr/bin/chromedriver)"
python3 bench/web_measure.py "$bin" "$out/web-skills-10000" "$out/web-skills-100" \
    "$chromedriver" "$out/web-results.json"
