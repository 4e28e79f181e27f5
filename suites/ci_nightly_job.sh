#!/usr/bin/env bash
# ci_nightly_job.sh BUILD_DIR WORK - ci/nightly.sh's bookkeeping on a real
# build and a real (small) store, without its long stages: the report is
# drawn whatever happened before it, and the job ends with the answer.
#   killed:  a stage killed by SIGKILL (XO_NIGHTLY_KILL) fails alone; the
#            report stage still draws report/index.html from the store and
#            the last lines are the answer, the alarms and the report's place
#   budget:  a stage that does not fit the budget is skipped with the reason;
#            the report still runs
#   nobuild: no xo (a failed build): the stages say so, index.html is still
#            written (a page with the stage lines); a failed build with an
#            older xo in its folder measures nothing with that xo
#   rotation: a rotating stage runs on its day only, a weekly one in the
#            full run only; a bad day is exit 2
#   bench:   the bench stage's summary names its columns
# Exit 0 pass, 1 fail.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$1
work=$2
xo=$build/cli/xo
fail=0

bad() {
    echo "FAIL $*"
    fail=1
}

# nightly CASE [VAR=VALUE ...]: the job into $work/CASE, its stdout in
# $work/CASE.out; sets rc.
nightly() {
    local name=$1
    shift
    env XO_NIGHTLY_DIR="$work/$name" XO_NIGHTLY_BUILD="$build" XO_NIGHTLY_DAY=3 "$@" \
        bash "$root/ci/nightly.sh" >"$work/$name.out" 2>"$work/$name.err"
    rc=$?
    echo "--- $name: exit $rc"
    cat "$work/$name.out" "$work/$name.err"
}

rm -rf "$work"
mkdir -p "$work/killed" "$work/budget" || exit 1
"$xo" perf record --db "$work/killed/perf.sqlite" --quick --no-progress \
    --filter '^(op/relu/fwd/.*/ref|model/seed/predict/b(1|64)/(cpu|cl))$' >"$work/record.txt" 2>&1 || { cat "$work/record.txt"; exit 1; }
cp "$work/killed/perf.sqlite" "$work/budget/perf.sqlite" || exit 1

nightly killed XO_NIGHTLY_STAGES=detect XO_NIGHTLY_KILL=detect
[ $rc -eq 1 ] || bad "killed: exit $rc, want 1 (a stage failed)"
grep -qE '^detect +FAIL \(signal 9\)' "$work/killed.out" || bad "killed: no 'detect FAIL (signal 9)' line"
grep -qE '^report +PASS' "$work/killed.out" || bad "killed: the report stage did not pass"
[ -s "$work/killed/report/index.html" ] || bad "killed: no report/index.html"
grep -q 'no perf report' "$work/killed/report/index.html" && bad "killed: the fallback page, not the report of the store"
tail -n 1 "$work/killed.out" | grep -qF "== report: $work/killed/report/index.html" ||
    bad "killed: the last line is not where the report is"
grep -A3 '^== the answer' "$work/killed.out" | grep -q '^seed predict: crossover:' ||
    bad "killed: the answer is not advise's crossover line"
grep -q '^== alarms' "$work/killed.out" || bad "killed: no alarms block"
grep -q 'Killed' "$work/killed.err" && bad "killed: bash's own Killed line reached the terminal"

nightly budget XO_NIGHTLY_STAGES=detect XO_NIGHTLY_BUDGET=1
[ $rc -eq 0 ] || bad "budget: exit $rc, want 0 (a skipped stage is not a failure)"
grep -qE '^detect +SKIP .*budget' "$work/budget.out" || bad "budget: detect not skipped for the budget"
grep -qE '^report +PASS' "$work/budget.out" || bad "budget: the report stage did not pass"
[ -s "$work/budget/report/index.html" ] || bad "budget: no report/index.html"

