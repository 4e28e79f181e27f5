#!/usr/bin/env bash
# suites/ci_start_costs.sh SRC WORK PYTHON - what keeps the suites' many small
# processes cheap (docs/testing.md, "The time budget"):
#  - ci/lib.sh xo_fast_tmpdir points TMPDIR at a fresh folder under
#    XO_CI_TMPDIR, of /tmp's mode 1777 (tests that drop to user nobody
#    write in it), removes it when the shell exits, removes the folder of a
#    job whose pid is gone and keeps a live one's; XO_CI_TMPDIR= (empty)
#    leaves TMPDIR alone;
#  - suites/badinput/case.py keeps run.py's bytecode in the fixture cache
#    even with PYTHONDONTWRITEBYTECODE=1, and writes none into the sources.
set -u -o pipefail
src=$1 work=$2 py=$3
rm -rf "$work" && mkdir -p "$work/shm" || exit 1
# shellcheck source=fail_count.sh
. "$(dirname "${BASH_SOURCE[0]}")/fail_count.sh"

# a dead job's folder: the pid of a process that has exited
sh -c 'exit 0' &
dead=$!
wait "$dead"
mkdir -p "$work/shm/xo-ci-$dead-abcdef/sub" "$work/shm/xo-ci-$$-live12"
out=$(XO_CI_TMPDIR=$work/shm TMPDIR=/elsewhere bash -c '
    source "$1/ci/lib.sh" >/dev/null
    xo_fast_tmpdir >/dev/null
    echo "$TMPDIR"
    stat -c %a "$TMPDIR" >"$TMPDIR/../mode"
    touch "$TMPDIR/file" || exit 1' _ "$src") || fail "xo_fast_tmpdir: the job failed"
[ "$(cat "$work/shm/mode" 2>/dev/null)" = 1777 ] ||
    fail "xo_fast_tmpdir: the folder's mode is $(cat "$work/shm/mode" 2>/dev/null), not /tmp's 1777"
case $out in
"$work/shm/xo-ci-"*) ;;
*) fail "xo_fast_tmpdir: TMPDIR is '$out', not a folder in $work/shm" ;;
esac
[ -n "$out" ] && [ -e "$out" ] && fail "xo_fast_tmpdir: $out is left after the job exited"
[ -e "$work/shm/xo-ci-$dead-abcdef" ] && fail "xo_fast_tmpdir: the dead job's folder is left"
[ -d "$work/shm/xo-ci-$$-live12" ] || fail "xo_fast_tmpdir: a live job's folder was removed"
out=$(XO_CI_TMPDIR= TMPDIR=/elsewhere bash -c '
    source "$1/ci/lib.sh" >/dev/null
    xo_fast_tmpdir
    echo "$TMPDIR"' _ "$src")
[ "$out" = /elsewhere ] || fail "XO_CI_TMPDIR= (empty): TMPDIR became '$out'"

# bytecode of run.py in the cache, none in the sources
before=$(find "$src/suites/badinput" -name '__pycache__' | wc -l)
PYTHONDONTWRITEBYTECODE=1 XO_BADINPUT_CACHE=$work/cache "$py" -S "$src/suites/badinput/case.py" \
    --list >/dev/null || fail "case.py --list failed"
grep -q . <<<"$(find "$work/cache/.pycache" -name 'run.*.pyc' 2>/dev/null)" ||
    fail "case.py: no run.*.pyc under XO_BADINPUT_CACHE/.pycache"
after=$(find "$src/suites/badinput" -name '__pycache__' | wc -l)
[ "$before" = "$after" ] || fail "case.py: a __pycache__ appeared in the sources"

fail_count_exit ci_start_costs "all checks passed"
