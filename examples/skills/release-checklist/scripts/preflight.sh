#!/usr/bin/env bash
# Read-only checks to run before cutting a release. Changes nothing.
#
# Usage: preflight.sh VERSION [BRANCH]
#
#   VERSION  semantic version to release, with or without a leading "v"
#            (1.4.0, v2.0.0-rc.1)
#   BRANCH   branch releases are cut from (default: main)
#
# Environment:
#   CHANGELOG   changelog file to check (default: CHANGELOG.md)
#   TAG_PREFIX  prefix of release tags (default: v)
#
# Prints one line per check (PASS / WARN / FAIL / SKIP) and a summary.
# Exit status: 0 if nothing failed, 1 if any check failed, 2 on usage errors.
# Works offline: it never fetches, so "behind upstream" is only as fresh as the
# last `git fetch`.
set -uo pipefail

prog=$(basename "$0")
failures=0
warnings=0

pass() { printf 'PASS  %s\n' "$1"; }
warn() { printf 'WARN  %s\n' "$1"; warnings=$((warnings + 1)); }
fail() { printf 'FAIL  %s\n' "$1"; failures=$((failures + 1)); }
skip() { printf 'SKIP  %s\n' "$1"; }

if [[ $# -lt 1 || $# -gt 2 ]]; then
    printf 'usage: %s VERSION [BRANCH]\n' "$prog" >&2
    exit 2
fi

version=${1#v}
branch=${2:-main}
changelog=${CHANGELOG:-CHANGELOG.md}
prefix=${TAG_PREFIX-v}
tag="${prefix}${version}"

semver_re='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
if [[ ! $version =~ $semver_re ]]; then
    printf '%s: error: "%s" is not a semantic version (expected MAJOR.MINOR.PATCH, e.g. 1.4.0)\n' \
        "$prog" "$1" >&2
    exit 2
fi
new_core=("${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}")
new_pre=${BASH_REMATCH[4]}
pass "version $version is valid semver (tag will be $tag)"

# --- changelog ---------------------------------------------------------------
if [[ ! -f $changelog ]]; then
    fail "changelog $changelog not found (set CHANGELOG=path if it lives elsewhere)"
else
    escaped=${version//./\\.}
    escaped=${escaped//+/\\+}
    if grep -Eq "^#+ (.*[^0-9A-Za-z.])?v?${escaped}([^0-9A-Za-z.+-]|$)" "$changelog"; then
        pass "$changelog has a section for $version"
    else
        fail "$changelog has no heading for $version (expected e.g. '## [$version] - $(date +%Y-%m-%d)')"
    fi
fi

# --- git -----------------------------------------------------------------------
if ! command -v git > /dev/null 2>&1; then
    skip "git not installed: branch, working tree, tag and upstream checks skipped"
elif ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    skip "not inside a git work tree: branch, working tree, tag and upstream checks skipped"
else
    current=$(git rev-parse --abbrev-ref HEAD 2> /dev/null || echo "?")
    if [[ $current == "$branch" ]]; then
        pass "on release branch $branch"
    else
        fail "on branch '$current', releases are cut from '$branch'"
    fi

    dirty=$(git status --porcelain --untracked-files=normal)
    if [[ -z $dirty ]]; then
        pass "working tree is clean"
    else
        fail "working tree has $(printf '%s\n' "$dirty" | wc -l) uncommitted or untracked path(s); commit or stash them"
    fi

    if git rev-parse -q --verify "refs/tags/$tag" > /dev/null; then
        fail "tag $tag already exists locally"
    else
        pass "tag $tag does not exist yet"
    fi

    # Highest existing release tag by semver core, ignoring unparsable tags.
    latest="" latest_core=(0 0 0) latest_pre=""
    while IFS= read -r t; do
        v=${t#"$prefix"}
        [[ $v =~ $semver_re ]] || continue
        c=("${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}")
        newer=0
        if [[ -z $latest ]]; then
            newer=1
        else
            for i in 0 1 2; do
                if ((c[i] > latest_core[i])); then newer=1; break; fi
                if ((c[i] < latest_core[i])); then break; fi
            done
        fi
        if ((newer)); then
            latest=$t latest_core=("${c[@]}") latest_pre=${BASH_REMATCH[4]}
        fi
    done < <(git tag --list "${prefix}*")

    if [[ -z $latest ]]; then
        warn "no earlier release tags matching '${prefix}X.Y.Z' found; is this the first release?"
    else
        cmp=0
        for i in 0 1 2; do
            if ((new_core[i] > latest_core[i])); then cmp=1; break; fi
            if ((new_core[i] < latest_core[i])); then cmp=-1; break; fi
        done
        if ((cmp > 0)); then
            pass "$version is newer than the latest release $latest"
        elif ((cmp < 0)); then
            fail "$version is older than the latest release $latest"
        elif [[ -n $latest_pre && -z $new_pre ]]; then
            pass "$version finalises pre-release $latest"
        elif [[ -n $latest_pre && -n $new_pre ]]; then
            warn "both $version and $latest are pre-releases of the same version; check their order by hand"
        else
            fail "$version is not newer than the latest release $latest"
        fi
    fi

    if upstream=$(git rev-parse --abbrev-ref --symbolic-full-name '@{u}' 2> /dev/null); then
        behind=$(git rev-list --count 'HEAD..@{u}')
        ahead=$(git rev-list --count '@{u}..HEAD')
        if ((behind > 0)); then
            fail "$behind commit(s) behind $upstream as of the last fetch; pull first"
        elif ((ahead > 0)); then
            warn "$ahead local commit(s) not pushed to $upstream yet"
        else
            pass "in sync with $upstream (as of the last fetch)"
        fi
    else
        warn "branch $current has no upstream; cannot check whether it is behind the remote"
    fi
fi

printf '\n%d check(s) failed, %d warning(s).\n' "$failures" "$warnings"
((failures == 0))