nightly nobuild XO_NIGHTLY_STAGES=seed,detect XO_NIGHTLY_BUILD="$work/no-such-build"
[ $rc -eq 1 ] || bad "nobuild: exit $rc, want 1"
grep -qE '^seed +SKIP .*no .*xo' "$work/nobuild.out" || bad "nobuild: seed not skipped for the missing xo"
grep -q 'no perf report' "$work/nobuild/report/index.html" 2>/dev/null ||
    bad "nobuild: no fallback report/index.html"
grep -q '^seed ' "$work/nobuild/report/index.html" 2>/dev/null || bad "nobuild: the page lacks the stage lines"

# a failed build with an older xo in the folder: nothing is measured with it
# (a cache made for another source tree makes cmake fail at once)
mkdir -p "$work/stale/cli" && ln -s "$xo" "$work/stale/cli/xo" &&
    echo 'CMAKE_HOME_DIRECTORY:INTERNAL=/nonexistent/elsewhere' >"$work/stale/CMakeCache.txt"
nightly stalebuild XO_NIGHTLY_STAGES=build,seed XO_NIGHTLY_BUILD="$work/stale"
grep -qE '^build +FAIL' "$work/stalebuild.out" || bad "stalebuild: the build did not fail"
grep -qE '^seed +SKIP .*build failed' "$work/stalebuild.out" || bad "stalebuild: seed ran an older build's xo"

# perf-scale's days are 0 and 6: on day 3 it does not run, on day 0 it
# would (the budget of 1 s skips it there, saying so, so nothing long runs);
# bisect is weekly: not on a rotation day, only in the full run
nightly rotation XO_NIGHTLY_STAGES=perf-scale,bisect
grep -qE '^(perf-scale|bisect) ' "$work/rotation.out" && bad "rotation: perf-scale or bisect ran on day 3"
nightly rotation0 XO_NIGHTLY_STAGES=perf-scale,bisect XO_NIGHTLY_DAY=0 XO_NIGHTLY_BUDGET=1
grep -qE '^perf-scale +SKIP .*budget' "$work/rotation0.out" || bad "rotation: perf-scale not considered on day 0"
grep -qE '^bisect ' "$work/rotation0.out" && bad "rotation: the weekly bisect ran on a night"
nightly full XO_NIGHTLY_STAGES=bisect XO_NIGHTLY_FULL=1 XO_NIGHTLY_BUDGET=1
grep -qE '^bisect +SKIP .*budget' "$work/full.out" || bad "full: the weekly bisect not considered"
nightly badday XO_NIGHTLY_DAY=9
[ $rc -eq 2 ] || bad "badday: exit $rc, want 2"
nightly badstage XO_NIGHTLY_STAGES=seed,sede
[ $rc -eq 2 ] && grep -q "no stage 'sede'" "$work/badstage.err" || bad "badstage: exit $rc, want 2 naming sede"

# bench_vs_pytorch.py's table as it prints it
printf '%-50s %9s %10s %9s %12s\n' workload 'xo ms' 'torch ms' torch/xo 'worst round' >"$work/bench.log"
printf '%-50s %9.3f %10.3f %8.1fx %11.1fx\n' 'predict 4000 (batch 32)' 0.612 6.1 10.0 9.1 >>"$work/bench.log"
printf '%-50s %9.3f %10.3f %8.1fx %11.1fx\n' 'one epoch (12800 + 3200 validation)' 9.5 120 12.6 11.0 >>"$work/bench.log"
note=$(XO_NIGHTLY_DIR="$work/bench" bash "$root/ci/nightly.sh" --bench-note "$work/bench.log")
echo "bench note: $note"
want='predict 4000 (batch 32): xo 0.612 ms, torch 6.100 ms, torch/xo 10.0x (worst round 9.1x); one epoch (12800 + 3200 validation): xo 9.500 ms, torch 120.000 ms, torch/xo 12.6x (worst round 11.0x)'
[ "$note" = "$want" ] || bad "bench: note '$note', want '$want'"

[ $fail -eq 0 ] && echo "ci_nightly_job: all cases pass"
exit $fail
