#!/usr/bin/env bash
# races.sh - runs a command under Oclgrind (the OpenCL simulator that checks
# every work-item's memory accesses) and fails on any diagnostic: a data race
# (--data-races), a divergent barrier or out-of-bounds access (always
# checked), an uninitialized value (--uninitialized, where it is sound: see
# docs/opencl.md), or an Oclgrind fatal error. PoCL runs a work-group as a
# loop on one core, so a missing barrier or a race passes every suite there;
# Oclgrind sees it.
#
# usage: races.sh XO_BINARY NAME [OCLGRIND_OPTION ...] -- COMMAND [ARG ...]
# Writes NAME.log (Oclgrind's diagnostics) and NAME.out (the command's output)
# in the current directory.
set -u -o pipefail
xo=$1
name=$2
shift 2
opts=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    opts+=("$1")
    shift
done
shift
if ! command -v oclgrind >/dev/null; then
    echo "races: oclgrind not found: apt-get install oclgrind (ci/lib.sh installs it)" >&2
    exit 1
fi
# The kernels must really run on Oclgrind's device, never on another
# platform: the cl backend opens only a platform named like it (an open that
# finds none fails the command). One Oclgrind start per test: a separate
# `oclgrind xo devices` to check it cost ~1.5 s of CPU a test.
export XO_CL_DEVICE=oclgrind
[ -x "$xo" ] || { echo "races: $xo is not an executable" >&2; exit 1; }
log=$PWD/$name.log
out=$PWD/$name.out
rm -f "$log"
oclgrind "${opts[@]}" --log "$log" "$@" >"$out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    echo "races: $name: the command failed under oclgrind (exit $rc):"
    tail -n 30 "$out"
fi
if [ -s "$log" ]; then
    echo "races: $name: Oclgrind reported $(grep -c '^[A-Z]' "$log") diagnostics ($log):"
    grep '^[A-Z]' "$log" | sed -E 's/ (at|address) .*//' | sort | uniq -c | sort -rn | sed -n 1,10p
    echo "first report:"
    head -n 12 "$log"
    rc=1
fi
if [ $rc -eq 0 ] && [ ! -s "$out" ]; then
    echo "races: $name: the command printed nothing: it did not run"
    rc=1
fi
[ $rc -eq 0 ] && echo "races: $name: clean ($(tail -n 1 "$out"))"
exit $rc
