#!/usr/bin/env bash
# ci_times.sh XO WORKDIR - CI's own stage times as perf series (ci/lib.sh
# run_stage, xo_ci_times_store): run_stage measures a stage's wall and CPU
# time (a child that burns CPU for a moment must show in it), and two jobs'
# fake stage times stored in a fresh store read back through `xo perf
# compare` and `detect` unchanged to the millisecond, wall and CPU as
# separate series, a failed stage left out; a store that cannot be written
# is one line on stderr and status 1, never a crash.
set -u -o pipefail
xo=$1
work=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rm -rf "$work" && mkdir -p "$work" || exit 1
db=$work/ci.sqlite
fail() { echo "ci_times: $*"; exit 1; }

# shellcheck source=../ci/lib.sh
source "$root/ci/lib.sh"

# run_stage: a stage whose child spins for ~0.4 s of CPU.
burn() { python3 -c 'import time
t = time.process_time()
while time.process_time() - t < 0.4: pass'; }
run_stage burner burn >/dev/null || fail "run_stage of a passing stage failed"
[ "${XO_STAGE_NAME[0]}" = burner ] || fail "stage name not kept: ${XO_STAGE_NAME[*]}"
[ "${XO_STAGE_CPU_MS[0]}" -ge 300 ] || fail "stage CPU ${XO_STAGE_CPU_MS[0]} ms for a 0.4 s spin"
# one process spinning: its CPU cannot exceed the wall time around it but
# by the last clock tick charged whole (CPU time is counted in ticks of
# 1000 / CLK_TCK ms)
tick=$((1000 / $(getconf CLK_TCK 2>/dev/null || echo 100)))
[ $((XO_STAGE_WALL_MS[0] + tick)) -ge "${XO_STAGE_CPU_MS[0]}" ] ||
    fail "stage wall ${XO_STAGE_WALL_MS[0]} ms below its CPU ${XO_STAGE_CPU_MS[0]} ms"
run_stage failer false >/dev/null && fail "run_stage of a failing stage passed"
[ "${XO_STAGE_RC[1]}" = 1 ] || fail "failed stage's status ${XO_STAGE_RC[1]}"
echo "run_stage: burner wall ${XO_STAGE_WALL_MS[0]} ms, cpu ${XO_STAGE_CPU_MS[0]} ms"

# Two jobs' stages: build and test pass, asan-test fails in both.
XO_STAGE_NAME=(build test asan-test) XO_STAGE_RC=(0 0 2)
XO_STAGE_WALL_MS=(59123 215004 1200) XO_STAGE_CPU_MS=(118250 401000 2400)
out=$(xo_ci_times_store "$xo" "$db") || fail "first store failed"
echo "$out"
[ "$out" = "ci-times: 4 stage times stored in $db (xo perf detect --db $db)" ] ||
    fail "unexpected line: $out"
XO_STAGE_WALL_MS=(61000 230500 1300) XO_STAGE_CPU_MS=(20100 402000 2500)
xo_ci_times_store "$xo" "$db" >/dev/null || fail "second store failed"

# Runs 1-4 are the first job's (build wall, build cpu, test wall, test
# cpu), 5-8 the second's.
check() { # BASE HEAD BENCHMARK BASE_S HEAD_S
    "$xo" perf compare --db "$db" --json "run:$1" "run:$2" >"$work/cmp.json"
    [ $? -le 1 ] || fail "compare run:$1 run:$2 failed"
    python3 - "$work/cmp.json" "$3" "$4" "$5" <<'PY' || fail "compare run:$1 run:$2 read back wrong"
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d["results"] if x["benchmark"] == sys.argv[2]]
assert len(d["results"]) == 1 and len(r) == 1, d["results"]
assert abs(r[0]["base_median_s"] - float(sys.argv[3])) < 5e-7, r[0]
assert abs(r[0]["head_median_s"] - float(sys.argv[4])) < 5e-7, r[0]
assert r[0]["section"] == "peer", r[0]
PY
}
check 1 5 model/ci.build/train_step/b1/ci 59.123 61.0
check 2 6 model/ci.build/train_step/b1/ci-cpu 118.25 20.1
check 3 7 model/ci.test/train_step/b1/ci 215.004 230.5
check 4 8 model/ci.test/train_step/b1/ci-cpu 401.0 402.0

"$xo" perf detect --db "$db" >"$work/detect.txt" 2>&1
[ $? -le 1 ] || { cat "$work/detect.txt"; fail "detect failed"; }
grep -q '^detect: 4 series' "$work/detect.txt" || { cat "$work/detect.txt"; fail "detect does not see 4 series"; }
grep -q 'asan-test' <<<"$("$xo" perf compare --db "$db" run:1 run:5)" && fail "a failed stage's time was stored"

# A store that cannot be written: one line on stderr, status 1.
mkdir -p "$work/dir.sqlite"
xo_ci_times_store "$xo" "$work/dir.sqlite" >"$work/out.txt" 2>"$work/err.txt"
rc=$?
[ $rc = 1 ] || fail "unwritable store: status $rc"
[ "$(wc -l <"$work/err.txt")" = 1 ] || { cat "$work/err.txt"; fail "unwritable store: not one line"; }
grep -q '^ci-times: storing stage build in .* failed: ' "$work/err.txt" || fail "unwritable store: $(cat "$work/err.txt")"
xo_ci_times_store "$work/no-xo" "$db" 2>"$work/err.txt" && fail "a missing xo stored"
grep -q '^ci-times: no ' "$work/err.txt" || fail "missing xo: $(cat "$work/err.txt")"
echo "ci_times: PASS"
