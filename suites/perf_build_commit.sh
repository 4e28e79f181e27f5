#!/bin/bash
# perf_build_commit.sh XO SRC - `xo perf record` stores its run under the
# commit the binary was built from (`xo --version`), not under whatever the
# source tree (XO_SOURCE_DIR) has checked out when it runs. Source trees are
# real git repositories in a temp dir: one that holds the build's commit
# (a shared clone of SRC, checked out on two commits of its own), where the
# run takes parent, subject and date from git, and one that does not, where
# they are stored empty. A binary built outside git falls back to the source
# tree's HEAD and says so on stderr.
set -u
XO=$1
SRC=$2
# shellcheck source=fail_count.sh
. "$(dirname "${BASH_SOURCE[0]}")/fail_count.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ver=$("$XO" --version) || { echo "xo --version failed"; exit 1; }
built=$(sed -n 's/.*(commit \([^,]*\),.*/\1/p' <<<"$ver")
short=${built%-dirty}
g() { git -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false "$@"; }

# a tree at B2 (parent B1), holding the build's commit when SRC has it
if ! git clone -q --shared --no-checkout "$SRC" "$work/has" 2>/dev/null; then
    g init -q "$work/has"
fi
g -C "$work/has" checkout -q --orphan tip
g -C "$work/has" commit -q --allow-empty -m B1
g -C "$work/has" commit -q --allow-empty -m B2
b2=$(git -C "$work/has" rev-parse HEAD)
# a tree without it
g init -q "$work/lacks"
g -C "$work/lacks" commit -q --allow-empty -m C1
g -C "$work/lacks" commit -q --allow-empty -m C2
c2=$(git -C "$work/lacks" rev-parse HEAD)

stored() { # db -> "sha|dirty|dirty_hash|parent|subject|date"
    python3 -c 'import sqlite3,sys
c=sqlite3.connect(sys.argv[1])
for r in c.execute("SELECT c.sha,c.dirty,c.dirty_hash,c.parent,c.subject,c.date FROM runs r JOIN commits c ON c.id=r.commit_id"):
    print("|".join(str(v) for v in r))' "$1"
}
record() { # tree db
    (cd "$work" && XO_SOURCE_DIR=$1 "$XO" perf record --db "$2" --device ref --quick \
        --filter '^op/relu/fwd/.*/ref$' --no-progress >"$2.out" 2>"$2.err") ||
        { fail "record in $1: $(cat "$2.err")"; return 1; }
}

record "$work/has" "$work/has.sqlite"
record "$work/lacks" "$work/lacks.sqlite"
if [ "$built" = unknown ]; then
    # built outside git: today's behaviour, said on stderr
    [ "$(stored "$work/has.sqlite" | cut -d'|' -f1)" = "$b2" ] || fail "not stored at HEAD"
    grep -q "build commit is unknown" "$work/has.sqlite.err" || fail "no stderr note"
else
    full=$(stored "$work/has.sqlite" | cut -d'|' -f1)
    case "$full" in "$short"*) ;; *) fail "has: stored at $full, built at $built" ;; esac
    [ "$full" != "$b2" ] || fail "has: stored at the tree's HEAD"
    dirty=$(stored "$work/has.sqlite" | cut -d'|' -f2)
    dhash=$(stored "$work/has.sqlite" | cut -d'|' -f3)
    if [ "$built" != "$short" ]; then
        [ "$dirty" = 1 ] && [ ${#dhash} = 16 ] || fail "dirty build stored as $dirty/$dhash"
    else
        [ "$dirty" = 0 ] && [ -z "$dhash" ] || fail "clean build stored as $dirty/$dhash"
    fi
    if git -C "$work/has" cat-file -e "$full^{commit}" 2>/dev/null; then
        want="$(git -C "$work/has" log -1 --format=%P "$full" | cut -d' ' -f1)"
        want="$want|$(git -C "$work/has" log -1 --format='%s|%ct' "$full")"
        got=$(stored "$work/has.sqlite" | cut -d'|' -f4-)
        [ "$got" = "$want" ] || fail "has: parent|subject|date $got, expected $want"
    fi
    got=$(stored "$work/lacks.sqlite")
    case "$got" in "$full"*) ;; *) fail "lacks: stored $got, built at $built" ;; esac
    [ "$(cut -d'|' -f4- <<<"$got")" = "||0" ] ||
        fail "lacks: parent|subject|date $(cut -d'|' -f4- <<<"$got"), expected empty"
    [ "$(cut -d'|' -f1 <<<"$got")" != "$c2" ] || fail "lacks: stored at the tree's HEAD"
fi
[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
